//! Repository checks that CI runs: `cargo run -p xtask -- layering`.
//!
//! The layering check reads `cargo metadata` and enforces DESIGN.md's
//! arrows mechanically, so a wrong dependency fails CI instead of waiting
//! for a reviewer to notice.

use std::process::{Command, ExitCode};

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
        _ => {
            eprintln!("usage: cargo run -p xtask -- layering [METADATA.json]");
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
