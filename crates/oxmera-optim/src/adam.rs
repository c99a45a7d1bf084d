//! Adam (with L2 weight decay folded into the gradient) and AdamW (with
//! decoupled weight decay), as `torch.optim.Adam` and `torch.optim.AdamW`
//! define them, bias correction included.

use std::collections::BTreeMap;

use oxmera_core::Result;
use oxmera_nn::Param;
use oxmera_tensor::{Tensor, no_grad};

use crate::Optimizer;
use crate::common::{
    Field, FieldKind, STEP_KEY, check_lr, check_params, count_tensor, field_key, load_state,
    non_negative, unit_interval, value_and_grad,
};

/// The hyperparameters of [`Adam`]; the default is PyTorch's.
#[derive(Clone, Debug, PartialEq)]
pub struct AdamConfig {
    /// The learning rate, `>= 0` (default `1e-3`).
    pub lr: f64,
    /// The decay rates `(β1, β2)` of the first and second moments, each in
    /// `[0, 1)` (default `(0.9, 0.999)`).
    pub betas: (f64, f64),
    /// Added to the denominator for numerical stability, `>= 0` (default
    /// `1e-8`).
    pub eps: f64,
    /// L2 penalty `λ`, `>= 0`: `λ·p` is added to the gradient before the
    /// moments see it (default 0).
    pub weight_decay: f64,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
        }
    }
}

/// The hyperparameters of [`AdamW`]; the default is PyTorch's, which
/// differs from Adam's only in `weight_decay = 0.01`.
#[derive(Clone, Debug, PartialEq)]
pub struct AdamWConfig {
    /// The learning rate, `>= 0` (default `1e-3`).
    pub lr: f64,
    /// The decay rates `(β1, β2)` of the first and second moments, each in
    /// `[0, 1)` (default `(0.9, 0.999)`).
    pub betas: (f64, f64),
    /// Added to the denominator for numerical stability, `>= 0` (default
    /// `1e-8`).
    pub eps: f64,
    /// Decoupled weight decay `λ`, `>= 0`: each step first scales `p` by
    /// `1 - lr·λ` (default `0.01`).
    pub weight_decay: f64,
}

impl Default for AdamWConfig {
    fn default() -> Self {
        AdamWConfig {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.01,
        }
    }
}

/// How weight decay enters the update: the one difference between Adam and
/// AdamW.
#[derive(Clone, Copy, PartialEq)]
enum Decay {
    /// Adam: `λ·p` is added to the gradient.
    L2,
    /// AdamW: `p` is scaled by `1 - lr·λ` before the update.
    Decoupled,
}

/// The hyperparameters both variants share, checked.
#[derive(Clone)]
struct Hyper {
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
    decay: Decay,
}

impl Hyper {
    fn new(
        op: &'static str,
        lr: f64,
        betas: (f64, f64),
        eps: f64,
        weight_decay: f64,
        decay: Decay,
    ) -> Result<Hyper> {
        non_negative(op, "lr", lr)?;
        unit_interval(op, "betas.0", betas.0)?;
        unit_interval(op, "betas.1", betas.1)?;
        non_negative(op, "eps", eps)?;
        non_negative(op, "weight_decay", weight_decay)?;
        Ok(Hyper {
            lr,
            beta1: betas.0,
            beta2: betas.1,
            eps,
            weight_decay,
            decay,
        })
    }
}

/// One parameter's moments and its own step count, which drives the bias
/// correction (a parameter that missed steps for lack of a gradient is
/// corrected for the steps it took, as in PyTorch).
#[derive(Clone)]
struct Moments {
    step: u64,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
}

const EXP_AVG: &str = "exp_avg";
const EXP_AVG_SQ: &str = "exp_avg_sq";
const PARAM_STEP: &str = "step";

const FIELDS: &[Field] = &[
    Field {
        name: EXP_AVG,
        kind: FieldKind::LikeParam,
    },
    Field {
        name: EXP_AVG_SQ,
        kind: FieldKind::LikeParam,
    },
    Field {
        name: PARAM_STEP,
        kind: FieldKind::Count,
    },
];

/// The machinery of both variants; `Adam` and `AdamW` are thin wrappers
/// that keep their own config types.
struct Core {
    params: Vec<(String, Param)>,
    hyper: Hyper,
    moments: Vec<Option<Moments>>,
    steps: u64,
    step_op: &'static str,
    load_op: &'static str,
}

impl Core {
    fn new(params: Vec<(String, Param)>, hyper: Hyper, name: Names) -> Result<Core> {
        check_params(name.new, &params)?;
        let moments = vec![None; params.len()];
        Ok(Core {
            params,
            hyper,
            moments,
            steps: 0,
            step_op: name.step,
            load_op: name.load,
        })
    }

    /// The new value and moments of one parameter, in its dtype, in the
    /// order of the formula on [`Adam`].
    fn update(&self, value: &Tensor, grad: &Tensor, state: Option<&Moments>) -> Result<(Tensor, Moments)> {
        let h = &self.hyper;
        let mut p = value.clone();
        let mut g = grad.clone();
        if h.weight_decay != 0.0 {
            match h.decay {
                Decay::L2 => g = g.add(&p.mul_scalar(h.weight_decay)?)?,
                Decay::Decoupled => p = p.mul_scalar(1.0 - h.lr * h.weight_decay)?,
            }
        }
        let (step, m, v) = match state {
            Some(s) => (s.step, s.exp_avg.clone(), s.exp_avg_sq.clone()),
            None => (0, value.zeros_like()?, value.zeros_like()?),
        };
        let step = step + 1;
        let m = m.mul_scalar(h.beta1)?.add(&g.mul_scalar(1.0 - h.beta1)?)?;
        let v = v
            .mul_scalar(h.beta2)?
            .add(&g.mul(&g)?.mul_scalar(1.0 - h.beta2)?)?;
        // The corrections are computed in f64 from the parameter's own
        // count; only the final factors are rounded to its dtype.
        let t = step as f64;
        let bias1 = 1.0 - h.beta1.powf(t);
        let bias2 = 1.0 - h.beta2.powf(t);
        let denom = v.sqrt()?.div_scalar(bias2.sqrt())?.add_scalar(h.eps)?;
        let p = p.sub(&m.div(&denom)?.mul_scalar(h.lr / bias1)?)?;
        Ok((
            p,
            Moments {
                step,
                exp_avg: m,
                exp_avg_sq: v,
            },
        ))
    }

    fn step(&mut self) -> Result<()> {
        check_lr(self.step_op, self.hyper.lr)?;
        // Every new value is computed before any slot is written, so an
        // error leaves all parameters and moments as they were.
        let updates = no_grad(|| -> Result<Vec<(usize, Tensor, Moments)>> {
            let mut updates = Vec::new();
            for (i, (_, param)) in self.params.iter().enumerate() {
                if let Some((value, grad)) = value_and_grad(self.step_op, param)? {
                    let (new_value, moments) = self.update(&value, &grad, self.moments[i].as_ref())?;
                    updates.push((i, new_value, moments));
                }
            }
            Ok(updates)
        })?;
        for (i, new_value, moments) in updates {
            self.params[i].1.set(new_value)?;
            self.moments[i] = Some(moments);
        }
        self.steps += 1;
        Ok(())
    }

    fn zero_grad(&self) {
        for (_, param) in &self.params {
            param.zero_grad();
        }
    }

    fn state_dict(&self) -> Result<BTreeMap<String, Tensor>> {
        let mut dict = BTreeMap::new();
        dict.insert(
            STEP_KEY.to_string(),
            count_tensor(self.steps, &self.params[0].1.tensor())?,
        );
        for ((name, _), state) in self.params.iter().zip(&self.moments) {
            if let Some(s) = state {
                dict.insert(field_key(name, EXP_AVG), s.exp_avg.clone());
                dict.insert(field_key(name, EXP_AVG_SQ), s.exp_avg_sq.clone());
                dict.insert(field_key(name, PARAM_STEP), count_tensor(s.step, &s.exp_avg)?);
            }
        }
        Ok(dict)
    }

    fn load_state_dict(&mut self, dict: &BTreeMap<String, Tensor>) -> Result<()> {
        let loaded = load_state(self.load_op, dict, &self.params, FIELDS)?;
        self.steps = loaded.steps;
        self.moments = loaded
            .per_param
            .into_iter()
            .map(|state| {
                state.map(|v| Moments {
                    exp_avg: v[0].tensor(),
                    exp_avg_sq: v[1].tensor(),
                    step: v[2].count(),
                })
            })
            .collect();
        Ok(())
    }
}

/// The op names one variant reports in its errors.
struct Names {
    new: &'static str,
    step: &'static str,
    load: &'static str,
}

/// Adam: adaptive moment estimation with bias correction.
///
/// For a parameter `p` with gradient `g` and its own step count `t`
/// (counting this step), one step computes, in `p`'s dtype and in this
/// order:
///
/// ```text
/// g = g + λ·p                          (when weight_decay λ > 0)
/// m = β1·m + (1 - β1)·g                (m, v start at zero)
/// v = β2·v + (1 - β2)·(g·g)
/// p = p - (lr / (1 - β1^t)) · m / (sqrt(v) / sqrt(1 - β2^t) + eps)
/// ```
///
/// A parameter without a gradient is skipped: its moments and count stay
/// as they were. The state dict holds `"<param>.exp_avg"` (m),
/// `"<param>.exp_avg_sq"` (v) and `"<param>.step"` (t, an i64 scalar) for
/// each parameter that has been stepped.
///
/// In f16 the default `eps = 1e-8` rounds to zero, as every scalar takes
/// the parameter's dtype; train half-precision parameters with a larger
/// `eps` (or keep an f32 master copy).
pub struct Adam {
    core: Core,
    config: AdamConfig,
}

impl Adam {
    /// An optimizer over `params` (names as
    /// `Module::named_parameters()` gives them).
    ///
    /// Errors ([`oxmera_core::Error::InvalidArgument`], `op`
    /// `"Adam::new"`): a negative or non-finite `lr`, `eps` or
    /// `weight_decay`; a beta outside `[0, 1)`; an empty parameter list or
    /// a name given twice.
    pub fn new(params: Vec<(String, Param)>, config: AdamConfig) -> Result<Adam> {
        let hyper = Hyper::new(
            "Adam::new",
            config.lr,
            config.betas,
            config.eps,
            config.weight_decay,
            Decay::L2,
        )?;
        let names = Names {
            new: "Adam::new",
            step: "Adam::step",
            load: "Adam::load_state_dict",
        };
        Ok(Adam {
            core: Core::new(params, hyper, names)?,
            config,
        })
    }

    /// The hyperparameters (with the current learning rate).
    pub fn config(&self) -> &AdamConfig {
        &self.config
    }
}

/// AdamW: Adam with decoupled weight decay (Loshchilov and Hutter).
///
/// The same update as [`Adam`] except for weight decay, which does not
/// touch the gradient or the moments: the step starts by scaling the
/// parameter, `p = p·(1 - lr·λ)`, and then applies Adam's update (with no
/// L2 term) to the scaled value. The state dict has the same keys as
/// Adam's.
pub struct AdamW {
    core: Core,
    config: AdamWConfig,
}

impl AdamW {
    /// An optimizer over `params` (names as
    /// `Module::named_parameters()` gives them).
    ///
    /// Errors ([`oxmera_core::Error::InvalidArgument`], `op`
    /// `"AdamW::new"`): as for [`Adam::new`].
    pub fn new(params: Vec<(String, Param)>, config: AdamWConfig) -> Result<AdamW> {
        let hyper = Hyper::new(
            "AdamW::new",
            config.lr,
            config.betas,
            config.eps,
            config.weight_decay,
            Decay::Decoupled,
        )?;
        let names = Names {
            new: "AdamW::new",
            step: "AdamW::step",
            load: "AdamW::load_state_dict",
        };
        Ok(AdamW {
            core: Core::new(params, hyper, names)?,
            config,
        })
    }

    /// The hyperparameters (with the current learning rate).
    pub fn config(&self) -> &AdamWConfig {
        &self.config
    }
}

macro_rules! delegate_optimizer {
    ($ty:ty) => {
        impl Optimizer for $ty {
            fn step(&mut self) -> Result<()> {
                self.core.step()
            }

            fn zero_grad(&mut self) {
                self.core.zero_grad();
            }

            fn lr(&self) -> f64 {
                self.config.lr
            }

            fn set_lr(&mut self, lr: f64) {
                self.config.lr = lr;
                self.core.hyper.lr = lr;
            }

            fn steps_taken(&self) -> u64 {
                self.core.steps
            }

            fn params(&self) -> &[(String, Param)] {
                &self.core.params
            }

            fn state_dict(&self) -> Result<BTreeMap<String, Tensor>> {
                self.core.state_dict()
            }

            fn load_state_dict(&mut self, dict: &BTreeMap<String, Tensor>) -> Result<()> {
                self.core.load_state_dict(dict)
            }
        }
    };
}

delegate_optimizer!(Adam);
delegate_optimizer!(AdamW);
