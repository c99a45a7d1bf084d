//! The `Module` trait: a forward pass plus named parameters and buffers.

use std::collections::{BTreeMap, BTreeSet};

use oxmera_core::{Error, Result, StateDictProblem};
use oxmera_tensor::Tensor;

use crate::Param;

/// A layer or a model: something with a forward pass whose state is a set
/// of named [`Param`]s.
///
/// Implementors write [`Module::forward`] and [`Module::named_params`]
/// (and, if their forward pass depends on the mode,
/// [`Module::set_training`] and [`Module::is_training`]); everything else
/// — parameter lists, gradient zeroing, state dicts — is derived from the
/// names. A name is the dotted path from the root module: a `Sequential`
/// names its children `"0"`, `"1"`, …, so the weight of its first layer
/// is `"0.weight"`, as in PyTorch, which lets state dicts travel between
/// the two.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Linear, Module, ReLU, Sequential};
/// use oxmera_tensor::Generator;
/// let mut rng = Generator::new(0);
/// let net = Sequential::new()
///     .push(Linear::new(4, 3, true, &mut rng, DType::F32, Device::Reference)?)
///     .push(ReLU)
///     .push(Linear::new(3, 2, false, &mut rng, DType::F32, Device::Reference)?);
/// let names: Vec<String> = net.state_dict().into_keys().collect();
/// assert_eq!(names, ["0.bias", "0.weight", "2.weight"]);
/// assert_eq!(net.num_parameters(), 4 * 3 + 3 + 3 * 2);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub trait Module: Send + Sync {
    /// The forward pass. Autograd records it: every op on a parameter's
    /// tensor is part of the graph unless run under `no_grad`.
    fn forward(&self, x: &Tensor) -> Result<Tensor>;

    /// Appends every parameter **and** buffer to `out`, each with its
    /// dotted name under `prefix` (`"0.weight"`, `"bn.running_mean"`;
    /// with an empty prefix, just `"weight"`). Build names with
    /// [`join_name`]. The order is the module's own (declaration order);
    /// state dicts sort by name anyway.
    fn named_params(&self, prefix: &str, out: &mut Vec<(String, Param)>);

    /// Switches between training (`true`) and evaluation mode. Modules
    /// whose forward pass ignores the mode keep this default, which does
    /// nothing; containers pass it on to their children.
    fn set_training(&mut self, training: bool) {
        let _ = training;
    }

    /// Whether the module is in training mode. Modules without a mode
    /// answer `true` (a stateless module behaves the same in both, and a
    /// fresh module starts in training mode, as in PyTorch); modules with
    /// a mode store it.
    fn is_training(&self) -> bool {
        true
    }

    /// The trainable parameters with their names (buffers left out): what
    /// an optimizer is built over.
    fn named_parameters(&self) -> Vec<(String, Param)> {
        let mut all = Vec::new();
        self.named_params("", &mut all);
        all.retain(|(_, p)| p.is_trainable());
        all
    }

    /// The trainable parameters, without names.
    fn parameters(&self) -> Vec<Param> {
        self.named_parameters()
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    }

    /// The buffers (saved, never trained) with their names.
    fn named_buffers(&self) -> Vec<(String, Param)> {
        let mut all = Vec::new();
        self.named_params("", &mut all);
        all.retain(|(_, p)| !p.is_trainable());
        all
    }

    /// Training mode: dropout drops, batch norm uses and updates batch
    /// statistics.
    fn train(&mut self) {
        self.set_training(true);
    }

    /// Evaluation mode: dropout is the identity, batch norm uses its
    /// running statistics.
    fn eval(&mut self) {
        self.set_training(false);
    }

    /// Clears the accumulated gradient of every trainable parameter.
    fn zero_grad(&self) {
        for p in self.parameters() {
            p.zero_grad();
        }
    }

    /// The number of trainable scalars (buffers not counted).
    fn num_parameters(&self) -> usize {
        self.parameters().iter().map(|p| p.tensor().numel()).sum()
    }

    /// Every parameter and buffer by name, detached from the graph: what
    /// a checkpoint saves. A slot reachable under two names (a tied
    /// weight) appears under both.
    fn state_dict(&self) -> BTreeMap<String, Tensor> {
        let mut all = Vec::new();
        self.named_params("", &mut all);
        all.into_iter()
            .map(|(name, p)| (name, p.tensor().detach()))
            .collect()
    }

    /// Loads a state dict strictly: it must hold exactly this module's
    /// names, each with the shape and dtype the module has. Values on
    /// another device are moved to the parameter's device.
    ///
    /// All or nothing: every entry is checked (and moved) before any slot
    /// is written, so on error the module is unchanged. Accumulated
    /// gradients are kept, as [`Param::set`] keeps them.
    ///
    /// This takes `&self` because a module's state lives in shared
    /// [`Param`] slots; holding the module mutably is not needed to
    /// replace their contents.
    ///
    /// Errors: [`Error::StateDict`] naming the first offending tensor (in
    /// name order: a name the module has but the dict lacks is
    /// [`StateDictProblem::Missing`], a wrong shape or dtype is
    /// [`StateDictProblem::Shape`] / [`StateDictProblem::DType`]; then a
    /// name the module does not have is [`StateDictProblem::Unexpected`]),
    /// or the device-move error.
    fn load_state_dict(&self, dict: &BTreeMap<String, Tensor>) -> Result<()> {
        let mut all = Vec::new();
        self.named_params("", &mut all);
        let plan = plan_load(&all, dict)?;
        for (param, value) in plan {
            param.set(value)?;
        }
        Ok(())
    }
}

const LOAD_OP: &str = "load_state_dict";

/// Checks `dict` against `params` and pairs each slot with its (moved)
/// value, writing nothing.
fn plan_load(
    params: &[(String, Param)],
    dict: &BTreeMap<String, Tensor>,
) -> Result<Vec<(Param, Tensor)>> {
    let problem = |name: &str, problem| Error::StateDict {
        op: LOAD_OP,
        name: name.to_string(),
        problem,
    };
    let mut sorted: Vec<&(String, Param)> = params.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut plan = Vec::with_capacity(sorted.len());
    for (name, param) in sorted {
        let current = param.tensor();
        let Some(value) = dict.get(name) else {
            return Err(problem(name, StateDictProblem::Missing));
        };
        if value.shape() != current.shape() {
            return Err(problem(
                name,
                StateDictProblem::Shape {
                    expected: current.shape().clone(),
                    got: value.shape().clone(),
                },
            ));
        }
        if value.dtype() != current.dtype() {
            return Err(problem(
                name,
                StateDictProblem::DType {
                    expected: current.dtype(),
                    got: value.dtype(),
                },
            ));
        }
        let value = if value.device() == current.device() {
            value.clone()
        } else {
            value.to_device(current.device())?
        };
        plan.push((param.clone(), value));
    }
    let known: BTreeSet<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
    if let Some(extra) = dict.keys().find(|k| !known.contains(k.as_str())) {
        return Err(problem(extra, StateDictProblem::Unexpected));
    }
    Ok(plan)
}

/// `prefix.name`, or just `name` under an empty prefix: how a module
/// names its own params inside [`Module::named_params`].
pub fn join_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

impl<M: Module + ?Sized> Module for Box<M> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        (**self).forward(x)
    }

    fn named_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        (**self).named_params(prefix, out);
    }

    fn set_training(&mut self, training: bool) {
        (**self).set_training(training);
    }

    fn is_training(&self) -> bool {
        (**self).is_training()
    }
}
