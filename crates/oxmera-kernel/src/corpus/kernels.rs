//! Broken kernels. Every one takes `(x: &[f32], out: &mut [f32], n: u32)` so
//! that one seeded harness runs them all; each is wrong in one known way.

use crate::kernel;

/// The classic: barrier guarded by `warp_id() == 0` (fine only at block 32).
#[kernel]
pub fn barrier_warp_guard(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if warp_id() == 0 {
        sync_threads();
    }
    if i < n {
        out[i] = x[i];
    }
}

/// Barrier guarded by a thread-index bound equal to one warp.
#[kernel]
pub fn barrier_thread_guard(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if thread_idx_x() < 32 {
        sync_threads();
    }
    if i < n {
        out[i] = x[i];
    }
}

/// Half the warp returns before the barrier.
#[kernel]
pub fn barrier_early_return(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if thread_idx_x() >= 16 {
        return;
    }
    sync_threads();
    if i < n {
        out[i] = x[i];
    }
}

/// The bounds check returns early, so the tail block's extra threads never
/// reach the barrier (data-dependent: depends on `n`).
#[kernel]
pub fn barrier_bounds_return(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    if i >= n {
        return;
    }
    s[tid] = x[i];
    sync_threads();
    out[i] = s[tid];
}

/// A barrier in a loop whose trip count differs per thread.
#[kernel]
pub fn barrier_divergent_trip(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    for _k in 0..thread_idx_x() % 4 {
        sync_threads();
    }
    if i < n {
        out[i] = x[i];
    }
}

/// Only even lanes reach the barrier.
#[kernel]
pub fn barrier_odd_lanes(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if lane_id() % 2 == 0 {
        sync_threads();
    }
    if i < n {
        out[i] = x[i];
    }
}

/// A data-dependent `while` with a barrier inside.
#[kernel]
pub fn barrier_data_while(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    while v > 0.0 {
        v -= 0.5;
        sync_threads();
    }
    if i < n {
        out[i] = v;
    }
}

/// Threads break out of the loop at different iterations, before a barrier.
#[kernel]
pub fn barrier_divergent_break(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    for k in 0..4u32 {
        if thread_idx_x() == k {
            break;
        }
        sync_threads();
    }
    if i < n {
        out[i] = x[i];
    }
}

/// Two textually different barriers in the two arms of a divergent branch.
#[kernel]
pub fn barrier_two_arms(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if thread_idx_x() < 16 {
        sync_threads();
    } else {
        sync_threads();
    }
    if i < n {
        out[i] = x[i];
    }
}

/// A full-mask ballot inside a lane-dependent branch.
#[kernel]
pub fn ballot_divergent(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    if lane_id() < 16 {
        let b = ballot_sync(0xffff_ffffu32, v > 0.0);
        v = b as f32;
    }
    if i < n {
        out[i] = v;
    }
}

/// A full-mask shuffle that only even lanes execute.
#[kernel]
pub fn shfl_divergent(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    if thread_idx_x() % 2 == 0 {
        v += shfl_xor_sync(0xffff_ffffu32, v, 1u32);
    }
    if i < n {
        out[i] = v;
    }
}

/// A full-mask shuffle reduction: wrong whenever the block is not a whole
/// number of warps (the mask names lanes that do not exist).
#[kernel]
pub fn shfl_absent_lanes(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    let mut off = 16u32;
    while off > 0 {
        v += shfl_down_sync(0xffff_ffffu32, v, off);
        off /= 2;
    }
    if i < n {
        out[i] = v;
    }
}

/// A warp vote after some lanes returned.
#[kernel]
pub fn vote_after_return(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if lane_id() >= 24 {
        return;
    }
    let all = all_sync(0xffff_ffffu32, x[i] > -2.0);
    if all && i < n {
        out[i] = 1.0;
    }
}

/// 64 KiB of static shared memory: over the 48 KiB static cap.
#[kernel]
pub fn shared_64k(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(16384);
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let tid = thread_idx_x();
    if i < n {
        s[tid] = x[i];
        out[i] = s[tid];
    }
}

/// 80 KiB of shared memory: fits 8.0, 8.6 and 9.0 with the opt-in, not 7.5.
#[kernel]
pub fn shared_80k(x: &[f32], out: &mut [f32], n: u32) {
    let a = shared::<f32>(10240);
    let b = shared::<f32>(10240);
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let tid = thread_idx_x();
    if i < n {
        a[tid] = x[i];
        b[tid] = a[tid];
        out[i] = b[tid];
    }
}

/// Reads a neighbour's shared slot with no barrier after the writes.
#[kernel]
pub fn shared_race_neighbor(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1025);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    s[tid] = v;
    let right = s[tid + 1];
    if i < n {
        out[i] = right;
    }
}

/// A tree reduction that forgot the barrier inside its loop.
#[kernel]
pub fn shared_race_tree(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    s[tid] = v;
    sync_threads();
    let mut half = block_dim_x() / 2;
    while half > 0 {
        if tid < half {
            s[tid] += s[tid + half];
        }
        half /= 2;
    }
    if tid == 0 {
        out[block_idx_x()] = s[0];
    }
}

/// Every thread writes the same shared slot.
#[kernel]
pub fn shared_race_one_slot(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1);
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        s[0] = x[i];
    }
    sync_threads();
    if i < n {
        out[i] = s[0];
    }
}

/// No bounds check: the tail threads run past `out`.
#[kernel]
pub fn oob_unguarded(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    out[i] = x[i] * 2.0;
}

/// Off by one in a shared index.
#[kernel]
pub fn oob_shared_off_by_one(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(64);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    if i < n {
        s[tid + 1] = x[i];
    }
}

/// Reads the left neighbour, including index -1.
#[kernel]
pub fn oob_negative_index(x: &[f32], out: &mut [f32], n: u32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if i < n as i32 {
        out[i] = x[i - 1];
    }
}

/// Every thread of the grid writes `out[0]`.
#[kernel]
pub fn global_race_all(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        out[0] = x[i];
    }
}

/// Every thread of a block writes the block's slot (forgot `tid == 0`).
#[kernel]
pub fn global_race_block_slot(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let v = x[i % n];
    out[block_idx_x()] = v;
}

/// Two threads per element: the index is halved.
#[kernel]
pub fn global_race_halved(x: &[f32], out: &mut [f32], n: u32) {
    let tid = thread_idx_x();
    out[tid / 2] = x[tid];
}

/// Correct, but declares 128-thread blocks: any other block breaks the contract.
#[kernel(block = [128])]
pub fn contract_block_128(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        out[i] = x[i];
    }
}

/// Never terminates when every input is below 2: the simulator's step budget stops it.
#[kernel]
pub fn endless_loop(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let mut v = 0.0;
    while v < 2.0 {
        v = v * 1.0;
    }
    if i < n {
        out[i] = v + x[i];
    }
}

/// Integer division by a per-lane value that is zero on even lanes.
#[kernel]
pub fn div_by_zero(x: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let q = i / (lane_id() % 2);
    if i < n {
        out[i] = x[i] + q as f32;
    }
}
