//! Reading what `cargo test` printed: which tests passed, which failed
//! and why, or the compiler errors when the build itself failed.

/// One failing test, made readable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The test's name: in a spec, the law or case it checks.
    pub test: String,
    /// Where it panicked (`tests/spec.rs:12:5`), when libtest said.
    pub location: Option<String>,
    /// The panic message, with proptest's counters and libtest's notes
    /// removed; for a property, it includes the minimal failing input.
    pub message: String,
}

impl Failure {
    /// Whether the test stopped at a `todo!()` in the learner's code.
    pub fn hit_todo(&self) -> bool {
        self.message.contains("not yet implemented")
    }
}

/// What a `cargo test` run reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestLog {
    /// Names of the tests that passed.
    pub passed: Vec<String>,
    /// The tests that failed, in the order libtest listed them.
    pub failed: Vec<Failure>,
    /// Whether any test binary reported a result line.
    pub ran: bool,
}

impl TestLog {
    /// Parses libtest's human output (cargo's stdout).
    pub fn parse(stdout: &str) -> TestLog {
        let mut log = TestLog::default();
        let mut failed_names = Vec::new();
        let mut details: Vec<(String, Vec<&str>)> = Vec::new();
        let mut in_detail = false;
        for line in stdout.lines() {
            if let Some(rest) = line.strip_prefix("test ") {
                if let Some((name, result)) = rest.rsplit_once(" ... ") {
                    match result.trim() {
                        "ok" => log.passed.push(name.to_string()),
                        r if r.starts_with("FAILED") => failed_names.push(name.to_string()),
                        _ => {}
                    }
                    in_detail = false;
                    continue;
                }
                if rest.starts_with("result:") {
                    log.ran = true;
                    in_detail = false;
                    continue;
                }
            }
            if let Some(name) = line
                .strip_prefix("---- ")
                .and_then(|l| l.strip_suffix(" stdout ----"))
            {
                details.push((name.to_string(), Vec::new()));
                in_detail = true;
                continue;
            }
            if line == "failures:" {
                in_detail = false;
                continue;
            }
            if in_detail {
                if let Some((_, lines)) = details.last_mut() {
                    lines.push(line);
                }
            }
        }
        // Tests finish in whatever order their threads do; report them in
        // name order so two runs of the same code read the same.
        failed_names.sort();
        log.passed.sort();
        for name in failed_names {
            let lines = details
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, l)| l.as_slice())
                .unwrap_or(&[]);
            let (location, message) = tidy(lines);
            log.failed.push(Failure {
                test: name,
                location,
                message,
            });
        }
        log
    }

    /// Every test passed (and there was at least one).
    pub fn is_green(&self) -> bool {
        self.ran && self.failed.is_empty() && !self.passed.is_empty()
    }
}

/// Splits a failure's captured output into the panic location and a
/// message without noise.
fn tidy(lines: &[&str]) -> (Option<String>, String) {
    let mut location = None;
    let mut kept = Vec::new();
    for line in lines {
        if let Some(rest) = line.strip_prefix("thread '") {
            // thread 'name' panicked at tests/spec.rs:12:5:
            // (newer toolchains add the thread id: 'name' (1234) panicked)
            if let Some((_, at)) = rest.split_once(" panicked at ") {
                let at = at.trim_end_matches(':').to_string();
                if location.is_none() {
                    location = Some(at);
                }
                continue;
            }
        }
        let t = line.trim();
        if t.starts_with("note: run with `RUST_BACKTRACE")
            || t.starts_with("successes:")
            || t.starts_with("local rejects:")
            || t.starts_with("global rejects:")
            || t.starts_with("proptest: Saving this and future failures")
            || t.starts_with("proptest: If this test was run on a CI system")
        {
            continue;
        }
        kept.push(line.trim_end());
    }
    // A property test's panics are printed once per shrinking step; its
    // final "Test failed: …" line says it all, so start there.
    if let Some(start) = kept.iter().position(|l| l.starts_with("Test failed: ")) {
        kept.drain(..start);
    }
    while kept.first().is_some_and(|l| l.is_empty()) {
        kept.remove(0);
    }
    while kept.last().is_some_and(|l| l.is_empty()) {
        kept.pop();
    }
    (location, kept.join("\n"))
}

/// The compiler's errors from cargo's stderr, without cargo's progress
/// lines and without warnings (a skeleton's unused arguments would bury
/// the one error that matters).
pub fn compiler_errors(stderr: &str) -> String {
    const PROGRESS: [&str; 11] = [
        "Compiling",
        "Checking",
        "Finished",
        "Running",
        "Blocking",
        "Downloaded",
        "Downloading",
        "Updating",
        "Locking",
        "Adding",
        "Doc-tests",
    ];
    let mut out = Vec::new();
    let mut in_warning = false;
    for line in stderr.lines() {
        let plain = strip_ansi(line);
        let t = plain.trim_start();
        if PROGRESS.iter().any(|p| t.starts_with(p)) && plain.starts_with(' ') {
            in_warning = false;
            continue;
        }
        if t.starts_with("warning") && !plain.starts_with(' ') {
            in_warning = true;
            continue;
        }
        if t.starts_with("error") && !plain.starts_with(' ') {
            in_warning = false;
        }
        if !in_warning {
            out.push(line);
        }
    }
    out.join("\n").trim().to_string()
}

/// `s` without ANSI colour sequences.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ params final-byte
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RED: &str = "
running 3 tests
test index_of_inverts_offset_of ... ok
test strides_of_2x3x4_are_12_4_1 ... FAILED
test offset_is_a_bijection ... FAILED

failures:

---- strides_of_2x3x4_are_12_4_1 stdout ----

thread 'strides_of_2x3x4_are_12_4_1' panicked at src/lib.rs:10:5:
not yet implemented: A1: compute row-major strides
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

---- offset_is_a_bijection stdout ----
thread 'offset_is_a_bijection' (4242) panicked at tests/spec.rs:40:1:
assertion `left == right` failed
  left: 3
 right: 2

Test failed: assertion `left == right` failed
  left: 3
 right: 2 at tests/spec.rs:44:9.
minimal failing input: dims = [
    2,
]
\tsuccesses: 0
\tlocal rejects: 0
\tglobal rejects: 0


failures:
    offset_is_a_bijection
    strides_of_2x3x4_are_12_4_1

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
";

    #[test]
    fn parses_failures_readably() {
        let log = TestLog::parse(RED);
        assert!(log.ran);
        assert!(!log.is_green());
        assert_eq!(log.passed, vec!["index_of_inverts_offset_of"]);
        assert_eq!(log.failed.len(), 2);
        let todo = &log.failed[1];
        assert_eq!(todo.test, "strides_of_2x3x4_are_12_4_1");
        assert_eq!(todo.location.as_deref(), Some("src/lib.rs:10:5"));
        assert_eq!(
            todo.message,
            "not yet implemented: A1: compute row-major strides"
        );
        assert!(todo.hit_todo());
        let prop = &log.failed[0];
        assert_eq!(prop.location.as_deref(), Some("tests/spec.rs:40:1"));
        assert_eq!(
            prop.message,
            "Test failed: assertion `left == right` failed\n  left: 3\n right: 2 at tests/spec.rs:44:9.\nminimal failing input: dims = [\n    2,\n]"
        );
        assert!(!prop.hit_todo());
    }

    #[test]
    fn green_needs_a_test_and_no_failure() {
        let green = TestLog::parse(
            "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed\n",
        );
        assert!(green.is_green());
        let empty = TestLog::parse("running 0 tests\n\ntest result: ok. 0 passed; 0 failed\n");
        assert!(!empty.is_green());
        assert!(!TestLog::parse("").ran);
    }

    #[test]
    fn keeps_errors_and_drops_warnings_and_progress() {
        let stderr = "   Compiling a1 v0.1.0 (/x)\nwarning: unused variable: `dims`\n --> src/lib.rs:3:5\n  |\n\nerror[E0308]: mismatched types\n --> src/lib.rs:9:5\n  |\n9 |     1\n  |     ^ expected `Vec<usize>`\n\nerror: could not compile `a1`\n";
        assert_eq!(
            compiler_errors(stderr),
            "error[E0308]: mismatched types\n --> src/lib.rs:9:5\n  |\n9 |     1\n  |     ^ expected `Vec<usize>`\n\nerror: could not compile `a1`"
        );
        assert_eq!(
            strip_ansi("\u{1b}[1m\u{1b}[31merror\u{1b}[0m: x"),
            "error: x"
        );
    }
}
