//! A kernel of one's own on an NVIDIA GPU: the simulator's arguments, run
//! by the driver.
//!
//! [`run`] takes exactly what [`oxmera_kernel::sim::run`] takes — a
//! `#[kernel]` function's IR, a launch and [`Arg`]s (buffers of 32-bit
//! words, scalars as values) — so one set of inputs runs in the simulator
//! and on the GPU and the results can be compared word for word. The
//! kernel launches only after oxmera's analysis has passed for the part's
//! compute capability at this launch; a finding is an error that shows it,
//! and nothing runs.

use oxmera_core::{Device, Error, Result};
use oxmera_kernel::ir::Kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{Arg, check_args};
use oxmera_kernel::target::Target;

/// Runs `kernel` at `launch` on the CUDA device `device` with `args`, after
/// the analysis has passed for the part; every writable buffer comes back
/// holding the device's result. Buffers are uploaded and read back whole.
///
/// Errors: `BackendUnavailable` where the device does not open (no driver,
/// or a build without the `cuda` feature), `InvalidArgument` for arguments
/// that do not match the kernel's parameters, `DeviceFault` for a finding
/// of the analysis, PTX the driver refuses, or a failure on the device.
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
    #[cfg(feature = "cuda")]
    {
        let gpu = crate::driver::opened(device)?;
        gpu.run_user(kernel, launch, args)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = launch;
        Err(crate::not_built(device))
    }
}

/// The target oxmera checks kernels for on the CUDA device `device`: its
/// compute capability's limits, warps of 32.
pub fn target(device: Device) -> Result<Target> {
    #[cfg(feature = "cuda")]
    {
        Ok(crate::driver::opened(device)?.target)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(crate::not_built(device))
    }
}

#[cfg(feature = "cuda")]
mod on_gpu {
    // Launching a kernel is unsafe in cudarc: the arguments must match the
    // entry's parameters, which the block below establishes.
    #![allow(unsafe_code)]

    use cudarc::driver::{LaunchConfig as CudaLaunch, PushKernelArg};
    use oxmera_core::Result;
    use oxmera_kernel::ir::{Kernel, ParamKind, Value};
    use oxmera_kernel::launch::LaunchConfig;
    use oxmera_kernel::sim::Arg;

    use crate::driver::Gpu;

    impl Gpu {
        pub(crate) fn run_user(
            &self,
            k: &'static Kernel,
            launch: LaunchConfig,
            args: &mut [Arg],
        ) -> Result<()> {
            let op = "launch";
            self.gate(k, launch, op)?;
            let (f, dynamic) = self.function(k, launch.block, op)?;
            let fault = |e: cudarc::driver::DriverError| self.fault(op, e.to_string());
            let mut buffers = Vec::new();
            let mut scalars = Vec::new();
            for a in args.iter() {
                match a {
                    Arg::Buffer(b) => {
                        // An empty buffer still gets a word: a null pointer
                        // is not a buffer.
                        let words = if b.data.is_empty() {
                            &[0u32][..]
                        } else {
                            &b.data
                        };
                        buffers.push(self.stream.clone_htod(words).map_err(fault)?);
                    }
                    Arg::Scalar(v) => scalars.push(*v),
                }
            }
            // Scalars travel as their 32-bit patterns: f32 as its bits, a
            // bool as 0 or 1, exactly the PTX entry's `.u32`/`.f32` params.
            let words: Vec<u32> = scalars.iter().map(|v| Value::to_bits(*v)).collect();
            let mut builder = self.stream.launch_builder(&f);
            let (mut next_buffer, mut next_scalar) = (buffers.iter(), words.iter());
            for p in &k.params {
                match p.kind {
                    ParamKind::Buffer { .. } => {
                        builder.arg(
                            next_buffer
                                .next()
                                .expect("one device buffer per buffer argument"),
                        );
                    }
                    ParamKind::Scalar(_) => {
                        builder.arg(next_scalar.next().expect("one word per scalar argument"));
                    }
                }
            }
            let cfg = CudaLaunch {
                grid_dim: (launch.grid.x, launch.grid.y, launch.grid.z),
                block_dim: (launch.block.x, launch.block.y, launch.block.z),
                shared_mem_bytes: dynamic,
            };
            // SAFETY: the entry was emitted from `k` and takes its parameters
            // in order — a buffer as a 64-bit device pointer (each a live
            // allocation of the argument's words, checked against the
            // kernel by `check_args`), a scalar as 4 bytes; the block is the
            // one compiled in (`.reqntid`) and the analysis passed for it.
            unsafe { builder.launch(cfg) }.map_err(fault)?;
            let mut next = buffers.iter();
            for (p, a) in k.params.iter().zip(args.iter_mut()) {
                if let (ParamKind::Buffer { writable, .. }, Arg::Buffer(b)) = (p.kind, a) {
                    let buf = next.next().expect("one device buffer per buffer argument");
                    if writable && !b.data.is_empty() {
                        let back = self.stream.clone_dtoh(buf).map_err(fault)?;
                        b.data.copy_from_slice(&back);
                    }
                }
            }
            Ok(())
        }
    }
}
