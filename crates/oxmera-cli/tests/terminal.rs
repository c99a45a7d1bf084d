//! What a learner sees, checked through a real pseudo-terminal at a fixed
//! size (80×48): `oxmera doctor` rendered from saved reports of three
//! machine classes, and `oxmera ladder` list for a learner two rungs in
//! on a machine with a wgpu adapter and no CUDA driver.
//! The screen text must match the golden file exactly, so a layout change
//! fails here; set `OXMERA_BLESS=1` to rewrite the goldens after a change
//! that is meant.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use termlens::{Color, Screen, Terminal};

const COLS: u16 = 80;
const ROWS: u16 = 48;

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn exercises() -> PathBuf {
    here().join("../../exercises").canonicalize().unwrap()
}

/// Runs `oxmera args…` in a PTY and returns the final screen.
fn screen(args: &[&str], no_color: bool) -> Screen {
    let mut builder = Terminal::builder()
        .size(COLS, ROWS)
        .env_clear()
        .env("OXMERA_EXERCISES", exercises())
        .env(
            "OXMERA_LADDER_PROGRESS",
            here().join("tests/fixtures/ladder-progress.toml"),
        )
        // CI's machine, whatever this one has: a wgpu adapter (lavapipe),
        // no CUDA driver, so D2 shows as "needs hardware".
        .env("OXMERA_LADDER_NEEDS_MET", "rust,wgpu-adapter")
        .timeout(Duration::from_secs(20))
        .args(args);
    if no_color {
        builder = builder.env("NO_COLOR", "1");
    }
    let mut t = builder.spawn(env!("CARGO_BIN_EXE_oxmera")).unwrap();
    let status = t.wait_exit().unwrap();
    assert!(status.success(), "oxmera {args:?} exited with {status}");
    t.screen()
}

fn golden(name: &str, screen: &Screen) {
    let text = screen.text().trim_end().to_string() + "\n";
    let path = here().join("tests/golden").join(format!("{name}.txt"));
    if std::env::var_os("OXMERA_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with OXMERA_BLESS=1 to create it)",
            path.display()
        )
    });
    assert_eq!(text, expected, "screen differs from {}", path.display());
}

fn doctor(fixture: &str) -> Screen {
    let report = here()
        .join("tests/fixtures/doctor")
        .join(format!("{fixture}.toml"));
    screen(&["doctor", "--report", report.to_str().unwrap()], false)
}

#[test]
fn doctor_on_a_machine_without_a_gpu() {
    golden("doctor-no-gpu", &doctor("no-gpu"));
}

#[test]
fn doctor_on_a_cuda_machine() {
    golden("doctor-cuda", &doctor("cuda"));
}

#[test]
fn doctor_on_a_mac() {
    golden("doctor-mac", &doctor("mac"));
}

#[test]
fn ladder_list_for_a_learner_two_rungs_in() {
    golden("ladder-list", &screen(&["ladder"], false));
}

fn colour_of(screen: &Screen, needle: &str) -> Color {
    let (row, col) = screen
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{}", screen.text()));
    screen.cell(row, col).unwrap().style().fg
}

#[test]
fn colour_in_a_terminal_and_none_with_no_color() {
    let coloured = doctor("cuda");
    assert_ne!(colour_of(&coloured, "✓ reference"), Color::Default);
    let report = here().join("tests/fixtures/doctor/cuda.toml");
    let plain = screen(&["doctor", "--report", report.to_str().unwrap()], true);
    assert_eq!(colour_of(&plain, "✓ reference"), Color::Default);
    // Same text either way.
    assert_eq!(coloured.text(), plain.text());
}

#[test]
fn piped_output_has_no_escape_codes() {
    for args in [
        vec!["doctor", "--report", "tests/fixtures/doctor/mac.toml"],
        vec!["ladder", "list"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
            .args(&args)
            .current_dir(here())
            .env("OXMERA_EXERCISES", exercises())
            .env(
                "OXMERA_LADDER_PROGRESS",
                Path::new("tests/fixtures/ladder-progress.toml"),
            )
            .env_remove("NO_COLOR")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.contains('\x1b'),
            "{args:?} wrote escape codes into a pipe"
        );
        assert!(!text.is_empty());
    }
}

#[test]
fn doctor_probes_this_machine_and_exits_zero() {
    // Whatever this machine has, the report completes and says so.
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .arg("doctor")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for heading in [
        "Host",
        "Toolchain",
        "Backends",
        "Ladder tiers on this machine",
    ] {
        assert!(text.contains(heading), "{heading} missing:\n{text}");
    }
    assert!(text.contains("backends can run here."));
}
