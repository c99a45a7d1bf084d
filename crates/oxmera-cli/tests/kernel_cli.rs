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

/// The README's kernel, written to a fresh directory, checked and run by
/// the very commands the README shows.
#[test]
fn the_readmes_kernel_file_is_checked_and_run_by_the_readmes_commands() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let section = &readme[readme
        .find("## GPU kernels without a GPU")
        .expect("the section")..];
    let fenced = |lang: &str| -> String {
        let start = section
            .find(&format!("```{lang}\n"))
            .expect("a fenced block")
            + lang.len()
            + 4;
        section[start..start + section[start..].find("```").expect("its end")].to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("my_kernels.rs"), fenced("rust")).unwrap();
    let commands: Vec<Vec<String>> = fenced("sh")
        .lines()
        .filter_map(|l| l.strip_prefix("cargo run -q -p oxmera-cli -- "))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    assert_eq!(commands.len(), 3, "{commands:?}");
    let mut outputs = Vec::new();
    for args in &commands {
        let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}\n{text}\n{err}");
        outputs.push(text);
    }
    for block in [64, 128, 256] {
        let clean = format!("add: clean at launch grid (1, 1, 1) block ({block}, 1, 1)");
        assert!(outputs[0].contains(&clean), "{}", outputs[0]);
    }
    assert!(
        outputs[1].contains("out = [1.000000, 2.000000, 3.000000"),
        "{}",
        outputs[1]
    );
    // Every one of the 1000 elements was computed: out[i] = i + 1.
    let bytes = std::fs::read(dir.path().join("out.npy")).unwrap();
    let data = &bytes[10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize..];
    let out: Vec<f32> = data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(out.len(), 1000);
    assert!(out.iter().enumerate().all(|(i, v)| *v == i as f32 + 1.0));
    // The PTX, each statement under its source line.
    assert!(outputs[2].contains(".target sm_90"), "{}", outputs[2]);
    assert!(outputs[2].contains(".reqntid 64, 1, 1"), "{}", outputs[2]);
    assert!(
        outputs[2].contains("// 8: out[i] = a[i] + b[i];"),
        "{}",
        outputs[2]
    );
}

#[test]
fn ptx_is_written_only_for_a_clean_launch_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    // flip's barrier is divergent at block 64 on every NVIDIA part.
    let (code, out, err) = in_dir(dir.path(), &["kernel", "ptx", "flip", "--block", "64"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("OXK001") && err.contains("not written"),
        "{err}"
    );
    let (code, out, _) = in_dir(
        dir.path(),
        &["kernel", "ptx", "flip", "--block", "64", "--no-check"],
    );
    assert_eq!(code, 0);
    assert!(out.contains("bar.sync 0;"), "{out}");
    // At block 32 (one warp) the same kernel is clean.
    let (code, out, _) = in_dir(dir.path(), &["kernel", "ptx", "flip", "--block", "32"]);
    assert_eq!(code, 0);
    assert!(out.contains(".reqntid 32, 1, 1"), "{out}");
}

#[test]
fn assembling_without_ptxas_says_where_to_get_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(["kernel", "ptx", "add", "--assemble"])
        .env("OXMERA_PTXAS", "/nonexistent/ptxas")
        .output()
        .expect("run oxmera");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ptxas not found") && err.contains("nvidia-cuda-nvcc"),
        "{err}"
    );
}

fn in_dir(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run oxmera");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_files_findings_and_errors_point_into_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.rs"),
        "#[kernel(block = [64])]\nfn flip(x: &mut [f32]) {\n    let s = shared::<f32>(64);\n    \
         let t = thread_idx_x();\n    s[t] = x[t];\n    if warp_id() == 0 {\n        \
         sync_threads();\n    }\n    x[t] = s[63 - t];\n}\n\n\
         #[kernel]\nfn twice(x: &mut [u32]) {\n    x[thread_idx_x()] *= 2;\n}\n",
    )
    .unwrap();
    // The analysis: a finding at the file's line, exit 1; `twice` declares
    // no block, so without --block it is named as unchecked.
    let (code, out, err) = in_dir(dir.path(), &["kernel", "check", "k.rs"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("--> k.rs:7:9"), "{out}");
    assert!(out.contains(" 7 |         sync_threads();"), "{out}");
    assert!(err.contains("`twice` declares no block sizes"), "{err}");
    let (code, out, _) = in_dir(
        dir.path(),
        &["kernel", "check", "k.rs", "twice", "--block", "32"],
    );
    assert_eq!(code, 0, "{out}");
    // The simulator: the same kernel stops with a witness in the file (warp
    // 1 runs past the barrier warp 0 waits at and reads what warp 0 wrote).
    let (code, out, _) = in_dir(
        dir.path(),
        &["kernel", "run", "k.rs", "flip", "--arg", "x=iota:64"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[sim:shared-race]"), "{out}");
    assert!(out.contains("--> k.rs:9:12"), "{out}");
    let (code, out, _) = in_dir(
        dir.path(),
        &[
            "kernel",
            "run",
            "k.rs",
            "twice",
            "--block",
            "4",
            "--arg",
            "x=1,2,3,4",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("x = [2, 4, 6, 8]"), "{out}");
    // One thread's path, with what it wrote.
    let (code, out, _) = in_dir(
        dir.path(),
        &[
            "kernel",
            "run",
            "k.rs",
            "twice",
            "--block",
            "4",
            "--arg",
            "x=1,2,3,4",
            "--trace",
            "2",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("trace of thread 2 (block (0, 0, 0)"), "{out}");
    assert!(
        out.contains("x[thread_idx_x()] *= 2;    → x[2] = 6"),
        "{out}"
    );
    // Usage errors: a missing argument, an unknown kernel, a second name
    // after a built-in, a file that does not lower.
    let (code, _, err) = in_dir(
        dir.path(),
        &["kernel", "run", "k.rs", "twice", "--block", "4"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("needs an --arg for `x: &mut [u32]`"), "{err}");
    let (code, _, err) = in_dir(dir.path(), &["kernel", "ir", "k.rs", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("its kernels: flip, twice"), "{err}");
    let (code, _, err) = in_dir(
        dir.path(),
        &["kernel", "check", "flip", "extra", "--block", "32"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("one name too many"), "{err}");
    std::fs::write(
        dir.path().join("bad.rs"),
        "#[kernel]\nfn k(x: &mut [f32]) -> f32 {\n}\n",
    )
    .unwrap();
    let (code, _, err) = in_dir(dir.path(), &["kernel", "check", "bad.rs", "--block", "32"]);
    assert_eq!(code, 2);
    assert!(err.contains("error: kernels return nothing"), "{err}");
    assert!(err.contains("--> bad.rs:2:"), "{err}");
}

#[test]
fn a_block_no_target_runs_is_a_usage_error_not_a_panic() {
    // Issue reproducers: --block 0 divided by zero in the demo, a huge block
    // overflowed or asked for gigabytes. Both kernel families, both sizes.
    for kernel in ["flip", "reduce_sum", "barrier_warp_guard"] {
        for block in ["0", "4294967295", "65536"] {
            let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
                .args(["kernel", "run", kernel, "--block", block])
                .output()
                .expect("run oxmera");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{kernel} --block {block}: {stderr}"
            );
            assert!(
                stderr.contains("zero extent") || stderr.contains("the most a block may have"),
                "{kernel} --block {block}: {stderr}"
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
}

#[test]
fn space_lists_flips_configurations_in_order() {
    let (code, out) = oxmera(&["kernel", "space", "flip"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("promises (the contract, proven at compile time): no launch"));
    let listed: Vec<&str> = out
        .lines()
        .filter_map(|l| l.trim().split_once("  ").map(|(_, rest)| rest.trim()))
        .filter(|rest| rest.starts_with("block"))
        .collect();
    assert_eq!(listed.len(), 4, "{out}");
    assert!(listed[0].starts_with("block 32 ") && listed[3].starts_with("block 256 "));
    // Per warp width: lavapipe's subgroups of 8 get their own space.
    let (_, out) = oxmera(&["kernel", "space", "flip", "--target", "lavapipe"]);
    assert!(out.contains("warps of 8): 4 configurations"), "{out}");
    assert!(out.contains("block 8 "), "{out}");
}

#[test]
fn tune_on_the_simulator_refuses_flips_unsafe_blocks_with_the_finding() {
    let (code, out) = oxmera(&["kernel", "tune", "flip", "--device", "sim", "--no-cache"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("a model, not a time"), "{out}");
    for block in ["64", "128", "256"] {
        assert!(
            out.lines()
                .any(|l| l.contains(&format!("block {block} "))
                    && l.contains("refused OXK001 at 21:9")),
            "{out}"
        );
    }
    // The finding itself, as `kernel check` prints it.
    assert!(out.contains("error[OXK001]"), "{out}");
    assert!(out.contains("flip.rs:21:9"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("block 32 ") && l.contains("safe"))
    );
}

#[test]
fn tune_reports_refused_but_faster_and_json() {
    let (code, out) = oxmera(&["kernel", "tune", "stencil3_tiled", "--no-cache"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("refused but faster"), "{out}");
    assert!(
        out.contains("TILE=16384") && out.contains("OXK004"),
        "{out}"
    );
    let (code, out) = oxmera(&["kernel", "tune", "stencil3_tiled", "--json", "--no-cache"]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["best"], "block 64, TILE=4096");
    let faster = v["refused_but_faster"].as_array().unwrap();
    assert!(!faster.is_empty());
    let rows = v["configurations"].as_array().unwrap();
    assert_eq!(rows.len(), 12);
    let refused = rows
        .iter()
        .find(|r| r["configuration"] == faster[0])
        .unwrap();
    assert_eq!(refused["detail"]["code"], "OXK004");
}

/// `oxmera` with the tuning cache at `cache`: (exit code, stdout, stderr).
fn oxmera_cached(args: &[&str], cache: &std::path::Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(args)
        .env("OXMERA_TUNE_CACHE", cache)
        .output()
        .expect("run oxmera");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn tune_all_fills_the_cache_and_a_corrupt_one_is_only_a_warning() {
    let dir = std::env::temp_dir().join(format!("oxmera-tune-cli-{}", std::process::id()));
    let cache = dir.join("cache.txt");
    let (code, out, err) = oxmera_cached(&["kernel", "tune", "--all", "--device", "sim"], &cache);
    assert_eq!(code, 0, "{out}{err}");
    for kernel in ["flip", "matmul_tiled", "stencil3_tiled"] {
        assert!(out.contains(&format!("{kernel} ")), "{out}");
    }
    let text = std::fs::read_to_string(&cache).unwrap();
    assert!(text.starts_with("oxmera-tune-cache 1\n"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("\tstencil3_tiled\t") && l.contains("\t64,1,1\t4096\t")),
        "{text}"
    );
    // Corrupt: warned about, rewritten, never a crash.
    std::fs::write(&cache, "not a cache").unwrap();
    let (code, out, err) = oxmera_cached(&["kernel", "tune", "flip"], &cache);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("warning: tuning cache") && err.contains("corrupt at line 1"),
        "{err}"
    );
    assert!(
        std::fs::read_to_string(&cache)
            .unwrap()
            .contains("\tflip\t")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `oxmera kernel tune ... --device cuda`: (exit code, stdout, stderr),
/// never touching the user's cache.
fn tune_on_cuda(kernel: &str, json: bool) -> (i32, String, String) {
    let mut args = vec!["kernel", "tune", kernel, "--device", "cuda", "--no-cache"];
    if json {
        args.push("--json");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(&args)
        .output()
        .expect("run oxmera");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether this test binary's build can reach an NVIDIA GPU.
fn a_cuda_gpu_is_here() -> bool {
    #[cfg(feature = "cuda")]
    {
        oxmera_cuda::probe().is_ok_and(|gpus| !gpus.is_empty())
    }
    #[cfg(not(feature = "cuda"))]
    {
        false
    }
}

/// A build without the `cuda` feature refuses `--device cuda` before
/// anything runs, says how to build it in, and exits 2 (the CLI's code for
/// an unavailable backend).
#[test]
fn tune_on_cuda_in_a_build_without_it_says_how_to_build_it() {
    if cfg!(feature = "cuda") {
        return;
    }
    let (code, out, err) = tune_on_cuda("matmul_tiled", false);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "nothing was tuned: {out}");
    assert!(
        err.contains("cuda:0: this build has no cuda support") && err.contains("--features cuda"),
        "{err}"
    );
}

/// A build with the feature on a machine without a driver (CI's) refuses
/// with the driver's BackendUnavailable reason, exit 2 — not a panic, and
/// not the feature's message.
#[test]
fn tune_on_cuda_without_a_driver_says_the_driver_is_missing() {
    if !cfg!(feature = "cuda") || a_cuda_gpu_is_here() {
        return;
    }
    let (code, out, err) = tune_on_cuda("matmul_tiled", false);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "nothing was tuned: {out}");
    assert!(err.contains("no CUDA driver on this machine"), "{err}");
    assert!(!err.contains("--features cuda"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Where a GPU is (the GPU check script's machine): flip tuned on it —
/// blocks past one warp refused by proof and never launched, block 32
/// validated on the device and timed by CUDA events; the JSON names the
/// part by its identity.
#[test]
fn tune_on_cuda_where_a_gpu_is_times_the_safe_configurations() {
    if !a_cuda_gpu_is_here() {
        return;
    }
    let (code, out, err) = tune_on_cuda("flip", true);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["target"].as_str().unwrap().starts_with("cuda:sm_"), "{v}");
    assert!(v["device"].as_str().unwrap().starts_with("cuda:0 ("), "{v}");
    assert_eq!(v["best"], "block 32");
    let rows = v["configurations"].as_array().unwrap();
    for r in rows {
        if r["configuration"] == "block 32" {
            assert_eq!(r["verdict"], "safe", "{r}");
            assert!(r["time_s"]["median"].as_f64().unwrap() > 0.0, "{r}");
        } else {
            assert_eq!(r["detail"]["code"], "OXK001", "{r}");
            assert!(r["time_s"].is_null(), "refused, so never timed: {r}");
        }
    }
}

#[test]
fn a_generic_files_instances_are_checked_each_and_run_by_dtype() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("g.rs"),
        "#[kernel(block = [32], dtypes(T = [f32, i32]))]\n\
         fn scale<T: Number>(x: &mut [T], s: T) {\n    \
         let i = thread_idx_x();\n    x[i] = x[i] * s;\n}\n",
    )
    .unwrap();
    // `check` with no dtype: one verdict line per instance.
    let (code, out, err) = in_dir(dir.path(), &["kernel", "check", "g.rs", "scale"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("scale<f32>: clean at launch grid (1, 1, 1) block (32, 1, 1)\n"),
        "{out}"
    );
    assert!(
        out.contains("scale<i32>: clean at launch grid (1, 1, 1) block (32, 1, 1)\n"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 2, "{out}");
    // `run` needs a choice; the instance's element type reads the specs:
    // iota 0, 1, 2, .. times 3 in i32.
    let (code, _, err) = in_dir(
        dir.path(),
        &[
            "kernel",
            "run",
            "g.rs",
            "scale",
            "--arg",
            "x=iota:32",
            "--arg",
            "s=3",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "`scale` is generic; choose an instance with --dtype (scale<f32>, scale<i32>)"
        ),
        "{err}"
    );
    let (code, out, err) = in_dir(
        dir.path(),
        &[
            "kernel",
            "run",
            "g.rs",
            "scale",
            "--dtype",
            "i32",
            "--block",
            "32",
            "--arg",
            "x=iota:32",
            "--arg",
            "s=3",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("scale<i32>"), "{out}");
    assert!(out.contains("0, 3, 6, 9, 12, 15, 18, 21"), "{out}");
    let (code, _, err) = in_dir(dir.path(), &["kernel", "ir", "g.rs", "--dtype", "u32"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "`scale` has no instance for --dtype u32; its instances: scale<f32>, scale<i32>"
        ),
        "{err}"
    );
    // The instance by its name: the IR of the f32 one only.
    let (code, out, _) = in_dir(dir.path(), &["kernel", "ir", "g.rs", "scale<f32>"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("scale<f32>") && !out.contains("scale<i32>"),
        "{out}"
    );
}

#[test]
fn a_generic_library_kernel_runs_its_demo_per_dtype() {
    let (code, out) = oxmera(&["kernel", "check", "iota"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("iota<i32>: clean at launch grid (1, 1, 1) block (64, 1, 1)"),
        "{out}"
    );
    assert!(
        out.contains("iota<u32>: clean at launch grid (1, 1, 1) block (256, 1, 1)"),
        "{out}"
    );
    let (code, out) = oxmera(&["kernel", "run", "iota", "--dtype", "u32"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("iota<u32>"), "{out}");
    let (code, out) = oxmera(&["kernel", "wgsl", "axpy", "--dtype", "f32"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fn axpy_f32("), "{out}");
    assert_eq!(oxmera(&["kernel", "wgsl", "flip", "--dtype", "f32"]).0, 2);
}

#[test]
fn shared_bytes_size_a_dynamic_shared_array_in_check_and_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("d.rs"),
        "#[kernel]\nfn rev(x: &mut [f32]) {\n    let s = shared_dynamic::<f32>();\n    \
         let t = thread_idx_x();\n    s[t] = x[t];\n    sync_threads();\n    \
         x[t] = s[31 - t];\n}\n",
    )
    .unwrap();
    // 64 KiB of dynamic memory pass the generic target's 48 KiB: OXK004.
    let (code, out, _) = in_dir(
        dir.path(),
        &[
            "kernel",
            "check",
            "d.rs",
            "--block",
            "32",
            "--shared-bytes",
            "65536",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("OXK004") && out.contains("65536 bytes"),
        "{out}"
    );
    let (code, out, _) = in_dir(
        dir.path(),
        &[
            "kernel",
            "check",
            "d.rs",
            "--block",
            "32",
            "--shared-bytes",
            "128",
        ],
    );
    assert_eq!(code, 0, "{out}");
    // 128 bytes hold the 32 floats; 64 hold 16, and thread 16 stores past them.
    let run = |bytes: &str| {
        in_dir(
            dir.path(),
            &[
                "kernel",
                "run",
                "d.rs",
                "--block",
                "32",
                "--arg",
                "x=iota:32",
                "--shared-bytes",
                bytes,
            ],
        )
    };
    let (code, out, _) = run("128");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("[31.000000, 30.000000, 29.000000"), "{out}");
    let (code, out, _) = run("64");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("`s[16]` (length 16) by lane 16 (thread 16)"),
        "{out}"
    );
}
