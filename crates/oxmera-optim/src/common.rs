//! What every optimizer shares: checking hyperparameters and the parameter
//! list, reading a gradient, and reading a state dict strictly.

use std::collections::{BTreeMap, BTreeSet};

use oxmera_core::{DType, Error, Result, Shape, StateDictProblem};
use oxmera_nn::Param;
use oxmera_tensor::Tensor;

/// The state-dict key of the number of `step()` calls.
pub(crate) const STEP_KEY: &str = "step";

/// `Err(InvalidArgument)` unless `value` is finite and `>= 0`.
pub(crate) fn non_negative(op: &'static str, name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            op,
            name,
            format!("must be a finite number >= 0, got {value}"),
        ))
    }
}

/// `Err(InvalidArgument)` unless `0 <= value < 1`.
pub(crate) fn unit_interval(op: &'static str, name: &'static str, value: f64) -> Result<()> {
    if (0.0..1.0).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(
            op,
            name,
            format!("must lie in [0, 1), got {value}"),
        ))
    }
}

/// Refuses an empty list and a name given twice: the names key the state
/// dict, so two params under one name would overwrite each other's state.
pub(crate) fn check_params(op: &'static str, params: &[(String, Param)]) -> Result<()> {
    if params.is_empty() {
        return Err(Error::invalid(
            op,
            "params",
            "the parameter list is empty (pass the model's named_parameters())",
        ));
    }
    let mut seen = BTreeSet::new();
    for (name, param) in params {
        // Held by an optimizer now, so its gradient will be used.
        param.mark_registered();
        if !seen.insert(name.as_str()) {
            return Err(Error::invalid(
                op,
                "params",
                format!("the name {name:?} appears more than once"),
            ));
        }
    }
    Ok(())
}

/// On an optimizer's first step (`*checked` false), refuses a parameter
/// made on this thread that holds a gradient no module listed and no
/// optimizer holds ([`oxmera_nn::check_registered`]): the forgotten
/// child of a hand-written module, which would otherwise train silently
/// without it. Later steps skip the scan.
pub(crate) fn check_registration_once(op: &'static str, checked: &mut bool) -> Result<()> {
    if !*checked {
        oxmera_nn::check_registered(op)?;
        *checked = true;
    }
    Ok(())
}

/// The value and gradient of `param`, both detached, when it is trainable
/// and has a gradient; `None` when the step must skip it.
///
/// A gradient of another shape or dtype than its parameter would broadcast
/// silently into a wrong update (and a wrongly shaped state buffer), so it
/// is refused here.
pub(crate) fn value_and_grad(op: &'static str, param: &Param) -> Result<Option<(Tensor, Tensor)>> {
    if !param.is_trainable() {
        return Ok(None);
    }
    let value = param.tensor();
    let Some(grad) = value.grad() else {
        return Ok(None);
    };
    if grad.shape() != value.shape() {
        return Err(Error::ShapeMismatch {
            op,
            lhs: value.shape().clone(),
            rhs: grad.shape().clone(),
        });
    }
    if grad.dtype() != value.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            lhs: value.dtype(),
            rhs: grad.dtype(),
        });
    }
    Ok(Some((value.detach(), grad.detach())))
}

/// `Err(InvalidArgument)` unless `lr` is usable. `set_lr` cannot fail, so
/// `step` checks the rate it is about to use.
pub(crate) fn check_lr(op: &'static str, lr: f64) -> Result<()> {
    non_negative(op, "lr", lr)
}

/// A count (the step number) as a rank-0 i64 tensor on `like`'s device.
pub(crate) fn count_tensor(count: u64, like: &Tensor) -> Result<Tensor> {
    // Beyond i64::MAX steps is beyond any run; saturate rather than wrap.
    let value = i64::try_from(count).unwrap_or(i64::MAX);
    Tensor::scalar(value, like.device())
}

/// The state-dict key of one field of one parameter.
pub(crate) fn field_key(param: &str, field: &str) -> String {
    format!("{param}.{field}")
}

/// What one per-parameter entry of a state dict holds.
#[derive(Clone, Copy)]
pub(crate) enum FieldKind {
    /// A tensor of the parameter's shape and dtype (a moment, a buffer).
    LikeParam,
    /// A non-negative count, as a rank-0 i64 tensor.
    Count,
}

/// One per-parameter entry of an optimizer's state.
#[derive(Clone, Copy)]
pub(crate) struct Field {
    /// The key suffix after `"<param>."`.
    pub name: &'static str,
    /// What the entry holds.
    pub kind: FieldKind,
}

/// One loaded entry.
pub(crate) enum Value {
    /// A tensor, on the parameter's device, detached.
    Tensor(Tensor),
    /// A count.
    Count(u64),
}

impl Value {
    /// The tensor; a broken invariant when the field spec said `Count`.
    pub(crate) fn tensor(&self) -> Tensor {
        match self {
            Value::Tensor(t) => t.clone(),
            Value::Count(_) => unreachable!("field declared as a tensor"),
        }
    }

    /// The count; a broken invariant when the field spec said `LikeParam`.
    pub(crate) fn count(&self) -> u64 {
        match self {
            Value::Count(n) => *n,
            Value::Tensor(_) => unreachable!("field declared as a count"),
        }
    }
}

/// A state dict, validated: the step count and, per parameter in order,
/// either no state or one value per field in the order of the field list.
pub(crate) struct Loaded {
    /// The number of `step()` calls.
    pub steps: u64,
    /// One entry per parameter.
    pub per_param: Vec<Option<Vec<Value>>>,
}

fn state_error(op: &'static str, name: &str, problem: StateDictProblem) -> Error {
    Error::StateDict {
        op,
        name: name.to_string(),
        problem,
    }
}

fn read_count(op: &'static str, key: &str, t: &Tensor) -> Result<u64> {
    if t.dtype() != DType::I64 {
        return Err(state_error(
            op,
            key,
            StateDictProblem::DType {
                expected: DType::I64,
                got: t.dtype(),
            },
        ));
    }
    if t.rank() != 0 {
        return Err(state_error(
            op,
            key,
            StateDictProblem::Shape {
                expected: Shape::scalar(),
                got: t.shape().clone(),
            },
        ));
    }
    let value = t.to_vec::<i64>()?[0];
    u64::try_from(value).map_err(|_| {
        Error::invalid(
            op,
            "state dict",
            format!("tensor {key:?}: a step count must be >= 0, got {value}"),
        )
    })
}

fn read_like(op: &'static str, key: &str, t: &Tensor, param: &Tensor) -> Result<Tensor> {
    if t.shape() != param.shape() {
        return Err(state_error(
            op,
            key,
            StateDictProblem::Shape {
                expected: param.shape().clone(),
                got: t.shape().clone(),
            },
        ));
    }
    if t.dtype() != param.dtype() {
        return Err(state_error(
            op,
            key,
            StateDictProblem::DType {
                expected: param.dtype(),
                got: t.dtype(),
            },
        ));
    }
    t.detach().to_device(param.device())
}

/// Validates all of `dict` before anything is changed, so a failed load
/// leaves the optimizer as it was.
///
/// The rules: `"step"` must be present; a parameter's fields are all
/// present or all absent (absent: it has not been stepped yet, as when it
/// never had a gradient); every key must be `"step"` or a field of a known
/// parameter. Problems are reported in a fixed order: `"step"`, then the
/// parameters in order, then unexpected keys in sorted order.
pub(crate) fn load_state(
    op: &'static str,
    dict: &BTreeMap<String, Tensor>,
    params: &[(String, Param)],
    fields: &[Field],
) -> Result<Loaded> {
    let step = dict
        .get(STEP_KEY)
        .ok_or_else(|| state_error(op, STEP_KEY, StateDictProblem::Missing))?;
    let steps = read_count(op, STEP_KEY, step)?;
    let mut used: BTreeSet<String> = BTreeSet::from([STEP_KEY.to_string()]);
    let mut per_param = Vec::with_capacity(params.len());
    for (name, param) in params {
        let value = param.tensor();
        let mut got = Vec::with_capacity(fields.len());
        let mut first_missing = None;
        for field in fields {
            let key = field_key(name, field.name);
            match dict.get(&key) {
                Some(t) => {
                    got.push(match field.kind {
                        FieldKind::LikeParam => Value::Tensor(read_like(op, &key, t, &value)?),
                        FieldKind::Count => Value::Count(read_count(op, &key, t)?),
                    });
                    used.insert(key);
                }
                None => {
                    first_missing.get_or_insert(key);
                }
            }
        }
        if got.is_empty() {
            per_param.push(None);
        } else if let Some(key) = first_missing {
            return Err(state_error(op, &key, StateDictProblem::Missing));
        } else {
            per_param.push(Some(got));
        }
    }
    if let Some(key) = dict.keys().find(|k| !used.contains(*k)) {
        return Err(state_error(op, key, StateDictProblem::Unexpected));
    }
    Ok(Loaded { steps, per_param })
}
