//! The library kernels, written in the kernel language.

use crate::kernel;

/// The `op` values of [`binary_strided`].
pub mod binary_code {
    /// `a + b`
    pub const ADD: u32 = 0;
    /// `a - b`
    pub const SUB: u32 = 1;
    /// `a * b`
    pub const MUL: u32 = 2;
    /// `a / b`
    pub const DIV: u32 = 3;
    /// `max(a, b)`
    pub const MAX: u32 = 4;
    /// `min(a, b)`
    pub const MIN: u32 = 5;
}

/// `out[i] = a[i] + b[i]` over contiguous buffers: the simplest elementwise
/// kernel, and the simulator benchmark's workload.
#[kernel(block = [64, 128, 256])]
pub fn add(a: &[f32], b: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        out[i] = a[i] + b[i];
    }
}

/// Elementwise binary op over two strided, broadcast inputs (stride 0 on a
/// broadcast axis). `op` is one of [`binary_code`]: 0 add, 1 sub, 2 mul,
/// 3 div, 4 maximum, 5 minimum (IEEE 754-2019: NaN wins, -0 < +0).
#[kernel(block = [64, 128, 256])]
pub fn binary_strided(
    a: &[f32],
    b: &[f32],
    out: &mut [f32],
    shape: &[u32],
    astride: &[i32],
    bstride: &[i32],
    ndim: u32,
    n: u32,
    aoff: i32,
    boff: i32,
    op: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut ai = aoff;
        let mut bi = boff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            ai += c as i32 * astride[d];
            bi += c as i32 * bstride[d];
        }
        let x = a[ai];
        let y = b[bi];
        let mut r = x + y;
        if op == 1 {
            r = x - y;
        } else if op == 2 {
            r = x * y;
        } else if op == 3 {
            r = x / y;
        } else if op == 4 || op == 5 {
            // IEEE maximum/minimum, as the reference: a NaN wins (tested
            // on the bits: an LLVM-based driver may assume no NaN), and
            // -0 is below +0.
            let x_nan = (x.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32;
            let y_nan = (y.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32;
            let x_neg = (x.to_bits() >> 31u32) == 1u32;
            if x_nan || y_nan {
                r = f32::from_bits(0x7fc0_0000u32);
            } else if x == y {
                // Equal: at most the signs of zero differ.
                if x_neg == (op == 4) {
                    r = y;
                } else {
                    r = x;
                }
            } else if (x > y) == (op == 4) {
                r = x;
            } else {
                r = y;
            }
        }
        out[i] = r;
    }
}

/// Block sum: each block reduces a grid-stride share of `x` through a
/// shared-memory tree down to one warp, then warp shuffles; thread 0 writes
/// `out[block]`. Blocks must be a power of two, at least 64.
#[kernel(block = [64, 128, 256, 512, 1024])]
pub fn reduce_sum(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let mut acc = 0.0;
    let mut i = block_idx_x() * block_dim_x() + tid;
    let stride = grid_dim_x() * block_dim_x();
    while i < n {
        acc += x[i];
        i += stride;
    }
    s[tid] = acc;
    sync_threads();
    // The tree stops at one warp and the warp finishes with shuffles; the
    // warp's width is the target's (`warp_size()`), not a literal 32, so the
    // sum is right on lavapipe's subgroups of 8 as well as on 32-wide warps.
    let ws = warp_size();
    let mut half = block_dim_x() / 2;
    while half >= ws {
        if tid < half {
            s[tid] += s[tid + half];
        }
        sync_threads();
        half /= 2;
    }
    if tid < ws {
        let mut v = s[tid];
        let mut off = ws / 2;
        while off > 0 {
            v += shfl_down_sync(0xffff_ffffu32, v, off);
            off /= 2;
        }
        if tid == 0 {
            out[block_idx_x()] = v;
        }
    }
}

/// Row softmax of a `rows x cols` matrix: one block per row, a max and a sum
/// reduction through shared memory. Blocks must be a power of two.
#[kernel(block = [32, 64, 128, 256])]
pub fn softmax_rows(x: &[f32], y: &mut [f32], cols: u32) {
    let s = shared::<f32>(1024);
    let tid = thread_idx_x();
    let base = block_idx_x() * cols;
    let mut m = f32::NEG_INFINITY;
    for j in (tid..cols).step_by(block_dim_x()) {
        m = m.max(x[base + j]);
    }
    s[tid] = m;
    sync_threads();
    let mut half = block_dim_x() / 2;
    while half > 0 {
        if tid < half {
            s[tid] = s[tid].max(s[tid + half]);
        }
        sync_threads();
        half /= 2;
    }
    let rmax = s[0];
    sync_threads();
    let mut sum = 0.0;
    for j in (tid..cols).step_by(block_dim_x()) {
        sum += (x[base + j] - rmax).exp();
    }
    s[tid] = sum;
    sync_threads();
    half = block_dim_x() / 2;
    while half > 0 {
        if tid < half {
            s[tid] += s[tid + half];
        }
        sync_threads();
        half /= 2;
    }
    let total = s[0];
    for j in (tid..cols).step_by(block_dim_x()) {
        y[base + j] = (x[base + j] - rmax).exp() / total;
    }
}

/// Tiled transpose `y = x^T` of a `rows x cols` matrix through a shared tile
/// padded to `TILE + 1` columns, so that the column-wise reads of the tile
/// fall in distinct banks. Block `(TILE, TILE)`, grid covering the matrix.
#[kernel(block = [[16, 16]])]
pub fn transpose_tiled<const TILE: u32 = 16>(x: &[f32], y: &mut [f32], rows: u32, cols: u32) {
    let tile = shared::<f32>(TILE * (TILE + 1));
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let c = block_idx_x() * TILE + tx;
    let r = block_idx_y() * TILE + ty;
    if r < rows && c < cols {
        tile[ty * (TILE + 1) + tx] = x[r * cols + c];
    }
    sync_threads();
    let oc = block_idx_y() * TILE + tx;
    let orow = block_idx_x() * TILE + ty;
    if orow < cols && oc < rows {
        y[orow * rows + oc] = tile[tx * (TILE + 1) + ty];
    }
}

/// Tiled matmul `c = a b` (`m x k` times `k x n`) staged through two shared
/// `TILE x TILE` tiles. Block `(TILE, TILE)`, grid covering `c`.
///
/// The contract is the default tile (block 16 x 16, proven at compile
/// time); the search space tries tiles of 4 to 32, each with its
/// `(TILE, TILE)` block. A tile changes the order of the sum over `k` (one
/// tile's products, then the next), so results differ between tiles in the
/// last bits, within the `(k + 1)·ε·Σ|a·b|` bound every tile is checked
/// against.
#[kernel(
    block = [[16, 16]],
    search(TILE = [4, 8, 16, 32], block = [[TILE, TILE]])
)]
pub fn matmul_tiled<const TILE: u32 = 16>(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared::<f32>(TILE * TILE);
    let b_tile = shared::<f32>(TILE * TILE);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let row = block_idx_y() * TILE + ty;
    let col = block_idx_x() * TILE + tx;
    let mut acc = 0.0;
    let tiles = (k + TILE - 1) / TILE;
    for t in 0..tiles {
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
        sync_threads();
        for q in 0..TILE {
            acc += a_tile[ty * TILE + q] * b_tile[q * TILE + tx];
        }
        sync_threads();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}

/// Batched matmul over strided operands: `c[z] = a[z] b[z]` for `m x k`
/// times `k x n` matrices, each operand read through its own row and
/// column strides (a transposed operand is a view, never a copy) and its
/// own strides over the `nbatch` batch dims (`batch_shape`; stride 0 on a
/// broadcast dim). `c` is contiguous `[batch.., m, n]`. Block `(TILE,
/// TILE)`, grid `(ceil(n / TILE), ceil(m / TILE), batch)`. Accumulates in
/// f32, in `k` order within a tile. The wgpu backend runs the tile
/// `oxmera kernel tune` cached for its adapter, else 16 (the contract).
#[kernel(
    block = [[16, 16]],
    search(TILE = [8, 16, 32], block = [[TILE, TILE]])
)]
pub fn matmul_strided<const TILE: u32 = 16>(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    batch_shape: &[u32],
    a_batch_stride: &[i32],
    b_batch_stride: &[i32],
    nbatch: u32,
    m: u32,
    n: u32,
    k: u32,
    a_row: i32,
    a_col: i32,
    b_row: i32,
    b_col: i32,
    a_off: i32,
    b_off: i32,
) {
    let a_tile = shared::<f32>(TILE * TILE);
    let b_tile = shared::<f32>(TILE * TILE);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let z = block_idx_z();
    // The batch offsets: the batch index split over the batch dims.
    let mut rem = z;
    let mut a_base = a_off;
    let mut b_base = b_off;
    for q in 0..nbatch {
        let d = nbatch - 1 - q;
        let coord = rem % batch_shape[d];
        rem = rem / batch_shape[d];
        a_base += coord as i32 * a_batch_stride[d];
        b_base += coord as i32 * b_batch_stride[d];
    }
    let row = block_idx_y() * TILE + ty;
    let col = block_idx_x() * TILE + tx;
    let mut acc = 0.0;
    let tiles = (k + TILE - 1) / TILE;
    for t in 0..tiles {
        let ac = t * TILE + tx;
        let br = t * TILE + ty;
        let mut av = 0.0;
        if row < m && ac < k {
            av = a[a_base + row as i32 * a_row + ac as i32 * a_col];
        }
        let mut bv = 0.0;
        if br < k && col < n {
            bv = b[b_base + br as i32 * b_row + col as i32 * b_col];
        }
        a_tile[ty * TILE + tx] = av;
        b_tile[ty * TILE + tx] = bv;
        sync_threads();
        for q in 0..TILE {
            acc += a_tile[ty * TILE + q] * b_tile[q * TILE + tx];
        }
        sync_threads();
    }
    if row < m && col < n {
        c[(z * m + row) * n + col] = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Value;
    use crate::launch::LaunchConfig;
    use crate::sim::{self, Arg, Buffer, SimOptions};

    /// Binary min, then IEEE maximum and minimum, in the simulator.
    #[test]
    fn binary_min_and_max_follow_ieee() {
        // And binary min, the newest code.
        let mut args = vec![
            Arg::Buffer(Buffer::from_f32(&[1.0, -2.0])),
            Arg::Buffer(Buffer::from_f32(&[0.5, 3.0])),
            Arg::Buffer(Buffer::from_f32(&[0.0; 2])),
            Arg::Buffer(Buffer::from_u32(&[2])),
            Arg::Buffer(Buffer::from_i32(&[1])),
            Arg::Buffer(Buffer::from_i32(&[1])),
            Arg::Scalar(Value::U32(1)),
            Arg::Scalar(Value::U32(2)),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::U32(binary_code::MIN)),
        ];
        let launch = LaunchConfig::linear(1, 64);
        sim::run(binary_strided(), launch, &mut args, &SimOptions::default()).unwrap();
        assert_eq!(args[2].buffer().unwrap().to_f32(), vec![0.5, -2.0]);
        // Maximum and minimum follow IEEE 754-2019 as the reference does:
        // NaN on either side wins, and -0 < +0 in either order.
        let a = [f32::NAN, 1.0, -0.0, 0.0, -1.0, f32::INFINITY];
        let b = [1.0, f32::NAN, 0.0, -0.0, -1.0, 2.0];
        for (code, want) in [
            (
                binary_code::MAX,
                [f32::NAN, f32::NAN, 0.0, 0.0, -1.0, f32::INFINITY],
            ),
            (
                binary_code::MIN,
                [f32::NAN, f32::NAN, -0.0, -0.0, -1.0, 2.0],
            ),
        ] {
            let mut args = vec![
                Arg::Buffer(Buffer::from_f32(&a)),
                Arg::Buffer(Buffer::from_f32(&b)),
                Arg::Buffer(Buffer::from_f32(&[0.0; 6])),
                Arg::Buffer(Buffer::from_u32(&[6])),
                Arg::Buffer(Buffer::from_i32(&[1])),
                Arg::Buffer(Buffer::from_i32(&[1])),
                Arg::Scalar(Value::U32(1)),
                Arg::Scalar(Value::U32(6)),
                Arg::Scalar(Value::I32(0)),
                Arg::Scalar(Value::I32(0)),
                Arg::Scalar(Value::U32(code)),
            ];
            sim::run(binary_strided(), launch, &mut args, &SimOptions::default()).unwrap();
            let got = args[2].buffer().unwrap().to_f32();
            for (g, w) in got.iter().zip(want) {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "code {code}: {g:?} vs {w:?}"
                );
            }
        }
    }
}
