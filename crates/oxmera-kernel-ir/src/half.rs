//! The two 16-bit floats, `f16` (IEEE binary16: 1 sign, 5 exponent, 10
//! fraction bits) and `bf16` (bfloat16: 1 sign, 8 exponent, 7 fraction bits
//! — the top half of an `f32`), as the kernel language computes them.
//!
//! Every operation on a half is computed in `f32` and rounded once to the
//! half, to nearest, ties to even. Widening a half to `f32` is exact (both
//! formats' values are `f32` values), so the `f32` operation sees the exact
//! operands. For `+`, `−`, `×`, `÷` and `sqrt` the result is then the
//! correctly rounded half result, as if computed exactly and rounded once:
//! rounding twice — first to a format of `p'` significand bits, then to one
//! of `p` bits — gives the same result as rounding once to `p` bits whenever
//! `p' ≥ 2p + 2` (S. A. Figueroa, "When is double rounding innocuous?",
//! SIGNUM Newsletter 30(3), 1995). `f32` has `p' = 24`; `f16` has `p = 11`
//! (2·11 + 2 = 24) and `bf16` `p = 8` (2·8 + 2 = 18). The exponent ranges
//! cooperate: every `f16` result that is subnormal in `f16` is normal in
//! `f32`, and `bf16`'s subnormals lie where `f32`'s do, with `f32`'s
//! quantum 2^-16 of `bf16`'s, more than the 2·p + 2 bits needed. A
//! product of two halves is even exact in `f32` (11 + 11 ≤ 24 bits).
//!
//! Functions that are not correctly rounded in `f32` (`exp`, `sin`,
//! `tanh`, ...) stay so: a half result is within the `f32` function's error
//! plus half an ulp of the half. `fma` is computed as an `f32` fma and
//! rounded, within one `f32` rounding plus half an ulp of the half.
//!
//! The conversions here are written out rather than taken from a crate so
//! that the rounding is visible and the IR crate needs no dependency.

/// The layout of a binary float narrower than `f64`.
struct Format {
    /// Stored fraction bits (10 for `f16`, 7 for `bf16`).
    frac: i32,
    /// Smallest normal exponent (−14, −126).
    emin: i32,
    /// Largest exponent (15, 127).
    emax: i32,
}

const F16: Format = Format {
    frac: 10,
    emin: -14,
    emax: 15,
};
const BF16: Format = Format {
    frac: 7,
    emin: -126,
    emax: 127,
};

/// Rounds `x` to the 16-bit format `f`, to nearest, ties to even; returns
/// the bit pattern. Overflow gives ±infinity, underflow ±0 or a subnormal,
/// NaN a quiet NaN keeping the top of its payload.
fn round_to(x: f64, f: &Format) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    let exp_ones = ((f.emax - f.emin + 2) as u16) << f.frac;
    if exp_field == 0x7ff {
        if fraction == 0 {
            return sign | exp_ones;
        }
        let payload = (fraction >> (52 - f.frac)) as u16;
        return sign | exp_ones | (1 << (f.frac - 1)) | payload;
    }
    if exp_field == 0 {
        // f64 subnormals (below 2^-1022) are far below half of the
        // smallest subnormal of either format: they round to zero.
        return sign;
    }
    let e = exp_field - 1023;
    if e > f.emax {
        return sign | exp_ones;
    }
    // x = significand · 2^(e − 52) with a 53-bit significand; the result's
    // quantum is 2^(e − frac) for a normal, 2^(emin − frac) below emin.
    let significand = (1u64 << 52) | fraction;
    let quantum = e.max(f.emin) - f.frac;
    let shift = quantum - (e - 52);
    if shift >= 54 {
        // x < 2^(quantum − 1): under half the quantum, rounds to zero.
        return sign;
    }
    let kept = significand >> shift;
    let rest = significand & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let rounded = if rest > half || (rest == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    };
    // `rounded` counts quanta. Below emin it is the subnormal's fraction
    // (2^frac is exactly the smallest normal, whose pattern it also is).
    // Above, it lies in [2^frac, 2^(frac+1)]; rounding up to 2^(frac+1)
    // carries into the exponent field, and from emax into infinity.
    let magnitude = if e < f.emin {
        rounded
    } else {
        (((e - f.emin + 1) as u64) << f.frac) + rounded - (1u64 << f.frac)
    };
    sign | magnitude as u16
}

/// `x` rounded to `f16` (nearest, ties to even), as its bit pattern.
pub fn f16_from_f32(x: f32) -> u16 {
    round_to(x as f64, &F16)
}

/// `x` rounded to `bf16` (nearest, ties to even), as its bit pattern.
pub fn bf16_from_f32(x: f32) -> u16 {
    round_to(x as f64, &BF16)
}

/// The `f16` with bit pattern `h`, exactly, as `f32`.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let magnitude = match exp {
        // A subnormal: frac · 2^-24, exact in f32.
        0 => (frac as f32 * f32::from_bits(0x3380_0000)).to_bits(),
        0x1f => 0x7f80_0000 | (frac << 13),
        _ => ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(sign | magnitude)
}

/// The `bf16` with bit pattern `h`, exactly, as `f32`.
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2^k as f32.
    fn p2(k: i32) -> f32 {
        2f32.powi(k)
    }

    #[test]
    fn every_f16_widens_and_rounds_back_to_itself() {
        for h in 0..=u16::MAX {
            let x = f16_to_f32(h);
            if x.is_nan() {
                assert!(f16_to_f32(f16_from_f32(x)).is_nan());
            } else {
                assert_eq!(f16_from_f32(x), h, "{h:#06x} = {x}");
            }
        }
    }

    #[test]
    fn every_bf16_widens_and_rounds_back_to_itself() {
        for h in 0..=u16::MAX {
            let x = bf16_to_f32(h);
            if x.is_nan() {
                assert!(bf16_to_f32(bf16_from_f32(x)).is_nan());
            } else {
                assert_eq!(bf16_from_f32(x), h, "{h:#06x}");
            }
        }
    }

    #[test]
    fn f16_rounding_by_hand() {
        // Near 1.0 the f16 ulp is 2^-10. 1 + 2^-11 is halfway between 1.0
        // (fraction 0, even) and 1 + 2^-10 (fraction 1, odd): even wins.
        assert_eq!(f16_from_f32(1.0 + p2(-11)), 0x3c00);
        // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9
        // (fraction 2, even): 1 + 2^-9 = 0x3c02.
        assert_eq!(f16_from_f32(1.0 + 3.0 * p2(-11)), 0x3c02);
        // Just above the tie, 1 + 2^-11 + 2^-20 rounds up to 0x3c01.
        assert_eq!(f16_from_f32(1.0 + p2(-11) + p2(-20)), 0x3c01);
        // 65504 is the largest f16 (0x7bff); its ulp is 32. 65504 + 16 =
        // 65520 is the tie between 65504 (odd) and 65536 (even, but not an
        // f16): it rounds to 65536, which overflows to +inf (0x7c00).
        assert_eq!(f16_from_f32(65504.0 + 15.0), 0x7bff);
        assert_eq!(f16_from_f32(65520.0), 0x7c00);
        assert_eq!(f16_from_f32(-65520.0), 0xfc00);
        // The smallest subnormal is 2^-24 (0x0001); half of it ties to
        // 0 (even), a hair more rounds up.
        assert_eq!(f16_from_f32(p2(-24)), 0x0001);
        assert_eq!(f16_from_f32(p2(-25)), 0x0000);
        assert_eq!(f16_from_f32(p2(-25) + p2(-40)), 0x0001);
        // 3·2^-25 ties between 2^-24 (odd) and 2·2^-24 (even): 0x0002.
        assert_eq!(f16_from_f32(3.0 * p2(-25)), 0x0002);
        // The largest subnormal 1023·2^-24 and the smallest normal 2^-14.
        assert_eq!(f16_from_f32(1023.0 * p2(-24)), 0x03ff);
        assert_eq!(f16_from_f32(p2(-14)), 0x0400);
        assert_eq!(f16_to_f32(0x0001), p2(-24));
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert_eq!(f16_from_f32(-0.0), 0x8000);
    }

    #[test]
    fn bf16_rounding_by_hand() {
        // Near 1.0 the bf16 ulp is 2^-7. 1 + 2^-8 ties to 1.0 (even).
        assert_eq!(bf16_from_f32(1.0 + p2(-8)), 0x3f80);
        // 1 + 3·2^-8 ties between 1 + 2^-7 (odd) and 1 + 2^-6 (even):
        // 1 + 2^-6 = 0x3f82.
        assert_eq!(bf16_from_f32(1.0 + 3.0 * p2(-8)), 0x3f82);
        // The largest bf16 is (2 − 2^-7)·2^127 = 0x7f7f; halfway to 2^128
        // rounds to +inf, below it stays.
        assert_eq!(bf16_from_f32(f32::MAX), 0x7f80);
        assert_eq!(bf16_to_f32(0x7f7f), (2.0 - p2(-7)) * p2(127));
        // A bf16 subnormal: 2^-133 is 0x0001.
        assert_eq!(bf16_from_f32(p2(-133)), 0x0001);
        assert_eq!(bf16_from_f32(p2(-134)), 0x0000);
        assert!(bf16_to_f32(bf16_from_f32(f32::NAN)).is_nan());
    }
}
