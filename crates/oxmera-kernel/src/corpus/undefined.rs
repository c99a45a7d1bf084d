//! Shuffles that read a lane outside their mask. CUDA gives such a lane an
//! undefined *value* (not undefined behaviour), so a kernel is correct when
//! it uses the value only where the source lane executed the shuffle. Two
//! clean kernels written differently, each with a buggy twin that uses the
//! undefined value where it reaches memory.

use crate::kernel;

/// Clean: a warp sum by `shfl_down_sync` over the elements below `n`. The
/// threads past `n` leave, so the last warp's mask names only its lanes in
/// range, and a lane near its top reads a lane that left; each step adds
/// only where the source lane is in range (`lane + off < in_warp`).
#[kernel]
pub fn shfl_down_guarded_sum(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    // Before the data-dependent return, so the analysis knows it per
    // thread and sees one writer per warp below.
    let lane = lane_id();
    if i >= n {
        return;
    }
    let in_warp = (n - (i - lane)).min(warp_size());
    let mut mask = 0xffff_ffffu32;
    if in_warp < 32 {
        mask = (1u32 << in_warp) - 1;
    }
    let mut acc = x[i];
    let mut off = warp_size() / 2;
    while off > 0 {
        let v = shfl_down_sync(mask, acc, off);
        if lane + off < in_warp {
            acc += v;
        }
        off /= 2;
    }
    if lane == 0 {
        out[block_idx_x() * (block_dim_x() / warp_size()) + warp_id()] = acc;
    }
}

/// Buggy twin: the same sum without the guard, so the lanes whose source
/// left add an undefined value, and lane 0 of the last warp stores it.
#[kernel]
pub fn shfl_down_unguarded_sum(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    // Before the data-dependent return, so the analysis knows it per
    // thread and sees one writer per warp below.
    let lane = lane_id();
    if i >= n {
        return;
    }
    let in_warp = (n - (i - lane)).min(warp_size());
    let mut mask = 0xffff_ffffu32;
    if in_warp < 32 {
        mask = (1u32 << in_warp) - 1;
    }
    let mut acc = x[i];
    let mut off = warp_size() / 2;
    while off > 0 {
        acc += shfl_down_sync(mask, acc, off);
        off /= 2;
    }
    if lane == 0 {
        out[block_idx_x() * (block_dim_x() / warp_size()) + warp_id()] = acc;
    }
}

/// Clean, written differently: an inclusive scan by `shfl_up_sync` of the
/// elements from `start = n % 8` on. The threads before `start` leave, so in
/// the first warp the mask starts at lane `first`, and a lane just above it
/// reads a lane that left; the scan adds only where `lane >= first + off`.
#[kernel]
pub fn shfl_up_guarded_scan(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let start = n % 8;
    if i < start {
        return;
    }
    let lane = lane_id();
    let lane_zero = i - lane;
    let mut first = 0u32;
    if lane_zero < start {
        first = start - lane_zero;
    }
    let mask = 0xffff_ffffu32 << first;
    let mut acc = x[i];
    let mut off = 1u32;
    while off < warp_size() {
        let v = shfl_up_sync(mask, acc, off);
        if lane >= first + off {
            acc += v;
        }
        off *= 2;
    }
    if i < n {
        out[i] = acc;
    }
}

/// Buggy twin: the scan guards with `lane >= off` — right for a whole warp,
/// wrong where the mask starts at `first`: those lanes add an undefined
/// value and store it.
#[kernel]
pub fn shfl_up_scan_wrong_guard(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let start = n % 8;
    if i < start {
        return;
    }
    let lane = lane_id();
    let lane_zero = i - lane;
    let mut first = 0u32;
    if lane_zero < start {
        first = start - lane_zero;
    }
    let mask = 0xffff_ffffu32 << first;
    let mut acc = x[i];
    let mut off = 1u32;
    while off < warp_size() {
        let v = shfl_up_sync(mask, acc, off);
        if lane >= off {
            acc += v;
        }
        off *= 2;
    }
    if i < n {
        out[i] = acc;
    }
}
