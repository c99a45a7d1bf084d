//! Targets: the warp width changes verdicts and simulated values, and the
//! target's limits bound the block and the shared memory. The widths tested
//! are 8 (lavapipe's subgroups on CI) and 32 (the generic default).

use oxmera_kernel::analysis::{CheckError, CheckOptions, Finding, Rule, check};
use oxmera_kernel::ir::{Dim3, Kernel, Scalar};
use oxmera_kernel::kernel;
use oxmera_kernel::launch::{LaunchConfig, LaunchError};
use oxmera_kernel::library;
use oxmera_kernel::sim::{self, Arg, Buffer, SimError, SimOptions};
use oxmera_kernel::target::{ScalarSet, Target};

fn width(w: u32) -> Target {
    Target::generic().with_warp_width(w).unwrap()
}

fn findings(k: &Kernel, block: u32, target: Target) -> Vec<Finding> {
    check(
        k,
        &CheckOptions::new(LaunchConfig::linear(1, block)).on(target),
    )
    .unwrap()
}

fn rules(k: &Kernel, block: u32, target: Target) -> Vec<Rule> {
    findings(k, block, target).iter().map(|f| f.rule).collect()
}

/// Variant 1: a barrier guarded by `warp_id() == 0`. A 32-thread block is
/// one warp of 32 (every thread passes) but four subgroups of 8 (only the
/// first passes).
#[kernel]
fn barrier_first_warp(out: &mut [f32]) {
    let t = thread_idx_x();
    if warp_id() == 0 {
        sync_threads();
    }
    out[t] = 1.0;
}

/// Variant 2: a barrier guarded by the global thread id divided by the warp
/// width the author assumed (32), compared with the *lane's* warp: the guard
/// `gid / 32 == warp_id()` holds for every thread when warps have 32 lanes
/// and only for the threads of warp 0 when they have 8.
#[kernel]
fn barrier_gid_over_32(out: &mut [f32]) {
    let gid = block_idx_x() * block_dim_x() + thread_idx_x();
    if gid / 32 == warp_id() {
        sync_threads();
    }
    out[gid] = 1.0;
}

/// Variant 3, the other direction: a full-mask ballot under
/// `thread_idx_x() / 8 == 1`. On 8-wide subgroups the guard picks exactly
/// subgroup 1, whole; on 32-wide warps it splits warp 0.
#[kernel]
fn ballot_second_eight(out: &mut [u32]) {
    let t = thread_idx_x();
    let mut b = 0u32;
    if t / 8 == 1 {
        b = ballot_sync(0xffff_ffffu32, t % 2 == 0);
    }
    out[t] = b;
}

/// Variant 4: a shuffle under `lane_id() < 16`, true for every lane of an
/// 8-wide subgroup and for half of a 32-wide warp.
#[kernel]
fn shuffle_low_lanes(x: &[f32], out: &mut [f32]) {
    let t = thread_idx_x();
    let mut v = x[t];
    if lane_id() < 16 {
        v += shfl_xor_sync(0xffff_ffffu32, v, 1u32);
    }
    out[t] = v;
}

#[test]
fn a_warp_id_guarded_barrier_is_clean_at_32_and_divergent_at_8() {
    let k = barrier_first_warp();
    assert!(findings(k, 32, Target::generic()).is_empty());
    assert!(findings(k, 32, width(32)).is_empty());
    let f = findings(k, 32, Target::lavapipe());
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].rule, Rule::DivergentBarrier);
    assert!(f[0].confirmed);
    assert_eq!(f[0].target, Target::lavapipe());
    // The lane map has one row per 8-lane subgroup: the first arrives.
    let lanes = f[0].lanes.as_ref().unwrap();
    assert_eq!(lanes.warps.len(), 4);
    assert_eq!(lanes.warps[0], "WWWWWWWW");
    assert_eq!(lanes.warps[1], "........");
    // The provenance names the width-dependent builtin.
    assert!(
        f[0].notes.iter().any(|n| n.text.contains("warp_id()")),
        "{f:#?}"
    );
    // The same verdict for any target with 8-wide warps.
    assert_eq!(rules(k, 32, width(8)), vec![Rule::DivergentBarrier]);
}

#[test]
fn a_gid_over_32_guard_is_clean_at_32_and_divergent_at_8() {
    let k = barrier_gid_over_32();
    for block in [32, 64, 128] {
        assert!(
            findings(k, block, Target::generic()).is_empty(),
            "block {block}"
        );
        assert_eq!(
            rules(k, block, Target::lavapipe()),
            vec![Rule::DivergentBarrier],
            "block {block}"
        );
    }
}

#[test]
fn a_ballot_under_tid_over_8_is_clean_at_8_and_divergent_at_32() {
    let k = ballot_second_eight();
    assert!(findings(k, 32, Target::lavapipe()).is_empty());
    let f = findings(k, 32, Target::generic());
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].rule, Rule::NonConvergentCollective);
    assert!(f[0].confirmed);
}

#[test]
fn a_shuffle_under_lane_id_below_16_is_clean_at_8_and_divergent_at_32() {
    let k = shuffle_low_lanes();
    assert!(findings(k, 64, Target::lavapipe()).is_empty());
    assert_eq!(
        rules(k, 64, Target::generic()),
        vec![Rule::NonConvergentCollective]
    );
}

#[test]
fn the_corpus_classic_changes_verdict_with_the_width() {
    let e = oxmera_kernel::registry::find("barrier_warp_guard").unwrap();
    assert!(findings((e.kernel)(), 32, Target::generic()).is_empty());
    assert_eq!(
        rules((e.kernel)(), 32, Target::lavapipe()),
        vec![Rule::DivergentBarrier]
    );
}

#[test]
fn findings_name_a_non_default_target() {
    let k = barrier_first_warp();
    let f = &findings(k, 32, Target::lavapipe())[0];
    let text = oxmera_kernel::diag::render(k, f);
    assert!(text.contains("on target lavapipe (warps of 8)"), "{text}");
    let f = &findings(barrier_first_warp(), 64, Target::generic())[0];
    let text = oxmera_kernel::diag::render(k, f);
    assert!(!text.contains("on target"), "{text}");
}

/// 40 KiB of shared memory: under the generic 48 KiB cap, over lavapipe's
/// and Apple's 32 KiB.
#[kernel]
fn shared_40k(out: &mut [f32]) {
    let s = shared::<f32>(10240);
    let t = thread_idx_x();
    s[t] = 1.0;
    sync_threads();
    out[t] = s[t];
}

#[test]
fn the_shared_memory_limit_is_the_targets() {
    let k = shared_40k();
    assert!(findings(k, 32, Target::generic()).is_empty());
    assert!(findings(k, 32, Target::amd_wave64()).is_empty());
    for t in [Target::lavapipe(), Target::apple()] {
        let f = findings(k, 32, t);
        assert_eq!(f.len(), 1, "{t}: {f:#?}");
        assert_eq!(f[0].rule, Rule::SharedOverBudget);
        assert!(
            f[0].message.contains(&format!("of target {t}")),
            "{}",
            f[0].message
        );
    }
    // The corpus's 64 KiB kernel: over the generic cap, within sm_80's
    // opt-in and exactly AMD's 64 KiB of LDS.
    let e = oxmera_kernel::registry::find("shared_64k").unwrap();
    let k = (e.kernel)();
    assert_eq!(
        rules(k, 32, Target::generic()),
        vec![Rule::SharedOverBudget]
    );
    assert!(findings(k, 32, "cuda:sm_80".parse().unwrap()).is_empty());
    assert!(findings(k, 32, Target::amd_wave64()).is_empty());
}

#[test]
fn the_block_limit_and_dtypes_are_the_targets() {
    let e = check(
        barrier_first_warp(),
        &CheckOptions::new(LaunchConfig::linear(1, 2048)).on(Target::lavapipe()),
    );
    assert!(matches!(
        e,
        Err(CheckError::Launch {
            source: LaunchError::BlockTooLarge { max: 1024, .. },
            ..
        })
    ));
    let no_f32 = Target::generic().with_dtypes(ScalarSet::ALL.without(Scalar::F32));
    let e = check(
        barrier_first_warp(),
        &CheckOptions::new(LaunchConfig::linear(1, 32)).on(no_f32),
    );
    assert!(
        matches!(
            e,
            Err(CheckError::Dtype {
                dtype: Scalar::F32,
                ..
            })
        ),
        "{e:?}"
    );
}

// ---- the simulator ----

/// Writes each thread's lane, warp and warp size.
#[kernel]
fn geometry(out: &mut [u32]) {
    let t = thread_idx_x();
    out[3 * t] = lane_id();
    out[3 * t + 1] = warp_id();
    out[3 * t + 2] = warp_size();
}

fn sim_on(k: &Kernel, block: u32, target: Target, args: &mut [Arg]) -> Result<(), SimError> {
    let opts = SimOptions {
        target,
        ..SimOptions::default()
    };
    sim::run(k, LaunchConfig::linear(1, block), args, &opts).map(|_| ())
}

#[test]
fn the_simulator_cuts_blocks_into_warps_of_the_targets_width() {
    for w in [8u32, 32] {
        let mut args = vec![Arg::Buffer(Buffer::zeros(Scalar::U32, 3 * 48))];
        sim_on(geometry(), 48, width(w), &mut args).unwrap();
        let got = args[0].buffer().unwrap().to_u32();
        for t in 0..48u32 {
            let i = 3 * t as usize;
            assert_eq!(&got[i..i + 3], &[t % w, t / w, w], "width {w}, thread {t}");
        }
    }
}

/// A warp sum by shuffles, written for any width: offsets from
/// `warp_size() / 2` down to 1.
#[kernel]
fn warp_sum(x: &[f32], out: &mut [f32]) {
    let t = thread_idx_x();
    let mut v = x[t];
    let mut off = warp_size() / 2;
    while off > 0 {
        v += shfl_xor_sync(0xffff_ffffu32, v, off);
        off /= 2;
    }
    out[t] = v;
}

#[test]
fn a_shuffle_reduction_sums_each_warp_at_widths_8_and_32() {
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    for w in [8usize, 32] {
        let mut args = vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&[0.0; 64])),
        ];
        sim_on(warp_sum(), 64, width(w as u32), &mut args).unwrap();
        let got = args[1].buffer().unwrap().to_f32();
        for (t, g) in got.iter().enumerate() {
            let base = t / w * w;
            let want: f32 = x[base..base + w].iter().sum();
            assert_eq!(*g, want, "width {w}, thread {t}");
        }
    }
}

#[test]
fn the_library_reduction_is_right_on_lavapipe() {
    for block in [64u32, 256] {
        for t in [Target::lavapipe(), Target::generic(), width(4)] {
            let out = library::demo_on("reduce_sum", Dim3::x(block), t, 1)
                .unwrap()
                .unwrap();
            assert!(out.passed, "{t} block {block}: error {}", out.max_abs_err);
        }
    }
}

#[test]
fn every_library_kernel_is_clean_and_right_on_lavapipe() {
    for e in library::entries() {
        let k = (e.kernel)();
        let blocks = if k.launch.blocks.is_empty() {
            vec![Dim3::x(32)]
        } else {
            k.launch.blocks.clone()
        };
        for block in blocks {
            let d = library::demos_launch(e.name, block);
            let f = check(k, &CheckOptions::new(d).on(Target::lavapipe())).unwrap();
            // The shared-memory budget is the only thing lavapipe may refuse.
            if f.iter().any(|f| f.rule == Rule::SharedOverBudget) {
                continue;
            }
            // `flip` is the tutorial's fragile kernel: its `warp_id() == 0`
            // barrier guard is right only when one warp is the block, which a
            // 32-thread block is not on 8-wide subgroups.
            if e.name == "flip" {
                let r: Vec<Rule> = f.iter().map(|f| f.rule).collect();
                assert!(
                    !r.is_empty() && r.iter().all(|r| *r == Rule::DivergentBarrier),
                    "flip at {d}: {r:?}"
                );
                continue;
            }
            assert!(f.is_empty(), "{} at {d}: {f:#?}", e.name);
            let out = library::demo_on(e.name, block, Target::lavapipe(), 1)
                .unwrap()
                .unwrap();
            assert!(out.passed, "{} at block {block}", e.name);
        }
    }
}

#[test]
fn ballot_and_votes_see_only_the_warp() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(Scalar::U32, 32))];
    sim_on(ballot_second_eight(), 32, Target::lavapipe(), &mut args).unwrap();
    let got = args[0].buffer().unwrap().to_u32();
    // Subgroup 1 (threads 8..16) votes; lanes 0, 2, 4, 6 are even threads.
    for (t, g) in got.iter().enumerate() {
        let want = if (8..16).contains(&t) { 0b0101_0101 } else { 0 };
        assert_eq!(*g, want, "thread {t}");
    }
}

#[test]
fn a_width_dependent_barrier_is_a_witness_at_8_and_runs_at_32() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(Scalar::F32, 32))];
    sim_on(barrier_first_warp(), 32, Target::generic(), &mut args).unwrap();
    match sim_on(barrier_first_warp(), 32, Target::lavapipe(), &mut args) {
        Err(SimError::Report(r)) => {
            assert_eq!(r.kind_name(), "barrier");
            let text = sim::render_report(barrier_first_warp(), &r);
            assert!(text.contains("on target lavapipe (warps of 8)"), "{text}");
            assert!(text.contains("warp  1: ........"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn warps_wider_than_32_are_a_typed_error() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(Scalar::F32, 64))];
    let e = sim_on(barrier_first_warp(), 64, Target::amd_wave64(), &mut args);
    assert_eq!(
        e,
        Err(SimError::WarpTooWide {
            target: "wave64".into(),
            width: 64
        })
    );
    // The analysis still runs at 64: `gid / 32 == warp_id()` splits a wave.
    assert_eq!(
        rules(barrier_gid_over_32(), 64, Target::amd_wave64()),
        vec![Rule::DivergentBarrier]
    );
}

/// Clean on lavapipe (the guard picks whole 8-wide subgroups), so the gate
/// accepts it; on the generic target it would not compile.
#[kernel(block = [32, 64], target = "lavapipe")]
fn ballot_for_lavapipe(out: &mut [u32]) {
    let t = thread_idx_x();
    let mut b = 0u32;
    if t / 8 == 1 {
        b = ballot_sync(0xffff_ffffu32, t % 2 == 0);
    }
    out[t] = b;
}

/// 64 KiB of shared memory, accepted for compute capability 8.0.
#[kernel(block = [64], cc = 80)]
fn tile_for_sm80(out: &mut [f32]) {
    let s = shared::<f32>(16384);
    let i = thread_idx_x();
    s[i] = 1.0;
    sync_threads();
    out[i] = s[i];
}

#[test]
fn the_attribute_records_the_target_it_checked() {
    assert_eq!(
        ballot_for_lavapipe().launch.target,
        Some(Target::lavapipe())
    );
    assert_eq!(
        tile_for_sm80().launch.target,
        Some("cuda:sm_80".parse().unwrap())
    );
    assert_eq!(barrier_first_warp().launch.target, None);
    // Checked on its own target it is clean; on the generic one it is not.
    assert!(findings(ballot_for_lavapipe(), 32, Target::lavapipe()).is_empty());
    assert_eq!(
        rules(ballot_for_lavapipe(), 32, Target::generic()),
        vec![Rule::NonConvergentCollective]
    );
}

#[test]
fn every_corpus_case_checks_and_simulates_at_every_width_without_panicking() {
    // Not a verdict test (the expectations file holds those): the analysis
    // and the simulator must give an answer, never panic, at every width.
    for c in oxmera_kernel::corpus::cases() {
        let e = oxmera_kernel::registry::find(&c.kernel).unwrap();
        for w in [1u32, 4, 8, 16, 32, 64] {
            let t = width(w);
            check((e.kernel)(), &CheckOptions::new(c.launch).on(t))
                .unwrap_or_else(|err| panic!("{} on {t}: {err}", c.kernel));
            let r = oxmera_kernel::corpus::simulate_on(&c.kernel, c.launch, t, 1).unwrap();
            match r {
                Ok(_) | Err(SimError::Report(_)) => assert!(w <= 32),
                Err(SimError::WarpTooWide { width, .. }) => assert_eq!(width, 64),
                Err(other) => panic!("{} on {t}: {other}", c.kernel),
            }
        }
    }
}
