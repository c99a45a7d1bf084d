//! What a spec run reported: which tests passed, which failed and why, or
//! the compiler's errors when the build itself failed.
//!
//! # Results without reading libtest's report
//!
//! libtest's report (`test x ... ok`, `---- x stdout ----`, `test result:
//! …`) is text for people. It has changed before and will again (Rust 1.73
//! moved the panic message below its location, later releases added thread
//! ids), and its machine-readable form, `--format json`, needs a nightly
//! toolchain, which oxmera does not use. So the ladder never reads it. A
//! spec run (see `runner.rs`) has three steps, each through an interface
//! made for programs:
//!
//! 1. **Build** with `cargo test --no-run --message-format json`. Cargo's
//!    JSON messages are documented and versioned. They name each test
//!    executable (a `compiler-artifact` whose profile is `test`) and carry
//!    the compiler's diagnostics already rendered (`compiler-message`), so
//!    an error is told from a warning or a progress line by its `level`
//!    field, not by how a line starts ([`CargoBuild`]).
//! 2. **List** each executable's tests with `--list --format terse`: one
//!    `NAME: test` per line, the stable listing that cargo-nextest and
//!    editors rely on ([`parse_test_list`]). Ignored tests
//!    (`--list --ignored`) are left out, as `cargo test` leaves them out.
//!    The list is then checked by a round trip: listing again with every
//!    name as an `--exact` filter must give back exactly those names. A
//!    name misread after a format change would select no test, and a run
//!    of no test exits 0; the round trip turns that into a failure, so a
//!    test that never ran can never count as passed.
//! 3. **Run** each test in a process of its own (`NAME --exact
//!    --nocapture`). Its **exit status** is the verdict: 0 passed,
//!    [`NEEDS_HARDWARE_EXIT_CODE`] (77) skipped for want of hardware,
//!    anything else (a panic's 101, an abort's signal) failed. A crash
//!    such as a stack overflow takes down that one test, not the results
//!    of the whole binary.
//!
//! # Needs hardware: skipped, never passed
//!
//! A spec of a rung that needs a GPU (tier C: a wgpu adapter; tier D: a
//! CUDA driver) probes for it first. Where there is none, the test prints
//! one line saying what is missing to stderr and exits with
//! [`NEEDS_HARDWARE_EXIT_CODE`], 77 — the code automake's test harness
//! reads as "skipped", distinct from libtest's 0 and a panic's 101. Such
//! a test is neither passed nor failed: it is recorded in
//! [`TestLog::skipped`] with that line, a run with any skipped test is
//! never green, and `oxmera ladder verify` counts the rung as skipped.
//! (Under a plain `cargo test`, the first such test ends the whole test
//! binary with status 77: cargo says "exit status: 77".)
//!
//! The only text read is what a failing test wrote to stderr. With
//! `--nocapture` that is the test's own output and std's panic messages,
//! never libtest's. From it come the failure's message (for a property
//! test, proptest's final `Test failed: …` with the minimal input) and,
//! when std's `thread '…' panicked at FILE:LINE:COL:` header is recognised,
//! the location ([`failure_from_stderr`]). Were that header to change, the
//! location would go missing and the message would keep the header line;
//! no verdict can change.
//!
//! Specs need none of this: they are plain `#[test]`s and `proptest!`s, and
//! `cargo test` in a rung reads as it always did.

use std::path::PathBuf;
use std::process::ExitStatus;

use serde::Deserialize;

/// One failing test, made readable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The test's name: in a spec, the law or case it checks.
    pub test: String,
    /// Where it first panicked (`a1-shape-strides/src/lib.rs:12:5`, relative
    /// to the rung's workspace), when std's panic message said.
    pub location: Option<String>,
    /// The panic message, with proptest's counters and std's backtrace note
    /// removed; for a property, proptest's `Test failed: …` reason (the
    /// minimal input is in [`Failure::input`]).
    pub message: String,
    /// For a property test, the minimal failing input proptest shrank to,
    /// on one line (`dims = [2, 3], split = 1`): proptest prints it
    /// pretty, one value a line, which a short terminal would cut.
    pub input: Option<String>,
}

impl Failure {
    /// Whether the test stopped at a `todo!()` in the learner's code.
    pub fn hit_todo(&self) -> bool {
        self.message.contains("not yet implemented")
    }
}

/// The exit status with which a spec's test says "this machine lacks the
/// hardware I need" (no wgpu adapter, no CUDA driver): 77, the code
/// automake's test harness reads as "skipped". The ladder records such a
/// test as skipped, never as passed (see the module's documentation).
pub const NEEDS_HARDWARE_EXIT_CODE: i32 = 77;

/// A test that exited with [`NEEDS_HARDWARE_EXIT_CODE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The test's name.
    pub test: String,
    /// What it said is missing: the last line it wrote to stderr, without
    /// a leading `needs hardware: ` (the ladder says that itself).
    pub reason: String,
}

/// What a spec's tests reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestLog {
    /// Names of the tests that passed, sorted.
    pub passed: Vec<String>,
    /// The tests that failed, sorted by name.
    pub failed: Vec<Failure>,
    /// The tests that could not run for want of hardware, sorted by name:
    /// neither passed nor failed.
    pub skipped: Vec<Skipped>,
    /// Whether any test binary listed its tests.
    pub ran: bool,
}

impl TestLog {
    /// Every test passed (and there was at least one): none failed, and
    /// none was skipped for want of hardware.
    pub fn is_green(&self) -> bool {
        self.ran && self.failed.is_empty() && self.skipped.is_empty() && !self.passed.is_empty()
    }

    /// Sorts the lists by name: tests finish in whatever order their
    /// processes do, and two runs of the same code should read the same.
    pub fn sort(&mut self) {
        self.passed.sort();
        self.failed.sort_by(|a, b| a.test.cmp(&b.test));
        self.skipped.sort_by(|a, b| a.test.cmp(&b.test));
    }
}

/// The record of a test that exited with [`NEEDS_HARDWARE_EXIT_CODE`]
/// after writing `stderr`: its last non-empty line is what is missing.
pub fn skipped_from_stderr(test: &str, stderr: &str) -> Skipped {
    let reason = stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.strip_prefix("needs hardware: ").unwrap_or(l))
        .unwrap_or("the test said nothing more")
        .to_string();
    Skipped {
        test: test.to_string(),
        reason,
    }
}

/// How a spec run ended, before it is judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecRun {
    /// The spec or the code under it did not build.
    BuildFailed {
        /// The compiler's errors (or cargo's, when it failed before
        /// compiling anything).
        errors: String,
    },
    /// It built, and its tests ran.
    Ran(TestLog),
}

/// One test executable cargo built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestBinary {
    /// The executable.
    pub executable: PathBuf,
    /// The folder of its package's manifest: `cargo test` runs tests
    /// there, so the ladder does too.
    pub package_dir: Option<PathBuf>,
}

/// What `cargo … --message-format json` reported about a build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CargoBuild {
    /// The integration-test executables, in build order.
    pub tests: Vec<TestBinary>,
    /// Each error diagnostic, rendered as the compiler prints it.
    pub errors: Vec<String>,
    /// Cargo's final word (`build-finished`), when it got that far.
    pub success: Option<bool>,
}

/// The few fields of cargo's JSON messages that the ladder reads. Unknown
/// fields and messages are ignored, as cargo's documentation asks of
/// readers so that new ones can be added.
#[derive(Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
enum CargoMessage {
    CompilerArtifact {
        target: Target,
        profile: Profile,
        executable: Option<PathBuf>,
        manifest_path: Option<PathBuf>,
    },
    CompilerMessage {
        message: Diagnostic,
    },
    BuildFinished {
        success: bool,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct Target {
    kind: Vec<String>,
}

#[derive(Deserialize)]
struct Profile {
    test: bool,
}

#[derive(Deserialize)]
struct Diagnostic {
    level: String,
    rendered: Option<String>,
}

impl CargoBuild {
    /// Reads cargo's stdout under `--message-format json` (one JSON object
    /// a line; a line that is not one is skipped).
    pub fn parse(stdout: &str) -> CargoBuild {
        let mut build = CargoBuild::default();
        for line in stdout.lines() {
            let Ok(message) = serde_json::from_str::<CargoMessage>(line) else {
                continue;
            };
            match message {
                CargoMessage::CompilerArtifact {
                    target,
                    profile,
                    executable: Some(executable),
                    manifest_path,
                } if profile.test && target.kind.iter().any(|k| k == "test") => {
                    build.tests.push(TestBinary {
                        executable,
                        package_dir: manifest_path.and_then(|p| p.parent().map(PathBuf::from)),
                    });
                }
                // "error", and "error: internal compiler error".
                CargoMessage::CompilerMessage { message } if message.level.starts_with("error") => {
                    if let Some(text) = message.rendered {
                        build.errors.push(text.trim_end().to_string());
                    }
                }
                CargoMessage::BuildFinished { success } => build.success = Some(success),
                _ => {}
            }
        }
        build
    }

    /// The errors to show for a failed build: the compiler's, or when
    /// there are none (a broken manifest, a dependency that cannot be
    /// resolved) cargo's own stderr from its first `error` line on.
    pub fn error_text(&self, stderr: &str) -> String {
        if !self.errors.is_empty() {
            return self.errors.join("\n\n");
        }
        let lines: Vec<&str> = stderr.lines().collect();
        let start = lines
            .iter()
            .position(|l| l.starts_with("error"))
            .unwrap_or(0);
        lines[start..].join("\n").trim().to_string()
    }
}

/// Reads a test executable's `--list --format terse`: one `NAME: test` (or
/// `NAME: bench`) a line, nothing else. Returns the test names, or the first
/// line that is not in that form, so that a change of format stops the run
/// instead of being guessed at.
pub fn parse_test_list(stdout: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(name) = line.strip_suffix(": test") {
            names.push(name.to_string());
        } else if line.strip_suffix(": bench").is_none() {
            return Err(line.to_string());
        }
    }
    Ok(names)
}

/// The failure record of `test`, which ran in a process of its own, ended
/// with `status` and wrote `stderr`.
pub fn failure_from_stderr(test: &str, status: ExitStatus, stderr: &str) -> Failure {
    let (location, message, input) = tidy(stderr);
    // No panic, or nothing said: the process died (a stack overflow, an
    // abort) or exited on its own. Say so, with the last lines it wrote.
    let message = if location.is_none() && (status.code().is_none() || message.is_empty()) {
        let lines: Vec<&str> = message.lines().collect();
        let tail = lines[lines.len().saturating_sub(6)..].join("\n");
        format!("the test stopped without a panic ({status})\n{tail}")
            .trim_end()
            .to_string()
    } else {
        message
    };
    Failure {
        test: test.to_string(),
        location,
        message,
        input,
    }
}

/// Splits a failing test's stderr into its first panic's location, a
/// message without noise, and a property's minimal input on one line.
fn tidy(stderr: &str) -> (Option<String>, String, Option<String>) {
    let mut location = None;
    let mut kept = Vec::new();
    for line in stderr.lines() {
        if let Some(at) = panic_location(line) {
            // A property test panics once per shrinking step; the first
            // panic is where the learner's code stopped.
            location.get_or_insert(at);
            continue;
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
    // A property test's final "Test failed: …" says it all, with the
    // minimal input: start there.
    if let Some(start) = kept.iter().rposition(|l| l.starts_with("Test failed: ")) {
        kept.drain(..start);
    }
    // What follows proptest's "minimal failing input: " is the input,
    // pretty-printed over as many lines as it has values.
    let mut input = None;
    if let Some(start) = kept.iter().rposition(|l| l.starts_with(MINIMAL_INPUT)) {
        let pretty: Vec<&str> = kept.drain(start..).collect();
        let first = &pretty[0][MINIMAL_INPUT.len()..];
        let rest = pretty[1..].iter().copied();
        input = Some(one_line(std::iter::once(first).chain(rest)));
    }
    while kept.first().is_some_and(|l| l.is_empty()) {
        kept.remove(0);
    }
    while kept.last().is_some_and(|l| l.is_empty()) {
        kept.pop();
    }
    (location, kept.join("\n"), input)
}

/// How proptest introduces the input it shrank to.
const MINIMAL_INPUT: &str = "minimal failing input: ";

/// Joins the lines of a pretty-printed (`{:#?}`) value into the compact
/// form `{:?}` would have given: `(\n    [\n        1,\n    ],\n)` becomes
/// `([1])`, and `S {\n    a: 1,\n}` becomes `S { a: 1 }`. Debug output escapes newlines inside strings, so every line
/// break in it is layout.
pub fn one_line<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for piece in lines.into_iter().map(str::trim).filter(|l| !l.is_empty()) {
        let closes = piece.starts_with([']', ')', '}']);
        if closes && out.ends_with(',') {
            // A pretty trailing comma before a closing bracket.
            out.pop();
        }
        // `{:?}` pads braces (`S { a: 1 }`) but not brackets or parens.
        let tight = (closes && !piece.starts_with('}')) || out.ends_with(['[', '(']);
        if !out.is_empty() && !tight {
            out.push(' ');
        }
        out.push_str(piece);
    }
    out
}

/// The location in std's panic header, `thread 'NAME' panicked at
/// FILE:LINE:COL:` (newer toolchains put the thread id after the name).
fn panic_location(line: &str) -> Option<String> {
    let rest = line.strip_prefix("thread '")?;
    let (_, at) = rest.split_once(" panicked at ")?;
    Some(at.trim_end().trim_end_matches(':').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn exit(code: i32) -> ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        ExitStatus::from_raw(code << 8)
    }

    #[cfg(unix)]
    fn signal(number: i32) -> ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        ExitStatus::from_raw(number)
    }

    /// What `cargo test --no-run --message-format json` printed for a
    /// build with a warning in a dependency, an error, the library and the
    /// spec (trimmed, and with a field and a message cargo may add some day).
    const MESSAGES: &str = r#"{"reason":"compiler-artifact","package_id":"x","manifest_path":"/ex/a1/Cargo.toml","target":{"kind":["lib"],"name":"a1"},"profile":{"test":false},"executable":null,"fresh":true}
{"reason":"build-script-executed","package_id":"y"}
{"reason":"compiler-message","package_id":"x","message":{"level":"warning","rendered":"warning: unused variable: `dims`\n"}}
{"reason":"compiler-message","package_id":"x","message":{"level":"error","rendered":"error[E0308]: mismatched types\n --> src/lib.rs:9:5\n\n","spans":[]}}
{"reason":"compiler-message","package_id":"x","message":{"level":"failure-note","rendered":"For more information about this error, try `rustc --explain E0308`.\n"}}
{"reason":"compiler-artifact","package_id":"x","manifest_path":"/ex/a1/Cargo.toml","target":{"kind":["test"],"name":"spec"},"profile":{"test":true},"executable":"/t/debug/deps/spec-1234","fresh":false,"new-field":[1,2]}
{"reason":"a-message-from-the-future","anything":true}
   Compiling a line that is not JSON
{"reason":"build-finished","success":false}
"#;

    #[test]
    fn reads_cargo_messages_by_their_fields() {
        let build = CargoBuild::parse(MESSAGES);
        assert_eq!(
            build.tests,
            vec![TestBinary {
                executable: PathBuf::from("/t/debug/deps/spec-1234"),
                package_dir: Some(PathBuf::from("/ex/a1")),
            }]
        );
        // The warning and the note are not errors; the error keeps its
        // rendering.
        assert_eq!(
            build.errors,
            vec!["error[E0308]: mismatched types\n --> src/lib.rs:9:5"]
        );
        assert_eq!(build.success, Some(false));
        assert_eq!(
            build.error_text("   Compiling a1\nerror: could not compile `a1`\n"),
            "error[E0308]: mismatched types\n --> src/lib.rs:9:5"
        );
        assert_eq!(CargoBuild::parse(""), CargoBuild::default());
    }

    #[test]
    fn without_compiler_errors_cargo_says_why() {
        let stderr = "    Updating crates.io index\nerror: failed to parse manifest at `/ex/a1/Cargo.toml`\n\nCaused by:\n  bad key\n";
        assert_eq!(
            CargoBuild::default().error_text(stderr),
            "error: failed to parse manifest at `/ex/a1/Cargo.toml`\n\nCaused by:\n  bad key"
        );
        assert_eq!(CargoBuild::default().error_text("  odd\n"), "odd");
    }

    #[test]
    fn reads_the_terse_test_list_and_refuses_any_other() {
        let list = "a_law: test\nmod::a_case: test\n\nspeed: bench\n";
        assert_eq!(
            parse_test_list(list),
            Ok(vec!["a_law".to_string(), "mod::a_case".to_string()])
        );
        assert_eq!(parse_test_list(""), Ok(vec![]));
        // Pretty listing's summary, or any reworded line, is refused rather
        // than read as a name.
        assert_eq!(
            parse_test_list("a_law: test\n\n1 test, 0 benchmarks\n"),
            Err("1 test, 0 benchmarks".to_string())
        );
        assert_eq!(
            parse_test_list("test a_law\n"),
            Err("test a_law".to_string())
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_todo_panic_reads_as_its_message_and_location() {
        let stderr = "\nthread 'strides_of_2x3x4_are_12_4_1' (4242) panicked at a1/src/lib.rs:10:5:\nnot yet implemented: A1: compute row-major strides\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        let f = failure_from_stderr("strides_of_2x3x4_are_12_4_1", exit(101), stderr);
        assert_eq!(f.test, "strides_of_2x3x4_are_12_4_1");
        assert_eq!(f.location.as_deref(), Some("a1/src/lib.rs:10:5"));
        assert_eq!(
            f.message,
            "not yet implemented: A1: compute row-major strides"
        );
        assert!(f.hit_todo());
    }

    #[cfg(unix)]
    #[test]
    fn a_property_reads_as_its_final_verdict_at_its_first_panic() {
        // One panic per shrinking step, then proptest's own.
        let stderr = "
thread 'index_of_stays_in_bounds' panicked at a1/src/lib.rs:39:5:
not yet implemented: A1: index_of([4], 0)
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

thread 'index_of_stays_in_bounds' panicked at a1/src/lib.rs:39:5:
not yet implemented: A1: index_of([], 0)

thread 'index_of_stays_in_bounds' panicked at a1/tests/spec.rs:103:1:
Test failed: not yet implemented: A1: index_of([], 0).
minimal failing input: dims = []
\tsuccesses: 0
\tlocal rejects: 0
\tglobal rejects: 0

";
        let f = failure_from_stderr("index_of_stays_in_bounds", exit(101), stderr);
        assert_eq!(f.location.as_deref(), Some("a1/src/lib.rs:39:5"));
        assert_eq!(
            f.message,
            "Test failed: not yet implemented: A1: index_of([], 0)."
        );
        assert_eq!(f.input.as_deref(), Some("dims = []"));
        assert!(f.hit_todo());
    }

    #[cfg(unix)]
    #[test]
    fn a_pretty_minimal_input_comes_out_on_one_line() {
        // What A3's property printed: one value a line, 10 lines.
        let stderr = "thread 'p' panicked at a3/src/lib.rs:127:9:
not yet implemented: A3: permute [1] by [0]
thread 'p' panicked at a3/tests/spec.rs:151:1:
Test failed: not yet implemented: A3: permute [1] by [0].
minimal failing input: (dims, perm) = (
    [
        1,
        2,
    ],
    [
        0,
    ],
), split = 0, s = S {
    a: 1,
    b: \"x\\ny\",
}
\tsuccesses: 0
";
        let f = failure_from_stderr("p", exit(101), stderr);
        assert_eq!(
            f.message,
            "Test failed: not yet implemented: A3: permute [1] by [0]."
        );
        assert_eq!(
            f.input.as_deref(),
            Some("(dims, perm) = ([1, 2], [0]), split = 0, s = S { a: 1, b: \"x\\ny\" }")
        );
        // A plain panic has no input.
        let f = failure_from_stderr("q", exit(101), "thread 'q' panicked at x.rs:1:1:\nboom\n");
        assert_eq!((f.message.as_str(), f.input), ("boom", None));
    }

    #[cfg(unix)]
    #[test]
    fn a_crash_or_an_unexplained_exit_says_so() {
        let stderr = "\nthread 'deep' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n";
        let f = failure_from_stderr("deep", signal(6), stderr);
        assert_eq!(f.location, None);
        assert!(
            f.message
                .starts_with("the test stopped without a panic (signal: 6"),
            "{}",
            f.message
        );
        assert!(
            f.message
                .ends_with("fatal runtime error: stack overflow, aborting")
        );
        // A test returning `Err` prints it and exits 101: the message is
        // what it printed.
        let f = failure_from_stderr("returns_err", exit(101), "Error: \"no\"\n");
        assert_eq!(f.message, "Error: \"no\"");
        let f = failure_from_stderr("silent", exit(3), "");
        assert_eq!(
            f.message,
            "the test stopped without a panic (exit status: 3)"
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_unknown_panic_header_loses_the_location_only() {
        // Were std to reword its panic header, the message would still be
        // all there, and the verdict (the exit status) the same.
        let stderr = "test 'x' gave up at a1/src/lib.rs:10:5:\nnot yet implemented: A1\n";
        let f = failure_from_stderr("x", exit(101), stderr);
        assert_eq!(f.location, None);
        assert_eq!(
            f.message,
            "test 'x' gave up at a1/src/lib.rs:10:5:\nnot yet implemented: A1"
        );
        assert!(f.hit_todo());
    }

    #[test]
    fn green_needs_a_listed_test_and_no_failure() {
        let mut log = TestLog {
            passed: vec!["b".into(), "a".into()],
            failed: vec![],
            skipped: vec![],
            ran: true,
        };
        assert!(log.is_green());
        log.sort();
        assert_eq!(log.passed, ["a", "b"]);
        // A test skipped for want of hardware is not a pass.
        let mut skipped = log.clone();
        skipped.skipped.push(skipped_from_stderr(
            "on_gpu",
            "\nneeds hardware: no wgpu adapter\n\n",
        ));
        assert!(!skipped.is_green());
        assert_eq!(skipped.skipped[0].reason, "no wgpu adapter");
        assert!(
            !TestLog {
                ran: true,
                ..TestLog::default()
            }
            .is_green()
        );
        assert!(!TestLog::default().is_green());
    }
}
