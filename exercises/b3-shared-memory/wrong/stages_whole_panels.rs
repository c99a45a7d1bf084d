//! Stages all of a block's rows of `a` and columns of `b` at once, for k up to 300: 38 400 bytes of shared memory, over the 32 KiB of lavapipe and Apple GPUs.
//!
//! A named wrong solution of B3, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It fits the 48
//! KiB static cap that `#[kernel(block = ...)]` checks when it compiles,
//! and computes the right products for every k the spec tries; the spec's
//! analysis on each target finds the budget broken (OXK004).

use oxmera_kernel::kernel;

/// `c = a b`, `a` an `m x k` matrix and `b` a `k x n` matrix, all three
/// row-major and contiguous. Thread `(tx, ty)` of block `(bx, by)` computes
/// `c[row * n + col]` for `row = by * 16 + ty`, `col = bx * 16 + tx`; a
/// thread outside `c` computes nothing but still loads its share.
#[kernel(block = [[16, 16]])]
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
    const TILE: u32 = 16;
    // One load for the whole of k, then one barrier: no steps, no
    // second barrier. k is at most MAX_K.
    const MAX_K: u32 = 300;
    let a_tile = shared::<f32>(TILE * MAX_K);
    let b_tile = shared::<f32>(MAX_K * TILE);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let row = block_idx_y() * TILE + ty;
    let col = block_idx_x() * TILE + tx;
    let mut acc = 0.0;
    for t in 0..(k + TILE - 1) / TILE {
        let ac = t * TILE + tx;
        let br = t * TILE + ty;
        let mut av = 0.0;
        if row < m && ac < k {
            av = a[row * k + ac];
        }
        let mut bv = 0.0;
        if br < k && col < n {
            bv = b[br * n + col];
        }
        a_tile[ty * MAX_K + ac] = av;
        b_tile[br * TILE + tx] = bv;
    }
    sync_threads();
    for q in 0..k {
        acc += a_tile[ty * MAX_K + q] * b_tile[q * TILE + tx];
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}
