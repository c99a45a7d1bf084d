//! Dtype casts between every pair of the dtypes a GPU stores as 32-bit
//! words: `f32`, `i32` (a word each), `i64` and `f64` (two words, low
//! first), `f16` and `bf16` (16-bit halves, two to a word, element `e` in
//! the low half when `e` is even) and `u8` and `bool` (bytes, four to a
//! word) — all but `f64` into a half, which the reference rounds by the
//! `half` crate's rule (see docs/LIMITATIONS.md) and a backend leaves to
//! it.
//!
//! The rules are the reference backend's (`oxmera_tensor::Element`): a
//! float source converts through its exact value, an integer or bool
//! source through `i64`; into a float, round to nearest even (an `i64`
//! first to `f64`, then to the float type: two roundings, as the
//! reference's `v as f64`); a float into an integer truncates toward zero
//! and saturates at the integer's range, NaN giving 0; an integer into a
//! narrower integer wraps; anything into `bool` is `v != 0` (NaN is true,
//! `-0.0` false); `bool` into anything is 0 or 1.
//!
//! Every conversion is done on the bits with 32-bit integer arithmetic:
//! the emitters need no 64-bit type (an `f64` is two words here, so the
//! kernel runs where the adapter stores `f64` without computing in it),
//! and a GPU's `u32 → f32` conversion need not round to nearest even, so
//! integers become floats by counting leading zeros and rounding the
//! dropped bits by hand, and an `f64` narrows to `f32` the same way.

use crate::ir::{Dim3, Value};
use crate::kernels;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::Demo;

/// The dtype codes of [`cast_strided`]'s `from` and `to`.
pub mod cast_code {
    /// `f32`, a word each.
    pub const F32: u32 = 0;
    /// IEEE binary16, two to a word.
    pub const F16: u32 = 1;
    /// bfloat16, two to a word.
    pub const BF16: u32 = 2;
    /// `i32`, a word each.
    pub const I32: u32 = 3;
    /// `i64`, two words each (low, high).
    pub const I64: u32 = 4;
    /// `u8`, four to a word.
    pub const U8: u32 = 5;
    /// `bool` (any nonzero byte is true), four to a word.
    pub const BOOL: u32 = 6;
    /// `f64`, two words each (low, high); not into `F16` or `BF16`.
    pub const F64: u32 = 7;
}

pub use casts::cast_strided;

#[kernels]
mod casts {
    /// `(lo, hi)` shifted left by `s` (0 to 63) as one 64-bit value.
    #[helper]
    fn shl64(lo: u32, hi: u32, s: u32) -> (u32, u32) {
        let mut a = lo;
        let mut b = hi;
        if s >= 32 {
            b = lo << (s - 32);
            a = 0u32;
        } else if s > 0 {
            b = (hi << s) | (lo >> (32 - s));
            a = lo << s;
        }
        (a, b)
    }

    /// `(lo, hi)` shifted right by `s` (0 to 63) as one 64-bit value.
    #[helper]
    fn shr64(lo: u32, hi: u32, s: u32) -> (u32, u32) {
        let mut a = lo;
        let mut b = hi;
        if s >= 32 {
            a = hi >> (s - 32);
            b = 0u32;
        } else if s > 0 {
            a = (lo >> s) | (hi << (32 - s));
            b = hi >> s;
        }
        (a, b)
    }

    /// The index of the highest set bit of `(lo, hi)` (64 when zero).
    #[helper]
    fn top_bit(lo: u32, hi: u32) -> u32 {
        let mut t = 64u32;
        if hi != 0 {
            t = 63 - hi.leading_zeros();
        } else if lo != 0 {
            t = 31 - lo.leading_zeros();
        }
        t
    }

    /// The magnitude `(lo, hi)` rounded to `p` significant bits, ties to
    /// even (unchanged when it has at most `p`).
    #[helper]
    fn round_bits(lo: u32, hi: u32, p: u32) -> (u32, u32) {
        let t = top_bit(lo, hi);
        let mut a = lo;
        let mut b = hi;
        if t < 64 && t >= p {
            let s = t - p + 1;
            let (kl, kh) = shr64(lo, hi, s);
            let (bl, bh) = shl64(kl, kh, s);
            // The dropped bits, and half of the kept bits' last place.
            let rl = lo - bl;
            let borrow = (lo < bl) as u32;
            let rh = hi - bh - borrow;
            let (hl, hh) = shl64(1u32, 0u32, s - 1);
            let above = rh > hh || (rh == hh && rl > hl);
            let tie = rh == hh && rl == hl;
            let mut ml = kl;
            let mut mh = kh;
            if above || (tie && (kl & 1u32) == 1u32) {
                ml = kl + 1u32;
                if ml == 0u32 {
                    mh = kh + 1u32;
                }
            }
            let (rl2, rh2) = shl64(ml, mh, s);
            a = rl2;
            b = rh2;
        }
        (a, b)
    }

    /// The `f32` bits of the 64-bit two's-complement integer `(lo, hi)`
    /// rounded to `p` significant bits (24 for `f32`, 11 for `f16`, 8 for
    /// `bf16`) through `f64` (53 bits first, as `v as f64` does), so that
    /// the result is exact in `f32` and narrows exactly to a half.
    #[helper]
    fn int_to_f32_bits(lo: u32, hi: u32, p: u32) -> u32 {
        let negative = (hi >> 31) == 1u32;
        let mut ml = lo;
        let mut mh = hi;
        if negative {
            ml = !lo + 1u32;
            let carry = (ml == 0u32) as u32;
            mh = !hi + carry;
        }
        let (al, ah) = round_bits(ml, mh, 53u32);
        let (bl, bh) = round_bits(al, ah, p);
        let t = top_bit(bl, bh);
        let mut bits = 0u32;
        if t < 64 {
            let mut frac = 0u32;
            if t >= 23 {
                let (fl, _) = shr64(bl, bh, t - 23);
                frac = fl & 0x7f_ffffu32;
            } else {
                frac = (bl << (23 - t)) & 0x7f_ffffu32;
            }
            bits = ((t + 127) << 23) | frac;
        }
        if negative {
            bits = bits | 0x8000_0000u32;
        }
        bits
    }

    /// The `f32` bits truncated toward zero to a 64-bit integer `(lo,
    /// hi)`, saturating, NaN giving 0 (Rust's `as i64`).
    #[helper]
    fn f32_bits_to_i64(b: u32) -> (u32, u32) {
        let a = b & 0x7fff_ffffu32;
        let negative = (b >> 31) == 1u32;
        let e = a >> 23;
        let mut lo = 0u32;
        let mut hi = 0u32;
        if a > 0x7f80_0000u32 {
            lo = 0u32;
        } else if e >= 127 + 63 {
            if negative {
                hi = 0x8000_0000u32;
            } else {
                lo = 0xffff_ffffu32;
                hi = 0x7fff_ffffu32;
            }
        } else if e >= 127 {
            let m = (a & 0x7f_ffffu32) | 0x80_0000u32;
            let k = e - 127;
            if k >= 23 {
                let (sl, sh) = shl64(m, 0u32, k - 23);
                lo = sl;
                hi = sh;
            } else {
                lo = m >> (23 - k);
            }
            if negative {
                let nl = !lo + 1u32;
                let carry = (nl == 0u32) as u32;
                hi = !hi + carry;
                lo = nl;
            }
        }
        (lo, hi)
    }

    /// `(lo, hi) >> s` rounded to nearest, ties to even, for `s` in 1 to
    /// 63 (0 from 64 on: the value is then below half a unit, or exactly
    /// half with an even 0 below it when `s` is 64 and the top bit set).
    #[helper]
    fn round_shr64(lo: u32, hi: u32, s: u32) -> (u32, u32) {
        let mut ql = 0u32;
        let mut qh = 0u32;
        if s < 64 {
            let (kl, kh) = shr64(lo, hi, s);
            let (bl, bh) = shl64(kl, kh, s);
            let rl = lo - bl;
            let borrow = (lo < bl) as u32;
            let rh = hi - bh - borrow;
            let (hl, hh) = shl64(1u32, 0u32, s - 1);
            let above = rh > hh || (rh == hh && rl > hl);
            let tie = rh == hh && rl == hl;
            ql = kl;
            qh = kh;
            if above || (tie && (kl & 1u32) == 1u32) {
                ql = kl + 1u32;
                if ql == 0u32 {
                    qh = kh + 1u32;
                }
            }
        }
        (ql, qh)
    }

    /// The `f64` `(lo, hi)` rounded to the nearest `f32`, ties to even
    /// (Rust's `as f32`): 24 significant bits from the 53, or fewer into
    /// `f32`'s subnormals, ∞ past `f32::MAX`'s rounding edge, a NaN kept
    /// quiet with its payload's top bits.
    #[helper]
    fn f64_to_f32_bits(lo: u32, hi: u32) -> u32 {
        let sign = hi & 0x8000_0000u32;
        let e = (hi >> 20) & 0x7ffu32;
        let mh = hi & 0xf_ffffu32;
        let mut bits = 0u32;
        if e == 0x7ffu32 {
            bits = 0x7f80_0000u32;
            if (mh | lo) != 0u32 {
                bits = 0x7fc0_0000u32 | (mh << 3) | (lo >> 29);
            }
        } else if e > 1023 + 127 {
            bits = 0x7f80_0000u32;
        } else if e >= 1023 - 126 {
            // Normal: the 53-bit significand to 24 bits; a carry out of
            // the 24 moves into the exponent (to ∞ from the top binade).
            let (q, _) = round_shr64(lo, mh | 0x10_0000u32, 29u32);
            bits = ((e - 896u32) << 23) + (q - 0x80_0000u32);
        } else if e > 0 {
            // Into the subnormals: units of 2^-149, the significand
            // shifted right by 926 - e (30 and up).
            let (q, _) = round_shr64(lo, mh | 0x10_0000u32, 926u32 - e);
            bits = q;
        }
        sign | bits
    }

    /// `f32` bits widened exactly to an `f64`'s `(lo, hi)` (subnormals
    /// normalized; NaN payload and infinities kept).
    #[helper]
    fn f32_to_f64_bits(b: u32) -> (u32, u32) {
        let sign = b & 0x8000_0000u32;
        let e = (b >> 23) & 0xffu32;
        let m = b & 0x7f_ffffu32;
        let mut lo = m << 29;
        let mut hi = sign | (m >> 3);
        if e == 0xffu32 {
            hi = hi | 0x7ff0_0000u32;
        } else if e > 0 {
            hi = hi | ((e + 1023 - 127) << 20);
        } else if m != 0u32 {
            // m·2^-149 with its top bit t: exponent t - 149, the bits
            // below t moved up to the fraction's top.
            let t = 31 - m.leading_zeros();
            let (fl, fh) = shl64(m ^ (1u32 << t), 0u32, 52 - t);
            lo = fl;
            hi = sign | ((t + 1023 - 149) << 20) | fh;
        }
        (lo, hi)
    }

    /// The 64-bit two's-complement integer `(lo, hi)` rounded to the
    /// nearest `f64` (ties to even: Rust's `as f64`), as `(lo, hi)`.
    #[helper]
    fn int_to_f64_bits(lo: u32, hi: u32) -> (u32, u32) {
        let negative = (hi >> 31) == 1u32;
        let mut ml = lo;
        let mut mh = hi;
        if negative {
            ml = !lo + 1u32;
            let carry = (ml == 0u32) as u32;
            mh = !hi + carry;
        }
        let (bl, bh) = round_bits(ml, mh, 53u32);
        let t = top_bit(bl, bh);
        let mut rl = 0u32;
        let mut rh = 0u32;
        if t < 64 {
            let mut fl = 0u32;
            let mut fh = 0u32;
            if t >= 52 {
                let (l, h) = shr64(bl, bh, t - 52);
                fl = l;
                fh = h;
            } else {
                let (l, h) = shl64(bl, bh, 52 - t);
                fl = l;
                fh = h;
            }
            rl = fl;
            rh = ((t + 1023) << 20) | (fh & 0xf_ffffu32);
        }
        if negative {
            rh = rh | 0x8000_0000u32;
        }
        (rl, rh)
    }

    /// The `f64` `(lo, hi)` truncated toward zero to a 64-bit integer,
    /// saturating, NaN giving 0 (Rust's `as i64`).
    #[helper]
    fn f64_bits_to_i64(lo: u32, hi: u32) -> (u32, u32) {
        let negative = (hi >> 31) == 1u32;
        let e = (hi >> 20) & 0x7ffu32;
        let nan = e == 0x7ffu32 && ((hi & 0xf_ffffu32) | lo) != 0u32;
        let mut rl = 0u32;
        let mut rh = 0u32;
        if nan {
            rl = 0u32;
        } else if e >= 1023 + 63 {
            if negative {
                rh = 0x8000_0000u32;
            } else {
                rl = 0xffff_ffffu32;
                rh = 0x7fff_ffffu32;
            }
        } else if e >= 1023 {
            let k = e - 1023;
            let sh = (hi & 0xf_ffffu32) | 0x10_0000u32;
            if k >= 52 {
                let (l, h) = shl64(lo, sh, k - 52);
                rl = l;
                rh = h;
            } else {
                let (l, h) = shr64(lo, sh, 52 - k);
                rl = l;
                rh = h;
            }
            if negative {
                let nl = !rl + 1u32;
                let carry = (nl == 0u32) as u32;
                rh = !rh + carry;
                rl = nl;
            }
        }
        (rl, rh)
    }

    /// A half's bits (`brain`: bfloat16, else IEEE binary16) widened
    /// exactly to `f32` bits.
    #[helper]
    fn half_to_f32_bits(h: u32, brain: bool) -> u32 {
        let mut bits = h << 16;
        if !brain {
            let sign = (h >> 15) << 31;
            let e = (h >> 10) & 0x1fu32;
            let m = h & 0x3ffu32;
            if e == 0x1fu32 {
                bits = sign | 0x7f80_0000u32 | (m << 13);
            } else if e == 0 {
                bits = sign | ((m as f32) * from_bits(0x3380_0000u32)).to_bits();
            } else {
                bits = sign | ((e + 112) << 23) | (m << 13);
            }
        }
        bits
    }

    /// `f32` bits rounded to a half's bits, nearest even (the rules of
    /// `f32_to_halves`).
    #[helper]
    fn f32_bits_to_half(b: u32, brain: bool) -> u32 {
        let a = b & 0x7fff_ffffu32;
        let mut h = 0u32;
        if brain {
            if a > 0x7f80_0000u32 {
                h = (b >> 16) | 0x40u32;
            } else {
                h = (b + 0x7fffu32 + ((b >> 16) & 1u32)) >> 16;
            }
        } else {
            let sign = (b >> 16) & 0x8000u32;
            if a > 0x7f80_0000u32 {
                h = sign | 0x7e00u32;
            } else if a >= 0x477f_f000u32 {
                h = sign | 0x7c00u32;
            } else if a >= 0x3880_0000u32 {
                h = sign | ((a - 0x3800_0000u32 + 0xfffu32 + ((a >> 13) & 1u32)) >> 13);
            } else {
                let v = from_bits(a) * 16_777_216.0;
                let f = v.floor();
                let r = v - f;
                let mut m = f as u32;
                if r > 0.5 || (r == 0.5 && (m & 1u32) == 1u32) {
                    m += 1u32;
                }
                h = sign | m;
            }
        }
        h & 0xffffu32
    }

    /// `x` (dtype `from`, read through a strided view) cast to `to`, both
    /// [`cast_code`](super::cast_code)s, written contiguously: thread `w`
    /// writes output word `w` — four bytes, two halves, one word, or one
    /// of an `i64`'s or `f64`'s two words — so no two threads share a
    /// word. `f64` into a half is not one of the casts (the backend leaves
    /// it to the reference).
    #[kernel(block = [64, 256])]
    pub fn cast_strided(
        x: &[u32],
        out: &mut [u32],
        shape: &[u32],
        xstride: &[i32],
        ndim: u32,
        n: u32,
        xoff: i32,
        from: u32,
        to: u32,
    ) {
        let w = block_idx_x() * block_dim_x() + thread_idx_x();
        // Elements a word holds, and the words of the output.
        let mut per = 1u32;
        if to == 5 || to == 6 {
            per = 4u32;
        } else if to == 1 || to == 2 {
            per = 2u32;
        }
        let pair = to == 4 || to == 7;
        let mut words = (n + per - 1) / per;
        if pair {
            words = 2 * n;
        }
        if w < words {
            let mut word = 0u32;
            for e in 0..per {
                let mut i = w * per + e;
                if pair {
                    i = w / 2;
                }
                if i < n {
                    let mut rem = i;
                    let mut xi = xoff;
                    for k in 0..ndim {
                        let d = ndim - 1 - k;
                        let c = rem % shape[d];
                        rem = rem / shape[d];
                        xi += c as i32 * xstride[d];
                    }
                    let at = xi as u32;
                    // The source: f32 bits for a float, (lo, hi) for an
                    // integer, a bool or an f64.
                    let float = from <= 2;
                    let double = from == 7;
                    let mut fb = 0u32;
                    let mut lo = 0u32;
                    let mut hi = 0u32;
                    if from == 0 {
                        fb = x[at];
                    } else if from == 1 || from == 2 {
                        let h = (x[at / 2] >> (16 * (at % 2))) & 0xffffu32;
                        fb = half_to_f32_bits(h, from == 2);
                    } else if from == 3 {
                        lo = x[at];
                        // Sign-extended (`hi` starts at 0).
                        if (lo >> 31) == 1u32 {
                            hi = 0xffff_ffffu32;
                        }
                    } else if from == 4 || double {
                        lo = x[2 * at];
                        hi = x[2 * at + 1];
                    } else {
                        lo = (x[at / 4] >> (8 * (at % 4))) & 0xffu32;
                        if from == 6 && lo != 0u32 {
                            lo = 1u32;
                        }
                    }
                    // The destination's bits (`v`), or its word pair for
                    // an i64 or an f64. An f64 source is truncated to an
                    // i64 first where the destination is an integer.
                    let mut v = 0u32;
                    let mut v_hi = 0u32;
                    let mut int_lo = lo;
                    let mut int_hi = hi;
                    if double {
                        let (l, h) = f64_bits_to_i64(lo, hi);
                        int_lo = l;
                        int_hi = h;
                    }
                    if to == 7 {
                        v = lo;
                        v_hi = hi;
                        if float {
                            let (l, h) = f32_to_f64_bits(fb);
                            v = l;
                            v_hi = h;
                        } else if !double {
                            let (l, h) = int_to_f64_bits(lo, hi);
                            v = l;
                            v_hi = h;
                        }
                    } else if to <= 2 {
                        let mut bits = fb;
                        if double {
                            bits = f64_to_f32_bits(lo, hi);
                        } else if !float {
                            let mut p = 24u32;
                            if to == 1 {
                                p = 11u32;
                            } else if to == 2 {
                                p = 8u32;
                            }
                            bits = int_to_f32_bits(lo, hi, p);
                        }
                        v = bits;
                        if to != 0 {
                            v = f32_bits_to_half(bits, to == 2);
                        }
                    } else if to == 6 {
                        if float {
                            if (fb & 0x7fff_ffffu32) != 0u32 {
                                v = 1u32;
                            }
                        } else if double {
                            if ((hi & 0x7fff_ffffu32) | lo) != 0u32 {
                                v = 1u32;
                            }
                        } else {
                            if (lo | hi) != 0u32 {
                                v = 1u32;
                            }
                        }
                    } else if float {
                        let f = from_bits(fb);
                        if to == 3 {
                            v = (f as i32) as u32;
                        } else if to == 5 {
                            let t = f as u32;
                            v = t;
                            if t > 255u32 {
                                v = 255u32;
                            }
                        } else {
                            let (l, h) = f32_bits_to_i64(fb);
                            v = l;
                            v_hi = h;
                        }
                    } else if double && to != 4 {
                        // Saturated into i32 or u8 from the truncated i64
                        // (Rust's `as` from the float saturates the same).
                        let neg = (int_hi >> 31) == 1u32;
                        let mut top = 0x7fff_ffffu32;
                        let mut bottom = 0x8000_0000u32;
                        if to == 5 {
                            top = 255u32;
                            bottom = 0u32;
                        }
                        v = int_lo;
                        if neg {
                            // Below the range: high word not all ones, or
                            // the low word under the bottom as i32.
                            if to == 5 || int_hi != 0xffff_ffffu32 || int_lo < 0x8000_0000u32 {
                                v = bottom;
                            }
                        } else if int_hi != 0u32 || int_lo > top {
                            v = top;
                        }
                    } else {
                        v = int_lo;
                        v_hi = int_hi;
                        if to == 5 {
                            v = int_lo & 0xffu32;
                        }
                    }
                    if pair {
                        if w % 2 == 0 {
                            word = v;
                        } else {
                            word = v_hi;
                        }
                    } else if per == 4 {
                        word = word | ((v & 0xffu32) << (8 * e));
                    } else if per == 2 {
                        word = word | ((v & 0xffffu32) << (16 * e));
                    } else {
                        word = v;
                    }
                }
            }
            out[w] = word;
        }
    }
}

/// Values of every kind a cast meets: signs, fractions, halfway cases,
/// saturation edges, NaN and infinities, as `f64` (each source dtype
/// stores what it can of them).
pub(super) const CAST_VALUES: [f64; 12] = [
    0.0,
    -0.0,
    1.5,
    -2.5,
    255.9,
    256.0,
    -129.75,
    65520.0,
    3.0e9,
    -1.0e20,
    f64::NAN,
    f64::INFINITY,
];

fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}

/// The demo: twelve `f32` values, read through a transposed `[3, 4]` view
/// of a `[4, 3]` tensor, cast to `i64` (two words each) and compared with
/// Rust's `as i64` (the reference's rule).
pub(super) fn demo(block: Dim3) -> Demo {
    let values: Vec<f32> = CAST_VALUES.iter().map(|&v| v as f32).collect();
    let transposed: Vec<usize> = (0..3)
        .flat_map(|r| (0..4).map(move |c| c * 3 + r))
        .collect();
    let expected: Vec<f64> = transposed
        .iter()
        .flat_map(|&s| {
            let v = values[s] as i64;
            [f64::from(v as u32), f64::from((v >> 32) as u32)]
        })
        .collect();
    let bits: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(24u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_u32(&bits)),
            Arg::Buffer(Buffer::from_u32(&[0; 24])),
            Arg::Buffer(Buffer::from_u32(&[3, 4])),
            Arg::Buffer(Buffer::from_i32(&[1, 3])),
            u(2),
            u(12),
            Arg::Scalar(Value::I32(0)),
            u(cast_code::F32),
            u(cast_code::I64),
        ],
        output: 1,
        expected,
        tolerance: vec![0.0; 24],
        summary: "12 f32 through a transposed view to i64 (truncated, saturated, NaN 0)".into(),
    }
}
