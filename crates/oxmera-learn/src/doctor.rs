//! `doctor`: what this machine can run, and where the learner is. The
//! part every front end shares; opening GPUs (`oxmera doctor --gpu`) is
//! the full command's, which links the GPU backends.
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

/// Arguments of `doctor` that every front end has.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the probed report as TOML (the format `--report` reads).
    #[arg(long)]
    toml: bool,
    /// Render a saved report instead of probing this machine.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
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

/// The doctor's report as text (TOML with `--toml`), probed or read from
/// `--report`, or why it could not be made. A front end run as `prog` may
/// add sections of its own after it (the full command's `--gpu`).
pub fn report_text(args: &DoctorArgs, prog: &str) -> Result<String, String> {
    let report = match &args.report {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| toml::from_str::<Report>(&t).map_err(|e| e.to_string()))
            .map_err(|e| format!("doctor: cannot read report {}: {e}", path.display()))?,
        None => probe::probe(),
    };
    if args.toml {
        toml::to_string(&report)
            .map_err(|e| format!("doctor: cannot write the report as TOML: {e}"))
    } else {
        Ok(render::render(&report, Paint::for_stdout(), prog))
    }
}

/// Runs `doctor` for a front end run as `prog`: prints the report, exit
/// code 0 whenever it completes, 2 when it cannot.
pub fn run(args: &DoctorArgs, prog: &str) -> ExitCode {
    match report_text(args, prog) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
