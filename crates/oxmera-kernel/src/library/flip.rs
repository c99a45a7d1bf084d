//! `flip`: the demonstration kernel of the divergent-barrier rule.

use crate::kernel;

/// Sums each block's slice of `x` into `out[block]` through shared memory —
/// but its barriers sit under `if warp_id() == 0`: right when one warp is the
/// block, a hang (OXK001) past it. It promises no launch; its search space
/// lists blocks for `oxmera kernel tune flip` to refuse or keep, per warp width.
#[kernel(search(block = [32, 64, 128, 256]), search(warp = 8, block = [8, 16, 32, 64]))]
pub fn flip(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    s[tid] = v;
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

/// `flip` repaired: the work stays guarded, the barriers do not. Every
/// thread of the block reaches every `sync_threads()`, at any power-of-two
/// block the attribute declares (and the macro checks them all).
#[kernel(block = [32, 64, 128, 256])]
pub fn flip_fixed(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + tid;
    let mut v = 0.0;
    if i < n {
        v = x[i];
    }
    s[tid] = v;
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
