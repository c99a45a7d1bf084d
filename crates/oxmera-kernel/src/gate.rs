//! The launch gate every GPU backend runs before a kernel's first launch at
//! a shape: oxmera's analysis for the device's target at that launch, and a
//! finding as the error that shows it. One function, so that wgpu and CUDA
//! refuse a kernel in the same words.

use crate::analysis::{CheckOptions, check};
use crate::ir::Kernel;
use crate::launch::LaunchConfig;
use crate::target::Target;

/// `Ok` when the analysis finds nothing for `target` at `launch`; else the
/// message a backend raises (as its `DeviceFault`): the kernel, the launch,
/// `device` (how the backend names the adapter or part) and the first
/// finding rendered as `oxmera kernel check` would.
pub fn gate(k: &Kernel, launch: LaunchConfig, target: Target, device: &str) -> Result<(), String> {
    let findings = check(k, &CheckOptions::new(launch).on(target))
        .map_err(|e| format!("kernel `{}`: {e}", k.name))?;
    match findings.first() {
        None => Ok(()),
        Some(f) => Err(format!(
            "kernel `{}` did not launch: oxmera's analysis for {device} (warps of {}) at block {} grid {} found:\n{}",
            k.name,
            target.warp_width(),
            launch.block,
            launch.grid,
            crate::diag::render(k, f)
        )),
    }
}
