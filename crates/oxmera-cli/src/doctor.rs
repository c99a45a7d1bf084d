//! `oxmera doctor`: what this machine can run, and where the learner is.
//!
//! Probing ([`probe`]) and rendering ([`render`]) are separate: the probe
//! fills a [`Report`], a plain serializable value, and the renderer turns
//! any report into text. That is what lets the renderer be tested on saved
//! reports of machines the tests do not run on (a CUDA box, a Mac), and
//! `--report FILE` renders such a file instead of probing.
//!
//! The doctor exits 0 whenever the report completes: a missing GPU is a
//! fact about the machine, not a failure.

use std::path::PathBuf;
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

// Printing through anstream strips colour from a stream that takes none
// (see `style`).
use anstream::print;

use crate::style::Paint;

pub mod probe;
pub mod render;

/// Arguments of `oxmera doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the probed report as TOML (the format `--report` reads).
    #[arg(long)]
    toml: bool,
    /// Render a saved report instead of probing this machine.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Also probe the GPUs wgpu finds: each adapter's name, API, driver,
    /// subgroup sizes, dtype features and limits. Plain `doctor` opens no
    /// device; this asks the drivers (and may take a second).
    #[arg(long)]
    gpu: bool,
}

/// Everything the doctor found, in the order it is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The machine.
    pub host: Host,
    /// The Rust toolchain on `PATH`.
    pub toolchain: Toolchain,
    /// Each backend, in a fixed order: reference, cpu, wgpu, cuda.
    pub backends: Vec<BackendProbe>,
    /// Each ladder tier and whether this machine opens it.
    pub tiers: Vec<TierProbe>,
    /// The learner's ladder progress, when an `exercises/` was found.
    pub ladder: Option<LadderProgress>,
}

/// The machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    /// `std::env::consts::OS`.
    pub os: String,
    /// `std::env::consts::ARCH`.
    pub arch: String,
    /// CPU features that matter to oxmera's kernels, probed at run time.
    pub cpu_features: Vec<CpuFeature>,
}

/// One CPU feature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFeature {
    /// Its name as `is_x86_feature_detected!`/`is_aarch64_feature_detected!` spell it.
    pub name: String,
    /// Whether this CPU has it.
    pub present: bool,
}

/// The Rust toolchain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolchain {
    /// `rustc --version`, if it ran.
    pub rustc: Option<String>,
    /// `cargo --version`, if it ran.
    pub cargo: Option<String>,
    /// The workspace's `rust-version`, and whether `rustc` meets it.
    pub msrv: String,
    /// Whether `rustc` meets `msrv` (`None` when unknown).
    pub meets_msrv: Option<bool>,
}

/// Whether a backend can run here, and why (not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendProbe {
    /// `reference`, `cpu`, `wgpu` or `cuda`.
    pub name: String,
    /// Whether it can run on this machine.
    pub available: bool,
    /// One line: what was found, or what is missing.
    pub detail: String,
    /// What was looked at to decide.
    pub checked: String,
}

/// A ladder tier on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TierProbe {
    /// The tier's letter.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Whether this machine has what it needs.
    pub open: bool,
    /// How many of its rungs are built.
    pub built: usize,
    /// How many rungs it has.
    pub rungs: usize,
    /// What is missing, when not open.
    pub missing: Vec<String>,
}

/// The learner's progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LadderProgress {
    /// Built rungs done.
    pub done: usize,
    /// Built rungs.
    pub built: usize,
    /// The current rung's id and name, if any is left.
    pub current: Option<String>,
}

/// Runs `oxmera doctor`.
pub fn run(args: DoctorArgs) -> ExitCode {
    let report = match &args.report {
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| toml::from_str::<Report>(&t).map_err(|e| e.to_string()))
        {
            Ok(r) => r,
            Err(e) => {
                eprintln!("doctor: cannot read report {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        None => probe::probe(),
    };
    if args.toml {
        match toml::to_string(&report) {
            Ok(t) => print!("{t}"),
            Err(e) => {
                eprintln!("doctor: cannot write the report as TOML: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", render::render(&report, Paint::for_stdout()));
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
