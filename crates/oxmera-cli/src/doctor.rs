//! `oxmera doctor`: the shared report (`oxmera_learn::doctor`, the same
//! as `oxmera-learn doctor`), and `--gpu`, which only this command has: it
//! opens each GPU through the wgpu and CUDA backends this build links.
//!
//! The doctor exits 0 whenever the report completes: a missing GPU is a
//! fact about the machine, not a failure.

use std::process::ExitCode;

// Printing through anstream strips colour from a stream that takes none
// (see `style`).
use anstream::print;

/// Arguments of `oxmera doctor`: the shared ones, and `--gpu`. (Named
/// apart from the shared `DoctorArgs`: clap names an argument group after
/// its struct, and a flattened one of the same name would clash.)
#[derive(Debug, clap::Args)]
pub struct FullDoctorArgs {
    #[command(flatten)]
    shared: oxmera_learn::doctor::DoctorArgs,
    /// Also probe the GPUs wgpu finds: each adapter's name, API, driver,
    /// subgroup sizes, dtype features and limits. Plain `doctor` opens no
    /// device; this asks the drivers (and may take a second).
    #[arg(long)]
    gpu: bool,
}

/// Runs `oxmera doctor`.
pub fn run(args: FullDoctorArgs) -> ExitCode {
    match oxmera_learn::doctor::report_text(&args.shared, "oxmera") {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    }
    if args.gpu {
        print!("{}", gpu_section());
    }
    ExitCode::SUCCESS
}

/// The `--gpu` section: every wgpu adapter and every CUDA GPU, or why
/// there is none.
fn gpu_section() -> String {
    format!("{}{}", wgpu_section(), cuda_section())
}

/// One `--gpu` section: a heading, then each device's report indented, or
/// what there is instead (none found, or why the backend could not look).
#[cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(dead_code))]
fn devices_section<R: std::fmt::Display>(
    heading: &str,
    probed: oxmera::Result<Vec<R>>,
    none_found: &str,
) -> String {
    let mut s = format!("\nGPUs ({heading})\n");
    match probed {
        Ok(devices) if devices.is_empty() => s.push_str(&format!("  {none_found}\n")),
        Ok(devices) => {
            for d in devices {
                for line in d.to_string().lines() {
                    s.push_str(&format!("  {line}\n"));
                }
            }
        }
        Err(e) => s.push_str(&format!("  {e}\n")),
    }
    s
}

/// What a section says in a build without its backend.
#[cfg_attr(all(feature = "wgpu", feature = "cuda"), allow(dead_code))]
fn not_built(heading: &str, feature: &str) -> String {
    format!(
        "\nGPUs ({heading})\n  this build has no {heading} support: rebuild with \
         `cargo run --release -p oxmera-cli --features {feature} -- doctor --gpu`\n"
    )
}

/// The CUDA part of `--gpu`: what the driver lists, or what is missing.
fn cuda_section() -> String {
    #[cfg(feature = "cuda")]
    {
        devices_section(
            "CUDA",
            oxmera_cuda::probe(),
            "the driver is present and lists no GPU",
        )
    }
    #[cfg(not(feature = "cuda"))]
    {
        not_built("CUDA", "cuda")
    }
}

/// The wgpu part of `--gpu`: every adapter, or why there is none.
fn wgpu_section() -> String {
    #[cfg(feature = "wgpu")]
    {
        devices_section(
            "wgpu",
            oxmera_wgpu::probe(),
            "none found: no Vulkan, Metal or DX12 driver \
             (on Linux without a GPU: apt-get install mesa-vulkan-drivers for lavapipe)",
        )
    }
    #[cfg(not(feature = "wgpu"))]
    {
        not_built("wgpu", "wgpu")
    }
}
