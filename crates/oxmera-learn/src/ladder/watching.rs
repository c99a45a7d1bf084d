//! `ladder watch`: the current rung re-checked whenever its files change,
//! with a few keys read a line at a time.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use anstream::{print, println};

use oxmera_ladder::check::{self, Outcome};
use oxmera_ladder::watch::RungWatcher;
use oxmera_ladder::{Ladder, NextStep, hints};

use super::building::cargo_for;
use super::{render_check, render_hint};
use crate::style::Paint;

/// Erase the screen (`ED 2`) and put the cursor at the top left (`CUP`),
/// so each run of `watch` starts at the top. Not a colour, so anstyle has
/// no name for it; it is written only when colour is on (a terminal that
/// takes escape codes), and `anstream` would strip it from any other.
const CLEAR_SCREEN: &str = "\x1b[2J\x1b[H";

/// What the learner types while `watch` waits, a line at a time: the
/// first letter of each line (`n`, `h`, `q`). A line, not a raw key, so
/// the terminal stays in its normal mode and Ctrl-C leaves it as it was.
/// When stdin ends (a pipe, `/dev/null`) the channel disconnects and
/// `watch` runs on without keys.
fn spawn_keys() -> Receiver<char> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if let Some(c) = line.trim().chars().next() {
                if tx.send(c.to_ascii_lowercase()).is_err() {
                    break;
                }
            }
        }
    });
    rx
}

/// How often `watch` looks for a key between file events.
const KEY_POLL: Duration = Duration::from_millis(100);
/// How long an editor's burst of events for one save may last.
const SETTLE: Duration = Duration::from_millis(200);

pub(super) fn watch(
    ladder: &mut Ladder,
    paint: Paint,
    prog: &str,
) -> oxmera_ladder::Result<ExitCode> {
    let (cargo, progress) = cargo_for(ladder, paint);
    let keys = spawn_keys();
    loop {
        let Some(rung) = ladder.current().cloned() else {
            match ladder.next_step() {
                NextStep::WaitingOnHardware { ids } => println!(
                    "Nothing to watch on this machine: {} need(s) hardware it lacks \
                     (`{prog} doctor` says what).",
                    ids.join(", ")
                ),
                _ => println!(
                    "{}",
                    paint.green("Every built rung is done; nothing to watch.")
                ),
            }
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
        let report = check::check(ladder, &cargo, &rung.id);
        progress.done();
        let report = report?;
        print!("{}", render_check(ladder, &report, paint, prog));
        if matches!(report.outcome, Outcome::Green { .. }) {
            let Some(next) = ladder.current().cloned() else {
                continue;
            };
            // Pause on green, so the result stays on screen until the
            // learner moves on; without a keyboard, straight on.
            println!(
                "\n{}",
                paint.dim(&format!(
                    "n + Enter: on to {} ({}) · q + Enter: quit",
                    next.id, next.name
                ))
            );
            loop {
                match keys.recv() {
                    Ok('q') => return Ok(ExitCode::SUCCESS),
                    Ok('n') | Err(_) => break,
                    Ok(_) => {}
                }
            }
            continue;
        }
        println!(
            "\n{}",
            paint.dim(&format!(
                "Watching {} — save a file to re-check · h + Enter: a hint · q + Enter: quit",
                ladder.show(&dir).display()
            ))
        );
        loop {
            if watcher.poll_change(SETTLE, KEY_POLL)?.is_some() {
                break;
            }
            match keys.try_recv() {
                Ok('q') => return Ok(ExitCode::SUCCESS),
                Ok('h') => {
                    let revealed = hints::reveal(ladder, &rung.id, None)?;
                    print!("\n{}", render_hint(&revealed, paint, prog));
                    let _ = std::io::stdout().flush();
                }
                // Other keys, none yet, or no keyboard: keep watching.
                _ => {}
            }
        }
    }
}
