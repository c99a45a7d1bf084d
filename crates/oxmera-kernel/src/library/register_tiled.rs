//! A register-tiled matmul: the shape a fast GPU matmul has, written in
//! the kernel language.
//!
//! `matmul_tiled` gives each thread one element of `c` and reads two
//! shared values per multiply-add. Here each thread computes a `REG x REG`
//! tile of `c` held in a local 2-D array (registers, on a GPU), so one
//! value read from shared memory serves `REG` multiply-adds: per step `q`
//! of a `BK`-deep slice, a thread loads `REG` values of its rows of `a`
//! and `REG` of its columns of `b` into registers and forms their `REG²`
//! products (an outer product). A block of `(TILE / REG)²` threads covers
//! a `TILE x TILE` tile of `c`; the `a` and `b` slices it needs are staged
//! through two 2-D shared arrays (`TILE` rows of `BK`, `BK` rows of
//! `TILE`), every thread loading its share, with a barrier before the
//! slice is read and another before it is overwritten. This is the kernel
//! the CUDA and wgpu backends' fast matmul grows from.

use oxmera_kernel_macros::kernel;

use super::demos::{Demo, EPS, rng_f32};
use crate::ir::{Dim3, Value};
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

/// Register-tiled matmul `c = a b` (`m x k` times `k x n`, row-major):
/// each thread of a `(TILE / REG, TILE / REG)` block accumulates a
/// `REG x REG` tile of `c` in a local 2-D array, fed from `TILE x BK` and
/// `BK x TILE` slices of `a` and `b` staged in 2-D shared arrays. Grid
/// `(ceil(n / TILE), ceil(m / TILE))`. Sums over `k` in order, in `f32`.
///
/// The contract is the default specialization: `TILE = 32`, `REG = 4`,
/// `BK = 8`, block `(8, 8)`; any other block would leave parts of the tile
/// uncomputed, so it is the only one declared.
#[kernel(block = [[8, 8]])]
pub fn matmul_register_tiled<const TILE: u32 = 32, const REG: u32 = 4, const BK: u32 = 8>(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared::<[f32; BK]>(TILE);
    let b_tile = shared::<[f32; TILE]>(BK);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let threads = block_dim_x() * block_dim_y();
    let lin = ty * block_dim_x() + tx;
    let row0 = block_idx_y() * TILE;
    let col0 = block_idx_x() * TILE;
    let mut acc = [[0.0f32; REG]; REG];
    let mut a_reg = [0.0f32; REG];
    let mut b_reg = [0.0f32; REG];
    let slices = (k + BK - 1) / BK;
    for s in 0..slices {
        // Stage the slices: element e of each, `threads` apart; zeros
        // past the matrices' edges.
        for e in (lin..TILE * BK).step_by(threads) {
            let ar = e / BK;
            let aq = s * BK + e % BK;
            let mut av = 0.0;
            if row0 + ar < m && aq < k {
                av = a[(row0 + ar) * k + aq];
            }
            a_tile[ar][e % BK] = av;
            let bq = s * BK + e / TILE;
            let bc = col0 + e % TILE;
            let mut bv = 0.0;
            if bq < k && bc < n {
                bv = b[bq * n + bc];
            }
            b_tile[e / TILE][e % TILE] = bv;
        }
        sync_threads();
        // One outer product per step of the slice.
        for q in 0..BK {
            for i in 0..REG {
                a_reg[i] = a_tile[ty * REG + i][q];
            }
            for j in 0..REG {
                b_reg[j] = b_tile[q][tx * REG + j];
            }
            for i in 0..REG {
                for j in 0..REG {
                    acc[i][j] += a_reg[i] * b_reg[j];
                }
            }
        }
        sync_threads();
    }
    for i in 0..REG {
        for j in 0..REG {
            let row = row0 + ty * REG + i;
            let col = col0 + tx * REG + j;
            if row < m && col < n {
                c[row * n + col] = acc[i][j];
            }
        }
    }
}

/// The seeded demo: a `45 x 37` by `37 x 50` product, sizes that are no
/// multiple of the tile or the slice depth, so the edges' zero padding is
/// exercised; each element against an `f64` host sum with the bound
/// `(k + 1)·ε·Σ|a·b|`.
pub(crate) fn demo(block: Dim3, seed: u64) -> Demo {
    const TILE: u32 = 32;
    let (m, k, n) = (45u32, 37u32, 50u32);
    let a = rng_f32(seed, (m * k) as usize);
    let b = rng_f32(seed + 7, (k * n) as usize);
    let mut expected = vec![0f64; (m * n) as usize];
    let mut tolerance = vec![0f64; (m * n) as usize];
    for r in 0..m {
        for c in 0..n {
            let (mut s, mut abs) = (0f64, 0f64);
            for q in 0..k {
                let p = a[(r * k + q) as usize] as f64 * b[(q * n + c) as usize] as f64;
                s += p;
                abs += p.abs();
            }
            expected[(r * n + c) as usize] = s;
            tolerance[(r * n + c) as usize] = (k as f64 + 1.0) * EPS * abs;
        }
    }
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    Demo {
        launch: LaunchConfig {
            grid: Dim3::new(n.div_ceil(TILE), m.div_ceil(TILE), 1),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&a)),
            Arg::Buffer(Buffer::from_f32(&b)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; (m * n) as usize])),
            u(m),
            u(n),
            u(k),
        ],
        output: 2,
        expected,
        tolerance,
        summary: format!("register-tiled matmul {m}x{k} by {k}x{n}"),
    }
}
