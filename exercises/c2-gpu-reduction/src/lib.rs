//! # C2 — GPU reduction
//!
//! A sum of many numbers on a GPU, in the shape every fast reduction has:
//! each thread sums its own elements (a grid-stride loop, as in C1), the
//! block combines its threads' sums in shared memory, and the last warp
//! finishes with warp shuffles. One launch gives a partial sum per block;
//! a second launch of the same kernel over the partial sums gives the
//! total. The catch is the warp: it is 32 lanes on NVIDIA and Apple, 64
//! on some AMD parts, and 8 on lavapipe (the Vulkan driver CI runs on).
//! The spec runs this file three ways — the analysis, the simulator (at
//! warps of 32 and of 8) and your GPU through wgpu. Read the README first;
//! the spec is `tests/spec.rs`.

use oxmera_kernel::kernel;

/// Block `b` writes to `partial[b]` the sum of the elements of `x` below
/// `n` that its threads reach by a grid-stride loop: thread `t` of the
/// grid adds `x[t]`, `x[t + T]`, `x[t + 2T]`, … with `T = grid_dim_x() *
/// block_dim_x()`, and block `b` holds threads `b * block_dim_x()` up to
/// the next block's.
///
/// `block_dim_x()` is a power of two, at most 256, and at least the warp
/// width (`warp_size()`). The building blocks: `shared::<f32>(256)`,
/// `sync_threads()`, `warp_size()` and `shfl_down_sync(0xffff_ffff, v,
/// offset)`, which gives lane `l` the `v` of lane `l + offset` of its
/// warp (its own `v` past the warp's end).
#[kernel(block = [64, 128, 256])]
pub fn block_sums(x: &[f32], partial: &mut [f32], n: u32) {
    // TODO(C2): each thread's own sum, the block's tree in shared memory
    // down to one warp, then the warp's shuffles; thread 0 writes the
    // block's sum. (The kernel language has no `todo!()`: an empty body is
    // a kernel that does nothing.)
}
