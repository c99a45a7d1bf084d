//! The CUDA backend: tensors in an NVIDIA GPU's memory, reached through the
//! CUDA driver API.
//!
//! `cuda:N` is the N-th GPU the driver lists. A tensor made on it lives in
//! device memory; a kernel of one's own runs on it through [`run`], written
//! as PTX by [`oxmera_kernel::emit::ptx`] from the same IR the analysis
//! checked and the simulator can run, after the analysis has passed for the
//! part's compute capability at that launch. The driver JIT-compiles the
//! PTX once per (kernel, block) and the module is kept. [`time_launch`]
//! times one launch with CUDA events and [`identity`] names the part for a
//! tuning cache: together, what `oxmera kernel tune --device cuda` uses.
//!
//! Tensor ops are computed by `oxmera_gpu::GpuBackend`, the op layer the
//! wgpu backend uses too: this crate gives it the device (memory from the
//! driver's stream-ordered pool, uploads, read-backs, launches on one
//! stream) and the layer launches the library's kernels — the same ones,
//! with the same arguments and size limits, that run on lavapipe in CI and
//! lane by lane in the simulator in `oxmera-gpu`'s tests. What the layer
//! has no kernel for, or what does not fit one launch, goes through the
//! device seam's visible host fallback, counted per op in
//! [`oxmera_tensor::fallback`]. **None of this has run on an NVIDIA GPU
//! yet**: every kernel is assembled by `ptxas` for sm_80 and sm_90 in CI,
//! and `scripts/gpu-check.sh` is the script that runs the rest where a
//! driver exists.
//!
//! The crate builds in two ways. With its `cuda` feature (off by default)
//! it links cudarc, which loads the driver library (`libcuda.so`) at run
//! time: no CUDA toolkit is needed to build, and a machine without a driver
//! gets [`oxmera_core::Error::BackendUnavailable`] naming what is missing
//! (the library is probed before any driver call, because cudarc panics
//! when it is absent). Without the feature — the default, so that the
//! workspace builds and tests with no GPU stack — it still registers the
//! `cuda` device kind, whose opening says how to build it in.
//!
//! This is the only crate that names cudarc (the layering check enforces
//! it), and the only one besides `oxmera-cpu` allowed `unsafe`: each block
//! says why it is sound. What it must never know about: how an op is
//! defined (the reference does), autograd, or any other backend.

use std::sync::Arc;

use oxmera_core::{Device, Error, Result};
use oxmera_tensor::Provider;

// The host fallback computes with the reference backend; naming the crate
// keeps its link-time provider in every program that links this one.
use oxmera_reference as _;

#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
mod driver;
mod launch;
mod peers;
mod report;

pub use launch::{identity, run, target, time_launch};
pub use peers::{CublasSgemm, DeviceCopy};
pub use report::{GpuReport, driver_release, identity_of};

/// The device kind this crate provides.
pub const KIND: &str = "cuda";

/// True when the crate was built with its `cuda` feature (it can reach a
/// driver).
pub const ENABLED: bool = cfg!(feature = "cuda");

#[linkme::distributed_slice(oxmera_tensor::BACKEND_PROVIDERS)]
#[linkme(crate = oxmera_tensor::__linkme)]
static PROVIDE_CUDA: Provider = Provider { kind: KIND, open };

fn open(device: Device) -> Result<Arc<dyn oxmera_tensor::Backend>> {
    #[cfg(feature = "cuda")]
    {
        let gpu = driver::opened(device)?;
        Ok(Arc::new(oxmera_gpu::GpuBackend::new(gpu)))
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(not_built(device))
    }
}

/// Every GPU the driver lists. Errors: `BackendUnavailable` when this build
/// has no CUDA support or the machine has no driver, saying which.
pub fn probe() -> Result<Vec<GpuReport>> {
    #[cfg(feature = "cuda")]
    {
        crate::driver::probe()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(crate::not_built(oxmera_core::Device::Cuda(0)))
    }
}

/// Why nothing opens in a build without the `cuda` feature.
#[cfg(not(feature = "cuda"))]
pub(crate) fn not_built(device: Device) -> Error {
    unavailable(
        device,
        "this build has no CUDA support: rebuild with `--features cuda` \
         (for the CLI: `cargo run --release -p oxmera-cli --features cuda -- ...`)",
    )
}

/// A device that cannot open, and why.
pub(crate) fn unavailable(device: Device, reason: impl Into<String>) -> Error {
    Error::BackendUnavailable {
        op: "open",
        device,
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use oxmera_core::DType;
    use oxmera_tensor::Tensor;

    use super::*;

    /// With no driver on the machine (CI's case) or no feature in the build,
    /// making a tensor on `cuda:0` is a typed error that says what is
    /// missing — never a panic.
    #[test]
    fn without_a_driver_or_the_feature_the_device_says_what_is_missing() {
        if probe().is_ok_and(|gpus| !gpus.is_empty()) {
            return; // a machine with a GPU: nothing to show here
        }
        let err = Tensor::zeros([2], DType::F32, Device::Cuda(0)).unwrap_err();
        match err {
            Error::BackendUnavailable { reason, .. } => {
                let expected = if ENABLED {
                    "CUDA driver"
                } else {
                    "--features cuda"
                };
                assert!(reason.contains(expected), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
}
