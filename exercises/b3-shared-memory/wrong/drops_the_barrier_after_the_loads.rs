//! Drops the barrier between the loads and the products: threads read tile slots their neighbours have not written yet.
//!
//! A named wrong solution of B3, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution without its first `sync_threads()`.

use oxmera_kernel::kernel;

/// `c = a b`, `a` an `m x k` matrix and `b` a `k x n` matrix, all three
/// row-major and contiguous. Thread `(tx, ty)` of block `(bx, by)` computes
/// `c[row * n + col]` for `row = by * 16 + ty`, `col = bx * 16 + tx`; a
/// thread outside `c` computes nothing but still loads its share.
#[kernel(block = [[16, 16]])]
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
    const TILE: u32 = 16;
    // 2 tiles x 16 x 16 x 4 bytes = 2 KiB a block: within every target.
    let a_tile = shared::<f32>(TILE * TILE);
    let b_tile = shared::<f32>(TILE * TILE);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let row = block_idx_y() * TILE + ty;
    let col = block_idx_x() * TILE + tx;
    let mut acc = 0.0;
    let steps = (k + TILE - 1) / TILE;
    for t in 0..steps {
        // Every thread stores one element of each tile, 0 past the edges,
        // so the products below never read a stale or unwritten slot.
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
        a_tile[ty * TILE + tx] = av;
        b_tile[ty * TILE + tx] = bv;
        // Each thread has written its own slot, so the tile is ready.
        for q in 0..TILE {
            acc += a_tile[ty * TILE + q] * b_tile[q * TILE + tx];
        }
        // Everyone has read them: the next step may overwrite them.
        sync_threads();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}
