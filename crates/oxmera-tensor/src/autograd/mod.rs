//! Reverse-mode automatic differentiation.
//!
//! A tensor that *requires grad* carries a small piece of metadata: either
//! nothing more (a **leaf**, such as a parameter, made by
//! [`Tensor::with_requires_grad`]) or the [`Node`] of the operation that
//! produced it. A node holds the op's inputs and a closure that maps the
//! gradient of the output to the gradients of the inputs. Every operation
//! front end records its node at its chokepoint, so the graph is built as a
//! side effect of ordinary code, and only when some input requires grad and
//! recording is on (see [`no_grad`]).
//!
//! [`Tensor::backward`] walks the graph from the output in reverse
//! topological order (every tensor is visited after all of its consumers),
//! calls each node's closure with the sum of the gradients that reached it,
//! and adds the results into the leaves' `grad` slots, where they
//! accumulate across calls until [`Tensor::zero_grad`].
//!
//! The graph is owned by the tensors: a node owns its inputs, never its
//! output, so there are no reference cycles and dropping the loss frees the
//! graph. The backward closures run with recording off, so gradients are
//! plain tensors (no higher-order graphs).
//!
//! Only floating-point tensors take part: an integer or bool tensor cannot
//! require grad, and ops with integer outputs (comparisons, `argmax`) cut
//! the graph.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxmera_core::{Error, Result};

use crate::{Tensor, TensorId};

pub mod gradcheck;
pub(crate) mod rules;

pub use gradcheck::{DEFAULT_STEP, GradcheckEntry, GradcheckReport, gradcheck};

/// A backward function: the gradient of the output in, one optional
/// gradient per input out (`None` where an input gets no gradient).
pub(crate) type BackwardFn = dyn Fn(&Tensor) -> Result<Vec<Option<Tensor>>> + Send + Sync;

/// One recorded operation: its name, its inputs and its backward function.
pub(crate) struct Node {
    pub(crate) name: &'static str,
    pub(crate) inputs: Vec<Tensor>,
    pub(crate) backward: Box<BackwardFn>,
    /// The tensors the backward function keeps, where the op declares
    /// them (see [`record_saving`]); `None` where the closure's captures
    /// are not listed. Handles only: they share storage with what the
    /// closure holds, so listing them costs no memory.
    pub(crate) saved: Option<Vec<Tensor>>,
}

/// What a tensor that requires grad carries.
pub(crate) struct GradMeta {
    node: Option<Arc<Node>>,
    grad: Mutex<Option<Tensor>>,
}

impl GradMeta {
    pub(crate) fn new(node: Option<Arc<Node>>) -> Self {
        GradMeta {
            node,
            grad: Mutex::new(None),
        }
    }

    pub(crate) fn take_node(mut self) -> Option<Arc<Node>> {
        self.node.take()
    }
}

impl Drop for Node {
    /// Dismantles the graph behind this node iteratively. Dropped the
    /// ordinary way, a long chain (an unrolled loop of thousands of ops)
    /// would recurse once per node and overflow the stack.
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.inputs);
        while let Some(t) = pending.pop() {
            if let Some(node) = t.into_unique_node() {
                if let Ok(mut node) = Arc::try_unwrap(node) {
                    pending.append(&mut node.inputs);
                }
            }
        }
    }
}

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Whether operations on this thread record the graph.
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(Cell::get)
}

/// Turns recording off on this thread until the guard is dropped; the
/// previous setting comes back then, so guards nest.
#[must_use = "recording resumes when the guard is dropped"]
pub struct NoGradGuard {
    previous: bool,
}

impl NoGradGuard {
    /// Stops recording on this thread.
    pub fn new() -> Self {
        let previous = GRAD_ENABLED.with(|g| g.replace(false));
        NoGradGuard { previous }
    }
}

impl Default for NoGradGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for NoGradGuard {
    fn drop(&mut self) {
        GRAD_ENABLED.with(|g| g.set(self.previous));
    }
}

/// Runs `f` without recording the graph (evaluation, optimizer updates).
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_tensor::{Tensor, no_grad};
/// let w = Tensor::ones([2], DType::F32, Device::Reference)?.with_requires_grad(true)?;
/// let y = no_grad(|| w.mul_scalar(3.0))?;
/// assert!(!y.requires_grad());
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn no_grad<T>(f: impl FnOnce() -> T) -> T {
    let _guard = NoGradGuard::new();
    f()
}

/// Whether an op over `inputs` must record a node.
pub(crate) fn wants_grad(inputs: &[&Tensor]) -> bool {
    is_grad_enabled() && inputs.iter().any(|t| t.requires_grad())
}

/// Attaches a node to `out` when recording is wanted for `inputs`, and
/// returns `out` unchanged otherwise. `backward` gets the output gradient
/// and returns one entry per input, in order.
///
/// A closure that needs the output must capture `out.detach()`, never
/// `out` itself: the node would own its own output, a reference cycle.
pub(crate) fn record(
    out: Tensor,
    name: &'static str,
    inputs: &[&Tensor],
    backward: impl Fn(&Tensor) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
) -> Tensor {
    if !wants_grad(inputs) || !out.dtype().is_float() {
        return out;
    }
    let node = Node {
        name,
        inputs: inputs.iter().map(|t| (*t).clone()).collect(),
        backward: Box::new(backward),
        saved: None,
    };
    out.with_grad_meta(Some(Arc::new(node)))
}

/// [`record`] for an op that declares what its backward keeps: `saved`
/// (detached tensors) is handed to `backward` at every call and listed by
/// [`Tensor::saved_for_backward`], so a test can count what the graph
/// holds — the one way to show that a fused op keeps less than the chain
/// of ops it replaces.
pub(crate) fn record_saving(
    out: Tensor,
    name: &'static str,
    inputs: &[&Tensor],
    saved: Vec<Tensor>,
    backward: impl Fn(&Tensor, &[Tensor]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
) -> Tensor {
    if !wants_grad(inputs) || !out.dtype().is_float() {
        return out;
    }
    let kept = saved.clone();
    let node = Node {
        name,
        inputs: inputs.iter().map(|t| (*t).clone()).collect(),
        backward: Box::new(move |g| backward(g, &kept)),
        saved: Some(saved),
    };
    out.with_grad_meta(Some(Arc::new(node)))
}

/// [`record`] for a single-input op whose backward needs only the output
/// gradient.
pub(crate) fn record_unary(
    out: Tensor,
    name: &'static str,
    input: &Tensor,
    backward: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
) -> Tensor {
    record(out, name, &[input], move |g| Ok(vec![Some(backward(g)?)]))
}

impl Tensor {
    /// A tensor over the same storage that is a leaf of the graph and
    /// requires grad (`true`), or a detached one (`false`). Only float
    /// dtypes can require grad.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{DType, Device};
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], [3], Device::Reference)?
    ///     .with_requires_grad(true)?;
    /// let loss = x.square()?.sum_all()?; // Σ x²
    /// loss.backward()?;
    /// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![2.0, 4.0, 6.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn with_requires_grad(&self, requires_grad: bool) -> Result<Tensor> {
        if !requires_grad {
            return Ok(self.detach());
        }
        if !self.dtype().is_float() {
            return Err(Error::Autograd {
                op: "with_requires_grad",
                message: format!(
                    "only floating-point tensors can require grad, got {}",
                    self.dtype()
                ),
            });
        }
        Ok(self.with_grad_meta(None))
    }

    /// Whether this tensor takes part in the graph (a leaf that requires
    /// grad, or the result of an op on one).
    pub fn requires_grad(&self) -> bool {
        self.grad_meta().is_some()
    }

    /// Whether this tensor is a leaf: not produced by a recorded op. Tensors
    /// that do not require grad are leaves too, as in PyTorch.
    pub fn is_leaf(&self) -> bool {
        self.grad_meta().is_none_or(|m| m.node.is_none())
    }

    /// The name of the op that produced this tensor, when it was recorded.
    pub fn grad_fn_name(&self) -> Option<&'static str> {
        self.grad_meta()?.node.as_ref().map(|n| n.name)
    }

    /// The shapes of the tensors this tensor's op keeps for its backward
    /// pass, where the op declares them (fused ops such as
    /// [`Tensor::scaled_dot_product_attention`] do); `None` for a leaf, a
    /// tensor outside the graph, or an op whose backward does not list
    /// what it keeps.
    pub fn saved_for_backward(&self) -> Option<Vec<oxmera_core::Shape>> {
        let node = self.grad_meta()?.node.as_ref()?;
        let saved = node.saved.as_ref()?;
        Some(saved.iter().map(|t| t.shape().clone()).collect())
    }

    /// The same data, cut from the graph: it does not require grad, and
    /// shares storage with `self`.
    pub fn detach(&self) -> Tensor {
        Tensor::from_parts(self.storage().clone(), self.layout().clone())
    }

    /// The gradient accumulated in this leaf by [`Tensor::backward`], if
    /// any. Non-leaf tensors do not keep theirs.
    pub fn grad(&self) -> Option<Tensor> {
        let meta = self.grad_meta()?;
        meta.grad.lock().expect("grad lock poisoned").clone()
    }

    /// Clears the accumulated gradient.
    pub fn zero_grad(&self) {
        if let Some(meta) = self.grad_meta() {
            *meta.grad.lock().expect("grad lock poisoned") = None;
        }
    }

    /// Replaces the accumulated gradient (used by optimizers that carry a
    /// gradient over to a parameter's updated value, and by clipping).
    /// An error if this tensor does not require grad or the shapes differ.
    pub fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        let Some(meta) = self.grad_meta() else {
            return Err(Error::Autograd {
                op: "set_grad",
                message: "tensor does not require grad".into(),
            });
        };
        if let Some(g) = &grad {
            check_grad_matches("set_grad", self, g)?;
        }
        *meta.grad.lock().expect("grad lock poisoned") = grad.map(|g| g.detach());
        Ok(())
    }

    /// Backpropagates from a scalar (one-element) tensor, seeding with 1.
    /// Gradients are added into every leaf that requires grad.
    ///
    /// Errors ([`Error::Autograd`]): the tensor does not require grad, or
    /// has more than one element (use [`Tensor::backward_with`]).
    pub fn backward(&self) -> Result<()> {
        if self.numel() != 1 {
            return Err(Error::Autograd {
                op: "backward",
                message: format!(
                    "backward() needs a one-element tensor, got shape {}; pass the upstream gradient with backward_with",
                    self.shape()
                ),
            });
        }
        let seed = Tensor::ones_like(self)?;
        self.backward_with(&seed)
    }

    /// Backpropagates `grad`, the gradient of some scalar with respect to
    /// this tensor (same shape, dtype and device).
    pub fn backward_with(&self, grad: &Tensor) -> Result<()> {
        if !self.dtype().is_float() {
            return Err(Error::Autograd {
                op: "backward",
                message: format!(
                    "cannot differentiate through a {} tensor; only floating-point tensors have gradients",
                    self.dtype()
                ),
            });
        }
        if !self.requires_grad() {
            return Err(Error::Autograd {
                op: "backward",
                message: "tensor does not require grad and has no grad_fn \
                          (create the inputs with with_requires_grad(true))"
                    .into(),
            });
        }
        check_grad_matches("backward", self, grad)?;
        let _guard = NoGradGuard::new();
        run_backward(self, grad.detach())
    }
}

/// Checks that `grad` can be the gradient of `t`.
fn check_grad_matches(op: &'static str, t: &Tensor, grad: &Tensor) -> Result<()> {
    if grad.shape() != t.shape() {
        return Err(Error::ShapeMismatch {
            op,
            lhs: t.shape().clone(),
            rhs: grad.shape().clone(),
        });
    }
    if grad.dtype() != t.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            lhs: t.dtype(),
            rhs: grad.dtype(),
        });
    }
    if grad.device() != t.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: t.device(),
            rhs: grad.device(),
        });
    }
    Ok(())
}

/// Every tensor reachable from `root` through recorded nodes, in an order
/// where each tensor comes after all of its inputs (post-order). Iterative,
/// so deep graphs (long unrolled loops) cannot overflow the stack.
fn topological_order(root: &Tensor) -> Vec<Tensor> {
    let mut order = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // (tensor, whether its inputs have been pushed already)
    let mut stack = vec![(root.clone(), false)];
    while let Some((t, expanded)) = stack.pop() {
        if expanded {
            order.push(t);
            continue;
        }
        if !seen.insert(t.id()) {
            continue;
        }
        let node = t.grad_meta().and_then(|m| m.node.clone());
        stack.push((t, true));
        if let Some(node) = node {
            for input in node.inputs.iter().filter(|i| i.requires_grad()) {
                if !seen.contains(&input.id()) {
                    stack.push((input.clone(), false));
                }
            }
        }
    }
    order
}

fn run_backward(root: &Tensor, seed: Tensor) -> Result<()> {
    let order = topological_order(root);
    let mut grads: HashMap<TensorId, Tensor> = HashMap::new();
    grads.insert(root.id(), seed);
    for t in order.iter().rev() {
        let Some(g) = grads.remove(&t.id()) else {
            continue;
        };
        let meta = t
            .grad_meta()
            .expect("only tensors that require grad are visited");
        let Some(node) = &meta.node else {
            let mut slot = meta.grad.lock().expect("grad lock poisoned");
            *slot = Some(match slot.take() {
                Some(old) => old.add(&g)?,
                None => g.contiguous()?,
            });
            continue;
        };
        let input_grads = (node.backward)(&g)?;
        debug_assert_eq!(input_grads.len(), node.inputs.len(), "{}", node.name);
        for (input, gi) in node.inputs.iter().zip(input_grads) {
            let Some(gi) = gi else { continue };
            if !input.requires_grad() {
                continue;
            }
            if gi.shape() != input.shape() || gi.dtype() != input.dtype() {
                return Err(Error::Autograd {
                    op: node.name,
                    message: format!(
                        "backward produced a {} gradient of shape {} for an input of {} {}",
                        gi.dtype(),
                        gi.shape(),
                        input.dtype(),
                        input.shape()
                    ),
                });
            }
            let total = match grads.remove(&input.id()) {
                Some(prev) => prev.add(&gi)?,
                None => gi,
            };
            grads.insert(input.id(), total);
        }
    }
    Ok(())
}
