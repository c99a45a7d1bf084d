//! Showing a rung's build while cargo runs it: the ladder's cargo relays
//! each line cargo writes to stderr here, and the lines that say work is
//! being done reach the learner, so no build is silent.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use oxmera_ladder::{Cargo, Ladder, target_dir_for};

use super::{SCREEN_COLUMNS, cut_to_columns};
use crate::style::Paint;

/// Cargo for this ladder, with its progress shown on stderr by the
/// [`BuildProgress`] returned beside it, so that no build is silent.
pub(super) fn cargo_for(ladder: &Ladder, paint: Paint) -> (Cargo, BuildProgress) {
    let progress = BuildProgress::new();
    let sink = progress.clone();
    let cargo = Cargo::new(target_dir_for(ladder.root()))
        .with_color(paint.color)
        .on_stderr(move |line| sink.show(line));
    (cargo, progress)
}

/// What is said on stderr while cargo builds a rung: cargo's lines that
/// say work is being done ([`relay_progress`]). On a terminal they take
/// one line, each overwriting the last, erased when the build ends
/// ([`BuildProgress::done`]), so the report that follows still fits the
/// screen; into a pipe or a log, each is a line of its own, after a line
/// saying what is going on.
#[derive(Debug, Clone)]
pub(super) struct BuildProgress {
    terminal: bool,
    shown: Arc<AtomicBool>,
}

/// Said before cargo's first line.
const BUILDING: &str =
    "building with cargo (a rung's first build compiles its dependencies: a minute or two)";

impl BuildProgress {
    fn new() -> BuildProgress {
        BuildProgress {
            terminal: std::io::stderr().is_terminal(),
            shown: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Shows one line cargo wrote, if it says work is being done.
    fn show(&self, line: &str) {
        let Some(line) = relay_progress(line) else {
            return;
        };
        let first = !self.shown.swap(true, Ordering::Relaxed);
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let status = format!("{BUILDING}: {}", line.trim());
            let _ = write!(
                err,
                "\r{ERASE_LINE}{}",
                cut_to_columns(&status, SCREEN_COLUMNS - 1)
            );
        } else {
            if first {
                let _ = writeln!(err, "{BUILDING}…");
            }
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// Erases the progress line from a terminal once the build is over.
    pub(super) fn done(&self) {
        if self.shown.swap(false, Ordering::Relaxed) && self.terminal {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{ERASE_LINE}");
            let _ = err.flush();
        }
    }
}

/// Erase the whole line the cursor is on (`EL 2`); with `\r`, the
/// progress line starts afresh. Not a colour, so anstyle has no name for it.
const ERASE_LINE: &str = "\x1b[2K";

/// Cargo's status lines that say work is being done (`Compiling`,
/// `Downloading`, `Blocking waiting for file lock`…), the ones relayed
/// while a rung builds; `Finished`, `Executable`, `Running` and the rest
/// say nothing a learner is waiting for and are dropped, so a check of a
/// rung already built prints none.
pub fn relay_progress(line: &str) -> Option<&str> {
    const WORK: [&str; 9] = [
        "Compiling",
        "Checking",
        "Building",
        "Downloading",
        "Downloaded",
        "Updating",
        "Locking",
        "Adding",
        "Blocking",
    ];
    let first = line.split_whitespace().next()?;
    WORK.contains(&first).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::relay_progress;

    #[test]
    fn only_lines_that_say_work_is_being_done_are_relayed() {
        for line in [
            "   Compiling ladder-a1 v0.1.0 (/x/exercises/a1)",
            "  Downloaded proptest v1.5.0",
            "    Blocking waiting for file lock on build directory",
        ] {
            assert_eq!(relay_progress(line), Some(line));
        }
        for line in [
            "    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.1s",
            "  Executable tests/spec.rs (target/debug/deps/spec-1)",
            "",
        ] {
            assert_eq!(relay_progress(line), None);
        }
    }
}
