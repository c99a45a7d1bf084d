//! f64 library functions for adapters with f64 (wgpu's SHADER_F64; the
//! kernel reads an f64's bits as a `u64`, so SHADER_INT64 too): exp, ln
//! and what is built on them (log1p, expm1, sigmoid, tanh, softplus,
//! SiLU, logsigmoid, ELU/SELU, exp2, log2, log10, sinh, cosh, GELU's tanh
//! form, mish), rsqrt, and the exact ops sign, trunc, round, clamp,
//! leaky ReLU and the hard activations — one kernel,
//! [`unary_math_f64`], whose codes are [`wide_math_code`] — and `pow` and
//! `hypot` of two tensors ([`binary_math_f64`]).
//!
//! Vulkan has no f64 `exp` or `log` (GLSL.std.450 defines them for 16-
//! and 32-bit floats only), so they are written here out of operations
//! every f64 adapter rounds correctly (`+ - * /`, fma): `e^x` by
//! Cody–Waite reduction `x = k·ln2 + r` (`ln2` in a 32-bit head whose
//! products with `k` are exact, and a tail) and `e^r - 1` by its Taylor
//! polynomial to `r^14` on `|r| <= ln2/2` (truncation under 2^-60
//! relative), `ln x` by fdlibm's `log` (Sun Microsystems, 1993: `x =
//! 2^k·(1 + f)`, `s = f/(2 + f)`, a degree-14 odd polynomial in `s`),
//! each within 1 ulp. The functions built on them follow the reference
//! backend's formulas (`oxmera_reference`'s elementwise module) with the
//! error of each step bounded beside it; the conformance bound is
//! `4ε·|want|` (ε = 2^-52) for the library functions, 6ε for ELU/SELU and
//! 10ε for mish, `2ε` for rsqrt, exact for the rest.
//!
//! `z` is a zero the compiler cannot know is zero (`ndim >> 16`, as in
//! the f32 math kernels): xored into a value's bits it keeps a driver
//! that reassociates floats (lavapipe does) from merging the two steps of
//! the reduction.

#![allow(clippy::too_many_arguments)]

use crate::kernels;

/// The `op` values of [`unary_math_f64`]; `p0`, `p1` are its two scalars.
pub mod wide_math_code {
    /// `e^x`
    pub const EXP: u32 = 0;
    /// `ln x`
    pub const LOG: u32 = 1;
    /// `ln(1 + x)`
    pub const LOG1P: u32 = 2;
    /// `e^x - 1`
    pub const EXPM1: u32 = 3;
    /// `1 / (1 + e^-x)`
    pub const SIGMOID: u32 = 4;
    /// `tanh x`
    pub const TANH: u32 = 5;
    /// `ln(1 + e^x)`
    pub const SOFTPLUS: u32 = 6;
    /// `x · sigmoid(x)`
    pub const SILU: u32 = 7;
    /// `-softplus(-x)`
    pub const LOGSIGMOID: u32 = 8;
    /// `p1 · (x > 0 ? x : p0 · expm1(x))`: ELU (`p1 = 1`) and SELU
    pub const ELU: u32 = 9;
    /// `2^x`
    pub const EXP2: u32 = 10;
    /// `log2 x`
    pub const LOG2: u32 = 11;
    /// `log10 x`
    pub const LOG10: u32 = 12;
    /// `sinh x`
    pub const SINH: u32 = 13;
    /// `cosh x`
    pub const COSH: u32 = 14;
    /// `1 / sqrt(x)`, two correctly rounded steps
    pub const RSQRT: u32 = 15;
    /// -1, 0 or 1 (+0 for both zeros, NaN kept)
    pub const SIGN: u32 = 16;
    /// toward zero
    pub const TRUNC: u32 = 17;
    /// half to even, a zero keeping the input's sign
    pub const ROUND: u32 = 18;
    /// `min(max(x, p0), p1)`, NaN kept (hardtanh too; ±∞ for a bound
    /// not given)
    pub const CLAMP: u32 = 19;
    /// `x > 0 ? x : p0 · x`
    pub const LEAKY_RELU: u32 = 20;
    /// GELU's tanh form, `x · sigmoid(2z)`, `z = √(2/π)(x + 0.044715x³)`
    pub const GELU_TANH: u32 = 21;
    /// `x · tanh(softplus(x))`
    pub const MISH: u32 = 22;
    /// 0 at and below -3, 1 at and above 3, `x/6 + 1/2` between
    pub const HARDSIGMOID: u32 = 23;
    /// 0 at and below -3, `x` at and above 3, `x(x + 3)/6` between
    pub const HARDSWISH: u32 = 24;
    /// `x^p0` with C's special cases (Rust's `powf`)
    pub const POWF: u32 = 25;
}

pub use wide_math_kernels::{
    binary_math_f64, logcumsumexp_f64, moments_f64, softmax_f64, unary_math_f64,
};

/// [`moments_f64`]'s log-sum-exp code, beside `moment_code`'s five.
pub const MOMENT_LOGSUMEXP: u32 = 5;

#[kernels]
pub mod wide_math_kernels {
    /// Whether `v` is a NaN, on the bits (a GPU compiler may fold `v != v`).
    #[helper]
    fn nan64(v: f64) -> bool {
        (v.to_bits() & 0x7fff_ffff_ffff_ffffu64) > 0x7ff0_0000_0000_0000u64
    }

    /// `2^k` for an integral `k` in `[-1022, 1023]`, from its bits.
    #[helper]
    fn pow2(k: f64) -> f64 {
        f64::from_bits(((k as i32 + 1023) as u64) << 52u64)
    }

    /// `p · 2^k` for an integral `k` in `[-1075, 1024]`, in two exact
    /// power-of-two factors so that a subnormal result is rounded once.
    #[helper]
    fn ldexp64(p: f64, k: f64) -> f64 {
        let half = (k * 0.5f64).floor();
        p * pow2(half) * pow2(k - half)
    }

    /// `e^t - 1` on `|t| <= ln2/2 + a little` by Taylor to `t^14` (the next
    /// term is under 2^-60 of the result), as `t + t²·q`: `t²·q` is at
    /// most a fifth of the result, so its roundings cost a fifth of an ulp
    /// each; within 1 ulp.
    #[helper]
    fn expm1_poly(t: f64) -> f64 {
        let mut q = 1.147_074_559_772_972_5e-11f64;
        q = q.mul_add(t, 1.605_904_383_682_161_3e-10f64);
        q = q.mul_add(t, 2.087_675_698_786_81e-9f64);
        q = q.mul_add(t, 2.505_210_838_544_172e-8f64);
        q = q.mul_add(t, 2.755_731_922_398_589e-7f64);
        q = q.mul_add(t, 2.755_731_922_398_589_3e-6f64);
        q = q.mul_add(t, 2.480_158_730_158_730_2e-5f64);
        q = q.mul_add(t, 1.984_126_984_126_984_1e-4f64);
        q = q.mul_add(t, 1.388_888_888_888_888_9e-3f64);
        q = q.mul_add(t, 8.333_333_333_333_333e-3f64);
        q = q.mul_add(t, 4.166_666_666_666_666_4e-2f64);
        q = q.mul_add(t, 0.166_666_666_666_666_66f64);
        q = q.mul_add(t, 0.5f64);
        (t * t).mul_add(q, t)
    }

    /// `x = k·ln2 + r`, `|r| <= ln2/2` and a little: `k = round(x/ln2)`,
    /// `r` in two steps (fdlibm's `ln2_hi`, exact times any `|k| < 2^20`,
    /// and `ln2_lo`; Cody–Waite), the first passed through its bits so no
    /// reassociation merges them.
    #[helper]
    fn reduce(x: f64, z: u64) -> (f64, f64) {
        let k = (x * 1.442_695_040_888_963_4f64 + 0.5f64).floor();
        let r0 = k.mul_add(-6.931_471_803_691_238_2e-1f64, x);
        let r1 = f64::from_bits(r0.to_bits() ^ z);
        (k, k.mul_add(-1.908_214_929_270_587_7e-10f64, r1))
    }

    /// `e^x` for every `x`: `2^k·(1 + (e^r - 1))`, the sum within 0.6 ulp
    /// and the scaling exact (one rounding into a subnormal): within 1 ulp.
    #[helper]
    fn exp64(x: f64, z: u64) -> f64 {
        let mut e = x;
        if nan64(x) {
            e = x;
        } else if x > 709.782_712_893_384f64 {
            e = f64::INFINITY;
        } else if x < -745.2f64 {
            e = 0.0f64;
        } else {
            let (k, r) = reduce(x, z);
            e = ldexp64(1.0f64 + expm1_poly(r), k);
        }
        e
    }

    /// `e^x - 1`. Below ln2/2 in magnitude, the polynomial. Up to 40,
    /// `2^k·(1 + p) - 1 = fma(2^k, p, 2^k - 1)` with `p = e^r - 1` and
    /// `2^k - 1` exact (`|k| <= 58`): one rounding after `p`'s ulp,
    /// amplified at most 1.4 times by the cancellation at `k = 1, p < 0`:
    /// within 2.5 ulp. Beyond ±40, `e^x - 1` (the 1 under an ulp of `e^x`,
    /// or `e^x` under an ulp of 1).
    #[helper]
    fn expm1_64(x: f64, z: u64) -> f64 {
        let ax = x.abs();
        let mut r = x;
        if nan64(x) || ax < 1e-300f64 {
            r = x;
        } else if ax > 40.0f64 {
            r = exp64(x, z) - 1.0f64;
        } else if ax < 0.346_573_590_279_972_65f64 {
            r = expm1_poly(x);
        } else {
            let (k, t) = reduce(x, z);
            let s = pow2(k);
            r = s.mul_add(expm1_poly(t), s - 1.0f64);
        }
        r
    }

    /// `ln x` for every `x` (fdlibm's `__ieee754_log`, within 1 ulp):
    /// `x = 2^k·(1 + f)` with `1 + f` in `[√2/2, √2)`, `s = f/(2 + f)`,
    /// `ln(1 + f) = f - (f²/2 - s·(f²/2 + R(s²)))`. `-∞` at ±0, NaN
    /// below 0, ∞ and NaN kept.
    #[helper]
    fn ln64(x: f64) -> f64 {
        let bits = x.to_bits();
        let mut l = x;
        if nan64(x) || bits == 0x7ff0_0000_0000_0000u64 {
            l = x;
        } else if (bits & 0x7fff_ffff_ffff_ffffu64) == 0u64 {
            l = f64::NEG_INFINITY;
        } else if (bits >> 63u64) == 1u64 {
            l = f64::from_bits(0x7ff8_0000_0000_0000u64);
        } else {
            let mut v = x;
            let mut k = 0i32;
            if bits < 0x0010_0000_0000_0000u64 {
                // Subnormal: scaled by 2^54 into the normal range.
                v = x * 18_014_398_509_481_984.0f64;
                k = -54;
            }
            let vb = v.to_bits();
            let hx = (vb >> 32u64) as u32;
            k += (hx >> 20u32) as i32 - 1023;
            let m = hx & 0x000f_ffffu32;
            // i: whether the significand is at least √2 (its high bits
            // past 0x6a09e): then 1 + f is halved and k grows by one.
            let i = (m + 0x0009_5f64u32) & 0x0010_0000u32;
            k += (i >> 20u32) as i32;
            let hi = m | (i ^ 0x3ff0_0000u32);
            let f = f64::from_bits(((hi as u64) << 32u64) | (vb & 0xffff_ffffu64)) - 1.0f64;
            let s = f / (2.0f64 + f);
            let zz = s * s;
            let w = zz * zz;
            let t1 = w
                * (3.999_999_999_940_941_9e-1f64
                    + w * (2.222_219_843_214_978_4e-1f64 + w * 1.531_383_769_920_937_3e-1f64));
            let t2 = zz
                * (6.666_666_666_666_735_1e-1f64
                    + w * (2.857_142_874_366_239_1e-1f64
                        + w * (1.818_357_216_161_805e-1f64 + w * 1.479_819_860_511_658_6e-1f64)));
            let r = t2 + t1;
            let hfsq = 0.5f64 * f * f;
            let dk = k as f64;
            l = dk * 6.931_471_803_691_238_2e-1f64
                - ((hfsq - (s * (hfsq + r) + dk * 1.908_214_929_270_587_7e-10f64)) - f);
        }
        l
    }

    /// `ln(1 + t)`: `ln(u) · t / (u - 1)` with `u = 1 + t` (Goldberg: the
    /// rounding of `u` is undone by the factor it put in; within 2 ulp),
    /// `t` itself where `u` rounds to 1, ∞ at ∞.
    #[helper]
    fn ln1p64(t: f64, z: u64) -> f64 {
        let u = f64::from_bits((1.0f64 + t).to_bits() ^ z);
        let mut r = t;
        if t == f64::INFINITY {
            r = t;
        } else if u != 1.0f64 {
            r = ln64(u) * (t / (u - 1.0f64));
        }
        r
    }

    /// `1 / (1 + e^-x)` for `x >= 0`, `e^x / (1 + e^x)` below (the
    /// reference's two branches): exp's ulp and two roundings, within
    /// 2 ulp.
    #[helper]
    fn sigmoid64(x: f64, z: u64) -> f64 {
        let mut r = x;
        if x >= 0.0f64 {
            r = 1.0f64 / (1.0f64 + exp64(-x, z));
        } else if !nan64(x) {
            let e = exp64(x, z);
            r = e / (1.0f64 + e);
        }
        r
    }

    /// `ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|)`, NaN kept: within 3 ulp.
    #[helper]
    fn softplus64(x: f64, z: u64) -> f64 {
        let mut r = x;
        if !nan64(x) {
            r = x.max(0.0f64) + ln1p64(exp64(-x.abs(), z), z);
        }
        r
    }

    /// `tanh x` (fdlibm's `tanh`): `x` below 2^-28; `-t/(t + 2)` with
    /// `t = e^(-2|x|) - 1` below 1 (the quotient passes expm1's 2.5 ulp
    /// with a factor under 1.2, and adds 1.5); `1 - 2/(t + 2)` with
    /// `t = e^(2|x|) - 1` below 22 (the subtraction only shrinks those
    /// errors); ±1 beyond. The input's sign put back; NaN kept.
    #[helper]
    fn tanh64(x: f64, z: u64) -> f64 {
        let ax = x.abs();
        let mut r = x;
        if nan64(x) || ax < 3.725_290_298_461_914e-9f64 {
            r = x;
        } else {
            let mut m = 1.0f64;
            if ax < 1.0f64 {
                let t = expm1_64(-2.0f64 * ax, z);
                m = -t / (t + 2.0f64);
            } else if ax < 22.0f64 {
                let t = expm1_64(2.0f64 * ax, z);
                m = 1.0f64 - 2.0f64 / (t + 2.0f64);
            }
            r = f64::from_bits(m.to_bits() | (x.to_bits() & 0x8000_0000_0000_0000u64));
        }
        r
    }

    /// `x · gate`, with the limit -0 at `x = -∞` where `-∞ · 0` is NaN
    /// (the reference's `times_gate`).
    #[helper]
    fn gate64(x: f64, g: f64) -> f64 {
        let mut r = x * g;
        if x == f64::NEG_INFINITY {
            r = -0.0f64;
        }
        r
    }

    /// `a^b` with every special case of C's `pow` (and Rust's `powf`), as
    /// the f32 kernels' `pow_f`: `a^±0 = 1` and `1^b = 1` even for NaN;
    /// `(-1)^±∞ = 1`; `|a| < 1` or `> 1` to ±∞; zeros and infinities to
    /// odd integers keep their sign; a finite negative `a` to a
    /// non-integer is NaN. Otherwise `e^(b·ln|a|)`: ln's ulp and the
    /// product's half put `1.5ε·|b·ln a|` into the exponent, which `e^`
    /// turns into as much relative error, and exp adds its ulp: within
    /// the bound `ε·(1 + 4·(1 + |b·ln a|))·|want|`.
    #[helper]
    fn pow64(a: f64, b: f64, z: u64) -> f64 {
        let aa = a.abs();
        let ab = b.abs();
        let a_neg = (a.to_bits() >> 63u64) == 1u64;
        let a_nan = nan64(a);
        let b_nan = nan64(b);
        let b_inf = ab == f64::INFINITY;
        let b_int = !b_nan && !b_inf && b.floor() == b;
        // Integers from 2^53 on are even.
        let b_odd =
            b_int && ab < 9_007_199_254_740_992.0f64 && (ab * 0.5f64).floor() * 2.0f64 != ab;
        let mut r = 0.0f64;
        if b == 0.0f64 || a == 1.0f64 {
            r = 1.0f64;
        } else if a_nan || b_nan {
            r = f64::from_bits(0x7ff8_0000_0000_0000u64);
        } else if b_inf {
            if aa == 1.0f64 {
                r = 1.0f64;
            } else if (aa < 1.0f64) == (b < 0.0f64) {
                r = f64::INFINITY;
            } else {
                r = 0.0f64;
            }
        } else if aa == 0.0f64 || aa == f64::INFINITY {
            let big = (aa == 0.0f64) == (b < 0.0f64);
            r = 0.0f64;
            if big {
                r = f64::INFINITY;
            }
            if a_neg && b_odd {
                r = -r;
            }
        } else if a_neg && !b_int {
            r = f64::from_bits(0x7ff8_0000_0000_0000u64);
        } else {
            r = exp64(b * ln64(aa), z);
            if a_neg && b_odd {
                r = -r;
            }
        }
        r
    }

    /// `f op` of `x`: one of [`super::wide_math_code`], with its scalars.
    #[helper]
    fn apply(op: u32, v: f64, p0: f64, p1: f64, z: u64) -> f64 {
        let nan = nan64(v);
        let av = v.abs();
        let sign = v.to_bits() & 0x8000_0000_0000_0000u64;
        let mut r = v;
        if op == 0 {
            r = exp64(v, z);
        } else if op == 1 {
            r = ln64(v);
        } else if op == 2 {
            // Below -1 the log of a negative: NaN; at -1, ln 0.
            if v < -1.0f64 {
                r = f64::from_bits(0x7ff8_0000_0000_0000u64);
            } else {
                r = ln1p64(v, z);
            }
        } else if op == 3 {
            r = expm1_64(v, z);
        } else if op == 4 {
            r = sigmoid64(v, z);
        } else if op == 5 || op == 22 {
            // mish is x·tanh(softplus(x)): softplus's 3 ulp pass through
            // tanh with a relative condition at most 1, tanh adds its 4
            // and the product 1: within the 10 of its bound.
            let mut a = v;
            if op == 22 {
                a = softplus64(v, z);
            }
            r = tanh64(a, z);
            if op == 22 {
                r = gate64(v, r);
            }
        } else if op == 6 {
            r = softplus64(v, z);
        } else if op == 7 {
            r = gate64(v, sigmoid64(v, z));
        } else if op == 8 {
            r = -softplus64(-v, z);
        } else if op == 9 {
            if v > 0.0f64 || nan {
                r = p1 * v;
            } else {
                r = p1 * (p0 * expm1_64(v, z));
            }
        } else if op == 10 {
            // 2^v = 2^k · e^(f·ln2), k = round(v), f = v - k exact; the
            // product's rounding is under a fifth of an ulp of the result
            // (|f·ln2| <= 0.35): within 1.5 ulp.
            if nan {
                r = v;
            } else if v >= 1024.0f64 {
                r = f64::INFINITY;
            } else if v < -1080.0f64 {
                r = 0.0f64;
            } else {
                let k = (v + 0.5f64).floor();
                let f = v - k;
                r = ldexp64(1.0f64 + expm1_poly(f * 6.931_471_805_599_453e-1f64), k);
            }
        } else if op == 11 || op == 12 {
            // ln's ulp, the constant's and the product's half: 2 ulp.
            let mut c = 1.442_695_040_888_963_4f64;
            if op == 12 {
                c = 4.342_944_819_032_518e-1f64;
            }
            r = ln64(v) * c;
        } else if op == 13 || op == 14 {
            // sinh: x below 2^-28; from t = e^|x| - 1 below 22 (below 1
            // as (2t - t²/(t + 1))/2, no cancellation); (e^(|x|/2))²/2
            // beyond, so the square's overflow comes only with the
            // result's. cosh: 1 + t²/(2(1 + t)) below ln2/2, (e + 1/e)/2
            // below 22, the same square beyond. Within 4 ulp each.
            if nan {
                r = v;
            } else if av >= 22.0f64 {
                let w = exp64(0.5f64 * av, z);
                r = (0.5f64 * w) * w;
                if op == 13 {
                    r = f64::from_bits(r.to_bits() | sign);
                }
            } else if op == 13 {
                if av < 3.725_290_298_461_914e-9f64 {
                    r = v;
                } else {
                    let t = expm1_64(av, z);
                    let mut h = 0.5f64 * (t + t / (t + 1.0f64));
                    if av < 1.0f64 {
                        h = 0.5f64 * (2.0f64 * t - t * t / (t + 1.0f64));
                    }
                    r = f64::from_bits(h.to_bits() | sign);
                }
            } else if av < 0.346_573_590_279_972_65f64 {
                let t = expm1_64(av, z);
                r = 1.0f64 + (t * t) / (2.0f64 * (1.0f64 + t));
            } else {
                let e = exp64(av, z);
                r = 0.5f64 * e + 0.5f64 / e;
            }
        } else if op == 15 {
            r = 1.0f64 / v.sqrt();
        } else if op == 16 {
            if nan {
                r = v;
            } else if v > 0.0f64 {
                r = 1.0f64;
            } else if v < 0.0f64 {
                r = -1.0f64;
            } else {
                r = 0.0f64;
            }
        } else if op == 17 {
            // |v| from 2^52 on (∞ and NaN too) is integral.
            if !nan && av < 4_503_599_627_370_496.0f64 {
                r = f64::from_bits(av.floor().to_bits() | sign);
            }
        } else if op == 18 {
            // Ties to even by hand (Rust's round, the simulator's, is
            // half away from zero); a zero keeps the input's sign.
            let f = v.floor();
            let d = v - f;
            r = f;
            if d > 0.5f64 || (d == 0.5f64 && f - 2.0f64 * (f * 0.5f64).floor() != 0.0f64) {
                r = f + 1.0f64;
            }
            if r == 0.0f64 {
                r = f64::from_bits(sign);
            }
        } else if op == 19 {
            if v < p0 {
                r = p0;
            }
            if r > p1 {
                r = p1;
            }
        } else if op == 20 {
            if !(v > 0.0f64) && !nan {
                r = p0 * v;
            }
        } else if op == 21 {
            // The reference's sequence: z = c·(x + ((0.044715·x)·x)·x),
            // then x·sigmoid(2z).
            let zz = 7.978_845_608_028_654e-1f64 * (v + 0.044_715f64 * v * v * v);
            r = gate64(v, sigmoid64(2.0f64 * zz, z));
        } else if op == 23 {
            if v <= -3.0f64 {
                r = 0.0f64;
            } else if v >= 3.0f64 {
                r = 1.0f64;
            } else if !nan {
                r = v / 6.0f64 + 0.5f64;
            }
        } else if op == 24 {
            if v <= -3.0f64 {
                r = 0.0f64;
            } else if v < 3.0f64 && !nan {
                r = v * (v + 3.0f64) / 6.0f64;
            }
        } else if op == 25 {
            r = pow64(v, p0, z);
        }
        r
    }

    /// An f64 library function over a strided input: `op` is one of
    /// [`super::wide_math_code`], `p0` and `p1` its scalars.
    #[kernel(block = [64, 256])]
    pub fn unary_math_f64(
        x: &[f64],
        out: &mut [f64],
        shape: &[u32],
        xstride: &[i32],
        ndim: u32,
        n: u32,
        xoff: i32,
        op: u32,
        p0: f64,
        p1: f64,
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
            let z = (ndim >> 16u32) as u64;
            out[i] = apply(op, x[xi], p0, p1, z);
        }
    }

    /// `sqrt(a² + b²)` with neither overflow nor harmful underflow: the
    /// larger magnitude past `2^±500` is brought in by `2^∓600` (exact),
    /// so the squares stay normal where they matter (a smaller one that
    /// underflows is below the larger's square's ulp), then the result is
    /// scaled back. The squares' and the sum's roundings (1.5ε relative)
    /// halve under the root, plus its own half ulp: within 1.25 ulp. An
    /// infinite operand gives ∞ even beside a NaN, as C's `hypot`.
    #[helper]
    fn hypot64(a: f64, b: f64) -> f64 {
        let x = a.abs();
        let y = b.abs();
        let mut big = x;
        let mut small = y;
        if y > x {
            big = y;
            small = x;
        }
        let x_nan = nan64(x);
        let y_nan = nan64(y);
        let mut r = 0.0f64;
        if x == f64::INFINITY || y == f64::INFINITY {
            r = f64::INFINITY;
        } else if x_nan || y_nan {
            r = f64::from_bits(0x7ff8_0000_0000_0000u64);
        } else {
            let mut scale = 1.0f64;
            if big > pow2(500.0f64) {
                scale = pow2(600.0f64);
            } else if big < pow2(-500.0f64) {
                scale = pow2(-600.0f64);
            }
            let xs = big / scale;
            let ys = small / scale;
            r = (xs * xs + ys * ys).sqrt() * scale;
        }
        r
    }

    /// `pow` or `hypot` of two strided / broadcast f64 inputs
    /// (`binary_strided_f64`'s parameters): `op` is
    /// [`super::binary_math_code`]'s `POW` (this module's `pow64`, the f32
    /// kernels' special cases, within `ε·(1 + 4·(1 + |b·ln a|))·|want|`)
    /// or `HYPOT` (within 1.25 ulp).
    #[kernel(block = [64, 256])]
    pub fn binary_math_f64(
        a: &[f64],
        b: &[f64],
        out: &mut [f64],
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
            let z = (ndim >> 16u32) as u64;
            let x = a[ai];
            let y = b[bi];
            // One of the two per element (`binary_math_code::POW` is 2).
            let mut r = 0.0f64;
            if op == 2u32 {
                r = pow64(x, y, z);
            } else {
                r = hypot64(x, y);
            }
            out[i] = r;
        }
    }

    /// The running log-sum-exp of an f64 input along `dim`, written
    /// contiguously (`scan_f64`'s parameters without its op): thread `r`
    /// walks row `r` in order, folding each element in by the reference's
    /// step `hi + ln(1 + e^(lo - hi))` with this module's exp and ln1p (a
    /// few ulps a step, within the scan's bound). NaN propagates; two
    /// infinities of one sign give that infinity; the scan starts at -∞.
    #[kernel(block = [64, 256])]
    pub fn logcumsumexp_f64(
        x: &[f64],
        out: &mut [f64],
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
            let z = (ndim >> 16u32) as u64;
            let mut acc = f64::NEG_INFINITY;
            for j in 0..shape[dim] {
                let v = x[xi + j as i32 * xstride[dim]];
                let hi = acc.max(v);
                let lo = acc.min(v);
                let v_nan = nan64(v);
                let acc_nan = nan64(acc);
                if v_nan || acc_nan {
                    acc = f64::from_bits(0x7ff8_0000_0000_0000u64);
                } else if lo == hi && lo.abs() == f64::INFINITY {
                    acc = hi;
                } else {
                    acc = hi + ln1p64(exp64(lo - hi, z), z);
                }
                out[oi + j * ostep] = acc;
            }
        }
    }

    /// The offset of the `j`-th walked element (row-major over the dims
    /// marked in `reduced`) from `base`.
    #[helper]
    fn walked(
        j: u32,
        base: i32,
        shape: &[u32],
        xstride: &[i32],
        reduced: &[u32],
        ndim: u32,
    ) -> i32 {
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
        off
    }

    /// A reduction of a strided f64 input over the dims marked in
    /// `reduced`, a thread per output walking its elements in row-major
    /// order, as the reference computes each: `op` is one of
    /// `moment_code` — the variance `Σ(x - mean)²/max(n - correction, 0)`
    /// in two passes, its square root, the maximum and minimum (a NaN
    /// wins), the product in order — or [`super::MOMENT_LOGSUMEXP`]: `m +
    /// ln Σ e^(x - m)` with `m` the maximum where it is finite (0 where
    /// not, so that all `-∞` gives `-∞` and a `+∞` gives `+∞`).
    #[kernel(block = [64, 256])]
    pub fn moments_f64(
        x: &[f64],
        out: &mut [f64],
        shape: &[u32],
        xstride: &[i32],
        reduced: &[u32],
        ndim: u32,
        n_out: u32,
        n_reduced: u32,
        xoff: i32,
        op: u32,
        correction: f64,
    ) {
        let o = block_idx_x() * block_dim_x() + thread_idx_x();
        if o < n_out {
            let mut rem = o;
            let mut base = xoff;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 0 {
                    let c = rem % shape[d];
                    rem = rem / shape[d];
                    base += c as i32 * xstride[d];
                }
            }
            let z = (ndim >> 16u32) as u64;
            // The first pass: the sum, the product or the best value.
            let mut acc = 0.0f64;
            if op == 4 {
                acc = 1.0f64;
            } else if op == 5 {
                acc = f64::NEG_INFINITY;
            }
            for j in 0..n_reduced {
                let v = x[walked(j, base, shape, xstride, reduced, ndim)];
                if op <= 1 {
                    acc = acc + v;
                } else if op == 4 {
                    acc = acc * v;
                } else if j == 0 {
                    acc = v;
                } else if !nan64(acc) {
                    if op == 3 {
                        if !(acc <= v) {
                            acc = v;
                        }
                    } else if !(acc >= v) {
                        acc = v;
                    }
                }
            }
            let mut r = acc;
            if op <= 1 {
                let mean = acc / n_reduced as f64;
                let mut sq = 0.0f64;
                for j in 0..n_reduced {
                    let dv = x[walked(j, base, shape, xstride, reduced, ndim)] - mean;
                    sq = sq + dv * dv;
                }
                r = sq / (n_reduced as f64 - correction).max(0.0f64);
                if op == 1 {
                    r = r.sqrt();
                }
            } else if op == 5 {
                let mut shift = acc;
                if nan64(acc) || acc.abs() == f64::INFINITY {
                    shift = 0.0f64;
                }
                let mut s = 0.0f64;
                for j in 0..n_reduced {
                    s = s + exp64(x[walked(j, base, shape, xstride, reduced, ndim)] - shift, z);
                }
                r = shift + ln64(s);
            }
            out[o] = r;
        }
    }

    /// Softmax (or log-softmax when `log`) of a strided f64 input along
    /// `dim`, a thread per row, into a contiguous output of the input's
    /// shape (`softmax_strided`'s parameters): the reference's passes —
    /// the maximum `m` (a NaN wins, so the row is NaN), `s = Σ e^(x - m)`
    /// in order, then `e^(x - m)/s` or `(x - m) - ln s` — with this
    /// module's exp and ln: exp's ulp, the sum's roundings and the
    /// quotient's, within the bound. A row of only `-∞` is NaN, as the
    /// reference's.
    #[kernel(block = [64, 256])]
    pub fn softmax_f64(
        x: &[f64],
        out: &mut [f64],
        shape: &[u32],
        xstride: &[i32],
        ndim: u32,
        dim: u32,
        n_rows: u32,
        xoff: i32,
        log: bool,
    ) {
        let row = block_idx_x() * block_dim_x() + thread_idx_x();
        if row < n_rows {
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
            let z = (ndim >> 16u32) as u64;
            let len = shape[dim];
            let mut m = f64::NEG_INFINITY;
            for j in 0..len {
                let v = x[xi + j as i32 * xstride[dim]];
                if j == 0 {
                    m = v;
                } else if !nan64(m) && !(m >= v) {
                    m = v;
                }
            }
            let mut s = 0.0f64;
            for j in 0..len {
                s = s + exp64(x[xi + j as i32 * xstride[dim]] - m, z);
            }
            let ls = ln64(s);
            for j in 0..len {
                let t = x[xi + j as i32 * xstride[dim]] - m;
                let mut r = t - ls;
                if !log {
                    r = exp64(t, z) / s;
                }
                out[oi + j * ostep] = r;
            }
        }
    }
}
