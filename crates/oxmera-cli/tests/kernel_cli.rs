//! `oxmera kernel check` exit codes, run on the built binary.

use std::process::Command;

fn oxmera(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(args)
        .output()
        .expect("run oxmera");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn flip_is_clean_at_block_32() {
    let (code, out) = oxmera(&["kernel", "check", "flip", "--block", "32"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("clean"), "{out}");
}

#[test]
fn flip_fails_at_block_64_with_span_and_lane_map() {
    let (code, out) = oxmera(&["kernel", "check", "flip", "--block", "64"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[OXK001]"), "{out}");
    assert!(out.contains("flip.rs:21:9"), "{out}");
    assert!(
        out.contains(&format!("warp  1: {}", ".".repeat(32))),
        "{out}"
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(
        oxmera(&["kernel", "check", "no_such_kernel", "--block", "32"]).0,
        2
    );
    assert_eq!(oxmera(&["kernel", "check", "flip", "--block", "4096"]).0, 2);
    assert_eq!(
        oxmera(&["kernel", "check", "flip", "--block", "64", "--cc", "1.0"]).0,
        2
    );
    assert_eq!(oxmera(&["kernel", "explain", "OXK999"]).0, 2);
}

#[test]
fn explain_prints_the_page() {
    let (code, out) = oxmera(&["kernel", "explain", "OXK001"]);
    assert_eq!(code, 0);
    assert!(out.contains("RC001"), "{out}");
}
