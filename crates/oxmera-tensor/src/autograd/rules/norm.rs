//! The rule of `vector_norm`: PyTorch's `norm_backward`, case by case.

use oxmera_core::Result;

use crate::autograd::record_unary;
use crate::{Tensor, keepdim_shape};

/// Records `out` (keepdim-shaped) as the `ord`-norm of `x` over `reduced`.
pub(crate) fn vector_norm(x: &Tensor, reduced: &[usize], ord: f64, out: Tensor) -> Tensor {
    let (xd, nd) = (x.detach(), out.detach());
    let kept = keepdim_shape(x.shape(), reduced);
    let over: Vec<isize> = reduced.iter().map(|&d| d as isize).collect();
    record_unary(out, "vector_norm", x, move |g| {
        let g = g.reshape(kept.clone())?;
        norm_grad(&xd, &nd, &g, &over, ord)
    })
}

/// `∂L/∂x` for `n = ‖x‖_ord` over `over`, `g` and `n` keepdim-shaped.
///
/// - 0: nothing depends on the values (0);
/// - 1: `g·sign(x)` (0 at 0);
/// - 2: `g·(x/n)`, 0 where `n = 0`;
/// - ±inf: `g·sign(x)/k` at the `k` elements with `|x| = n` (or NaN);
/// - `p < 1`: `g·sign(x)·|x|^(p-1)·n^(1-p)`, 0 where `x = 0`;
/// - otherwise `g·sign(x)·|x|^(p-1) / n^(p-1)`, 0 where `n = 0` (for
///   `p >= 2` written `x·|x|^(p-2)`, as PyTorch does).
///
/// Zeros are selected, not multiplied in: `0·∞` would be NaN.
fn norm_grad(x: &Tensor, n: &Tensor, g: &Tensor, over: &[isize], ord: f64) -> Result<Tensor> {
    let shape = x.shape().clone();
    let spread = |t: &Tensor| t.broadcast_to(shape.clone());
    let zero = x.zeros_like()?;
    let a = x.abs()?;
    if ord == 0.0 {
        return Ok(zero);
    }
    if ord == 1.0 {
        return spread(g)?.mul(&x.sign()?);
    }
    if ord.is_infinite() {
        let n = spread(n)?;
        let hit = a.eq(&n)?.logical_or(&a.isnan()?)?;
        let k = hit.to_dtype(x.dtype())?.sum(over, true)?;
        let share = spread(&g.div(&k)?)?.mul(&x.sign()?)?;
        return Tensor::where_(&hit, &share, &zero);
    }
    if ord == 2.0 {
        // g·(x/n), in PyTorch's order.
        let n = spread(n)?;
        let unit = Tensor::where_(&n.eq_scalar(0.0)?, &zero, &x.div(&n)?)?;
        return spread(g)?.mul(&unit);
    }
    if ord < 1.0 {
        let scaled = x.sign()?.mul(&a.powf(ord - 1.0)?)?;
        let scaled = Tensor::where_(&x.eq_scalar(0.0)?, &zero, &scaled)?;
        return scaled.mul(&spread(&g.mul(&n.powf(1.0 - ord)?)?)?);
    }
    let scaled = if ord < 2.0 {
        x.sign()?.mul(&a.powf(ord - 1.0)?)?
    } else {
        x.mul(&a.powf(ord - 2.0)?)?
    };
    let scale = g.div(&n.powf(ord - 1.0)?)?;
    let scale = Tensor::where_(&n.eq_scalar(0.0)?, &scale.zeros_like()?, &scale)?;
    scaled.mul(&spread(&scale)?)
}
