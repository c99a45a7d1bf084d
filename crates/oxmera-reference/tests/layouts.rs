//! The test helpers' own checks.

mod common;
