//! # B2 — the flip (the author's solution)
//!
//! The kernel itself, written out. It is oxmera's own `flip_fixed`
//! (`crates/oxmera-kernel/src/library/flip.rs`): guard the work, never the
//! barrier.

use oxmera_kernel::kernel;

/// Block `b` writes the sum of its slice of `x` to `out[b]`; elements at
/// `n` and past it count as 0. `block_dim_x()` is a power of two, at most
/// 1024.
#[kernel(block = [32, 64, 128, 256])]
pub fn block_sum(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    s[tid] = v;
    // Every thread of the block reaches every barrier: only the additions
    // and the final store are conditional.
    sync_threads();
    let mut stride = block_dim_x() / 2;
    while stride > 0 {
        if tid < stride {
            s[tid] += s[tid + stride];
        }
        sync_threads();
        stride /= 2;
    }
    if tid == 0 {
        out[block_idx_x()] = s[0];
    }
}
