//! The ladder's machinery run for real on a tiny fixture ladder: one rung
//! whose function doubles a number. Each test builds its own copy, breaks
//! one thing, and checks that the checker notices.

use std::path::{Path, PathBuf};

use oxmera_ladder::check::{self, Outcome};
use oxmera_ladder::verify::{Problem, VerifyOptions, lock_is_current, verify};
use oxmera_ladder::{Cargo, Ladder, hints, reset};

const SKELETON: &str = "//! Fixture rung.\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {\n    // TODO(F1): double it.\n    todo!(\"F1: double({x})\")\n}\n";
const SOLUTION: &str =
    "//! Fixture rung, solved.\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n";
const SPEC: &str = "//! Spec of the fixture.\n\n#[test]\nfn two_doubled_is_four() {\n    assert_eq!(f1::double(2), 4);\n}\n\n#[test]\nfn doubling_is_adding_to_itself() {\n    for x in 0..10 {\n        assert_eq!(f1::double(x), x + x, \"x = {x}\");\n    }\n}\n";
/// The fixture's named wrong solutions: (name, body of `double`). The
/// last two pass `two_doubled_is_four` and are caught by the other test.
const WRONG: [(&str, &str, &str); 3] = [
    ("adds_one", "Adds one instead of doubling.", "x + 1"),
    ("adds_two", "Adds two: right at 2 only.", "x + 2"),
    ("squares", "Squares: right at 0 and 2 only.", "x * x"),
];

fn wrong_solution(misconception: &str, body: &str) -> String {
    format!(
        "//! {misconception}\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {{\n    {body}\n}}\n"
    )
}

const HINTS: &str = "# Hints\n\n## First\nMultiply.\n\n## Second\nBy two.\n";

struct Fixture {
    _dir: tempfile::TempDir,
    exercises: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let exercises = dir.path().join("exercises");
        let rung = exercises.join("f1");
        for sub in ["src", "skeleton", "solution", "tests", "wrong"] {
            std::fs::create_dir_all(rung.join(sub)).unwrap();
        }
        write(
            &exercises.join("Cargo.toml"),
            "[workspace]\nresolver = \"3\"\nmembers = [\"f1\"]\n\n[workspace.package]\nedition = \"2024\"\n",
        );
        write(
            &exercises.join("manifest.toml"),
            "[[tier]]\nid = \"F\"\nname = \"fixture\"\ncost = \"$0\"\n\n[[rung]]\nid = \"F1\"\nname = \"double\"\ntier = \"F\"\nstatus = \"built\"\nteaches = \"doubling\"\ncost = \"$0\"\npath = \"f1\"\n",
        );
        write(
            &rung.join("Cargo.toml"),
            "[package]\nname = \"ladder-f1\"\nversion = \"0.1.0\"\nedition.workspace = true\npublish = false\n\n[lib]\nname = \"f1\"\n",
        );
        write(&rung.join("README.md"), "# F1\n");
        write(&rung.join("hints.md"), HINTS);
        write(&rung.join("src/lib.rs"), SKELETON);
        write(&rung.join("skeleton/lib.rs"), SKELETON);
        write(&rung.join("solution/lib.rs"), SOLUTION);
        write(&rung.join("tests/spec.rs"), SPEC);
        for (name, misconception, body) in WRONG {
            write(
                &rung.join(format!("wrong/{name}.rs")),
                &wrong_solution(misconception, body),
            );
        }
        Fixture {
            _dir: dir,
            exercises,
        }
    }

    fn rung_file(&self, rel: &str) -> PathBuf {
        self.exercises.join("f1").join(rel)
    }

    fn ladder(&self) -> Ladder {
        Ladder::open_with_progress(&self.exercises, &self.exercises.join(".progress.toml")).unwrap()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

impl Fixture {
    /// Each fixture builds into its own directory: the crate is tiny and
    /// has no dependencies, and sharing a directory between checkouts is
    /// what `target_dir_for` exists to avoid.
    fn cargo(&self) -> Cargo {
        Cargo::new(self.exercises.parent().unwrap().join("target"))
    }
}

fn problems(fixture: &Fixture, lint: bool) -> Vec<Problem> {
    let verdicts = verify(&fixture.ladder(), &fixture.cargo(), VerifyOptions { lint }).unwrap();
    assert_eq!(verdicts.len(), 1);
    verdicts.into_iter().next().unwrap().problems
}

#[test]
fn a_sound_rung_passes_the_authors_check() {
    let f = Fixture::new();
    let verdicts = verify(&f.ladder(), &f.cargo(), VerifyOptions { lint: true }).unwrap();
    assert_eq!(verdicts[0].problems, vec![], "{verdicts:?}");
    assert_eq!(verdicts[0].tests, 2);
    assert!(verdicts[0].ok());
    // Each named wrong solution ran, and failed the tests it should.
    let caught: Vec<(&str, &str, Vec<&str>, usize)> = verdicts[0]
        .caught
        .iter()
        .map(|c| {
            let failed = c.failed.iter().map(String::as_str).collect();
            (
                c.wrong.name.as_str(),
                c.wrong.misconception.as_str(),
                failed,
                c.tests,
            )
        })
        .collect();
    assert_eq!(
        caught,
        vec![
            (
                "adds_one",
                "Adds one instead of doubling.",
                vec!["doubling_is_adding_to_itself", "two_doubled_is_four"],
                2
            ),
            (
                "adds_two",
                "Adds two: right at 2 only.",
                vec!["doubling_is_adding_to_itself"],
                2
            ),
            (
                "squares",
                "Squares: right at 0 and 2 only.",
                vec!["doubling_is_adding_to_itself"],
                2
            ),
        ]
    );
    // The learner's files are untouched.
    assert_eq!(
        std::fs::read_to_string(f.rung_file("src/lib.rs")).unwrap(),
        SKELETON
    );
}

#[test]
fn a_vacuous_spec_fails_the_check() {
    let f = Fixture::new();
    let vacuous =
        format!("{SPEC}\n#[test]\nfn arithmetic_still_works() {{\n    assert_eq!(2 * 2, 4);\n}}\n");
    write(&f.rung_file("tests/spec.rs"), &vacuous);
    assert_eq!(
        problems(&f, false),
        vec![Problem::VacuousSpec {
            passed: vec!["arithmetic_still_works".into()]
        }]
    );
}

#[test]
fn a_spec_that_never_calls_the_skeleton_is_all_vacuous() {
    let f = Fixture::new();
    write(
        &f.rung_file("tests/spec.rs"),
        "#[test]\nfn nothing() {\n    assert!(true);\n}\n",
    );
    let p = problems(&f, false);
    assert_eq!(
        p[0],
        Problem::VacuousSpec {
            passed: vec!["nothing".into()]
        }
    );
    // Such a spec lets every wrong solution through, and each is named.
    let passing: Vec<&Path> = p[1..]
        .iter()
        .filter_map(|p| match p {
            Problem::WrongSolutionPasses { path, .. } => Some(path.as_path()),
            _ => None,
        })
        .collect();
    assert_eq!(p.len(), 4, "{p:?}");
    assert_eq!(
        passing,
        ["adds_one", "adds_two", "squares"]
            .map(|n| Path::new("exercises/f1/wrong").join(format!("{n}.rs")))
    );
}

#[test]
fn a_broken_solution_fails_the_check() {
    let f = Fixture::new();
    write(
        &f.rung_file("solution/lib.rs"),
        &SOLUTION.replace("x * 2", "x * 3"),
    );
    let p = problems(&f, false);
    assert_eq!(p.len(), 1, "{p:?}");
    let Problem::SolutionFails { failures } = &p[0] else {
        panic!("expected SolutionFails, got {p:?}");
    };
    let names: Vec<&str> = failures.iter().map(|f| f.test.as_str()).collect();
    assert_eq!(
        names,
        vec!["doubling_is_adding_to_itself", "two_doubled_is_four"]
    );
    assert!(
        failures[1].message.contains("left: 6"),
        "{}",
        failures[1].message
    );
}

#[test]
fn a_wrong_solution_that_passes_fails_the_check() {
    let f = Fixture::new();
    // "Wrong", but right: the spec cannot catch it, and says so.
    write(
        &f.rung_file("wrong/shifts.rs"),
        &wrong_solution("Shifts left by one.", "x << 1"),
    );
    // One that does not compile is a problem too.
    write(
        &f.rung_file("wrong/typo.rs"),
        &wrong_solution("Does not compile.", "x * \"2\""),
    );
    let p = problems(&f, false);
    assert_eq!(p.len(), 2, "{p:?}");
    assert_eq!(
        p[0],
        Problem::WrongSolutionPasses {
            path: PathBuf::from("exercises/f1/wrong/shifts.rs"),
            misconception: "Shifts left by one.".into()
        }
    );
    assert!(
        matches!(&p[1], Problem::WrongSolutionDoesNotBuild { path, errors }
            if path.ends_with("wrong/typo.rs") && errors.contains("error[E0277]")),
        "{p:?}"
    );
}

#[test]
fn a_missing_oxmera_source_fails_the_check() {
    let f = Fixture::new();
    // `source` is read from the repository root, the folder above
    // exercises/: one file there, one not.
    write(&f.exercises.join("../double.rs"), "// how it is done\n");
    let manifest = std::fs::read_to_string(f.exercises.join("manifest.toml")).unwrap();
    write(
        &f.exercises.join("manifest.toml"),
        &manifest.replace(
            "path = \"f1\"\n",
            "path = \"f1\"\nsource = [\"double.rs\", \"gone.rs\"]\n",
        ),
    );
    assert_eq!(
        problems(&f, false),
        vec![Problem::MissingFile {
            path: PathBuf::from("gone.rs")
        }]
    );
}

#[test]
fn fewer_than_three_wrong_solutions_fail_the_check() {
    let f = Fixture::new();
    std::fs::remove_file(f.rung_file("wrong/squares.rs")).unwrap();
    // A file that is not Rust does not count.
    write(&f.rung_file("wrong/notes.md"), "# not a solution\n");
    let p = problems(&f, false);
    assert_eq!(
        p,
        vec![Problem::TooFewWrongSolutions {
            dir: PathBuf::from("exercises/f1/wrong"),
            found: 2
        }]
    );
}

#[test]
fn a_solution_that_does_not_compile_fails_the_check() {
    let f = Fixture::new();
    write(
        &f.rung_file("solution/lib.rs"),
        &SOLUTION.replace("x * 2", "x * \"2\""),
    );
    let p = problems(&f, false);
    assert!(
        matches!(&p[..], [Problem::SolutionDoesNotBuild { errors }] if errors.contains("error[E0277]")),
        "{p:?}"
    );
}

#[test]
fn drift_missing_files_and_lint_are_reported() {
    let f = Fixture::new();
    // The learner's copy differs from the skeleton.
    write(&f.rung_file("src/lib.rs"), SOLUTION);
    // The solution is clippy-unclean, the skeleton is not rustfmt-clean.
    write(
        &f.rung_file("solution/lib.rs"),
        &SOLUTION.replace(
            "x * 2",
            "#[allow(clippy::clone_on_copy)]\n    let y = x;\n    y.clone() + x.clone()",
        ),
    );
    write(
        &f.rung_file("skeleton/lib.rs"),
        &SKELETON.replace("u32 {", "u32{"),
    );
    let summaries: Vec<String> = problems(&f, true).iter().map(Problem::summary).collect();
    assert_eq!(
        summaries,
        vec![
            "exercises/f1/src/lib.rs differs from exercises/f1/skeleton/lib.rs".to_string(),
            "clippy warnings in the solution".to_string(),
            "rustfmt would change exercises/f1/skeleton/lib.rs".to_string(),
        ]
    );

    let g = Fixture::new();
    std::fs::remove_file(g.rung_file("hints.md")).unwrap();
    let p = problems(&g, true);
    assert_eq!(
        p,
        vec![Problem::MissingFile {
            path: PathBuf::from("exercises/f1/hints.md")
        }]
    );
}

#[test]
fn check_is_red_on_the_skeleton_and_green_on_a_solution() {
    let f = Fixture::new();
    let mut ladder = f.ladder();
    let red = check::check(&mut ladder, &f.cargo(), "f1").unwrap();
    let Outcome::Red {
        passed: 0,
        failures,
    } = &red.outcome
    else {
        panic!("expected red, got {red:?}");
    };
    assert_eq!(failures.len(), 2);
    assert!(failures.iter().all(|f| f.hit_todo()), "{failures:?}");
    assert!(
        failures[1].message.contains("F1: double(2)"),
        "{failures:?}"
    );
    assert!(!ladder.progress.is_done("F1"));

    write(&f.rung_file("src/lib.rs"), SOLUTION);
    let green = check::check(&mut ladder, &f.cargo(), "F1").unwrap();
    assert_eq!(green.outcome, Outcome::Green { tests: 2 });
    assert!(green.newly_done);
    // Progress was saved: a fresh ladder sees it.
    assert!(f.ladder().progress.is_done("F1"));

    write(
        &f.rung_file("src/lib.rs"),
        &SOLUTION.replace("x * 2", "x *"),
    );
    let broken = check::check(&mut ladder, &f.cargo(), "F1").unwrap();
    assert!(
        matches!(&broken.outcome, Outcome::BuildFailed { errors } if errors.contains("expected expression")),
        "{broken:?}"
    );
    // What no longer compiles is no longer done.
    assert!(broken.unmarked);
    assert!(!f.ladder().progress.is_done("F1"));

    // Green again, then red: the rung is taken back, and a hint asked for
    // from another terminal meanwhile (another `Ladder`) survives both
    // saves of this one, which loaded its progress before the hint.
    write(&f.rung_file("src/lib.rs"), SOLUTION);
    let again = check::check(&mut ladder, &f.cargo(), "F1").unwrap();
    assert!(again.newly_done && !again.unmarked, "{again:?}");
    hints::reveal_next(&mut f.ladder(), "F1").unwrap();
    write(
        &f.rung_file("src/lib.rs"),
        &SOLUTION.replace("x * 2", "x + 2"),
    );
    let red = check::check(&mut ladder, &f.cargo(), "F1").unwrap();
    assert!(
        matches!(red.outcome, Outcome::Red { passed: 1, .. }),
        "{red:?}"
    );
    assert!(red.unmarked && !red.newly_done);
    let saved = f.ladder().progress;
    assert!(!saved.is_done("F1"));
    assert_eq!(saved.hints_seen("F1"), 1, "the other terminal's hint");
    // A red check of a rung that was not done changes nothing.
    let still_red = check::check(&mut ladder, &f.cargo(), "F1").unwrap();
    assert!(!still_red.unmarked);
}

#[test]
fn hints_come_one_at_a_time_and_reset_keeps_a_backup() {
    let f = Fixture::new();
    let mut ladder = f.ladder();
    let first = hints::reveal_next(&mut ladder, "F1").unwrap();
    assert_eq!((first.number, first.total, first.again), (1, 2, false));
    assert_eq!(first.hint.unwrap().title, "First");
    let second = hints::reveal_next(&mut f.ladder(), "F1").unwrap();
    assert_eq!(second.hint.unwrap().body, "By two.");
    let again = hints::reveal_next(&mut f.ladder(), "F1").unwrap();
    assert_eq!((again.number, again.again), (2, true));

    // `hint F1 N` jumps: ahead counts the hints before as seen, back
    // leaves the count alone, and a hint the rung lacks is an error.
    let g = Fixture::new();
    let jumped = hints::reveal(&mut g.ladder(), "F1", Some(2)).unwrap();
    assert_eq!((jumped.number, jumped.total), (2, 2));
    assert_eq!(jumped.hint.unwrap().title, "Second");
    assert_eq!(g.ladder().progress.hints_seen("F1"), 2);
    let back = hints::reveal(&mut g.ladder(), "F1", Some(1)).unwrap();
    assert_eq!(back.hint.unwrap().title, "First");
    assert_eq!(g.ladder().progress.hints_seen("F1"), 2);
    for n in [0, 3] {
        assert!(
            matches!(
                hints::reveal(&mut g.ladder(), "F1", Some(n)),
                Err(oxmera_ladder::Error::NoSuchHint { number, total: 2, .. }) if number == n
            ),
            "hint {n}"
        );
    }

    write(&f.rung_file("src/lib.rs"), SOLUTION);
    ladder.progress.mark_done("F1");
    let report = reset::reset(&mut ladder, "F1").unwrap();
    assert!(report.was_done);
    let backup = report.backup.expect("a backup");
    assert_eq!(backup, f.rung_file(".backup/lib.rs.1"));
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), SOLUTION);
    assert_eq!(
        std::fs::read_to_string(f.rung_file("src/lib.rs")).unwrap(),
        SKELETON
    );
    assert!(!f.ladder().progress.is_done("F1"));
    // Resetting a pristine file makes no backup.
    assert_eq!(reset::reset(&mut ladder, "F1").unwrap().backup, None);
}

#[test]
fn a_stale_lock_file_is_noticed() {
    let f = Fixture::new();
    let ladder = f.ladder();
    assert!(lock_is_current(&ladder, &f.cargo()).unwrap(), "no lock yet");
    // Write the lock for this workspace, then add a member it does not know.
    check::check(&mut f.ladder(), &f.cargo(), "F1").unwrap();
    assert!(lock_is_current(&ladder, &f.cargo()).unwrap());
    let rung = f.exercises.join("f2");
    std::fs::create_dir_all(rung.join("src")).unwrap();
    write(
        &rung.join("Cargo.toml"),
        "[package]\nname = \"ladder-f2\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    );
    write(&rung.join("src/lib.rs"), "");
    write(
        &f.exercises.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"f1\", \"f2\"]\n\n[workspace.package]\nedition = \"2024\"\n",
    );
    assert!(!lock_is_current(&ladder, &f.cargo()).unwrap());
}

/// The verdict is each test's exit status, never libtest's report: tests
/// that print lines that look like that report (a false `FAILED` from a
/// passing test, a false `ok` and `test result: ok` from a failing one)
/// change nothing, and a test that aborts its process takes only itself
/// down.
#[test]
fn what_a_spec_prints_cannot_change_its_result() {
    let f = Fixture::new();
    write(
        &f.rung_file("tests/spec.rs"),
        r#"#[test]
fn two_doubled_is_four() {
    println!("test two_doubled_is_four ... FAILED");
    eprintln!("test result: FAILED. 0 passed; 1 failed");
    assert_eq!(f1::double(2), 4);
}

#[test]
fn three_doubled_is_seven() {
    println!("test three_doubled_is_seven ... ok");
    println!("\ntest result: ok. 1 passed; 0 failed");
    eprintln!("---- two_doubled_is_four stdout ----");
    assert_eq!(f1::double(3), 7, "wrong on purpose");
}

#[test]
fn aborting_takes_only_itself_down() {
    std::process::abort();
}

#[test]
#[ignore = "cargo test does not run it, so neither does the ladder"]
fn ignored() {
    panic!("an ignored test ran");
}
"#,
    );
    write(&f.rung_file("src/lib.rs"), SOLUTION);
    let report = check::check(&mut f.ladder(), &f.cargo(), "F1").unwrap();
    let Outcome::Red { passed, failures } = &report.outcome else {
        panic!("expected red, got {report:?}");
    };
    assert_eq!(*passed, 1, "{report:?}");
    let names: Vec<&str> = failures.iter().map(|f| f.test.as_str()).collect();
    assert_eq!(
        names,
        ["aborting_takes_only_itself_down", "three_doubled_is_seven"]
    );
    assert!(
        failures[0]
            .message
            .starts_with("the test stopped without a panic"),
        "{failures:?}"
    );
    let wrong = &failures[1];
    assert!(
        wrong
            .location
            .as_deref()
            .is_some_and(|l| l.ends_with("tests/spec.rs:13:5")),
        "{wrong:?}"
    );
    assert!(wrong.message.contains("wrong on purpose"), "{wrong:?}");
    assert!(wrong.message.contains("left: 6"), "{wrong:?}");
}
