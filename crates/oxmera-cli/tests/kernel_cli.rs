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
fn the_verdict_depends_on_the_targets_warp_width() {
    // One warp of 32 is the whole 32-thread block; four subgroups of 8 are not.
    let (code, out) = oxmera(&[
        "kernel", "check", "flip", "--block", "32", "--target", "lavapipe",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[OXK001]"), "{out}");
    assert!(out.contains("on target lavapipe (warps of 8)"), "{out}");
    assert!(out.contains("warp  0: WWWWWWWW\n"), "{out}");
    let (code, out) = oxmera(&[
        "kernel", "check", "flip", "--block", "32", "--target", "generic",
    ]);
    assert_eq!(code, 0, "{out}");
    // The other direction: `lane_id() < 16` is every lane of an 8-wide warp.
    let (code, out) = oxmera(&["kernel", "check", "ballot_divergent", "--block", "32"]);
    assert_eq!(code, 1, "{out}");
    let (code, out) = oxmera(&[
        "kernel",
        "check",
        "ballot_divergent",
        "--block",
        "32",
        "--target",
        "lavapipe",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("clean"), "{out}");
    assert_eq!(
        oxmera(&[
            "kernel", "check", "flip", "--block", "32", "--target", "tpu"
        ])
        .0,
        2
    );
}

#[test]
fn run_simulates_on_the_target() {
    let (code, out) = oxmera(&[
        "kernel",
        "run",
        "reduce_sum",
        "--block",
        "64",
        "--target",
        "lavapipe",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("matches the host result"), "{out}");
    assert_eq!(
        oxmera(&[
            "kernel",
            "run",
            "reduce_sum",
            "--block",
            "64",
            "--target",
            "wave64"
        ])
        .0,
        2
    );
}

#[test]
fn explain_prints_the_page() {
    let (code, out) = oxmera(&["kernel", "explain", "OXK001"]);
    assert_eq!(code, 0);
    assert!(out.contains("RC001"), "{out}");
}

#[test]
fn wgsl_prints_the_shader_for_the_target_and_block() {
    let (code, out) = oxmera(&[
        "kernel",
        "wgsl",
        "reduce_sum",
        "--block",
        "128",
        "--target",
        "lavapipe",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("@compute @workgroup_size(128, 1, 1)"), "{out}");
    assert!(out.contains("subgroupShuffle("), "{out}");
    assert!(out.contains("linear % 8u"), "lavapipe's warps of 8: {out}");
    assert_eq!(oxmera(&["kernel", "wgsl", "no_such_kernel"]).0, 2);
}

#[test]
fn run_on_a_device_says_how_to_get_one_in_a_build_without_it() {
    if cfg!(feature = "wgpu") {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(["kernel", "run", "add", "--block", "64", "--device", "wgpu"])
        .output()
        .expect("run oxmera");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--features wgpu"), "{err}");
}
