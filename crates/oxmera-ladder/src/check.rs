//! Checking a rung: build and run its spec against the learner's code.

use std::path::Path;

use crate::testlog::{Failure, Skipped, SpecRun, TestLog};
use crate::{Cargo, Error, Ladder, Result, Rung};

/// How a spec run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every test passed.
    Green {
        /// How many tests ran.
        tests: usize,
    },
    /// Some tests failed.
    Red {
        /// How many passed.
        passed: usize,
        /// The failures, readable.
        failures: Vec<Failure>,
    },
    /// The code did not compile; the compiler's errors.
    BuildFailed {
        /// The errors, without warnings or cargo's progress lines.
        errors: String,
    },
    /// It built, but no test ran: the spec is missing.
    NoTests,
    /// No test failed, but some could not run on this machine: they need
    /// hardware it lacks (a wgpu adapter, a CUDA driver) and exited with
    /// [`crate::testlog::NEEDS_HARDWARE_EXIT_CODE`]. Not green: the rung
    /// is neither marked done nor taken back.
    NeedsHardware {
        /// How many tests passed.
        passed: usize,
        /// The tests skipped, each with what it said is missing.
        skipped: Vec<Skipped>,
    },
}

impl Outcome {
    /// Judges a finished spec run.
    pub fn from_run(run: SpecRun) -> Outcome {
        match run {
            SpecRun::BuildFailed { errors } => Outcome::BuildFailed { errors },
            SpecRun::Ran(log) => Outcome::from_log(log),
        }
    }

    /// Classifies the tests' results.
    pub fn from_log(log: TestLog) -> Outcome {
        // A failure outranks a skip: it is wrong wherever it runs.
        if log.failed.is_empty() && !log.skipped.is_empty() {
            return Outcome::NeedsHardware {
                passed: log.passed.len(),
                skipped: log.skipped,
            };
        }
        if log.is_green() {
            Outcome::Green {
                tests: log.passed.len(),
            }
        } else if log.failed.is_empty() {
            Outcome::NoTests
        } else {
            Outcome::Red {
                passed: log.passed.len(),
                failures: log.failed,
            }
        }
    }
}

/// The result of `oxmera ladder check ID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// The rung's id.
    pub id: String,
    /// How the spec run ended.
    pub outcome: Outcome,
    /// Whether this run finished the rung for the first time.
    pub newly_done: bool,
    /// Whether this run took a done rung back to not done: it was green
    /// once, and is red (or does not compile) now.
    pub unmarked: bool,
}

/// The cargo package name of the crate in `dir`.
pub fn package_name(dir: &Path) -> Result<String> {
    let path = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| Error::Parse {
        path: path.clone(),
        message: e.to_string(),
    })?;
    table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_string)
        .ok_or_else(|| Error::Parse {
            path,
            message: "no [package] name".into(),
        })
}

/// Runs the spec of `rung` against the learner's `src/lib.rs`, in place.
pub fn run_spec(ladder: &Ladder, cargo: &Cargo, rung: &Rung) -> Result<Outcome> {
    let package = package_name(&ladder.rung_dir(rung))?;
    let run = cargo.test_spec(&ladder.root().join("Cargo.toml"), &package, &[])?;
    Ok(Outcome::from_run(run))
}

/// Checks a rung and records the verdict: green marks it done, red (or a
/// build that fails) marks a done rung not done again, so the list never
/// shows as done what no longer passes.
pub fn check(ladder: &mut Ladder, cargo: &Cargo, id: &str) -> Result<CheckReport> {
    let rung = ladder.manifest.built_rung(id)?.clone();
    let outcome = run_spec(ladder, cargo, &rung)?;
    // Saved on top of what another terminal saved while the spec ran.
    ladder.progress.reload()?;
    let (mut newly_done, mut unmarked) = (false, false);
    match outcome {
        Outcome::Green { .. } => newly_done = ladder.progress.mark_done(&rung.id),
        Outcome::Red { .. } | Outcome::BuildFailed { .. } => {
            unmarked = ladder.progress.unmark_done(&rung.id)
        }
        // Nothing is known about the code the skipped tests check.
        Outcome::NoTests | Outcome::NeedsHardware { .. } => {}
    }
    if newly_done || unmarked {
        ladder.progress.save()?;
    }
    Ok(CheckReport {
        id: rung.id,
        outcome,
        newly_done,
        unmarked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(passed: &[&str], failed: &[&str]) -> TestLog {
        TestLog {
            passed: passed.iter().map(|s| s.to_string()).collect(),
            failed: failed
                .iter()
                .map(|s| Failure {
                    test: s.to_string(),
                    location: None,
                    message: "boom".into(),
                    input: None,
                })
                .collect(),
            skipped: vec![],
            ran: true,
        }
    }

    #[test]
    fn outcome_from_runs() {
        let green = SpecRun::Ran(log(&["a", "b"], &[]));
        assert_eq!(Outcome::from_run(green), Outcome::Green { tests: 2 });
        let none = SpecRun::Ran(log(&[], &[]));
        assert_eq!(Outcome::from_run(none), Outcome::NoTests);
        let never_listed = SpecRun::Ran(TestLog::default());
        assert_eq!(Outcome::from_run(never_listed), Outcome::NoTests);
        let red = SpecRun::Ran(log(&["a"], &["b"]));
        assert!(matches!(
            Outcome::from_run(red),
            Outcome::Red { passed: 1, ref failures } if failures[0].test == "b"
        ));
        let mut skipped = log(&["a"], &[]);
        skipped.skipped.push(Skipped {
            test: "on_gpu".into(),
            reason: "needs hardware: no wgpu adapter".into(),
        });
        assert!(matches!(
            Outcome::from_run(SpecRun::Ran(skipped.clone())),
            Outcome::NeedsHardware { passed: 1, ref skipped } if skipped[0].test == "on_gpu"
        ));
        // A failure beside a skip is red: it is wrong on any machine.
        skipped.failed = log(&[], &["b"]).failed;
        assert!(matches!(
            Outcome::from_run(SpecRun::Ran(skipped)),
            Outcome::Red { passed: 1, .. }
        ));
        let build = SpecRun::BuildFailed {
            errors: "error[E0425]".into(),
        };
        assert!(matches!(
            Outcome::from_run(build),
            Outcome::BuildFailed { .. }
        ));
    }

    #[test]
    fn reads_package_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"ladder-a1\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        assert_eq!(package_name(dir.path()).unwrap(), "ladder-a1");
    }
}
