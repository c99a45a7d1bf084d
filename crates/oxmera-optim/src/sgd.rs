//! Stochastic gradient descent with momentum, dampening, Nesterov momentum
//! and L2 weight decay, as `torch.optim.SGD` defines them.

use std::collections::BTreeMap;

use oxmera_core::{Error, Result};
use oxmera_nn::Param;
use oxmera_tensor::fused_update::SgdStep;
use oxmera_tensor::{Tensor, no_grad};

use crate::Optimizer;
use crate::common::{
    Field, FieldKind, STEP_KEY, check_lr, check_params, check_registration_once, count_tensor,
    field_key, load_state, non_negative, value_and_grad,
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
    /// Whether the first step's registration check has run.
    registration_checked: bool,
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
            registration_checked: false,
        })
    }

    /// The hyperparameters (with the current learning rate).
    pub fn config(&self) -> &SgdConfig {
        &self.config
    }

    /// The new value and buffer of one parameter: one backend call, the
    /// formula above as tensor ops (`oxmera_tensor::fused_update::sgd`)
    /// where the backend has no fused kernel, one pass where it has.
    fn update(
        &self,
        value: &Tensor,
        grad: &Tensor,
        buf: Option<&Tensor>,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let c = &self.config;
        let step = SgdStep {
            lr: c.lr,
            momentum: c.momentum,
            dampening: c.dampening,
            nesterov: c.nesterov,
            weight_decay: c.weight_decay,
        };
        let (p, b) = value.backend()?.sgd_update(value, grad, buf, &step)?;
        let shape = value.shape();
        Ok((
            Tensor::from_storage(p, shape.clone()),
            b.map(|b| Tensor::from_storage(b, shape.clone())),
        ))
    }
}

impl Optimizer for Sgd {
    fn step(&mut self) -> Result<()> {
        const OP: &str = "Sgd::step";
        check_lr(OP, self.config.lr)?;
        check_registration_once(OP, &mut self.registration_checked)?;
        // Every new value is computed before any slot is written, so an
        // error leaves all parameters and buffers as they were.
        let updates = no_grad(|| -> Result<Vec<(usize, Tensor, Option<Tensor>)>> {
            let mut updates = Vec::new();
            for (i, (_, param)) in self.params.iter().enumerate() {
                if let Some((value, grad)) = value_and_grad(OP, param)? {
                    let (new_value, new_buf) =
                        self.update(&value, &grad, self.buffers[i].as_ref())?;
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
        let fields = if self.config.momentum != 0.0 {
            FIELDS
        } else {
            &[]
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{param, set_grad, values};
    use oxmera_core::Error;

    fn sgd(params: &[(&str, &Param)], config: SgdConfig) -> Sgd {
        let named = params
            .iter()
            .map(|(n, p)| (n.to_string(), (*p).clone()))
            .collect();
        Sgd::new(named, config).unwrap()
    }

    // Every value below is a short binary fraction, so the f64 arithmetic
    // is exact and the tests compare with ==.

    #[test]
    fn plain_sgd_with_weight_decay() {
        let p = param(&[1.0, -2.0]);
        let config = SgdConfig {
            lr: 0.5,
            weight_decay: 0.25,
            ..SgdConfig::default()
        };
        let mut opt = sgd(&[("p", &p)], config);
        // step 1: g = [1, 0.5]; g + 0.25 p = [1 + 0.25, 0.5 - 0.5] = [1.25, 0]
        //         p = [1, -2] - 0.5 [1.25, 0] = [0.375, -2]
        set_grad(&p, &[1.0, 0.5]);
        opt.step().unwrap();
        assert_eq!(values(&p), vec![0.375, -2.0]);
        // step 2: g = [-1, 2]; g + 0.25 p = [-1 + 0.09375, 2 - 0.5] = [-0.90625, 1.5]
        //         p = [0.375 + 0.453125, -2 - 0.75] = [0.828125, -2.75]
        set_grad(&p, &[-1.0, 2.0]);
        opt.step().unwrap();
        assert_eq!(values(&p), vec![0.828125, -2.75]);
        assert_eq!(opt.steps_taken(), 2);
        // no momentum: the state is the step count alone
        let dict = opt.state_dict().unwrap();
        assert_eq!(dict.keys().collect::<Vec<_>>(), vec!["step"]);
        assert_eq!(dict["step"].to_vec::<i64>().unwrap(), vec![2]);
    }

    #[test]
    fn momentum_with_dampening_skips_dampening_on_the_first_step() {
        let p = param(&[1.0]);
        let config = SgdConfig {
            lr: 0.5,
            momentum: 0.5,
            dampening: 0.5,
            ..SgdConfig::default()
        };
        let mut opt = sgd(&[("p", &p)], config);
        // step 1: buf = g = 1 (undampened, as PyTorch); p = 1 - 0.5 * 1 = 0.5
        set_grad(&p, &[1.0]);
        opt.step().unwrap();
        assert_eq!(values(&p), vec![0.5]);
        // step 2: buf = 0.5 * 1 + (1 - 0.5) * 2 = 1.5; p = 0.5 - 0.5 * 1.5 = -0.25
        set_grad(&p, &[2.0]);
        opt.step().unwrap();
        assert_eq!(values(&p), vec![-0.25]);
        // step 3: buf = 0.5 * 1.5 + 0.5 * (-4) = -1.25; p = -0.25 + 0.625 = 0.375
        set_grad(&p, &[-4.0]);
        opt.step().unwrap();
        assert_eq!(values(&p), vec![0.375]);
        let dict = opt.state_dict().unwrap();
        assert_eq!(
            dict["p.momentum_buffer"].to_vec::<f64>().unwrap(),
            vec![-1.25]
        );
    }

    #[test]
    fn nesterov_with_weight_decay() {
        let p = param(&[2.0, -1.0]);
        let config = SgdConfig {
            lr: 0.25,
            momentum: 0.5,
            nesterov: true,
            weight_decay: 0.5,
            ..SgdConfig::default()
        };
        let mut opt = sgd(&[("p", &p)], config);
        // step 1: g = [1, 1] + 0.5 [2, -1] = [2, 0.5]; buf = g = [2, 0.5]
        //         d = g + 0.5 buf = [3, 0.75]; p = [2, -1] - 0.25 d = [1.25, -1.1875]
        set_grad(&p, &[1.0, 1.0]);
        opt.step().unwrap();
        assert_eq!(values(&p), vec![1.25, -1.1875]);
        // step 2: g = [0, -1] + 0.5 [1.25, -1.1875] = [0.625, -1.59375]
        //         buf = 0.5 [2, 0.5] + g = [1.625, -1.34375]
        //         d = g + 0.5 buf = [1.4375, -2.265625]
        //         p = [1.25 - 0.359375, -1.1875 + 0.56640625] = [0.890625, -0.62109375]
        set_grad(&p, &[0.0, -1.0]);
        opt.step().unwrap();
        assert_eq!(values(&p), vec![0.890625, -0.62109375]);
        assert_eq!(
            opt.state_dict().unwrap()["p.momentum_buffer"]
                .to_vec::<f64>()
                .unwrap(),
            vec![1.625, -1.34375]
        );
    }

    #[test]
    fn a_param_without_grad_is_skipped_and_keeps_its_buffer() {
        let a = param(&[1.0]);
        let b = param(&[1.0]);
        let config = SgdConfig {
            lr: 0.5,
            momentum: 0.5,
            ..SgdConfig::default()
        };
        let mut opt = sgd(&[("a", &a), ("b", &b)], config);
        // step 1: only a has a gradient: a = 1 - 0.5 * 1 = 0.5; b has no state
        set_grad(&a, &[1.0]);
        opt.step().unwrap();
        assert_eq!((values(&a), values(&b)), (vec![0.5], vec![1.0]));
        let dict = opt.state_dict().unwrap();
        assert_eq!(
            dict.keys().collect::<Vec<_>>(),
            vec!["a.momentum_buffer", "step"]
        );
        // step 2: only b: b = 1 - 0.5 * 2 = 0 (its first buffer); a and its buffer stay
        opt.zero_grad();
        set_grad(&b, &[2.0]);
        opt.step().unwrap();
        assert_eq!((values(&a), values(&b)), (vec![0.5], vec![0.0]));
        let dict = opt.state_dict().unwrap();
        assert_eq!(
            dict["a.momentum_buffer"].to_vec::<f64>().unwrap(),
            vec![1.0]
        );
        assert_eq!(
            dict["b.momentum_buffer"].to_vec::<f64>().unwrap(),
            vec![2.0]
        );
        assert_eq!(dict["step"].to_vec::<i64>().unwrap(), vec![2]);
    }

    #[test]
    fn step_keeps_the_gradient_and_zero_grad_clears_it() {
        let p = param(&[1.0]);
        let mut opt = sgd(&[("p", &p)], SgdConfig::default());
        set_grad(&p, &[3.0]);
        opt.step().unwrap();
        assert_eq!(p.grad().unwrap().to_vec::<f64>().unwrap(), vec![3.0]);
        assert!(p.tensor().requires_grad() && p.tensor().is_leaf());
        opt.zero_grad();
        assert!(p.grad().is_none());
    }

    #[test]
    fn default_is_plain_sgd_at_pytorch_rate() {
        assert_eq!(
            SgdConfig::default(),
            SgdConfig {
                lr: 1e-3,
                momentum: 0.0,
                dampening: 0.0,
                nesterov: false,
                weight_decay: 0.0
            }
        );
    }

    #[test]
    fn invalid_hyperparameters_are_typed_errors() {
        let p = param(&[1.0]);
        let bad = |config: SgdConfig| -> &'static str {
            match Sgd::new(vec![("p".into(), p.clone())], config) {
                Err(Error::InvalidArgument { op, name, .. }) => {
                    assert_eq!(op, "Sgd::new");
                    name
                }
                Err(other) => panic!("unexpected {other:?}"),
                Ok(_) => panic!("accepted an invalid config"),
            }
        };
        let d = SgdConfig::default;
        assert_eq!(bad(SgdConfig { lr: -0.1, ..d() }), "lr");
        assert_eq!(
            bad(SgdConfig {
                lr: f64::NAN,
                ..d()
            }),
            "lr"
        );
        assert_eq!(
            bad(SgdConfig {
                lr: f64::INFINITY,
                ..d()
            }),
            "lr"
        );
        assert_eq!(
            bad(SgdConfig {
                momentum: -0.5,
                ..d()
            }),
            "momentum"
        );
        assert_eq!(
            bad(SgdConfig {
                weight_decay: -1e-4,
                ..d()
            }),
            "weight_decay"
        );
        assert_eq!(
            bad(SgdConfig {
                dampening: 1.5,
                ..d()
            }),
            "dampening"
        );
        assert_eq!(
            bad(SgdConfig {
                nesterov: true,
                ..d()
            }),
            "nesterov"
        );
        let damped = SgdConfig {
            nesterov: true,
            momentum: 0.9,
            dampening: 0.1,
            ..d()
        };
        assert_eq!(bad(damped), "nesterov");
        match Sgd::new(vec![], d()) {
            Err(Error::InvalidArgument {
                op: "Sgd::new",
                name: "params",
                ..
            }) => {}
            other => panic!("unexpected {:?}", other.err()),
        }
        let twice = vec![
            ("w".to_string(), p.clone()),
            ("w".to_string(), param(&[2.0])),
        ];
        match Sgd::new(twice, d()) {
            Err(Error::InvalidArgument {
                op: "Sgd::new",
                name: "params",
                message,
            }) => {
                assert!(message.contains("\"w\""), "{message}");
            }
            other => panic!("unexpected {:?}", other.err()),
        }
        // lr 0 is valid: it freezes the parameters
        assert!(Sgd::new(vec![("p".into(), p)], SgdConfig { lr: 0.0, ..d() }).is_ok());
    }

    #[test]
    fn an_invalid_rate_set_later_is_refused_by_step() {
        let p = param(&[1.0]);
        let mut opt = sgd(&[("p", &p)], SgdConfig::default());
        set_grad(&p, &[1.0]);
        opt.set_lr(-1.0);
        assert_eq!(opt.lr(), -1.0);
        match opt.step() {
            Err(Error::InvalidArgument {
                op: "Sgd::step",
                name: "lr",
                ..
            }) => {}
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(values(&p), vec![1.0]);
        assert_eq!(opt.steps_taken(), 0);
    }
}
