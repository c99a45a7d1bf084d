//! `oxmera ladder watch` end to end, in a PTY, on fixture ladders: it
//! checks the current rung, waits for a save, re-checks, and stops once
//! every rung is green; it pauses on a green until `n`, shows a hint on
//! `h`, quits on `q`, and keeps progress saved from another terminal.
//! Every wait is bounded by a deadline.

use std::time::Duration;

use termlens::Terminal;

mod support;
use support::{SKELETON, TOOLCHAIN, fixture, write};

const SOLUTION: &str =
    "//! Fixture rung, solved.\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n";

#[test]
fn watch_rechecks_on_save_and_stops_when_all_is_green() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), SKELETON);

    let mut builder = Terminal::builder()
        .size(100, 40)
        .env_clear()
        .env("OXMERA_EXERCISES", &ex)
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(120))
        .args(["ladder", "watch"]);
    // The watcher runs cargo: give it the toolchain this test runs under.
    for var in TOOLCHAIN {
        if let Some(v) = std::env::var_os(var) {
            builder = builder.env(var, v);
        }
    }
    let mut t = builder.spawn(env!("CARGO_BIN_EXE_oxmera")).unwrap();
    t.wait_until(|s| s.contains("Watching exercises/f1"))
        .unwrap();
    assert!(t.screen().contains("0 of 1 tests pass"));

    write(&ex.join("f1/src/lib.rs"), SOLUTION);
    t.wait_until(|s| s.contains("all 1 tests pass")).unwrap();
    t.wait_until(|s| s.contains("nothing to watch")).unwrap();
    assert!(t.wait_exit().unwrap().success());
    let progress = std::fs::read_to_string(ex.join(".progress.toml")).unwrap();
    assert!(progress.contains("\"F1\""), "{progress}");
}

/// A second rung, F2, beside the fixture's F1 (the same crate renamed),
/// and hints for F1.
fn add_second_rung(ex: &std::path::Path) {
    write(
        &ex.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"f1\", \"f2\"]\n",
    );
    let manifest = std::fs::read_to_string(ex.join("manifest.toml")).unwrap();
    write(
        &ex.join("manifest.toml"),
        &format!(
            "{manifest}\n[[rung]]\nid = \"F2\"\nname = \"double again\"\ntier = \"F\"\nstatus = \"built\"\nteaches = \"doubling\"\ncost = \"$0\"\npath = \"f2\"\n"
        ),
    );
    write(
        &ex.join("f2/Cargo.toml"),
        "[package]\nname = \"ladder-f2\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[lib]\nname = \"f2\"\n",
    );
    write(&ex.join("f2/src/lib.rs"), SKELETON);
    write(
        &ex.join("f2/tests/spec.rs"),
        "#[test]\nfn two_doubled_is_four() {\n    assert_eq!(f2::double(2), 4);\n}\n",
    );
    write(
        &ex.join("f1/hints.md"),
        "## First\nMultiply.\n\n## Second\nBy two.\n",
    );
}

#[test]
fn watch_pauses_on_green_takes_keys_and_keeps_progress_from_another_terminal() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), SKELETON);
    add_second_rung(&ex);
    let progress = ex.join(".progress.toml");

    let mut builder = Terminal::builder()
        .size(100, 40)
        .env_clear()
        .env("OXMERA_EXERCISES", &ex)
        .env("OXMERA_LADDER_PROGRESS", &progress)
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(120))
        .args(["ladder", "watch"]);
    for var in TOOLCHAIN {
        if let Some(v) = std::env::var_os(var) {
            builder = builder.env(var, v);
        }
    }
    let mut t = builder.spawn(env!("CARGO_BIN_EXE_oxmera")).unwrap();
    t.wait_until(|s| s.contains("Watching exercises/f1"))
        .unwrap();

    // h: the first hint, while watching.
    t.send_str("h\n").unwrap();
    t.wait_until(|s| s.contains("Hint 1 of 2 for F1: First"))
        .unwrap();
    // Another terminal asks for the next hint meanwhile.
    let other = std::process::Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(["ladder", "hint", "F1"])
        .env("OXMERA_EXERCISES", &ex)
        .env("OXMERA_LADDER_PROGRESS", &progress)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&other.stdout).contains("Hint 2 of 2"));

    // Green: the result stays, with the keys to move on.
    write(&ex.join("f1/src/lib.rs"), SOLUTION);
    t.wait_until(|s| s.contains("n + Enter: on to F2 (double again)"))
        .unwrap();
    let screen = t.screen().text();
    assert!(
        screen.contains("✓ F1: all 1 tests pass. Recorded as done."),
        "{screen}"
    );
    assert!(!screen.contains("Checking F2"), "{screen}");
    // Saved on green on top of the other terminal's hint, not over it.
    let saved = std::fs::read_to_string(&progress).unwrap();
    assert!(saved.contains("\"F1\""), "{saved}");
    assert!(saved.contains("F1 = 2"), "{saved}");

    // n: on to F2; q: quit, with success.
    t.send_str("n\n").unwrap();
    t.wait_until(|s| s.contains("Watching exercises/f2"))
        .unwrap();
    t.send_str("q\n").unwrap();
    assert!(t.wait_exit().unwrap().success());
}
