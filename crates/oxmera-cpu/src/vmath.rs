//! Loop bodies written to vectorize: the `f32` exponential, the fused
//! softmax and layer-norm rows, and blocked `f32` sums carried in `f64`.
//!
//! Each is `#[inline(always)]` and generic over `FMA`, so that `simd`
//! can compile it again inside functions built for AVX2+FMA or AVX-512
//! (where `mul_add` is one instruction), while the portable build uses a
//! separate multiply and add (where `mul_add` would be a slow library
//! call). Nothing here branches per element: branches become blends, and
//! the compiler turns the fixed-width lane arrays into vector registers.

/// Lanes per accumulator array: one AVX-512 register of `f32`, two of
/// `f64` — enough independent sums to hide the adder's latency.
pub(crate) const LANES: usize = 16;

#[inline(always)]
pub(crate) fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

/// `e^x` for `f32`, within about one ulp, with IEEE edge cases: NaN stays
/// NaN, large arguments overflow to `+inf`, `-inf` and very negative
/// arguments give `+0`, and results in the subnormal range are rounded once.
///
/// Method: write `x = n ln2 + r` with integer `n` and `|r| <= ln2 / 2`
/// (Cody–Waite: `ln2` split in a part with few bits, so `n * LN2_HI` is
/// exact, plus a correction), evaluate `e^r` by its degree-7 Taylor
/// polynomial (truncation error below 1e-8 relative), and scale by `2^n`
/// built directly in the exponent bits — in two halves, so that `2^n`
/// itself never leaves the normal range even when the result does.
#[inline(always)]
pub(crate) fn exp_f32<const FMA: bool>(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4; // 355/512: 9 significant bits
    const LN2_LO: f32 = -2.121_944_4e-4; // ln2 - LN2_HI
    // 1.5 * 2^23: adding and subtracting it rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    // Below UNDERFLOW, e^x < 2^-150 rounds to +0 (the smallest subnormal
    // is 2^-149, ln 2^-150 = -103.97); above 89 it is +inf, and clamping
    // keeps `n` small. The lanes below UNDERFLOW compute e^0 and are
    // replaced by 0 at the end: computing them would end in a subnormal
    // or underflowing product, which costs an Intel core a microcode
    // assist of about a hundred cycles per lane — a causal softmax, whose
    // masked half is -inf, ran nine times slower for it. (Comparisons, not
    // `clamp`, so that NaN lands on a bound and the integer steps below
    // stay plain; the NaN is restored at the end.)
    const UNDERFLOW: f32 = -104.0;
    let lo = if x < UNDERFLOW { 0.0 } else { x };
    let xc = if lo < 89.0 { lo } else { 89.0 };
    let shifted = madd::<FMA>(xc, LOG2_E, ROUND);
    let n = shifted - ROUND;
    let r = madd::<FMA>(n, -LN2_LO, madd::<FMA>(n, -LN2_HI, xc));
    let mut p = 1.0 / 5040.0;
    p = madd::<FMA>(p, r, 1.0 / 720.0);
    p = madd::<FMA>(p, r, 1.0 / 120.0);
    p = madd::<FMA>(p, r, 1.0 / 24.0);
    p = madd::<FMA>(p, r, 1.0 / 6.0);
    p = madd::<FMA>(p, r, 0.5);
    p = madd::<FMA>(p, r, 1.0);
    p = madd::<FMA>(p, r, 1.0);
    // `shifted` holds ROUND + n exactly, so its bits are ROUND's plus n.
    let ni = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    let half = ni >> 1;
    let scale_a = f32::from_bits(((half + 127) as u32) << 23);
    let scale_b = f32::from_bits(((ni - half + 127) as u32) << 23);
    let y = p * scale_a * scale_b;
    let y = if x < UNDERFLOW { 0.0 } else { y };
    if x.is_nan() { x } else { y }
}

/// `out[i] = e^x[i]`.
#[inline(always)]
pub(crate) fn exp_slice<const FMA: bool>(x: &[f32], out: &mut [f32]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = exp_f32::<FMA>(v);
    }
}

/// `f32` partial sums kept by [`sum_f32`]: two AVX-512 registers, four
/// AVX2 ones — enough independent additions to hide the adder's latency.
const SUM_LANES: usize = 32;
/// Terms each `f32` partial sum adds before it is carried into `f64`.
pub(crate) const SUM_LEAF: usize = 16;

/// The sum of `x`, blocked: each of [`SUM_LANES`] `f32` partial sums adds
/// [`SUM_LEAF`] terms, then is carried into an `f64` lane sum, and the
/// lanes are added pairwise at the end. A term meets at most
/// `SUM_LEAF - 1` `f32` roundings and then only `f64` ones, so
/// `|error| ≤ (SUM_LEAF - 1)·u·Σ|x|` (u = 2^-24) plus a term of `f64`
/// size, for any length — well inside what the conformance suite allows
/// a blocked sum, and far from a running `f32` sum, whose error grows
/// with the length.
///
/// Why not `f64` all the way (exact to far below one `f32` ulp): widening
/// every element doubles the instructions per byte, and a two-thread sum
/// over 64 MiB then read 0.69–0.75 of the copy bandwidth against
/// 0.91–0.93 for this form (`f32` lanes alone: 0.91–0.93).
#[inline(always)]
pub(crate) fn sum_f32(x: &[f32]) -> f64 {
    let mut acc = [0f64; SUM_LANES];
    let blocks = x.chunks_exact(SUM_LANES * SUM_LEAF);
    let tail = blocks.remainder();
    for block in blocks {
        let mut leaf = [0f32; SUM_LANES];
        for row in block.chunks_exact(SUM_LANES) {
            for j in 0..SUM_LANES {
                leaf[j] += row[j];
            }
        }
        for j in 0..SUM_LANES {
            acc[j] += leaf[j] as f64;
        }
    }
    for (j, &v) in tail.iter().enumerate() {
        acc[j % SUM_LANES] += v as f64;
    }
    pairwise(acc)
}

/// Adds the lanes as a balanced tree (`N` a power of two).
#[inline(always)]
pub(crate) fn pairwise<const N: usize>(mut acc: [f64; N]) -> f64 {
    let mut width = N;
    while width > 1 {
        width /= 2;
        for j in 0..width {
            acc[j] += acc[j + width];
        }
    }
    acc[0]
}

/// The maximum of a non-empty `x` with the reference's rules: NaN wins,
/// and among equal values the first one (which matters only for the sign
/// of a zero, so a zero maximum is re-scanned in order).
#[inline(always)]
pub(crate) fn max_f32(x: &[f32]) -> f32 {
    let mut m = [f32::NEG_INFINITY; LANES];
    let mut nan = [0u32; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..LANES {
            let v = c[j];
            m[j] = if v > m[j] { v } else { m[j] };
            nan[j] |= v.is_nan() as u32;
        }
    }
    for (j, &v) in tail.iter().enumerate() {
        m[j] = if v > m[j] { v } else { m[j] };
        nan[j] |= v.is_nan() as u32;
    }
    if nan.iter().any(|&b| b != 0) {
        return f32::NAN;
    }
    let best = m
        .iter()
        .fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a });
    if best == 0.0 {
        return x
            .iter()
            .copied()
            .fold(x[0], |a, b| if a >= b { a } else { b });
    }
    best
}

/// The softmax (or log-softmax when `log`) of one row: one pass for the
/// maximum, one writing `e^(x - max)` while summing it in `f64`, one
/// scaling. A row is short enough (a few KiB) to stay in L1 between
/// passes, so the cost is the exponentials, not memory.
#[inline(always)]
pub(crate) fn softmax_row<const FMA: bool>(x: &[f32], out: &mut [f32], log: bool) {
    if x.is_empty() {
        return;
    }
    let m = max_f32(x);
    let mut acc = [0f64; LANES];
    let (xc, oc) = (x.chunks_exact(LANES), out.chunks_exact_mut(LANES));
    let (xt, split) = (xc.remainder(), x.len() - x.len() % LANES);
    for (c, o) in xc.zip(oc) {
        for j in 0..LANES {
            let e = exp_f32::<FMA>(c[j] - m);
            o[j] = e;
            acc[j] += e as f64;
        }
    }
    for (j, (&v, o)) in xt.iter().zip(&mut out[split..]).enumerate() {
        let e = exp_f32::<FMA>(v - m);
        *o = e;
        acc[j] += e as f64;
    }
    let sum = pairwise(acc);
    if log {
        // (x - m) - ln(sum), in f64: x - m is exact there, and ln(sum) is
        // accurate near 0, where the largest entries' log-probabilities sit.
        let (m, ln_sum) = (m as f64, sum.ln());
        for (o, &v) in out.iter_mut().zip(x) {
            *o = ((v as f64 - m) - ln_sum) as f32;
        }
    } else {
        let inv = (1.0 / sum) as f32;
        for o in out.iter_mut() {
            *o *= inv;
        }
    }
}

/// Layer normalization of one row: the mean (a blocked sum), the variance
/// as the mean of squared deviations from it (accumulated in `f64` lanes,
/// so the two passes lose nothing to cancellation that `f64` would not),
/// then `(x - mean) · rstd` in `f32`. Three passes over a row that stays
/// in cache between them.
#[inline(always)]
pub(crate) fn layer_norm_row(x: &[f32], out: &mut [f32], eps: f64) {
    if x.is_empty() {
        return;
    }
    let (mean, rstd) = mean_rstd(x, eps);
    let m = mean as f32;
    for (o, &v) in out.iter_mut().zip(x) {
        *o = (v - m) * rstd;
    }
}

/// A non-empty row's mean (in `f64`) and `1/√(var + eps)` (rounded to
/// `f32`), the variance the mean of squared deviations — the statistics
/// the forward row uses and its backward recomputes, bit for bit.
#[inline(always)]
pub(crate) fn mean_rstd(x: &[f32], eps: f64) -> (f64, f32) {
    let n = x.len() as f64;
    let mean = sum_f32(x) / n;
    let mut acc = [0f64; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for j in 0..LANES {
            let d = c[j] as f64 - mean;
            acc[j] += d * d;
        }
    }
    for (j, &v) in tail.iter().enumerate() {
        let d = v as f64 - mean;
        acc[j] += d * d;
    }
    let var = pairwise(acc) / n;
    (mean, (1.0 / (var + eps).sqrt()) as f32)
}

/// The coefficients of Abramowitz and Stegun's 7.1.26: for `a >= 0`,
/// `erfc(a) = t·(a1 + t·(a2 + t·(a3 + t·(a4 + t·a5))))·e^(-a²) + ε(a)`
/// with `t = 1 / (1 + p·a)` and `|ε(a)| <= 1.5e-7` (Handbook of
/// Mathematical Functions, 1964, p. 299).
pub(crate) const AS_P: f64 = 0.327_591_1;
pub(crate) const AS_A: [f64; 5] = [
    0.254_829_592,
    -0.284_496_736,
    1.421_413_741,
    -1.453_152_027,
    1.061_405_429,
];

/// Exact GELU of an `f32` run, `x·Φ(x)` with `2Φ(x) = erfc(-x/√2)`: the
/// formulas, accuracy and special cases of `elementwise`'s
/// `gelu_erf_f32`, written without branches (selects instead), so that
/// the `f64` polynomial and division run in vector lanes.
#[inline(always)]
pub(crate) fn gelu_run<const FMA: bool>(x: &[f32], out: &mut [f32]) {
    use std::f32::consts::FRAC_1_SQRT_2;
    // Below 2^-10 the next term of Φ's series, x³/(6√(2π)), is under
    // 1e-10 of the result.
    const TINY: f64 = 1.0 / 1024.0;
    const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
    for (o, &v) in out.iter_mut().zip(x) {
        let s = v.abs() * FRAC_1_SQRT_2;
        let gauss = exp_f32::<FMA>(-(s * s));
        let a = f64::from(s);
        let t = 1.0 / (1.0 + AS_P * a);
        let poly = t * (AS_A[0] + t * (AS_A[1] + t * (AS_A[2] + t * (AS_A[3] + t * AS_A[4]))));
        let erfc = poly * f64::from(gauss);
        let two_phi = if v < 0.0 { erfc } else { 2.0 - erfc };
        let x = f64::from(v);
        // Near 0 the fit's 1e-9 at a = 0 would decide roundings of
        // halfway subnormals: x·Φ(x) = x·(1/2 + x/√(2π)) there, to far
        // below an f32 ulp, rounded once as the reference does.
        let near_zero = x * (0.5 + x * FRAC_1_SQRT_2PI);
        let y = if x.abs() < TINY {
            near_zero
        } else {
            0.5 * x * two_phi
        };
        // -inf · 0 is NaN; GELU's limit there is -0, as the reference's.
        *o = if v == f32::NEG_INFINITY {
            -0.0
        } else {
            y as f32
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance in ulps between `got` and the correctly rounded `want`.
    fn ulps(got: f32, want: f64) -> f64 {
        let w = want as f32;
        if got == w {
            return 0.0;
        }
        let ulp = (f32::from_bits(w.abs().to_bits() + 1) - w.abs()) as f64;
        (got as f64 - want).abs() / ulp
    }

    fn check_exp<const FMA: bool>() {
        let mut worst = 0.0f64;
        // A dense sweep over the whole finite range of interest, plus the
        // neighbourhoods of the overflow and subnormal thresholds.
        let mut x = -110.0f32;
        while x < 89.0 {
            let got = exp_f32::<FMA>(x);
            let want = (x as f64).exp();
            if want >= f32::MAX as f64 * (1.0 + 1e-7) {
                assert_eq!(got, f32::INFINITY, "e^{x}");
            } else if want >= f32::MIN_POSITIVE as f64 {
                // Normal results (up to the rounding boundary of the
                // largest finite value): relative error in ulps.
                worst = worst.max(ulps(got, want));
            } else {
                // Subnormal results: the final scaling rounds once to the
                // subnormal grid, so within one subnormal step (2^-149).
                assert!(
                    (got as f64 - want).abs() <= 1.5e-45,
                    "e^{x} = {got}, want {want}"
                );
            }
            x += 0.000_731;
        }
        assert!(worst <= 2.0, "worst error {worst} ulps");
        assert_eq!(exp_f32::<FMA>(0.0), 1.0);
        assert_eq!(exp_f32::<FMA>(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32::<FMA>(-1000.0), 0.0);
        // Below ln 2^-150 every result rounds to +0 (returned without the
        // arithmetic); just above it, to the smallest subnormal.
        assert_eq!(exp_f32::<FMA>(-104.0 - f32::EPSILON * 128.0), 0.0);
        assert_eq!(exp_f32::<FMA>(-103.9), f32::from_bits(1));
        assert_eq!(exp_f32::<FMA>(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32::<FMA>(100.0), f32::INFINITY);
        assert!(exp_f32::<FMA>(f32::NAN).is_nan());
    }

    #[test]
    fn exp_is_within_two_ulps_without_fma() {
        check_exp::<false>();
    }

    #[test]
    fn exp_is_within_two_ulps_with_fma() {
        check_exp::<true>();
    }

    #[test]
    fn sum_and_max_by_hand() {
        let v: Vec<f32> = (1..=37).map(|i| i as f32).collect();
        assert_eq!(sum_f32(&v), 703.0);
        assert_eq!(max_f32(&v), 37.0);
        assert_eq!(sum_f32(&[]), 0.0);
        let mut w = v.clone();
        w[20] = f32::NAN;
        assert!(max_f32(&w).is_nan());
        // Equal zeros: the first one wins, as in the reference.
        assert!(max_f32(&[-0.0, 0.0, -1.0]).is_sign_negative());
        assert!(max_f32(&[0.0, -0.0, -1.0]).is_sign_positive());
        assert_eq!(max_f32(&[f32::NEG_INFINITY; 3]), f32::NEG_INFINITY);
    }

    #[test]
    fn sum_of_many_small_values_keeps_them() {
        // 1 + 2^20 copies of 2^-24 = 1 + 2^-4: an f32 running sum stays at
        // 1 (each 2^-24 is half an ulp of 1 and rounds away). Here only
        // the terms that share the 1's f32 leaf can be absorbed — at most
        // SUM_LEAF - 1 of them, and they are — while every other leaf
        // sums its 2^-24s exactly and carries them into f64.
        let mut v = vec![2f32.powi(-24); 1 << 20];
        v.insert(0, 1.0);
        let absorbed = (SUM_LEAF - 1) as f64 * 2f64.powi(-24);
        assert_eq!(sum_f32(&v), 1.0 + 2f64.powi(-4) - absorbed);
    }

    #[test]
    fn sum_stays_within_its_blocked_bound() {
        // Values with no exact f32 sum, lengths around every block edge:
        // |error| ≤ (SUM_LEAF - 1)·u·Σ|x| (plus an f64-sized term).
        let u = 2f64.powi(-24);
        for len in [1usize, 31, 32, 511, 512, 513, 5000, 100_003] {
            let x: Vec<f32> = (0..len)
                .map(|i| ((i * 7919) % 997) as f32 * 0.031 - 15.0)
                .collect();
            let exact: f64 = x.iter().map(|&v| v as f64).sum();
            let magnitude: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
            let bound = (SUM_LEAF - 1) as f64 * u * magnitude + 1e-12 * magnitude;
            let err = (sum_f32(&x) - exact).abs();
            assert!(err <= bound, "len {len}: error {err:e} > bound {bound:e}");
        }
    }

    #[test]
    fn softmax_row_sums_to_one_and_log_matches() {
        let x: Vec<f32> = (0..50).map(|i| (i as f32 * 0.37).sin() * 5.0).collect();
        let mut p = vec![0.0; 50];
        let mut lp = vec![0.0; 50];
        softmax_row::<false>(&x, &mut p, false);
        softmax_row::<false>(&x, &mut lp, true);
        let total: f64 = p.iter().map(|&v| v as f64).sum();
        assert!((total - 1.0).abs() < 1e-6, "{total}");
        for (a, b) in p.iter().zip(&lp) {
            assert!((a.ln() - b).abs() < 1e-5);
        }
        let mut nan = vec![0.0; 3];
        softmax_row::<false>(&[1.0, f32::NAN, 2.0], &mut nan, false);
        assert!(nan.iter().all(|v| v.is_nan()));
    }
}
