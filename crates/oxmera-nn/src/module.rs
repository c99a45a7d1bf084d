//! The `Module` trait: a forward pass plus named parameters and buffers.

use std::collections::{BTreeMap, BTreeSet};

use oxmera_core::{Error, Result, StateDictProblem};
use oxmera_tensor::Tensor;

use crate::Param;

/// A layer or a model: a forward pass ([`Module::forward`]) over state
/// held in named [`Param`]s ([`ModuleState`], its supertrait).
///
/// The two halves are two traits so that the state half can be derived:
/// `#[derive(Module)]` writes [`ModuleState`] from the struct's fields
/// (every [`Param`], child module, and `Vec`/`Option` of them, by field
/// name), and the program writes only `impl Module { fn forward }`. A
/// hand-written [`ModuleState::visit_params`] that forgets a child is
/// caught at the optimizer's first step ([`crate::check_registered`]).
///
/// Everything else — parameter lists, gradient zeroing, state dicts — is
/// derived from the names. A name is the dotted path from the root
/// module: a `Sequential` names its children `"0"`, `"1"`, …, so the
/// weight of its first layer is `"0.weight"`, as in PyTorch, which lets
/// state dicts travel between the two.
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
pub trait Module: ModuleState {
    /// The forward pass. Autograd records it: every op on a parameter's
    /// tensor is part of the graph unless run under `no_grad`.
    fn forward(&self, x: &Tensor) -> Result<Tensor>;

    /// The trainable parameters with their names (buffers left out): what
    /// an optimizer is built over. Each is marked registered
    /// ([`Param::mark_registered`]); an optimizer's first step refuses a
    /// parameter with a gradient that no module listed
    /// ([`crate::check_registered`]).
    fn named_parameters(&self) -> Vec<(String, Param)> {
        let mut all = Vec::new();
        self.visit_params("", &mut all);
        all.retain(|(_, p)| p.is_trainable());
        for (_, p) in &all {
            p.mark_registered();
        }
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
        self.visit_params("", &mut all);
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
        self.visit_params("", &mut all);
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
        self.visit_params("", &mut all);
        let plan = plan_load(&all, dict)?;
        for (param, value) in plan {
            param.set(value)?;
        }
        Ok(())
    }
}

/// What a module holds: its parameters and buffers by name, and its
/// training mode. `#[derive(Module)]` writes it from the fields; by hand,
/// [`ModuleState::visit_params`] lists every [`Param`] and child.
pub trait ModuleState: Send + Sync {
    /// The visitor behind [`Module::named_parameters`] and the state dict
    /// (a program calls those; a module implements this): appends every
    /// parameter **and** buffer to `out`, each with its dotted name under
    /// `prefix` (`"0.weight"`, `"bn.running_mean"`;
    /// with an empty prefix, just `"weight"`). Build names with
    /// [`join_name`]. The order is the module's own (declaration order);
    /// state dicts sort by name anyway.
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>);

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
/// names its own params inside [`ModuleState::visit_params`].
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
}

impl<M: ModuleState + ?Sized> ModuleState for Box<M> {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        (**self).visit_params(prefix, out);
    }

    fn set_training(&mut self, training: bool) {
        (**self).set_training(training);
    }

    fn is_training(&self) -> bool {
        (**self).is_training()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use crate::{BatchNorm1d, Dropout, Linear, ReLU, Sequential};
    use oxmera_core::DType;
    use oxmera_tensor::Generator;

    fn mlp(seed: u64) -> Sequential {
        let mut rng = Generator::new(seed);
        Sequential::new()
            .push(Linear::new(3, 4, true, &mut rng, DType::F32, DEV).unwrap())
            .push(BatchNorm1d::new(4, DType::F32, DEV).unwrap())
            .push(ReLU)
            .push(Linear::new(4, 2, false, &mut rng, DType::F32, DEV).unwrap())
    }

    fn dict_err(net: &Sequential, dict: &BTreeMap<String, Tensor>) -> (String, StateDictProblem) {
        match net.load_state_dict(dict).unwrap_err() {
            Error::StateDict { op, name, problem } => {
                assert_eq!(op, "load_state_dict");
                (name, problem)
            }
            other => panic!("expected a state-dict error, got {other}"),
        }
    }

    #[test]
    fn names_split_parameters_from_buffers() {
        let net = mlp(0);
        let params: Vec<String> = net.named_parameters().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            params,
            ["0.weight", "0.bias", "1.weight", "1.bias", "3.weight"]
        );
        let buffers: Vec<String> = net.named_buffers().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            buffers,
            ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
        );
        assert_eq!(net.parameters().len(), 5);
        assert_eq!(net.num_parameters(), 3 * 4 + 4 + 4 + 4 + 4 * 2);
        assert_eq!(net.state_dict().len(), 8);
    }

    #[test]
    fn join_name_handles_the_empty_prefix() {
        assert_eq!(join_name("", "weight"), "weight");
        assert_eq!(join_name("0.1", "bias"), "0.1.bias");
    }

    #[test]
    fn state_dict_round_trip_reproduces_the_model() {
        let a = mlp(1);
        let b = mlp(2);
        let x = t32(&[0.5, -1.0, 2.0, 1.5, 0.0, -0.5], [2, 3]);
        let mut a_eval = a;
        a_eval.eval();
        let mut b_eval = b;
        b_eval.eval();
        let before = b_eval.forward(&x).unwrap().to_vec::<f32>().unwrap();
        assert_ne!(a_eval.forward(&x).unwrap().to_vec::<f32>().unwrap(), before);
        b_eval.load_state_dict(&a_eval.state_dict()).unwrap();
        assert_eq!(
            b_eval.forward(&x).unwrap().to_vec::<f32>().unwrap(),
            a_eval.forward(&x).unwrap().to_vec::<f32>().unwrap()
        );
        for ((na, ta), (nb, tb)) in a_eval.state_dict().iter().zip(b_eval.state_dict().iter()) {
            assert_eq!(na, nb);
            assert_eq!(ta.to_f64_vec().unwrap(), tb.to_f64_vec().unwrap(), "{na}");
        }
        // Loaded parameters stay trainable leaves.
        for (name, p) in b_eval.named_parameters() {
            assert!(p.tensor().requires_grad(), "{name}");
        }
    }

    #[test]
    fn state_dict_is_detached() {
        let net = mlp(3);
        for (name, t) in net.state_dict() {
            assert!(!t.requires_grad(), "{name}");
        }
    }

    #[test]
    fn missing_tensor_is_named() {
        let net = mlp(4);
        let mut dict = net.state_dict();
        dict.remove("1.running_var");
        assert_eq!(
            dict_err(&net, &dict),
            ("1.running_var".to_string(), StateDictProblem::Missing)
        );
    }

    #[test]
    fn unexpected_tensor_is_named() {
        let net = mlp(5);
        let mut dict = net.state_dict();
        dict.insert("3.bias".into(), t32(&[0.0, 0.0], [2]));
        assert_eq!(
            dict_err(&net, &dict),
            ("3.bias".to_string(), StateDictProblem::Unexpected)
        );
    }

    #[test]
    fn wrong_shape_is_named_with_both_shapes() {
        let net = mlp(6);
        let mut dict = net.state_dict();
        dict.insert("0.weight".into(), t32(&[0.0; 12], [3, 4]));
        assert_eq!(
            dict_err(&net, &dict),
            (
                "0.weight".to_string(),
                StateDictProblem::Shape {
                    expected: [4, 3].into(),
                    got: [3, 4].into()
                }
            )
        );
    }

    #[test]
    fn wrong_dtype_is_named_with_both_dtypes() {
        let net = mlp(7);
        let mut dict = net.state_dict();
        dict.insert(
            "1.num_batches_tracked".into(),
            Tensor::scalar(0i32, DEV).unwrap(),
        );
        assert_eq!(
            dict_err(&net, &dict),
            (
                "1.num_batches_tracked".to_string(),
                StateDictProblem::DType {
                    expected: DType::I64,
                    got: DType::I32
                }
            )
        );
        let msg = net.load_state_dict(&dict).unwrap_err().to_string();
        assert_eq!(
            msg,
            "load_state_dict: tensor \"1.num_batches_tracked\": expected dtype i64, got i32"
        );
    }

    #[test]
    fn failed_load_changes_nothing() {
        let net = mlp(8);
        let before = net.state_dict();
        // Every entry but the last (in name order) is valid and different.
        let mut dict = mlp(9).state_dict();
        dict.insert("3.weight".into(), t32(&[0.0; 8], [8]));
        assert!(net.load_state_dict(&dict).is_err());
        for (name, t) in net.state_dict() {
            assert_eq!(
                t.to_f64_vec().unwrap(),
                before[&name].to_f64_vec().unwrap(),
                "{name} changed"
            );
        }
    }

    #[test]
    fn mode_reaches_every_child() {
        let mut net = Sequential::new()
            .push(Dropout::new(0.5, Generator::new(0)).unwrap())
            .push(Sequential::new().push(BatchNorm1d::new(2, DType::F32, DEV).unwrap()));
        assert!(net.is_training());
        net.eval();
        assert!(!net.is_training());
        assert!(net.iter().all(|m| !m.is_training()));
        // Evaluation: dropout is the identity and batch norm uses its
        // initial running statistics (mean 0, var 1), so with eps the
        // output is x / sqrt(1 + 1e-5).
        let x = t32(&[1.0, 2.0], [1, 2]);
        let y = net.forward(&x).unwrap().to_vec::<f32>().unwrap();
        let s = (1.0f64 + 1e-5).sqrt();
        assert_close(
            &y.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &[1.0 / s, 2.0 / s],
            1e-6,
        );
        net.train();
        assert!(net.iter().all(|m| m.is_training()));
    }

    #[test]
    fn zero_grad_clears_every_parameter() {
        let net = mlp(10);
        let x = t32(&[0.5, -1.0, 2.0, 1.5, 0.0, -0.5], [2, 3]);
        net.forward(&x)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert!(net.parameters().iter().all(|p| p.grad().is_some()));
        net.zero_grad();
        assert!(net.parameters().iter().all(|p| p.grad().is_none()));
    }

    #[test]
    fn boxed_modules_are_modules() {
        let mut boxed: Box<dyn Module> = Box::new(mlp(11));
        boxed.eval();
        assert!(!boxed.is_training());
        let names: Vec<String> = boxed
            .named_parameters()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names.len(), 5);
    }
}
