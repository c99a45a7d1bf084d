//! Optimizer updates a backend may fuse, written as compositions of ops.
//!
//! An Adam step is fourteen elementwise passes over each parameter and
//! its two moments — for a model of a million parameters, over a hundred
//! megabytes of memory traffic for arithmetic that costs nothing — where a
//! fused kernel reads the parameter, its gradient and the moments once and
//! writes the three results. [`adam`] is the step as tensor ops, in the
//! order of the formula on `oxmera_optim::Adam`: the default body of
//! [`Backend::adam_update`](crate::Backend::adam_update), so a backend
//! without a kernel runs it on its own ops, and the definition a fused
//! kernel follows. The cpu backend's follows it operation for operation,
//! each rounded to the dtype as the composition's are, so the two agree
//! to the bit.

use oxmera_core::Result;

use crate::{Backend, Storage, Tensor, no_grad};

/// The constants of one Adam or AdamW step, as the optimizer computes
/// them (in `f64`; each is rounded to the parameter's dtype where the
/// composition multiplies or adds it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamStep {
    /// The learning rate.
    pub lr: f64,
    /// The first moment's decay.
    pub beta1: f64,
    /// The second moment's decay.
    pub beta2: f64,
    /// Added to the denominator.
    pub eps: f64,
    /// The weight decay `λ` (0 for none).
    pub weight_decay: f64,
    /// AdamW's decoupled decay (`p · (1 - lr·λ)` first) rather than
    /// Adam's L2 term (`g + λ·p`).
    pub decoupled: bool,
    /// `1 - beta1^t` for this parameter's step count `t`.
    pub bias1: f64,
    /// `1 - beta2^t`.
    pub bias2: f64,
}

/// One Adam step of `param` with gradient `grad` and moments `exp_avg`,
/// `exp_avg_sq`: the new parameter, first and second moments.
///
/// ```text
/// g = g + λ·p                 (Adam, λ ≠ 0)    p = p · (1 - lr·λ)   (AdamW)
/// m = m·β1 + g·(1 - β1)
/// v = v·β2 + (g·g)·(1 - β2)
/// p = p - (m / (√v / √bias2 + eps)) · (lr / bias1)
/// ```
pub fn adam(
    param: &Tensor,
    grad: &Tensor,
    exp_avg: &Tensor,
    exp_avg_sq: &Tensor,
    s: &AdamStep,
) -> Result<[Tensor; 3]> {
    no_grad(|| {
        let mut p = param.clone();
        let mut g = grad.clone();
        if s.weight_decay != 0.0 {
            if s.decoupled {
                p = p.mul_scalar(1.0 - s.lr * s.weight_decay)?;
            } else {
                g = g.add(&p.mul_scalar(s.weight_decay)?)?;
            }
        }
        let m = exp_avg
            .mul_scalar(s.beta1)?
            .add(&g.mul_scalar(1.0 - s.beta1)?)?;
        let v = exp_avg_sq
            .mul_scalar(s.beta2)?
            .add(&g.mul(&g)?.mul_scalar(1.0 - s.beta2)?)?;
        let denom = v.sqrt()?.div_scalar(s.bias2.sqrt())?.add_scalar(s.eps)?;
        let p = p.sub(&m.div(&denom)?.mul_scalar(s.lr / s.bias1)?)?;
        Ok([p, m, v])
    })
}

/// [`adam`] on `backend`'s own ops, as the storage
/// [`Backend::adam_update`] returns: its default body, and what a backend
/// that fuses only some dtypes calls for the others.
pub fn adam_on<B: Backend + ?Sized>(
    backend: &B,
    param: &Tensor,
    grad: &Tensor,
    exp_avg: &Tensor,
    exp_avg_sq: &Tensor,
    s: &AdamStep,
) -> Result<[Storage; 3]> {
    let [p, m, v] = adam(param, grad, exp_avg, exp_avg_sq, s)?;
    Ok([
        crate::fused_backward::into_storage(backend, p)?,
        crate::fused_backward::into_storage(backend, m)?,
        crate::fused_backward::into_storage(backend, v)?,
    ])
}
