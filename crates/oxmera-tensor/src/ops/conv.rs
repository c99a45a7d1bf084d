//! Front end: conv operations.
