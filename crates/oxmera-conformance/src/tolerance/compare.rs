//! Comparing a result with the reference's under a tolerance: the
//! per-element ratio of error to bound, the worst element, and the exact
//! comparison of integer and bool outputs.

use oxmera_core::DType;
use oxmera_tensor::HostBuffer;

use super::{BackwardTolerance, Tolerance, eps, tiny};

/// The worst element of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Worst {
    /// Its row-major position in the output.
    pub index: usize,
    /// The device's value.
    pub got: f64,
    /// The reference's value.
    pub want: f64,
    /// `|got - want|` (infinite for a mismatch of kind).
    pub error: f64,
    /// The bound it was held to.
    pub allowed: f64,
    /// Why it fails, when the failure is not a size (NaN, infinity, sign).
    pub reason: Option<&'static str>,
}

/// The result of comparing one output.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The largest error ratio (0 when everything matched exactly).
    pub ratio: f64,
    /// The element with that ratio, when there was one.
    pub worst: Option<Worst>,
}

impl Comparison {
    /// Whether every element met its bound.
    pub fn passed(&self) -> bool {
        self.ratio <= 1.0
    }
}

/// The ratio of an error to its bound (0/0 is 0, x/0 is infinite).
fn ratio(error: f64, allowed: f64) -> f64 {
    if error == 0.0 {
        0.0
    } else if allowed == 0.0 {
        f64::INFINITY
    } else {
        error / allowed
    }
}

/// How one float element compares, as `(ratio, reason)`, given its bound.
fn element(got: f64, want: f64, allowed: f64, zero_sign: bool) -> (f64, Option<&'static str>) {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() {
            (0.0, None)
        } else if want.is_nan() {
            (f64::INFINITY, Some("want NaN"))
        } else {
            (f64::INFINITY, Some("got NaN"))
        };
    }
    if want.is_infinite() || got.is_infinite() {
        return if got == want {
            (0.0, None)
        } else {
            (f64::INFINITY, Some("infinity mismatch"))
        };
    }
    if zero_sign && got == 0.0 && want == 0.0 && got.is_sign_negative() != want.is_sign_negative() {
        return (f64::INFINITY, Some("sign of zero"));
    }
    (ratio((got - want).abs(), allowed), None)
}

/// Keeps the worse of the current worst and a new element.
fn consider(worst: &mut Option<Worst>, max: &mut f64, r: f64, w: Worst) {
    // A ratio that is not a number would compare false against every
    // other and hide the elements after it: it fails outright.
    let r = if r.is_nan() { f64::INFINITY } else { r };
    if worst.is_none() || r > *max {
        *max = r;
        *worst = Some(w);
    }
}

/// Compares float outputs element by element under `tol` (see the
/// module docs), given the reference's scale as `ε_acc·S` per element
/// (`super::scale`, which multiplies the epsilon in before `S` can
/// overflow).
pub(crate) fn compare_forward(
    got: &[f64],
    want: &[f64],
    dtype: DType,
    tol: &Tolerance,
    s: &[f64],
) -> Comparison {
    let (eo, t) = (eps(dtype), tiny(dtype));
    let mut max = 0.0;
    let mut worst = None;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let allowed = tol.out * eo * w.abs().max(t) + tol.acc * s.get(i).copied().unwrap_or(0.0);
        let (r, reason) = element(g, w, allowed, tol.zero_sign);
        consider(
            &mut worst,
            &mut max,
            r,
            Worst {
                index: i,
                got: g,
                want: w,
                error: (g - w).abs(),
                allowed,
                reason,
            },
        );
    }
    Comparison { ratio: max, worst }
}

/// Compares a gradient under the normwise bound of [`backward`], with
/// `g_norm` the largest finite magnitude of the upstream gradient.
pub(crate) fn compare_backward(
    got: &[f64],
    want: &[f64],
    tol: &BackwardTolerance,
    g_norm: f64,
) -> Comparison {
    let want_norm = want
        .iter()
        .filter(|w| w.is_finite())
        .fold(0.0f64, |m, w| m.max(w.abs()));
    let m = want_norm.max(g_norm);
    let mut max = 0.0;
    let mut worst = None;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let allowed = tol.relative * w.abs() + tol.normwise * m;
        let (r, reason) = element(g, w, allowed, false);
        consider(
            &mut worst,
            &mut max,
            r,
            Worst {
                index: i,
                got: g,
                want: w,
                error: (g - w).abs(),
                allowed,
                reason,
            },
        );
    }
    Comparison { ratio: max, worst }
}

/// Compares integer or bool outputs exactly.
pub(crate) fn compare_exact(got: &HostBuffer, want: &HostBuffer) -> Comparison {
    let mut max = 0.0;
    let mut worst = None;
    for i in 0..want.len().min(got.len()) {
        let (g, w) = (got.get_i64(i), want.get_i64(i));
        let r = if g == w { 0.0 } else { f64::INFINITY };
        consider(
            &mut worst,
            &mut max,
            r,
            Worst {
                index: i,
                got: g as f64,
                want: w as f64,
                error: (g as f64 - w as f64).abs(),
                allowed: 0.0,
                reason: None,
            },
        );
    }
    Comparison { ratio: max, worst }
}
