//! The kernel subset of Rust, lowered to the kernel IR.
//!
//! oxmera's kernels are written as Rust functions and reach the IR through
//! two front doors: the `#[kernel]` attribute, which lowers a function while
//! its crate compiles, and the command line (`oxmera kernel check
//! my_kernels.rs`), which lowers the kernels of a file it has only read.
//! Both must accept the same language, refuse the same constructs with the
//! same hints and name the same spans, so there is one lowering, here, and
//! the two doors are thin:
//!
//! - [`lower::lower`] turns one `syn` function into a typed [`Kernel`] and
//!   a span table ([`span::SpanInfo`]);
//! - [`options`] reads the attribute's launch space (`block`, `grid`,
//!   `target`, `cc`) and lists the launches it declares, and [`search`]
//!   the search spaces (`search(..)`) a tuner explores apart from them;
//! - [`generics`] turns a kernel generic over its element type into one
//!   kernel per dtype (its instances), each lowered as above;
//! - [`file`] finds the `#[kernel]` functions of a source file, lowers them
//!   and turns spans into the file's own lines and columns.
//!
//! This crate knows Rust syntax and the IR. It must never know the
//! simulator, the kernel library or a backend — and the IR crate must never
//! know Rust syntax, which is why the lowering is not there.
//!
//! ```
//! let file = oxmera_kernel_lower::file::lower_source(
//!     "double.rs",
//!     "#[kernel] fn double(x: &mut [f32]) { x[thread_idx_x()] *= 2.0; }",
//! )
//! .unwrap();
//! assert_eq!(file.names(), ["double"]);
//! ```
//!
//! [`Kernel`]: oxmera_kernel_ir::ir::Kernel

pub mod file;
pub mod generics;
pub mod lower;
pub mod options;
pub mod search;
pub mod span;
