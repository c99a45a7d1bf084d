//! The library kernels, written in the kernel language.

use crate::kernel;

/// `out[i] = a[i] + b[i]` over contiguous buffers: the simplest elementwise
/// kernel, and the simulator benchmark's workload.
#[kernel(block = [64, 128, 256])]
pub fn add(a: &[f32], b: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        out[i] = a[i] + b[i];
    }
}

/// Elementwise unary op over a strided (possibly broadcast, stride 0) input:
/// `out[i] = f(x[xoff + sum_d coord_d(i) * xstride[d]])` for the contiguous
/// output index `i` of shape `shape[..ndim]`. `op`: 0 neg, 1 exp, 2 tanh,
/// 3 relu, 4 sqrt, 5 abs.
#[kernel(block = [64, 128, 256])]
pub fn unary_strided(
    x: &[f32],
    out: &mut [f32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    op: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            xi += c as i32 * xstride[d];
        }
        let v = x[xi];
        let mut r = v;
        if op == 0 {
            r = -v;
        } else if op == 1 {
            r = v.exp();
        } else if op == 2 {
            r = v.tanh();
        } else if op == 3 {
            r = v.max(0.0);
        } else if op == 4 {
            r = v.sqrt();
        } else if op == 5 {
            r = v.abs();
        }
        out[i] = r;
    }
}

/// Elementwise binary op over two strided, broadcast inputs (stride 0 on a
/// broadcast axis). `op`: 0 add, 1 sub, 2 mul, 3 div, 4 max.
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
        } else if op == 4 {
            r = x.max(y);
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
#[kernel(block = [[16, 16]])]
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
