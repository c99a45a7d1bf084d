//! `stencil3_tiled`: a three-point stencil staged through a shared tile —
//! the library's example of a kernel whose fastest configuration is unsafe.
//!
//! Each block stages `TILE` inputs plus a one-element halo on each side in
//! shared memory, then writes `TILE` outputs. A larger tile loads fewer
//! halos and runs fewer blocks, so it is cheaper; but its shared array
//! grows with it, and `TILE = 16384` (64 KiB) is over the generic target's
//! 48 KiB and lavapipe's 32 KiB. `oxmera kernel tune stencil3_tiled`
//! refuses it with OXK004 and lists it as refused-but-faster.

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, rng_f32};

/// `out[i] = x[i - 1] + x[i] + x[i + 1]` (zero outside `x`) for `i < n`.
/// Block `(B)`, grid `ceil(n / TILE)`; each thread writes `TILE / B`
/// outputs, so `B` must divide `TILE` (the search space's `require`).
#[kernel(
    block = [256],
    search(
        TILE = [1024, 4096, 16384],
        block = [64, 96, 128, 256],
        require = [TILE % block_x == 0]
    )
)]
pub fn stencil3_tiled<const TILE: u32 = 1024>(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(TILE + 2);
    let base = block_idx_x() * TILE;
    let tid = thread_idx_x();
    // The tile and its halo: s[j] holds x[base + j - 1].
    let mut j = tid;
    while j < TILE + 2 {
        let g = base + j;
        let mut v = 0.0;
        if g >= 1 && g - 1 < n {
            v = x[g - 1];
        }
        s[j] = v;
        j += block_dim_x();
    }
    sync_threads();
    let per = TILE / block_dim_x();
    for q in 0..per {
        let t = q * block_dim_x() + tid;
        let i = base + t;
        if i < n {
            out[i] = s[t] + s[t + 1] + s[t + 2];
        }
    }
}

/// The host's stencil in f64, and each element's bound: two additions in
/// f32, each rounding to half an ulp of a partial sum.
pub(crate) fn expected(x: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let at = |i: isize| -> f64 {
        if i < 0 || i as usize >= x.len() {
            0.0
        } else {
            x[i as usize] as f64
        }
    };
    (0..x.len() as isize)
        .map(|i| {
            let (a, b, c) = (at(i - 1), at(i), at(i + 1));
            let abs = a.abs() + b.abs() + c.abs();
            (a + b + c, 2.0 * f32::EPSILON as f64 * abs)
        })
        .unzip()
}

/// The demo at `block` with the default tile: a ragged 3000 elements.
pub(super) fn demo(block: Dim3, seed: u64) -> Demo {
    workload(block, 1024, 3000, seed)
}

/// `n` seeded inputs for a tile of `tile` elements at `block`.
pub(crate) fn workload(block: Dim3, tile: u32, n: u32, seed: u64) -> Demo {
    let x = rng_f32(seed, n as usize);
    let (expected, tolerance) = expected(&x);
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(n.div_ceil(tile)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; n as usize])),
            Arg::Scalar(Value::U32(n)),
        ],
        output: 1,
        expected,
        tolerance,
        summary: format!("three-point stencil over {n} seeded values"),
    }
}
