//! oxmera: a machine-learning and GPU-computing framework built from first
//! principles.
//!
//! This crate is the front door: it re-exports the layers below it, offers
//! a [`prelude`], and holds one type of its own, [`AnyError`], the error a
//! program's `main` returns (it must name every layer's error, so it can
//! live only here). Depending on it
//! links both host backends, so both devices work out of the box: the
//! reference backend ([`reference`], [`Device::Reference`]), which defines
//! correct, and the optimized CPU backend ([`cpu`], [`Device::Cpu`]), which
//! is fast. With the `wgpu` feature the wgpu backend is linked too.
//!
//! ```
//! use oxmera::prelude::*;
//!
//! let a = Tensor::arange(0.0, 6.0, 1.0, DType::F32, Device::Reference)?.reshape([2, 3])?;
//! assert_eq!(a.t()?.dims(), &[3, 2]);
//! // The same values on the CPU backend, which this crate also links.
//! let b = a.to_device(Device::Cpu)?;
//! assert_eq!(b.to_vec::<f32>()?, a.to_vec::<f32>()?);
//! # Ok::<(), oxmera::Error>(())
//! ```

mod error;

pub use error::{AnyError, AnyResult};
pub use oxmera_checkpoint as checkpoint;
pub use oxmera_core as core;
pub use oxmera_core::{DType, Device, Error, Layout, Result, Shape};
pub use oxmera_data as data;
pub use oxmera_nn as nn;
pub use oxmera_optim as optim;
// Naming the backend crates also makes the linker keep their link-time
// backend providers, which is what registers them by default.
pub use oxmera_cpu as cpu;
/// The kernel language (with the default `kernel` feature): `#[kernel]`,
/// its convergence analysis, the simulator, the WGSL and PTX emitters.
#[cfg(feature = "kernel")]
pub use oxmera_kernel as kernel;
pub use oxmera_reference as reference;
pub use oxmera_tensor as tensor;
pub use oxmera_tensor::{Generator, Tensor};
/// TensorBoard event files: a `SummaryWriter` any training loop can use.
pub use oxmera_tensorboard as tensorboard;
/// The wgpu backend (with the `wgpu` feature): `wgpu:N` devices, the
/// adapter probe, a user's kernel launched on the GPU.
#[cfg(feature = "wgpu")]
pub use oxmera_wgpu as wgpu;

/// The names most programs need.
pub mod prelude {
    pub use crate::{AnyError, AnyResult};
    pub use oxmera_core::{DType, Device, Error, Result, Scalar, Shape};
    pub use oxmera_nn::{Module, ModuleState};
    pub use oxmera_optim::Optimizer;
    pub use oxmera_tensor::{Ellipsis, Generator, NewAxis, Tensor, TensorResultExt};
}
