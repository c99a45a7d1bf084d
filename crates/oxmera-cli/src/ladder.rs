//! `oxmera ladder`: the learner's side of the exercise ladder, and the
//! author's check. The work is done by `oxmera-ladder`; this module parses
//! arguments and renders what comes back.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

// Printing through anstream strips colour (cargo's diagnostics included)
// from a stream that takes none (see `style`).
use anstream::{print, println};

use oxmera_ladder::check::{self, CheckReport, Outcome};
use oxmera_ladder::testlog::Failure;
use oxmera_ladder::verify::{self, VerifyOptions};
use oxmera_ladder::watch::RungWatcher;
use oxmera_ladder::{Cargo, Ladder, NextStep, RungState, hints, reset, target_dir_for};

use crate::style::{Paint, pad, wrap};

/// Arguments of `oxmera ladder`.
#[derive(Debug, clap::Args)]
pub struct LadderArgs {
    #[command(subcommand)]
    command: Option<LadderCommand>,
}

#[derive(Debug, clap::Subcommand)]
enum LadderCommand {
    /// Your progress and every rung's status (the default).
    List,
    /// Build and run a rung's spec against your code; green records it done.
    Check {
        /// The rung, e.g. A1.
        id: String,
    },
    /// Reveal the next hint of a rung, one at a time.
    Hint {
        /// The rung, e.g. A1.
        id: String,
    },
    /// Re-check the current rung whenever its files change.
    Watch,
    /// Restore a rung's skeleton (your file is kept in the rung's .backup/).
    Reset {
        /// The rung, e.g. A1.
        id: String,
        /// Do not ask first.
        #[arg(long)]
        yes: bool,
    },
    /// The author's check: every skeleton fails its spec, every solution
    /// passes it, all of them fmt- and clippy-clean.
    Verify {
        /// Skip rustfmt and clippy (faster; CI runs them).
        #[arg(long)]
        no_lint: bool,
    },
}

/// Where the CLI was built from: the fallback when no `exercises/` is
/// found above the current directory.
const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../exercises");

/// Runs `oxmera ladder`.
pub fn run(args: LadderArgs) -> ExitCode {
    let paint = Paint::for_stdout();
    match dispatch(args.command.unwrap_or(LadderCommand::List), paint) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// Opens the ladder of the checkout around the current directory.
pub fn open() -> oxmera_ladder::Result<Ladder> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let exercises = oxmera_ladder::find_exercises(&cwd, Some(Path::new(BUILT_FROM)))?;
    // Canonical, so that paths shown are relative to the real checkout.
    let exercises = exercises.canonicalize().unwrap_or(exercises);
    Ladder::open(&exercises)
}

fn cargo_for(ladder: &Ladder, paint: Paint) -> Cargo {
    Cargo::new(target_dir_for(ladder.root())).with_color(paint.color)
}

fn dispatch(command: LadderCommand, paint: Paint) -> oxmera_ladder::Result<ExitCode> {
    let mut ladder = open()?;
    match command {
        LadderCommand::List => {
            print!("{}", render_list(&ladder, paint));
            Ok(ExitCode::SUCCESS)
        }
        LadderCommand::Check { id } => {
            let rung = ladder.manifest.built_rung(&id)?.clone();
            if ladder.state(&rung.id) == Some(RungState::Locked) {
                println!(
                    "{}",
                    paint.dim(&format!(
                        "{} is locked (an earlier rung is not done); checking it anyway.",
                        rung.id
                    ))
                );
            }
            println!("Checking {} ({})…", rung.id, rung.name);
            let cargo = cargo_for(&ladder, paint);
            let report = check::check(&mut ladder, &cargo, &rung.id)?;
            print!("{}", render_check(&ladder, &report, paint));
            Ok(exit_for(&report.outcome))
        }
        LadderCommand::Hint { id } => {
            let revealed = hints::reveal_next(&mut ladder, &id)?;
            print!("{}", render_hint(&revealed, paint));
            Ok(ExitCode::SUCCESS)
        }
        LadderCommand::Reset { id, yes } => reset_rung(&mut ladder, &id, yes, paint),
        LadderCommand::Watch => watch(&mut ladder, paint),
        LadderCommand::Verify { no_lint } => {
            let cargo = cargo_for(&ladder, paint);
            let built = ladder.manifest.built().count();
            println!(
                "Verifying {built} built rungs (builds in {})…",
                ladder.show(cargo.target_dir()).display()
            );
            let verdicts = verify::verify(&ladder, &cargo, VerifyOptions { lint: !no_lint })?;
            let mut failed = 0;
            if !verify::lock_is_current(&ladder, &cargo)? {
                failed += 1;
                println!(
                    "{} {} is out of date: run `cargo metadata --manifest-path {}` and commit it",
                    paint.red("✗"),
                    ladder.show(&ladder.root().join("Cargo.lock")).display(),
                    ladder.show(&ladder.root().join("Cargo.toml")).display()
                );
            }
            for v in &verdicts {
                if v.ok() {
                    println!(
                        "{} {}  {} tests: the skeleton fails every one, the solution passes every one{}",
                        paint.green("✓"),
                        v.id,
                        v.tests,
                        if no_lint {
                            ""
                        } else {
                            "; fmt and clippy clean"
                        }
                    );
                } else {
                    failed += 1;
                    println!("{} {}", paint.red("✗"), v.id);
                    for p in &v.problems {
                        println!("    {}", p.summary());
                        if let Some(d) = p.details() {
                            for line in d.lines() {
                                println!("      {line}");
                            }
                        }
                    }
                }
            }
            if failed == 0 {
                println!("{}", paint.green("The author's check passes."));
                Ok(ExitCode::SUCCESS)
            } else {
                println!(
                    "{}",
                    paint.red(&format!("{failed} problem(s): the author's check fails."))
                );
                Ok(ExitCode::from(1))
            }
        }
    }
}

fn exit_for(outcome: &Outcome) -> ExitCode {
    match outcome {
        Outcome::Green { .. } => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}

const BAR_WIDTH: usize = 30;

/// The ladder as a list: progress bar, rungs by tier, next step.
pub fn render_list(ladder: &Ladder, paint: Paint) -> String {
    let mut out = String::new();
    let (done, built) = ladder.counts();
    let filled = (done * BAR_WIDTH).checked_div(built).unwrap_or(0);
    let percent = (done * 100).checked_div(built).unwrap_or(0);
    out.push_str(&format!(
        "{}  {done} of {built} built rungs done\n",
        paint.bold("oxmera ladder")
    ));
    out.push_str(&format!(
        "[{}{}] {percent:>3}%\n",
        paint.green(&"█".repeat(filled)),
        paint.dim(&"░".repeat(BAR_WIDTH - filled))
    ));
    let states = ladder.states();
    for tier in &ladder.manifest.tiers {
        out.push('\n');
        out.push_str(&format!(
            "{} {}\n",
            paint.bold(&format!("Tier {}", tier.id)),
            paint.dim(&format!("— {} ({})", tier.name, tier.cost))
        ));
        for (rung, state) in states.iter().filter(|(r, _)| r.tier == tier.id) {
            let (mark, word) = match state {
                RungState::Done => (paint.green("✓"), paint.green("done")),
                RungState::Current => (paint.yellow("▶"), paint.yellow("current")),
                RungState::Locked => ("·".to_string(), paint.dim("locked")),
                RungState::Planned => (paint.dim("○"), paint.dim("planned")),
            };
            out.push_str(&format!(
                "  {mark} {}  {} {word}\n",
                pad(&rung.id, 3),
                pad(&rung.name, 24)
            ));
        }
    }
    out.push('\n');
    match ladder.next_step() {
        NextStep::Climb { id, readme, work } => {
            let rung = ladder
                .manifest
                .rung(&id)
                .expect("the current rung is listed");
            out.push_str(&format!("{} {id} {}\n", paint.bold("Next:"), rung.name));
            for line in wrap(&rung.teaches, 76) {
                out.push_str(&format!("  {}\n", paint.dim(&line)));
            }
            out.push_str(&format!("  1. read  {}\n", readme.display()));
            out.push_str(&format!(
                "  2. edit  {}  (the bodies marked TODO({id}))\n",
                work.display()
            ));
            out.push_str(&format!(
                "  3. run   {}  (or `oxmera ladder watch`)\n",
                paint.cyan(&format!("oxmera ladder check {id}"))
            ));
            out.push_str(&format!(
                "  stuck?   {}\n",
                paint.cyan(&format!("oxmera ladder hint {id}"))
            ));
        }
        NextStep::AllDone => {
            out.push_str(&format!(
                "{} every built rung is done. The planned ones are coming.\n",
                paint.green("Well climbed:")
            ));
        }
    }
    out
}

/// At most this many failures are shown in full.
const SHOWN_FAILURES: usize = 6;

/// The result of a check, for a learner.
pub fn render_check(ladder: &Ladder, report: &CheckReport, paint: Paint) -> String {
    let mut out = String::new();
    let id = &report.id;
    match &report.outcome {
        Outcome::Green { tests } => {
            out.push_str(&format!(
                "{} {id}: all {tests} tests pass.{}\n",
                paint.green("✓"),
                if report.newly_done {
                    " Recorded as done."
                } else {
                    ""
                }
            ));
            match ladder.next_step() {
                NextStep::Climb { id: next, .. } => out.push_str(&format!(
                    "Next: {next}. See it with {}.\n",
                    paint.cyan("oxmera ladder")
                )),
                NextStep::AllDone => out.push_str("Every built rung is done.\n"),
            }
        }
        Outcome::Red { passed, failures } => {
            let total = passed + failures.len();
            out.push_str(&format!(
                "{} {id}: {passed} of {total} tests pass.\n\n",
                paint.red("✗")
            ));
            for f in failures.iter().take(SHOWN_FAILURES) {
                out.push_str(&render_failure(ladder, f, paint));
            }
            if failures.len() > SHOWN_FAILURES {
                let rest: Vec<&str> = failures[SHOWN_FAILURES..]
                    .iter()
                    .map(|f| f.test.as_str())
                    .collect();
                out.push_str(&format!(
                    "  … and {} more: {}\n\n",
                    rest.len(),
                    rest.join(", ")
                ));
            }
            let todo = failures.iter().filter(|f| f.hit_todo()).count();
            if todo > 0 {
                let work = ladder
                    .manifest
                    .rung(id)
                    .map(|r| ladder.show(&ladder.work_file(r)))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "{todo} of them stop at a todo!(): fill in the TODO({id}) bodies in {}.\n",
                    work.display()
                ));
            }
            out.push_str(&format!(
                "Stuck? {}\n",
                paint.cyan(&format!("oxmera ladder hint {id}"))
            ));
        }
        Outcome::BuildFailed { errors } => {
            out.push_str(&format!(
                "{} {id}: your code does not compile yet.\n\n{errors}\n",
                paint.red("✗")
            ));
        }
        Outcome::NoTests => {
            out.push_str(&format!(
                "{} {id}: no tests ran; is the rung's tests/ folder there?\n",
                paint.yellow("?")
            ));
        }
    }
    out
}

fn render_failure(ladder: &Ladder, f: &Failure, paint: Paint) -> String {
    let mut out = format!("  {} {}", paint.red("✗"), paint.bold(&f.test));
    if let Some(at) = &f.location {
        // cargo reports paths inside the exercises workspace; show them
        // from the repository root like every other path.
        let at = if at.starts_with("tests/") || at.starts_with("src/") {
            at.clone()
        } else {
            format!("{}/{at}", ladder.show(ladder.root()).display())
        };
        out.push_str(&paint.dim(&format!("  ({at})")));
    }
    out.push('\n');
    for line in f.message.lines().take(12) {
        out.push_str(&format!("      {line}\n"));
    }
    out.push('\n');
    out
}

fn render_hint(r: &hints::Revealed, paint: Paint) -> String {
    let Some(hint) = &r.hint else {
        return format!("{} has no hints.\n", r.id);
    };
    let mut out = format!(
        "{} {}\n\n{}\n",
        paint.bold(&format!("Hint {} of {} for {}:", r.number, r.total, r.id)),
        hint.title,
        hint.body
    );
    if r.again {
        out.push_str(&paint.dim("\n(That was the last hint; it is shown again.)\n"));
    } else if r.number < r.total {
        out.push_str(&paint.dim(&format!(
            "\n{} more: run `oxmera ladder hint {}` again.\n",
            r.total - r.number,
            r.id
        )));
    }
    out
}

fn reset_rung(
    ladder: &mut Ladder,
    id: &str,
    yes: bool,
    paint: Paint,
) -> oxmera_ladder::Result<ExitCode> {
    let rung = ladder.manifest.built_rung(id)?.clone();
    let work = ladder.show(&ladder.work_file(&rung));
    if !yes {
        print!(
            "Restore the skeleton of {} over {}? Your file is kept in the rung's .backup/ folder. [y/N] ",
            rung.id,
            work.display()
        );
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("Nothing changed.");
            return Ok(ExitCode::SUCCESS);
        }
    }
    let report = reset::reset(ladder, &rung.id)?;
    println!(
        "{} {} is the skeleton again.",
        paint.green("✓"),
        work.display()
    );
    if let Some(backup) = report.backup {
        println!("  your version: {}", ladder.show(&backup).display());
    }
    if report.was_done {
        println!("  {} is no longer marked done.", rung.id);
    }
    Ok(ExitCode::SUCCESS)
}

/// Erase the screen (`ED 2`) and put the cursor at the top left (`CUP`),
/// so each run of `watch` starts at the top. Not a colour, so anstyle has
/// no name for it; it is written only when colour is on (a terminal that
/// takes escape codes), and `anstream` would strip it from any other.
const CLEAR_SCREEN: &str = "\x1b[2J\x1b[H";

fn watch(ladder: &mut Ladder, paint: Paint) -> oxmera_ladder::Result<ExitCode> {
    let cargo = cargo_for(ladder, paint);
    loop {
        let Some(rung) = ladder.current().cloned() else {
            println!(
                "{}",
                paint.green("Every built rung is done; nothing to watch.")
            );
            return Ok(ExitCode::SUCCESS);
        };
        // Watch before checking, so that a save made while the check runs
        // (or right after its result is shown) is not missed.
        let dir = ladder.rung_dir(&rung);
        let watcher = RungWatcher::new(&dir)?;
        if paint.color {
            print!("{CLEAR_SCREEN}");
        }
        println!("Checking {} ({})…", rung.id, rung.name);
        let report = check::check(ladder, &cargo, &rung.id)?;
        print!("{}", render_check(ladder, &report, paint));
        if matches!(report.outcome, Outcome::Green { .. }) {
            // Straight on to the next rung.
            continue;
        }
        println!(
            "\n{}",
            paint.dim(&format!(
                "Watching {} — save a file to re-check; Ctrl-C to stop.",
                ladder.show(&dir).display()
            ))
        );
        watcher.next_change(Duration::from_millis(200))?;
    }
}
