//! # B2 — the flip
//!
//! `block_sum` adds up each block's slice of `x` through shared memory, a
//! tree reduction: every step halves the number of threads still adding,
//! with a barrier (`sync_threads()`) between steps so that no thread reads
//! a slot another thread has not finished writing. It was written and
//! tested with blocks of 32 threads, and there it is right. At 64 it never
//! finishes. Find out why with `oxmera-learn ladder check B2`, then fix it.
//! Read the README first; the spec is `tests/spec.rs`.

use oxmera_kernel::kernel;

/// Block `b` writes the sum of its slice of `x`,
/// `x[b * block_dim_x() .. (b + 1) * block_dim_x()]`, to `out[b]`; elements
/// at `n` and past it count as 0. `block_dim_x()` is a power of two, at
/// most 1024 (the length of the shared array).
///
/// The spec launches it with blocks of 32, 64, 128 and 256 threads.
// TODO(B2): once it is right at every one of those, declare them in the
// attribute (`#[kernel(block = [...])]`), so the compiler checks each.
#[kernel]
pub fn block_sum(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    s[tid] = v;
    // TODO(B2): every barrier below sits under this `if`. Right at 32
    // threads a block, a hang at 64: why, and what must move?
    let w = warp_id();
    if w == 0 {
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
}
