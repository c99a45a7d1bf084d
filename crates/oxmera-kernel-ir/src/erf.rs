//! The error function of the language's `erf(x)`, as the simulator (and
//! the analysis's constant folding) computes it: in `f64`, rounded once to
//! `f32`.
//!
//! Rust's `f32` has no `erf` on stable, and this crate may depend on no
//! math library of the tensor stack, so it is written out here. Method:
//! the series, convergent for every `x` and with every term positive (so
//! nothing cancels),
//!
//! ```text
//! erf(x) = 2/√π · e^(-x²) · Σₙ (2x²)ⁿ · x / (1·3·5···(2n+1))
//! ```
//!
//! summed in `f64` until a term no longer changes the sum. Beyond |x| = 4
//! the result is ±1 in `f32` (1 − erf(4) ≈ 1.5e-8 is below half the
//! spacing of the `f32`s just under 1, 2^-25 ≈ 3.0e-8), so the series is
//! only summed below it, where it needs at most about 80 terms.
//!
//! Accuracy: the `f64` sum is within a few units of `f64`'s last place;
//! after the rounding to `f32` the result equals the reference backend's
//! `f64` erf (W. J. Cody's rational approximations) rounded to `f32` at
//! every point of `oxmera-kernel`'s `tests/builtins.rs`
//! (`erf_is_the_reference_erf_rounded_to_f32`: every 2^-16 of [-5, 5] and
//! a geometric sweep down to ±1e-30, about 1.06 million points).

/// `2/√π`.
const FRAC_2_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// `|x|` from which `erf(x)` rounds to ±1 in `f32`.
const SATURATES: f64 = 4.0;

/// The error function of an `f32`, computed in `f64` and rounded once.
/// `erf(±0) = ±0`, `erf(±∞) = ±1`, `erf(NaN)` is NaN.
pub fn erf_f32(x: f32) -> f32 {
    let x = f64::from(x);
    if x.is_nan() {
        return x as f32;
    }
    if x.abs() >= SATURATES {
        return 1f32.copysign(x as f32);
    }
    let two_x2 = 2.0 * x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    // Terms grow while 2x² > 2n + 1, then shrink faster than geometrically;
    // stop once one no longer moves the sum.
    loop {
        n += 1.0;
        term *= two_x2 / (2.0 * n + 1.0);
        let next = sum + term;
        if next == sum {
            break;
        }
        sum = next;
    }
    (FRAC_2_SQRT_PI * (-x * x).exp() * sum) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked_values() {
        // erf(0) = 0 with its sign; erf(∞) = 1; an odd function.
        assert_eq!(erf_f32(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(erf_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(erf_f32(f32::INFINITY), 1.0);
        assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
        assert!(erf_f32(f32::NAN).is_nan());
        assert_eq!(erf_f32(-0.5), -erf_f32(0.5));
        // Tables (Abramowitz & Stegun, table 7.1): erf(0.5) = 0.5204998778,
        // erf(1) = 0.8427007929, erf(2) = 0.9953222650.
        assert_eq!(erf_f32(0.5), 0.520_499_9);
        assert_eq!(erf_f32(1.0), 0.842_700_8);
        assert_eq!(erf_f32(2.0), 0.995_322_3);
        // Small x: erf(x) = 2x/√π (1 - x²/3 + ...), to f32 exactly.
        let tiny = 1e-20f32;
        assert_eq!(erf_f32(tiny), (FRAC_2_SQRT_PI * f64::from(tiny)) as f32);
        // 1 - erf(3.9) = 3.5e-8 is more than half an ulp below 1; 4 saturates.
        assert!(erf_f32(3.9) < 1.0);
        assert_eq!(erf_f32(4.0), 1.0);
    }
}
