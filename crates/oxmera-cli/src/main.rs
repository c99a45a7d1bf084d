//! The `oxmera` command-line tool.
//!
//! Each subcommand lives in its own module; this file only parses the
//! command line and hands over. Exit codes: 0 on success, 1 when the command
//! ran and found a problem (a failed check), 2 on a usage or tool error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
// Linking the loopback backend registers its `loopback` device: the one
// every op of which runs through the visible host fallback.
use oxmera_loopback as _;
// With the `wgpu` feature, linking the wgpu backend registers `wgpu:N`.
#[cfg(feature = "wgpu")]
use oxmera_wgpu as _;
// With the `cuda` feature, linking the CUDA backend registers `cuda:N`.
#[cfg(feature = "cuda")]
use oxmera_cuda as _;

// `ladder` and the shared part of `doctor` are oxmera-learn's, the light
// binary's, so both front ends run one implementation; `style` (colour)
// comes with them.
use oxmera_learn::{ladder, style};

mod conformance;
mod doctor;
mod gpus;
mod kernel;
mod tour;
mod train;

/// oxmera: a Rust-native machine-learning and GPU-computing framework built
/// from first principles.
#[derive(Debug, Parser)]
#[command(
    name = "oxmera",
    version,
    about,
    long_about = None,
    after_help = "Exit codes, the same for every command: 0 success; 1 the command ran and \
                  found a problem (training diverged, a check or comparison failed); 2 a \
                  usage error, bad input or an I/O error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train a classifier (an MLP on the embedded digits by default) or a
    /// character-level transformer (`--model transformer`).
    Train(train::TrainArgs),
    /// Continue a prompt with a transformer trained by `oxmera train --model transformer`.
    Sample(train::sample::SampleArgs),
    /// A checkpoint's loss, accuracy and confusion matrix on the test split.
    Eval(train::eval::EvalArgs),
    /// Export a checkpoint for other runtimes (ONNX).
    Export(train::export::ExportArgs),
    /// Run the conformance corpus on a device against the reference and print the matrix.
    Conformance(conformance::ConformanceArgs),
    /// A guided tour of tensors, views, broadcasting, matmul and errors.
    Tour(tour::TourArgs),
    /// Kernels: list, print the IR, check a launch, simulate, explain a rule.
    Kernel(kernel::KernelArgs),
    /// The exercise ladder: your progress, check a rung, hints, watch, reset, verify.
    Ladder(ladder::LadderArgs),
    /// What this machine can run: host, toolchain, backends, ladder tiers.
    Doctor(doctor::FullDoctorArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Train(args) => train::run(args),
        Command::Sample(args) => train::sample::run(args),
        Command::Eval(args) => train::eval::run(args),
        Command::Export(args) => train::export::run(args),
        Command::Tour(args) => tour::run(args),
        Command::Conformance(args) => conformance::run(args),
        Command::Kernel(args) => kernel::run(args),
        Command::Ladder(args) => ladder::run(args, "oxmera"),
        Command::Doctor(args) => doctor::run(args),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own consistency checks (unique argument and group names…),
    /// which otherwise only panic when the offending subcommand is run.
    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
