//! Running a built spec: each test executable lists its tests, and each
//! test runs in a process of its own, judged by its exit status. Why this
//! and not libtest's report is in [`crate::testlog`]'s documentation.

use std::ffi::OsStr;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::testlog::{
    Failure, NEEDS_HARDWARE_EXIT_CODE, TestBinary, TestLog, failure_from_stderr, parse_test_list,
    skipped_from_stderr,
};
use crate::{Error, Result};

/// Lists and runs every test of `binaries`, several processes at a time.
pub(crate) fn run_tests(binaries: &[TestBinary]) -> Result<TestLog> {
    let mut log = TestLog::default();
    let mut jobs: Vec<(&TestBinary, String)> = Vec::new();
    for binary in binaries {
        match list(binary)? {
            Ok(names) => {
                log.ran = true;
                jobs.extend(names.into_iter().map(|n| (binary, n)));
            }
            Err(failure) => log.failed.push(failure),
        }
    }
    let outputs = in_parallel(&jobs, |(binary, name)| {
        command(binary, [name.as_str(), "--exact", "--nocapture"]).output()
    });
    for ((binary, name), output) in jobs.iter().zip(outputs) {
        let output = output.map_err(|source| spawn_error(binary, source))?;
        if output.status.success() {
            log.passed.push(name.clone());
        } else if output.status.code() == Some(NEEDS_HARDWARE_EXIT_CODE) {
            // Skipped, not passed: the machine lacks what the test needs.
            let stderr = String::from_utf8_lossy(&output.stderr);
            log.skipped.push(skipped_from_stderr(name, &stderr));
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            log.failed
                .push(failure_from_stderr(name, output.status, &stderr));
        }
    }
    log.sort();
    Ok(log)
}

/// The names of the tests `binary` runs by default (its ignored tests left
/// out, as `cargo test` leaves them out), checked by a round trip; or why
/// they cannot be had, as a failure (never a silent empty list).
fn list(binary: &TestBinary) -> Result<std::result::Result<Vec<String>, Failure>> {
    let all = match list_with(binary, &[])? {
        Ok(names) => names,
        Err(failure) => return Ok(Err(failure)),
    };
    let ignored = match list_with(binary, &["--ignored"])? {
        Ok(names) => names,
        Err(failure) => return Ok(Err(failure)),
    };
    let names: Vec<String> = all.into_iter().filter(|n| !ignored.contains(n)).collect();
    if names.is_empty() {
        return Ok(Ok(names));
    }
    // Every name, as an exact filter, must select itself and nothing else:
    // a name misread from the list would select no test, and a run of no
    // test exits 0, which would read as a pass.
    let mut filters: Vec<&str> = names.iter().map(String::as_str).collect();
    filters.push("--exact");
    let selected = match list_with(binary, &filters)? {
        Ok(selected) => selected,
        Err(failure) => return Ok(Err(failure)),
    };
    let (mut want, mut got) = (names.clone(), selected);
    want.sort();
    got.sort();
    if want != got {
        return Ok(Err(Failure {
            test: format!("(the test list of {})", file_name(binary)),
            location: None,
            message: format!(
                "listing the tests again by their exact names gave {got:?}, not {want:?}: \
                 the test list could not be read, so no result of this binary is trusted"
            ),
            input: None,
        }));
    }
    Ok(Ok(names))
}

/// `binary --list --format terse EXTRA…`, read.
fn list_with(
    binary: &TestBinary,
    extra: &[&str],
) -> Result<std::result::Result<Vec<String>, Failure>> {
    let output = command(binary, ["--list", "--format", "terse"].iter().chain(extra))
        .output()
        .map_err(|source| spawn_error(binary, source))?;
    let who = || format!("(the test binary {})", file_name(binary));
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let mut failure = failure_from_stderr(&who(), output.status, &stderr);
        failure.message = format!("it could not list its tests:\n{}", failure.message);
        return Ok(Err(failure));
    }
    Ok(
        parse_test_list(&String::from_utf8_lossy(&output.stdout)).map_err(|line| Failure {
            test: who(),
            location: None,
            message: format!(
                "its test list has a line that is not `NAME: test`: {line:?}; \
                 libtest's list format may have changed"
            ),
            input: None,
        }),
    )
}

/// A command running `binary` the way `cargo test` would: in its package's
/// folder, with the variables a test may read at run time set.
fn command<I, S>(binary: &TestBinary, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(&binary.executable);
    cmd.args(args)
        .stdin(Stdio::null())
        // Keep panic messages to the message itself.
        .env("RUST_BACKTRACE", "0");
    // proptest reads its defaults from `PROPTEST_*` variables (the seed,
    // the case count, verbosity, persistence): a spec's output must not
    // depend on what the learner's shell happens to export.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("PROPTEST_") {
            cmd.env_remove(key);
        }
    }
    if let Some(dir) = &binary.package_dir {
        cmd.current_dir(dir).env("CARGO_MANIFEST_DIR", dir);
    }
    cmd
}

/// Runs `f` on every job, on as many threads as the machine has cores
/// (each job is a process, so the threads only wait), and returns the
/// results in the jobs' order.
fn in_parallel<J: Sync, R: Send>(jobs: &[J], f: impl Fn(&J) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len());
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let r = f(job);
                    *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                }
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every job ran")
        })
        .collect()
}

fn file_name(binary: &TestBinary) -> String {
    binary.executable.file_name().map_or_else(
        || binary.executable.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn spawn_error(binary: &TestBinary, source: std::io::Error) -> Error {
    Error::CargoSpawn {
        program: binary.executable.display().to_string(),
        source,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// A stand-in for a libtest binary, as a shell script: it answers
    /// `--list --format terse` (with `--ignored` and with `--exact` filters)
    /// and runs one test by name. Its tests: `passes`, `fails`, `crashes`
    /// and the ignored `slow`. What it prints to stdout is whatever the
    /// test gives in `human`: libtest's report, reworded or lying.
    fn fake_binary(dir: &Path, list: &str, human: &str) -> TestBinary {
        use std::os::unix::fs::PermissionsExt;
        let script = format!(
            r#"#!/bin/sh
case "$*" in
  *--list*--ignored*) echo "slow: test" ;;
  *--list*--exact*)
    for n in "$@"; do
      case "$n" in passes|fails|crashes|slow|needs_gpu) echo "$n: test" ;; esac
    done ;;
  *--list*) printf '{list}' ;;
  passes*) printf '{human}'; exit 0 ;;
  fails*)
    printf '{human}'
    echo "thread 'fails' (7) panicked at f1/tests/spec.rs:3:5:" >&2
    echo "assertion failed: 2 == 3" >&2
    exit 101 ;;
  needs_gpu*)
    echo "needs hardware: no CUDA driver (libcuda.so.1)" >&2
    exit 77 ;;
  crashes*)
    printf '{human}'
    echo "thread 'crashes' has overflowed its stack" >&2
    kill -ABRT $$ ;;
  *) exit 64 ;;
esac
"#
        );
        let path = dir.join("spec-fake");
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A just-written executable can be briefly "busy" while another
        // test thread forks; wait until it runs.
        for _ in 0..100 {
            match Command::new(&path).arg("--list").output() {
                Err(e) if e.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                _ => break,
            }
        }
        TestBinary {
            executable: path,
            package_dir: Some(dir.to_path_buf()),
        }
    }

    const LIST: &str = "passes: test\\nfails: test\\ncrashes: test\\nslow: test\\n";

    fn run(list: &str, human: &str) -> TestLog {
        let dir = tempfile::tempdir().unwrap();
        let binary = fake_binary(dir.path(), list, human);
        run_tests(&[binary]).unwrap()
    }

    fn names(failures: &[Failure]) -> Vec<&str> {
        failures.iter().map(|f| f.test.as_str()).collect()
    }

    #[test]
    fn the_exit_status_is_the_verdict_whatever_libtest_prints() {
        // libtest's report as it reads today, one reworded, one that
        // contradicts every exit status, and none at all: the same result.
        let reports = [
            "\\nrunning 1 test\\ntest x ... ok\\n\\ntest result: ok. 1 passed; 0 failed\\n",
            "\\nrunning one test\\n[x] PASS\\n\\nsummary: 1 of 1 green\\n",
            "test passes ... FAILED\\ntest fails ... ok\\ntest crashes ... ok\\ntest result: FAILED. 0 passed; 3 failed\\n---- passes stdout ----\\nthread 'passes' panicked at x.rs:1:1:\\nnot yet implemented\\n",
            "",
        ];
        for human in reports {
            let log = run(LIST, human);
            assert!(log.ran);
            // The ignored test is not run, as `cargo test` would not run it.
            assert_eq!(log.passed, ["passes"], "with {human:?}");
            assert_eq!(names(&log.failed), ["crashes", "fails"], "with {human:?}");
            let fails = &log.failed[1];
            assert_eq!(fails.location.as_deref(), Some("f1/tests/spec.rs:3:5"));
            assert_eq!(fails.message, "assertion failed: 2 == 3");
            // A crash takes down its own process only, and says so.
            let crash = &log.failed[0];
            assert!(crash.message.contains("SIGABRT"), "{}", crash.message);
            assert!(crash.message.contains("overflowed its stack"));
        }
    }

    #[test]
    fn exit_77_is_skipped_for_want_of_hardware_never_passed() {
        let log = run("passes: test\\nneeds_gpu: test\\n", "");
        assert_eq!(log.passed, ["passes"]);
        assert!(log.failed.is_empty(), "{log:?}");
        assert_eq!(log.skipped.len(), 1, "{log:?}");
        assert_eq!(log.skipped[0].test, "needs_gpu");
        assert_eq!(log.skipped[0].reason, "no CUDA driver (libcuda.so.1)");
        assert!(!log.is_green());
    }

    #[test]
    fn a_changed_list_format_is_a_failure_never_a_pass() {
        // Names read wrongly (here, a prefix the filter does not take)
        // select no test, and a run of no test exits 0: the round trip
        // catches it.
        let log = run("spec::passes: test\\nspec::fails: test\\n", "");
        assert!(!log.is_green());
        assert!(log.passed.is_empty(), "{log:?}");
        assert_eq!(log.failed.len(), 1, "{log:?}");
        assert!(log.failed[0].message.contains("could not be read"));
        // A line that is not `NAME: test` at all stops the run too.
        let log = run("1 test, 0 benchmarks\\n", "");
        assert!(!log.is_green());
        assert!(log.failed[0].message.contains("list format"), "{log:?}");
    }

    #[test]
    fn an_empty_list_is_no_test() {
        let log = run("", "");
        assert!(log.ran);
        assert!(log.passed.is_empty() && log.failed.is_empty());
        assert!(!log.is_green());
    }

    #[test]
    fn a_binary_that_cannot_run_is_an_error() {
        let missing = TestBinary {
            executable: PathBuf::from("/nonexistent/spec-0"),
            package_dir: None,
        };
        assert!(matches!(
            run_tests(&[missing]),
            Err(Error::CargoSpawn { .. })
        ));
    }
}
