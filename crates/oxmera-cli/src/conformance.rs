//! `oxmera conformance`: run the conformance corpus on a device against
//! the reference and print the matrix.
//!
//! The suite itself lives in `oxmera-conformance`; this module only turns
//! a device name into a [`Device`], checks that a backend computes for it,
//! runs, prints the report (op × dtype × layout class, each cell a verdict
//! and the worst error over its tolerance, then every failure), and maps
//! the outcome to the exit code: 0 when every comparison passed, 1 when
//! one failed, 2 when the command could not run (an unknown device, a
//! device without a backend in this build, a filter matching no case).

use std::io::Write;
use std::process::ExitCode;

use oxmera::Device;

/// Arguments of `oxmera conformance`.
#[derive(Debug, clap::Args)]
pub struct ConformanceArgs {
    /// The device to check: `cpu`, `reference`, `loopback` (device services
    /// only, every op through the host fallback), `cuda:N` or `wgpu:N`.
    #[arg(long, value_name = "NAME", default_value = "cpu")]
    pub device: String,
    /// Run only the cases whose id or op name contains this text
    /// (`softmax`, `matmul/batched`, `specials`).
    #[arg(long, value_name = "SUBSTR")]
    pub filter: Option<String>,
}

/// Runs the corpus as `args` say, prints the report, and returns the exit
/// code described in the module docs.
pub fn run(args: ConformanceArgs) -> ExitCode {
    let device: Device = match oxmera::tensor::registry::parse_device(&args.device) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("oxmera conformance: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = oxmera::tensor::registry::backend(device) {
        eprintln!("oxmera conformance: no backend computes for {device} in this build: {e}");
        return ExitCode::from(2);
    }
    let report = oxmera_conformance::run(device, args.filter.as_deref());
    if report.runs() == 0 {
        eprintln!(
            "oxmera conformance: no case matches the filter {:?}",
            args.filter.as_deref().unwrap_or("")
        );
        return ExitCode::from(2);
    }
    // Written, not `print!`ed: a reader that stops early (`| head`) closes
    // the pipe, and the verdict below must still be the exit code.
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{report}");
    let fell_back = oxmera::tensor::fallback::report().for_device(device);
    if !fell_back.is_empty() {
        let _ = write!(out, "\n{fell_back}");
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// A stand-alone parser, so the arguments can be tested without the
    /// rest of the command line.
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: ConformanceArgs,
    }

    fn args(argv: &[&str]) -> ConformanceArgs {
        Cli::try_parse_from(std::iter::once("conformance").chain(argv.iter().copied()))
            .unwrap()
            .args
    }

    #[test]
    fn arguments_parse_with_a_cpu_default() {
        let a = args(&[]);
        assert_eq!(a.device, "cpu");
        assert_eq!(a.filter, None);
        let a = args(&["--device", "reference", "--filter", "softmax"]);
        assert_eq!(a.device, "reference");
        assert_eq!(a.filter.as_deref(), Some("softmax"));
    }

    #[test]
    fn the_reference_passes_a_filtered_run() {
        let code = run(args(&["--device", "reference", "--filter", "log_softmax"]));
        assert_eq!(code, ExitCode::SUCCESS);
    }

    #[test]
    fn the_cpu_passes_a_filtered_run() {
        let code = run(args(&["--device", "cpu", "--filter", "matmul/batched"]));
        assert_eq!(code, ExitCode::SUCCESS);
    }

    #[test]
    fn the_loopback_device_passes_through_the_fallback() {
        let code = run(args(&[
            "--device",
            "loopback",
            "--filter",
            "matmul/batched",
        ]));
        assert_eq!(code, ExitCode::SUCCESS);
        let d = oxmera::tensor::registry::parse_device("loopback").unwrap();
        assert!(oxmera::tensor::fallback::count(d, "matmul") > 0);
    }

    #[test]
    fn usage_errors_exit_2() {
        assert_eq!(run(args(&["--device", "gpu"])), ExitCode::from(2));
        // No backend computes for a wgpu adapter in this build.
        assert_eq!(run(args(&["--device", "wgpu:7"])), ExitCode::from(2));
        assert_eq!(
            run(args(&["--device", "reference", "--filter", "no-such-case"])),
            ExitCode::from(2)
        );
    }
}
