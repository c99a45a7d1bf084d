//! Optimizers, learning-rate schedules and gradient clipping for oxmera.

mod adam;
mod common;
mod sgd;

use std::collections::BTreeMap;

use oxmera_core::Result;
use oxmera_nn::Param;
use oxmera_tensor::Tensor;

pub use adam::{Adam, AdamConfig, AdamW, AdamWConfig};
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
