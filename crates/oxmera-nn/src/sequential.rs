//! The chain container.

use oxmera_core::Result;
use oxmera_tensor::Tensor;

use crate::{Module, ModuleState, Param};

/// Modules applied one after another; child `i` is named `"i"`, so the
/// weight of the first child is `"0.weight"` (PyTorch's `nn.Sequential`
/// naming).
///
/// An empty `Sequential` is the identity.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::Device;
/// use oxmera_nn::{Module, ReLU, Sequential, Tanh};
/// use oxmera_tensor::Tensor;
/// let net = Sequential::new().push(ReLU).push(Tanh);
/// let x = Tensor::from_vec(vec![-1.0f64, 0.5], [2], Device::Reference)?;
/// assert_eq!(net.forward(&x)?.to_vec::<f64>()?, vec![0.0, 0.5f64.tanh()]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub struct Sequential {
    children: Vec<Box<dyn Module>>,
    training: bool,
}

impl Sequential {
    /// An empty chain, in training mode.
    pub fn new() -> Sequential {
        Sequential {
            children: Vec::new(),
            training: true,
        }
    }

    /// Appends `module`, putting it in this chain's mode.
    pub fn push(mut self, module: impl Module + 'static) -> Sequential {
        self.add(module);
        self
    }

    /// Appends `module` in place, putting it in this chain's mode.
    pub fn add(&mut self, module: impl Module + 'static) {
        let mut module: Box<dyn Module> = Box::new(module);
        module.set_training(self.training);
        self.children.push(module);
    }

    /// The number of children.
    pub fn len(&self) -> usize {
        self.children.len()
    }

    /// Whether there are no children.
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// Child `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<&dyn Module> {
        self.children.get(i).map(|m| &**m)
    }

    /// The children, in order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Module> {
        self.children.iter().map(|m| &**m)
    }
}

impl Default for Sequential {
    fn default() -> Self {
        Sequential::new()
    }
}

impl std::fmt::Debug for Sequential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequential")
            .field("len", &self.children.len())
            .field("training", &self.training)
            .finish()
    }
}

impl Module for Sequential {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut y = x.clone();
        for child in &self.children {
            y = child.forward(&y)?;
        }
        Ok(y)
    }
}

impl ModuleState for Sequential {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        for (i, child) in self.children.iter().enumerate() {
            child.visit_params(&crate::join_name(prefix, &i.to_string()), out);
        }
    }

    fn set_training(&mut self, training: bool) {
        self.training = training;
        for child in &mut self.children {
            child.set_training(training);
        }
    }

    fn is_training(&self) -> bool {
        self.training
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use crate::{Linear, ReLU};
    use oxmera_core::DType;
    use oxmera_tensor::Generator;

    #[test]
    fn nested_children_get_dotted_names() {
        let mut rng = Generator::new(0);
        let inner = Sequential::new()
            .push(ReLU)
            .push(Linear::new(2, 2, true, &mut rng, DType::F32, DEV).unwrap());
        let net = Sequential::new()
            .push(inner)
            .push(Linear::new(2, 1, false, &mut rng, DType::F32, DEV).unwrap());
        let names: Vec<String> = net.named_parameters().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["0.1.weight", "0.1.bias", "1.weight"]);
        assert_eq!(net.len(), 2);
        assert!(net.get(2).is_none());
        assert_eq!(net.get(1).unwrap().num_parameters(), 2);
    }

    #[test]
    fn empty_chain_is_the_identity() {
        let net = Sequential::default();
        assert!(net.is_empty());
        let x = t64(&[1.0, 2.0], [2]);
        assert_eq!(
            net.forward(&x).unwrap().to_f64_vec().unwrap(),
            vec![1.0, 2.0]
        );
    }

    #[test]
    fn a_child_added_to_an_eval_chain_is_put_in_eval() {
        let mut net = Sequential::new();
        net.eval();
        net.add(crate::Dropout::new(0.5, Generator::new(0)).unwrap());
        assert!(!net.get(0).unwrap().is_training());
    }
}
