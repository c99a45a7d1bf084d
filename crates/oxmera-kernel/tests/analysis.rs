//! The analysis is launch-aware: the same code is uniform at one launch and
//! divergent at another, and the verdicts say so.

use oxmera_kernel::analysis::{CheckOptions, Finding, Rule, check};
use oxmera_kernel::ir::{Dim3, Kernel};
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;

fn at(k: &Kernel, block: Dim3) -> Vec<Finding> {
    check(
        k,
        &CheckOptions::new(LaunchConfig {
            grid: Dim3::x(1),
            block,
        }),
    )
    .unwrap()
}

#[kernel]
fn row_guard(out: &mut [f32]) {
    if thread_idx_y() == 0 {
        sync_threads();
    }
    out[thread_idx_y() * block_dim_x() + thread_idx_x()] = 1.0;
}

#[test]
fn thread_idx_y_is_warp_uniform_when_rows_are_whole_warps() {
    let f = at(row_guard(), Dim3::new(32, 2, 1));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].rule, Rule::DivergentBarrier);
    assert_eq!(
        f[0].lanes.as_ref().unwrap().warps,
        vec!["W".repeat(32), ".".repeat(32)]
    );
    assert!(
        f[0].notes[0].text.contains("same within a warp"),
        "{:?}",
        f[0].notes
    );
}

#[test]
fn thread_idx_y_splits_a_warp_when_rows_are_half_warps() {
    let f = at(row_guard(), Dim3::new(16, 4, 1));
    assert_eq!(
        f[0].lanes.as_ref().unwrap().warps[0],
        format!("{}{}", "W".repeat(16), ".".repeat(16))
    );
    assert!(
        f[0].notes[0].text.contains("lanes of a warp"),
        "{:?}",
        f[0].notes
    );
}

#[test]
fn a_single_row_block_makes_the_guard_uniform() {
    assert!(at(row_guard(), Dim3::new(64, 1, 1)).is_empty());
}

#[kernel]
fn bound_guard(out: &mut [f32]) {
    if thread_idx_x() < 64 {
        sync_threads();
    }
    out[thread_idx_x()] = 1.0;
}

#[test]
fn a_guard_true_for_the_whole_block_is_clean() {
    assert!(at(bound_guard(), Dim3::x(64)).is_empty());
    assert!(at(bound_guard(), Dim3::x(32)).is_empty());
    let f = at(bound_guard(), Dim3::x(128));
    assert_eq!(f[0].rule, Rule::DivergentBarrier);
    assert!(f[0].confirmed);
}

#[kernel]
fn warp_level_shuffle(out: &mut [f32]) {
    let mut v = thread_idx_x() as f32;
    if warp_id() == 0 {
        v += shfl_xor_sync(0xffff_ffffu32, v, 1u32);
    }
    out[thread_idx_x()] = v;
}

#[test]
fn warp_uniform_control_is_enough_for_a_warp_collective() {
    assert!(at(warp_level_shuffle(), Dim3::x(128)).is_empty());
}

#[kernel]
fn param_guard(x: &[f32], out: &mut [f32], n: u32) {
    let i = thread_idx_x();
    if n > 4 {
        sync_threads();
    }
    if i < n {
        out[i] = x[i];
    }
}

#[test]
fn a_scalar_parameter_is_uniform() {
    assert!(at(param_guard(), Dim3::x(256)).is_empty());
}

#[kernel]
fn data_guard(x: &[f32], out: &mut [f32]) {
    let i = thread_idx_x();
    if x[i] > 0.0 {
        sync_threads();
    }
    out[i] = x[i];
}

#[test]
fn data_dependent_divergence_is_reported_but_not_confirmed() {
    let f = at(data_guard(), Dim3::x(32));
    assert_eq!(f.len(), 1);
    assert!(!f[0].confirmed);
    assert!(f[0].lanes.is_none());
    assert!(
        f[0].notes.iter().any(|s| s.text.contains("x[i]")),
        "{:?}",
        f[0].notes
    );
}

#[kernel]
fn uniform_loop_barrier(out: &mut [f32], n: u32) {
    let tid = thread_idx_x();
    for k in 0..n {
        out[tid] += k as f32;
        sync_threads();
    }
}

#[test]
fn a_barrier_in_a_uniform_loop_is_clean() {
    assert!(at(uniform_loop_barrier(), Dim3::x(256)).is_empty());
}

#[test]
fn the_analysis_rejects_impossible_launches() {
    let e = check(row_guard(), &CheckOptions::new(LaunchConfig::linear(1, 0)));
    assert!(e.is_err());
}

/// A grid-uniform value stored by lane 0 only: afterwards the local holds it
/// in lane 0 and its old value elsewhere.
#[kernel]
fn lane_assigned(out: &mut [f32], n: u32) {
    let mut x = 0u32;
    if lane_id() == 0 {
        x = n;
    }
    if x > 5 {
        sync_threads();
    }
    out[thread_idx_x()] = 1.0;
}

#[test]
fn a_uniform_value_assigned_in_some_lanes_differs_between_lanes() {
    let f = at(lane_assigned(), Dim3::x(32));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].rule, Rule::DivergentBarrier);
    assert!(!f[0].confirmed, "depends on n");
}
