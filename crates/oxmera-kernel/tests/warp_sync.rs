//! `sync_warp(mask)` (CUDA's `__syncwarp`), `thread_fence()` (CUDA's
//! `__threadfence`) and a `for` loop's step at run time: what the analysis,
//! the simulator and both emitters make of each. Warp widths 8
//! (lavapipe's subgroups) and 32 (the generic target), where the width
//! decides the verdict.

use oxmera_kernel::analysis::{CheckOptions, Finding, Rule, check};
use oxmera_kernel::emit::EmitError;
use oxmera_kernel::emit::ptx::{PtxOptions, assemble, find_ptxas, ptx};
use oxmera_kernel::emit::wgsl::{WgslOptions, wgsl};
use oxmera_kernel::ir::{Dim3, Kernel, Scalar};
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, SimError, SimOptions};
use oxmera_kernel::target::Target;

fn width(w: u32) -> Target {
    Target::generic().with_warp_width(w).unwrap()
}

fn findings(k: &Kernel, block: u32, w: u32) -> Vec<Finding> {
    check(
        k,
        &CheckOptions::new(LaunchConfig::linear(1, block)).on(width(w)),
    )
    .unwrap()
}

/// Simulates `k` on one block with a `u32` buffer of `block` zeros.
fn simulate(k: &Kernel, block: u32, w: u32) -> Result<Vec<u32>, SimError> {
    let mut args = vec![Arg::Buffer(Buffer::zeros(Scalar::U32, block as usize))];
    let opts = SimOptions {
        target: width(w),
        ..SimOptions::default()
    };
    sim::run(k, LaunchConfig::linear(1, block), &mut args, &opts)?;
    Ok(args[0].buffer().unwrap().to_u32())
}

/// The lane map of a simulator's collective report, or its kind.
fn sim_witness(r: Result<Vec<u32>, SimError>) -> String {
    match r {
        Err(SimError::Report(r)) => match &r.kind {
            sim::ReportKind::Collective { name, lanes } => format!("{name}: {lanes}"),
            other => format!("{other:?}"),
        },
        other => panic!("expected a report, got {other:?}"),
    }
}

/// Buggy at 32: the full mask names lanes 16..32, which the branch keeps
/// out. At 8 every lane is below 16, so all reach it: clean.
#[kernel]
fn full_mask_under_half(out: &mut [u32]) {
    let l = lane_id();
    if l < 16 {
        sync_warp(0xffff_ffffu32);
    }
    out[thread_idx_x()] = l;
}

/// Clean at both widths: the mask names the lanes that reach it (at 8, bits
/// 8..16 name no lane and the low 8 are all there).
#[kernel]
fn low_half_mask_under_half(out: &mut [u32]) {
    let l = lane_id();
    if l < 16 {
        sync_warp(0x0000_ffffu32);
    }
    out[thread_idx_x()] = l;
}

/// Buggy at both widths: lanes 4..8 are named but never arrive.
#[kernel]
fn low_byte_mask_under_four(out: &mut [u32]) {
    let l = lane_id();
    if l < 4 {
        sync_warp(0xffu32);
    }
    out[thread_idx_x()] = l;
}

/// Clean at both widths: a warp-uniform condition keeps whole warps together.
#[kernel]
fn full_mask_under_first_warp(out: &mut [u32]) {
    if warp_id() == 0 {
        sync_warp(0xffff_ffffu32);
    }
    out[thread_idx_x()] = warp_id();
}

#[test]
fn a_full_mask_under_lane_below_16_is_oxk002_at_32_and_clean_at_8() {
    let f = findings(full_mask_under_half(), 32, 32);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].rule, Rule::NonConvergentCollective);
    assert!(f[0].confirmed);
    assert!(f[0].message.contains("`sync_warp`"), "{}", f[0].message);
    assert_eq!(
        f[0].lanes.as_ref().unwrap().warps[0],
        format!("{}{}", "W".repeat(16), ".".repeat(16))
    );
    assert!(findings(full_mask_under_half(), 32, 8).is_empty());
    // The simulator agrees, with the same lanes.
    assert_eq!(
        sim_witness(simulate(full_mask_under_half(), 32, 32)),
        format!("sync_warp: {}{}", "W".repeat(16), ".".repeat(16))
    );
    let out = simulate(full_mask_under_half(), 32, 8).unwrap();
    assert_eq!(out, (0..32).map(|t| t % 8).collect::<Vec<_>>());
}

#[test]
fn a_mask_of_the_lanes_that_arrive_is_clean_at_both_widths() {
    for w in [8, 32] {
        assert!(
            findings(low_half_mask_under_half(), 64, w).is_empty(),
            "width {w}"
        );
        assert!(
            findings(full_mask_under_first_warp(), 64, w).is_empty(),
            "width {w}"
        );
        simulate(low_half_mask_under_half(), 64, w).unwrap();
        let out = simulate(full_mask_under_first_warp(), 64, w).unwrap();
        assert_eq!(out, (0..64).map(|t| t / w).collect::<Vec<_>>());
    }
}

#[test]
fn a_mask_naming_lanes_that_never_arrive_is_oxk002_at_both_widths() {
    for w in [8u32, 32] {
        let f = findings(low_byte_mask_under_four(), 32, w);
        assert_eq!(f.len(), 1, "width {w}: {f:?}");
        assert_eq!(f[0].rule, Rule::NonConvergentCollective);
        let row = format!("WWWW....{}", "-".repeat(w as usize - 8));
        assert_eq!(f[0].lanes.as_ref().unwrap().warps[0], row);
        assert_eq!(
            sim_witness(simulate(low_byte_mask_under_four(), 32, w)),
            format!("sync_warp: {row}")
        );
    }
}

/// Every lane arrives, but the mask leaves lanes 16..32 out: CUDA requires
/// each caller's own bit in the mask.
#[kernel]
fn unnamed_lanes_arrive(out: &mut [u32]) {
    sync_warp(0x0000_ffffu32);
    out[thread_idx_x()] = 1;
}

#[test]
fn the_simulator_refuses_a_lane_that_arrives_unnamed() {
    // The analysis checks that the named lanes arrive (OXK002), as for every
    // collective; the simulator also refuses an arriving lane the mask does
    // not name (`!`).
    assert_eq!(
        sim_witness(simulate(unnamed_lanes_arrive(), 32, 32)),
        format!("sync_warp: {}{}", "W".repeat(16), "!".repeat(16))
    );
    simulate(unnamed_lanes_arrive(), 32, 8).unwrap();
}

/// A store, a fence, then a flag: the fence is no verdict and no effect in
/// the simulator, whose memory is sequentially consistent.
#[kernel]
fn fenced_publish(out: &mut [u32]) {
    let t = thread_idx_x();
    out[t] = t + 1;
    thread_fence();
    sync_warp(0xffff_ffffu32);
    out[t] += 1;
}

#[test]
fn a_fence_has_no_verdict_and_no_effect_in_the_simulator() {
    for w in [8, 32] {
        assert!(findings(fenced_publish(), 64, w).is_empty());
        let out = simulate(fenced_publish(), 64, w).unwrap();
        assert_eq!(out, (0..64).map(|t| t + 2).collect::<Vec<_>>());
    }
}

#[test]
fn ptx_writes_bar_warp_sync_and_membar_gl_and_ptxas_assembles_them() {
    for k in [fenced_publish(), low_half_mask_under_half()] {
        for part in ["7.0", "9.0"] {
            let p = ptx(k, &PtxOptions::new(part.parse().unwrap(), Dim3::x(64))).unwrap();
            assert!(p.source.contains("bar.warp.sync "), "{}", p.source);
            if let Some(a) = find_ptxas() {
                assemble(&a, &p).unwrap_or_else(|e| panic!("sm_{part}: {e}\n{}", p.source));
            } else if std::env::var_os("OXMERA_REQUIRE_PTXAS").is_some() {
                panic!("OXMERA_REQUIRE_PTXAS is set but ptxas is missing");
            }
        }
    }
    let p = ptx(
        fenced_publish(),
        &PtxOptions::new("8.0".parse().unwrap(), Dim3::x(64)),
    )
    .unwrap();
    assert!(p.source.contains("membar.gl;"), "{}", p.source);
}

#[test]
fn wgsl_refuses_both_naming_the_construct_and_the_target() {
    for (k, construct) in [
        (low_half_mask_under_half(), "`sync_warp(mask)`"),
        (fenced_publish(), "`thread_fence()`"),
    ] {
        let opts = WgslOptions::new(Dim3::x(64)).with_target(Target::lavapipe());
        match wgsl(k, &opts) {
            Err(e @ EmitError::Unsupported { .. }) => {
                let text = e.to_string();
                assert!(text.contains(construct), "{text}");
                assert!(text.contains("for target lavapipe"), "{text}");
            }
            other => panic!("{construct}: {other:?}"),
        }
    }
}

/// `for` with a step read from a buffer: 0 stops the simulator at once.
#[kernel]
fn stepped(steps: &[i32], out: &mut [i32]) {
    let t = thread_idx_x();
    let mut n = 0;
    for _j in (0i32..10).step_by(steps[t]) {
        n += 1;
    }
    out[t] = n;
}

fn run_stepped(steps: &[i32]) -> Result<Vec<i32>, SimError> {
    let mut args = vec![
        Arg::Buffer(Buffer::from_i32(steps)),
        Arg::Buffer(Buffer::zeros(Scalar::I32, steps.len())),
    ];
    sim::run(
        stepped(),
        LaunchConfig::linear(1, steps.len() as u32),
        &mut args,
        &SimOptions::default(),
    )?;
    Ok(args[1].buffer().unwrap().to_i32())
}

#[test]
fn a_zero_step_stops_the_simulator_at_once_naming_the_thread() {
    let mut steps = vec![1; 32];
    steps[5] = 0;
    match run_stepped(&steps) {
        Err(SimError::Report(r)) => {
            assert_eq!(r.kind_name(), "zero-step");
            assert_eq!(r.kind, sim::ReportKind::ZeroStep { thread: 5 });
            let text = sim::render_report(stepped(), &r);
            assert!(text.contains("error[sim:zero-step]"), "{text}");
            assert!(text.contains("step_by(steps[t])"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_negative_i32_step_is_read_as_its_u32_bits_and_runs_the_first_value_only() {
    // 0..10 by 1, 3, 10, 11: 10, 4, 1, 1 values; by -1 (0xffff_ffff as a
    // count, as `s as usize` would be): the first value only.
    let out = run_stepped(&[1, 3, 10, 11, -1, i32::MIN]).unwrap();
    assert_eq!(out, [10, 4, 1, 1, 1, 1]);
}

/// Threads 0..16 take a negative step (one trip: `0..4` from 0, the step's
/// `u32` bits pass the bound), threads 16..32 an empty range (8..4): only
/// half the block reaches the barrier. Counting a negative step as zero
/// trips made every thread agree on zero, and the barrier looked uniform.
#[kernel]
fn negative_step_splits_the_block(out: &mut [i32]) {
    let t = thread_idx_x() as i32;
    let mut start = 8i32;
    let mut step = 1i32;
    if t < 16 {
        start = 0;
        step = -1;
    }
    for i in (start..4).step_by(step) {
        sync_threads();
        out[t as u32] = i;
    }
}

/// A zero step never ends where its range is non-empty: threads 0..16 spin
/// on the barrier, threads 16..32 skip the loop.
#[kernel]
fn zero_step_splits_the_block(out: &mut [i32]) {
    let t = thread_idx_x() as i32;
    let mut start = 8i32;
    let mut step = 1i32;
    if t < 16 {
        start = 0;
        step = 0;
    }
    for i in (start..4).step_by(step) {
        sync_threads();
        out[t as u32] = i;
    }
}

#[test]
fn a_runtime_step_that_splits_the_trip_counts_is_oxk001() {
    for k in [
        negative_step_splits_the_block(),
        zero_step_splits_the_block(),
    ] {
        let f = findings(k, 32, 32);
        assert!(
            f.iter().any(|f| f.rule == Rule::DivergentBarrier),
            "{}: {f:?}",
            k.name
        );
    }
}
