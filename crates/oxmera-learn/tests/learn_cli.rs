//! The light binary end to end: its help lists the learner's commands
//! (and not the author's), and it finds the ladder from the repository
//! root and from inside `exercises/` (a cargo workspace of its own), or
//! says clearly that there is none. The fixture ladder is oxmera-cli's
//! tests' one-rung ladder, shared, not copied.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use termlens::Terminal;

#[path = "../../oxmera-cli/tests/support/mod.rs"]
mod support;
use support::{SKELETON, TOOLCHAIN, fixture};

/// `oxmera-learn` run in `dir`, with no `OXMERA_EXERCISES` to point it.
fn learn(dir: &Path, progress: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxmera-learn"))
        .args(args)
        .current_dir(dir)
        .env_remove("OXMERA_EXERCISES")
        .env("OXMERA_LADDER_PROGRESS", progress)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The subcommands listed under `Commands:` in a help text.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn help_lists_the_learners_commands() {
    let dir = tempfile::tempdir().unwrap();
    let progress = dir.path().join("progress.toml");
    let top = learn(dir.path(), &progress, &["--help"]);
    assert!(top.status.success());
    assert_eq!(commands(&text(&top.stdout)), ["ladder", "doctor", "help"]);

    let ladder = learn(dir.path(), &progress, &["ladder", "--help"]);
    let help = text(&ladder.stdout);
    assert_eq!(
        commands(&help),
        ["list", "check", "hint", "watch", "reset", "help"],
        "{help}"
    );
    // The author's command is named below the list, as this binary spells it.
    assert!(
        help.contains("For authors: `oxmera-learn ladder verify"),
        "{help}"
    );
}

#[test]
fn list_works_from_the_root_and_from_inside_exercises() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), SKELETON);
    let progress = repo.path().join("progress.toml");
    for dir in [repo.path().to_path_buf(), ex.clone(), ex.join("f1/src")] {
        let out = learn(&dir, &progress, &["ladder", "list"]);
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "from {}: {stdout}{}",
            dir.display(),
            text(&out.stderr)
        );
        assert!(
            stdout.contains("F1   double"),
            "from {}: {stdout}",
            dir.display()
        );
        // Every suggested command is spelled as this binary is run.
        assert!(stdout.contains("oxmera-learn ladder check F1"), "{stdout}");
    }
    // With no subcommand, `ladder` lists.
    let bare = learn(&ex, &progress, &["ladder"]);
    assert_eq!(
        text(&bare.stdout),
        text(&learn(&ex, &progress, &["ladder", "list"]).stdout)
    );
}

#[test]
fn outside_any_ladder_it_says_where_it_looked() {
    let empty = tempfile::tempdir().unwrap();
    let missing = empty.path().join("no-such-exercises");
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera-learn"))
        .args(["ladder", "list"])
        .current_dir(empty.path())
        // The fallback (the checkout the binary was built from) is skipped
        // only through the variable, so point it at nothing.
        .env("OXMERA_EXERCISES", &missing)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("no-such-exercises"), "{err}");
    assert!(err.contains("exercises"), "{err}");
}

#[test]
fn doctor_renders_a_saved_report_with_this_binarys_name() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = here.join("../oxmera-cli/tests/fixtures/doctor/no-gpu.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = learn(
        dir.path(),
        &dir.path().join("progress.toml"),
        &["doctor", "--report", report.to_str().unwrap()],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.starts_with("oxmera doctor"), "{stdout}");
    assert!(
        stdout.contains("next: oxmera-learn ladder check A1"),
        "{stdout}"
    );
}

#[test]
fn a_check_shows_cargos_progress_while_it_builds() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), SKELETON);
    let progress = repo.path().join("progress.toml");
    let first = learn(&ex, &progress, &["ladder", "check", "F1"]);
    assert_eq!(first.status.code(), Some(1), "{}", text(&first.stderr));
    let err = text(&first.stderr);
    // Said before cargo's first line, then cargo's own lines as they come.
    assert!(err.starts_with("building with cargo"), "{err}");
    assert!(err.contains("Compiling ladder-f1"), "{err}");
    assert!(!err.contains("Finished"), "{err}");
    // Nothing left to build: nothing relayed, and stdout is unchanged.
    let again = learn(&ex, &progress, &["ladder", "check", "F1"]);
    assert_eq!(text(&again.stderr), "");
    assert_eq!(text(&again.stdout), text(&first.stdout));
}

#[test]
fn on_a_terminal_the_progress_line_is_erased_once_the_build_is_done() {
    let repo = tempfile::tempdir().unwrap();
    let ex = fixture(repo.path(), SKELETON);
    let mut builder = Terminal::builder()
        .size(80, 24)
        .env_clear()
        .env("OXMERA_EXERCISES", &ex)
        .env("OXMERA_LADDER_PROGRESS", repo.path().join("progress.toml"))
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(300))
        .args(["ladder", "check", "F1"]);
    for var in TOOLCHAIN {
        if let Some(v) = std::env::var_os(var) {
            builder = builder.env(var, v);
        }
    }
    // A first build: cargo compiles the fixture rung.
    let mut t = builder.spawn(env!("CARGO_BIN_EXE_oxmera-learn")).unwrap();
    assert_eq!(t.wait_exit().unwrap().code(), Some(1));
    let text = t.screen().text();
    assert!(text.contains("Checking F1 (double)"), "{text}");
    assert!(text.contains("0 of 1 tests pass"), "{text}");
    // The progress line was there while it built, and is gone.
    assert!(!text.contains("building with cargo"), "{text}");
    assert!(!text.contains("Compiling"), "{text}");
}

#[test]
fn with_only_hardware_rungs_left_it_says_what_they_wait_for() {
    // The real ladder, every built rung done but those that need a CUDA
    // driver, on a machine without one.
    let ex = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../exercises")
        .canonicalize()
        .unwrap();
    let manifest = oxmera_ladder::Manifest::load(&ex.join("manifest.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("progress.toml");
    let mut progress = oxmera_ladder::Progress::load(&path).unwrap();
    let mut waiting = Vec::new();
    for rung in manifest.built() {
        if rung.needs.contains(&oxmera_ladder::Need::CudaDriver) {
            waiting.push(rung.id.clone());
        } else {
            progress.mark_done(&rung.id);
        }
    }
    progress.save().unwrap();
    assert!(!waiting.is_empty(), "no built rung needs a CUDA driver");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_oxmera-learn"))
            .args(args)
            .env("OXMERA_EXERCISES", &ex)
            .env("OXMERA_LADDER_PROGRESS", &path)
            .env("OXMERA_LADDER_NEEDS_MET", "rust,wgpu-adapter")
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let list = run(&["ladder", "list"]);
    let stdout = text(&list.stdout);
    assert!(list.status.success(), "{stdout}{}", text(&list.stderr));
    assert!(!stdout.contains("every built rung is done"), "{stdout}");
    assert!(
        stdout.contains("every rung this machine can run is done"),
        "{stdout}"
    );
    for id in &waiting {
        assert!(
            stdout.contains(&format!("{id} waits for a CUDA driver")),
            "{stdout}"
        );
    }
    assert!(stdout.contains("oxmera-learn doctor"), "{stdout}");
    // `check` with no rung named has none to default to, and says why.
    let check = run(&["ladder", "check"]);
    let err = text(&check.stderr);
    assert_eq!(check.status.code(), Some(2), "{err}");
    assert!(err.contains(&waiting.join(", ")), "{err}");
    assert!(err.contains("doctor"), "{err}");
    assert!(!err.contains("every built rung is done"), "{err}");
    // Nor does the doctor's ladder line say all is done.
    let doctor = text(&run(&["doctor"]).stdout);
    assert!(!doctor.contains("every built rung is done"), "{doctor}");
    assert!(doctor.contains("the rest need hardware"), "{doctor}");
}
