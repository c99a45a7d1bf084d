//! The backward passes a backend may fuse, written as compositions of ops.
//!
//! A training step spends much of its time outside the matrix products,
//! in the backward passes of its activations, layer normalization and
//! softmax. Each is a handful of elementwise ops and row reductions —
//! GELU's is eleven full passes over its input, layer normalization's ten
//! with three reductions — where a fused kernel reads its operands once
//! and writes one result. They are memory-bound, so the fused form is
//! several times faster, and it also rounds fewer times.
//!
//! This module holds each backward pass as a *composition*: the formula
//! written with the tensor's own ops. It is the default body of the
//! matching [`Backend`] method ([`Backend::relu_backward`],
//! [`Backend::gelu_backward`], [`Backend::softmax_backward`],
//! [`Backend::layer_norm_backward`]), so a backend that has no fused
//! kernel still computes the gradient where the tensors live, with its
//! own elementwise kernels, and never through the host; the reference
//! backend keeps these compositions as the definition every fused kernel
//! is checked against (the conformance suite compares the gradients of
//! `gelu`, `gelu_tanh`, `softmax`, `log_softmax` and `layer_norm`). A
//! backend that overrides a method may call the function here for the
//! cases its kernel does not cover.
//!
//! The functions run with recording off (they are called from backward
//! closures), and return plain tensors.

use oxmera_core::Result;
use std::f64::consts::{PI, SQRT_2};

use crate::{Backend, Storage, Tensor, no_grad};

/// `grad · gelu'(x)`: with `Φ` the normal CDF and `φ` its density,
/// `gelu'(x) = Φ(x) + x·φ(x)`; with `tanh`, the derivative of the tanh
/// approximation `x/2 · (1 + tanh u)`, `u = √(2/π)·(x + 0.044715·x³)`.
pub fn gelu(x: &Tensor, grad: &Tensor, tanh: bool) -> Result<Tensor> {
    no_grad(|| {
        if tanh {
            const A: f64 = 0.044715;
            let c = (2.0 / PI).sqrt();
            let x2 = x.square()?;
            let u = x.mul(&x2.mul_scalar(A)?.add_scalar(1.0)?)?.mul_scalar(c)?;
            let t = u.tanh()?;
            let du = x2.mul_scalar(3.0 * A)?.add_scalar(1.0)?.mul_scalar(c)?;
            let left = t.add_scalar(1.0)?.mul_scalar(0.5)?;
            let right = x
                .mul_scalar(0.5)?
                .mul(&t.square()?.rsub_scalar(1.0)?)?
                .mul(&du)?;
            grad.mul(&left.add(&right)?)
        } else {
            let cdf = x
                .mul_scalar(1.0 / SQRT_2)?
                .erf()?
                .add_scalar(1.0)?
                .mul_scalar(0.5)?;
            let pdf = x
                .square()?
                .mul_scalar(-0.5)?
                .exp()?
                .mul_scalar(1.0 / (2.0 * PI).sqrt())?;
            grad.mul(&cdf.add(&x.mul(&pdf)?)?)
        }
    })
}

/// `grad` where `x > 0` and zero elsewhere: ReLU's gradient, with
/// `relu'(0) = 0` as in PyTorch, selected rather than multiplied by 0 so
/// an infinite `grad` gives 0 where `x <= 0` (PyTorch's
/// `threshold_backward` selects too).
pub fn relu(x: &Tensor, grad: &Tensor) -> Result<Tensor> {
    no_grad(|| Tensor::where_(&x.gt_scalar(0.0)?, grad, &grad.zeros_like()?))
}

/// The gradient of softmax (or, with `log`, log-softmax) along `dim`,
/// from its output `y` and the output's gradient: `y · (g - Σ g·y)`, or
/// `g - e^y · Σ g` for log-softmax, the sums along `dim`.
pub fn softmax(y: &Tensor, grad: &Tensor, dim: usize, log: bool) -> Result<Tensor> {
    no_grad(|| {
        let d = [dim as isize];
        if log {
            grad.sub(&y.exp()?.mul(&grad.sum(&d, true)?)?)
        } else {
            y.mul(&grad.sub(&grad.mul(y)?.sum(&d, true)?)?)
        }
    })
}

/// The gradient of layer normalization over the last `dims` dims of `x`,
/// from its output `y` and the output's gradient. Differentiating
/// `y = (x - mean)·rstd`, `rstd = 1/√(var + eps)`, through the mean and
/// the variance gives `rstd · (g - mean(g) - y · mean(g·y))`, the means
/// over each slice; `rstd` is recomputed from `x`.
pub fn layer_norm(x: &Tensor, y: &Tensor, grad: &Tensor, dims: usize, eps: f64) -> Result<Tensor> {
    no_grad(|| {
        let over: Vec<isize> = (-(dims as isize)..0).collect();
        let rstd = x.var(&over, 0.0, true)?.add_scalar(eps)?.rsqrt()?;
        let centered = grad.sub(&grad.mean(&over, true)?)?;
        let along_y = y.mul(&grad.mul(y)?.mean(&over, true)?)?;
        centered.sub(&along_y)?.mul(&rstd)
    })
}

/// The storage of `t` as a backend method returns it: fresh, contiguous,
/// holding exactly `t`'s elements. A composition's result usually is
/// already (an elementwise op writes fresh storage), and is then handed
/// over without a copy; otherwise `backend` copies it.
pub fn into_storage<B: Backend + ?Sized>(backend: &B, t: Tensor) -> Result<Storage> {
    let whole = t.is_contiguous()
        && t.layout().offset() == 0
        && t.storage().len() == t.numel()
        && t.grad_meta().is_none();
    if !whole {
        return backend.contiguous(&t);
    }
    match t.into_unique_storage() {
        Ok(storage) => Ok(storage),
        Err(shared) => backend.contiguous(&shared),
    }
}

/// Wraps a backend's backward storage as a tensor of `like`'s shape.
pub(crate) fn tensor_like(storage: Storage, like: &Tensor) -> Tensor {
    Tensor::from_storage(storage, like.shape().clone())
}
