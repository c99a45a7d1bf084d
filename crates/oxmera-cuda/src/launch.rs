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

use std::time::Duration;

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

/// Times one launch of `kernel` at `launch` on the CUDA device `device`,
/// the mirror of `oxmera_wgpu::time_launch`: the arguments are uploaded
/// first and not timed; the time is the GPU's own, between two CUDA events
/// recorded on the stream just before and just after the launch (so it
/// leaves out the host's side of submitting, which the wgpu backend's host
/// clock counts: compare times within one device, never across backends).
/// The first launch at a block also JIT-compiles its PTX (outside the
/// events, but slow), which is why a tuner warms up before timing.
///
/// Errors as [`run`]'s.
pub fn time_launch(
    device: Device,
    kernel: &'static Kernel,
    launch: LaunchConfig,
    args: &[Arg],
) -> Result<Duration> {
    check_args(kernel, args).map_err(|e| Error::InvalidArgument {
        op: "launch",
        name: "args",
        message: e.to_string(),
    })?;
    #[cfg(feature = "cuda")]
    {
        crate::driver::opened(device)?.time_user(kernel, launch, args)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = launch;
        Err(crate::not_built(device))
    }
}

/// The identity of the CUDA device `device` as a tuning cache keys it:
/// `cuda: `, the part's name, its compute capability, the driver's CUDA
/// version and, on Linux, the driver's release
/// ([`crate::identity_of`]). Never its ordinal.
///
/// Errors: `BackendUnavailable` as [`run`]'s.
pub fn identity(device: Device) -> Result<String> {
    #[cfg(feature = "cuda")]
    {
        crate::driver::identity(device)
    }
    #[cfg(not(feature = "cuda"))]
    {
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

/// The duration two CUDA events measured, `ms` milliseconds apart: an
/// error, said as a `DeviceFault` by the caller, where the reading is no
/// duration — NaN, infinite or negative — rather than a time the tuner
/// would rank (a NaN clamped to 0 s would win every comparison).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn event_reading(ms: f32) -> std::result::Result<Duration, String> {
    if !ms.is_finite() || ms < 0.0 {
        return Err(format!("the events' reading {ms} ms is no duration"));
    }
    Duration::try_from_secs_f64(f64::from(ms) / 1e3)
        .map_err(|e| format!("the events' reading {ms} ms: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_reading_that_is_no_duration_is_an_error_never_zero() {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.5] {
            let e = event_reading(bad).expect_err("not a duration");
            assert!(e.contains("is no duration"), "{e}");
        }
        assert_eq!(event_reading(1.5), Ok(Duration::from_micros(1500)));
        assert_eq!(event_reading(0.0), Ok(Duration::ZERO));
    }
}

#[cfg(feature = "cuda")]
mod on_gpu {
    // Launching a kernel is unsafe in cudarc: the arguments must match the
    // entry's parameters, which `launch_staged` establishes.
    #![allow(unsafe_code)]

    use std::time::Duration;

    use cudarc::driver::{
        CudaEvent, CudaSlice, DriverError, LaunchConfig as CudaLaunch, PushKernelArg, sys,
    };
    use oxmera_core::{Error, Result};
    use oxmera_kernel::ir::{Kernel, ParamKind, Value};
    use oxmera_kernel::launch::LaunchConfig;
    use oxmera_kernel::sim::Arg;

    use crate::driver::Gpu;

    /// A launch's arguments on the device: one allocation per buffer
    /// argument, one 64-bit word per scalar, each in argument order.
    struct Staged {
        buffers: Vec<CudaSlice<u8>>,
        words: Vec<u64>,
    }

    impl Gpu {
        /// A driver error, as this op's `DeviceFault` on this GPU.
        pub(crate) fn driver_fault(&self, op: &'static str) -> impl Fn(DriverError) -> Error + '_ {
            move |e| self.fault(op, e.to_string())
        }

        /// Uploads `args` (queued on the stream, before any launch after).
        fn stage(&self, args: &[Arg], op: &'static str) -> Result<Staged> {
            let mut buffers = Vec::new();
            let mut scalars = Vec::new();
            for a in args {
                match a {
                    Arg::Buffer(b) => {
                        // An empty buffer still gets a word: a null pointer
                        // is not a buffer.
                        let words = if b.is_empty() {
                            &[0u8; 4][..]
                        } else {
                            b.as_bytes()
                        };
                        buffers.push(
                            self.stream
                                .clone_htod(words)
                                .map_err(self.driver_fault(op))?,
                        );
                    }
                    Arg::Scalar(v) => scalars.push(*v),
                }
            }
            // Scalars travel as their bit patterns zero-extended to 64 bits:
            // f32 as its bits, a bool as 0 or 1. The driver copies as many
            // bytes as the PTX entry's param declares (`.u32`/`.f32`: 4,
            // `.u64`/`.f64`: 8, `.u16`/`.b16`: 2, `.u8`: 1) from the start
            // of each word, which on a little-endian host is the value.
            let words = scalars.iter().map(|v| Value::to_bits(*v)).collect();
            Ok(Staged { buffers, words })
        }

        /// Launches `k` at `launch` on staged arguments, after the gate;
        /// with `timed`, between two timing events the result returns.
        fn launch_staged(
            &self,
            k: &'static Kernel,
            launch: LaunchConfig,
            staged: &Staged,
            timed: bool,
            op: &'static str,
        ) -> Result<Option<(CudaEvent, CudaEvent)>> {
            let buffers: Vec<&CudaSlice<u8>> = staged.buffers.iter().collect();
            self.launch_bound(k, launch, &buffers, &staged.words, timed, op)
        }

        /// Launches `k` at `launch`, after the gate: `buffers` bind its
        /// buffer parameters in order, `words` its scalar parameters in
        /// order (each a value's bits, zero-extended; see `stage`); with
        /// `timed`, between two timing events the result returns.
        pub(crate) fn launch_bound(
            &self,
            k: &'static Kernel,
            launch: LaunchConfig,
            buffers: &[&CudaSlice<u8>],
            words: &[u64],
            timed: bool,
            op: &'static str,
        ) -> Result<Option<(CudaEvent, CudaEvent)>> {
            self.gate(k, launch, op)?;
            let (f, dynamic) = self.function(k, launch.block, op)?;
            let mut builder = self.stream.launch_builder(&f);
            let (mut next_buffer, mut next_word) = (buffers.iter(), words.iter());
            for p in &k.params {
                // The callers match the arguments to the parameters first
                // (`check_args`, or the op layer's fixed orders), so
                // neither list runs short; were one to, that is a fault,
                // not a panic.
                let short = || self.fault(op, "fewer arguments than the kernel's parameters");
                match p.kind {
                    ParamKind::Buffer { .. } => {
                        builder.arg(*next_buffer.next().ok_or_else(short)?);
                    }
                    ParamKind::Scalar(_) => {
                        builder.arg(next_word.next().ok_or_else(short)?);
                    }
                }
            }
            if timed {
                // Events with timing on (cudarc's default disables it).
                builder.record_kernel_launch(sys::CUevent_flags::CU_EVENT_DEFAULT);
            }
            let cfg = CudaLaunch {
                grid_dim: (launch.grid.x, launch.grid.y, launch.grid.z),
                block_dim: (launch.block.x, launch.block.y, launch.block.z),
                shared_mem_bytes: dynamic,
            };
            // SAFETY: the entry was emitted from `k` and takes its parameters
            // in order — a buffer as a 64-bit device pointer (each a live
            // allocation: a tensor's memory, or words uploaded for this
            // launch, whose stream-ordered free comes after the kernel), a
            // scalar as the first bytes of its word; the block is the one
            // compiled in (`.reqntid`) and the analysis passed for it. An
            // out-of-bounds access the analysis cannot see faults the
            // context (reported at the next synchronization), not the host.
            unsafe { builder.launch(cfg) }.map_err(self.driver_fault(op))
        }

        pub(crate) fn run_user(
            &self,
            k: &'static Kernel,
            launch: LaunchConfig,
            args: &mut [Arg],
        ) -> Result<()> {
            let op = "launch";
            let staged = self.stage(args, op)?;
            self.launch_staged(k, launch, &staged, false, op)?;
            let mut next = staged.buffers.iter();
            for (p, a) in k.params.iter().zip(args.iter_mut()) {
                if let (ParamKind::Buffer { writable, .. }, Arg::Buffer(b)) = (p.kind, a) {
                    let Some(buf) = next.next() else { break };
                    if writable && !b.is_empty() {
                        let back = self.stream.clone_dtoh(buf).map_err(self.driver_fault(op))?;
                        b.as_bytes_mut().copy_from_slice(&back);
                    }
                }
            }
            Ok(())
        }

        /// One launch timed by CUDA events: the uploads are queued before
        /// the start event on the same stream, so they are done before it
        /// fires and are not counted; `elapsed_ms` waits for the end event.
        pub(crate) fn time_user(
            &self,
            k: &'static Kernel,
            launch: LaunchConfig,
            args: &[Arg],
        ) -> Result<Duration> {
            let op = "launch";
            let staged = self.stage(args, op)?;
            let events = self.launch_staged(k, launch, &staged, true, op)?;
            let (start, end) =
                events.ok_or_else(|| self.fault(op, "the driver recorded no timing events"))?;
            let ms = start.elapsed_ms(&end).map_err(self.driver_fault(op))?;
            // A launch that faulted shows up here, at the first wait.
            self.stream.synchronize().map_err(self.driver_fault(op))?;
            super::event_reading(ms).map_err(|why| self.fault(op, why))
        }
    }
}
