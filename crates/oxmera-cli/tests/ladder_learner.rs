//! The learner's small conveniences, end to end on the one-rung fixture
//! ladder: `check` and `hint` default to the current rung, `hint ID N`
//! jumps, a green check points at the oxmera source that does the same,
//! and `verify` (the author's command) is not listed among the learner's.

use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::{SKELETON, fixture, write};

const SOLUTION: &str =
    "//! Fixture rung, solved.\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n";

fn oxmera(exercises: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(args)
        .env("OXMERA_EXERCISES", exercises)
        .env("OXMERA_LADDER_PROGRESS", exercises.join(".progress.toml"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn verify_is_not_listed_among_the_learners_commands() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), SKELETON);
    let help = stdout(&oxmera(&ex, &["ladder", "--help"]));
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(
        commands.iter().any(|l| l.trim_start().starts_with("check")),
        "{help}"
    );
    assert!(
        !commands
            .iter()
            .any(|l| l.trim_start().starts_with("verify")),
        "{help}"
    );
    // It is named for authors, below the list.
    assert!(
        help.contains("For authors: `oxmera ladder verify"),
        "{help}"
    );
}

#[test]
fn hint_defaults_to_the_current_rung_and_jumps_to_hint_n() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), SKELETON);
    write(
        &ex.join("f1/hints.md"),
        "## First\nMultiply.\n\n## Second\nBy two.\n\n## Third\nx * 2.\n",
    );
    let first = oxmera(&ex, &["ladder", "hint"]);
    assert!(first.status.success());
    assert!(
        stdout(&first).starts_with("Hint 1 of 3 for F1: First"),
        "{}",
        stdout(&first)
    );
    let third = stdout(&oxmera(&ex, &["ladder", "hint", "F1", "3"]));
    assert!(third.starts_with("Hint 3 of 3 for F1: Third"), "{third}");
    let none = oxmera(&ex, &["ladder", "hint", "F1", "4"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("F1 has 3 hint(s); there is no hint 4"),
        "{none:?}"
    );
}

#[test]
fn check_defaults_to_the_current_rung_and_a_green_points_at_the_source() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), SOLUTION);
    let manifest = std::fs::read_to_string(ex.join("manifest.toml")).unwrap();
    write(
        &ex.join("manifest.toml"),
        &manifest.replace(
            "path = \"f1\"\n",
            "path = \"f1\"\nsource = [\"src/double.rs\"]\n",
        ),
    );
    let green = oxmera(&ex, &["ladder", "check"]);
    let text = stdout(&green);
    assert!(green.status.success(), "{text}");
    assert!(
        text.contains("✓ F1: all 1 tests pass. Recorded as done."),
        "{text}"
    );
    assert!(
        text.contains("How oxmera does the same: read src/double.rs"),
        "{text}"
    );
    // Every rung is done: with no rung named, there is nothing to default to.
    let done = oxmera(&ex, &["ladder", "check"]);
    assert_eq!(done.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&done.stderr).contains("no current rung"),
        "{done:?}"
    );
    // A red check of the done rung takes it back.
    write(
        &ex.join("f1/src/lib.rs"),
        &SOLUTION.replace("x * 2", "x + 1"),
    );
    let red = stdout(&oxmera(&ex, &["ladder", "check", "F1"]));
    assert!(
        red.contains("F1 was done; it is no longer marked done."),
        "{red}"
    );
    let list = stdout(&oxmera(&ex, &["ladder"]));
    assert!(list.contains("0 of 1 built rungs done"), "{list}");
}

#[test]
fn compiler_errors_are_cut_to_the_screen_with_a_mark() {
    // Twenty type errors: far more than 24 rows of rustc's output.
    let broken: String = (0..20)
        .map(|i| format!("/// Broken {i}.\npub fn broken_{i}() -> u32 {{\n    \"{i}\"\n}}\n"))
        .collect();
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), &format!("{SKELETON}{broken}"));
    let out = oxmera(&ex, &["ladder", "check", "F1"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("F1: your code does not compile yet."),
        "{text}"
    );
    assert!(text.contains("error[E0308]"), "{text}");
    assert!(
        text.contains("more lines cut: fix the first error"),
        "{text}"
    );
    // With `Checking F1…` and the prompt, it fits 24 rows of 80 columns.
    let rows: usize = text
        .lines()
        .map(|l| l.chars().count().div_ceil(80).max(1))
        .sum();
    assert!(rows < 24, "{rows} rows:\n{text}");
}
