//! The kernel IR of oxmera and everything that reasons about it without
//! running it.
//!
//! This crate owns the typed, structured IR that `#[kernel]` produces
//! ([`ir`]), the scalar semantics of its operators ([`eval`]; the error
//! function in [`erf`]), a validator
//! ([`validate`]), a printer ([`pretty`]), launch geometry ([`launch`]), the
//! hardware targets ([`target`]: warp width, per-block limits, dtypes), the
//! shared-memory limits of NVIDIA targets ([`limits`]), the launch-aware
//! convergence analysis ([`analysis`]), the search spaces a tuner explores
//! apart from the launch contract ([`space`]), diagnostics ([`diag`]) and the explain
//! pages of its rules ([`explain`]).
//!
//! It is a separate crate so that the proc-macro crate can run the analysis
//! at compile time (a proc-macro crate cannot be depended on for code). It
//! must never know about the simulator, the kernel library, proc-macro
//! machinery, tensors or any backend: those sit above it.

pub mod analysis;
pub mod diag;
pub mod dtype;
pub mod erf;
pub mod eval;
pub mod explain;
pub mod half;
pub mod ir;
pub mod launch;
pub mod limits;
pub mod pretty;
pub mod space;
pub mod target;
pub mod validate;

pub use analysis::{CheckError, CheckOptions, Finding, Rule, Uniformity, check};
pub use ir::*;
pub use launch::{LaunchConfig, LaunchError};
pub use limits::ComputeCapability;
pub use target::{Target, TargetError, TargetKind};
