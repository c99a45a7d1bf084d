//! The library functions beyond `unary_strided`'s: sin, cos and tan,
//! exp2, expm1, sinh, cosh, log2, log10, the inverse trigonometric functions, erf and GELU,
//! ELU/SELU, mish, logsigmoid, the hard activations, trunc and `powf`
//! (one kernel, [`unary_math_strided`]), and atan2, hypot, pow, fmod and
//! the floored remainder ([`binary_math_strided`]).
//!
//! As in `unary_strided`, nothing here trusts the driver's
//! transcendentals: WGSL promises only `3 + 2|x|` ulp for `exp`/`exp2`
//! and absolute errors for `log2` near 1 and for `sin`/`cos`/`atan`. The
//! helpers below write out `e^a` (Cody–Waite reduction and a Taylor
//! polynomial, within 2 ulp: `unary_strided`'s, whose test measures it),
//! `ln v` (fdlibm's `logf`, within 1 ulp) and `atan` (fdlibm's `atanf`
//! reduction with its polynomial, within 1 ulp), and every function is
//! built from them with its error bound derived beside it. sin, cos and
//! tan reduce their argument exactly by Payne and Hanek's method in
//! 32-bit integers (`quarter_turns`), so no argument, `f32::MAX`
//! included, loses accuracy to the reduction.
//!
//! The conformance bound these are held to (`oxmera-conformance`'s
//! tolerance table) is, for `f32`, `ε·|want| + acc·ε·S` with `ε = 2^-23`:
//! `acc = 4, S = |want|` for the library functions (at least 5 ulp of
//! the result), 6 for ELU/SELU, 10 for mish, `S = |want| + 1` for sin
//! and cos, `S = |want| + |x|` for GELU,
//! `|want|·(1 + |b·ln a|)` for pow, and exact for trunc, fmod and rem.
//!
//! `z` in the helpers is a zero the compiler cannot know is zero (`ndim
//! >> 16`, `ndim < 2^16`): xored into a value's bits it makes that value
//! a root a driver allowed to reassociate floats (lavapipe is) cannot
//! rewrite across — see `unary_strided`.

// Coefficients print in the shortest decimal that reads back as the f32.
#![allow(clippy::excessive_precision)]

use crate::kernels;

/// The `op` values of [`unary_math_strided`].
pub mod math_code {
    /// `2^x`
    pub const EXP2: u32 = 0;
    /// `e^x - 1`, accurate for tiny `x`
    pub const EXPM1: u32 = 1;
    /// `sinh x`
    pub const SINH: u32 = 2;
    /// `cosh x`
    pub const COSH: u32 = 3;
    /// `log2 x`
    pub const LOG2: u32 = 4;
    /// `log10 x`
    pub const LOG10: u32 = 5;
    /// round toward zero
    pub const TRUNC: u32 = 6;
    /// 0 at and below -3, 1 at and above 3, `x/6 + 1/2` between
    pub const HARDSIGMOID: u32 = 7;
    /// 0 at and below -3, `x` at and above 3, `x(x + 3)/6` between
    pub const HARDSWISH: u32 = 8;
    /// `p1 · x` for `x > 0`, else `p0 · (e^x - 1)`: ELU (`p1 = 1`) and
    /// SELU (`p0 = scale · alpha`, `p1 = scale`)
    pub const ELU: u32 = 9;
    /// `ln σ(x) = -softplus(-x)`
    pub const LOGSIGMOID: u32 = 10;
    /// `x · tanh(softplus x)`
    pub const MISH: u32 = 11;
    /// the error function
    pub const ERF: u32 = 12;
    /// GELU, `x · Φ(x)` with the exact normal CDF
    pub const GELU: u32 = 13;
    /// `atan x`
    pub const ATAN: u32 = 14;
    /// `asin x`
    pub const ASIN: u32 = 15;
    /// `acos x`
    pub const ACOS: u32 = 16;
    /// `x^p0` with C's special cases; `p1` names the exponent's class
    /// where its `f32` rounding would lose it (an `f64` exponent past
    /// 2^24): 1 an odd integer, 2 an even one, 3 not an integer, 0 the
    /// class of `p0` itself
    pub const POWF: u32 = 17;
    /// `sin x`, every argument reduced exactly (Payne–Hanek)
    pub const SIN: u32 = 18;
    /// `cos x`, likewise
    pub const COS: u32 = 19;
    /// `tan x`, likewise
    pub const TAN: u32 = 20;
}

/// The `op` values of [`binary_math_strided`].
pub mod binary_math_code {
    /// `atan2(a, b)`: the angle of the point `(b, a)`
    pub const ATAN2: u32 = 0;
    /// `sqrt(a² + b²)` without overflow
    pub const HYPOT: u32 = 1;
    /// `a^b` with C's special cases
    pub const POW: u32 = 2;
    /// C's `fmod`: exact, the dividend's sign
    pub const FMOD: u32 = 3;
    /// the remainder with the divisor's sign (Python's `%`)
    pub const REM: u32 = 4;
}

pub use math_kernels::{binary_math_strided, logcumsumexp_strided, unary_math_strided};

#[kernels]
pub mod math_kernels {
    /// Whether `v` is a NaN, on the bits (a GPU compiler may fold `v != v`).
    #[helper]
    fn is_nan(v: f32) -> bool {
        (v.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32
    }

    /// `e^a = 2^k · p` for finite `a` in `[-125, 89.5]`: `k = round(a /
    /// ln2)`, `t = a - k·ln2` in two fma steps (ln2 in a high part whose
    /// products with `k` are exact, and the rest: Cody–Waite; the first
    /// step passed through its bits so no reassociation merges them), and
    /// `p = e^t` by its Taylor polynomial of degree 7 on `|t| <= ln2/2`
    /// (truncation under 0.1 ulp). `unary_strided`'s exp, measured within
    /// 2 ulp.
    #[helper]
    fn exp_kp(a: f32, z: u32) -> (f32, f32) {
        let k = (a * 1.442_695 + 0.5).floor();
        let t0 = k.mul_add(-0.693_145_75, a);
        let t1 = f32::from_bits(t0.to_bits() ^ z);
        let t = k.mul_add(-1.428_606_8e-6, t1);
        let mut p = 1.984_127e-4;
        p = p.mul_add(t, 1.388_888_9e-3);
        p = p.mul_add(t, 8.333_333e-3);
        p = p.mul_add(t, 4.166_666_8e-2);
        p = p.mul_add(t, 0.166_666_67);
        p = p.mul_add(t, 0.5);
        p = p.mul_add(t, 1.0);
        p = p.mul_add(t, 1.0);
        (k, p)
    }

    /// `p · 2^k` for an integral `k` in `[-150, 128]`, in two exact power
    /// of two factors so that a subnormal result is rounded once.
    #[helper]
    fn ldexp(p: f32, k: f32) -> f32 {
        let ki = k as i32;
        let half = ki / 2;
        let s1 = f32::from_bits(((half + 127) as u32) << 23u32);
        let s2 = f32::from_bits(((ki - half + 127) as u32) << 23u32);
        p * s1 * s2
    }

    /// `e^a` for every `a` (within 2 ulp; NaN kept, 0 and ∞ at the ends).
    #[helper]
    fn exp_f(a: f32, z: u32) -> f32 {
        let mut e = a;
        if is_nan(a) {
            e = a;
        } else if a > 88.722_84 {
            e = f32::INFINITY;
        } else if a < -104.0 {
            e = 0.0;
        } else {
            let (k, p) = exp_kp(a, z);
            e = ldexp(p, k);
        }
        e
    }

    /// `e^t - 1` on `|t| <= ln2/2` by Taylor to `t^9` (the next term is
    /// under 3e-11 relative), as `t + t²·q`: `t²·q` is at most a fifth of
    /// the result, so its roundings cost a fifth of an ulp each; within
    /// 1 ulp.
    #[helper]
    fn expm1_small(t: f32) -> f32 {
        let mut q = 2.755_732e-7;
        q = q.mul_add(t, 2.755_731_9e-6);
        q = q.mul_add(t, 2.480_158_8e-5);
        q = q.mul_add(t, 1.984_127e-4);
        q = q.mul_add(t, 1.388_888_9e-3);
        q = q.mul_add(t, 8.333_334e-3);
        q = q.mul_add(t, 4.166_666_8e-2);
        q = q.mul_add(t, 0.166_666_67);
        q = q.mul_add(t, 0.5);
        (t * t).mul_add(q, t)
    }

    /// `e^x - 1`. Below ln2/2 in magnitude, the polynomial. Up to 15,
    /// `2^k·(1 + p) - 1 = fma(2^k, p, 2^k - 1)` with `p = expm1(t)` of the
    /// reduced `t` and `2^k - 1` exact (`|k| <= 22`): one rounding after
    /// `p`'s ulp, amplified at most 1.4 times by the cancellation at
    /// `k = 1, p < 0`: within 2.5 ulp. Beyond ±15, `e^x - 1` (the 1 is
    /// under an ulp of `e^x`, or `e^x` under an ulp of 1): within 2.5 ulp.
    #[helper]
    fn expm1_f(x: f32, z: u32) -> f32 {
        let ax = x.abs();
        let mut r = x;
        if is_nan(x) || ax < 1e-10 {
            r = x;
        } else if ax > 15.0 {
            r = exp_f(x, z) - 1.0;
        } else if ax < 0.346_573_6 {
            r = expm1_small(x);
        } else {
            let k = (x * 1.442_695 + 0.5).floor();
            let t0 = k.mul_add(-0.693_145_75, x);
            let t1 = f32::from_bits(t0.to_bits() ^ z);
            let t = k.mul_add(-1.428_606_8e-6, t1);
            let p = expm1_small(t);
            let s = f32::from_bits((((k as i32) + 127) as u32) << 23u32);
            r = s.mul_add(p, s - 1.0);
        }
        r
    }

    /// `ln v = k·ln2 + ln m` for a finite positive `v = 2^k·m`, `m` in
    /// `[√2/2, √2)`, as fdlibm's `logf` (Sun Microsystems, 1993) splits
    /// it: returns `k`, `f = m - 1`, `f²/2` and `s·(f²/2 + R(s²))` with
    /// `s = f / (2 + f)`, so that `ln m = f - (f²/2 - s·(f²/2 + R))`
    /// within 1 ulp.
    #[helper]
    fn ln_parts(v: f32) -> (f32, f32, f32, f32) {
        let mut ix = v.to_bits();
        let mut k = 0i32;
        if ix < 0x0080_0000u32 {
            // Subnormal: scaled by 2^25 into the normal range.
            ix = (v * 33_554_432.0).to_bits();
            k = -25;
        }
        ix += 0x004a_fb0du32;
        k += (ix >> 23u32) as i32 - 127;
        ix = (ix & 0x007f_ffffu32) + 0x3f35_04f3u32;
        let f = f32::from_bits(ix) - 1.0;
        let s = f / (2.0 + f);
        let zz = s * s;
        let w = zz * zz;
        let t1 = w * w.mul_add(0.242_790_79, 0.400_009_72);
        let t2 = zz * w.mul_add(0.284_987_87, 0.666_666_6);
        let hfsq = 0.5 * f * f;
        (k as f32, f, hfsq, s * (hfsq + t2 + t1))
    }

    /// `ln v` for every `v`: `unary_strided`'s evaluation order of
    /// fdlibm's sum, measured within 2 ulp; `-∞` at ±0, NaN below 0.
    #[helper]
    fn ln_f(v: f32) -> f32 {
        let bits = v.to_bits();
        let mut l = v;
        if is_nan(v) || bits == 0x7f80_0000u32 {
            l = v;
        } else if (bits & 0x7fff_ffffu32) == 0u32 {
            l = f32::NEG_INFINITY;
        } else if (bits >> 31u32) == 1u32 {
            l = f32::from_bits(0x7fc0_0000u32);
        } else {
            let (dk, f, hfsq, sr) = ln_parts(v);
            l = sr + dk * 9.058_001e-6 - hfsq + f + dk * 0.693_138_1;
        }
        l
    }

    /// `ln(1 + t)` for `t >= 0`: `ln(u) · t / (u - 1)` with `u = 1 + t`
    /// (Goldberg: the rounding of `u` is undone by the factor it put in),
    /// `t` itself where `u` rounds to 1. `unary_strided`'s log1p.
    #[helper]
    fn ln1p_f(t: f32, z: u32) -> f32 {
        let u = f32::from_bits((1.0 + t).to_bits() ^ z);
        let mut r = t;
        if u != 1.0 {
            r = ln_f(u) * (t / (u - 1.0));
        }
        r
    }

    /// `ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|)` (NaN kept): within the
    /// 4 ulp `unary_strided`'s softplus is held to.
    #[helper]
    fn softplus_f(x: f32, z: u32) -> f32 {
        let mut r = x;
        if !is_nan(x) {
            r = x.max(0.0) + ln1p_f(exp_f(-x.abs(), z), z);
        }
        r
    }

    /// `tanh s` for `s >= 0` (`unary_strided`'s: its odd Taylor series
    /// below 0.55, `1 - 2/(e^2s + 1)` above), within 2 ulp.
    #[helper]
    fn tanh_pos(s: f32, z: u32) -> f32 {
        let mut r = s;
        if s < 0.000_244_140_625 {
            r = s;
        } else if s < 0.55 {
            let zz = s * s;
            let mut p = 5.900_274_4e-4;
            p = zz.mul_add(p, -1.455_834_4e-3);
            p = zz.mul_add(p, 3.592_128e-3);
            p = zz.mul_add(p, -8.863_236e-3);
            p = zz.mul_add(p, 2.186_949e-2);
            p = zz.mul_add(p, -5.396_825_4e-2);
            p = zz.mul_add(p, 0.133_333_33);
            p = zz.mul_add(p, -0.333_333_34);
            r = (s * zz).mul_add(p, s);
        } else {
            r = 1.0 - 2.0 / (exp_f(2.0 * s, z) + 1.0);
        }
        r
    }

    /// `atan x`, fdlibm's `atanf`: `|x|` reduced to `|t| < 7/16` by
    /// `atan x = atan c + atan((x - c)/(1 + c·x))` for `c` in
    /// `{1/2, 1, 3/2, ∞}` (each `atan c` in two parts), then `t - t·P(t²)`
    /// with fdlibm's coefficients (of `atan`'s double version, rounded):
    /// within 1 ulp. ±π/2 past 2^26, NaN kept, the sign of zero kept.
    #[helper]
    fn atan_f(x: f32) -> f32 {
        let ax = x.abs();
        let mut r = x;
        if is_nan(x) || ax < 0.000_244_140_625 {
            // |x| here: the sign is put back below.
            r = ax;
        } else if ax >= 67_108_864.0 {
            r = 1.570_796_4;
        } else {
            let mut t = ax;
            let mut hi = 0.0;
            let mut lo = 0.0;
            let mut id = -1i32;
            if ax >= 2.4375 {
                t = -1.0 / ax;
                hi = 1.570_796_4;
                lo = -4.371_139e-8;
                id = 3;
            } else if ax >= 1.1875 {
                t = (ax - 1.5) / ax.mul_add(1.5, 1.0);
                hi = 0.982_793_75;
                lo = -2.513_142_4e-8;
                id = 2;
            } else if ax >= 0.6875 {
                t = (ax - 1.0) / (ax + 1.0);
                hi = 0.785_398_2;
                lo = -2.185_569_4e-8;
                id = 1;
            } else if ax >= 0.4375 {
                t = ax.mul_add(2.0, -1.0) / (2.0 + ax);
                hi = 0.463_647_6;
                lo = 5.012_158_7e-9;
                id = 0;
            }
            let zz = t * t;
            let w = zz * zz;
            let mut s1 = 1.628_582e-2;
            s1 = w.mul_add(s1, 4.976_878e-2);
            s1 = w.mul_add(s1, 6.661_073e-2);
            s1 = w.mul_add(s1, 9.090_887e-2);
            s1 = w.mul_add(s1, 0.142_857_15);
            s1 = w.mul_add(s1, 0.333_333_34);
            s1 = zz * s1;
            let mut s2 = -3.653_157e-2;
            s2 = w.mul_add(s2, -5.833_570_3e-2);
            s2 = w.mul_add(s2, -7.691_876e-2);
            s2 = w.mul_add(s2, -0.111_111_104);
            s2 = w.mul_add(s2, -0.2);
            s2 = w * s2;
            if id < 0 {
                r = ax - ax * (s1 + s2);
            } else {
                r = hi - ((t * (s1 + s2) - lo) - t);
            }
        }
        if (x.to_bits() >> 31u32) == 1u32 {
            r = -r;
        }
        r
    }

    /// `|a|^b` for a finite nonzero `a` as `2^(b·log2|a|)`, with `log2|a|
    /// = k + log2 m` (`m` in `[√2/2, √2)`, so `|log2 m| <= 1/2 <= |k +
    /// log2 m|` for `k ≠ 0`) and both products carried with their exact
    /// rounding errors (fma): the integer part `n` of the exponent is
    /// split off exactly and only `t = b·k - n + b·log2 m` (`|t| <= 1/2`
    /// and a bit) is rounded. Written as `e^(b·ln a)`, the rounding of
    /// `ln a` alone put `ε·|b·ln a|` of relative error into the result,
    /// and `f32::MAX^1` overflowed. Here `log2 m` carries ~2 ulp (ln m's
    /// 1, the constant's and the product's half each), so `t` carries
    /// `2ε·|b·log2 m| <= 2ε·|b·log2 a|` absolute, which `2^t` turns into
    /// `1.4ε·|b·ln a|` relative; the sum's roundings and exp's 2 ulp add
    /// about 3: within the bound `ε·(1 + 4·(1 + |b·ln a|))·|want|`.
    #[helper]
    fn pow_abs(a: f32, b: f32, z: u32) -> f32 {
        let (dk, f, hfsq, sr) = ln_parts(a);
        let l2m = (f - (hfsq - sr)) * 1.442_695;
        let h1 = b * dk;
        let e1 = b.mul_add(dk, -h1);
        let h2 = b * l2m;
        let e2 = b.mul_add(l2m, -h2);
        let s = h1 + h2;
        let mut r = 0.0;
        if s > 129.0 {
            r = f32::INFINITY;
        } else if s < -152.0 {
            r = 0.0;
        } else {
            // |h1| <= 2|s| + 1 here, so h1 - n is exact; passed through
            // its bits so that a reassociating driver keeps it whole.
            let n = (s + 0.5).floor();
            let d = f32::from_bits((h1 - n).to_bits() ^ z);
            let t = (d + h2) + (e1 + e2);
            let (k2, p) = exp_kp(t * 0.693_147_2, z);
            r = ldexp(p, n + k2);
        }
        r
    }

    /// `a^b` with every special case of C's `pow` (and Rust's `powf`):
    /// `a^±0 = 1` and `1^b = 1` even for NaN; `(-1)^±∞ = 1`; `|a| < 1` or
    /// `> 1` to ±∞; zeros and infinities to odd integers keep their sign;
    /// a finite negative `a` to a non-integer is NaN. `class` is `POWF`'s
    /// `p1`: 0 reads whether `b` is an (odd) integer from `b`, 1 to 3 say
    /// it for an exponent `b` is only the rounding of.
    #[helper]
    fn pow_f(a: f32, b: f32, class: u32, z: u32) -> f32 {
        let aa = a.abs();
        let ab = b.abs();
        let a_neg = (a.to_bits() >> 31u32) == 1u32;
        let a_nan = is_nan(a);
        let b_nan = is_nan(b);
        let b_inf = (b.to_bits() & 0x7fff_ffffu32) == 0x7f80_0000u32;
        let mut b_int = !b_nan && !b_inf && b.floor() == b;
        // Integers from 2^24 on are even.
        let mut b_odd = b_int && ab < 16_777_216.0 && ((ab as u32) & 1u32) == 1u32;
        if class != 0u32 {
            b_int = class != 3u32;
            b_odd = class == 1u32;
        }
        let mut r = 0.0;
        if b == 0.0 || a == 1.0 {
            r = 1.0;
        } else if a_nan || b_nan {
            r = f32::from_bits(0x7fc0_0000u32);
        } else if b_inf {
            if aa == 1.0 {
                r = 1.0;
            } else if (aa < 1.0) == (b < 0.0) {
                r = f32::INFINITY;
            } else {
                r = 0.0;
            }
        } else if aa == 0.0 || aa == f32::INFINITY {
            // 0^b and ∞^b: one of 0 and ∞ by the sign of b (and which of
            // the two a is), the sign of a kept for an odd integer b.
            let big = (aa == 0.0) == (b < 0.0);
            r = 0.0;
            if big {
                r = f32::INFINITY;
            }
            if a_neg && b_odd {
                r = -r;
            }
        } else if a_neg && !b_int {
            r = f32::from_bits(0x7fc0_0000u32);
        } else {
            r = pow_abs(aa, b, z);
            if a_neg && b_odd {
                r = -r;
            }
        }
        r
    }

    /// C's `fmod(a, b)`, exact (musl's `fmodf`): NaN for a NaN, an
    /// infinite `a` or a zero `b`; `a` where `|a| < |b|` or `b` is
    /// infinite; else the significands' long division, a bit a step (at
    /// most 277 steps, the exponent range), the result with `a`'s sign.
    #[helper]
    fn fmod_f(a: f32, b: f32) -> f32 {
        let ux0 = a.to_bits();
        let uy0 = b.to_bits();
        let sx = ux0 & 0x8000_0000u32;
        let ax = ux0 & 0x7fff_ffffu32;
        let ay = uy0 & 0x7fff_ffffu32;
        let mut r = a;
        if ay == 0u32 || ay > 0x7f80_0000u32 || ax >= 0x7f80_0000u32 {
            r = f32::from_bits(0x7fc0_0000u32);
        } else if ax < ay {
            r = a;
        } else if ax == ay {
            r = f32::from_bits(sx);
        } else {
            let mut ex = (ax >> 23u32) as i32;
            let mut ey = (ay >> 23u32) as i32;
            let mut ux = ax;
            let mut uy = ay;
            // Significands with the hidden bit; a subnormal's normalized
            // by shifting, its exponent going below 1.
            if ex == 0 {
                let lz = (ux << 9u32).leading_zeros() as i32;
                ex = -lz;
                ux = ux << ((1 - ex) as u32);
            } else {
                ux = (ux & 0x007f_ffffu32) | 0x0080_0000u32;
            }
            if ey == 0 {
                let lz = (uy << 9u32).leading_zeros() as i32;
                ey = -lz;
                uy = uy << ((1 - ey) as u32);
            } else {
                uy = (uy & 0x007f_ffffu32) | 0x0080_0000u32;
            }
            let mut zero = false;
            while ex > ey && !zero {
                if ux >= uy {
                    ux -= uy;
                    if ux == 0u32 {
                        zero = true;
                    }
                }
                ux = ux << 1u32;
                ex -= 1;
            }
            if !zero && ux >= uy {
                ux -= uy;
                if ux == 0u32 {
                    zero = true;
                }
            }
            if zero {
                r = f32::from_bits(sx);
            } else {
                // Normalize back (ux < 2^24 and nonzero).
                let sh = ux.leading_zeros() as i32 - 8;
                ux = ux << (sh as u32);
                ex -= sh;
                if ex > 0 {
                    ux = (ux - 0x0080_0000u32) | ((ex as u32) << 23u32);
                } else {
                    ux = ux >> ((1 - ex) as u32);
                }
                r = f32::from_bits(ux | sx);
            }
        }
        r
    }

    /// Word `k` of 2/π's binary fraction with 64 zero bits in front:
    /// words 2 to 9 are 2/π's first 256 bits (`0.a2f9836e…`), and the
    /// zeros let an argument below 2 take the same window arithmetic as
    /// a large one. Bits from a 700-bit Machin evaluation of π.
    #[helper]
    fn two_over_pi_word(k: u32) -> u32 {
        let mut w = 0u32;
        if k == 2u32 {
            w = 0xa2f9_836eu32;
        } else if k == 3u32 {
            w = 0x4e44_1529u32;
        } else if k == 4u32 {
            w = 0xfc27_57d1u32;
        } else if k == 5u32 {
            w = 0xf534_ddc0u32;
        } else if k == 6u32 {
            w = 0xdb62_9599u32;
        } else if k == 7u32 {
            w = 0x3c43_9041u32;
        } else if k == 8u32 {
            w = 0xfe51_63abu32;
        } else if k == 9u32 {
            w = 0xdebb_c561u32;
        }
        w
    }

    /// The 96 bits of `two_over_pi_word`'s string from bit `p` on
    /// (1-based), as three words.
    #[helper]
    fn pi_window(p: u32) -> (u32, u32, u32) {
        let q = (p - 1u32) / 32u32;
        let r = (p - 1u32) % 32u32;
        let w0 = two_over_pi_word(q);
        let w1 = two_over_pi_word(q + 1u32);
        let w2 = two_over_pi_word(q + 2u32);
        let w3 = two_over_pi_word(q + 3u32);
        let mut a = w0;
        let mut b = w1;
        let mut c = w2;
        if r > 0u32 {
            a = (w0 << r) | (w1 >> (32u32 - r));
            b = (w1 << r) | (w2 >> (32u32 - r));
            c = (w2 << r) | (w3 >> (32u32 - r));
        }
        (a, b, c)
    }

    /// The 56-bit product of a 24-bit `m` and a word, as (high word, low
    /// word): in 16-bit limbs, so that no partial product leaves 32 bits.
    #[helper]
    fn mul_24_32(m: u32, w: u32) -> (u32, u32) {
        let m0 = m & 0xffffu32;
        let m1 = m >> 16u32;
        let w0 = w & 0xffffu32;
        let w1 = w >> 16u32;
        let p00 = m0 * w0;
        let p01 = m0 * w1;
        let p10 = m1 * w0;
        let p11 = m1 * w1;
        let mid = (p01 & 0xffffu32) + (p10 & 0xffffu32) + (p00 >> 16u32);
        let hi = p11 + (p01 >> 16u32) + (p10 >> 16u32) + (mid >> 16u32);
        let lo = (mid << 16u32) | (p00 & 0xffffu32);
        (hi, lo)
    }

    /// `|x| = (n + r)·π/2` for a finite `|x| >= 2^-12`, with `n` mod 4 and
    /// `r` in `[-1/2, 1/2]` as `r_hi + r_lo` (about 56 bits), by Payne and
    /// Hanek's reduction: `|x| = m·2^s` (`m` the 24-bit significand), and
    /// of `|x|·2/π = m·2^s·Σ bit_i·2^-i` only the bits of 2/π from `i = s -
    /// 1` on matter (those before give multiples of 4 quarter turns); 96
    /// of them times `m` leave the fraction to 2^-72 of a turn, exactly in
    /// integers. The nearest quarter turn is split off, and the rest,
    /// normalized, becomes two floats. No rounding happens before that,
    /// so `sin(f32::MAX)` is as accurate as `sin(1)`.
    #[helper]
    fn quarter_turns(ax: f32) -> (u32, f32, f32) {
        let b = ax.to_bits();
        let e = b >> 23u32;
        let m = (b & 0x007f_ffffu32) | 0x0080_0000u32;
        // s = e - 150; the window starts at 2/π's bit s - 1, which is bit
        // s + 63 = e - 87 of the zero-prefixed string (e >= 126 here).
        let (wa, wb, wc) = pi_window(e - 87u32);
        let (_, al) = mul_24_32(m, wa);
        let (bh, bl) = mul_24_32(m, wb);
        let (ch, cl) = mul_24_32(m, wc);
        // The fraction of a turn, 0.f1 f2 f3 (what is above is whole
        // turns): integer words wrap.
        let f2 = bl + ch;
        let mut f1 = al + bh;
        if f2 < bl {
            f1 += 1u32;
        }
        let f3 = cl;
        let mut n = f1 >> 30u32;
        // The quarter turn's fraction, 64 bits in g1.g2.
        let mut g1 = (f1 << 2u32) | (f2 >> 30u32);
        let mut g2 = (f2 << 2u32) | (f3 >> 30u32);
        let mut neg = false;
        if (g1 >> 31u32) == 1u32 {
            // Past half a quarter: to the next one, r = -(1 - fraction).
            n += 1u32;
            neg = true;
            g2 = !g2 + 1u32;
            g1 = !g1;
            if g2 == 0u32 {
                g1 += 1u32;
            }
        }
        let mut shift = 32i32;
        if g1 == 0u32 {
            g1 = g2;
            g2 = 0u32;
            shift += 32;
        }
        let mut r_hi = 0.0;
        let mut r_lo = 0.0;
        if g1 != 0u32 {
            let lz = g1.leading_zeros();
            if lz > 0u32 {
                g1 = (g1 << lz) | (g2 >> (32u32 - lz));
                g2 = g2 << lz;
            }
            shift += lz as i32;
            // value = (g1 + g2/2^32)·2^-shift, g1's top bit set: its top 24
            // bits exactly, the next 32 rounded once into the low part.
            let scale = f32::from_bits(((127 - shift) as u32) << 23u32);
            let low = ((g1 & 0xffu32) as f32) + ((g2 >> 8u32) as f32) * 5.960_464_5e-8;
            r_hi = ((g1 >> 8u32) as f32) * 256.0 * scale;
            r_lo = low * scale;
        }
        if neg {
            r_hi = -r_hi;
            r_lo = -r_lo;
        }
        (n & 3u32, r_hi, r_lo)
    }

    /// `sin(x + y)` for `|x| <= π/4` (and a little) and `|y|` a few ulp of
    /// `x`: `x + (x·z·S(z) + y·(1 - z/2))`, `S` Taylor's to `x^9` (the
    /// next term is 3e-9 of the result): `x·z·S` is at most a tenth of
    /// the result, so its roundings cost a tenth of an ulp each; within 1
    /// ulp.
    #[helper]
    fn sin_kernel(x: f32, y: f32) -> f32 {
        let zz = x * x;
        let mut p = 2.755_731_9e-6;
        p = p.mul_add(zz, -1.984_127e-4);
        p = p.mul_add(zz, 8.333_334e-3);
        p = p.mul_add(zz, -0.166_666_67);
        x + (x * zz).mul_add(p, y * (1.0 - 0.5 * zz))
    }

    /// `cos(x + y)` likewise: `1 - z/2 + z²·C(z) - x·y`, `C` Taylor's to
    /// `x^10` (next term 1e-10), with `w = 1 - z/2` rounded once and its
    /// rounding error `(1 - w) - z/2` (exact: Sterbenz) added back, fdlibm's
    /// way; `w` passes through its bits so a reassociating driver cannot
    /// fold that error to 0. Within 1 ulp.
    #[helper]
    fn cos_kernel(x: f32, y: f32, z: u32) -> f32 {
        let zz = x * x;
        let mut c = -2.755_732e-7;
        c = c.mul_add(zz, 2.480_158_8e-5);
        c = c.mul_add(zz, -1.388_888_9e-3);
        c = c.mul_add(zz, 4.166_666_8e-2);
        let hz = 0.5 * zz;
        let w = f32::from_bits((1.0 - hz).to_bits() ^ z);
        w + (((1.0 - w) - hz) + (zz * zz).mul_add(c, -(x * y)))
    }

    /// `num / den` to about half an ulp: WGSL's `/` promises only 2.5
    /// ulp, so the quotient's remainder (exact by fma) corrects it once.
    #[helper]
    fn divide(num: f32, den: f32) -> f32 {
        let q = num / den;
        let rem = (-q).mul_add(den, num);
        q + rem / den
    }

    /// `sin` (`which` 0), `cos` (1) or `tan` (2) of `v`: NaN for NaN and
    /// ±∞; below 2^-12 in magnitude `v`, 1 and `v` (each exact to the
    /// rounding); else `|v| = (n + r)·π/2` by `quarter_turns` (or `n =
    /// 0, r = |v|` up to π/4), `θ = r·π/2` as `θ_hi + θ_lo` (π/2 in two
    /// parts, the product's error by fma), and the kernels by quadrant;
    /// tan as a corrected quotient of the two (within 3 ulp away from the
    /// poles). sin and tan are odd: the sign of `v` is put back.
    #[helper]
    fn trig(which: u32, v: f32, z: u32) -> f32 {
        let av = v.abs();
        let nan = is_nan(v);
        let mut r = f32::from_bits(0x7fc0_0000u32);
        if av == f32::INFINITY || nan {
            r = f32::from_bits(0x7fc0_0000u32);
        } else if av < 0.000_244_140_625 {
            r = v;
            if which == 1u32 {
                r = 1.0;
            }
        } else {
            let mut n = 0u32;
            let mut th = av;
            let mut tl = 0.0;
            if av > 0.785_398_1 {
                let (q, r_hi, r_lo) = quarter_turns(av);
                n = q;
                th = f32::from_bits((r_hi * 1.570_796_4).to_bits() ^ z);
                tl = r_hi.mul_add(1.570_796_4, -th)
                    + r_hi.mul_add(-4.371_139e-8, r_lo * 1.570_796_4);
            }
            let s = sin_kernel(th, tl);
            let c = cos_kernel(th, tl, z);
            if which == 0u32 {
                if n == 0u32 {
                    r = s;
                } else if n == 1u32 {
                    r = c;
                } else if n == 2u32 {
                    r = -s;
                } else {
                    r = -c;
                }
            } else if which == 1u32 {
                if n == 0u32 {
                    r = c;
                } else if n == 1u32 {
                    r = -s;
                } else if n == 2u32 {
                    r = -c;
                } else {
                    r = s;
                }
            } else if (n & 1u32) == 0u32 {
                r = divide(s, c);
            } else {
                r = -divide(c, s);
            }
            if which != 1u32 && (v.to_bits() >> 31u32) == 1u32 {
                r = -r;
            }
        }
        r
    }

    /// Elementwise unary function over a strided (possibly broadcast)
    /// input, with `unary_strided`'s parameters and two scalars of the
    /// op's own (`p0`, `p1`; see [`super::math_code`]): `out[i] =
    /// f(x[xoff + Σ_d coord_d(i)·xstride[d]])`.
    #[kernel(block = [64, 128, 256])]
    pub fn unary_math_strided(
        x: &[f32],
        out: &mut [f32],
        shape: &[u32],
        xstride: &[i32],
        ndim: u32,
        n: u32,
        xoff: i32,
        op: u32,
        p0: f32,
        p1: f32,
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
            let z = ndim >> 16u32;
            let v = x[xi];
            let nan = is_nan(v);
            let av = v.abs();
            let neg = (v.to_bits() >> 31u32) == 1u32;
            let mut r = v;
            if op == 0 {
                // 2^v = 2^k · e^(f·ln2), k = round(v), f = v - k exact,
                // f·ln2 with its rounding under a fifth of an ulp of
                // e^(f·ln2) (|f·ln2| <= 0.35): exp's polynomial, 2 ulp.
                if nan {
                    r = v;
                } else if v >= 128.0 {
                    r = f32::INFINITY;
                } else if v < -150.0 {
                    r = 0.0;
                } else {
                    let k = (v + 0.5).floor();
                    let f = v - k;
                    let t = f.mul_add(0.693_147_2, f * -1.904_654_3e-9);
                    // t may round to k2 = ±1 in exp's own reduction.
                    let (k2, p) = exp_kp(t, z);
                    r = ldexp(p, k + k2);
                }
            } else if op == 1 {
                r = expm1_f(v, z);
            } else if op == 2 || op == 3 {
                // sinh and cosh. Below 1 (sinh): the odd Taylor series to
                // x^11 (next term under 2e-10 relative), x + x·z·p, within
                // 1 ulp. Up to 20: (e ∓ 1/e)/2 with e = e^|v| (2 ulp),
                // 1/e one rounding more, the difference amplifying by at
                // most e/(e - 1/e) <= 1.16: within 3.5 ulp. Beyond,
                // e^|v|/2 = 2^(k-1)·p, which stays finite up to sinh's
                // own overflow at 89.416.
                if nan {
                    r = v;
                } else if av > 89.5 {
                    r = f32::INFINITY;
                } else if op == 2 && av < 1.0 {
                    let zz = v * v;
                    let mut p = 2.505_210_8e-8;
                    p = zz.mul_add(p, 2.755_732e-6);
                    p = zz.mul_add(p, 1.984_127e-4);
                    p = zz.mul_add(p, 8.333_334e-3);
                    p = zz.mul_add(p, 0.166_666_67);
                    r = (v * zz).mul_add(p, v);
                } else if av < 20.0 {
                    let e = exp_f(av, z);
                    if op == 2 {
                        r = 0.5 * (e - 1.0 / e);
                    } else {
                        r = 0.5 * (e + 1.0 / e);
                    }
                } else {
                    let (k, p) = exp_kp(av, z);
                    r = ldexp(p, k - 1.0);
                }
                if op == 2 && neg {
                    r = -r.abs();
                }
            } else if op == 4 || op == 5 {
                // log2 = k + ln(m)/ln2 and log10 = k·log10(2) + ln(m)/ln10
                // (log10(2) in a 12-bit head, exact times k, and a tail):
                // ln m within 1 ulp, then a rounded constant and two
                // roundings; with m in [√2/2, √2) the sum with k cancels
                // at most by half: within 3.5 ulp.
                let bits = v.to_bits();
                if nan || bits == 0x7f80_0000u32 {
                    r = v;
                } else if (bits & 0x7fff_ffffu32) == 0u32 {
                    r = f32::NEG_INFINITY;
                } else if neg {
                    r = f32::from_bits(0x7fc0_0000u32);
                } else {
                    let (dk, f, hfsq, sr) = ln_parts(v);
                    let lnm = f - (hfsq - sr);
                    if op == 4 {
                        r = lnm.mul_add(1.442_695, dk);
                    } else {
                        r = dk.mul_add(0.301_025_4, dk.mul_add(4.605_039e-6, lnm * 0.434_294_5));
                    }
                }
            } else if op == 6 {
                // Exact: |v| from 2^23 on (and ∞, NaN) is integral; below,
                // floor of the magnitude with the input's sign put back.
                if nan || av >= 8_388_608.0 {
                    r = v;
                } else {
                    r = f32::from_bits(av.floor().to_bits() | (v.to_bits() & 0x8000_0000u32));
                }
            } else if op == 7 {
                // v/6 rounds relative to |v|/6, + 1/2 relative to the
                // result: within ε·(|v| + |want|), the bound's scale.
                if nan {
                    r = v;
                } else if v <= -3.0 {
                    r = 0.0;
                } else if v >= 3.0 {
                    r = 1.0;
                } else {
                    r = v / 6.0 + 0.5;
                }
            } else if op == 8 {
                // Three roundings, each relative to a same-signed factor.
                if nan {
                    r = v;
                } else if v <= -3.0 {
                    r = 0.0;
                } else if v >= 3.0 {
                    r = v;
                } else {
                    r = v * (v + 3.0) / 6.0;
                }
            } else if op == 9 {
                // p0·expm1(v) (2.5 ulp, the constant and the product one
                // rounding each), or p1·v.
                if nan {
                    r = v;
                } else if v > 0.0 {
                    r = p1 * v;
                } else {
                    r = p0 * expm1_f(v, z);
                }
            } else if op == 10 {
                // -softplus(-v) = min(v, 0) - ln(1 + e^-|v|).
                if nan {
                    r = v;
                } else {
                    r = v.min(0.0) - ln1p_f(exp_f(-av, z), z);
                }
            } else if op == 11 {
                // v·tanh(softplus v): softplus's 4 ulp pass through tanh
                // with a relative condition at most 1, tanh adds 2 and the
                // product 1; -0 at -∞ (the limit, where -∞·0 is NaN).
                if nan {
                    r = v;
                } else if v < -125.0 {
                    // Below -125, v·e^v is under half the least subnormal.
                    r = -0.0;
                } else if v < -20.0 {
                    // softplus v = e^v(1 - e^v/2 ...) and tanh s = s(1 -
                    // s²/3 ...): mish v = v·e^v to a relative 1e-9. As
                    // v·p·2^k with one rounding at the end, so a subnormal
                    // result keeps its bits (e^v alone is 0 below -104).
                    let (k, p) = exp_kp(v, z);
                    r = ldexp(v * p, k);
                } else {
                    r = v * tanh_pos(softplus_f(v, z), z);
                }
            } else if op == 12 {
                r = erf(v);
            } else if op == 13 {
                // v·(1 + erf(v/√2))/2: erf within 1 ulp (6e-8 absolute),
                // the gate's roundings absolute ~6e-8 each, times |v|:
                // within ε·|v|, inside the bound's 4·ε·(|want| + |v|).
                // The ends are the limits (v at +∞, -0 at -∞).
                if nan || v == f32::INFINITY {
                    r = v;
                } else if v == f32::NEG_INFINITY {
                    r = -0.0;
                } else {
                    let g = 0.5 * (1.0 + erf(v * 0.707_106_77));
                    r = v * g;
                }
            } else if op == 14 {
                r = atan_f(v);
            } else if op == 15 || op == 16 {
                // asin v = atan(v / √((1 - v)(1 + v))) and acos v =
                // 2·atan(√((1 - v)/(1 + v))): 1 - v is exact from 1/2 on
                // (Sterbenz), the rest 3 roundings whose relative errors
                // halve through the root; atan's relative condition is at
                // most 1 and its own error 1 ulp: within 3 ulp. NaN past
                // |v| = 1.
                if nan || av > 1.0 {
                    r = f32::from_bits(0x7fc0_0000u32);
                } else if op == 15 {
                    r = atan_f(v / ((1.0 - v) * (1.0 + v)).sqrt());
                } else {
                    r = 2.0 * atan_f(((1.0 - v) / (1.0 + v)).sqrt());
                }
            } else if op == 17 {
                r = pow_f(v, p0, p1 as u32, z);
            } else if op >= 18 && op <= 20 {
                r = trig(op - 18u32, v, z);
            }
            out[i] = r;
        }
    }

    /// Elementwise binary function over two strided, broadcast inputs,
    /// with `binary_strided`'s parameters: `op` is one of
    /// [`super::binary_math_code`].
    #[kernel(block = [64, 128, 256])]
    pub fn binary_math_strided(
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
            let z = ndim >> 16u32;
            let x = a[ai];
            let y = b[bi];
            let ax = x.abs();
            let ay = y.abs();
            let x_neg = (x.to_bits() >> 31u32) == 1u32;
            let y_neg = (y.to_bits() >> 31u32) == 1u32;
            let x_inf = ax == f32::INFINITY;
            let x_nan = is_nan(x);
            let y_nan = is_nan(y);
            let y_inf = ay == f32::INFINITY;
            let mut r = x;
            if op == 0 {
                // atan2(x, y) (x the ordinate) with C's special cases;
                // otherwise atan(|x/y|) (the quotient's rounding passes
                // through atan's relative condition <= 1: within 2 ulp),
                // taken from π in two parts for y < 0 (the result is then
                // at least π/2, no cancellation), the ordinate's sign
                // last.
                let mut m = 0.0;
                if x_nan || y_nan {
                    m = f32::from_bits(0x7fc0_0000u32);
                } else if x_inf && y_inf {
                    m = 0.785_398_2;
                    if y_neg {
                        m = 2.356_194_5;
                    }
                } else if x_inf || ay == 0.0 {
                    m = 1.570_796_4;
                    if ax == 0.0 && !y_neg {
                        m = 0.0;
                    } else if ax == 0.0 {
                        m = 3.141_592_7;
                    }
                } else if y_inf || ax == 0.0 {
                    m = 0.0;
                    if y_neg {
                        m = 3.141_592_7;
                    }
                } else {
                    m = atan_f(ax / ay);
                    if y_neg {
                        m = 3.141_592_7 - (m - -8.742_278e-8);
                    }
                }
                r = m;
                let m_nan = is_nan(m);
                if x_neg && !m_nan {
                    r = -m;
                }
            } else if op == 1 {
                // hypot: ∞ if either is infinite (even beside a NaN). In
                // [2^-60, 2^60] √(x² + y²) directly (the squares and sum
                // two roundings of a positive sum, halved by the root,
                // then its own: within 1.5 ulp); outside it, big·√(1 +
                // q²) with q = small/big (q's rounding and q²'s, at most
                // halved in 1 + q², halved again by the root, then two
                // more: within 2 ulp), which neither overflows nor
                // underflows.
                let big = ax.max(ay);
                let small = ax.min(ay);
                if x_inf || y_inf {
                    r = f32::INFINITY;
                } else if x_nan || y_nan {
                    r = f32::from_bits(0x7fc0_0000u32);
                } else if big == 0.0 {
                    r = 0.0;
                } else if big < 1.152_921_5e18 && big > 8.673_617e-19 {
                    r = ax.mul_add(ax, ay * ay).sqrt();
                } else {
                    let q = small / big;
                    r = big * q.mul_add(q, 1.0).sqrt();
                }
            } else if op == 2 {
                r = pow_f(x, y, 0u32, z);
            } else if op == 3 || op == 4 {
                let f = fmod_f(x, y);
                r = f;
                let f_nan = is_nan(f);
                if op == 4 && !f_nan {
                    // The floored remainder: fmod moved into the divisor's
                    // half-line (one correctly rounded addition), a zero
                    // taking the divisor's sign.
                    let f_neg = (f.to_bits() >> 31u32) == 1u32;
                    if f == 0.0 {
                        r = f32::from_bits(y.to_bits() & 0x8000_0000u32);
                    } else if f_neg != y_neg {
                        r = f + y;
                    }
                }
            }
            out[i] = r;
        }
    }

    /// The running log-sum-exp of an f32 input along `dim`, written
    /// contiguously (`scan_strided`'s parameters without its op and
    /// kind): thread `r` walks row `r` in order, folding each element in
    /// by the reference's step `hi + ln(1 + e^(lo - hi))` (`log_add_exp`)
    /// with this module's exp and ln1p, so every element stays exact to
    /// the step's few ulps however far below the row's later maximum it
    /// lies (a shift by the row's maximum, then one cumsum, would
    /// underflow those to `-∞`). NaN propagates; two infinities of one
    /// sign give that infinity; the scan starts from `-∞`.
    #[kernel(block = [64, 256])]
    pub fn logcumsumexp_strided(
        x: &[f32],
        out: &mut [f32],
        shape: &[u32],
        xstride: &[i32],
        ndim: u32,
        n: u32,
        xoff: i32,
        dim: u32,
    ) {
        let row = block_idx_x() * block_dim_x() + thread_idx_x();
        if row < n {
            let mut rem = row;
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
            let z = ndim >> 16u32;
            let mut acc = f32::NEG_INFINITY;
            for j in 0..shape[dim] {
                let v = x[xi + j as i32 * xstride[dim]];
                let hi = acc.max(v);
                let lo = acc.min(v);
                let v_nan = is_nan(v);
                let acc_nan = is_nan(acc);
                if v_nan || acc_nan {
                    acc = f32::from_bits(0x7fc0_0000u32);
                } else if lo == hi && lo.abs() == f32::INFINITY {
                    acc = hi;
                } else {
                    // lo - hi <= 0, so e^(lo - hi) is in [0, 1] and its
                    // ln1p in [0, ln 2]: no step overflows.
                    acc = hi + ln1p_f(exp_f(lo - hi, z), z);
                }
                out[oi + j * ostep] = acc;
            }
        }
    }
}
