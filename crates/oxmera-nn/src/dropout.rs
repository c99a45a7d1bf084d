//! Seeded dropout.

use std::sync::Mutex;

use oxmera_core::{Error, Result};
use oxmera_tensor::{Generator, Tensor};

use crate::{Module, Param};

/// In training mode, zeroes each element with probability `p` and scales
/// the survivors by `1 / (1 − p)`, so the expected output equals the
/// input; in evaluation mode, the identity.
///
/// The layer owns its [`Generator`] (behind a mutex, so `forward` can
/// advance it through `&self`): the same seed gives the same masks, call
/// after call. Its position is not part of the state dict (PyTorch's
/// `Dropout` has no state, and state dicts stay interchangeable); a
/// training loop that must resume bit-identically saves
/// [`Dropout::generator`] and restores it with
/// [`Dropout::set_generator`].
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Dropout, Module};
/// use oxmera_tensor::{Generator, Tensor};
/// let mut drop = Dropout::new(0.5, Generator::new(3))?;
/// let x = Tensor::ones([8], DType::F32, Device::Reference)?;
/// // Each element is dropped (0) or doubled (2).
/// assert!(drop.forward(&x)?.to_vec::<f32>()?.iter().all(|&v| v == 0.0 || v == 2.0));
/// drop.eval();
/// assert_eq!(drop.forward(&x)?.to_vec::<f32>()?, vec![1.0; 8]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Dropout {
    p: f64,
    rng: Mutex<Generator>,
    training: bool,
}

impl Dropout {
    /// Dropout with probability `p` in `[0, 1]` (1 drops everything),
    /// drawing from `rng`. [`Error::InvalidArgument`] otherwise.
    pub fn new(p: f64, rng: Generator) -> Result<Dropout> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::invalid(
                "Dropout",
                "p",
                format!("the drop probability must lie in [0, 1], got {p}"),
            ));
        }
        Ok(Dropout {
            p,
            rng: Mutex::new(rng),
            training: true,
        })
    }

    /// The drop probability.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// The generator's current state (seed and offset).
    pub fn generator(&self) -> Generator {
        *self.lock()
    }

    /// Replaces the generator, e.g. with a saved state.
    pub fn set_generator(&self, rng: Generator) {
        *self.lock() = rng;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generator> {
        // A generator is a plain value that is never left half-updated, so a
        // lock poisoned by a panic elsewhere still guards a valid state.
        self.rng.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Module for Dropout {
    /// Float input of any shape ([`Error::UnsupportedDType`] otherwise, in
    /// training mode).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if !self.training || self.p == 0.0 {
            return Ok(x.clone());
        }
        if !x.dtype().is_float() {
            return Err(Error::UnsupportedDType {
                op: "Dropout",
                dtype: x.dtype(),
                hint: "dropout scales values, so it needs a float dtype",
            });
        }
        if self.p == 1.0 {
            // Multiplying (rather than building zeros) keeps the graph, so
            // the input still gets its (zero) gradient.
            return x.mul_scalar(0.0);
        }
        let u = self.lock().rand(x.shape().clone(), x.dtype(), x.device())?;
        let mask = u
            .ge_scalar(self.p)?
            .to_dtype(x.dtype())?
            .mul_scalar(1.0 / (1.0 - self.p))?;
        x.mul(&mask)
    }

    fn named_params(&self, _prefix: &str, _out: &mut Vec<(String, Param)>) {}

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }

    fn is_training(&self) -> bool {
        self.training
    }
}
