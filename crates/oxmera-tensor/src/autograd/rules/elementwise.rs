//! Rules of the elementwise ops: unary, binary (with broadcasting), casts
//! and `where`.

use std::f64::consts::{FRAC_2_SQRT_PI, LN_2, LN_10};

use oxmera_core::Result;

use super::sum_to_shape;
use crate::autograd::{record, record_unary};
use crate::{BinaryOp, Tensor, UnaryOp};

/// Records a unary op. `y` is the output.
pub(crate) fn unary(op: UnaryOp, x: &Tensor, y: Tensor) -> Tensor {
    let xd = x.detach();
    let yd = y.detach();
    record_unary(y, op.name(), x, move |g| unary_grad(op, &xd, &yd, g))
}

/// `g · dy/dx` for a unary op with input `x` and output `y`.
fn unary_grad(op: UnaryOp, x: &Tensor, y: &Tensor, g: &Tensor) -> Result<Tensor> {
    use UnaryOp::*;
    match op {
        Neg => g.neg(),
        // abs'(0) = 0, the subgradient PyTorch picks too.
        Abs => g.mul(&x.sign()?),
        // Piecewise constant: zero almost everywhere (and at the jumps, by
        // convention).
        Sign | Floor | Ceil | Round => g.zeros_like(),
        Exp => g.mul(y),
        Log => g.div(x),
        Log1p => g.div(&x.add_scalar(1.0)?),
        Sqrt => g.div(&y.mul_scalar(2.0)?),
        // d/dx x^(-1/2) = -1/2 · y³
        Rsqrt => g.mul(&y.mul(y)?.mul(y)?.mul_scalar(-0.5)?),
        Recip => g.mul(&y.mul(y)?.neg()?),
        Square => g.mul(&x.mul_scalar(2.0)?),
        Sin => g.mul(&x.cos()?),
        Cos => g.mul(&x.sin()?.neg()?),
        Tanh => g.mul(&y.mul(y)?.rsub_scalar(1.0)?),
        Sigmoid => g.mul(&y.mul(&y.rsub_scalar(1.0)?)?),
        // One backend call (`fused_backward::relu` by default: relu'(0) =
        // 0, the gradient selected, not multiplied, as PyTorch does).
        Relu => {
            let storage = x.backend()?.relu_backward(x, g)?;
            Ok(crate::fused_backward::tensor_like(storage, x))
        }
        // PyTorch's leaky_relu_backward, written as it is: g where x > 0,
        // g·slope elsewhere (with slope 0 an infinite g gives NaN there, as
        // in PyTorch; use relu for a selected 0).
        LeakyRelu(slope) => Tensor::where_(&x.gt_scalar(0.0)?, g, &g.mul_scalar(slope)?),
        // One backend call: a fused pass where the backend has one, the
        // composition of `fused_backward::gelu` otherwise.
        GeluErf | GeluTanh => {
            let storage = x.backend()?.gelu_backward(x, g, op == GeluTanh)?;
            Ok(crate::fused_backward::tensor_like(storage, x))
        }
        Silu => {
            // d/dx x·σ(x) = σ(x)·(1 + x·(1 - σ(x)))
            let s = x.sigmoid()?;
            let inner = x.mul(&s.rsub_scalar(1.0)?)?.add_scalar(1.0)?;
            g.mul(&s.mul(&inner)?)
        }
        Softplus => g.mul(&x.sigmoid()?),
        Erf => g.mul(&x.square()?.neg()?.exp()?.mul_scalar(FRAC_2_SQRT_PI)?),
        // The gradient passes where min <= x <= max (bounds included: the
        // subgradient 1 there, as PyTorch's clamp_backward chooses) and is
        // exactly zero where the input was clamped — selected, not
        // multiplied by 0, so an infinite incoming gradient gives 0 there
        // rather than 0·∞ = NaN (PyTorch selects too).
        Clamp { min, max } => {
            let mut inside = x.eq(x)?; // all true, except at NaN
            if let Some(lo) = min {
                inside = inside.logical_and(&x.ge_scalar(lo)?)?;
            }
            if let Some(hi) = max {
                inside = inside.logical_and(&x.le_scalar(hi)?)?;
            }
            Tensor::where_(&inside, g, &g.zeros_like()?)
        }
        // p · x^(p-1); p = 0 is constant, so its gradient is 0 even at x = 0.
        Powf(0.0) => g.zeros_like(),
        Powf(p) => g.mul(&x.powf(p - 1.0)?.mul_scalar(p)?),
        Not => unreachable!("bool outputs are never recorded"),
        Trunc => g.zeros_like(),
        // e^x rather than PyTorch's y + 1, which cancels where y ≈ -1.
        Expm1 => g.mul(&x.exp()?),
        Log2 => g.div(&x.mul_scalar(LN_2)?),
        Log10 => g.div(&x.mul_scalar(LN_10)?),
        Exp2 => g.mul(&y.mul_scalar(LN_2)?),
        Tan => g.mul(&y.square()?.add_scalar(1.0)?),
        Atan => g.div(&x.square()?.add_scalar(1.0)?),
        // ±1/√(1 - x²): infinite at x = ±1, NaN beyond (as PyTorch).
        Asin => g.mul(&x.square()?.rsub_scalar(1.0)?.rsqrt()?),
        Acos => g.mul(&x.square()?.rsub_scalar(1.0)?.rsqrt()?.neg()?),
        Sinh => g.mul(&x.cosh()?),
        Cosh => g.mul(&x.sinh()?),
        Elu(_) | Selu | Mish | Hardtanh { .. } | Hardsigmoid | Hardswish | Logsigmoid => {
            super::activation::unary_grad(op, x, y, g)
        }
    }
}

/// Records a binary op over (possibly broadcast) `a` and `b`.
pub(crate) fn binary(op: BinaryOp, a: &Tensor, b: &Tensor, out: Tensor) -> Tensor {
    let (ad, bd, od) = (a.detach(), b.detach(), out.detach());
    let (a_shape, b_shape) = (a.shape().clone(), b.shape().clone());
    record(out, op.name(), &[a, b], move |g| {
        let (ga, gb) = binary_grads(op, &ad, &bd, &od, g)?;
        Ok(vec![
            Some(sum_to_shape(&ga, &a_shape)?),
            Some(sum_to_shape(&gb, &b_shape)?),
        ])
    })
}

/// The gradients of `out = op(a, b)` in the broadcast shape.
fn binary_grads(
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
    g: &Tensor,
) -> Result<(Tensor, Tensor)> {
    use BinaryOp::*;
    Ok(match op {
        Add => (g.clone(), g.clone()),
        Sub => (g.clone(), g.neg()?),
        Mul => (g.mul(b)?, g.mul(a)?),
        Div => (g.div(b)?, g.mul(out)?.div(b)?.neg()?),
        Pow => {
            // d/da = b·a^(b-1); d/db = a^b·ln a, taken as 0 where a = 0 and
            // b >= 0 (the limit PyTorch uses) so that 0^b does not poison
            // the gradient with 0·(-inf).
            // And d/da is taken as 0 where b = 0 (a^0 is constant in a),
            // as PyTorch does: b·a^(b-1) would be 0·inf = NaN at a = ±0
            // and wherever a^-1 overflows (a subnormal).
            let ga_raw = g.mul(&b.mul(&a.pow(&b.sub_scalar(1.0)?)?)?)?;
            let ga = Tensor::where_(&b.eq_scalar(0.0)?, &g.zeros_like()?, &ga_raw)?;
            let raw = g.mul(&out.mul(&a.log()?)?)?;
            let zero_base = a.eq_scalar(0.0)?.logical_and(&b.ge_scalar(0.0)?)?;
            let gb = Tensor::where_(&zero_base, &g.zeros_like()?, &raw)?;
            (ga, gb)
        }
        // The larger operand gets the gradient; on a tie each gets half
        // (the symmetric choice, as PyTorch makes for `maximum`). A NaN
        // output sends its gradient to the NaN operand(s).
        Maximum | Minimum => {
            let a_wins = if op == Maximum { a.gt(b)? } else { a.lt(b)? };
            let b_wins = if op == Maximum { b.gt(a)? } else { b.lt(a)? };
            let tie = a.eq(b)?;
            let a_nan = a.ne(a)?;
            let b_nan = b.ne(b)?;
            // Selected, not multiplied by 0/½/1 weights, so the losing
            // operand of an infinite gradient gets 0, not 0·∞ = NaN
            // (PyTorch masks too).
            let zero = g.zeros_like()?;
            let half_or_zero = Tensor::where_(&tie, &g.mul_scalar(0.5)?, &zero)?;
            let share = |wins: Tensor| Tensor::where_(&wins, g, &half_or_zero);
            (
                share(a_wins.logical_or(&a_nan)?)?,
                share(b_wins.logical_or(&b_nan)?)?,
            )
        }
        // rem(a, b) = a - floor(a / b)·b (the sign follows the divisor).
        Rem => (g.clone(), g.mul(&a.div(b)?.floor()?)?.neg()?),
        // fmod(a, b) = a - trunc(a / b)·b (the sign follows the dividend).
        Fmod => (g.clone(), g.mul(&a.div(b)?.trunc()?)?.neg()?),
        // d/da = b / (a² + b²), d/db = -a / (a² + b²); NaN at (0, 0), as
        // PyTorch.
        Atan2 => {
            let r = a.square()?.add(&b.square()?)?;
            (g.mul(b)?.div(&r)?, g.mul(a)?.div(&r)?.neg()?)
        }
        // a / out and b / out; NaN at (0, 0), as PyTorch.
        Hypot => (g.mul(a)?.div(out)?, g.mul(b)?.div(out)?),
        And | Or | Xor => unreachable!("bool outputs are never recorded"),
    })
}

/// Records `where(cond, a, b)`: the gradient goes to `a` where `cond`
/// holds and to `b` elsewhere.
pub(crate) fn where_cond(cond: &Tensor, a: &Tensor, b: &Tensor, out: Tensor) -> Tensor {
    let c = cond.detach();
    let (a_shape, b_shape) = (a.shape().clone(), b.shape().clone());
    record(out, "where", &[a, b], move |g| {
        let zero = g.zeros_like()?;
        let ga = Tensor::where_(&c, g, &zero)?;
        let gb = Tensor::where_(&c, &zero, g)?;
        Ok(vec![
            Some(sum_to_shape(&ga, &a_shape)?),
            Some(sum_to_shape(&gb, &b_shape)?),
        ])
    })
}

/// Records a float-to-float cast: the gradient is cast back.
pub(crate) fn cast(x: &Tensor, out: Tensor) -> Tensor {
    let dtype = x.dtype();
    record_unary(out, "to_dtype", x, move |g| g.to_dtype(dtype))
}
