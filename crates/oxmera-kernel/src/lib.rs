//! GPU kernels written in Rust, checked and run with no GPU.
//!
//! A kernel is an ordinary-looking function under [`kernel`] (see
//! docs/kernels.md for the language). The attribute turns it into a function
//! returning its [`ir::Kernel`]; from there:
//!
//! - [`analysis::check`] runs the launch-aware convergence rules (divergent
//!   barriers, non-convergent warp collectives, global write races, shared
//!   memory over budget, launch contracts) for one concrete launch on one
//!   [`target::Target`] (warp width, per-block limits, dtypes; the default is
//!   warps of 32), and [`diag::render`] prints a finding like a rustc
//!   diagnostic;
//! - [`sim`] runs it on concrete buffers, warp by warp in lock-step, and stops
//!   with a witness on a barrier that can never be satisfied, an
//!   out-of-bounds access or a shared-memory race;
//! - [`library`] holds the kernels oxmera ships, each validated in the
//!   simulator, and [`corpus`] the broken kernels every rule must catch;
//! - [`tune`] searches a kernel's search space ([`space`]) for a target:
//!   refuses by proof, validates, measures, and reports what was refused;
//! - [`emit`] writes it in a GPU's language (WGSL, and PTX for CUDA) for one
//!   target and launch, from the same IR the analysis and the simulator read.
//!
//! ```
//! use oxmera_kernel::analysis::{CheckOptions, Rule, check};
//! use oxmera_kernel::ir::Value;
//! use oxmera_kernel::kernel;
//! use oxmera_kernel::launch::LaunchConfig;
//! use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
//!
//! /// Doubles every element; the barrier is wrong unless one warp is the block.
//! #[kernel]
//! fn double(x: &[f32], out: &mut [f32], n: u32) {
//!     let i = block_idx_x() * block_dim_x() + thread_idx_x();
//!     if warp_id() == 0 {
//!         sync_threads();
//!     }
//!     if i < n {
//!         out[i] = 2.0 * x[i];
//!     }
//! }
//!
//! let clean = check(double(), &CheckOptions::new(LaunchConfig::linear(1, 32))).unwrap();
//! assert!(clean.is_empty());
//! let bad = check(double(), &CheckOptions::new(LaunchConfig::linear(1, 64))).unwrap();
//! assert_eq!(bad[0].rule, Rule::DivergentBarrier);
//!
//! let mut args = vec![
//!     Arg::Buffer(Buffer::from_f32(&[1.0, 2.0, 3.0])),
//!     Arg::Buffer(Buffer::from_f32(&[0.0; 3])),
//!     Arg::Scalar(Value::U32(3)),
//! ];
//! sim::run(double(), LaunchConfig::linear(1, 32), &mut args, &SimOptions::default()).unwrap();
//! assert_eq!(args[1].buffer().unwrap().to_f32(), vec![2.0, 4.0, 6.0]);
//! ```
//!
//! The IR, its analysis and printer live in `oxmera-kernel-ir` (re-exported
//! here) so that the macro can run the analysis at compile time. This crate
//! must never know about tensors, backends or any GPU API: its emitters
//! write shader text, and the backends (`oxmera-wgpu`, `oxmera-cuda`)
//! compile and run it.

extern crate self as oxmera_kernel;

pub use gate::gate;
pub use oxmera_kernel_ir::{
    analysis, diag, dtype, eval, explain, half, ir, launch, limits, pretty, space, target, validate,
};
pub use oxmera_kernel_macros::{helper, kernel, kernels};

pub mod corpus;
pub mod emit;
mod gate;
pub mod library;
pub mod registry;
pub mod sim;
pub mod tune;
