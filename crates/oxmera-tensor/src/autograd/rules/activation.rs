//! Rules of the activation functions PyTorch users reach for (`elu`,
//! `selu`, `mish`, the hard ones, `logsigmoid`), beside the elementwise
//! rules that dispatch here.
//!
//! Where an activation has a kink, the gradient there is PyTorch's choice,
//! stated beside each rule, and it is *selected* by a mask rather than
//! multiplied by one, so an infinite incoming gradient gives 0 where the
//! slope is 0 (never 0·∞ = NaN).

use oxmera_core::Result;

use crate::{SELU_ALPHA, SELU_SCALE, Tensor, UnaryOp};

/// `g · dy/dx` for the activation ops.
pub(crate) fn unary_grad(op: UnaryOp, x: &Tensor, _y: &Tensor, g: &Tensor) -> Result<Tensor> {
    use UnaryOp::*;
    let zero = || g.zeros_like();
    match op {
        // 1 where x > 0, else alpha·e^x (alpha at 0, as PyTorch's
        // elu_backward, which takes the x <= 0 branch there).
        Elu(alpha) => {
            let neg = g.mul(&x.exp()?.mul_scalar(alpha)?)?;
            Tensor::where_(&x.gt_scalar(0.0)?, g, &neg)
        }
        Selu => {
            let pos = g.mul_scalar(SELU_SCALE)?;
            let neg = g.mul(&x.exp()?.mul_scalar(SELU_SCALE * SELU_ALPHA)?)?;
            Tensor::where_(&x.gt_scalar(0.0)?, &pos, &neg)
        }
        // d/dx x·tanh(sp(x)) = t + x·σ(x)·(1 - t²), t = tanh(softplus(x)),
        // PyTorch's mish_backward.
        Mish => {
            let t = x.softplus()?.tanh()?;
            let slope = x
                .mul(&x.sigmoid()?)?
                .mul(&t.square()?.rsub_scalar(1.0)?)?
                .add(&t)?;
            g.mul(&slope)
        }
        // 1 strictly inside (min, max) and 0 at and beyond the bounds —
        // PyTorch's hardtanh_backward (unlike clamp, which passes the
        // gradient at the bounds).
        Hardtanh { min, max } => {
            let inside = x.gt_scalar(min)?.logical_and(&x.lt_scalar(max)?)?;
            Tensor::where_(&inside, g, &zero()?)
        }
        // 1/6 strictly inside (-3, 3), else 0 (PyTorch's
        // hardsigmoid_backward).
        Hardsigmoid => {
            let inside = x.gt_scalar(-3.0)?.logical_and(&x.lt_scalar(3.0)?)?;
            Tensor::where_(&inside, &g.div_scalar(6.0)?, &zero()?)
        }
        // 0 below -3, x/3 + 1/2 on [-3, 3], 1 above (PyTorch's
        // hardswish_backward, bounds included in the middle piece).
        Hardswish => {
            let middle = g.mul(&x.div_scalar(3.0)?.add_scalar(0.5)?)?;
            let upper = Tensor::where_(&x.le_scalar(3.0)?, &middle, g)?;
            Tensor::where_(&x.lt_scalar(-3.0)?, &zero()?, &upper)
        }
        // d/dx -softplus(-x) = σ(-x).
        Logsigmoid => g.mul(&x.neg()?.sigmoid()?),
        other => unreachable!("{} has its rule in elementwise.rs", other.name()),
    }
}
