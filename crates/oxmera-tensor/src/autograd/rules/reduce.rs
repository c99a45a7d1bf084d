//! Rules of reductions, softmax and matrix products.

use oxmera_core::Result;

use crate::autograd::record_unary;
use crate::{ReduceOp, Tensor, keepdim_shape};

/// Records a reduction of `x` over `dims` (normalized). `out` has the
/// keepdim shape when `keepdim`, else the reduced dims removed.
pub(crate) fn reduce(op: ReduceOp, x: &Tensor, dims: &[usize], out: Tensor) -> Tensor {
    let kept = keepdim_shape(x.shape(), dims);
    let xd = x.detach();
    // The output seen with the reduced dims kept, so it broadcasts over x.
    let od = match out.detach().reshape(kept.clone()) {
        Ok(o) => o,
        Err(_) => unreachable!("a reduction's output always reshapes to its keepdim shape"),
    };
    let dims = dims.to_vec();
    record_unary(out, op.name(), x, move |g| {
        let g = g.reshape(kept.clone())?;
        reduce_grad(op, &xd, &od, &dims, &g)
    })
}

/// `g` (keepdim-shaped) sent back over the reduced dims of `x`.
fn reduce_grad(
    op: ReduceOp,
    x: &Tensor,
    out: &Tensor,
    dims: &[usize],
    g: &Tensor,
) -> Result<Tensor> {
    let shape = x.shape().clone();
    let count: usize = dims.iter().map(|&d| x.dims()[d]).product();
    let idims: Vec<isize> = dims.iter().map(|&d| d as isize).collect();
    let spread = |t: &Tensor| t.broadcast_to(shape.clone());
    let dt = x.dtype();
    match op {
        ReduceOp::Sum => spread(g),
        ReduceOp::Mean => spread(&g.div_scalar(count as f64)?),
        ReduceOp::Prod => {
            // ∂/∂x_i Π x = Π_{j≠i} x_j. Where x_i ≠ 0 that is out / x_i;
            // where x_i = 0 it is the product of the others, which is the
            // product with that zero replaced by one if it is the only
            // zero of its slice, and zero otherwise.
            let is_zero = x.eq_scalar(0.0)?;
            let zeros = is_zero.to_dtype(dt)?.sum(&idims, true)?;
            let ones_for_zeros = Tensor::where_(&is_zero, &x.ones_like()?, x)?;
            let others = ones_for_zeros.prod(&idims, true)?;
            let at_zero = Tensor::where_(&zeros.eq_scalar(1.0)?, &others, &others.zeros_like()?)?;
            let at_zero = at_zero.broadcast_to(shape.clone())?;
            let elsewhere = spread(out)?.div(x)?;
            spread(g)?.mul(&Tensor::where_(&is_zero, &at_zero, &elsewhere)?)
        }
        // The gradient is shared evenly among the positions that hold the
        // extremum (ties split it, as PyTorch's amax/amin do); a slice
        // whose result is NaN sends it to its NaN positions. The other
        // positions get 0 *selected*, not g multiplied by a 0/1 mask: an
        // infinite g gave them 0·∞ = NaN (torch.max(dim), and max() on the
        // CPU, put the gradient at the maxima with an index_put, giving 0).
        ReduceOp::Max | ReduceOp::Min => {
            let o = spread(out)?;
            let hit = x.eq(&o)?.logical_or(&x.ne(x)?.logical_and(&o.ne(&o)?)?)?;
            let n = hit.to_dtype(dt)?.sum(&idims, true)?;
            let share = spread(&g.div(&n)?)?;
            Tensor::where_(&hit, &share, &share.zeros_like()?)
        }
        ReduceOp::Var { correction } | ReduceOp::Std { correction } => {
            // d var / dx_i = 2 (x_i - mean) / (N - correction)
            let centered = x.sub(&x.mean(&idims, true)?)?;
            let dvar = centered.mul_scalar(2.0 / (count as f64 - correction))?;
            match op {
                ReduceOp::Var { .. } => spread(g)?.mul(&dvar),
                // d std = d var / (2 std). Where std = 0 (a constant
                // slice) every x_i - mean is 0 too and 0/0 would be NaN;
                // the gradient is taken as 0 there, as PyTorch masks it.
                _ => {
                    let scale = g.div(&out.mul_scalar(2.0)?)?;
                    let flat = out.eq_scalar(0.0)?;
                    let scale = Tensor::where_(&flat, &scale.zeros_like()?, &scale)?;
                    spread(&scale)?.mul(&dvar)
                }
            }
        }
        // d/dx_i log Σ exp x = exp(x_i - lse) = softmax
        ReduceOp::LogSumExp => spread(g)?.mul(&x.sub(&spread(out)?)?.exp()?),
        ReduceOp::ArgMax | ReduceOp::ArgMin | ReduceOp::All | ReduceOp::Any => {
            unreachable!("integer and bool outputs are never recorded")
        }
    }
}

/// Records softmax (`log == false`) or log-softmax along `dim`. The
/// backward is one backend call ([`crate::Backend::softmax_backward`]):
/// `y · (g - Σ g·y)`, or `g - softmax · Σ g` for log-softmax.
pub(crate) fn softmax(x: &Tensor, dim: usize, log: bool, out: Tensor) -> Tensor {
    let y = out.detach();
    let name = if log { "log_softmax" } else { "softmax" };
    record_unary(out, name, x, move |g| {
        let storage = y.backend()?.softmax_backward(&y, g, dim, log)?;
        Ok(crate::fused_backward::tensor_like(storage, &y))
    })
}

/// Records layer normalization over the last `dims` dims. With `y` the
/// normalized output and `rstd = 1 / sqrt(var + eps)`, differentiating
/// `y = (x - mean) · rstd` through the mean and the variance gives
/// `rstd · (g - mean(g) - y · mean(g · y))`
/// ([`crate::Backend::layer_norm_backward`], one backend call); `rstd` is
/// recomputed from `x` rather than kept from the forward, which needs no
/// second output.
pub(crate) fn layer_norm(x: &Tensor, dims: usize, eps: f64, out: Tensor) -> Tensor {
    let (xd, y) = (x.detach(), out.detach());
    record_unary(out, "layer_norm", x, move |g| {
        let storage = xd.backend()?.layer_norm_backward(&xd, &y, g, dims, eps)?;
        Ok(crate::fused_backward::tensor_like(storage, &xd))
    })
}

/// Records `[..., m, k] @ [..., k, n]` with identical batch dims (the
/// broadcasting and vector promotion around it are views, recorded there).
pub(crate) fn matmul(a: &Tensor, b: &Tensor, out: Tensor) -> Tensor {
    let (ad, bd) = (a.detach(), b.detach());
    // Each gradient is a product as large as the forward one, so the one
    // an input does not need (a network's data, say) is not computed.
    let (need_a, need_b) = (a.requires_grad(), b.requires_grad());
    crate::autograd::record(out, "matmul", &[a, b], move |g| {
        let ga = need_a
            .then(|| g.matmul(&bd.transpose(-1, -2)?))
            .transpose()?;
        let gb = need_b
            .then(|| ad.transpose(-1, -2)?.matmul(g))
            .transpose()?;
        Ok(vec![ga, gb])
    })
}
