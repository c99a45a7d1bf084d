//! Optimizer updates a backend may fuse, written as compositions of ops.
//!
//! (SGD is here for the same reason: with momentum a step is five passes
//! — `μ·buf`, `(1 - τ)·g`, their sum, `lr·buf`, `p - lr·buf` — each
//! allocating a parameter-sized tensor, where one pass reads the
//! parameter, gradient and buffer and writes the new two. [`sgd`] is the
//! composition, the default body of
//! [`Backend::sgd_update`](crate::Backend::sgd_update).)
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

/// The constants of one SGD step (see `oxmera_optim::Sgd`): each is
/// rounded to the parameter's dtype where the composition multiplies by
/// it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgdStep {
    /// The learning rate.
    pub lr: f64,
    /// The momentum factor `μ` (0: no momentum, no buffer).
    pub momentum: f64,
    /// The dampening `τ` of the momentum.
    pub dampening: f64,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// The L2 penalty `λ` (0 for none).
    pub weight_decay: f64,
}

/// One SGD step of `param` with gradient `grad` and, with momentum, the
/// buffer of the previous step (`None` on the first): the new parameter
/// and, with momentum, the new buffer.
///
/// ```text
/// g   = g + p·λ                       (λ ≠ 0)
/// buf = g                             (μ ≠ 0, first step)
/// buf = buf·μ + g·(1 - τ)             (μ ≠ 0, later steps)
/// g   = g + buf·μ   if nesterov, else   g = buf      (μ ≠ 0)
/// p   = p - g·lr
/// ```
pub fn sgd(
    param: &Tensor,
    grad: &Tensor,
    momentum_buffer: Option<&Tensor>,
    s: &SgdStep,
) -> Result<(Tensor, Option<Tensor>)> {
    no_grad(|| {
        let mut g = grad.clone();
        if s.weight_decay != 0.0 {
            g = g.add(&param.mul_scalar(s.weight_decay)?)?;
        }
        let mut new_buf = None;
        if s.momentum != 0.0 {
            let b = match momentum_buffer {
                None => g.clone(),
                Some(b) => b
                    .mul_scalar(s.momentum)?
                    .add(&g.mul_scalar(1.0 - s.dampening)?)?,
            };
            g = if s.nesterov {
                g.add(&b.mul_scalar(s.momentum)?)?
            } else {
                b.clone()
            };
            new_buf = Some(b);
        }
        Ok((param.sub(&g.mul_scalar(s.lr)?)?, new_buf))
    })
}

/// [`sgd`] on `backend`'s own ops, as the storage
/// [`Backend::sgd_update`] returns: its default body, and what a backend
/// that fuses only some dtypes calls for the others.
pub fn sgd_on<B: Backend + ?Sized>(
    backend: &B,
    param: &Tensor,
    grad: &Tensor,
    momentum_buffer: Option<&Tensor>,
    s: &SgdStep,
) -> Result<(Storage, Option<Storage>)> {
    let (p, b) = sgd(param, grad, momentum_buffer, s)?;
    let b = b
        .map(|b| crate::fused_backward::into_storage(backend, b))
        .transpose()?;
    Ok((crate::fused_backward::into_storage(backend, p)?, b))
}
