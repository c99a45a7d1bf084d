//! Stochastic gradient descent with momentum, dampening, Nesterov momentum
//! and L2 weight decay, as `torch.optim.SGD` defines them.

use std::collections::BTreeMap;

use oxmera_core::{Error, Result};
use oxmera_nn::Param;
use oxmera_tensor::{Tensor, no_grad};

use crate::Optimizer;
use crate::common::{
    Field, FieldKind, STEP_KEY, check_lr, check_params, count_tensor, field_key, load_state,
    non_negative, value_and_grad,
};

/// The hyperparameters of [`Sgd`].
///
/// The default is plain SGD with PyTorch's current default learning rate,
/// `lr = 1e-3`, and no momentum, dampening or weight decay.
#[derive(Clone, Debug, PartialEq)]
pub struct SgdConfig {
    /// The learning rate, `>= 0`.
    pub lr: f64,
    /// The momentum factor `μ`, `>= 0`; 0 turns momentum off.
    pub momentum: f64,
    /// The dampening `τ` of the momentum, in `[0, 1]`: a new gradient
    /// enters the buffer scaled by `1 - τ` (not on the first step, which
    /// takes the gradient as it is, as PyTorch does).
    pub dampening: f64,
    /// Nesterov momentum: step along `g + μ·buf` instead of `buf`. Needs
    /// `momentum > 0` and `dampening == 0`.
    pub nesterov: bool,
    /// L2 penalty `λ`, `>= 0`: `λ·p` is added to the gradient.
    pub weight_decay: f64,
}

impl Default for SgdConfig {
    fn default() -> Self {
        SgdConfig {
            lr: 1e-3,
            momentum: 0.0,
            dampening: 0.0,
            nesterov: false,
            weight_decay: 0.0,
        }
    }
}

impl SgdConfig {
    fn validate(&self) -> Result<()> {
        const OP: &str = "Sgd::new";
        non_negative(OP, "lr", self.lr)?;
        non_negative(OP, "momentum", self.momentum)?;
        non_negative(OP, "weight_decay", self.weight_decay)?;
        if !(0.0..=1.0).contains(&self.dampening) {
            return Err(Error::invalid(
                OP,
                "dampening",
                format!("must lie in [0, 1], got {}", self.dampening),
            ));
        }
        if self.nesterov && (self.momentum == 0.0 || self.dampening != 0.0) {
            return Err(Error::invalid(
                OP,
                "nesterov",
                format!(
                    "Nesterov momentum needs momentum > 0 and dampening == 0, got momentum {} and dampening {}",
                    self.momentum, self.dampening
                ),
            ));
        }
        Ok(())
    }
}

/// The per-parameter state key of the momentum buffer.
const MOMENTUM_BUFFER: &str = "momentum_buffer";

const FIELDS: &[Field] = &[Field {
    name: MOMENTUM_BUFFER,
    kind: FieldKind::LikeParam,
}];

/// Stochastic gradient descent.
///
/// For a parameter `p` with gradient `g`, one step computes, in `p`'s
/// dtype and in this order:
///
/// ```text
/// g   = g + λ·p                       (when weight_decay λ > 0)
/// buf = g                             (first step with momentum μ > 0)
/// buf = μ·buf + (1 - τ)·g             (later steps)
/// g   = g + μ·buf   if nesterov, else   g = buf
/// p   = p - lr·g
/// ```
///
/// A parameter without a gradient is skipped, and its buffer (if any) is
/// left as it was. With `momentum == 0` there is no state beyond the step
/// count; otherwise the state dict holds `"<param>.momentum_buffer"` for
/// each parameter that has been stepped.
pub struct Sgd {
    params: Vec<(String, Param)>,
    config: SgdConfig,
    buffers: Vec<Option<Tensor>>,
    steps: u64,
}

impl Sgd {
    /// An optimizer over `params` (names as
    /// `Module::named_parameters()` gives them).
    ///
    /// Errors ([`Error::InvalidArgument`], `op` `"Sgd::new"`): a negative or
    /// non-finite `lr`, `momentum` or `weight_decay`; `dampening` outside
    /// `[0, 1]`; `nesterov` without momentum or with dampening; an empty
    /// parameter list or a name given twice.
    pub fn new(params: Vec<(String, Param)>, config: SgdConfig) -> Result<Sgd> {
        config.validate()?;
        check_params("Sgd::new", &params)?;
        let buffers = vec![None; params.len()];
        Ok(Sgd {
            params,
            config,
            buffers,
            steps: 0,
        })
    }

    /// The hyperparameters (with the current learning rate).
    pub fn config(&self) -> &SgdConfig {
        &self.config
    }

    /// The new value and buffer of one parameter.
    fn update(&self, value: &Tensor, grad: &Tensor, buf: Option<&Tensor>) -> Result<(Tensor, Option<Tensor>)> {
        let c = &self.config;
        let mut g = grad.clone();
        if c.weight_decay != 0.0 {
            g = g.add(&value.mul_scalar(c.weight_decay)?)?;
        }
        let mut new_buf = None;
        if c.momentum != 0.0 {
            let b = match buf {
                None => g.clone(),
                Some(b) => b.mul_scalar(c.momentum)?.add(&g.mul_scalar(1.0 - c.dampening)?)?,
            };
            g = if c.nesterov {
                g.add(&b.mul_scalar(c.momentum)?)?
            } else {
                b.clone()
            };
            new_buf = Some(b);
        }
        Ok((value.sub(&g.mul_scalar(c.lr)?)?, new_buf))
    }
}

impl Optimizer for Sgd {
    fn step(&mut self) -> Result<()> {
        const OP: &str = "Sgd::step";
        check_lr(OP, self.config.lr)?;
        // Every new value is computed before any slot is written, so an
        // error leaves all parameters and buffers as they were.
        let updates = no_grad(|| -> Result<Vec<(usize, Tensor, Option<Tensor>)>> {
            let mut updates = Vec::new();
            for (i, (_, param)) in self.params.iter().enumerate() {
                if let Some((value, grad)) = value_and_grad(OP, param)? {
                    let (new_value, new_buf) = self.update(&value, &grad, self.buffers[i].as_ref())?;
                    updates.push((i, new_value, new_buf));
                }
            }
            Ok(updates)
        })?;
        for (i, new_value, new_buf) in updates {
            self.params[i].1.set(new_value)?;
            self.buffers[i] = new_buf;
        }
        self.steps += 1;
        Ok(())
    }

    fn zero_grad(&mut self) {
        for (_, param) in &self.params {
            param.zero_grad();
        }
    }

    fn lr(&self) -> f64 {
        self.config.lr
    }

    fn set_lr(&mut self, lr: f64) {
        self.config.lr = lr;
    }

    fn steps_taken(&self) -> u64 {
        self.steps
    }

    fn params(&self) -> &[(String, Param)] {
        &self.params
    }

    fn state_dict(&self) -> Result<BTreeMap<String, Tensor>> {
        let mut dict = BTreeMap::new();
        dict.insert(
            STEP_KEY.to_string(),
            count_tensor(self.steps, &self.params[0].1.tensor())?,
        );
        for ((name, _), buf) in self.params.iter().zip(&self.buffers) {
            if let Some(buf) = buf {
                dict.insert(field_key(name, MOMENTUM_BUFFER), buf.clone());
            }
        }
        Ok(dict)
    }

    fn load_state_dict(&mut self, dict: &BTreeMap<String, Tensor>) -> Result<()> {
        // Without momentum there are no buffers, so one in the dict is
        // unexpected: it came from a differently configured optimizer.
        let fields = if self.config.momentum != 0.0 { FIELDS } else { &[] };
        let loaded = load_state("Sgd::load_state_dict", dict, &self.params, fields)?;
        self.steps = loaded.steps;
        self.buffers = loaded
            .per_param
            .into_iter()
            .map(|state| state.map(|values| values[0].tensor()))
            .collect();
        Ok(())
    }
}
