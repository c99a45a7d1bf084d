//! The elementwise unary kernel: one strided walk, many functions.
//!
//! The transcendental functions are computed here rather than by the
//! driver: WGSL promises only `3 + 2|x|` ulp for `exp` and `log`, and the
//! driver CI uses (lavapipe) measured twice the conformance bound near
//! `e^-30`. So `e^a` and `ln a` are written out once each, with their error
//! analyses, and every function built from them — sigmoid, tanh, SiLU, the
//! tanh form of GELU, `ln(1 + x)` and softplus — reuses them: the kernel
//! runs at most one exponential and then at most one logarithm per element,
//! chosen by `op`.

use crate::kernel;

/// The `op` values of [`unary_strided`].
pub mod unary_code {
    /// `-x`
    pub const NEG: u32 = 0;
    /// `e^x`
    pub const EXP: u32 = 1;
    /// `tanh x`
    pub const TANH: u32 = 2;
    /// `max(x, 0)`, NaN kept
    pub const RELU: u32 = 3;
    /// `sqrt x`
    pub const SQRT: u32 = 4;
    /// `|x|`
    pub const ABS: u32 = 5;
    /// `x` (a strided copy)
    pub const COPY: u32 = 6;
    /// `ln x`
    pub const LOG: u32 = 7;
    /// `1 / sqrt x`
    pub const RSQRT: u32 = 8;
    /// `1 / x`
    pub const RECIP: u32 = 9;
    /// `x * x`
    pub const SQUARE: u32 = 10;
    /// `1 / (1 + e^-x)`
    pub const SIGMOID: u32 = 11;
    /// round down
    pub const FLOOR: u32 = 12;
    /// round up
    pub const CEIL: u32 = 13;
    /// -1, 0 or 1 (NaN stays NaN; both zeros give +0)
    pub const SIGN: u32 = 14;
    /// round half to even, keeping the sign of a zero result
    pub const ROUND: u32 = 15;
    /// `ln(1 + x)`, accurate for tiny `x`
    pub const LOG1P: u32 = 16;
    /// `ln(1 + e^x)` as `max(x, 0) + ln(1 + e^-|x|)`
    pub const SOFTPLUS: u32 = 17;
    /// `x · sigmoid(x)` (SiLU, swish)
    pub const SILU: u32 = 18;
    /// GELU's tanh form, as `x · sigmoid(2·√(2/π)·(x + 0.044715 x³))`
    pub const GELU_TANH: u32 = 19;
}

/// Elementwise unary op over a strided (possibly broadcast, stride 0) input:
/// `out[i] = f(x[xoff + sum_d coord_d(i) * xstride[d]])` for the contiguous
/// output index `i` of shape `shape[..ndim]`. `op` is one of
/// [`unary_code`]: 0 neg, 1 exp, 2 tanh, 3 relu, 4 sqrt, 5 abs, 6 copy,
/// 7 log, 8 rsqrt, 9 recip, 10 square, 11 sigmoid, 12 floor, 13 ceil,
/// 14 sign, 15 round (half to even), 16 log1p, 17 softplus, 18 SiLU,
/// 19 GELU (tanh form).
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
        let nan = (v.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32;
        // Sigmoid, SiLU and the tanh GELU are gated by sigmoid(w): w = v, or
        // w = 2·√(2/π)·(v + 0.044715 v³) for GELU (x·sigmoid(2z) is the
        // tanh form 0.5x(1 + tanh z) without its cancellation for z < 0).
        let gated = op == 11 || op == 18 || op == 19;
        let mut w = v;
        if op == 19 {
            w = 1.595_769_1 * v.mul_add(0.044_715 * v * v, v);
        }
        // Stage 1: the exponential e = e^a of the ops built on one, also
        // kept as e_hi · scale before its last scaling by a power of two,
        // so that x · e^a is rounded once even where e^a alone would be
        // subnormal (SiLU at x = -100: e^x holds 5 bits, x · e^x needs 24).
        let mut e = 0.0;
        let mut e_hi = 0.0;
        let mut scale = 1.0;
        if op == 1 || op == 2 || gated || op == 17 {
            // e^a computed here, not by the driver's exp: WGSL promises
            // only 3 + 2|a| ulp, and lavapipe's was twice the conformance
            // bound near e^-30. a = k·ln2 + t with k = round(a / ln2) and t
            // found in two fma steps (ln2 split in a high part whose
            // products with k are exact, and the rest: Cody and Waite);
            // e^t by its Taylor polynomial of degree 7 on |t| <= ln2/2
            // (truncation under 0.1 ulp); 2^k put into exponent bits, in
            // two factors so that a subnormal result is rounded once.
            let mut a = v;
            if gated {
                // e^-|w|, which never overflows.
                a = -w.abs();
            } else if op == 17 {
                // softplus = max(v, 0) + ln(1 + e^-|v|).
                a = -v.abs();
            } else if op == 2 {
                // tanh |v| = 1 - 2 / (e^2|v| + 1), used from |v| = 0.55 on.
                a = 2.0 * v.abs();
            }
            if (a.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32 {
                e = a;
            } else if a > 88.722_84 {
                e = f32::INFINITY;
            } else if a < -104.0 {
                e = 0.0;
            } else {
                let k = (a * 1.442_695 + 0.5).floor();
                let t = k.mul_add(-0.693_145_75, a);
                // A driver allowed to reassociate floats (lavapipe is) may
                // merge the two steps into one product with k and lose
                // the first step's exact cancellation: measured, 45 ulp at
                // e^-80. Passing the first step through its bits, xored
                // with a value the compiler cannot know is 0 (ndim < 2^16),
                // makes it a root the compiler cannot rewrite across.
                let t = f32::from_bits(t.to_bits() ^ (ndim >> 16u32));
                let t = k.mul_add(-1.428_606_8e-6, t);
                let mut p = 1.984_127e-4;
                p = p.mul_add(t, 1.388_888_9e-3);
                p = p.mul_add(t, 8.333_333e-3);
                p = p.mul_add(t, 4.166_666_8e-2);
                p = p.mul_add(t, 0.166_666_67);
                p = p.mul_add(t, 0.5);
                p = p.mul_add(t, 1.0);
                p = p.mul_add(t, 1.0);
                let ki = k as i32;
                let half = ki / 2;
                let s1 = f32::from_bits(((half + 127) as u32) << 23);
                let s2 = f32::from_bits(((ki - half + 127) as u32) << 23);
                e_hi = p * s1;
                scale = s2;
                e = e_hi * s2;
            }
            if scale == 1.0 {
                e_hi = e;
            }
        }
        // Stage 2: the logarithm l = ln(lv) of the ops built on one. For
        // ln(1 + t) (log1p of v, and softplus's of e), u = 1 + t is passed
        // through its bits so a compiler that reassociates floats cannot
        // fold (1 + t) - 1 back into t below.
        let mut t = v;
        if op == 17 {
            t = e;
        }
        let u = f32::from_bits((1.0 + t).to_bits() ^ (ndim >> 16u32));
        let mut l = 0.0;
        if op == 7 || op == 16 || op == 17 {
            let mut lv = v;
            if op != 7 {
                lv = u;
            }
            // ln lv computed here too (WGSL promises only 3 + 2|v| ulp):
            // v = 2^k·m with m in [√2/2, √2), f = m - 1, s = f / (2 + f),
            // ln m = f - f²/2 + s·(f²/2 + R(s²)) with R the minimax
            // polynomial of fdlibm's logf (Sun Microsystems, 1993;
            // within 1 ulp), plus k·ln2 in two parts.
            let bits = lv.to_bits();
            if (bits & 0x7fff_ffffu32) > 0x7f80_0000u32 {
                l = lv;
            } else if (bits & 0x7fff_ffffu32) == 0u32 {
                l = f32::from_bits(0xff80_0000u32);
            } else if (bits >> 31u32) == 1u32 {
                l = f32::from_bits(0x7fc0_0000u32);
            } else if bits == 0x7f80_0000u32 {
                l = lv;
            } else {
                let mut ix = bits;
                let mut k = 0i32;
                if ix < 0x0080_0000u32 {
                    // Subnormal: scaled by 2^25 into the normal range.
                    ix = (lv * 33_554_432.0).to_bits();
                    k = -25;
                }
                // Move m's range to [√2/2, √2): add the distance from √2/2
                // to 1 before reading the exponent, take it back after.
                ix += 0x004a_fb0du32;
                k += (ix >> 23u32) as i32 - 127;
                ix = (ix & 0x007f_ffffu32) + 0x3f35_04f3u32;
                let f = f32::from_bits(ix) - 1.0;
                let s = f / (2.0 + f);
                let z = s * s;
                let w = z * z;
                let t1 = w * w.mul_add(0.242_790_79, 0.400_009_72);
                let t2 = z * w.mul_add(0.284_987_87, 0.666_666_6);
                let hfsq = 0.5 * f * f;
                let dk = k as f32;
                l = s * (hfsq + t2 + t1) + dk * 9.058_001e-6 - hfsq + f + dk * 0.693_138_1;
            }
        }
        // ln(1 + t) = ln(u) · t / (u - 1): the rounding of u = 1 + t is
        // undone by the same factor it put in (Goldberg's identity); t
        // itself where 1 + t rounds to 1.
        let mut ln1p = t;
        if (op == 16 || op == 17) && u != 1.0 {
            ln1p = l * (t / (u - 1.0));
        }
        // Stage 3: the function.
        if op == 0 {
            r = -v;
        } else if op == 1 {
            r = e;
        } else if op == 2 {
            let m = v.abs();
            if nan || m < 0.000_244_140_625 {
                // Below 2^-12, x³/3 is under half an ulp of x: tanh x
                // rounds to x (and -0 stays -0).
                r = v;
            } else if m < 0.55 {
                // The odd Taylor series of tanh to x^17 (its next term
                // is under 5e-9 relative at 0.55), on z = x^2 by
                // Horner, as x + x·z·p.
                let z = v * v;
                let mut p = 5.900_274_4e-4;
                p = z.mul_add(p, -1.455_834_4e-3);
                p = z.mul_add(p, 3.592_128e-3);
                p = z.mul_add(p, -8.863_236e-3);
                p = z.mul_add(p, 2.186_949e-2);
                p = z.mul_add(p, -5.396_825_4e-2);
                p = z.mul_add(p, 0.133_333_33);
                p = z.mul_add(p, -0.333_333_34);
                r = (v * z).mul_add(p, v);
            } else {
                // At least 0.5, so the subtraction loses at most a bit;
                // past |v| = 9.01 it rounds to exactly 1.
                let t = 1.0 - 2.0 / (e + 1.0);
                r = t;
                if v < 0.0 {
                    r = -t;
                }
            }
        } else if gated {
            // sigmoid(w) = 1 / (1 + e^-w), or e^w / (1 + e^w) for negative w,
            // where 1 / (1 + e^-w) would carry e^-w's error twice.
            let mut gate = 1.0 / (1.0 + e);
            if w < 0.0 {
                gate = e / (1.0 + e);
            }
            if op == 11 {
                r = gate;
            } else if v.to_bits() == 0xff80_0000u32 {
                // x·gate tends to -0 as x tends to -inf (where -inf·0 is NaN).
                r = -0.0;
            } else if w < 0.0 {
                // x · e^w / (1 + e^w), scaled into place last; the
                // unscaled quotient passes through its bits so that no
                // reassociation can fold the scale in early.
                let q = (v * e_hi) / (1.0 + e);
                r = f32::from_bits(q.to_bits() ^ (ndim >> 16u32)) * scale;
            } else {
                r = v / (1.0 + e);
            }
        } else if op == 7 {
            r = l;
        } else if op == 16 {
            r = ln1p;
            if nan || v.to_bits() == 0x7f80_0000u32 {
                // NaN stays NaN; ln(1 + inf) = inf (not inf · inf/inf).
                r = v;
            }
        } else if op == 17 {
            r = v;
            if !nan {
                r = v.max(0.0) + ln1p;
            }
        } else if op == 3 {
            // NaN stays NaN and -0 becomes +0. The NaN test reads the bits:
            // a GPU compiler may assume float comparisons never see a NaN.
            if nan {
                r = v;
            } else if v > 0.0 {
                r = v;
            } else {
                r = 0.0;
            }
        } else if op == 4 {
            r = v.sqrt();
        } else if op == 5 {
            r = v.abs();
        } else if op == 8 {
            r = rsqrt(v);
        } else if op == 9 {
            r = 1.0 / v;
        } else if op == 10 {
            r = v * v;
        } else if op == 12 {
            r = v.floor();
        } else if op == 13 {
            r = v.ceil();
        } else if op == 14 {
            if nan {
                r = v;
            } else if v > 0.0 {
                r = 1.0;
            } else if v < 0.0 {
                r = -1.0;
            } else {
                r = 0.0;
            }
        } else if op == 15 {
            // Ties to even by hand: WGSL's round() is half-to-even but
            // Rust's (the simulator's) is half-away-from-zero. Every |v|
            // from 2^23 on is an integer already (its fraction d is 0).
            let f = v.floor();
            let d = v - f;
            r = f;
            if d > 0.5 || (d == 0.5 && f - 2.0 * (f * 0.5).floor() != 0.0) {
                r = f + 1.0;
            }
            if r == 0.0 {
                // -0.3 rounds to -0: the zero keeps the input's sign.
                r = f32::from_bits(v.to_bits() & 0x8000_0000u32);
            }
        }
        out[i] = r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Value;
    use crate::launch::LaunchConfig;
    use crate::sim::{self, Arg, Buffer, SimOptions};

    /// Every `unary_strided` code in the simulator, on a transposed view,
    /// against the same function in f64.
    #[test]
    fn every_unary_code_computes_its_function() {
        let x: Vec<f32> = (0..12).map(|i| 0.3 + i as f32 * 0.41).collect();
        type Function = fn(f64) -> f64;
        let f: [(u32, Function); 20] = [
            (unary_code::NEG, |v| -v),
            (unary_code::EXP, f64::exp),
            (unary_code::TANH, f64::tanh),
            (unary_code::RELU, |v| v.max(0.0)),
            (unary_code::SQRT, f64::sqrt),
            (unary_code::ABS, f64::abs),
            (unary_code::COPY, |v| v),
            (unary_code::LOG, f64::ln),
            (unary_code::RSQRT, |v| 1.0 / v.sqrt()),
            (unary_code::RECIP, |v| 1.0 / v),
            (unary_code::SQUARE, |v| v * v),
            (unary_code::SIGMOID, |v| 1.0 / (1.0 + (-v).exp())),
            (unary_code::FLOOR, f64::floor),
            (unary_code::CEIL, f64::ceil),
            (unary_code::SIGN, f64::signum),
            (unary_code::ROUND, f64::round_ties_even),
            (unary_code::LOG1P, f64::ln_1p),
            (unary_code::SOFTPLUS, |v| {
                v.max(0.0) + (-v.abs()).exp().ln_1p()
            }),
            (unary_code::SILU, |v| v / (1.0 + (-v).exp())),
            (unary_code::GELU_TANH, |v| {
                0.5 * v * (1.0 + (0.797_884_560_802_865_4 * (v + 0.044_715 * v * v * v)).tanh())
            }),
        ];
        for (code, want) in f {
            // out[3, 4] reads x viewed as the transpose of a [4, 3] buffer.
            let mut args = vec![
                Arg::Buffer(Buffer::from_f32(&x)),
                Arg::Buffer(Buffer::from_f32(&[0.0; 12])),
                Arg::Buffer(Buffer::from_u32(&[3, 4])),
                Arg::Buffer(Buffer::from_i32(&[1, 3])),
                Arg::Scalar(Value::U32(2)),
                Arg::Scalar(Value::U32(12)),
                Arg::Scalar(Value::I32(0)),
                Arg::Scalar(Value::U32(code)),
            ];
            let launch = LaunchConfig::linear(1, 64);
            sim::run(unary_strided(), launch, &mut args, &SimOptions::default()).unwrap();
            let got = args[1].buffer().unwrap().to_f32();
            for r in 0..3 {
                for c in 0..4 {
                    let w = want(x[c * 3 + r] as f64);
                    let g = got[r * 4 + c] as f64;
                    assert!(
                        (g - w).abs() <= 4e-7 * w.abs().max(1.0),
                        "code {code}: {g} vs {w}"
                    );
                }
            }
        }
    }

    /// The kernel's own exp, against f64's over [-104, 89] and the
    /// special values, in the simulator: within 2 ulp of the correctly
    /// rounded result for normal results, and at most 1 ulp (of the
    /// smallest subnormal) for subnormal ones.
    #[test]
    fn the_kernels_exp_is_within_two_ulp() {
        let mut x: Vec<f32> = (0..20_001)
            .map(|i| -104.0 + i as f32 * (193.0 / 20_000.0))
            .collect();
        x.extend([
            0.0,
            -0.0,
            1e-30,
            -1e-30,
            88.72,
            -87.3,
            -100.0,
            f32::INFINITY,
        ]);
        x.extend([f32::NEG_INFINITY, f32::NAN, 88.8, -104.5]);
        let n = x.len() as u32;
        let mut args = vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; x.len()])),
            Arg::Buffer(Buffer::from_u32(&[n])),
            Arg::Buffer(Buffer::from_i32(&[1])),
            Arg::Scalar(Value::U32(1)),
            Arg::Scalar(Value::U32(n)),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::U32(unary_code::EXP)),
        ];
        let launch = LaunchConfig::linear(n.div_ceil(256), 256);
        sim::run(unary_strided(), launch, &mut args, &SimOptions::default()).unwrap();
        let got = args[1].buffer().unwrap().to_f32();
        for (&v, &g) in x.iter().zip(&got) {
            let want = (v as f64).exp();
            if v.is_nan() {
                assert!(g.is_nan());
                continue;
            }
            let w = want as f32;
            if w.is_infinite() || w == 0.0 {
                assert!(
                    g == w || (g.to_bits() as i64 - w.to_bits() as i64).abs() <= 1,
                    "{v}: {g} vs {want}"
                );
                continue;
            }
            let ulps = (g.to_bits() as i64 - w.to_bits() as i64).abs();
            let limit = if w.is_normal() { 2 } else { 1 };
            assert!(ulps <= limit, "exp({v}) = {g}, want {want} ({ulps} ulp)");
        }
    }

    /// `unary_strided` with `code` over `x` (contiguous) in the simulator.
    fn unary_in_simulator(code: u32, x: &[f32]) -> Vec<f32> {
        let n = x.len() as u32;
        let mut args = vec![
            Arg::Buffer(Buffer::from_f32(x)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; x.len()])),
            Arg::Buffer(Buffer::from_u32(&[n])),
            Arg::Buffer(Buffer::from_i32(&[1])),
            Arg::Scalar(Value::U32(1)),
            Arg::Scalar(Value::U32(n)),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::U32(code)),
        ];
        let launch = LaunchConfig::linear(n.div_ceil(256), 256);
        sim::run(unary_strided(), launch, &mut args, &SimOptions::default()).unwrap();
        args[1].buffer().unwrap().to_f32()
    }

    /// The distance in f32 steps from `got` to `want` rounded to f32 (both
    /// finite; across zero the steps of both signs are counted).
    fn ulps(got: f32, want: f64) -> i64 {
        let key = |v: f32| {
            let b = v.to_bits() as i64;
            if b >> 31 == 1 { -(b & 0x7fff_ffff) } else { b }
        };
        (key(got) - key(want as f32)).abs()
    }

    /// The kernel's own ln over every binade from the smallest subnormal
    /// to the largest float, densely around 1 (where ln is near 0 and a
    /// careless formula loses its relative accuracy), and the special
    /// values: within 2 ulp of the correctly rounded result.
    #[test]
    fn the_kernels_log_is_within_two_ulp() {
        let mut x: Vec<f32> = (0..20_000)
            .map(|i| 2f32.powf(-149.0 + i as f32 * (277.0 / 20_000.0)))
            .collect();
        x.extend((0..4_000).map(|i| 0.9 + i as f32 * (0.2 / 4_000.0)));
        x.extend([
            1.0,
            f32::MIN_POSITIVE,
            1.0e-45,
            f32::MAX,
            1.0 + f32::EPSILON,
        ]);
        let got = unary_in_simulator(unary_code::LOG, &x);
        for (&v, &g) in x.iter().zip(&got) {
            let want = (v as f64).ln();
            let u = ulps(g, want);
            assert!(u <= 2, "ln({v:e}) = {g:e}, want {want:e} ({u} ulp)");
        }
        let specials = [0.0, -0.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        let got = unary_in_simulator(unary_code::LOG, &specials);
        assert_eq!(got[0], f32::NEG_INFINITY);
        assert_eq!(got[1], f32::NEG_INFINITY);
        assert!(got[2].is_nan() && got[4].is_nan() && got[5].is_nan());
        assert_eq!(got[3], f32::INFINITY);
    }

    /// The kernel's own tanh across both branches (the series below 0.55,
    /// the exp form above) and into saturation, with tiny and special
    /// values: within 2 ulp.
    #[test]
    fn the_kernels_tanh_is_within_two_ulp() {
        let mut x: Vec<f32> = (0..24_001).map(|i| -12.0 + i as f32 * 0.001).collect();
        x.extend([1e-30, -1e-30, 1e-8, 1.0e-45, 0.549_999_9, 0.55, 0.550_000_1]);
        let got = unary_in_simulator(unary_code::TANH, &x);
        for (&v, &g) in x.iter().zip(&got) {
            let want = (v as f64).tanh();
            let u = ulps(g, want);
            assert!(u <= 2, "tanh({v:e}) = {g:e}, want {want:e} ({u} ulp)");
        }
        let specials = [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        let got = unary_in_simulator(unary_code::TANH, &specials);
        assert_eq!(got[0].to_bits(), 0.0f32.to_bits());
        assert_eq!(got[1].to_bits(), (-0.0f32).to_bits());
        assert_eq!((got[2], got[3]), (1.0, -1.0));
        assert!(got[4].is_nan());
    }
}
