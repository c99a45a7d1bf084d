//! The parameter slot shared by a module and its optimizer.

use std::sync::{Arc, RwLock};

use oxmera_core::{Error, Result};
use oxmera_tensor::Tensor;

/// A shared slot holding one tensor: a trainable parameter (a graph leaf
/// that requires grad) or a buffer (state such as batch-norm running
/// statistics, which is saved but not trained).
///
/// Clones share the slot: a module and an optimizer each hold one.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::Param;
/// use oxmera_tensor::Tensor;
/// let w = Param::new(Tensor::ones([2], DType::F32, Device::Reference)?)?;
/// let shared = w.clone();
/// w.tensor().mul_scalar(3.0)?.sum_all()?.backward()?;
/// assert_eq!(shared.grad().unwrap().to_vec::<f32>()?, vec![3.0, 3.0]);
/// shared.set(Tensor::zeros([2], DType::F32, Device::Reference)?)?;
/// assert_eq!(w.tensor().to_vec::<f32>()?, vec![0.0, 0.0]);
/// assert!(w.grad().is_some(), "the gradient survives an update until zeroed");
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Clone)]
pub struct Param {
    slot: Arc<RwLock<Tensor>>,
    trainable: bool,
}

impl Param {
    /// A trainable parameter holding `value` (a float tensor), as a fresh
    /// leaf that requires grad.
    pub fn new(value: Tensor) -> Result<Param> {
        let leaf = value.detach().with_requires_grad(true)?;
        Ok(Param {
            slot: Arc::new(RwLock::new(leaf)),
            trainable: true,
        })
    }

    /// A buffer: saved with the module, never trained.
    pub fn buffer(value: Tensor) -> Param {
        Param {
            slot: Arc::new(RwLock::new(value.detach())),
            trainable: false,
        }
    }

    /// Whether this is a trainable parameter (not a buffer).
    pub fn is_trainable(&self) -> bool {
        self.trainable
    }

    /// The current value. For a trainable parameter this is the leaf that
    /// gradients flow into.
    pub fn tensor(&self) -> Tensor {
        self.slot.read().expect("param lock poisoned").clone()
    }

    /// The accumulated gradient, if any.
    pub fn grad(&self) -> Option<Tensor> {
        self.tensor().grad()
    }

    /// Clears the accumulated gradient.
    pub fn zero_grad(&self) {
        self.tensor().zero_grad();
    }

    /// Replaces the value with `value` (same shape and dtype). A trainable
    /// parameter gets a fresh leaf and keeps its accumulated gradient, so
    /// that the update does not silently zero it.
    pub fn set(&self, value: Tensor) -> Result<()> {
        let mut slot = self.slot.write().expect("param lock poisoned");
        if value.shape() != slot.shape() {
            return Err(Error::ShapeMismatch {
                op: "Param::set",
                lhs: slot.shape().clone(),
                rhs: value.shape().clone(),
            });
        }
        if value.dtype() != slot.dtype() {
            return Err(Error::DTypeMismatch {
                op: "Param::set",
                lhs: slot.dtype(),
                rhs: value.dtype(),
            });
        }
        let fresh = if self.trainable {
            let leaf = value.detach().with_requires_grad(true)?;
            leaf.set_grad(slot.grad())?;
            leaf
        } else {
            value.detach()
        };
        *slot = fresh;
        Ok(())
    }
}

impl std::fmt::Debug for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.tensor();
        f.debug_struct("Param")
            .field("shape", t.shape())
            .field("dtype", &t.dtype())
            .field("trainable", &self.trainable)
            .finish()
    }
}
