//! Correct shapes the analysis once flagged, each beside a buggy twin:
//! warp-per-row reductions (the row from the global id over the warp width,
//! or from `warp_id()`), a trip count broadcast from lane 0 (by a shuffle or
//! a vote) before a loop of shuffles, and one store per block or per warp
//! after an early return. The clean ones must raise nothing, not even a
//! "may"; the twins keep one known bug each.

use crate::kernel;

/// Clean: one warp per row, the row being the global thread id over the
/// warp width (a GEMV's shape). Warp-uniform whenever the block is a whole
/// number of warps; at block 48 the second warp is partial and its
/// full-mask shuffles name lanes that do not exist.
#[kernel]
pub fn warp_row_by_gid(x: &[f32], out: &mut [f32], n: u32) {
    let gid = block_idx_x() * block_dim_x() + thread_idx_x();
    let row = gid / warp_size();
    let lane = lane_id();
    if row < n / warp_size() {
        let mut acc = 0.0;
        let mut c = lane;
        while c < warp_size() {
            acc += x[row * warp_size() + c];
            c += warp_size();
        }
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 16);
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 8);
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 4);
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 2);
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 1);
        if lane == 0 {
            out[row] = acc;
        }
    }
}

/// Clean, written differently: the row from the block and `warp_id()` (an
/// SpMV's shape), reduced down to lane 0.
#[kernel]
pub fn warp_row_by_warp_id(x: &[f32], out: &mut [f32], n: u32) {
    let warps = block_dim_x() / warp_size();
    let row = block_idx_x() * warps + warp_id();
    let lane = lane_id();
    if row < n / warp_size() {
        let mut acc = x[row * warp_size() + lane];
        acc += shfl_down_sync(0xffff_ffffu32, acc, 16);
        acc += shfl_down_sync(0xffff_ffffu32, acc, 8);
        acc += shfl_down_sync(0xffff_ffffu32, acc, 4);
        acc += shfl_down_sync(0xffff_ffffu32, acc, 2);
        acc += shfl_down_sync(0xffff_ffffu32, acc, 1);
        if lane == 0 {
            out[row] = acc;
        }
    }
}

/// Buggy twin: every lane of the row's warp stores the row's result.
#[kernel]
pub fn warp_row_every_lane_stores(x: &[f32], out: &mut [f32], n: u32) {
    let gid = block_idx_x() * block_dim_x() + thread_idx_x();
    let row = gid / warp_size();
    if row < n / warp_size() {
        let mut acc = x[gid];
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 16);
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 8);
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 4);
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 2);
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 1);
        out[row] = acc;
    }
}

/// Clean: lane 0 computes a trip count and broadcasts it with `shfl_sync`
/// from lane 0, so the loop of shuffles runs the same number of times in
/// every lane.
#[kernel]
pub fn broadcast_trip_count(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let mut count = 0u32;
    if lane_id() == 0 {
        count = n % 5;
    }
    let trips = shfl_sync(0xffff_ffffu32, count, 0);
    let mut acc = x[i];
    for _k in 0..trips {
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 1);
    }
    if i < n {
        out[i] = acc;
    }
}

/// Clean, written differently: the trip count is a vote's result, the same
/// in every lane that took part.
#[kernel]
pub fn ballot_trip_count(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let trips = ballot_sync(0xffff_ffffu32, x[i] > 0.5).count_ones() % 4;
    let mut acc = x[i];
    let mut k = 0u32;
    while k < trips {
        acc += shfl_down_sync(0xffff_ffffu32, acc, 1);
        k += 1;
    }
    if i < n {
        out[i] = acc;
    }
}

/// Buggy twin: the count is never broadcast, so lane 0 loops and the other
/// lanes do not — its full-mask shuffle runs without them.
#[kernel]
pub fn lane_zero_trip_count(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let mut trips = 0u32;
    if lane_id() == 0 {
        trips = n % 5;
    }
    let mut acc = x[i];
    for _k in 0..trips {
        acc += shfl_xor_sync(0xffff_ffffu32, acc, 1);
    }
    if i < n {
        out[i] = acc;
    }
}

/// Clean: threads past `n` return; then thread 0 of each block writes its
/// block's element — one writer per element.
#[kernel]
pub fn early_return_block_slot(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i >= n {
        return;
    }
    if thread_idx_x() == 0 {
        out[block_idx_x()] = x[i] * 2.0;
    }
}

/// Clean, written differently: lane 0 of each warp writes the warp's slot,
/// after the same early return.
#[kernel]
pub fn early_return_warp_slot(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i >= n {
        return;
    }
    let warps = block_dim_x() / warp_size();
    if lane_id() == 0 {
        out[block_idx_x() * warps + warp_id()] = x[i];
    }
}

/// Buggy twin: thread 0 of every block writes element 0.
#[kernel]
pub fn early_return_one_slot(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i >= n {
        return;
    }
    if thread_idx_x() == 0 {
        out[0] = x[i];
    }
}

/// Buggy: the element is the thread's index in its block, behind a
/// data-dependent guard — every block writes the same elements.
#[kernel]
pub fn block_blind_guarded_store(x: &[f32], out: &mut [f32], n: u32) {
    let t = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + t;
    if i < n && x[i] > 0.5 {
        out[t] = x[i];
    }
}

/// Buggy, written differently: a slot from the thread index folded onto
/// 16 elements, after a data-dependent early return.
#[kernel]
pub fn block_blind_folded_slot(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i >= n || x[i] < 0.2 {
        return;
    }
    out[thread_idx_x() % 16] = x[i];
}

/// Clean twin: the same guard, the element from the global id.
#[kernel]
pub fn guarded_store_by_gid(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n && x[i] > 0.5 {
        out[i] = x[i];
    }
}

/// Buggy: a shared histogram zeroed by plain stores and updated with
/// atomics, with no barrier between — another thread's atomic can land
/// before the zero.
#[kernel]
pub fn shared_zero_then_atomic(x: &[f32], out: &mut [f32], n: u32) {
    let hist = shared::<u32>(32);
    let t = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + t;
    if t < 32 {
        hist[t] = 0u32;
    }
    let bin = (x[i] * 31.0) as u32;
    atomic_add(hist, bin, 1u32);
    sync_threads();
    if i < n && t < 32 {
        out[i] = hist[t] as f32;
    }
}

/// Buggy, written differently: the barrier is there before the atomics,
/// but the counts are read right after them.
#[kernel]
pub fn shared_atomic_then_read(x: &[f32], out: &mut [f32], n: u32) {
    let hist = shared::<u32>(32);
    let t = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + t;
    if t < 32 {
        hist[t] = 0u32;
    }
    sync_threads();
    atomic_add(hist, (x[i] * 31.0) as u32, 1u32);
    if i < n && t < 32 {
        out[i] = hist[t] as f32;
    }
}

/// Clean twin: zero, barrier, atomics, barrier, read.
#[kernel]
pub fn shared_histogram_synced(x: &[f32], out: &mut [f32], n: u32) {
    let hist = shared::<u32>(32);
    let t = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + t;
    if t < 32 {
        hist[t] = 0u32;
    }
    sync_threads();
    atomic_add(hist, (x[i] * 31.0) as u32, 1u32);
    sync_threads();
    if i < n && t < 32 {
        out[i] = hist[t] as f32;
    }
}

/// Buggy: thread 0 of every block adds its element into `out[0]` with a
/// plain read and write — blocks are not ordered, so updates are lost.
#[kernel]
pub fn global_accumulate_plain(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if thread_idx_x() == 0 && i < n {
        out[0] = out[0] + x[i];
    }
}

/// Buggy, written differently: an in-place stencil reads the neighbour's
/// element of `out`, which another thread — at a block's edge, another
/// block — writes.
#[kernel]
pub fn stencil_in_place(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        out[i] = x[i];
        let left = if i > 0 { out[i - 1] } else { 0.0 };
        out[i] = left + x[i];
    }
}

/// Clean twin: every block adds into one element with `atomic_add`.
#[kernel]
pub fn global_accumulate_atomic(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        atomic_add(out, 0, x[i]);
    }
}

/// Clean twin of the stencil: read one buffer, write another.
#[kernel]
pub fn stencil_two_buffers(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let left = if i > 0 { x[i - 1] } else { 0.0 };
        out[i] = left + x[i];
    }
}
