//! `oxmera ladder watch` end to end, in a PTY, on a one-rung fixture
//! ladder: it checks the current rung, waits for a save, re-checks, and
//! stops once every rung is green. Every wait is bounded by a deadline.

use std::path::Path;
use std::time::Duration;

use termlens::Terminal;

const SKELETON: &str = "//! Fixture rung.\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {\n    todo!(\"F1: double({x})\")\n}\n";
const SOLUTION: &str =
    "//! Fixture rung, solved.\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn watch_rechecks_on_save_and_stops_when_all_is_green() {
    let repo = tempfile::tempdir().unwrap();
    let ex = repo.path().join("exercises");
    write(
        &ex.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"f1\"]\n",
    );
    write(
        &ex.join("manifest.toml"),
        "[[tier]]\nid = \"F\"\nname = \"fixture\"\ncost = \"$0\"\n\n[[rung]]\nid = \"F1\"\nname = \"double\"\ntier = \"F\"\nstatus = \"built\"\nteaches = \"doubling\"\ncost = \"$0\"\npath = \"f1\"\n",
    );
    write(
        &ex.join("f1/Cargo.toml"),
        "[package]\nname = \"ladder-f1\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[lib]\nname = \"f1\"\n",
    );
    write(&ex.join("f1/src/lib.rs"), SKELETON);
    write(
        &ex.join("f1/tests/spec.rs"),
        "#[test]\nfn two_doubled_is_four() {\n    assert_eq!(f1::double(2), 4);\n}\n",
    );

    let mut builder = Terminal::builder()
        .size(100, 40)
        .env_clear()
        .env("OXMERA_EXERCISES", &ex)
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(120))
        .args(["ladder", "watch"]);
    // The watcher runs cargo: give it the toolchain this test runs under.
    for var in [
        "PATH",
        "HOME",
        "CARGO",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
    ] {
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
