//! Gather and scatter on 32-bit words, for every dtype a GPU stores as
//! one or two words an element (`wide` 1 or 2: `i32`, `f32`, `i64`,
//! `f64`; a backend moves halves and bytes through a word each). A move
//! never reads a word as a number, so every bit pattern goes through
//! unchanged; scatter-add reads them as wrapping integers (32-bit, or a
//! 64-bit pair, low word first).
//!
//! Deterministic: scatter runs one thread per output element, which walks
//! the index along `dim` at its own coordinates and takes every source
//! element that names it, in increasing position — the reference's order,
//! so `replace` keeps the last colliding source and `add` sums them in
//! that order — with no atomics.

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::Demo;

/// The `mode` values of [`scatter_words`].
pub mod scatter_code {
    /// The last source naming an element replaces it.
    pub const REPLACE: u32 = 0;
    /// Sources are added, wrapping (32-bit words, or 64-bit pairs when
    /// `wide` is 2).
    pub const ADD: u32 = 1;
}

/// Gather along `dim` on words: output element `i` (of the index's shape,
/// `shape`) is the input element at `i`'s coordinates with the one along
/// `dim` replaced by the `i32` index there; elements of `wide` words.
/// Input and index are strided (in elements).
#[kernel(block = [64, 256])]
pub fn gather_words(
    x: &[u32],
    index: &[i32],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    istride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    ioff: i32,
    dim: u32,
    wide: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        let mut ii = ioff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            ii += c as i32 * istride[d];
            if d != dim {
                xi += c as i32 * xstride[d];
            }
        }
        let at = (xi + index[ii] * xstride[dim]) as u32;
        if wide == 2 {
            out[2 * i] = x[2 * at];
            out[2 * i + 1] = x[2 * at + 1];
        } else {
            out[i] = x[at];
        }
    }
}

/// `x` with `src` written (`mode` [`scatter_code::REPLACE`]) or added
/// ([`scatter_code::ADD`]) at `index` along `dim`, on words (elements of
/// `wide` words), a thread per output element (see the module docs).
/// `xshape` is the input's and output's shape, `ishape` the index's and
/// source's (no larger in any dim but `dim`).
#[kernel(block = [64, 256])]
pub fn scatter_words(
    x: &[u32],
    index: &[i32],
    src: &[u32],
    out: &mut [u32],
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
    mode: u32,
    wide: u32,
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
        let at = xi as u32;
        let mut lo = 0u32;
        let mut hi = 0u32;
        if wide == 2 {
            lo = x[2 * at];
            hi = x[2 * at + 1];
        } else {
            lo = x[at];
        }
        if inside {
            for j in 0..ishape[dim] {
                if index[ib + j as i32 * istride[dim]] == along as i32 {
                    let s = (sb + j as i32 * sstride[dim]) as u32;
                    let mut slo = 0u32;
                    let mut shi = 0u32;
                    if wide == 2 {
                        slo = src[2 * s];
                        shi = src[2 * s + 1];
                    } else {
                        slo = src[s];
                    }
                    if mode == 1 {
                        let sum = lo + slo;
                        let carry = (sum < lo) as u32;
                        hi = hi + shi + carry;
                        lo = sum;
                    } else {
                        lo = slo;
                        hi = shi;
                    }
                }
            }
        }
        if wide == 2 {
            out[2 * o] = lo;
            out[2 * o + 1] = hi;
        } else {
            out[o] = lo;
        }
    }
}

fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}

fn i(v: i32) -> Arg {
    Arg::Scalar(Value::I32(v))
}

/// The demos: i64 values (two words each) gathered along dim 1 of a
/// `[2, 3]` input; and i64 sources added at colliding indices along dim 0
/// of a `[3, 2]` input, with a carry into the high word.
pub(super) fn demo(name: &str, block: Dim3) -> Option<Demo> {
    let words = |v: &[i64]| -> Vec<u32> {
        v.iter()
            .flat_map(|&x| [x as u32, (x >> 32) as u32])
            .collect()
    };
    let as_f64 = |v: &[i64]| -> Vec<f64> { words(v).iter().map(|&w| f64::from(w)).collect() };
    let bt = block.count() as u32;
    Some(match name {
        "gather_words" => {
            let x = [10i64, -20, 1 << 40, 7, -(1 << 35), 99];
            let index = [2i32, 0, 1, 1, 2, 0];
            let want: Vec<i64> = (0..6).map(|k| x[(k / 3) * 3 + index[k] as usize]).collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(6u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    Arg::Buffer(Buffer::from_u32(&words(&x))),
                    Arg::Buffer(Buffer::from_i32(&index)),
                    Arg::Buffer(Buffer::from_u32(&[0; 12])),
                    Arg::Buffer(Buffer::from_u32(&[2, 3])),
                    Arg::Buffer(Buffer::from_i32(&[3, 1])),
                    Arg::Buffer(Buffer::from_i32(&[3, 1])),
                    u(2),
                    u(6),
                    i(0),
                    i(0),
                    u(1),
                    u(2),
                ],
                output: 2,
                expected: as_f64(&want),
                tolerance: vec![0.0; 12],
                summary: "i64 (word pairs) gathered along dim 1 of [2,3]".into(),
            }
        }
        "scatter_words" => {
            let x = [1i64, 2, 0xffff_ffff, 4, 5, 6];
            let index = [2i32, 0, 0, 0, 2, 1];
            let src = [100i64, -1, 1, 10, -200, 1 << 33];
            let mut want = x;
            for (k, (&p, &s)) in index.iter().zip(&src).enumerate() {
                let at = p as usize * 2 + k % 2;
                want[at] = want[at].wrapping_add(s);
            }
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(6u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    Arg::Buffer(Buffer::from_u32(&words(&x))),
                    Arg::Buffer(Buffer::from_i32(&index)),
                    Arg::Buffer(Buffer::from_u32(&words(&src))),
                    Arg::Buffer(Buffer::from_u32(&[0; 12])),
                    Arg::Buffer(Buffer::from_u32(&[3, 2])),
                    Arg::Buffer(Buffer::from_u32(&[3, 2])),
                    Arg::Buffer(Buffer::from_i32(&[2, 1])),
                    Arg::Buffer(Buffer::from_i32(&[2, 1])),
                    Arg::Buffer(Buffer::from_i32(&[2, 1])),
                    u(2),
                    u(0),
                    u(6),
                    i(0),
                    i(0),
                    i(0),
                    u(scatter_code::ADD),
                    u(2),
                ],
                output: 3,
                expected: as_f64(&want),
                tolerance: vec![0.0; 12],
                summary: "i64 scatter-add with collisions along dim 0, carries across words".into(),
            }
        }
        _ => return None,
    })
}
