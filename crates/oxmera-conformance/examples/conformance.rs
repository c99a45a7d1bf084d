//! Runs the built-in corpus on a device and prints the matrix:
//! `cargo run -p oxmera-conformance --example conformance -- cpu [FILTER]`.

// Links the CPU backend, so `cpu` is a device this example can check.
use oxmera_cpu as _;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let device = args.next().unwrap_or_else(|| "reference".into());
    let filter = args.next();
    let device: oxmera_core::Device = match device.parse() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let report = oxmera_conformance::run(device, filter.as_deref());
    print!("{report}");
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
