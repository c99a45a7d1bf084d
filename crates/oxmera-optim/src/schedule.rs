//! Learning-rate schedules: pure functions of the step number.
//!
//! A schedule holds no state, so resuming a run needs nothing beyond the
//! optimizer's step count: [`apply_schedule`] before each step sets the
//! rate for `optimizer.steps_taken()`, which a loaded state dict restores.

use std::f64::consts::PI;

use oxmera_core::{Error, Result};

use crate::Optimizer;
use crate::common::non_negative;

/// A learning rate for every step.
///
/// `lr_at(0)` is the rate of the first optimizer step, `lr_at(k)` the rate
/// of the step taken after `k` completed ones.
pub trait LrSchedule: Send + Sync {
    /// The learning rate at `step`.
    fn lr_at(&self, step: u64) -> f64;
}

/// A boxed schedule is a schedule, so one chosen at run time (a
/// `Box<dyn LrSchedule>`) can be wrapped in [`LinearWarmup`].
impl<S: LrSchedule + ?Sized> LrSchedule for Box<S> {
    fn lr_at(&self, step: u64) -> f64 {
        (**self).lr_at(step)
    }
}

/// Sets `optimizer`'s learning rate to `schedule`'s value at the
/// optimizer's current step count, and returns it. Call it before each
/// `step`.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::Param;
/// use oxmera_optim::{Optimizer, Sgd, SgdConfig, StepLr, apply_schedule};
/// use oxmera_tensor::Tensor;
/// let w = Param::new(Tensor::zeros([1], DType::F32, Device::Reference)?)?;
/// let mut opt = Sgd::new(vec![("w".into(), w)], SgdConfig::default())?;
/// let schedule = StepLr::new(0.1, 2, 0.5)?; // 0.1, 0.1, 0.05, 0.05, 0.025, ...
/// assert_eq!(apply_schedule(&schedule, &mut opt), 0.1);
/// for _ in 0..2 {
///     opt.step()?; // no gradient yet: counted, nothing updated
/// }
/// assert_eq!(apply_schedule(&schedule, &mut opt), 0.05);
/// assert_eq!(opt.lr(), 0.05);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn apply_schedule<S, O>(schedule: &S, optimizer: &mut O) -> f64
where
    S: LrSchedule + ?Sized,
    O: Optimizer + ?Sized,
{
    let lr = schedule.lr_at(optimizer.steps_taken());
    optimizer.set_lr(lr);
    lr
}

/// The same rate at every step.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstantLr {
    lr: f64,
}

impl ConstantLr {
    /// `lr` at every step. Errors: `lr` negative or non-finite
    /// ([`Error::InvalidArgument`]).
    pub fn new(lr: f64) -> Result<ConstantLr> {
        non_negative("ConstantLr::new", "lr", lr)?;
        Ok(ConstantLr { lr })
    }
}

impl LrSchedule for ConstantLr {
    fn lr_at(&self, _step: u64) -> f64 {
        self.lr
    }
}

/// Decays the rate by `gamma` every `step_size` steps:
/// `base · gamma^⌊step / step_size⌋` (PyTorch's `StepLR`).
#[derive(Clone, Debug, PartialEq)]
pub struct StepLr {
    base: f64,
    step_size: u64,
    gamma: f64,
}

impl StepLr {
    /// The schedule starting at `base`.
    ///
    /// Errors ([`Error::InvalidArgument`], `op` `"StepLr::new"`): `base` or
    /// `gamma` negative or non-finite; `step_size == 0`.
    pub fn new(base: f64, step_size: u64, gamma: f64) -> Result<StepLr> {
        const OP: &str = "StepLr::new";
        non_negative(OP, "base", base)?;
        non_negative(OP, "gamma", gamma)?;
        if step_size == 0 {
            return Err(Error::invalid(OP, "step_size", "must be at least 1, got 0"));
        }
        Ok(StepLr {
            base,
            step_size,
            gamma,
        })
    }
}

impl LrSchedule for StepLr {
    fn lr_at(&self, step: u64) -> f64 {
        let decays = step / self.step_size;
        // powi takes an i32; past i32::MAX decays any gamma < 1 has long
        // reached zero, so powf (exact for the small integers that matter
        // too) covers the rest.
        let factor = match i32::try_from(decays) {
            Ok(n) => self.gamma.powi(n),
            Err(_) => self.gamma.powf(decays as f64),
        };
        self.base * factor
    }
}

/// Half a cosine from `base` down to `eta_min` over `t_max` steps:
/// `eta_min + (base - eta_min) · (1 + cos(π · step / t_max)) / 2`.
///
/// After `t_max` the rate stays at `eta_min`. (PyTorch's
/// `CosineAnnealingLR` keeps following the cosine back up instead; a run
/// that outlasts its schedule is more likely a mistake than a wish for
/// warm restarts, so oxmera holds the floor.)
#[derive(Clone, Debug, PartialEq)]
pub struct CosineAnnealing {
    base: f64,
    t_max: u64,
    eta_min: f64,
}

impl CosineAnnealing {
    /// The schedule from `base` to `eta_min` over `t_max` steps.
    ///
    /// Errors ([`Error::InvalidArgument`], `op` `"CosineAnnealing::new"`):
    /// `base` or `eta_min` negative or non-finite; `t_max == 0`.
    pub fn new(base: f64, t_max: u64, eta_min: f64) -> Result<CosineAnnealing> {
        const OP: &str = "CosineAnnealing::new";
        non_negative(OP, "base", base)?;
        non_negative(OP, "eta_min", eta_min)?;
        if t_max == 0 {
            return Err(Error::invalid(OP, "t_max", "must be at least 1, got 0"));
        }
        Ok(CosineAnnealing {
            base,
            t_max,
            eta_min,
        })
    }
}

impl LrSchedule for CosineAnnealing {
    fn lr_at(&self, step: u64) -> f64 {
        if step >= self.t_max {
            return self.eta_min;
        }
        let progress = step as f64 / self.t_max as f64;
        self.eta_min + (self.base - self.eta_min) * (1.0 + (PI * progress).cos()) / 2.0
    }
}

/// A linear warmup in front of another schedule.
///
/// For `step < warmup_steps` the rate is `inner.lr_at(0)` scaled by a
/// factor rising linearly from `start_factor` (at step 0) towards 1:
/// `start_factor + (1 - start_factor) · step / warmup_steps`. From
/// `warmup_steps` on, the inner schedule runs from its own step 0:
/// `inner.lr_at(step - warmup_steps)` (as PyTorch's `SequentialLR` of a
/// `LinearLR` and the inner schedule does).
pub struct LinearWarmup {
    inner: Box<dyn LrSchedule>,
    warmup_steps: u64,
    start_factor: f64,
}

impl LinearWarmup {
    /// `inner` after `warmup_steps` steps of warmup starting at
    /// `start_factor · inner.lr_at(0)`. `warmup_steps == 0` is `inner`
    /// itself.
    ///
    /// Errors ([`Error::InvalidArgument`], `op` `"LinearWarmup::new"`):
    /// `start_factor` outside `[0, 1]`.
    pub fn new(
        inner: impl LrSchedule + 'static,
        warmup_steps: u64,
        start_factor: f64,
    ) -> Result<LinearWarmup> {
        if !(0.0..=1.0).contains(&start_factor) {
            return Err(Error::invalid(
                "LinearWarmup::new",
                "start_factor",
                format!("must lie in [0, 1], got {start_factor}"),
            ));
        }
        Ok(LinearWarmup {
            inner: Box::new(inner),
            warmup_steps,
            start_factor,
        })
    }
}

impl LrSchedule for LinearWarmup {
    fn lr_at(&self, step: u64) -> f64 {
        if step >= self.warmup_steps {
            return self.inner.lr_at(step - self.warmup_steps);
        }
        let progress = step as f64 / self.warmup_steps as f64;
        let factor = self.start_factor + (1.0 - self.start_factor) * progress;
        self.inner.lr_at(0) * factor
    }
}

impl std::fmt::Debug for LinearWarmup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinearWarmup")
            .field("warmup_steps", &self.warmup_steps)
            .field("start_factor", &self.start_factor)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) {
        // The schedules are a handful of f64 operations; a few ulps is all
        // the rounding they can accumulate.
        assert!(
            (got - want).abs() <= 4.0 * f64::EPSILON * want.abs().max(1.0),
            "got {got}, want {want}"
        );
    }

    #[test]
    fn constant() {
        let s = ConstantLr::new(0.3).unwrap();
        assert_eq!(s.lr_at(0), 0.3);
        assert_eq!(s.lr_at(1_000_000), 0.3);
    }

    #[test]
    fn step_lr_at_chosen_steps() {
        // base 0.8, halved every 3 steps:
        // steps 0,1,2 -> 0.8; 3..5 -> 0.4; 6..8 -> 0.2; 9 -> 0.1
        let s = StepLr::new(0.8, 3, 0.5).unwrap();
        for (step, want) in [(0, 0.8), (2, 0.8), (3, 0.4), (5, 0.4), (6, 0.2), (9, 0.1)] {
            assert_eq!(s.lr_at(step), want, "step {step}");
        }
        // gamma 0.1 after 2 decays: 1.0 * 0.1 * 0.1 = 0.01 (up to rounding)
        close(StepLr::new(1.0, 1, 0.1).unwrap().lr_at(2), 0.01);
        // a huge step neither panics nor goes negative: 0.5^(u64::MAX) = 0
        assert_eq!(StepLr::new(1.0, 1, 0.5).unwrap().lr_at(u64::MAX), 0.0);
    }

    #[test]
    fn cosine_at_chosen_steps() {
        // base 1, eta_min 0.2, t_max 4: lr = 0.2 + 0.8 * (1 + cos(pi*s/4)) / 2
        let s = CosineAnnealing::new(1.0, 4, 0.2).unwrap();
        // s=0: cos 0 = 1                  -> 0.2 + 0.8 = 1.0
        close(s.lr_at(0), 1.0);
        // s=1: cos(pi/4) = 0.70710678...  -> 0.2 + 0.4 * 1.70710678 = 0.88284271247...
        close(s.lr_at(1), 0.882_842_712_474_619);
        // s=2: cos(pi/2) = 0              -> 0.2 + 0.4 = 0.6
        close(s.lr_at(2), 0.6);
        // s=3: cos(3pi/4) = -0.70710678   -> 0.2 + 0.4 * 0.29289322 = 0.31715728752...
        close(s.lr_at(3), 0.317_157_287_525_381);
        // s=4: cos(pi) = -1               -> 0.2; and it holds there
        close(s.lr_at(4), 0.2);
        assert_eq!(s.lr_at(5), 0.2);
        assert_eq!(s.lr_at(1000), 0.2);
    }

    #[test]
    fn warmup_then_inner() {
        // 4 warmup steps from 0.25 * 0.8 up, then StepLr(0.8, 2, 0.5) from its step 0.
        let s = LinearWarmup::new(StepLr::new(0.8, 2, 0.5).unwrap(), 4, 0.25).unwrap();
        // factor(s) = 0.25 + 0.75 * s / 4: 0.25, 0.4375, 0.625, 0.8125
        for (step, want) in [(0, 0.2), (1, 0.35), (2, 0.5), (3, 0.65)] {
            close(s.lr_at(step), want);
        }
        // steps 4, 5 are inner steps 0, 1 -> 0.8; steps 6, 7 -> 0.4
        for (step, want) in [(4, 0.8), (5, 0.8), (6, 0.4), (7, 0.4)] {
            assert_eq!(s.lr_at(step), want, "step {step}");
        }
        // a schedule picked at run time wraps as well
        let picked: Box<dyn LrSchedule> = Box::new(ConstantLr::new(0.4).unwrap());
        let boxed = LinearWarmup::new(picked, 2, 0.5).unwrap();
        // factor 0.5, then 0.5 + 0.5 * 1/2 = 0.75, then the inner 0.4
        assert_eq!(boxed.lr_at(0), 0.2);
        close(boxed.lr_at(1), 0.3);
        assert_eq!(boxed.lr_at(2), 0.4);
        // no warmup is the inner schedule itself
        let plain = LinearWarmup::new(ConstantLr::new(0.3).unwrap(), 0, 0.0).unwrap();
        assert_eq!(plain.lr_at(0), 0.3);
    }

    #[test]
    fn warmup_from_zero_over_cosine() {
        // start_factor 0: the rate is 0, 1/2, then the cosine from base 1 over 2 steps.
        let s = LinearWarmup::new(CosineAnnealing::new(1.0, 2, 0.0).unwrap(), 2, 0.0).unwrap();
        assert_eq!(s.lr_at(0), 0.0);
        assert_eq!(s.lr_at(1), 0.5);
        close(s.lr_at(2), 1.0);
        close(s.lr_at(3), 0.5); // (1 + cos(pi/2)) / 2
        close(s.lr_at(4), 0.0);
    }

    #[test]
    fn invalid_arguments_are_typed() {
        let kind_and_name = |e: Error| match e {
            Error::InvalidArgument { op, name, .. } => (op, name),
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(
            kind_and_name(StepLr::new(0.1, 0, 0.5).unwrap_err()),
            ("StepLr::new", "step_size")
        );
        assert_eq!(
            kind_and_name(StepLr::new(-0.1, 1, 0.5).unwrap_err()),
            ("StepLr::new", "base")
        );
        assert_eq!(
            kind_and_name(StepLr::new(0.1, 1, f64::NAN).unwrap_err()),
            ("StepLr::new", "gamma")
        );
        assert_eq!(
            kind_and_name(CosineAnnealing::new(0.1, 0, 0.0).unwrap_err()),
            ("CosineAnnealing::new", "t_max")
        );
        assert_eq!(
            kind_and_name(CosineAnnealing::new(0.1, 5, -1.0).unwrap_err()),
            ("CosineAnnealing::new", "eta_min")
        );
        assert_eq!(
            kind_and_name(LinearWarmup::new(ConstantLr::new(0.1).unwrap(), 5, 1.5).unwrap_err()),
            ("LinearWarmup::new", "start_factor")
        );
        assert_eq!(
            kind_and_name(ConstantLr::new(f64::INFINITY).unwrap_err()),
            ("ConstantLr::new", "lr")
        );
    }
}
