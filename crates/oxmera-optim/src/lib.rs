//! Optimizers, learning-rate schedules and gradient clipping for oxmera.
//!
//! Training moves a model's weights downhill along their gradients. This
//! crate owns *how* it moves them: the update rules ([`Sgd`] with momentum,
//! dampening, Nesterov momentum and L2 weight decay; [`Adam`] with bias
//! correction; [`AdamW`] with decoupled weight decay), the learning rate
//! as a function of the step ([`StepLr`], [`CosineAnnealing`],
//! [`LinearWarmup`]), and [`clip_grad_norm`], which bounds a step's size
//! before it is taken. The rules follow `torch.optim`, so a recipe from
//! the literature carries over unchanged.
//!
//! An optimizer holds the model's [`Param`] slots under their names, as
//! `Module::named_parameters()` lists them. Tensors never change in place:
//! [`Optimizer::step`] computes each new value with ordinary tensor ops
//! under [`oxmera_tensor::no_grad`], in the parameter's own dtype and in a
//! fixed order, and puts it into the slot, where the module reads it on
//! its next forward pass. A parameter without a gradient is skipped.
//!
//! An optimizer's state (the step count, momentum buffers, Adam's moments)
//! is a map of named tensors, `"step"` and `"<param>.<field>"`, so it is
//! saved with the model in one checkpoint. Loading is strict and
//! all-or-nothing, and a run resumed from a saved state continues bit for
//! bit as if it had never stopped. Schedules hold no state at all: they
//! are pure functions of the step count, which the state restores.
//!
//! This crate must never know about modules beyond [`Param`], data sets,
//! files or a particular backend: it sees slots and tensors, and a
//! checkpoint writer sees only the `(name, tensor)` map it returns.
//!
//! Fitting `y = 2x` with one weight:
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::{DType, Device};
//! use oxmera_nn::Param;
//! use oxmera_optim::{Optimizer, Sgd, SgdConfig};
//! use oxmera_tensor::Tensor;
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [4], Device::Reference)?;
//! let y = x.mul_scalar(2.0)?;
//! let w = Param::new(Tensor::zeros([1], DType::F32, Device::Reference)?)?;
//! let config = SgdConfig { lr: 0.05, ..SgdConfig::default() };
//! let mut opt = Sgd::new(vec![("w".to_string(), w.clone())], config)?;
//! for _ in 0..30 {
//!     let loss = x.mul(&w.tensor())?.sub(&y)?.square()?.mean_all()?; // mean (wx - y)²
//!     loss.backward()?;
//!     opt.step()?;
//!     opt.zero_grad();
//! }
//! assert!((w.tensor().item()? - 2.0).abs() < 1e-4);
//! # Ok::<(), oxmera_core::Error>(())
//! ```

mod adam;
mod clip;
mod common;
mod schedule;
mod sgd;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use oxmera_core::Result;
use oxmera_nn::Param;
use oxmera_tensor::Tensor;

pub use adam::{Adam, AdamConfig, AdamW, AdamWConfig};
pub use clip::clip_grad_norm;
pub use schedule::{ConstantLr, CosineAnnealing, LinearWarmup, LrSchedule, StepLr, apply_schedule};
pub use sgd::{Sgd, SgdConfig};

/// What a training loop needs from an optimizer.
///
/// An optimizer holds clones of a model's [`Param`] slots, each under the
/// name the model gives it, and on [`Optimizer::step`] puts an updated
/// value into every slot that has a gradient.
pub trait Optimizer: Send {
    /// Updates every trainable parameter that has a gradient; parameters
    /// without one are skipped, and their state is left as it was (as in
    /// PyTorch). Counts one step either way.
    ///
    /// All-or-nothing: the new values are computed first and written only
    /// when every one of them succeeded.
    fn step(&mut self) -> Result<()>;

    /// Clears the gradient of every parameter.
    fn zero_grad(&mut self);

    /// The learning rate the next step uses.
    fn lr(&self) -> f64;

    /// Sets the learning rate of the next steps (a schedule calls this). A
    /// negative or non-finite rate is refused by the next `step`.
    fn set_lr(&mut self, lr: f64);

    /// How many times `step` has completed (restored by
    /// `load_state_dict`).
    fn steps_taken(&self) -> u64;

    /// The parameters, in the order given, with their names.
    fn params(&self) -> &[(String, Param)];

    /// The optimizer's state as named tensors: `"step"` (the number of
    /// steps, an i64 scalar) and, for each parameter stepped so far,
    /// `"<param>.<field>"` entries whose fields depend on the optimizer.
    /// Hyperparameters are not state: they come from the config.
    fn state_dict(&self) -> Result<BTreeMap<String, Tensor>>;

    /// Restores a state saved by `state_dict` of an optimizer of the same
    /// kind and configuration over the same parameters.
    ///
    /// Strict and all-or-nothing: nothing changes unless the whole dict
    /// fits. Errors ([`oxmera_core::Error::StateDict`] naming the tensor):
    /// `"step"` missing; a parameter with some of its fields but not all;
    /// a key naming no parameter or field; a shape or dtype that differs
    /// from the parameter's (or from an i64 scalar for a count). A negative
    /// count is an [`oxmera_core::Error::InvalidArgument`].
    fn load_state_dict(&mut self, dict: &BTreeMap<String, Tensor>) -> Result<()>;
}
