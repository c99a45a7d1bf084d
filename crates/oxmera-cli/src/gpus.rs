//! The GPU backends this build links, behind one door: which target a
//! device's kernels are checked for, and a kernel of one's own launched on
//! it — whichever backend owns the device's kind. A backend left out of the
//! build says which feature brings it in.

use oxmera::Device;
use oxmera_kernel::ir::Kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::Arg;
use oxmera_kernel::target::Target;

/// Why a device kind has no backend in this build.
#[cfg_attr(all(feature = "wgpu", feature = "cuda"), allow(dead_code))]
fn not_built(device: Device, feature: &str) -> String {
    format!(
        "{device}: this build has no {feature} support; rebuild with \
         `cargo run --release -p oxmera-cli --features {feature} -- ...`"
    )
}

/// The target the analysis checks kernels for on `device`.
pub fn target(device: Device) -> Result<Target, String> {
    match device {
        #[cfg(feature = "wgpu")]
        Device::Wgpu(_) => oxmera_wgpu::target(device).map_err(|e| e.to_string()),
        #[cfg(not(feature = "wgpu"))]
        Device::Wgpu(_) => Err(not_built(device, "wgpu")),
        #[cfg(feature = "cuda")]
        Device::Cuda(_) => oxmera_cuda::target(device).map_err(|e| e.to_string()),
        #[cfg(not(feature = "cuda"))]
        Device::Cuda(_) => Err(not_built(device, "cuda")),
        other => Err(format!(
            "{other} runs no kernels of one's own: use a GPU device (wgpu or cuda)"
        )),
    }
}

/// Runs `k` at `launch` on `device` with `args` (after the backend's own
/// analysis gate); the writable buffers come back with the device's result.
pub fn launch(
    device: Device,
    k: &'static Kernel,
    launch: LaunchConfig,
    args: &mut [Arg],
) -> Result<(), String> {
    let _ = (k, launch, &args);
    match device {
        #[cfg(feature = "wgpu")]
        Device::Wgpu(_) => oxmera_wgpu::run(device, k, launch, args).map_err(|e| e.to_string()),
        #[cfg(feature = "cuda")]
        Device::Cuda(_) => oxmera_cuda::run(device, k, launch, args).map_err(|e| e.to_string()),
        other => target(other).map(|_| ()),
    }
}

/// How the tuner's report names `device`: the adapter's name and driver.
pub fn describe(device: Device) -> String {
    match device {
        #[cfg(feature = "wgpu")]
        Device::Wgpu(_) => oxmera_wgpu::identity(device)
            .map(|id| format!("{device} ({})", id.trim_start_matches("wgpu: ")))
            .unwrap_or_else(|_| device.to_string()),
        #[cfg(feature = "cuda")]
        Device::Cuda(_) => oxmera_cuda::identity(device)
            .map(|id| format!("{device} ({})", id.trim_start_matches("cuda: ")))
            .unwrap_or_else(|_| device.to_string()),
        other => other.to_string(),
    }
}

/// The identity a tuning cache keys `device` by: its kind, the adapter's
/// (or part's) name and its driver — never its ordinal, which another
/// machine numbers differently. An error where the backend cannot read it
/// (or the build has no backend for the kind): the caller caches nothing
/// rather than key an entry by `cuda:0`, which names a different part on
/// the next machine.
pub fn identity(device: Device) -> Result<String, String> {
    match device {
        #[cfg(feature = "wgpu")]
        Device::Wgpu(_) => oxmera_wgpu::identity(device).map_err(|e| e.to_string()),
        #[cfg(feature = "cuda")]
        Device::Cuda(_) => oxmera_cuda::identity(device).map_err(|e| e.to_string()),
        other => target(other).and_then(|_| {
            Err(format!(
                "{other}: no identity for the tuning cache (no backend reads one for its kind)"
            ))
        }),
    }
}

/// Seconds one launch of `k` at `launch` takes on `device`: the arguments
/// uploaded first and untimed, the launch timed to its completion — by the
/// host's clock on wgpu, by CUDA events (the GPU's clock) on cuda.
pub fn time(
    device: Device,
    k: &'static Kernel,
    launch: LaunchConfig,
    args: &[Arg],
) -> Result<f64, String> {
    let _ = (k, launch, args);
    match device {
        #[cfg(feature = "wgpu")]
        Device::Wgpu(_) => oxmera_wgpu::time_launch(device, k, launch, args)
            .map(|d| d.as_secs_f64())
            .map_err(|e| e.to_string()),
        #[cfg(feature = "cuda")]
        Device::Cuda(_) => oxmera_cuda::time_launch(device, k, launch, args)
            .map(|d| d.as_secs_f64())
            .map_err(|e| e.to_string()),
        other => target(other).and_then(|_| {
            Err(format!(
                "{other}: this build cannot time kernels on it (no timed launch for its kind)"
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose identity cannot be read has none: never its ordinal.
    #[test]
    fn an_unreadable_identity_is_an_error_not_the_ordinal() {
        for d in ["cpu", "wgpu:0", "cuda:0"] {
            let device = oxmera::tensor::registry::parse_device(d).unwrap();
            match identity(device) {
                // A machine with the adapter or part (and the feature):
                // its name and driver, never the ordinal alone.
                Ok(id) => assert!(id != device.to_string() && id.contains(": "), "{id}"),
                Err(e) => assert!(!e.is_empty()),
            }
        }
        let cpu = oxmera::tensor::registry::parse_device("cpu").unwrap();
        assert!(identity(cpu).is_err());
    }
}
