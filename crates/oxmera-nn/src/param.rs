//! The parameter slot shared by a module and its optimizer.

use std::cell::RefCell;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};

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
    slot: Arc<Slot>,
    trainable: bool,
}

/// What the clones of one [`Param`] share.
struct Slot {
    value: RwLock<Tensor>,
    /// Whether a module's `named_parameters()` has listed this parameter
    /// or an optimizer holds it (see [`check_registered`]).
    registered: AtomicBool,
    /// Where it was made: the caller of the outermost `#[track_caller]`
    /// constructor (a layer's `new`/`init`, or `Param::new` itself).
    created_at: &'static Location<'static>,
}

thread_local! {
    /// The trainable parameters made on this thread, for
    /// [`check_registered`]. Per thread, so that parallel tests (and
    /// parallel runs in one process) never see each other's parameters.
    static MADE_HERE: RefCell<Vec<Weak<Slot>>> = const { RefCell::new(Vec::new()) };
}

impl Param {
    /// A trainable parameter holding `value` (a float tensor), as a fresh
    /// leaf that requires grad.
    ///
    /// It remembers where it was made (`#[track_caller]`: the layer
    /// constructor's caller, when the constructor is `#[track_caller]`
    /// too), so that [`Error::UnregisteredParameter`] can point there.
    #[track_caller]
    pub fn new(value: Tensor) -> Result<Param> {
        let created_at = Location::caller();
        let leaf = value.detach().with_requires_grad(true)?;
        let slot = Arc::new(Slot {
            value: RwLock::new(leaf),
            registered: AtomicBool::new(false),
            created_at,
        });
        MADE_HERE.with(|made| {
            let mut made = made.borrow_mut();
            // Forget dropped parameters now and then, so the list stays
            // as long as the live ones (amortised O(1) per parameter).
            if made.len() >= 64 && made.len().is_power_of_two() {
                made.retain(|w| w.strong_count() > 0);
            }
            made.push(Arc::downgrade(&slot));
        });
        Ok(Param {
            slot,
            trainable: true,
        })
    }

    /// A buffer: saved with the module, never trained.
    #[track_caller]
    pub fn buffer(value: Tensor) -> Param {
        Param {
            slot: Arc::new(Slot {
                value: RwLock::new(value.detach()),
                registered: AtomicBool::new(true),
                created_at: Location::caller(),
            }),
            trainable: false,
        }
    }

    /// Marks this parameter as listed by a module or held by an optimizer
    /// (what [`crate::Module::named_parameters`] and every optimizer's
    /// constructor do), so that [`check_registered`] passes it.
    pub fn mark_registered(&self) {
        self.slot.registered.store(true, Ordering::Relaxed);
    }

    /// Whether a module has listed this parameter or an optimizer holds
    /// it.
    pub fn is_registered(&self) -> bool {
        self.slot.registered.load(Ordering::Relaxed)
    }

    /// Where the parameter was made (see [`Param::new`]).
    pub fn created_at(&self) -> &'static Location<'static> {
        self.slot.created_at
    }

    /// Whether this is a trainable parameter (not a buffer).
    pub fn is_trainable(&self) -> bool {
        self.trainable
    }

    /// The current value. For a trainable parameter this is the leaf that
    /// gradients flow into.
    pub fn tensor(&self) -> Tensor {
        self.slot.value.read().expect("param lock poisoned").clone()
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
        let mut slot = self.slot.value.write().expect("param lock poisoned");
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

/// `Err(UnregisteredParameter)` naming the first trainable parameter made
/// on this thread that holds a gradient although no module's
/// `named_parameters()` has listed it and no optimizer holds it: a
/// gradient that no step will ever use, which is what a hand-written
/// `visit_params` that forgets a child produces. Every optimizer calls
/// this in its first `step()` (`op` names it).
///
/// Two models trained by two optimizers (a GAN's generator and
/// discriminator) pass: each model's parameters are held by its own
/// optimizer, whichever backward pass reached them.
pub fn check_registered(op: &'static str) -> Result<()> {
    let stray = MADE_HERE.with(|made| {
        made.borrow().iter().find_map(|weak| {
            let slot = weak.upgrade()?;
            if slot.registered.load(Ordering::Relaxed) {
                return None;
            }
            let value = slot.value.read().expect("param lock poisoned").clone();
            value.grad().is_some().then(|| (value, slot.created_at))
        })
    });
    match stray {
        None => Ok(()),
        Some((value, created_at)) => Err(Error::UnregisteredParameter {
            op,
            shape: value.shape().clone(),
            dtype: value.dtype(),
            created_at: created_at.to_string(),
        }),
    }
}
