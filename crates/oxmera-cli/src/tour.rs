//! `oxmera tour`: a printed walk through the tensor API.

use std::process::ExitCode;

/// Arguments of `oxmera tour`.
#[derive(Debug, clap::Args)]
pub struct TourArgs {}

/// Runs the tour.
pub fn run(_args: TourArgs) -> ExitCode {
    println!("oxmera {}", env!("CARGO_PKG_VERSION"));
    ExitCode::SUCCESS
}
