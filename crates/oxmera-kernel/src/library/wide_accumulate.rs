//! The f64 accumulations walked in order: scatter-add and the running sum
//! and product, for adapters with f64 (wgpu's SHADER_F64). Each thread
//! owns one output and adds (or multiplies) in the order the reference
//! backend does, so every step is one correctly rounded f64 operation, as
//! the reference's: the results are the reference's bit for bit where the
//! driver rounds f64 `+` and `*` correctly (lavapipe does; Vulkan asks it
//! of both).
//!
//! They are the f64 siblings of [`super::scatter_words`] (its `ADD` mode)
//! and [`super::scan_strided`] (its `f32` kind), with those kernels'
//! parameters less the ones that choose a dtype.

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::Demo;
use super::scan::scan_code;

/// `x` with `src` added at `index` along `dim`, in f64, a thread per
/// output element walking the index's slice in order (deterministic: no
/// atomics). `xshape` is the input's and output's shape, `ishape` the
/// index's and source's (no larger in any dim but `dim`).
#[kernel(block = [64, 256])]
pub fn scatter_add_f64(
    x: &[f64],
    index: &[i32],
    src: &[f64],
    out: &mut [f64],
    xshape: &[u32],
    ishape: &[u32],
    xstride: &[i32],
    istride: &[i32],
    sstride: &[i32],
    ndim: u32,
    dim: u32,
    n: u32,
    xoff: i32,
    ioff: i32,
    soff: i32,
) {
    let o = block_idx_x() * block_dim_x() + thread_idx_x();
    if o < n {
        let mut rem = o;
        let mut xi = xoff;
        let mut ib = ioff;
        let mut sb = soff;
        let mut along = 0u32;
        let mut inside = true;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % xshape[d];
            rem = rem / xshape[d];
            xi += c as i32 * xstride[d];
            if d == dim {
                along = c;
            } else {
                if c >= ishape[d] {
                    inside = false;
                }
                ib += c as i32 * istride[d];
                sb += c as i32 * sstride[d];
            }
        }
        let mut acc = x[xi];
        if inside {
            for j in 0..ishape[dim] {
                if index[ib + j as i32 * istride[dim]] == along as i32 {
                    acc = acc + src[sb + j as i32 * sstride[dim]];
                }
            }
        }
        out[o] = acc;
    }
}

/// The inclusive running sum (`op` [`scan_code::SUM`]) or product
/// ([`scan_code::PROD`]) of an f64 `x` along `dim`, written contiguously:
/// thread `r` walks row `r` (the elements sharing every coordinate but
/// `dim`) in order. `n` counts the rows.
#[kernel(block = [64, 256])]
pub fn scan_f64(
    x: &[f64],
    out: &mut [f64],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    dim: u32,
    op: u32,
) {
    let r = block_idx_x() * block_dim_x() + thread_idx_x();
    if r < n {
        let mut rem = r;
        let mut xi = xoff;
        let mut oi = 0u32;
        let mut step = 1u32;
        let mut ostep = 1u32;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            if d == dim {
                ostep = step;
            } else {
                let c = rem % shape[d];
                rem = rem / shape[d];
                xi += c as i32 * xstride[d];
                oi += c * step;
            }
            step = step * shape[d];
        }
        let mut acc = 0.0f64;
        if op == 1 {
            acc = 1.0f64;
        }
        for j in 0..shape[dim] {
            let v = x[xi + j as i32 * xstride[dim]];
            if op == 1 {
                acc = acc * v;
            } else {
                acc = acc + v;
            }
            out[oi + j * ostep] = acc;
        }
    }
}

/// Argmax (`op` 0) or argmin (`op` 1) of a strided f64 input over the
/// dims marked in `reduced`, a thread per output walking its elements in
/// row-major order: the first best position wins and a NaN (seen on its
/// bits) beats every number, the first NaN winning, as the reference
/// defines; written as an `i64` (two words, low first). The f64 sibling
/// of [`super::argbest_strided`].
#[kernel(block = [64, 256])]
pub fn argbest_f64(
    x: &[f64],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    reduced: &[u32],
    ndim: u32,
    n_out: u32,
    n_reduced: u32,
    xoff: i32,
    op: u32,
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
        let mut best = 0u32;
        let mut best_v = 0.0f64;
        let mut best_nan = false;
        for j in 0..n_reduced {
            let mut r = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = r % shape[d];
                    r = r / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            let v = x[off];
            let nan = (v.to_bits() & 0x7fff_ffff_ffff_ffffu64) > 0x7ff0_0000_0000_0000u64;
            let mut take = false;
            if j == 0 {
                take = true;
            } else if !best_nan {
                if nan {
                    take = true;
                } else if op == 0 && v > best_v {
                    take = true;
                } else if op == 1 && v < best_v {
                    take = true;
                }
            }
            if take {
                best = j;
                best_v = v;
                best_nan = nan;
            }
        }
        out[2 * i] = best;
        out[2 * i + 1] = 0u32;
    }
}

fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}

fn i(v: i32) -> Arg {
    Arg::Scalar(Value::I32(v))
}

/// Values f32 cannot hold (bits below its 24), some far apart in
/// magnitude so that the order of the additions shows in the result.
fn values(seed: u64, n: usize) -> Vec<f64> {
    super::demos::rng_f32(seed, n)
        .into_iter()
        .enumerate()
        .map(|(k, v)| f64::from(v) * (1.0 + 1e-9) * if k % 3 == 0 { 1e12 } else { 1.0 })
        .collect()
}

/// The demos: f64 sources added at colliding indices along dim 0 of a
/// `[3, 4]` input (the index `[5, 4]`, each column's adds in order); and
/// the running sum (odd seeds) or product (even seeds) along the rows of
/// a transposed `[4, 5]` view.
pub(super) fn demo(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    let launch = |threads: u32| LaunchConfig {
        grid: Dim3::x(threads.div_ceil(block.count() as u32)),
        block,
    };
    Some(match name {
        "scatter_add_f64" => {
            let x = values(seed, 12);
            let src = values(seed + 1, 20);
            let index: Vec<i32> = (0..20).map(|k| (k * 7 + seed as i32) % 3).collect();
            let mut expected = x.clone();
            for j in 0..5 {
                for c in 0..4 {
                    let at = index[j * 4 + c] as usize * 4 + c;
                    expected[at] += src[j * 4 + c];
                }
            }
            Demo {
                launch: launch(12),
                args: vec![
                    Arg::Buffer(Buffer::from_f64(&x)),
                    Arg::Buffer(Buffer::from_i32(&index)),
                    Arg::Buffer(Buffer::from_f64(&src)),
                    Arg::Buffer(Buffer::from_f64(&[0.0; 12])),
                    Arg::Buffer(Buffer::from_u32(&[3, 4])),
                    Arg::Buffer(Buffer::from_u32(&[5, 4])),
                    Arg::Buffer(Buffer::from_i32(&[4, 1])),
                    Arg::Buffer(Buffer::from_i32(&[4, 1])),
                    Arg::Buffer(Buffer::from_i32(&[4, 1])),
                    u(2),
                    u(0),
                    u(12),
                    i(0),
                    i(0),
                    i(0),
                ],
                output: 3,
                // The same additions in the same order: the same bits.
                tolerance: vec![0.0; 12],
                expected,
                summary: "f64 scatter-add of [5,4] at colliding indices into [3,4], in order"
                    .into(),
            }
        }
        "scan_f64" => {
            let product = seed % 2 == 0;
            // Stored [5, 4]; row r of the [4, 5] view is column r.
            let x = values(seed, 20);
            let mut expected = Vec::new();
            for r in 0..4 {
                let mut acc = if product { 1.0 } else { 0.0 };
                for c in 0..5 {
                    let v = x[c * 4 + r];
                    acc = if product { acc * v } else { acc + v };
                    expected.push(acc);
                }
            }
            Demo {
                launch: launch(4),
                args: vec![
                    Arg::Buffer(Buffer::from_f64(&x)),
                    Arg::Buffer(Buffer::from_f64(&[0.0; 20])),
                    Arg::Buffer(Buffer::from_u32(&[4, 5])),
                    Arg::Buffer(Buffer::from_i32(&[1, 4])),
                    u(2),
                    u(4),
                    i(0),
                    u(1),
                    u(if product {
                        scan_code::PROD
                    } else {
                        scan_code::SUM
                    }),
                ],
                output: 1,
                tolerance: vec![0.0; 20],
                expected,
                summary: format!(
                    "running f64 {} along the rows of a transposed [4,5] view",
                    if product { "product" } else { "sum" }
                ),
            }
        }
        _ => return None,
    })
}
