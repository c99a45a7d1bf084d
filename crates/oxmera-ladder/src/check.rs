//! Checking a rung: build and run its spec against the learner's code.

use std::path::Path;
use std::process::Output;

use crate::testlog::{Failure, TestLog, compiler_errors};
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
}

impl Outcome {
    /// Reads a finished `cargo test`.
    pub fn from_output(output: &Output) -> Outcome {
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let log = TestLog::parse(&stdout);
        let ran = log.ran || !log.passed.is_empty();
        if !ran && !output.status.success() {
            return Outcome::BuildFailed {
                errors: compiler_errors(&stderr),
            };
        }
        if !output.status.success() && log.failed.is_empty() {
            // Tests ran, none was reported failed, yet cargo failed: a test
            // binary died (a stack overflow, an abort) before libtest could
            // report it. That is red, never green.
            return Outcome::Red {
                passed: log.passed.len(),
                failures: vec![crashed(&stderr)],
            };
        }
        Outcome::from_log(log)
    }

    /// Classifies a parsed test log.
    pub fn from_log(log: TestLog) -> Outcome {
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

/// The failure of a test binary that died without reporting, with the last
/// lines it wrote to stderr (where the runtime says why it stopped).
fn crashed(stderr: &str) -> Failure {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(6)..].join("\n");
    Failure {
        test: "(the test binary crashed)".to_string(),
        location: None,
        message: format!("the spec stopped before reporting every test:\n{tail}"),
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
    let output = cargo.test_spec(&ladder.root().join("Cargo.toml"), &package, &[])?;
    Ok(Outcome::from_output(&output))
}

/// Checks a rung and, when it is green, records it as done.
pub fn check(ladder: &mut Ladder, cargo: &Cargo, id: &str) -> Result<CheckReport> {
    let rung = ladder.manifest.built_rung(id)?.clone();
    let outcome = run_spec(ladder, cargo, &rung)?;
    let mut newly_done = false;
    if matches!(outcome, Outcome::Green { .. }) && ladder.progress.mark_done(&rung.id) {
        ladder.progress.save()?;
        newly_done = true;
    }
    Ok(CheckReport {
        id: rung.id,
        outcome,
        newly_done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_from_logs() {
        let green = TestLog::parse("test a ... ok\ntest b ... ok\ntest result: ok.\n");
        assert_eq!(Outcome::from_log(green), Outcome::Green { tests: 2 });
        let none = TestLog::parse("test result: ok. 0 passed\n");
        assert_eq!(Outcome::from_log(none), Outcome::NoTests);
        let red = TestLog::parse("test a ... ok\ntest b ... FAILED\ntest result: FAILED.\n");
        assert!(matches!(
            Outcome::from_log(red),
            Outcome::Red { passed: 1, ref failures } if failures[0].test == "b"
        ));
    }

    #[cfg(unix)]
    fn output(code: i32, stdout: &str, stderr: &str) -> Output {
        use std::os::unix::process::ExitStatusExt;
        Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_crash_after_some_passes_is_red() {
        // libtest printed two passes, then the process died of a stack
        // overflow: no FAILED line, no result line, a failed exit.
        let out = output(
            101,
            "running 3 tests\ntest a ... ok\ntest b ... ok\n",
            "thread 'c' has overflowed its stack\nfatal runtime error: stack overflow\n",
        );
        match Outcome::from_output(&out) {
            Outcome::Red { passed, failures } => {
                assert_eq!(passed, 2);
                assert!(failures[0].message.contains("stack overflow"));
            }
            other => panic!("a crashed spec must be red, got {other:?}"),
        }
        // The same log with a successful exit is green.
        let ok = output(0, "test a ... ok\ntest b ... ok\ntest result: ok.\n", "");
        assert_eq!(Outcome::from_output(&ok), Outcome::Green { tests: 2 });
        // No test ran and the build failed: a build failure.
        let build = output(101, "", "error[E0425]: cannot find value `x`\n");
        assert!(matches!(
            Outcome::from_output(&build),
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
