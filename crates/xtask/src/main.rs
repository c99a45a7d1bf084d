//! Repository checks that CI runs:
//!
//! - `cargo run -p xtask -- layering` reads `cargo metadata` and enforces
//!   the order of crates that ARCHITECTURE.md's layer table describes
//!   (the table itself is [`layering::LAYERS`]), so a wrong dependency
//!   fails CI instead of waiting for a reviewer to notice.
//! - `cargo run -p xtask -- docrefs [ROOT]` reads every doc and fails on a
//!   file path, crate, `-p` package or `oxmera` subcommand that does not
//!   exist (rules in [`docrefs`]), so a rename cannot leave the docs
//!   pointing at nothing.
//!
//! Both exit 0 when clean, 1 on a violation (one line each), 2 when they
//! cannot run.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod docrefs;
mod layering;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("layering") => {
            let metadata = match read_metadata(args.get(1).map(String::as_str)) {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("xtask layering: {e}");
                    return ExitCode::from(2);
                }
            };
            match layering::check(&metadata) {
                Ok(report) => {
                    println!("{report}");
                    ExitCode::SUCCESS
                }
                Err(violations) => {
                    for v in &violations {
                        eprintln!("layering violation: {v}");
                    }
                    eprintln!("{} layering violation(s)", violations.len());
                    ExitCode::FAILURE
                }
            }
        }
        Some("docrefs") => run_docrefs(args.get(1).map(String::as_str)),
        _ => {
            eprintln!("usage: cargo run -p xtask -- layering [METADATA.json]");
            eprintln!("       cargo run -p xtask -- docrefs [ROOT]");
            ExitCode::from(2)
        }
    }
}

/// Runs the docs check on `root`, or on this workspace.
fn run_docrefs(root: Option<&str>) -> ExitCode {
    // The workspace this xtask was built in, so it works from any directory;
    // tests pass a planted tree instead.
    let root = match root {
        Some(r) => PathBuf::from(r),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    };
    match docrefs::check(&root) {
        Ok(report) if report.findings.is_empty() => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Ok(report) => {
            for f in &report.findings {
                eprintln!("{f}");
            }
            eprintln!(
                "{} reference(s) to things that do not exist (rules: crates/xtask/src/docrefs/mod.rs)",
                report.findings.len()
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("xtask docrefs: {e}");
            ExitCode::from(2)
        }
    }
}

/// Reads metadata from a file (for tests and experiments) or from cargo.
fn read_metadata(path: Option<&str>) -> Result<serde_json::Value, String> {
    let text = match path {
        Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"))?,
        None => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let out = Command::new(cargo)
                .args(["metadata", "--format-version", "1", "--no-deps"])
                .output()
                .map_err(|e| format!("running cargo metadata: {e}"))?;
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).into_owned());
            }
            String::from_utf8(out.stdout).map_err(|e| e.to_string())?
        }
    };
    serde_json::from_str(&text).map_err(|e| format!("parsing metadata: {e}"))
}
