//! A red `oxmera ladder check` is deterministic and compact: two runs
//! print the same bytes whatever `PROPTEST_*` variables the shell
//! exports, and the report fits an 80×24 terminal with a visible mark
//! where it was cut. Checked on the real A3, whose skeleton fails all 11
//! tests (its properties printed 50 lines before).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use termlens::Terminal;

mod support;
use support::TOOLCHAIN;

fn exercises() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../exercises")
}

/// `oxmera ladder check A3` into a pipe, with progress kept in `progress`
/// and `extra` variables set.
fn check_a3(progress: &Path, extra: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_oxmera"));
    cmd.args(["ladder", "check", "A3"])
        .env("OXMERA_EXERCISES", exercises())
        .env("OXMERA_LADDER_PROGRESS", progress)
        .env("NO_COLOR", "1");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn a_red_check_prints_the_same_bytes_twice() {
    let dir = tempfile::tempdir().unwrap();
    let progress = dir.path().join("progress.toml");
    let first = check_a3(&progress, &[]);
    // A shell that exports proptest's variables changes nothing: the
    // specs fix their seed, and the ladder clears the rest.
    let second = check_a3(
        &progress,
        &[
            ("PROPTEST_RNG_SEED", "12345"),
            ("PROPTEST_CASES", "3"),
            ("PROPTEST_VERBOSE", "2"),
        ],
    );
    assert_eq!(first.status.code(), Some(1), "a red check exits 1");
    assert_eq!(second.status.code(), Some(1));
    let text = String::from_utf8(first.stdout.clone()).unwrap();
    assert!(text.contains("0 of 11 tests pass"), "{text}");
    assert_eq!(
        text,
        String::from_utf8(second.stdout).unwrap(),
        "two runs on the same code differ"
    );
    // The minimal input survives, on one line, labelled.
    assert!(
        text.lines()
            .any(|l| l.trim() == "minimal failing input: (dims, perm) = ([1], [0])"),
        "{text}"
    );
}

#[test]
fn a_red_check_fits_24_rows_with_a_visible_cut_mark() {
    let dir = tempfile::tempdir().unwrap();
    let mut builder = Terminal::builder()
        .size(80, 24)
        .env_clear()
        .env("OXMERA_EXERCISES", exercises())
        .env("OXMERA_LADDER_PROGRESS", dir.path().join("progress.toml"))
        .env("NO_COLOR", "1")
        .timeout(Duration::from_secs(300))
        .args(["ladder", "check", "A3"]);
    for var in TOOLCHAIN.iter().chain(&["CARGO_TARGET_DIR"]) {
        if let Some(v) = std::env::var_os(var) {
            builder = builder.env(var, v);
        }
    }
    let mut t = builder.spawn(env!("CARGO_BIN_EXE_oxmera")).unwrap();
    assert_eq!(t.wait_exit().unwrap().code(), Some(1));
    let screen = t.screen();
    let text = screen.text();
    // Nothing scrolled away: the first line is still on screen, and the
    // last newline left the cursor on a row of its own for the prompt.
    assert_eq!(screen.scrollback_rows(), 0, "{text}");
    assert!(text.contains("Checking A3 (strided views)"), "{text}");
    assert!(text.contains("Stuck? oxmera ladder hint A3"), "{text}");
    // Where failures were left out, it says so.
    assert!(text.contains("[… 8 more cut: "), "{text}");
}

/// A1 with one misconception written in: a zero extent zeroes every
/// stride outside it. Only shapes holding a 0 fail, so which failing
/// shape proptest finds first, and what it shrinks to, depend on the
/// cases drawn: the run is the same twice only because the seed is fixed.
const ZERO_EXTENT_A1: &str = r#"//! A1 with a zero extent zeroing the strides outside it.

/// Row-major strides, multiplying by 0 too.
pub fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut acc = 1;
    for (s, &d) in strides.iter_mut().zip(dims).rev() {
        *s = acc;
        acc *= d;
    }
    strides
}

/// The memory position of `index`, or `None`.
pub fn offset_of(dims: &[usize], strides: &[usize], offset: usize, index: &[usize]) -> Option<usize> {
    if index.len() != dims.len() || strides.len() != dims.len() {
        return None;
    }
    let mut at = offset;
    for ((&i, &d), &s) in index.iter().zip(dims).zip(strides) {
        if i >= d {
            return None;
        }
        at += i * s;
    }
    Some(at)
}

/// The multi-index of the `linear`-th element.
pub fn index_of(dims: &[usize], mut linear: usize) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for (x, &d) in index.iter_mut().zip(dims).rev() {
        let d = d.max(1);
        *x = linear % d;
        linear /= d;
    }
    index
}

/// Whether the layout is row-major with no gaps (this one is right).
pub fn is_contiguous(dims: &[usize], strides: &[usize]) -> bool {
    if dims.contains(&0) {
        return true;
    }
    let mut expected = 1;
    for (&d, &s) in dims.iter().zip(strides).rev() {
        if d != 1 && s != expected {
            return false;
        }
        expected *= d;
    }
    true
}
"#;

/// A copy of the exercises workspace with A1 only, whose `src/lib.rs` is
/// `lib`, at a stable place under the test target (so proptest and its
/// dependencies are built once, not on every run).
fn a1_copy(lib: &str) -> PathBuf {
    let repo = exercises().join("..").canonicalize().unwrap();
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ladder-check-a1/exercises");
    let rung = copy.join("a1-shape-strides");
    std::fs::create_dir_all(rung.join("src")).unwrap();
    std::fs::create_dir_all(rung.join("tests")).unwrap();
    let read = |p: &str| std::fs::read_to_string(exercises().join(p)).unwrap();
    let workspace = read("Cargo.toml");
    let start = workspace.find("members = [").unwrap();
    let end = start + workspace[start..].find(']').unwrap() + 1;
    let workspace = format!(
        "{}members = [\"a1-shape-strides\"]{}",
        &workspace[..start],
        &workspace[end..]
    )
    .replace(
        "path = \"../crates/",
        &format!("path = \"{}/crates/", repo.display()),
    );
    let files = [
        (copy.join("Cargo.toml"), workspace),
        (copy.join("manifest.toml"), read("manifest.toml")),
        (rung.join("Cargo.toml"), read("a1-shape-strides/Cargo.toml")),
        (
            rung.join("tests/spec.rs"),
            read("a1-shape-strides/tests/spec.rs"),
        ),
        (rung.join("src/lib.rs"), lib.to_string()),
    ];
    for (path, text) in files {
        // Unchanged files keep their times, so cargo rebuilds nothing.
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text).unwrap();
        }
    }
    let lock = copy.join("Cargo.lock");
    if !lock.exists() {
        std::fs::copy(exercises().join("Cargo.lock"), lock).unwrap();
    }
    copy
}

#[test]
fn a_failure_only_some_cases_hit_prints_the_same_bytes_twice() {
    let ex = a1_copy(ZERO_EXTENT_A1);
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_oxmera"));
        cmd.args(["ladder", "check", "A1"])
            .env("OXMERA_EXERCISES", &ex)
            .env("OXMERA_LADDER_PROGRESS", dir.path().join("progress.toml"))
            .env("NO_COLOR", "1");
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let first = run(&[]);
    let second = run(&[("PROPTEST_RNG_SEED", "7"), ("PROPTEST_CASES", "1000")]);
    let text = String::from_utf8(first.stdout).unwrap();
    assert_eq!(first.status.code(), Some(1), "{text}");
    // It fails where the misconception shows, with a shrunk input.
    assert!(
        text.contains("each_stride_is_the_product_of_the_extents_inside_it"),
        "{text}"
    );
    assert!(text.contains("minimal failing input: dims = ["), "{text}");
    assert_eq!(text, String::from_utf8(second.stdout).unwrap());
}
