//! Inclusive scans (`cumsum`, `cumprod`) along a dim, a thread per row.
//!
//! A row is walked in order by one thread, so every run adds (or
//! multiplies) in the reference's order and gives the same bits. `f32`
//! accumulates in `f32` (the reference in `f64`, rounding once); integer
//! and bool inputs (`i32`, `i64`, `u8` bytes, `bool` bytes) accumulate as
//! wrapping 64-bit integers in word pairs and are written as `i64` (low
//! word first), as the front end's integer scans are.

use crate::ir::{Dim3, Value};
use crate::kernels;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::Demo;

/// The `op` values of [`scan_strided`].
pub mod scan_code {
    /// Running sum.
    pub const SUM: u32 = 0;
    /// Running product.
    pub const PROD: u32 = 1;
}

pub use scans::scan_strided;

#[kernels]
mod scans {
    /// The full 64-bit product of two `u32`s, as `(lo, hi)`: four 16-bit
    /// partial products (the language has no 64-bit type on the GPUs).
    #[helper]
    fn mul_wide(a: u32, b: u32) -> (u32, u32) {
        let a0 = a & 0xffffu32;
        let a1 = a >> 16;
        let b0 = b & 0xffffu32;
        let b1 = b >> 16;
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        let mid = (p00 >> 16) + (p01 & 0xffffu32) + (p10 & 0xffffu32);
        let lo = (p00 & 0xffffu32) | (mid << 16);
        let hi = p11 + (p01 >> 16) + (p10 >> 16) + (mid >> 16);
        (lo, hi)
    }

    /// The inclusive scan `op` ([`scan_code`](super::scan_code)) of `x`
    /// along `dim`, written contiguously: thread `r` walks row `r` (the
    /// elements sharing every coordinate but `dim`). `kind` is the
    /// input's [`cast_code`](super::super::cast_code): 0 (`f32`, an `f32`
    /// output), or 3, 4, 5, 6 (`i32`, `i64`, `u8`, `bool`; an `i64`
    /// output, two words an element). `n` counts the rows.
    #[kernel(block = [64, 256])]
    pub fn scan_strided(
        x: &[u32],
        out: &mut [u32],
        shape: &[u32],
        xstride: &[i32],
        ndim: u32,
        n: u32,
        xoff: i32,
        dim: u32,
        op: u32,
        kind: u32,
    ) {
        let r = block_idx_x() * block_dim_x() + thread_idx_x();
        if r < n {
            // The row's start in the input and in the dense output, and
            // the output's stride along `dim`.
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
            let len = shape[dim];
            // The f32 running sum (the product is carried below).
            let mut acc = 0.0f32;
            let mut lo = 0u32;
            let mut hi = 0u32;
            if op == 1 {
                lo = 1u32;
            }
            // A float running product as pm·2^pe, |pm| in [1, 2) while it
            // is finite and nonzero: no step underflows or overflows, as
            // the reference's f64 product does not within f32's inputs
            // (1e-40 · 2e3 is 2e-37, not 0). Each step rounds once, as an
            // f64 step rounds once; f64's own range is kept (below
            // 2^-1075 the product is 0, from 2^1024 on ∞, for good).
            let mut pm = 1.0f32;
            let mut pe = 0i32;
            for j in 0..len {
                let at = (xi + j as i32 * xstride[dim]) as u32;
                let o = oi + j * ostep;
                if kind == 0 && op == 1 {
                    let v = from_bits(x[at]);
                    let va = x[at] & 0x7fff_ffffu32;
                    let pa = pm.to_bits() & 0x7fff_ffffu32;
                    let live = pa != 0u32 && pa < 0x7f80_0000u32;
                    if live && va != 0u32 && va < 0x7f80_0000u32 {
                        // v = mv·2^ev, a subnormal v normalized first.
                        let mut vv = v;
                        let mut ev = 0i32;
                        if va < 0x0080_0000u32 {
                            vv = v * 16_777_216.0;
                            ev = -24;
                        }
                        let vb = vv.to_bits();
                        ev += ((vb >> 23) & 0xffu32) as i32 - 127;
                        let mv = from_bits((vb & 0x807f_ffffu32) | 0x3f80_0000u32);
                        pm = pm * mv;
                        pe += ev;
                        if (pm.to_bits() & 0x7fff_ffffu32) >= 0x4000_0000u32 {
                            pm = pm * 0.5;
                            pe += 1;
                        }
                        if pe > 1023 {
                            pm = pm * f32::INFINITY;
                        } else if pe < -1075 {
                            pm = pm * 0.0;
                        }
                    } else {
                        // A zero, an infinity or a NaN on either side:
                        // f32's rules (|pm| >= 1 keeps the class).
                        pm = pm * v;
                    }
                    // pm·2^pe rounded once into f32.
                    let mut res = pm;
                    let pb = pm.to_bits() & 0x7fff_ffffu32;
                    if pb != 0u32 && pb < 0x7f80_0000u32 {
                        if pe > 127 {
                            res = pm * f32::INFINITY;
                        } else if pe >= -126 {
                            res = pm * from_bits(((pe + 127) as u32) << 23);
                        } else if pe < -152 {
                            res = pm * 0.0;
                        } else {
                            // Exact to 2^-126, then one rounding.
                            let normal = pm * from_bits(1u32 << 23);
                            res = normal * from_bits(((pe + 253) as u32) << 23);
                        }
                    }
                    out[o] = res.to_bits();
                } else if kind == 0 {
                    let v = from_bits(x[at]);
                    acc = acc + v;
                    out[o] = acc.to_bits();
                } else {
                    let mut vl = 0u32;
                    let mut vh = 0u32;
                    if kind == 3 {
                        vl = x[at];
                        // Sign-extended (`vh` starts at 0).
                        if (vl >> 31) == 1u32 {
                            vh = 0xffff_ffffu32;
                        }
                    } else if kind == 4 {
                        vl = x[2 * at];
                        vh = x[2 * at + 1];
                    } else {
                        vl = (x[at / 4] >> (8 * (at % 4))) & 0xffu32;
                        if kind == 6 && vl != 0u32 {
                            vl = 1u32;
                        }
                    }
                    if op == 1 {
                        let (pl, ph) = mul_wide(lo, vl);
                        hi = ph + lo * vh + hi * vl;
                        lo = pl;
                    } else {
                        let sum = lo + vl;
                        let carry = (sum < lo) as u32;
                        hi = hi + vh + carry;
                        lo = sum;
                    }
                    out[2 * o] = lo;
                    out[2 * o + 1] = hi;
                }
            }
        }
    }
}

fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}

/// The demo: the running product of a transposed `[3, 4]` view of `i32`
/// values along dim 1, as `i64`, wrapping past 2^64 in one row.
pub(super) fn demo(block: Dim3) -> Demo {
    // Stored [4, 3]; row r of the view is column r of the storage.
    let stored: [i32; 12] = [
        3,
        -7,
        65_537,
        -100_000,
        2,
        1_000_003,
        5,
        -1,
        -65_535,
        i32::MAX,
        9,
        i32::MIN,
    ];
    let mut expected = Vec::new();
    for r in 0..3 {
        let mut acc = 1i64;
        for c in 0..4 {
            acc = acc.wrapping_mul(i64::from(stored[c * 3 + r]));
            expected.push(f64::from(acc as u32));
            expected.push(f64::from((acc >> 32) as u32));
        }
    }
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(3u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_u32(&stored.map(|v| v as u32))),
            Arg::Buffer(Buffer::from_u32(&[0; 24])),
            Arg::Buffer(Buffer::from_u32(&[3, 4])),
            Arg::Buffer(Buffer::from_i32(&[1, 3])),
            u(2),
            u(3),
            Arg::Scalar(Value::I32(0)),
            u(1),
            u(scan_code::PROD),
            u(3),
        ],
        output: 1,
        expected,
        tolerance: vec![0.0; 24],
        summary: "running i64 product of a transposed i32 view along dim 1, wrapping".into(),
    }
}
