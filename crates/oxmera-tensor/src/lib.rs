//! The `Tensor`, its storage, and the seam where backends plug in.
//!
//! A [`Tensor`] is a [`oxmera_core::Layout`] over shared, immutable,
//! dtype-tagged [`Storage`]. Views (see the methods in `view.rs`) make new
//! layouts over the same storage and never copy; operations validate their
//! arguments here, in the front end, then ask the device's [`Backend`] for
//! fresh storage holding the result. Because every check happens before
//! dispatch, every backend gets the same errors for free and can be
//! compared with the reference element by element.
//!
//! This crate owns: storage and element types, the `Tensor` handle and its
//! views, constructors (including the counter-based [`Generator`]), the
//! [`Backend`] trait — device services, capabilities, and a host
//! [`fallback`] for every op — the device→backend [`registry`] (lazy,
//! fallible, open to custom devices), and the operation front ends.
//!
//! What it must never know about: any concrete backend. The reference
//! backend, the optimized CPU backend and the GPU backends all depend on
//! this crate, never the other way round (only tests and doc examples use
//! the reference, as a dev-dependency).

pub mod autograd;
mod backend;
mod create;
mod data;
mod display;
mod element;
pub mod fallback;
pub mod fused_backward;
pub mod fused_update;
pub mod host_cache;
pub mod host_device;
pub mod indexing;
mod op;
pub mod ops;
pub mod random;
pub mod registry;
mod storage;
mod tensor;
pub mod transfer;
mod view;

pub use autograd::{NoGradGuard, is_grad_enabled, no_grad};
pub use backend::{Backend, Distribution, Support};
pub use data::TensorData;
pub use element::Element;
pub use indexing::{Ellipsis, IndexItem, Indexer, NewAxis};
pub use op::{
    BinaryOp, CmpOp, Conv2dParams, Pool2dParams, ReduceOp, SELU_ALPHA, SELU_SCALE, ScanOp,
    ScatterMode, UnaryOp, keepdim_shape, window_input_index, window_output_size,
};
pub use ops::chain::{Operand, TensorResultExt};
pub use ops::{
    AttentionOptions, Conv1dParams, ConvTranspose2dParams, InterpolateMode, PadMode, Pool2dOptions,
    ScatterReduce, adaptive_window,
};
pub use random::{Generator, philox4x32_10};
pub use registry::{BACKEND_PROVIDERS, Provider, panic_message};
pub use storage::{DeviceBuffer, HostBuffer, Storage, StorageData};
pub use tensor::{Tensor, TensorId, synchronize};

#[doc(hidden)]
pub use linkme as __linkme;
#[doc(hidden)]
pub use oxmera_core as __core;
