//! # A6 — reverse-mode autograd
//!
//! Training needs the gradient of one number, the loss, with respect to
//! every parameter. Reverse mode gets all of them in one sweep: record
//! each operation as it runs (the forward pass, given here), then walk the
//! recorded graph from the output back to the leaves, applying the chain
//! rule at every node (the backward pass, yours).
//!
//! The graph is built the way oxmera builds its own: a [`Var`] owns the
//! values it was computed from, never the other way round. There is no
//! global tape and no creation index to lean on, and dropping the output
//! frees the graph. Two ideas make the backward pass correct:
//!
//! 1. **A topological order.** A value's gradient is complete only once
//!    every value computed *from* it has handed its share back. Visiting
//!    the values in reverse topological order (each value after all of its
//!    inputs, read backwards) guarantees that. Graphs can be thousands of
//!    values deep (an unrolled loop), so the order is found with an
//!    explicit stack, not with recursion.
//! 2. **Accumulation.** A value used twice (`x * x`, or the two sides of a
//!    diamond) receives a gradient along each use, and they add up. Leaves
//!    keep adding across calls to [`Var::backward`] until
//!    [`Var::zero_grad`] clears them.

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

/// A scalar in a computation graph: a leaf (an input, such as a weight)
/// or the result of an op on other `Var`s.
///
/// Cloning is cheap and does not copy the node: a clone *is* the same
/// value, with the same [`Var::id`] and the same gradient.
#[derive(Clone)]
pub struct Var(Rc<Node>);

struct Node {
    /// The value, computed once by the forward pass.
    value: f64,
    /// What produced it, holding its inputs.
    op: Op,
    /// A leaf's accumulated gradient.
    grad: Cell<f64>,
}

/// What produced a value, with the values it was computed from.
enum Op {
    Leaf,
    Add(Var, Var),
    Sub(Var, Var),
    Mul(Var, Var),
    Neg(Var),
    Exp(Var),
    Tanh(Var),
    Sum(Vec<Var>),
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Leaf => "leaf",
            Op::Add(..) => "add",
            Op::Sub(..) => "sub",
            Op::Mul(..) => "mul",
            Op::Neg(_) => "neg",
            Op::Exp(_) => "exp",
            Op::Tanh(_) => "tanh",
            Op::Sum(_) => "sum",
        }
    }

    fn inputs(&self) -> Vec<Var> {
        match self {
            Op::Leaf => Vec::new(),
            Op::Add(a, b) | Op::Sub(a, b) | Op::Mul(a, b) => vec![a.clone(), b.clone()],
            Op::Neg(a) | Op::Exp(a) | Op::Tanh(a) => vec![a.clone()],
            Op::Sum(terms) => terms.clone(),
        }
    }

    /// Moves the inputs out, leaving a leaf behind.
    fn take_inputs(&mut self) -> Vec<Var> {
        match std::mem::replace(self, Op::Leaf) {
            Op::Leaf => Vec::new(),
            Op::Add(a, b) | Op::Sub(a, b) | Op::Mul(a, b) => vec![a, b],
            Op::Neg(a) | Op::Exp(a) | Op::Tanh(a) => vec![a],
            Op::Sum(terms) => terms,
        }
    }
}

impl Drop for Node {
    /// Dismantles the graph behind this node with a loop. Left to the
    /// compiler, dropping a 10,000-deep chain would recurse once per node
    /// and overflow the stack: the same trap a recursive topological order
    /// falls into. (Given; nothing to do here.)
    fn drop(&mut self) {
        let mut pending = self.op.take_inputs();
        while let Some(var) = pending.pop() {
            // Only the last owner takes a node apart; a shared one lives on.
            if let Ok(mut node) = Rc::try_unwrap(var.0) {
                pending.append(&mut node.op.take_inputs());
            }
        }
    }
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Var({} = {})", self.0.op.name(), self.0.value)
    }
}

impl Var {
    /// A leaf: an input whose gradient `backward` will fill in.
    pub fn leaf(value: f64) -> Var {
        Var::from_op(Op::Leaf, value)
    }

    fn from_op(op: Op, value: f64) -> Var {
        Var(Rc::new(Node {
            value,
            op,
            grad: Cell::new(0.0),
        }))
    }

    /// The value.
    pub fn value(&self) -> f64 {
        self.0.value
    }

    /// The gradient accumulated in this leaf by [`Var::backward`] since it
    /// was made or last cleared by [`Var::zero_grad`]; 0 when none has
    /// reached it. What it returns for a value made by an op is not part
    /// of the contract (oxmera's non-leaf tensors keep none).
    pub fn grad(&self) -> f64 {
        self.0.grad.get()
    }

    /// Whether this is a leaf.
    pub fn is_leaf(&self) -> bool {
        matches!(self.0.op, Op::Leaf)
    }

    /// An identity for this value, shared by its clones and by no other
    /// value alive at the same time (use it as a key in a set or a map).
    pub fn id(&self) -> usize {
        Rc::as_ptr(&self.0) as usize
    }

    /// The values this one was computed from, in argument order; a value
    /// used twice (`x.mul(&x)`) appears twice. A leaf has none.
    pub fn inputs(&self) -> Vec<Var> {
        self.0.op.inputs()
    }

    /// `self + other`.
    pub fn add(&self, other: &Var) -> Var {
        let value = self.value() + other.value();
        Var::from_op(Op::Add(self.clone(), other.clone()), value)
    }

    /// `self - other`.
    pub fn sub(&self, other: &Var) -> Var {
        let value = self.value() - other.value();
        Var::from_op(Op::Sub(self.clone(), other.clone()), value)
    }

    /// `self * other`.
    pub fn mul(&self, other: &Var) -> Var {
        let value = self.value() * other.value();
        Var::from_op(Op::Mul(self.clone(), other.clone()), value)
    }

    /// `-self`.
    pub fn neg(&self) -> Var {
        Var::from_op(Op::Neg(self.clone()), -self.value())
    }

    /// `e^self`.
    pub fn exp(&self) -> Var {
        Var::from_op(Op::Exp(self.clone()), self.value().exp())
    }

    /// `tanh(self)`.
    pub fn tanh(&self) -> Var {
        Var::from_op(Op::Tanh(self.clone()), self.value().tanh())
    }

    /// The sum of `terms` (0 for none). A term may appear more than once.
    pub fn sum(terms: &[Var]) -> Var {
        let value = terms.iter().map(Var::value).sum();
        Var::from_op(Op::Sum(terms.to_vec()), value)
    }

    /// Backpropagates from this value: its own gradient is 1
    /// (`d self / d self`), and for every leaf `x` it depends on,
    /// `d self / d x` is *added* to `x.grad()`. Calling it twice adds
    /// twice. Works on graphs of any depth (no recursion).
    pub fn backward(&self) {
        // TODO(A6): seed this value's gradient with 1, then visit
        // topo_order(self) backwards. Each value hands its gradient to its
        // inputs by the chain rule (one rule per `Op`), adding wherever
        // gradients meet; a leaf adds what reaches it into its `grad` cell.
        todo!("A6: backward from {self:?}")
    }

    /// Clears the gradient (sets it to 0) of every leaf this value depends
    /// on, itself included when it is a leaf: what a training step does
    /// before its next `backward`. Leaves outside its graph keep theirs.
    pub fn zero_grad(&self) {
        // TODO(A6): every leaf in topo_order(self) gets 0.
        todo!("A6: zero_grad from {self:?}")
    }
}

/// Every value `output` depends on, `output` included, each exactly once
/// (clones are the same value: compare [`Var::id`]s), ordered so that each
/// value comes after all of its inputs; `output` is therefore last.
///
/// Must not recurse: a chain 10,000 values deep has to work on a small
/// stack.
pub fn topo_order(output: &Var) -> Vec<Var> {
    // TODO(A6): a depth-first search with an explicit stack of
    // (value, inputs already pushed?) pairs and a set of visited ids. A
    // value joins the order when it comes off the stack the second time,
    // after everything it depends on has joined.
    todo!("A6: topo_order of {output:?}")
}
