//! The GPU op layer: for each tensor op, which library kernel computes it,
//! with which arguments, at which launch — once, for every GPU backend.
//!
//! A GPU backend is two things. One is a device: memory, uploads and
//! read-backs, a queue of launches, the facts of the part. The other is
//! the knowledge of how `sum` over dims 0 and 2 of a transposed view
//! becomes a launch of `reduce_strided` with this shape, these strides and
//! these marks, or when a size does not fit a kernel's 32-bit indexing and
//! the op must go to the host. The second part does not depend on whether
//! the kernel arrives as WGSL through wgpu or as PTX through the CUDA
//! driver, so it lives here, written once: [`GpuBackend`] implements the
//! whole [`oxmera_tensor::Backend`] trait for any [`GpuDevice`], and the
//! backend crates (`oxmera-wgpu`, `oxmera-cuda`) implement only the device.
//!
//! Each op is native where a library kernel computes it for the dtype and
//! its sizes fit one launch, and otherwise goes through the seam's visible
//! host fallback ([`oxmera_tensor::fallback`]), counted per op;
//! `Backend::support` says which, per op and dtype, and the conformance
//! suite checks both. The limits the kernels respect — 32-bit indexing,
//! walks of at most 16384 steps a thread (llvmpipe stops a loop after
//! 65535 iterations), the device's grid and binding limits — are in the
//! modules that launch them.
//!
//! The crate's tests drive the whole layer through the kernel simulator as
//! a device (`tests/simulated.rs`): every native path runs lane by lane on
//! the CPU and is compared with the reference, with no GPU and no GPU
//! library — which is how code that a CUDA GPU would run is checked on a
//! machine that has none.
//!
//! What it must never know about: wgpu, CUDA, or any device API (the
//! layering check confines those to their backend crates); how an op is
//! defined (the reference does); autograd.

mod backend;
mod conv;
mod copy;
mod device;
mod halves;
mod ints;
mod long;
mod matmul;
mod native;
mod reduce;
mod sort;
mod structural;
pub mod tuned;
mod wide;

pub use backend::GpuBackend;
pub use device::{DenseMatmul, DeviceMemory, GpuDevice};
