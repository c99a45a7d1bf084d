//! The wgpu backend: tensors in a GPU's memory, computed by kernels written
//! in oxmera's own `#[kernel]` language.
//!
//! `wgpu:N` is the N-th adapter wgpu finds (Vulkan on Linux, Metal on Apple,
//! DX12 on Windows; `WGPU_BACKEND` narrows the search). A tensor made on it
//! lives in a GPU buffer; an op it computes natively runs a kernel from
//! [`oxmera_kernel::library`], written as WGSL by
//! [`oxmera_kernel::emit::wgsl`] — the same source the analysis checked and
//! the simulator can run, so a learner can read, check and simulate exactly
//! what runs on their GPU. Before a kernel's first launch at a shape, the
//! analysis checks it for *this adapter's* warp (subgroup) width and limits;
//! a kernel with a finding does not launch.
//!
//! Which kernel computes each op, with which arguments, is not this crate's:
//! it is `oxmera-gpu`'s op layer (`oxmera_gpu::GpuBackend`), shared with
//! the CUDA backend. This crate is the device under it — the adapter, its
//! buffer pool, WGSL pipelines, the batched queue, the gate. What the
//! layer does not compute natively goes to the device seam's visible host
//! fallback (download, reference, upload), counted per op in
//! [`oxmera_tensor::fallback`]; `oxmera conformance --device wgpu` lists
//! which ops ran where.
//!
//! The crate builds in two ways. With its `wgpu` feature (off by default)
//! it links wgpu and opens adapters. Without it — the default, so that the
//! workspace builds and tests with no GPU stack — it still registers the
//! `wgpu` device kind, whose opening fails with
//! [`oxmera_core::Error::BackendUnavailable`] saying how to build it in.
//!
//! A kernel of one's own runs on the GPU through [`run`], with the same
//! arguments the simulator takes, after the analysis has passed for the
//! adapter.
//!
//! This is the only crate that names wgpu (the layering check enforces it);
//! the CLI reaches adapter facts through [`probe`].
//!
//! What it must never know about: how an op is defined (the reference
//! does), autograd, or any other backend.

use oxmera_core::{Device, Error, Result};
use oxmera_tensor::Provider;
use std::sync::Arc;

// The host fallback computes with the reference backend; naming the crate
// keeps its link-time provider in every program that links this one.
use oxmera_reference as _;

#[cfg(feature = "wgpu")]
mod gpu;
mod launch;
mod probe;

pub use launch::{identity, run, target, time_launch};
pub use probe::{AdapterReport, probe};

/// The device kind this crate provides.
pub const KIND: &str = "wgpu";

/// True when the crate was built with its `wgpu` feature (it can open
/// adapters).
pub const ENABLED: bool = cfg!(feature = "wgpu");

#[linkme::distributed_slice(oxmera_tensor::BACKEND_PROVIDERS)]
#[linkme(crate = oxmera_tensor::__linkme)]
static PROVIDE_WGPU: Provider = Provider { kind: KIND, open };

fn open(device: Device) -> Result<Arc<dyn oxmera_tensor::Backend>> {
    #[cfg(feature = "wgpu")]
    {
        let gpu = gpu::Gpu::open(device)?;
        Ok(Arc::new(oxmera_gpu::GpuBackend::new(gpu)))
    }
    #[cfg(not(feature = "wgpu"))]
    {
        Err(not_built(device))
    }
}

/// Why nothing opens in a build without the `wgpu` feature.
#[cfg(not(feature = "wgpu"))]
pub(crate) fn not_built(device: Device) -> Error {
    unavailable(
        device,
        "this build has no wgpu support: rebuild with `--features wgpu` \
         (for the CLI: `cargo run --release -p oxmera-cli --features wgpu -- ...`)",
    )
}

/// The storage statistics of an opened `wgpu` device: how its buffer pool
/// served allocations. `None` if `device` is not an opened wgpu device.
pub fn pool_stats(device: Device) -> Option<PoolStats> {
    #[cfg(feature = "wgpu")]
    {
        gpu::pool_stats(device)
    }
    #[cfg(not(feature = "wgpu"))]
    {
        let _ = device;
        None
    }
}

/// How an opened `wgpu` device's queue has been fed: kernel launches are
/// recorded and submitted in batches (at a read-back, an upload, a wait, or
/// every few dozen launches). `None` if `device` is not an opened wgpu
/// device.
pub fn queue_stats(device: Device) -> Option<QueueStats> {
    #[cfg(feature = "wgpu")]
    {
        gpu::queue_stats(device)
    }
    #[cfg(not(feature = "wgpu"))]
    {
        let _ = device;
        None
    }
}

/// Destroys an opened `wgpu` device as a driver reset or an unplugged GPU
/// would, so a program can see what losing a device does: every later
/// operation on it, and every read-back of a tensor it held, is an
/// [`Error::DeviceFault`] saying the device was lost — never a panic.
/// Tensors on other devices are untouched. Returns `false` if `device` is
/// not an opened wgpu device.
pub fn destroy(device: Device) -> bool {
    #[cfg(feature = "wgpu")]
    {
        gpu::destroy(device)
    }
    #[cfg(not(feature = "wgpu"))]
    {
        let _ = device;
        false
    }
}

/// Launches and the submissions that carried them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueStats {
    /// Kernel launches recorded.
    pub launches: u64,
    /// Command buffers submitted to the queue.
    pub submissions: u64,
}

/// How a device's buffer pool served allocations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStats {
    /// Allocations served by a buffer returned earlier.
    pub hits: u64,
    /// Allocations that made a new GPU buffer.
    pub misses: u64,
    /// Bytes held in the pool, free for reuse.
    pub pooled_bytes: u64,
}

impl PoolStats {
    /// Hits over all allocations (1.0 when there were none).
    pub fn hit_rate(&self) -> f64 {
        let all = self.hits + self.misses;
        if all == 0 {
            1.0
        } else {
            self.hits as f64 / all as f64
        }
    }
}

/// A device that cannot open, and why.
fn unavailable(device: Device, reason: impl Into<String>) -> Error {
    Error::BackendUnavailable {
        op: "open",
        device,
        reason: reason.into(),
    }
}

#[cfg(all(test, not(feature = "wgpu")))]
mod tests {
    use oxmera_core::DType;
    use oxmera_tensor::Tensor;

    use super::*;

    #[test]
    fn without_the_feature_the_device_says_how_to_get_it() {
        let err = Tensor::zeros([2], DType::F32, Device::Wgpu(0)).unwrap_err();
        match err {
            Error::BackendUnavailable { reason, .. } => {
                assert!(reason.contains("--features wgpu"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        assert!(probe().is_err());
        assert_eq!(pool_stats(Device::Wgpu(0)), None);
        const { assert!(!ENABLED) };
    }
}
