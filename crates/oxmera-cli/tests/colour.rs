//! Colour is the terminal's to take: `oxmera` writes no escape code when
//! `NO_COLOR` is set or stdout is not a terminal, and colours otherwise.
//! Checked on the richest output there is, `oxmera ladder check` on a rung
//! that does not compile (the compiler's own coloured diagnostics pass
//! through it) and on one that fails its tests, as well as on the ladder
//! list and the doctor.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use termlens::{Screen, Style, Terminal};

mod support;
use support::{SKELETON, TOOLCHAIN, fixture, write};

const BROKEN: &str =
    "//! Fixture rung.\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {\n    \"two\"\n}\n";

/// `oxmera args…` in an 100×60 PTY (TERM=xterm-256color), with `extra`
/// variables and nothing else of this process's environment but the
/// toolchain's.
fn in_terminal(args: &[&str], extra: &[(&str, &Path)]) -> Screen {
    let mut builder = Terminal::builder()
        .size(100, 60)
        .env_clear()
        .timeout(Duration::from_secs(300))
        .args(args);
    for var in TOOLCHAIN {
        if let Some(v) = std::env::var_os(var) {
            builder = builder.env(var, v);
        }
    }
    for (k, v) in extra {
        builder = builder.env(k, v);
    }
    let mut t = builder.spawn(env!("CARGO_BIN_EXE_oxmera")).unwrap();
    t.wait_exit().unwrap();
    t.screen()
}

/// Every cell's style: which of them are not the terminal's default.
fn styled_cells(screen: &Screen) -> usize {
    let (cols, rows) = screen.size();
    (0..rows)
        .flat_map(|r| (0..cols).map(move |c| (r, c)))
        .filter(|&(r, c)| {
            screen
                .cell(r, c)
                .is_some_and(|cell| *cell.style() != Style::default())
        })
        .count()
}

/// `oxmera args…` into a pipe, with the colour variables unset.
fn piped(args: &[&str], exercises: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(args)
        .env("OXMERA_EXERCISES", exercises)
        .env("OXMERA_LADDER_PROGRESS", exercises.join(".progress.toml"))
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn check_output_has_colour_only_in_a_terminal_without_no_color() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), BROKEN);
    let progress = ex.join(".progress.toml");
    let vars: Vec<(&str, &Path)> = vec![
        ("OXMERA_EXERCISES", &ex),
        ("OXMERA_LADDER_PROGRESS", &progress),
    ];
    let check = ["ladder", "check", "F1"];

    // Into a pipe: the compiler's errors are there, their colour is not.
    let text = piped(&check, &ex);
    assert!(text.contains("does not compile"), "{text}");
    assert!(text.contains("error[E0308]"), "{text}");
    assert!(!text.contains('\x1b'), "escape codes in a pipe:\n{text:?}");

    // In a terminal with NO_COLOR: the same words, and not one styled cell.
    let mut no_color = vars.clone();
    no_color.push(("NO_COLOR", Path::new("1")));
    let plain = in_terminal(&check, &no_color);
    assert!(plain.contains("error[E0308]"), "{}", plain.text());
    assert_eq!(styled_cells(&plain), 0, "{}", plain.text());

    // In a terminal: colour, the compiler's included.
    let coloured = in_terminal(&check, &vars);
    assert!(coloured.contains("error[E0308]"), "{}", coloured.text());
    let (row, col) = coloured.find("error[E0308]").unwrap();
    assert_ne!(
        *coloured.cell(row, col).unwrap().style(),
        Style::default(),
        "the compiler's error is coloured in a terminal"
    );
    assert_eq!(coloured.text(), plain.text());

    // A red (failing) check reads the same way.
    write(&ex.join("f1/src/lib.rs"), SKELETON);
    let text = piped(&check, &ex);
    assert!(text.contains("0 of 1 tests pass"), "{text}");
    assert!(!text.contains('\x1b'), "escape codes in a pipe:\n{text:?}");
    let plain = in_terminal(&check, &no_color);
    assert!(plain.contains("0 of 1 tests pass"), "{}", plain.text());
    assert_eq!(styled_cells(&plain), 0, "{}", plain.text());
    assert!(styled_cells(&in_terminal(&check, &vars)) > 0);
}

#[test]
fn list_and_doctor_write_no_colour_with_no_color() {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let exercises = here.join("../../exercises").canonicalize().unwrap();
    let progress = here.join("tests/fixtures/ladder-progress.toml");
    let report = here.join("tests/fixtures/doctor/cuda.toml");
    let vars: Vec<(&str, &Path)> = vec![
        ("OXMERA_EXERCISES", &exercises),
        ("OXMERA_LADDER_PROGRESS", &progress),
    ];
    let mut no_color = vars.clone();
    no_color.push(("NO_COLOR", Path::new("1")));
    for args in [
        vec!["ladder", "list"],
        vec!["doctor", "--report", report.to_str().unwrap()],
    ] {
        assert!(styled_cells(&in_terminal(&args, &vars)) > 0, "{args:?}");
        let plain = in_terminal(&args, &no_color);
        assert_eq!(styled_cells(&plain), 0, "{args:?}:\n{}", plain.text());
    }
}
