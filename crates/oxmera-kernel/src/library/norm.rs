//! Layer normalization, a row a thread, and the reductions that walk
//! their elements in order (moments, extremes, products), an output a
//! thread.

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, rng_f32};

/// `(x - mean) / sqrt(var + eps)` over each row: the dims marked in
/// `reduced` (the trailing ones) of a strided input, one thread per row,
/// written row-major. Three passes over the row:
///
/// 1. the mean, summed in leaves of 64 (so a term meets at most 126
///    additions in a row of 4096, within the conformance row's bound for
///    an accurate sum), and the largest |x|;
/// 2. the variance of the deviations, divided by a scale first where
///    squares could overflow `f32` (a row of 1e30s has a finite result);
/// 3. the output.
///
/// A row of n ≤ 4096 keeps every loop under llvmpipe's 65535 iterations.
#[kernel(block = [64])]
pub fn layer_norm_rows(
    x: &[f32],
    out: &mut [f32],
    shape: &[u32],
    xstride: &[i32],
    reduced: &[u32],
    ndim: u32,
    n_rows: u32,
    row_len: u32,
    xoff: i32,
    eps: f32,
) {
    let r = block_idx_x() * block_dim_x() + thread_idx_x();
    if r < n_rows {
        let mut rem = r;
        let mut base = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            if reduced[d] == 0 {
                let c = rem % shape[d];
                rem = rem / shape[d];
                base += c as i32 * xstride[d];
            }
        }
        let mut total = 0.0f32;
        let mut leaf = 0.0f32;
        let mut largest = 0.0f32;
        for j in 0..row_len {
            let mut at = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = at % shape[d];
                    at = at / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            let v = x[off];
            leaf += v;
            if v.abs() > largest {
                largest = v.abs();
            }
            if j % 64 == 63 {
                total += leaf;
                leaf = 0.0;
            }
        }
        total += leaf;
        let n = row_len as f32;
        let mean = total / n;
        // Deviations reach at most twice the largest |x|; divide them by
        // a scale where their squares could pass f32's range (2^40).
        let mut scale = 1.0f32;
        if largest > 1099511627776.0 {
            scale = largest;
        }
        let mut squares = 0.0f32;
        leaf = 0.0;
        for j in 0..row_len {
            let mut at = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = at % shape[d];
                    at = at / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            let dev = (x[off] - mean) / scale;
            leaf += dev * dev;
            if j % 64 == 63 {
                squares += leaf;
                leaf = 0.0;
            }
        }
        squares += leaf;
        let rstd = 1.0 / (scale * (squares / n + eps / (scale * scale)).sqrt());
        for j in 0..row_len {
            let mut at = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = at % shape[d];
                    at = at / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            out[r * row_len + j] = (x[off] - mean) * rstd;
        }
    }
}

/// The demo: the rows of a transposed `[70, 6]` input (rows of 70, across
/// a leaf boundary), one of them of 1e30s; eps 1e-5. Tolerance: the
/// conformance row's bound, `(2n + 6)·ε·(rstd·mean|x| + |y|·(1 + M2/(var
/// + eps)))` for a row of n, with M2 the mean square.
pub(super) fn demo(block: Dim3, seed: u64) -> Demo {
    let (len, rows, eps) = (70usize, 6usize, 1e-5f64);
    // Stored [70, 6]: row r of the view is column r of the storage.
    let mut x = rng_f32(seed, len * rows);
    for j in 0..len {
        x[j * rows + 2] *= 1e30;
    }
    let mut expected = Vec::with_capacity(len * rows);
    let mut tolerance = Vec::with_capacity(len * rows);
    for r in 0..rows {
        let row: Vec<f64> = (0..len).map(|j| f64::from(x[j * rows + r])).collect();
        let n = len as f64;
        let mean = row.iter().sum::<f64>() / n;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let rstd = 1.0 / (var + eps).sqrt();
        let abs_mean = row.iter().map(|v| v.abs()).sum::<f64>() / n;
        let m2 = row.iter().map(|v| v * v).sum::<f64>() / n;
        for v in &row {
            let y = (v - mean) * rstd;
            let unit = (2.0 * n + 6.0) * f64::from(f32::EPSILON);
            expected.push(y);
            tolerance.push(unit * (rstd * abs_mean + y.abs() * (1.0 + m2 / (var + eps))));
        }
    }
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x((rows as u32).div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; len * rows])),
            Arg::Buffer(Buffer::from_u32(&[rows as u32, len as u32])),
            Arg::Buffer(Buffer::from_i32(&[1, rows as i32])),
            Arg::Buffer(Buffer::from_u32(&[0, 1])),
            u(2),
            u(rows as u32),
            u(len as u32),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::F32(eps as f32)),
        ],
        output: 1,
        expected,
        tolerance,
        summary: "layer norm over the rows of a transposed [70,6] view, one row of 1e30s".into(),
    }
}

/// The `op` values of [`moments_strided`].
pub mod moment_code {
    /// The variance, `Σ(x - mean)² / max(n - correction, 0)`.
    pub const VAR: u32 = 0;
    /// The standard deviation, the variance's square root.
    pub const STD: u32 = 1;
    /// The maximum (a NaN wins; ties keep the first).
    pub const MAX: u32 = 2;
    /// The minimum (a NaN wins; ties keep the first).
    pub const MIN: u32 = 3;
    /// The product, in order.
    pub const PROD: u32 = 4;
}

/// A reduction of a strided f32 input over the dims marked in `reduced`,
/// one thread per output walking its reduced sub-space in row-major order
/// (the reference's order): the variance and standard deviation in two
/// passes, the mean and the squared deviations each summed in leaves of
/// 64; the maximum, minimum and product in one. `op` is one of
/// [`moment_code`]; at most 4096 reduced elements (llvmpipe's loop limit).
#[kernel(block = [64, 256])]
pub fn moments_strided(
    x: &[f32],
    out: &mut [f32],
    shape: &[u32],
    xstride: &[i32],
    reduced: &[u32],
    ndim: u32,
    n_out: u32,
    n_reduced: u32,
    xoff: i32,
    op: u32,
    correction: f32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n_out {
        let mut rem = i;
        let mut base = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            if reduced[d] == 0 {
                let c = rem % shape[d];
                rem = rem / shape[d];
                base += c as i32 * xstride[d];
            }
        }
        // Pass 1: the sum (in leaves), the best, the product.
        let mut total = 0.0f32;
        let mut leaf = 0.0f32;
        let mut best = 0.0f32;
        let mut best_nan = false;
        let mut product = 1.0f32;
        for j in 0..n_reduced {
            let mut at = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = at % shape[d];
                    at = at / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            let v = x[off];
            leaf += v;
            if j % 64 == 63 {
                total += leaf;
                leaf = 0.0;
            }
            product = product * v;
            let nan = (v.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32;
            if j == 0 {
                best = v;
                best_nan = nan;
            } else if !best_nan && (nan || (op == 2 && v > best) || (op == 3 && v < best)) {
                best = v;
                best_nan = nan;
            }
        }
        total += leaf;
        if op == 2 || op == 3 {
            out[i] = best;
        } else if op == 4 {
            out[i] = product;
        } else {
            let mean = total / n_reduced as f32;
            let mut squares = 0.0f32;
            leaf = 0.0;
            for j in 0..n_reduced {
                let mut at = j;
                let mut off = base;
                for k in 0..ndim {
                    let d = ndim - 1 - k;
                    if reduced[d] == 1 {
                        let c = at % shape[d];
                        at = at / shape[d];
                        off += c as i32 * xstride[d];
                    }
                }
                let dev = x[off] - mean;
                leaf += dev * dev;
                if j % 64 == 63 {
                    squares += leaf;
                    leaf = 0.0;
                }
            }
            squares += leaf;
            let mut count = n_reduced as f32 - correction;
            if count < 0.0 {
                count = 0.0;
            }
            let var = squares / count;
            if op == 1 {
                out[i] = var.sqrt();
            } else {
                out[i] = var;
            }
        }
    }
}

/// The demo: the sample variance (correction 1) over dim 0 of a `[100, 3]`
/// input of mean about 10: the two-pass bound, `(4n + 4)·ε·M2` with `M2`
/// the mean square over `n - 1`.
pub(super) fn moments_demo(block: Dim3, seed: u64) -> Demo {
    let (n, cols) = (100usize, 3usize);
    let x: Vec<f32> = rng_f32(seed, n * cols).iter().map(|v| v + 10.0).collect();
    let (mut expected, mut tolerance) = (Vec::new(), Vec::new());
    for c in 0..cols {
        let col: Vec<f64> = (0..n).map(|r| f64::from(x[r * cols + c])).collect();
        let mean = col.iter().sum::<f64>() / n as f64;
        let squares: f64 = col.iter().map(|v| (v - mean).powi(2)).sum();
        let m2: f64 = col.iter().map(|v| v * v).sum::<f64>() / (n as f64 - 1.0);
        expected.push(squares / (n as f64 - 1.0));
        tolerance.push((4.0 * n as f64 + 4.0) * f64::from(f32::EPSILON) * m2);
    }
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(3u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&[0.0; 3])),
            Arg::Buffer(Buffer::from_u32(&[n as u32, cols as u32])),
            Arg::Buffer(Buffer::from_i32(&[cols as i32, 1])),
            Arg::Buffer(Buffer::from_u32(&[1, 0])),
            u(2),
            u(cols as u32),
            u(n as u32),
            Arg::Scalar(Value::I32(0)),
            u(moment_code::VAR),
            Arg::Scalar(Value::F32(1.0)),
        ],
        output: 1,
        expected,
        tolerance,
        summary: "sample variance down the columns of [100,3], mean about 10".into(),
    }
}
