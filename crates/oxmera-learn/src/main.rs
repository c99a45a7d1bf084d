//! `oxmera-learn`: the exercise ladder and the doctor, in a binary that
//! builds in well under a minute (the framework is not compiled; see the
//! crate documentation). Exit codes as `oxmera`'s: 0 success, 1 the command
//! ran and found a problem (a red check), 2 a usage or tool error.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use oxmera_learn::{doctor, ladder};

/// The name this binary is run by, in every command it suggests.
const PROGRAM: &str = "oxmera-learn";

/// oxmera-learn: climb oxmera's exercise ladder, rung by rung, and see what
/// this machine can run. The same `ladder` and `doctor` as the full
/// `oxmera` command, without building the framework first.
#[derive(Debug, Parser)]
#[command(
    name = "oxmera-learn",
    version,
    about,
    long_about = None,
    after_help = "Start with `oxmera-learn ladder`. It finds the ladder in the nearest \
                  `exercises/` at or above the current folder (or OXMERA_EXERCISES=DIR). \
                  Exit codes: 0 success; 1 a check is red; 2 a usage or I/O error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The exercise ladder: your progress, check a rung, hints, watch, reset.
    Ladder(ladder::LadderArgs),
    /// What this machine can run: host, toolchain, backends, ladder tiers.
    Doctor(doctor::DoctorArgs),
}

fn main() -> ExitCode {
    // The ladder's help names the author's command as this binary spells it.
    let command =
        Cli::command().mut_subcommand("ladder", |c| c.after_help(ladder::authors_note(PROGRAM)));
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Ladder(args) => ladder::run(args, PROGRAM),
        Command::Doctor(args) => doctor::run(&args, PROGRAM),
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
