//! # B3 — shared memory
//!
//! `matmul` computes `c = a b` with one thread per element of `c`, in
//! blocks of 16 x 16 threads. Written naively, each thread reads a whole
//! row of `a` and a whole column of `b` from global memory, and the 256
//! threads of a block read the same 16 rows and 16 columns 16 times over.
//! Tiled, the block loads a 16 x 16 tile of `a` and one of `b` into shared
//! memory, every thread loading one element of each, and all 256 threads
//! compute from the tiles; then the next pair of tiles, along `k`. Write
//! it. Read the README first; the spec is `tests/spec.rs`.

use oxmera_kernel::kernel;

/// `c = a b`, `a` an `m x k` matrix and `b` a `k x n` matrix, all three
/// row-major and contiguous. Thread `(tx, ty)` of block `(bx, by)` computes
/// `c[row * n + col]` for `row = by * 16 + ty`, `col = bx * 16 + tx`; a
/// thread outside `c` computes nothing but still loads its share.
///
/// The spec launches it with blocks of 16 x 16 threads.
// TODO(B3): declare that block in the attribute,
// `#[kernel(block = [[16, 16]])]`, so the compiler checks the kernel there.
#[kernel]
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
    const TILE: u32 = 16;
    // TODO(B3): two shared tiles, `shared::<f32>(LEN)`, one for `a` and one
    // for `b`. How many bytes is that a block, and does it fit every
    // target the spec names (the README's table)?
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let row = block_idx_y() * TILE + ty;
    let col = block_idx_x() * TILE + tx;
    let mut acc = 0.0;
    // TODO(B3): one step per 16 columns of `a` (and 16 rows of `b`), the
    // last one partial when 16 does not divide `k`. In each step: every
    // thread stores one element of each tile (0 where the tile hangs over
    // the edge of `a` or `b`), the block waits until the tiles are whole,
    // each thread adds its 16 products into `acc`, and the block waits
    // again before the next step overwrites the tiles.
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}
