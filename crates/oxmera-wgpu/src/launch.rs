//! A kernel of one's own on the GPU: the simulator's arguments, run by the
//! adapter.
//!
//! [`run`] takes exactly what [`oxmera_kernel::sim::run`] takes — a
//! `#[kernel]` function's IR, a launch and [`Arg`]s (buffers of 32-bit
//! words, scalars as values) — so one set of inputs runs in the simulator
//! and on the GPU and the results can be compared word for word. The
//! kernel launches only after oxmera's analysis has passed for this
//! adapter's target (its subgroup width and limits) at this launch; a
//! finding is an error that shows it, and nothing runs.

use oxmera_core::{Device, Error, Result};
use oxmera_kernel::ir::Kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{Arg, check_args};
use oxmera_kernel::target::Target;

/// Runs `kernel` at `launch` on the wgpu device `device` with `args`, after
/// the analysis has passed for the adapter's target; every writable buffer
/// comes back holding the device's result. Buffers are uploaded and read
/// back whole.
///
/// Errors: `BackendUnavailable` where the device does not open (or this
/// build has no wgpu), `InvalidArgument` for arguments that do not match
/// the kernel's parameters, `DeviceFault` for a finding of the analysis,
/// a launch past the adapter's limits, or a failure on the device.
pub fn run(
    device: Device,
    kernel: &'static Kernel,
    launch: LaunchConfig,
    args: &mut [Arg],
) -> Result<()> {
    check_args(kernel, args).map_err(|e| Error::InvalidArgument {
        op: "launch",
        name: "args",
        message: e.to_string(),
    })?;
    #[cfg(feature = "wgpu")]
    {
        let gpu = crate::gpu::opened(device)?;
        gpu.run_user(kernel, launch, args)
    }
    #[cfg(not(feature = "wgpu"))]
    {
        let _ = launch;
        Err(crate::not_built(device))
    }
}

/// The target oxmera checks kernels for on the wgpu device `device`: the
/// adapter's subgroup width, invocation and workgroup-memory limits.
pub fn target(device: Device) -> Result<Target> {
    #[cfg(feature = "wgpu")]
    {
        Ok(crate::gpu::opened(device)?.target)
    }
    #[cfg(not(feature = "wgpu"))]
    {
        Err(crate::not_built(device))
    }
}

/// Times one launch of `kernel` at `launch` on the wgpu device `device`:
/// the arguments are uploaded and the queue drained before the clock
/// starts, and the clock stops when the launch has completed. The first
/// launch of a kernel at a block also compiles its pipeline, which is why a
/// tuner warms up before timing. Errors as [`run`]'s.
pub fn time_launch(
    device: Device,
    kernel: &'static Kernel,
    launch: LaunchConfig,
    args: &[Arg],
) -> Result<std::time::Duration> {
    check_args(kernel, args).map_err(|e| Error::InvalidArgument {
        op: "launch",
        name: "args",
        message: e.to_string(),
    })?;
    #[cfg(feature = "wgpu")]
    {
        crate::gpu::opened(device)?.time_user(kernel, launch, args)
    }
    #[cfg(not(feature = "wgpu"))]
    {
        let _ = launch;
        Err(crate::not_built(device))
    }
}

/// The identity of the wgpu device `device` as a tuning cache keys it:
/// `wgpu: ` and the adapter's name, backend and driver (name and version). Two machines with
/// the same identity run the same compiled shaders on the same hardware.
pub fn identity(device: Device) -> Result<String> {
    #[cfg(feature = "wgpu")]
    {
        Ok(crate::gpu::identity(&crate::gpu::opened(device)?.report))
    }
    #[cfg(not(feature = "wgpu"))]
    {
        Err(crate::not_built(device))
    }
}
