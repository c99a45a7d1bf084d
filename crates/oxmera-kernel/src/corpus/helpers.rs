//! Corpus kernels that call helpers: a barrier inside a helper is a barrier
//! at every call, so a call under a divergent branch is the classic
//! divergent barrier one function away. Two buggy variants (a thread guard
//! around the call; an early return before a call through two helpers)
//! and two clean ones (every thread calls; the guard is block-uniform).

use crate::kernels;

#[kernels]
pub mod helper_calls {
    /// Copies the thread's element into shared memory and waits for the
    /// block: a barrier inside.
    #[helper]
    fn stage(s: &mut [f32], x: &[f32], i: u32, t: u32, n: u32) {
        let v = if i < n { x[i] } else { 0.0 };
        s[t] = v;
        sync_threads();
    }

    /// Stages, then reads the neighbour's slot: the barrier one helper
    /// deeper.
    #[helper]
    fn neighbour(s: &mut [f32], x: &[f32], i: u32, t: u32, n: u32) -> f32 {
        stage(s, x, i, t, n);
        s[(t + 1) % block_dim_x()]
    }

    /// Buggy: the helper's barrier under `thread_idx_x() < 32` (fine only
    /// when the block is one warp).
    #[kernel]
    pub fn helper_barrier_guarded(x: &[f32], out: &mut [f32], n: u32) {
        let s = shared::<f32>(1024);
        let t = thread_idx_x();
        let i = block_idx_x() * block_dim_x() + t;
        if t < 32 {
            stage(s, x, i, t, n);
        }
        if i < n {
            out[i] = s[t];
        }
    }

    /// Buggy, written differently: odd lanes return, and the rest reach the
    /// barrier through two helpers.
    #[kernel]
    pub fn helper_barrier_after_return(x: &[f32], out: &mut [f32], n: u32) {
        let s = shared::<f32>(1024);
        let t = thread_idx_x();
        let i = block_idx_x() * block_dim_x() + t;
        if lane_id() % 2 == 1 {
            return;
        }
        let v = neighbour(s, x, i, t, n);
        if i < n {
            out[i] = v;
        }
    }

    /// Clean: every thread calls the helper, so every thread reaches its
    /// barrier before any reads a neighbour's slot.
    #[kernel]
    pub fn helper_barrier_every_thread(x: &[f32], out: &mut [f32], n: u32) {
        let s = shared::<f32>(1024);
        let t = thread_idx_x();
        let i = block_idx_x() * block_dim_x() + t;
        let v = neighbour(s, x, i, t, n);
        if i < n {
            out[i] = v;
        }
    }

    /// Clean, written differently: the guard around the call depends only
    /// on a parameter, the same for every thread of the block.
    #[kernel]
    pub fn helper_barrier_uniform_guard(x: &[f32], out: &mut [f32], n: u32) {
        let s = shared::<f32>(1024);
        let t = thread_idx_x();
        let i = block_idx_x() * block_dim_x() + t;
        if n > 0 {
            stage(s, x, i, t, n);
        }
        if i < n {
            out[i] = s[t];
        }
    }
}
