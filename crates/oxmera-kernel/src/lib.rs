//! GPU kernels written in Rust, checked and run with no GPU.
//!
//! A kernel is an ordinary-looking function under [`kernel`] (see
//! docs/kernels.md for the language). The attribute turns it into a function
//! returning its [`ir::Kernel`]; from there:
//!
//! - [`analysis::check`] runs the launch-aware convergence rules (divergent
//!   barriers, non-convergent warp collectives, global write races, shared
//!   memory over budget, launch contracts) for one concrete launch, and
//!   [`diag::render`] prints a finding like a rustc diagnostic;
//! - [`sim`] runs it on concrete buffers, warp by warp in lock-step, and stops
//!   with a witness on a barrier that can never be satisfied, an
//!   out-of-bounds access or a shared-memory race;
//! - [`library`] holds the kernels oxmera ships, each validated in the
//!   simulator, and [`corpus`] the broken kernels every rule must catch.
//!
//! The IR, its analysis and printer live in `oxmera-kernel-ir` (re-exported
//! here) so that the macro can run the analysis at compile time. This crate
//! must never know about tensors, backends or any GPU API: emitters for PTX
//! and WGSL consume the same IR from crates above it.

extern crate self as oxmera_kernel;

pub use oxmera_kernel_ir::{analysis, diag, eval, explain, ir, launch, limits, pretty, validate};
pub use oxmera_kernel_macros::kernel;

pub mod corpus;
pub mod library;
pub mod registry;
pub mod sim;
