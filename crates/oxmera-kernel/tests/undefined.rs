//! Undefined values: a shuffle whose source lane is inside the warp but
//! outside its mask gives that lane an undefined value (CUDA), which is
//! harmless until it is stored, decides control or indexes memory. Each
//! use the simulator reports is shown once, and each harmless one runs to
//! the end. Every kernel runs lanes 0..20 of one 32-thread block under the
//! mask `0xfffff`, so lane `l` of a `shfl_down_sync(.., 1)` reads lane
//! `l + 1`, and lane 19 reads lane 20, which is outside the mask.

use oxmera_kernel::ir::{Kernel, Scalar};
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, Report, ReportKind, SimError, SimOptions};

/// Runs `k` at one block of 32 on `x[i] = i` and 32 zeros; the output or
/// the report.
fn run(k: &Kernel) -> Result<Vec<f32>, Box<Report>> {
    let x: Vec<f32> = (0..32).map(|i| i as f32).collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::zeros(Scalar::F32, 32)),
    ];
    match sim::run(
        k,
        LaunchConfig::linear(1, 32),
        &mut args,
        &SimOptions::default(),
    ) {
        Ok(_) => Ok(args[1].buffer().unwrap().to_f32()),
        Err(SimError::Report(r)) => Err(r),
        Err(e) => panic!("{e}"),
    }
}

/// The report's kind must be `undefined`, used by lane 19 as `used`, the
/// value from the shuffle on `shuffle_line` where thread 19 read lane 20.
fn assert_undefined(k: &Kernel, r: &Report, used: &str, shuffle_line: &str) {
    let text = sim::render_report(k, r);
    match &r.kind {
        ReportKind::Undefined {
            lane,
            thread,
            used: u,
            origin,
            reader,
            source,
            mask,
            ..
        } => {
            assert_eq!((*lane, *thread), (19, 19), "{text}");
            assert_eq!(u, used, "{text}");
            assert_eq!((*reader, *source, *mask), (19, 20, 0xfffff), "{text}");
            assert!(k.snippet(*origin).contains(shuffle_line), "{text}");
        }
        other => panic!("expected an undefined value, got {other:?}\n{text}"),
    }
    assert!(
        text.starts_with("error[sim:undefined]: lane 19 (thread 19)"),
        "{text}"
    );
    assert!(text.contains("read lane 20"), "{text}");
    assert!(text.contains("0x000fffff"), "{text}");
}

#[kernel]
fn guarded_sum(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let mut acc = x[lane];
        let mut off = 16u32;
        while off > 0 {
            let v = shfl_down_sync(0xfffffu32, acc, off);
            if lane + off < 20 {
                acc += v;
            }
            off /= 2;
        }
        out[lane] = acc;
    }
}

#[test]
fn a_guarded_reduction_over_a_partial_mask_is_clean_and_sums() {
    // Lane 0 ends with 0 + 1 + ... + 19 = 190.
    let out = run(guarded_sum()).unwrap();
    assert_eq!(out[0], 190.0);
}

#[kernel]
fn select_other(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let v = shfl_down_sync(0xfffffu32, x[lane], 1);
        let w = if lane + 1 < 20 { v } else { -1.0 };
        out[lane] = w * 2.0;
    }
}

#[test]
fn a_value_that_picks_another_where_undefined_is_clean() {
    let out = run(select_other()).unwrap();
    // Lane 0 gets lane 1's 1.0, doubled; lane 19 takes -1.0.
    assert_eq!(out[0], 2.0);
    assert_eq!(out[18], 38.0);
    assert_eq!(out[19], -2.0);
}

#[kernel]
fn store_it(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let v = shfl_down_sync(0xfffffu32, x[lane], 1);
        out[lane] = v + 1.0;
    }
}

#[test]
fn storing_it_is_reported_with_the_element() {
    let r = run(store_it()).unwrap_err();
    assert_undefined(store_it(), &r, "stored to `out[19]`", "shfl_down_sync");
}

#[kernel]
fn index_with_it(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let v = shfl_down_sync(0xfffffu32, lane, 1);
        out[lane] = x[v % 32];
    }
}

#[test]
fn indexing_with_it_is_reported() {
    let r = run(index_with_it()).unwrap_err();
    assert_undefined(
        index_with_it(),
        &r,
        "as an index into `x`",
        "shfl_down_sync",
    );
}

#[kernel]
fn branch_on_it(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let v = shfl_down_sync(0xfffffu32, x[lane], 1);
        if v > 100.0 {
            out[lane] = 1.0;
        }
    }
}

#[test]
fn branching_on_it_is_reported() {
    let r = run(branch_on_it()).unwrap_err();
    assert_undefined(
        branch_on_it(),
        &r,
        "as a branch condition",
        "shfl_down_sync",
    );
}

#[kernel]
fn loop_on_it(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let mut v = shfl_down_sync(0xfffffu32, x[lane], 1);
        while v > 0.0 {
            v -= 8.0;
        }
        out[lane] = 0.0;
    }
}

#[test]
fn looping_on_it_is_reported() {
    let r = run(loop_on_it()).unwrap_err();
    assert_undefined(loop_on_it(), &r, "as a loop condition", "shfl_down_sync");
}

#[kernel]
fn atomic_with_it(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let v = shfl_down_sync(0xfffffu32, x[lane], 1);
        atomic_add(out, 0u32, v);
    }
}

#[test]
fn an_atomic_operand_is_reported() {
    let r = run(atomic_with_it()).unwrap_err();
    assert_undefined(
        atomic_with_it(),
        &r,
        "as an atomic's operand on `out[0]`",
        "shfl_down_sync",
    );
}

#[kernel]
fn vote_on_it(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let v = shfl_down_sync(0xfffffu32, x[lane], 1);
        if any_sync(0xfffffu32, v > 100.0) {
            out[lane] = 1.0;
        }
    }
}

#[test]
fn a_vote_over_it_is_undefined_in_every_lane_and_reported_where_used() {
    // Lane 19's predicate is undefined, so every lane's `any` is: lane 0,
    // the first to branch on it, is the witness; the origin is lane 19's.
    let r = run(vote_on_it()).unwrap_err();
    match &r.kind {
        ReportKind::Undefined {
            lane,
            used,
            reader,
            source,
            ..
        } => {
            assert_eq!(*lane, 0);
            assert_eq!(used, "as a branch condition");
            assert_eq!((*reader, *source), (19, 20));
        }
        other => panic!("{other:?}"),
    }
}

#[kernel]
fn vote_unused(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let v = shfl_down_sync(0xfffffu32, x[lane], 1);
        let _votes = ballot_sync(0xfffffu32, v > 100.0);
        out[lane] = x[lane];
    }
}

#[test]
fn a_vote_whose_result_is_unused_is_clean() {
    let out = run(vote_unused()).unwrap();
    assert_eq!(out[19], 19.0);
}

#[kernel]
fn divide_by_it(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane >= 1 {
        // Lane 1 reads lane 0, outside the mask: its divisor is undefined
        // (here 0, lane 0's stale `lane_id()`), its quotient too.
        let d = shfl_xor_sync(0xffff_fffeu32, lane, 1);
        let q = 100u32 / d;
        let keep = if lane == 1 { 0u32 } else { q };
        out[lane] = x[lane] + keep as f32;
    }
}

#[test]
fn an_undefined_divisor_is_no_division_by_zero() {
    let out = run(divide_by_it()).unwrap();
    // Lane 2 divides by lane 3's 3: 2 + 33; lane 3 by 2: 3 + 50.
    assert_eq!(out[1], 1.0);
    assert_eq!(out[2], 35.0);
    assert_eq!(out[3], 53.0);
}

#[kernel]
fn down_past_the_edge(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    out[lane] = shfl_down_sync(0xffff_ffffu32, x[lane], 16);
}

#[test]
fn a_full_warp_shuffle_past_its_edge_keeps_the_own_value() {
    // Lanes 16..31 read past lane 31: each keeps its own value, defined.
    let out = run(down_past_the_edge()).unwrap();
    assert_eq!(out[0], 16.0);
    assert_eq!(out[15], 31.0);
    assert_eq!(out[16], 16.0);
    assert_eq!(out[31], 31.0);
}

#[kernel]
fn stale_then_redefined(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    let mut v = 0.0;
    if lane < 20 {
        v = shfl_down_sync(0xfffffu32, x[lane], 1);
        v = x[lane];
    }
    out[lane] = v;
}

#[test]
fn a_local_overwritten_before_use_is_clean() {
    let out = run(stale_then_redefined()).unwrap();
    assert_eq!(out[19], 19.0);
    assert_eq!(out[20], 0.0);
}

#[kernel]
fn through_a_register_array(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let mut got = [0.0f32; 2];
        got[1] = shfl_down_sync(0xfffffu32, x[lane], 1);
        let mut keep = -1.0;
        if lane + 1 < 20 {
            keep = got[1];
        }
        out[lane] = keep;
    }
}

#[test]
fn a_register_array_carries_it_to_a_guarded_use() {
    // The array is the thread's own, like a local: no report at its store.
    let out = run(through_a_register_array()).unwrap();
    assert_eq!(out[0], 1.0);
    assert_eq!(out[19], -1.0);
}

#[kernel]
fn out_of_a_register_array(x: &[f32], out: &mut [f32]) {
    let lane = lane_id();
    if lane < 20 {
        let mut got = [0.0f32; 2];
        got[1] = shfl_down_sync(0xfffffu32, x[lane], 1);
        out[lane] = got[1];
    }
}

#[test]
fn stored_from_a_register_array_it_is_reported() {
    let r = run(out_of_a_register_array()).unwrap_err();
    assert_undefined(
        out_of_a_register_array(),
        &r,
        "stored to `out[19]`",
        "shfl_down_sync",
    );
}
