//! `ladder`: the learner's side of the exercise ladder, and the author's
//! check, for both front ends (`oxmera-learn ladder` and `oxmera ladder`).
//! The work is done by `oxmera-ladder`; this module parses arguments and
//! renders what comes back. `prog` is the name the front end is run by:
//! every command the output suggests is spelled with it.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// Printing through anstream strips colour (cargo's diagnostics included)
// from a stream that takes none (see `style`).
use anstream::{print, println};

use oxmera_ladder::check::{self, CheckReport, Outcome};
use oxmera_ladder::testlog::Failure;
use oxmera_ladder::verify::{self, VerifyOptions};
use oxmera_ladder::{Ladder, Need, NextStep, RungState, hints, reset};

use crate::style::{Paint, pad, wrap};

mod building;
use building::cargo_for;
pub use building::relay_progress;
mod watching;
use watching::watch;

/// Arguments of `ladder`. The help below the command list names the
/// author's command as `oxmera` spells it; another front end replaces it
/// with [`authors_note`] for its own name.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "For authors: `oxmera ladder verify [--no-lint]` checks that every \
skeleton fails its spec, every solution passes it and every named wrong \
solution fails it (docs/ladder.md, \"The author's check\")."
)]
pub struct LadderArgs {
    #[command(subcommand)]
    command: Option<LadderCommand>,
}

#[derive(Debug, clap::Subcommand)]
enum LadderCommand {
    /// Your progress and every rung's status (the default).
    List,
    /// Build and run a rung's spec against your code; green records it
    /// done, red takes a done rung back.
    Check {
        /// The rung, e.g. A1 (default: the current rung).
        id: Option<String>,
    },
    /// Reveal the next hint of a rung, one at a time, or hint N.
    Hint {
        /// The rung, e.g. A1 (default: the current rung).
        id: Option<String>,
        /// Jump to this hint (from 1) instead of the next one.
        number: Option<usize>,
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
    /// passes it, every named wrong solution fails it, all of them fmt-
    /// and clippy-clean. Hidden from the learner's list (see after_help).
    #[command(hide = true)]
    Verify {
        /// Skip rustfmt and clippy (faster; CI runs them).
        #[arg(long)]
        no_lint: bool,
    },
}

/// The line below the ladder's command list that names the author's
/// command (hidden from the list) for a front end run as `prog`.
pub fn authors_note(prog: &str) -> String {
    format!(
        "For authors: `{prog} ladder verify [--no-lint]` checks that every skeleton fails \
         its spec, every solution passes it and every named wrong solution fails it \
         (docs/ladder.md, \"The author's check\")."
    )
}

/// Where the CLI was built from: the fallback when no `exercises/` is
/// found above the current directory.
const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../exercises");

/// Runs `ladder` for a front end run as `prog` (`oxmera`, `oxmera-learn`).
pub fn run(args: LadderArgs, prog: &str) -> ExitCode {
    let paint = Paint::for_stdout();
    match dispatch(args.command.unwrap_or(LadderCommand::List), paint, prog) {
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
    // What this machine lacks decides which rungs show as "needs hardware".
    Ladder::open(&exercises).map(|l| l.with_lacking(crate::doctor::probe::lacking()))
}

/// What a need is, for the learner.
fn need_words(need: Need) -> &'static str {
    match need {
        Need::Rust => "a Rust toolchain",
        Need::WgpuAdapter => "a wgpu adapter",
        Need::CudaDriver => "a CUDA driver",
    }
}

fn dispatch(command: LadderCommand, paint: Paint, prog: &str) -> oxmera_ladder::Result<ExitCode> {
    let mut ladder = open()?;
    match command {
        LadderCommand::List => {
            print!("{}", render_list(&ladder, paint, prog));
            Ok(ExitCode::SUCCESS)
        }
        LadderCommand::Check { id } => {
            let id = rung_or_current(&ladder, id)?;
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
            let (cargo, progress) = cargo_for(&ladder, paint);
            let report = check::check(&mut ladder, &cargo, &rung.id);
            progress.done();
            let report = report?;
            print!("{}", render_check(&ladder, &report, paint, prog));
            Ok(exit_for(&report.outcome))
        }
        LadderCommand::Hint { id, number } => {
            let id = rung_or_current(&ladder, id)?;
            let revealed = hints::reveal(&mut ladder, &id, number)?;
            print!("{}", render_hint(&revealed, paint, prog));
            Ok(ExitCode::SUCCESS)
        }
        LadderCommand::Reset { id, yes } => reset_rung(&mut ladder, &id, yes, paint),
        LadderCommand::Watch => watch(&mut ladder, paint, prog),
        LadderCommand::Verify { no_lint } => {
            let (cargo, progress) = cargo_for(&ladder, paint);
            let built = ladder.manifest.built().count();
            println!(
                "Verifying {built} built rungs (builds in {})…",
                ladder.show(cargo.target_dir()).display()
            );
            let verdicts = verify::verify(&ladder, &cargo, VerifyOptions { lint: !no_lint });
            progress.done();
            let verdicts = verdicts?;
            let mut failed = 0;
            let lock_is_current = verify::lock_is_current(&ladder, &cargo);
            progress.done();
            if !lock_is_current? {
                failed += 1;
                println!(
                    "{} {} is out of date: run `cargo metadata --manifest-path {}` and commit it",
                    paint.red("✗"),
                    ladder.show(&ladder.root().join("Cargo.lock")).display(),
                    ladder.show(&ladder.root().join("Cargo.toml")).display()
                );
            }
            for v in &verdicts {
                if let (true, Some(reason)) = (v.ok(), &v.needs_hardware) {
                    // Skipped: said as such, never with the passing tick.
                    println!(
                        "{} {}  skipped, not passed: it needs hardware this machine lacks ({}); \
                         the skeleton passes none of its {} tests{}",
                        paint.yellow("–"),
                        v.id,
                        reason,
                        v.tests,
                        if no_lint {
                            ""
                        } else {
                            "; fmt and clippy clean"
                        }
                    );
                } else if v.ok() {
                    println!(
                        "{} {}  {} tests: the skeleton fails every one, the solution passes every one, each of {} wrong solutions fails{}",
                        paint.green("✓"),
                        v.id,
                        v.tests,
                        v.caught.len(),
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
                // Each named wrong solution, and the tests that caught it.
                for c in &v.caught {
                    println!(
                        "    {} wrong/{}.rs fails {} of {}: {}",
                        paint.green("caught"),
                        c.wrong.name,
                        c.failed.len(),
                        c.tests,
                        c.failed.join(", ")
                    );
                    println!("      {}", paint.dim(&c.wrong.misconception));
                }
                for w in &v.unchecked {
                    println!(
                        "    {} wrong/{}.rs: the tests that would catch it need hardware",
                        paint.yellow("unchecked"),
                        w.name
                    );
                }
            }
            let skipped: Vec<&str> = verdicts
                .iter()
                .filter(|v| v.ok() && v.skipped())
                .map(|v| v.id.as_str())
                .collect();
            let passed = verdicts.iter().filter(|v| v.passed()).count();
            println!(
                "{passed} rung(s) passed, {} skipped for want of hardware (counted as skipped, \
                 never as passed){}",
                skipped.len(),
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!(": {}", skipped.join(", "))
                }
            );
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

/// The rung named, or the current one when none is.
fn rung_or_current(ladder: &Ladder, id: Option<String>) -> oxmera_ladder::Result<String> {
    match id {
        Some(id) => Ok(id),
        None => ladder
            .current()
            .map(|r| r.id.clone())
            .ok_or_else(|| ladder.no_current_rung()),
    }
}

fn exit_for(outcome: &Outcome) -> ExitCode {
    match outcome {
        Outcome::Green { .. } => ExitCode::SUCCESS,
        // The specs' own code for it, passed on: skipped, neither 0 nor 1.
        Outcome::NeedsHardware { .. } => {
            ExitCode::from(oxmera_ladder::testlog::NEEDS_HARDWARE_EXIT_CODE as u8)
        }
        _ => ExitCode::from(1),
    }
}

const BAR_WIDTH: usize = 30;

/// The ladder as a list: progress bar, rungs by tier, next step.
pub fn render_list(ladder: &Ladder, paint: Paint, prog: &str) -> String {
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
                RungState::NeedsHardware => {
                    let missing: Vec<&str> = ladder
                        .missing_for(rung)
                        .into_iter()
                        .map(need_words)
                        .collect();
                    (
                        paint.yellow("–"),
                        paint.yellow(&format!("needs hardware ({})", missing.join(", "))),
                    )
                }
            };
            out.push_str(&format!(
                "  {mark} {}  {} {word}\n",
                pad(&rung.id, 3),
                pad(&rung.name, 24)
            ));
        }
    }
    if states.iter().any(|(_, s)| *s == RungState::NeedsHardware) {
        out.push('\n');
        out.push_str(&format!(
            "{}\n",
            paint.dim(&format!(
                "– needs hardware: passed over here; `{prog} doctor` says what is missing"
            ))
        ));
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
                "  3. run   {}  (or `{prog} ladder watch`)\n",
                paint.cyan(&format!("{prog} ladder check {id}"))
            ));
            out.push_str(&format!(
                "  stuck?   {}\n",
                paint.cyan(&format!("{prog} ladder hint {id}"))
            ));
        }
        NextStep::WaitingOnHardware { ids } => {
            out.push_str(&format!(
                "{} every rung this machine can run is done.\n",
                paint.green("Well climbed:")
            ));
            for id in &ids {
                let needs: Vec<&str> = ladder
                    .manifest
                    .rung(id)
                    .map(|r| ladder.missing_for(r).into_iter().map(need_words).collect())
                    .unwrap_or_default();
                out.push_str(&format!("  {id} waits for {}\n", needs.join(", ")));
            }
            out.push_str(&format!(
                "  {} says what is missing; `{prog} ladder check ID` runs a spec anyway.\n",
                paint.cyan(&format!("{prog} doctor"))
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

/// The terminal a red check is laid out for: a classic 80×24. The layout
/// never depends on the real terminal's size, so two runs on the same code
/// print the same bytes wherever they run.
const SCREEN_COLUMNS: usize = 80;
/// See [`SCREEN_COLUMNS`].
const SCREEN_ROWS: usize = 24;
/// Rows left to the lines printed around a check's report: `Checking …`,
/// the note that a rung is locked, and the shell's next prompt.
const ROWS_AROUND: usize = 3;
/// Lines of a failure's message shown before the rest is cut.
const MESSAGE_LINES: usize = 3;
/// Rows one line of a message may take before it is cut.
const LINE_ROWS: usize = 2;

/// The result of a check, for a learner. A red report fits an 80×24
/// terminal with the lines around it: failures are shown, first by name,
/// while they fit, each cut to a few lines with a visible mark; a
/// property's minimal input is never cut away; the rest are named on one
/// line.
pub fn render_check(ladder: &Ladder, report: &CheckReport, paint: Paint, prog: &str) -> String {
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
            // The solutions only call oxmera: point at where it does it.
            let sources: Vec<String> = ladder
                .manifest
                .rung(id)
                .map(|r| r.source.iter().map(|p| p.display().to_string()).collect())
                .unwrap_or_default();
            if !sources.is_empty() {
                out.push_str(&format!(
                    "How oxmera does the same: read {}\n",
                    paint.cyan(&sources.join(", "))
                ));
            }
            match ladder.next_step() {
                NextStep::Climb { id: next, .. } => out.push_str(&format!(
                    "Next: {next}. See it with {}.\n",
                    paint.cyan(&format!("{prog} ladder"))
                )),
                NextStep::WaitingOnHardware { ids } => out.push_str(&format!(
                    "Every rung this machine can run is done; {} wait(s) for hardware ({}).\n",
                    ids.join(", "),
                    paint.cyan(&format!("{prog} doctor"))
                )),
                NextStep::AllDone => out.push_str("Every built rung is done.\n"),
            }
        }
        Outcome::Red { passed, failures } => {
            let total = passed + failures.len();
            let mut header = format!("{} {id}: {passed} of {total} tests pass.\n", paint.red("✗"));
            if report.unmarked {
                header.push_str(&format!("{id} was done; it is no longer marked done.\n"));
            }
            header.push('\n');
            let mut footer = String::new();
            let todo = failures.iter().filter(|f| f.hit_todo()).count();
            if todo > 0 {
                let work = ladder
                    .manifest
                    .rung(id)
                    .map(|r| ladder.show(&ladder.work_file(r)))
                    .unwrap_or_default();
                footer.push_str(&format!(
                    "{todo} stop at a todo!(): fill in the TODO({id}) bodies in {}.\n",
                    work.display()
                ));
            }
            footer.push_str(&format!(
                "Stuck? {}\n",
                paint.cyan(&format!("{prog} ladder hint {id}"))
            ));
            // One row for the line naming the failures not shown.
            let budget = (SCREEN_ROWS - ROWS_AROUND)
                .saturating_sub(rows(&header) + rows(&footer) + 1)
                .max(1);
            let mut body = String::new();
            let mut shown = 0;
            for f in failures {
                let mut block = render_failure(ladder, f, MESSAGE_LINES, paint);
                if shown == 0 && rows(&block) > budget {
                    block = render_failure(ladder, f, 1, paint);
                }
                if shown > 0 && rows(&body) + rows(&block) > budget {
                    break;
                }
                body.push_str(&block);
                shown += 1;
            }
            out.push_str(&header);
            out.push_str(&body);
            if shown < failures.len() {
                let names: Vec<&str> = failures[shown..].iter().map(|f| f.test.as_str()).collect();
                // A visible cut mark, naming what was cut while it fits.
                let line = format!("  [… {} more cut: {}", names.len(), names.join(", "));
                out.push_str(&cut_to_columns(&line, SCREEN_COLUMNS - 1));
                out.push_str("]\n\n");
            }
            out.push_str(&footer);
        }
        Outcome::BuildFailed { errors } => {
            out.push_str(&format!(
                "{} {id}: your code does not compile yet.\n",
                paint.red("✗")
            ));
            if report.unmarked {
                out.push_str(&format!("{id} was done; it is no longer marked done.\n"));
            }
            out.push('\n');
            // The first errors, cut to fit the screen with a mark: the
            // first one is the one to fix.
            let budget = (SCREEN_ROWS - ROWS_AROUND).saturating_sub(rows(&out) + 1);
            let lines: Vec<&str> = errors.lines().collect();
            let mut used = 0;
            let mut shown = 0;
            for line in &lines {
                // An empty line is a row too.
                let r = rows(line).max(1);
                if used + r > budget {
                    break;
                }
                used += r;
                shown += 1;
            }
            for line in &lines[..shown] {
                out.push_str(line);
                out.push('\n');
            }
            if shown < lines.len() {
                out.push_str(&paint.dim(&format!(
                    "[… {} more lines cut: fix the first error, then check again]",
                    lines.len() - shown
                )));
                out.push('\n');
            }
        }
        Outcome::NoTests => {
            out.push_str(&format!(
                "{} {id}: no tests ran; is the rung's tests/ folder there?\n",
                paint.yellow("?")
            ));
        }
        Outcome::NeedsHardware { passed, skipped } => {
            out.push_str(&format!(
                "{} {id}: needs hardware. {} of {} tests could not run on this machine \
                 (skipped, not passed); {passed} pass.\n",
                paint.yellow("–"),
                skipped.len(),
                passed + skipped.len()
            ));
            if let Some(first) = skipped.first() {
                out.push_str(&format!(
                    "  {}\n",
                    paint.dim(&format!("missing: {}", first.reason))
                ));
            }
            out.push_str(&format!(
                "Not recorded as done. `{prog} doctor` says what this machine has.\n"
            ));
        }
    }
    out
}

/// The rows `text` takes on a [`SCREEN_COLUMNS`]-wide terminal, each line
/// wrapped (escape codes take no room).
fn rows(text: &str) -> usize {
    text.lines()
        .map(|l| visible_width(l).div_ceil(SCREEN_COLUMNS).max(1))
        .sum()
}

/// Characters that show, escape sequences (`ESC [ … letter`) left out.
fn visible_width(line: &str) -> usize {
    let mut width = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            width += 1;
        }
    }
    width
}

/// `line` cut to `columns` characters, ending in `…` when it was cut.
/// For plain text only (the lines it is given carry no colour).
fn cut_to_columns(line: &str, columns: usize) -> String {
    if line.chars().count() <= columns {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(columns - 1).collect();
    cut.push('…');
    cut
}

/// One failure: its name (the law), where it stopped, at most `lines`
/// lines of its message with a mark where the rest was cut, and a
/// property's minimal input on one line, which is never cut away.
fn render_failure(ladder: &Ladder, f: &Failure, lines: usize, paint: Paint) -> String {
    let indent = "      ";
    let mut out = format!("  {} {}", paint.red("✗"), paint.bold(&f.test));
    if let Some(at) = &f.location {
        // cargo reports paths inside the exercises workspace; show them
        // from the repository root like every other path.
        let at = if at.starts_with("tests/") || at.starts_with("src/") {
            at.clone()
        } else {
            format!("{}/{at}", ladder.show(ladder.root()).display())
        };
        // On a line of its own: a long test name and path would wrap.
        out.push_str(&format!("\n{indent}{}", paint.dim(&format!("at {at}"))));
    }
    out.push('\n');
    let columns = LINE_ROWS * SCREEN_COLUMNS - indent.len();
    let message: Vec<&str> = f.message.lines().collect();
    for line in message.iter().take(lines) {
        out.push_str(&format!("{indent}{}\n", cut_to_columns(line, columns)));
    }
    if message.len() > lines {
        out.push_str(&format!(
            "{indent}{}\n",
            paint.dim(&format!("[… {} more lines cut]", message.len() - lines))
        ));
    }
    if let Some(input) = &f.input {
        let line = format!("minimal failing input: {input}");
        out.push_str(&format!("{indent}{}\n", cut_to_columns(&line, columns)));
    }
    out.push('\n');
    out
}

fn render_hint(r: &hints::Revealed, paint: Paint, prog: &str) -> String {
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
            "\n{} more: run `{prog} ladder hint {}` again, or `{prog} ladder hint {} N` for hint N.\n",
            r.total - r.number,
            r.id,
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
