//! Lists the graph output first: topo_order in reverse, inputs after their users.
//!
//! A named wrong solution of A6, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with `topo_order` reversed.

use std::fmt;
use std::rc::Rc;

use oxmera::{Device, Result, Tensor};

/// A scalar in a computation graph: a leaf or the result of an op.
#[derive(Clone)]
pub struct Var(Rc<Node>);

struct Node {
    tensor: Tensor,
    name: &'static str,
    inputs: Vec<Var>,
}

impl Drop for Node {
    /// Dismantles a deep graph with a loop instead of recursion, as
    /// oxmera's own nodes do.
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.inputs);
        while let Some(var) = pending.pop() {
            if let Ok(mut node) = Rc::try_unwrap(var.0) {
                pending.append(&mut node.inputs);
            }
        }
    }
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Var({} = {})", self.0.name, self.value())
    }
}

impl Var {
    /// A leaf: an input whose gradient `backward` will fill in.
    pub fn leaf(value: f64) -> Var {
        let tensor =
            Tensor::scalar(value, Device::Reference).and_then(|t| t.with_requires_grad(true));
        Var::from_op("leaf", Vec::new(), tensor)
    }

    fn from_op(name: &'static str, inputs: Vec<Var>, tensor: Result<Tensor>) -> Var {
        let tensor = tensor.unwrap_or_else(|e| panic!("{name} on f64 scalars failed: {e}"));
        Var(Rc::new(Node {
            tensor,
            name,
            inputs,
        }))
    }

    fn tensor(&self) -> &Tensor {
        &self.0.tensor
    }

    /// The value.
    pub fn value(&self) -> f64 {
        self.tensor().item().expect("a scalar reads back")
    }

    /// The gradient accumulated in this leaf (0 when there is none).
    pub fn grad(&self) -> f64 {
        self.tensor()
            .grad()
            .map_or(0.0, |g| g.item().expect("a scalar gradient reads back"))
    }

    /// Whether this is a leaf.
    pub fn is_leaf(&self) -> bool {
        self.0.name == "leaf"
    }

    /// An identity for this value, shared by its clones.
    pub fn id(&self) -> usize {
        Rc::as_ptr(&self.0) as usize
    }

    /// The values this one was computed from, in argument order.
    pub fn inputs(&self) -> Vec<Var> {
        self.0.inputs.clone()
    }

    /// `self + other`.
    pub fn add(&self, other: &Var) -> Var {
        let t = self.tensor().add(other.tensor());
        Var::from_op("add", vec![self.clone(), other.clone()], t)
    }

    /// `self - other`.
    pub fn sub(&self, other: &Var) -> Var {
        let t = self.tensor().sub(other.tensor());
        Var::from_op("sub", vec![self.clone(), other.clone()], t)
    }

    /// `self * other`.
    pub fn mul(&self, other: &Var) -> Var {
        let t = self.tensor().mul(other.tensor());
        Var::from_op("mul", vec![self.clone(), other.clone()], t)
    }

    /// `-self`.
    pub fn neg(&self) -> Var {
        Var::from_op("neg", vec![self.clone()], self.tensor().neg())
    }

    /// `e^self`.
    pub fn exp(&self) -> Var {
        Var::from_op("exp", vec![self.clone()], self.tensor().exp())
    }

    /// `tanh(self)`.
    pub fn tanh(&self) -> Var {
        Var::from_op("tanh", vec![self.clone()], self.tensor().tanh())
    }

    /// The sum of `terms` (0 for none).
    pub fn sum(terms: &[Var]) -> Var {
        let t = Tensor::scalar(0.0f64, Device::Reference).and_then(|zero| {
            terms
                .iter()
                .try_fold(zero, |acc, term| acc.add(term.tensor()))
        });
        Var::from_op("sum", terms.to_vec(), t)
    }

    /// Backpropagates from this value into every leaf it depends on.
    pub fn backward(&self) {
        // Only a value with no leaf behind it (a sum of nothing) does not
        // require grad, and it has nothing to backpropagate into.
        if self.tensor().requires_grad() {
            self.tensor()
                .backward()
                .unwrap_or_else(|e| panic!("backward from {self:?} failed: {e}"));
        }
    }

    /// Clears the gradient of every leaf this value depends on.
    pub fn zero_grad(&self) {
        for var in topo_order(self) {
            var.tensor().zero_grad();
        }
    }
}

/// Every value `output` depends on, each once, inputs first. oxmera's own
/// order is private to its engine, so this is the same iterative
/// depth-first search, over the `Var`s.
pub fn topo_order(output: &Var) -> Vec<Var> {
    let mut order = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // (value, whether its inputs have been pushed already)
    let mut stack = vec![(output.clone(), false)];
    while let Some((var, expanded)) = stack.pop() {
        if expanded {
            order.push(var);
        } else if seen.insert(var.id()) {
            let inputs = var.inputs();
            stack.push((var, true));
            stack.extend(inputs.into_iter().map(|i| (i, false)));
        }
    }
    order.reverse();
    order
}
