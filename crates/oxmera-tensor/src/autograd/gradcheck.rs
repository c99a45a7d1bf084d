//! Checking analytic gradients against finite differences.
//!
//! For a function `f` of some `f64` tensors, [`gradcheck`] projects the
//! output onto fixed pseudo-random weights `w` (so one scalar
//! `L = Σ w·f(x)` exercises every output element), takes the analytic
//! gradient of `L` by [`Tensor::backward_with`], and compares each entry
//! with the central difference `(L(x + h) - L(x - h)) / 2h`.
//!
//! The tolerance is derived, not tuned. A central difference with step `h`
//! errs by two terms: truncation, `h²/6 · L'''`, and rounding, about
//! `u · S / h` where `u = 2⁻⁵³` and `S = Σ |w·f(x)|` bounds the magnitude
//! the roundings of `L` scale with. The truncation term is *measured*:
//! the difference between the estimates at `h` and at `2h` is `3/6 · h² ·
//! L'''` to leading order, so a third of it estimates the truncation error
//! at `h` (Richardson's argument). The allowed error of an entry is
//!
//! ```text
//! tol = 4 · (|D(2h) - D(h)| / 3  +  R · u · S / h)
//! ```
//!
//! with `R` = [`ROUNDINGS`] roundings allowed along the op chain, and a
//! safety factor of 4 on the sum. Inputs must stay away from the kinks of
//! non-smooth ops (relu at 0, ties of max) by more than `2h`, where no
//! finite difference can agree with any one-sided choice.

use oxmera_core::{DType, Error, Result};

use crate::{Generator, Tensor};

/// Roundings of `u` each that the loss may accumulate along the op chain
/// of a checked function (a generous bound for the small graphs checked).
pub const ROUNDINGS: f64 = 64.0;

/// The default finite-difference step: about `u^(1/3)`, which balances
/// truncation (`h²`) against rounding (`u / h`) for `f64`.
pub const DEFAULT_STEP: f64 = 6e-6;

/// The worst entry of a gradient check.
#[derive(Debug, Clone, PartialEq)]
pub struct GradcheckEntry {
    /// Which input.
    pub input: usize,
    /// Which element of it, in logical row-major order.
    pub element: usize,
    /// The gradient `backward` computed.
    pub analytic: f64,
    /// The central-difference estimate.
    pub numeric: f64,
    /// The allowed error for this entry.
    pub tolerance: f64,
}

impl GradcheckEntry {
    /// `|analytic - numeric| / tolerance`: at most 1 passes.
    pub fn ratio(&self) -> f64 {
        let err = (self.analytic - self.numeric).abs();
        if err == 0.0 {
            0.0
        } else {
            err / self.tolerance
        }
    }
}

/// The outcome of [`gradcheck`].
#[derive(Debug, Clone, PartialEq)]
pub struct GradcheckReport {
    /// Entries checked.
    pub checked: usize,
    /// The entry with the largest error relative to its tolerance.
    pub worst: Option<GradcheckEntry>,
}

impl GradcheckReport {
    /// Whether every entry was within its tolerance.
    pub fn passed(&self) -> bool {
        self.worst.as_ref().is_none_or(|w| w.ratio() <= 1.0)
    }
}

impl std::fmt::Display for GradcheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.worst {
            None => write!(f, "gradcheck: nothing to check"),
            Some(w) => write!(
                f,
                "gradcheck: {} entries, worst input {} element {}: analytic {:e}, numeric {:e}, \
                 error {:e} vs tolerance {:e} ({})",
                self.checked,
                w.input,
                w.element,
                w.analytic,
                w.numeric,
                (w.analytic - w.numeric).abs(),
                w.tolerance,
                if self.passed() { "pass" } else { "FAIL" }
            ),
        }
    }
}

/// Checks the gradients of `f` at `inputs` (each `f64`, any layout that
/// does not alias itself) against central differences with step `step`.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::Device;
/// use oxmera_tensor::{Tensor, autograd::{gradcheck, DEFAULT_STEP}};
/// let x = Tensor::from_vec(vec![0.3f64, -1.2, 2.0], [3], Device::Reference)?;
/// let report = gradcheck(|xs| xs[0].tanh()?.mul(&xs[0]), &[x], DEFAULT_STEP)?;
/// assert!(report.passed(), "{report}");
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn gradcheck(
    f: impl Fn(&[Tensor]) -> Result<Tensor>,
    inputs: &[Tensor],
    step: f64,
) -> Result<GradcheckReport> {
    for x in inputs {
        if x.dtype() != DType::F64 {
            return Err(Error::DTypeMismatch {
                op: "gradcheck",
                lhs: DType::F64,
                rhs: x.dtype(),
            });
        }
    }
    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|x| x.with_requires_grad(true))
        .collect::<Result<_>>()?;
    let y = f(&leaves)?;
    let mut rng = Generator::new(0x6772_6164);
    // Weights in [0.5, 1.5) with random signs keep every output in play
    // without cancelling by symmetry.
    let magnitude = rng.uniform(y.shape().clone(), 0.5, 1.5, DType::F64, y.device())?;
    let sign = rng
        .rand(y.shape().clone(), DType::F64, y.device())?
        .lt_scalar(0.5)?
        .to_dtype(DType::F64)?
        .mul_scalar(2.0)?
        .sub_scalar(1.0)?;
    let w = magnitude.mul(&sign)?;
    let w_host = w.to_f64_vec()?;
    if y.requires_grad() {
        y.backward_with(&w.to_dtype(y.dtype())?)?;
    }
    let loss = |xs: &[Tensor]| -> Result<(f64, f64)> {
        let out = crate::no_grad(|| f(xs))?.to_f64_vec()?;
        let terms = out.iter().zip(&w_host).map(|(a, b)| a * b);
        Ok(terms.fold((0.0, 0.0), |(s, m), t| (s + t, m + t.abs())))
    };

    let mut report = GradcheckReport {
        checked: 0,
        worst: None,
    };
    for (i, leaf) in leaves.iter().enumerate() {
        let analytic = match leaf.grad() {
            Some(g) => g.to_f64_vec()?,
            None => vec![0.0; leaf.numel()],
        };
        let offsets: Vec<usize> = leaf.layout().offsets().collect();
        for (j, &offset) in offsets.iter().enumerate() {
            let at = |delta: f64| -> Result<(f64, f64)> {
                let mut xs = inputs.to_vec();
                xs[i] = perturbed(&inputs[i], offset, delta)?;
                loss(&xs)
            };
            let (lp1, s1) = at(step)?;
            let (lm1, s2) = at(-step)?;
            let (lp2, _) = at(2.0 * step)?;
            let (lm2, _) = at(-2.0 * step)?;
            let d1 = (lp1 - lm1) / (2.0 * step);
            let d2 = (lp2 - lm2) / (4.0 * step);
            let scale = s1.max(s2);
            let tolerance = 4.0
                * ((d2 - d1).abs() / 3.0 + ROUNDINGS * f64::EPSILON / 2.0 * scale / step)
                    .max(f64::MIN_POSITIVE);
            let entry = GradcheckEntry {
                input: i,
                element: j,
                analytic: analytic[j],
                numeric: d1,
                tolerance,
            };
            report.checked += 1;
            let worse = match &report.worst {
                None => true,
                Some(w) => entry.ratio() > w.ratio() || entry.ratio().is_nan(),
            };
            if worse {
                report.worst = Some(entry);
            }
        }
    }
    Ok(report)
}

/// `x` with the storage element at `offset` moved by `delta`, in the same
/// layout (so a non-contiguous input stays non-contiguous).
fn perturbed(x: &Tensor, offset: usize, delta: f64) -> Result<Tensor> {
    let n = x.storage().len();
    let flat = Tensor::from_parts(x.storage().clone(), oxmera_core::Layout::contiguous([n]));
    let mut values = flat.to_vec::<f64>()?;
    values[offset] += delta;
    let moved = Tensor::from_vec(values, [n], x.device())?;
    Ok(Tensor::from_parts(
        moved.storage().clone(),
        x.layout().clone(),
    ))
}
