//! Sorting along a dim on the GPU: a bitonic sorting network over keys.
//!
//! [`sort_keys`] turns each element into a 64-bit key whose unsigned order
//! is the reference's total order — NaN above every number, `-0` equal to
//! `0`, `i64` exact — plus its position in the slice, padding each slice to
//! a power of two with keys above all of them. [`bitonic_step`] is one
//! compare-exchange stage of Batcher's bitonic network; the host launches
//! the stages `k = 2, 4, .., p`, `j = k/2, .., 1`, each after the last
//! (a launch boundary is the only barrier a whole grid has). Ties of the
//! value are broken by the position, so the order is total and the
//! network's result is the stable sort, the same bits on every run.
//!
//! A key is `(hi, lo)`: for 32-bit values `hi` alone (`lo` is 0), for
//! 64-bit ones the high word then the low word. Signed integers flip the
//! sign bit; floats flip every bit of a negative value and set the sign
//! bit of a non-negative one, so that the unsigned order is the numeric
//! one, with `-0` made `+0` first and every NaN the largest key.
//! Descending inverts the key (NaN first, as in PyTorch) but not the
//! position, so equal elements keep their order in both directions.

#![allow(clippy::too_many_arguments)]

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, rng_f32};

/// The `kind` values of [`sort_keys`]: how the words of an element make
/// its key.
pub mod sort_kind {
    /// `f32`, one word.
    pub const F32: u32 = 0;
    /// `i32`, one word.
    pub const I32: u32 = 1;
    /// `f64`, two words, low first.
    pub const F64: u32 = 2;
    /// `i64`, two words, low first.
    pub const I64: u32 = 3;
}

/// The keys of a strided input walked as `[rows, n]` in row-major order
/// (the sorted dim last): thread `t` writes slot `t` of the `[rows,
/// padded]` key arrays — element `t % padded` of row `t / padded`, or a
/// padding key (every word all ones, above every element's) past `n`.
/// `xstride` and `xoff` count words; a 64-bit element's low word is at its
/// offset, its high word one after.
#[kernel(block = [64, 256])]
pub fn sort_keys(
    x: &[u32],
    hi: &mut [u32],
    lo: &mut [u32],
    pos: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    padded: u32,
    rows: u32,
    xoff: i32,
    kind: u32,
    descending: bool,
) {
    let t = block_idx_x() * block_dim_x() + thread_idx_x();
    if t < rows * padded {
        let r = t / padded;
        let j = t % padded;
        let mut h = 0xffff_ffffu32;
        let mut l = 0xffff_ffffu32;
        let mut at = 0xffff_ffffu32;
        if j < n {
            let mut rem = r * n + j;
            let mut off = xoff;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                let c = rem % shape[d];
                rem = rem / shape[d];
                off += c as i32 * xstride[d];
            }
            // `w1` the high (or only) word, `w0` the low one.
            let wide = kind >= 2u32;
            let mut w0 = 0u32;
            let mut w1 = x[off];
            if wide {
                w0 = x[off];
                w1 = x[off + 1];
            }
            if kind == 1u32 || kind == 3u32 {
                h = w1 ^ 0x8000_0000u32;
                l = w0;
            } else {
                let m = w1 & 0x7fff_ffffu32;
                let mut nan = m > 0x7f80_0000u32;
                let mut zero = m == 0u32;
                if wide {
                    nan = m > 0x7ff0_0000u32 || (m == 0x7ff0_0000u32 && w0 != 0u32);
                    zero = m == 0u32 && w0 == 0u32;
                }
                if nan {
                    h = 0xffff_ffffu32;
                    l = 0xffff_ffffu32;
                } else if zero {
                    h = 0x8000_0000u32;
                    l = 0u32;
                } else if w1 >= 0x8000_0000u32 {
                    h = w1 ^ 0xffff_ffffu32;
                    l = w0 ^ 0xffff_ffffu32;
                } else {
                    h = w1 | 0x8000_0000u32;
                    l = w0;
                }
            }
            if descending {
                h = h ^ 0xffff_ffffu32;
                l = l ^ 0xffff_ffffu32;
            }
            at = j;
        }
        hi[t] = h;
        lo[t] = l;
        pos[t] = at;
    }
}

/// One stage `(k, j)` of the bitonic network on each `padded`-long row of
/// `(hi, lo, pos)` triples: thread `t` compares slot `i` of row
/// `t / (padded/2)` — the `(t % (padded/2))`-th slot with bit `j` clear —
/// with slot `i + j`, and orders the pair ascending where bit `k` of `i`
/// is clear, descending where it is set.
#[kernel(block = [64, 256])]
pub fn bitonic_step(
    hi: &mut [u32],
    lo: &mut [u32],
    pos: &mut [u32],
    padded: u32,
    rows: u32,
    k: u32,
    j: u32,
) {
    let t = block_idx_x() * block_dim_x() + thread_idx_x();
    let half = padded / 2u32;
    if t < rows * half {
        let r = t / half;
        let q = t % half;
        let i = 2u32 * j * (q / j) + q % j;
        let a = r * padded + i;
        let b = a + j;
        let ha = hi[a];
        let hb = hi[b];
        let la = lo[a];
        let lb = lo[b];
        let pa = pos[a];
        let pb = pos[b];
        let mut greater = ha > hb;
        if ha == hb {
            greater = la > lb;
            if la == lb {
                greater = pa > pb;
            }
        }
        let ascending = (i & k) == 0u32;
        if greater == ascending {
            hi[a] = hb;
            hi[b] = ha;
            lo[a] = lb;
            lo[b] = la;
            pos[a] = pb;
            pos[b] = pa;
        }
    }
}

/// The `(hi, lo)` key [`sort_keys`] gives a value of `kind` whose words
/// are `(w0, w1)` (low, high; `w0` is 0 for a 32-bit kind): the host's
/// model, for the demo (the tests compare whole sorts with the reference).
fn sort_key(kind: u32, w0: u32, w1: u32, descending: bool) -> (u32, u32) {
    let (h, l) = match kind {
        sort_kind::I32 | sort_kind::I64 => (w1 ^ 0x8000_0000, w0),
        _ => {
            let m = w1 & 0x7fff_ffff;
            let wide = kind == sort_kind::F64;
            let nan = if wide {
                m > 0x7ff0_0000 || (m == 0x7ff0_0000 && w0 != 0)
            } else {
                m > 0x7f80_0000
            };
            let zero = m == 0 && w0 == 0;
            if nan {
                (u32::MAX, u32::MAX)
            } else if zero {
                (0x8000_0000, 0)
            } else if w1 >> 31 == 1 {
                (!w1, !w0)
            } else {
                (w1 | 0x8000_0000, w0)
            }
        }
    };
    if descending { (!h, !l) } else { (h, l) }
}

fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}

/// The demos: `sort_keys` of f32 specials through a transposed view, and
/// the last stage of the network on rows the host took through the others.
pub(super) fn demo(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    Some(match name {
        "sort_keys" => keys_demo(block),
        "bitonic_step" => step_demo(block, seed),
        _ => return None,
    })
}

/// Stored [3, 2], read as its transpose [2, 3] (rows of 3, padded to 4):
/// NaN, ±0, ±∞ and ordinary values, descending.
fn keys_demo(block: Dim3) -> Demo {
    let stored = [f32::NAN, -0.0, 0.0, f32::NEG_INFINITY, -1.5, f32::INFINITY];
    let mut expected = Vec::new();
    for r in 0..2 {
        for j in 0..4 {
            expected.push(if j < 3 {
                let w = stored[j * 2 + r].to_bits();
                f64::from(sort_key(sort_kind::F32, 0, w, true).0)
            } else {
                f64::from(u32::MAX)
            });
        }
    }
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(8u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_u32(&stored.map(f32::to_bits))),
            Arg::Buffer(Buffer::from_u32(&[0; 8])),
            Arg::Buffer(Buffer::from_u32(&[0; 8])),
            Arg::Buffer(Buffer::from_u32(&[0; 8])),
            Arg::Buffer(Buffer::from_u32(&[2, 3])),
            Arg::Buffer(Buffer::from_i32(&[1, 2])),
            u(2),
            u(3),
            u(4),
            u(2),
            Arg::Scalar(Value::I32(0)),
            u(sort_kind::F32),
            Arg::Scalar(Value::Bool(true)),
        ],
        output: 1,
        expected,
        tolerance: vec![0.0; 8],
        summary: "descending f32 keys of NaN, ±0, ±inf through a transposed view, padded".into(),
    }
}

/// Three rows of 16 keys, each two sorted halves of opposite directions
/// (a bitonic sequence, as the stages before leave it); the stage
/// `(16, 8)` on them against the host's model of that stage.
fn step_demo(block: Dim3, seed: u64) -> Demo {
    let (rows, padded, k, j) = (3usize, 16usize, 16u32, 8u32);
    let mut hi: Vec<u32> = rng_f32(seed, rows * padded)
        .iter()
        .map(|v| ((v + 1.0) * 8.0) as u32)
        .collect();
    for row in hi.chunks_mut(padded) {
        row[..padded / 2].sort_unstable();
        row[padded / 2..].sort_unstable_by(|a, b| b.cmp(a));
    }
    let lo = vec![0u32; rows * padded];
    let pos: Vec<u32> = (0..rows * padded).map(|t| (t % padded) as u32).collect();
    let mut want = hi.clone();
    for r in 0..rows {
        for q in 0..padded / 2 {
            let i = 2 * j as usize * (q / j as usize) + q % j as usize;
            let (a, b) = (r * padded + i, r * padded + i + j as usize);
            let greater = (hi[a], pos[a]) > (hi[b], pos[b]);
            if greater == ((i as u32 & k) == 0) {
                want.swap(a, b);
            }
        }
    }
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(((rows * padded / 2) as u32).div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_u32(&hi)),
            Arg::Buffer(Buffer::from_u32(&lo)),
            Arg::Buffer(Buffer::from_u32(&pos)),
            u(padded as u32),
            u(rows as u32),
            u(k),
            u(j),
        ],
        output: 0,
        expected: want.iter().map(|&v| f64::from(v)).collect(),
        tolerance: vec![0.0; rows * padded],
        summary: "the stage (16, 8) of a bitonic network on 3 rows of 16".into(),
    }
}
