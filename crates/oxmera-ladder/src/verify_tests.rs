//! How `verify` judges runs with tests skipped for want of hardware: a
//! skip is never a pass, for the solution or for a wrong solution.

use std::path::PathBuf;

use super::*;
use crate::testlog::{Failure, Skipped, TestLog};

fn verdict() -> RungVerdict {
    RungVerdict {
        id: "C1".into(),
        tests: 0,
        problems: Vec::new(),
        caught: Vec::new(),
        needs_hardware: None,
        unchecked: Vec::new(),
    }
}

fn log(passed: &[&str], failed: &[&str], skipped: &[&str]) -> SpecRun {
    SpecRun::Ran(TestLog {
        passed: passed.iter().map(|s| s.to_string()).collect(),
        failed: failed
            .iter()
            .map(|s| Failure {
                test: s.to_string(),
                location: None,
                message: "wrong".into(),
                input: None,
            })
            .collect(),
        skipped: skipped
            .iter()
            .map(|s| Skipped {
                test: s.to_string(),
                reason: "no wgpu adapter".into(),
            })
            .collect(),
        ran: true,
    })
}

fn wrong() -> WrongSolution {
    WrongSolution {
        name: "one_element_per_thread".into(),
        path: PathBuf::from("/repo/exercises/c1/wrong/one_element_per_thread.rs"),
        misconception: "one element a thread".into(),
    }
}

#[test]
fn a_solution_run_with_skipped_tests_makes_the_rung_skipped_not_passed() {
    let mut v = verdict();
    judge(Variant::Solution, log(&["pure"], &[], &["on_gpu"]), &mut v);
    assert!(v.ok(), "{:?}", v.problems);
    assert!(v.skipped());
    assert!(!v.passed());
    assert_eq!(v.tests, 2);
    assert_eq!(v.needs_hardware.as_deref(), Some("no wgpu adapter"));
    // A skeleton whose hardware tests skip passes nothing: not vacuous.
    judge(Variant::Skeleton, log(&[], &["pure"], &["on_gpu"]), &mut v);
    assert!(v.ok(), "{:?}", v.problems);
}

#[test]
fn a_wrong_solution_only_hardware_would_catch_is_unchecked_not_passing() {
    let ladder = Ladder::from_parts(
        PathBuf::from("/repo/exercises"),
        crate::Manifest {
            tiers: Vec::new(),
            rungs: Vec::new(),
        },
        crate::Progress::default(),
    );
    let mut v = verdict();
    judge_wrong(&ladder, &wrong(), log(&["pure"], &[], &["on_gpu"]), &mut v);
    assert!(v.ok(), "{:?}", v.problems);
    assert_eq!(v.unchecked, [wrong()]);
    assert!(v.caught.is_empty());
    // Caught where a test that ran fails, skips or not.
    let mut v = verdict();
    judge_wrong(&ladder, &wrong(), log(&[], &["pure"], &["on_gpu"]), &mut v);
    assert_eq!(v.caught.len(), 1);
    assert!(v.unchecked.is_empty());
    // And a wrong solution that passes with nothing skipped is a hole.
    let mut v = verdict();
    judge_wrong(
        &ladder,
        &wrong(),
        log(&["pure", "on_gpu"], &[], &[]),
        &mut v,
    );
    assert!(matches!(
        v.problems[..],
        [Problem::WrongSolutionPasses { .. }]
    ));
}
