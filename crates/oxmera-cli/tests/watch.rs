//! `oxmera ladder watch` end to end, in a PTY, on a one-rung fixture
//! ladder: it checks the current rung, waits for a save, re-checks, and
//! stops once every rung is green. Every wait is bounded by a deadline.

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
