//! Adam (with L2 weight decay folded into the gradient) and AdamW (with
//! decoupled weight decay), as `torch.optim.Adam` and `torch.optim.AdamW`
//! define them, bias correction included.

use std::collections::BTreeMap;

use oxmera_core::Result;
use oxmera_nn::Param;
use oxmera_tensor::fused_update::AdamStep;
use oxmera_tensor::{Tensor, no_grad};

use crate::Optimizer;
use crate::common::{
    Field, FieldKind, STEP_KEY, check_lr, check_params, check_registration_once, count_tensor,
    field_key, load_state, non_negative, unit_interval, value_and_grad,
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
    /// `1e-8`). With `eps = 0`, an element whose gradient has been exactly
    /// zero at every step so far divides 0 by 0 and becomes NaN, as in
    /// PyTorch.
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
    /// Whether the first step's registration check has run.
    registration_checked: bool,
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
            registration_checked: false,
            step_op: name.step,
            load_op: name.load,
        })
    }

    /// The new value and moments of one parameter, in its dtype, in the
    /// order of the formula on [`Adam`].
    fn update(
        &self,
        value: &Tensor,
        grad: &Tensor,
        state: Option<&Moments>,
    ) -> Result<(Tensor, Moments)> {
        let h = &self.hyper;
        let (step, m, v) = match state {
            Some(s) => (s.step, s.exp_avg.clone(), s.exp_avg_sq.clone()),
            None => (0, value.zeros_like()?, value.zeros_like()?),
        };
        let step = step + 1;
        // The corrections are computed in f64 from the parameter's own
        // count; only the final factors are rounded to its dtype.
        let t = step as f64;
        let constants = AdamStep {
            lr: h.lr,
            beta1: h.beta1,
            beta2: h.beta2,
            eps: h.eps,
            weight_decay: h.weight_decay,
            decoupled: h.decay == Decay::Decoupled,
            bias1: 1.0 - h.beta1.powf(t),
            bias2: 1.0 - h.beta2.powf(t),
        };
        // One backend call: the formula above as tensor ops
        // (`oxmera_tensor::fused_update::adam`) where the backend has no
        // fused kernel, one pass where it has.
        let [p, m, v] = value
            .backend()?
            .adam_update(value, grad, &m, &v, &constants)?
            .map(|s| Tensor::from_storage(s, value.shape().clone()));
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
        check_registration_once(self.step_op, &mut self.registration_checked)?;
        // Every new value is computed before any slot is written, so an
        // error leaves all parameters and moments as they were.
        let updates = no_grad(|| -> Result<Vec<(usize, Tensor, Moments)>> {
            let mut updates = Vec::new();
            for (i, (_, param)) in self.params.iter().enumerate() {
                if let Some((value, grad)) = value_and_grad(self.step_op, param)? {
                    let (new_value, moments) =
                        self.update(&value, &grad, self.moments[i].as_ref())?;
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
                dict.insert(
                    field_key(name, PARAM_STEP),
                    count_tensor(s.step, &s.exp_avg)?,
                );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{param, set_grad, values};
    use oxmera_core::Error;

    /// `got` within a few ulps of `want`: the update is a dozen rounded f64
    /// operations (sqrt and division included) on values near 1, and the
    /// expected numbers were worked out in exact decimals.
    fn close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() <= 16.0 * f64::EPSILON * w.abs().max(1.0),
                "got {got:?}, want {want:?}"
            );
        }
    }

    fn adam(p: &Param, config: AdamConfig) -> Adam {
        Adam::new(vec![("p".into(), p.clone())], config).unwrap()
    }

    fn tensor_of(opt: &dyn Optimizer, key: &str) -> Vec<f64> {
        opt.state_dict().unwrap()[key].to_f64_vec().unwrap()
    }

    // betas (0.5, 0.75) and eps 0 keep the moments short binary fractions
    // (exact in f64) so the hand arithmetic stays readable.
    fn small() -> AdamConfig {
        AdamConfig {
            lr: 0.1,
            betas: (0.5, 0.75),
            eps: 0.0,
            weight_decay: 0.0,
        }
    }

    #[test]
    fn three_steps_with_bias_correction() {
        let p = param(&[1.0]);
        let mut opt = adam(&p, small());
        // step 1, g = 0.5: m = 0.5 * 0.5 = 0.25, v = 0.25 * 0.25 = 0.0625
        //   1 - β1 = 0.5, 1 - β2 = 0.25; denom = sqrt(0.0625) / sqrt(0.25) = 0.5
        //   p = 1 - (0.1 / 0.5) * 0.25 / 0.5 = 1 - 0.1 = 0.9
        set_grad(&p, &[0.5]);
        opt.step().unwrap();
        close(&values(&p), &[0.9]);
        assert_eq!(tensor_of(&opt, "p.exp_avg"), vec![0.25]);
        assert_eq!(tensor_of(&opt, "p.exp_avg_sq"), vec![0.0625]);
        // step 2, g = -1: m = 0.125 - 0.5 = -0.375, v = 0.046875 + 0.25 = 0.296875
        //   1 - β1² = 0.75, 1 - β2² = 0.4375
        //   denom = sqrt(0.296875 / 0.4375) = sqrt(0.67857142857...) = 0.823754471047914
        //   p = 0.9 + (0.1 / 0.75) * 0.375 / 0.823754471047914 = 0.9 + 0.0606976978666884
        set_grad(&p, &[-1.0]);
        opt.step().unwrap();
        close(&values(&p), &[0.960_697_697_866_688_5]);
        // step 3, g = 2: m = -0.1875 + 1 = 0.8125, v = 0.22265625 + 1 = 1.22265625
        //   1 - β1³ = 0.875, 1 - β2³ = 0.578125
        //   denom = sqrt(1.22265625 / 0.578125) = sqrt(2.114864864864865) = 1.454257496066245
        //   p = 0.9606976978666885 - (0.1 / 0.875) * 0.8125 / 1.454257496066245
        //     = 0.9606976978666885 - 0.0638519265730593 = 0.8968457712936292
        set_grad(&p, &[2.0]);
        opt.step().unwrap();
        close(&values(&p), &[0.896_845_771_293_629_2]);
        assert_eq!(tensor_of(&opt, "p.exp_avg"), vec![0.8125]);
        assert_eq!(tensor_of(&opt, "p.exp_avg_sq"), vec![1.22265625]);
        assert_eq!(tensor_of(&opt, "p.step"), vec![3.0]);
        assert_eq!(tensor_of(&opt, "step"), vec![3.0]);
    }

    #[test]
    fn l2_weight_decay_enters_the_moments() {
        let p = param(&[1.0, -2.0]);
        let mut opt = adam(
            &p,
            AdamConfig {
                weight_decay: 0.5,
                ..small()
            },
        );
        // step 1: g = [0.5, 0] + 0.5 [1, -2] = [1, -1]; m = [0.5, -0.5]; v = [0.25, 0.25]
        //   denom = 0.5 / 0.5 = 1; p = [1, -2] - 0.2 [0.5, -0.5] = [0.9, -1.9]
        set_grad(&p, &[0.5, 0.0]);
        opt.step().unwrap();
        close(&values(&p), &[0.9, -1.9]);
        // step 2: g = [-1, 1] + 0.5 [0.9, -1.9] = [-0.55, 0.05]
        //   m = [0.25 - 0.275, -0.25 + 0.025] = [-0.025, -0.225]
        //   v = [0.1875 + 0.25 * 0.3025, 0.1875 + 0.25 * 0.0025] = [0.263125, 0.188125]
        //   denom = [sqrt(0.263125 / 0.4375), sqrt(0.188125 / 0.4375)]
        //         = [0.7755182598937123, 0.6557438524302001]
        //   p = [0.9 + (0.1/0.75) * 0.025 / 0.77551826, -1.9 + (0.1/0.75) * 0.225 / 0.65574385]
        //     = [0.9 + 0.0042982009653650, -1.9 + 0.0457495710997817]
        set_grad(&p, &[-1.0, 1.0]);
        opt.step().unwrap();
        close(
            &values(&p),
            &[0.904_298_200_965_365_1, -1.854_250_428_900_218_4],
        );
        close(&tensor_of(&opt, "p.exp_avg"), &[-0.025, -0.225]);
        close(&tensor_of(&opt, "p.exp_avg_sq"), &[0.263125, 0.188125]);
    }

    #[test]
    fn adamw_decay_is_decoupled_from_the_moments() {
        let p = param(&[1.0, -2.0]);
        let config = AdamWConfig {
            lr: 0.1,
            betas: (0.5, 0.75),
            eps: 0.0,
            weight_decay: 0.5,
        };
        let mut opt = AdamW::new(vec![("p".into(), p.clone())], config).unwrap();
        // step 1: p = [1, -2] * (1 - 0.1 * 0.5) = [0.95, -1.9]
        //   g = [0.5, 1] (untouched by decay); m = [0.25, 0.5]; v = [0.0625, 0.25]
        //   denom = [0.25 / 0.5, 0.5 / 0.5] = [0.5, 1]
        //   p = [0.95, -1.9] - 0.2 [0.5, 0.5] = [0.85, -2]
        set_grad(&p, &[0.5, 1.0]);
        opt.step().unwrap();
        close(&values(&p), &[0.85, -2.0]);
        // the moments saw the raw gradient
        assert_eq!(tensor_of(&opt, "p.exp_avg"), vec![0.25, 0.5]);
        // step 2: p = [0.85, -2] * 0.95 = [0.8075, -1.9]
        //   g = [-1, 1]; m = [-0.375, 0.75]; v = [0.296875, 0.4375]
        //   denom = [0.823754471047914, sqrt(0.4375 / 0.4375) = 1]
        //   p = [0.8075 + (0.1/0.75) * 0.375 / 0.823754471047914, -1.9 - (0.1/0.75) * 0.75]
        //     = [0.8075 + 0.0606976978666884, -1.9 - 0.1] = [0.8681976978666884, -2]
        set_grad(&p, &[-1.0, 1.0]);
        opt.step().unwrap();
        close(&values(&p), &[0.868_197_697_866_688_4, -2.0]);
        assert_eq!(tensor_of(&opt, "p.exp_avg_sq"), vec![0.296875, 0.4375]);
    }

    #[test]
    fn bias_correction_makes_the_first_step_lr_sized_at_any_gradient_scale() {
        // Defaults, step 1: m = 0.1 g, v = 0.001 g², and after correction
        // m̂ = g, sqrt(v̂) = |g|, so the step is lr * |g| / (|g| + 1e-8):
        //   g = 1e3:  1e-3 * 1e3 / (1e3 + 1e-8)   = 1e-3 * (1 - 1e-11) = 0.00099999999999
        //   g = 1e-3: 1e-3 * 1e-3 / (1e-3 + 1e-8) = 0.000999990000099999
        // (Without the correction it would be 1e-3 * 0.1 / sqrt(0.001) = 3.16e-3.)
        for (g, want) in [
            (1e3, 0.000_999_999_999_990),
            (1e-3, 0.000_999_990_000_099_999),
        ] {
            let p = param(&[0.0]);
            let mut opt = adam(&p, AdamConfig::default());
            set_grad(&p, &[g]);
            opt.step().unwrap();
            let moved = -values(&p)[0];
            assert!(
                (moved - want).abs() <= 1e-15,
                "g {g}: moved {moved}, want {want}"
            );
        }
    }

    #[test]
    fn each_param_is_corrected_for_its_own_step_count() {
        let a = param(&[0.0]);
        let b = param(&[0.0]);
        let named = vec![("a".to_string(), a.clone()), ("b".to_string(), b.clone())];
        let mut opt = Adam::new(named, small()).unwrap();
        // step 1: only a. a = 0 - 0.2 * (0.5 * 1) / (0.5 / 0.5) = -0.1
        set_grad(&a, &[1.0]);
        opt.step().unwrap();
        opt.zero_grad();
        // step 2: only b, its first: the same arithmetic, so b = -0.1 too,
        // and a (no gradient) stays put.
        set_grad(&b, &[1.0]);
        opt.step().unwrap();
        close(&values(&a), &[-0.1]);
        close(&values(&b), &[-0.1]);
        assert_eq!(tensor_of(&opt, "a.step"), vec![1.0]);
        assert_eq!(tensor_of(&opt, "b.step"), vec![1.0]);
        assert_eq!(tensor_of(&opt, "step"), vec![2.0]);
    }

    #[test]
    fn defaults_are_pytorchs() {
        let adam = AdamConfig::default();
        assert_eq!(
            (adam.lr, adam.betas, adam.eps, adam.weight_decay),
            (1e-3, (0.9, 0.999), 1e-8, 0.0)
        );
        let adamw = AdamWConfig::default();
        assert_eq!(
            (adamw.lr, adamw.betas, adamw.eps, adamw.weight_decay),
            (1e-3, (0.9, 0.999), 1e-8, 0.01)
        );
    }

    #[test]
    fn invalid_hyperparameters_are_typed_errors() {
        let p = param(&[1.0]);
        let named = || vec![("p".to_string(), p.clone())];
        let check = |result: Result<()>, want_op: &str, want_name: &str| match result {
            Err(Error::InvalidArgument { op, name, .. }) => {
                assert_eq!((op, name), (want_op, want_name));
            }
            other => panic!("unexpected {other:?}"),
        };
        let adam = |c: AdamConfig| Adam::new(named(), c).map(|_| ());
        let adamw = |c: AdamWConfig| AdamW::new(named(), c).map(|_| ());
        let d = AdamConfig::default;
        check(adam(AdamConfig { lr: -1.0, ..d() }), "Adam::new", "lr");
        check(
            adam(AdamConfig {
                betas: (1.0, 0.999),
                ..d()
            }),
            "Adam::new",
            "betas.0",
        );
        check(
            adam(AdamConfig {
                betas: (-0.1, 0.999),
                ..d()
            }),
            "Adam::new",
            "betas.0",
        );
        check(
            adam(AdamConfig {
                betas: (0.9, 1.0),
                ..d()
            }),
            "Adam::new",
            "betas.1",
        );
        check(
            adam(AdamConfig {
                betas: (0.9, f64::NAN),
                ..d()
            }),
            "Adam::new",
            "betas.1",
        );
        check(adam(AdamConfig { eps: -1e-8, ..d() }), "Adam::new", "eps");
        check(
            adam(AdamConfig {
                weight_decay: -0.1,
                ..d()
            }),
            "Adam::new",
            "weight_decay",
        );
        let w = AdamWConfig::default;
        check(
            adamw(AdamWConfig {
                lr: f64::NAN,
                ..w()
            }),
            "AdamW::new",
            "lr",
        );
        check(
            adamw(AdamWConfig {
                betas: (0.9, 1.5),
                ..w()
            }),
            "AdamW::new",
            "betas.1",
        );
        check(
            adamw(AdamWConfig {
                weight_decay: -0.01,
                ..w()
            }),
            "AdamW::new",
            "weight_decay",
        );
        check(Adam::new(vec![], d()).map(|_| ()), "Adam::new", "params");
        check(AdamW::new(vec![], w()).map(|_| ()), "AdamW::new", "params");
        // beta 0 is valid (no averaging), as is eps 0
        assert!(
            adam(AdamConfig {
                betas: (0.0, 0.0),
                eps: 0.0,
                ..d()
            })
            .is_ok()
        );
    }

    #[test]
    fn set_lr_reaches_the_update() {
        let p = param(&[1.0]);
        let mut opt = AdamW::new(
            vec![("p".into(), p.clone())],
            AdamWConfig {
                weight_decay: 0.0,
                eps: 0.0,
                ..AdamWConfig::default()
            },
        )
        .unwrap();
        opt.set_lr(0.25);
        assert_eq!(opt.lr(), 0.25);
        assert_eq!(opt.config().lr, 0.25);
        // first step moves by lr * g / |g| = 0.25
        set_grad(&p, &[3.0]);
        opt.step().unwrap();
        close(&values(&p), &[0.75]);
        opt.set_lr(-0.1);
        assert!(matches!(
            opt.step(),
            Err(Error::InvalidArgument {
                op: "AdamW::step",
                name: "lr",
                ..
            })
        ));
        close(&values(&p), &[0.75]);
    }
}
