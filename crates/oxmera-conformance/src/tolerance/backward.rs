//! Gradient tolerances: the normwise bound of [`backward`], the rounding
//! steps of each op's backward rule, and the conditioning of the rules
//! that amplify their inputs' errors.

use oxmera_core::{DType, Result};
use oxmera_tensor::{ReduceOp, Tensor, UnaryOp, no_grad};

use super::{Scale, acc_dtype, eps, forward, summation, wide};
use crate::composite::Composite;
use crate::ops::Op;

/// The gradient tolerance of `op` in `dtype`, normwise.
///
/// A gradient entry is formed by the op's backward rule — a few tensor
/// ops run in the dtype, on the reference too, each rounding into it —
/// from the upstream gradient `g`, the op's inputs and sometimes its
/// forward output, and it may accumulate up to `n` products (the
/// forward's terms times how many outputs one stored element feeds:
/// broadcasting, repeated indices, overlapping windows). With
/// `M = max(‖∇‖∞, ‖g‖∞)` over finite entries, the bound is
///
/// ```text
/// |got - want| <= 2·ε·|want|  +  ((k + f + 1 + κ)·ε + 2·n·ε_acc) · M
/// ```
///
/// - `k` counts the rule's rounding steps ([`backward_roundings`]), each
///   within ε (half an ulp on each side) of a quantity of order `M`;
/// - `f` is the forward tolerance in ulps of the dtype for rules that
///   reuse the forward output (`exp`'s `g·y`), which differs that much,
///   and 0 for the others;
/// - the 1 is the final sum over a broadcast or a view's scatter-back;
/// - `κ` is the conditioning of rules that exponentiate a difference or
///   raise to a power ([`backward_conditioning`]): an absolute error ε·|t|
///   in an exponent `t` becomes a relative error ε·|t| in the result;
/// - `2·n·ε_acc` bounds accumulating `n` products in the computing
///   precision (γ_n, on each side).
///
/// Normwise bounds are the standard form for compositions; a wrong rule
/// or kernel errs by the order of `M` itself.
pub fn backward(op: &Op, dtype: DType, n: usize, kappa: f64) -> BackwardTolerance {
    let e = eps(dtype);
    let ea = eps(acc_dtype(dtype));
    let fwd = forward(op, 1);
    let f = if !reuses_output(op) {
        0.0
    } else {
        match fwd.scale {
            Scale::Want | Scale::WantPlusOne | Scale::WantPlusInput | Scale::Pow => {
                fwd.out + fwd.acc * ea / e
            }
            _ => fwd.out,
        }
    };
    BackwardTolerance {
        relative: 2.0 * e,
        normwise: (backward_roundings(op) + f + 1.0 + kappa) * e + 2.0 * n as f64 * ea,
    }
}

/// The rounding steps of `op`'s backward rule (see the rules in
/// `oxmera_tensor::autograd`): multiplications by 0, ±1, 0.5 or 2,
/// negations, `where` and indicator masks are exact and not counted; a
/// backward kernel (convolution, pooling) and a matmul count one, their
/// accumulation being bounded separately.
pub fn backward_roundings(op: &Op) -> f64 {
    use UnaryOp::*;
    use oxmera_tensor::BinaryOp as B;
    match op {
        Op::Unary(
            Neg
            | Abs
            | Sign
            | Floor
            | Ceil
            | Round
            | Trunc
            | Relu
            | Clamp { .. }
            | Hardtanh { .. }
            | Not,
        ) => 0.0,
        // g/6
        Op::Unary(Hardsigmoid) => 1.0,
        // g·e^x; g·cosh x; g·sinh x; g·σ(-x)
        Op::Unary(Expm1 | Sinh | Cosh | Logsigmoid) => 2.0,
        // g/(x·ln b) and g·y·ln 2 with the rounded constant; g·(1 + y²);
        // g/(1 + x²); g·(x/3 + 1/2)
        Op::Unary(Log2 | Log10 | Exp2 | Tan | Atan | Hardswish) => 3.0,
        // g·alpha·e^x with the rounded constant
        Op::Unary(Elu(_) | Selu) => 4.0,
        // ±g·rsqrt(1 - x²)
        Op::Unary(Asin | Acos) => 5.0,
        // g·(t + x·σ·(1 - t²)), t = tanh(softplus(x))
        Op::Unary(Mish) => 9.0,
        // g·trunc(a/b); g·a/out and g·b/out
        Op::Binary(B::Fmod | B::Hypot) => 2.0,
        // g·b/(a² + b²) and g·a/(a² + b²)
        Op::Binary(B::Atan2) => 5.0,
        // g·y, g/x, g·2x
        Op::Unary(Exp | Log | Square) => 1.0,
        // g/(x+1); g/(2y); -g·y²; g·cos x; g·sin x; g·σ(x)
        Op::Unary(Log1p | Sqrt | Recip | Sin | Cos | Softplus) => 2.0,
        // g·(-y³/2); g·(1-y²); g·y(1-y); g·(slope + (1-slope)·pos);
        // g·p·x^(p-1)
        Op::Unary(Rsqrt | Tanh | Sigmoid | LeakyRelu(_) | Powf(_)) => 3.0,
        // g·(2/√π)·exp(-x²)
        Op::Unary(Erf) => 4.0,
        // g·σ·(1 + x(1-σ))
        Op::Unary(Silu) => 6.0,
        // Φ + x·φ with Φ through erf and φ through exp
        Op::Unary(GeluErf) => 9.0,
        // the tanh form's sixteen steps
        Op::Unary(GeluTanh) => 16.0,
        Op::Binary(B::Add | B::Sub | B::Maximum | B::Minimum | B::And | B::Or | B::Xor) => 0.0,
        Op::Binary(B::Mul) | Op::Composite(Composite::Outer) => 1.0,
        // g·floor(a/b)
        Op::Binary(B::Rem) => 2.0,
        // g/b and g·out/b
        Op::Binary(B::Div) => 3.0,
        // b·a^(b-1)·g and g·out·ln a
        Op::Binary(B::Pow) => 6.0,
        Op::Reduce { op, .. } => match op {
            ReduceOp::Sum => 0.0,
            // g/n, and the share of a tie
            ReduceOp::Mean | ReduceOp::Max | ReduceOp::Min => 1.0,
            // g·(x - mean)·2/(n - c), and for std a division by 2·std
            ReduceOp::Var { .. } => 4.0,
            ReduceOp::Std { .. } => 6.0,
            // out/x, or the product of the others at a zero
            ReduceOp::Prod => 4.0,
            // g·exp(x - out)
            ReduceOp::LogSumExp => 2.0,
            ReduceOp::ArgMax | ReduceOp::ArgMin | ReduceOp::All | ReduceOp::Any => 0.0,
        },
        // cumsum: the reversed running sum of g (its accumulation bounded
        // separately, as a matmul's); cumprod: g·y, that sum, ÷x, or at a
        // slice's first zero a running product and g times it
        Op::Scan {
            op: oxmera_tensor::ScanOp::Sum,
            ..
        } => 1.0,
        Op::Scan {
            op: oxmera_tensor::ScanOp::Prod,
            ..
        } => 4.0,
        // |g|, its log, - y, + x, exp (the reversed logcumsumexp's own
        // steps are in the conditioning), and the two parts' difference
        Op::Scan {
            op: oxmera_tensor::ScanOp::LogSumExp,
            ..
        } => 6.0,
        // y·(g - Σ g·y), or g - exp(y)·Σ g
        Op::Softmax { .. } => 4.0,
        // var (4, as its own rule counts), + eps, rsqrt (2), mean(g),
        // g - mean, g·y, its mean, y·that, the difference, ·rstd
        Op::LayerNorm { .. } => 14.0,
        Op::Matmul | Op::Conv2d(_) | Op::MaxPool2d(_) | Op::AvgPool2d(_) | Op::Cast(_) => 1.0,
        // Each operand's gradient is a chain of matmuls of g with the
        // other operands (one rounding each, their accumulation bounded
        // by n), reading the forward's rounded intermediate products.
        Op::Composite(Composite::Einsum { equation }) => super::einsum_operands(equation),
        // dv = pᵀg, dp = g·vᵀ, dp⊙p, its row sum, the difference, ·p,
        // ·scale, then dq = ds·k and dk = dsᵀ·q: eight steps (the
        // products' accumulation bounded by n).
        Op::Composite(Composite::Attention { .. }) => 8.0,
        // index_add's source gradient: alpha·g[index]
        Op::Composite(Composite::IndexAdd { .. }) => 1.0,
        // conv2d_backward's kernel, as conv2d
        Op::Composite(Composite::Conv1d(_) | Composite::ConvTranspose2d(_)) => 1.0,
        // g / the window's size, and for f16/bf16 the rounding of the
        // f32 gradient into the dtype
        Op::Composite(Composite::AdaptiveAvgPool2d(_)) => 2.0,
        // The same for ceil_mode's mean (g / the clipped size, f16/bf16's
        // rounding); the max's, as max_pool2d's: the copies of g an
        // element collects from overlapping windows, added
        Op::Composite(Composite::AvgPool2dWith(_)) => 2.0,
        Op::Composite(Composite::MaxPool2dWith(_)) => 1.0,
        // bilinear: g·λ0 and g·λ1 along each axis (the additions of the
        // copies bounded separately), and for f16/bf16 the rounding of the
        // f32 gradient into the dtype; nearest only adds copies
        Op::Composite(Composite::Interpolate {
            mode: oxmera_tensor::InterpolateMode::Bilinear { .. },
            ..
        }) => 5.0,
        // scatter_reduce: sum moves g; mean and amax/amin divide g by a
        // count; prod's product rule multiplies g down the pairing (at most
        // three rounds for the corpus's runs of up to eight sources) and
        // up again, each product a relative rounding
        Op::Composite(Composite::ScatterReduce { reduce, .. }) => match reduce {
            oxmera_tensor::ScatterReduce::Sum => 0.0,
            oxmera_tensor::ScatterReduce::Prod => 8.0,
            _ => 1.0,
        },
        // The rule of vector_norm (PyTorch's norm_backward): 1: g·sign(x),
        // exact; ±inf: g/k; 2: x/n and ·g; any other p: |x|^(p-1) and
        // n^(p-1) (a few ulps each, their conditions in κ), g/n^(p-1) and
        // the product.
        Op::Composite(Composite::VectorNorm { ord, .. }) => {
            if *ord == 0.0 || *ord == 1.0 {
                0.0
            } else if ord.is_infinite() {
                1.0
            } else if *ord == 2.0 {
                2.0
            } else {
                10.0
            }
        }
        Op::Where
        | Op::Contiguous
        | Op::Cat { .. }
        | Op::Pad { .. }
        | Op::Flip { .. }
        | Op::Triangle { .. }
        | Op::IndexSelect { .. }
        | Op::Gather { .. }
        | Op::Scatter { .. }
        | Op::Composite(_)
        | Op::Compare(_) => 0.0,
    }
}

/// Whether `op`'s backward rule reads the forward output (so the
/// forward's own error enters the gradient).
fn reuses_output(op: &Op) -> bool {
    use UnaryOp::*;
    use oxmera_tensor::BinaryOp as B;
    matches!(
        op,
        Op::Unary(Exp | Sqrt | Rsqrt | Recip | Tanh | Sigmoid | Exp2 | Tan)
            | Op::Binary(B::Div | B::Pow | B::Hypot)
            | Op::Reduce {
                op: ReduceOp::Prod | ReduceOp::Std { .. } | ReduceOp::LogSumExp,
                ..
            }
            | Op::Softmax { .. }
            | Op::LayerNorm { .. }
            | Op::Scan {
                op: oxmera_tensor::ScanOp::Prod | oxmera_tensor::ScanOp::LogSumExp,
                ..
            }
    ) || matches!(op, Op::Composite(Composite::VectorNorm { ord, .. }) if *ord != 0.0 && *ord != 1.0)
}

/// The `κ` of [`backward`]: for rules that exponentiate a difference
/// (softmax, log-softmax, logsumexp: `exp(x - c)` with `c` of the order of
/// `max|x|`) twice the largest finite input magnitude; for powers the
/// largest finite `|b · ln|a||`; for layer normalization a bound on how
/// its backward amplifies the forward's error (`layer_norm_conditioning`);
/// otherwise 0.
pub fn backward_conditioning(op: &Op, inputs: &[Tensor]) -> Result<f64> {
    no_grad(|| {
        let finite_max = |v: Vec<f64>| v.into_iter().filter(|x| x.is_finite()).fold(0.0, f64::max);
        Ok(match op {
            Op::Softmax { .. }
            | Op::Reduce {
                op: ReduceOp::LogSumExp,
                ..
            } => 2.0 * finite_max(wide(&inputs[0])?.abs()?.to_f64_vec()?),
            Op::Unary(UnaryOp::Powf(p)) => finite_max(
                wide(&inputs[0])?
                    .abs()?
                    .log()?
                    .mul_scalar(*p)?
                    .abs()?
                    .to_f64_vec()?,
            ),
            Op::Binary(oxmera_tensor::BinaryOp::Pow) => finite_max(
                wide(&inputs[0])?
                    .abs()?
                    .log()?
                    .mul(&wide(&inputs[1])?)?
                    .abs()?
                    .to_f64_vec()?,
            ),
            Op::LayerNorm {
                normalized_dims,
                eps,
            } => layer_norm_conditioning(&inputs[0], *normalized_dims, *eps)?,
            // logcumsumexp's rule is exp(x_i + r_i), r_i a reversed
            // logcumsumexp of log|g_j| - y_j over the n - i later elements.
            // Its exponent's error, in ulps of the dtype: the scan's n
            // steps in the computing precision, each within
            // 8 + 2·max|x| + ln n of the values it meets (the forward row's
            // analysis, with |y| ≤ max|x| + ln n and log|g| counted weighted
            // by g, g·|ln g| ≤ max(|g|·|ln‖g‖|, 1/e)), so n·that·ε_acc/ε;
            // and five roundings into the dtype (log, - y, the scan's
            // output, + x, exp) of values of that size. An absolute error in
            // the exponent is a relative one in a part exp(x_i + r_i) =
            // Σ_{j>=i} |g_j|·exp(x_i - y_j) ≤ S·‖g‖, S the largest
            // Σ_{j>=i} exp(x_i - y_j) of the input (the gradient of Σ y,
            // computed here in f64), before the two parts cancel:
            // κ = S·(8 + 2·max|x| + ln n)·(5 + n·ε_acc/ε).
            Op::Scan {
                op: oxmera_tensor::ScanOp::LogSumExp,
                dim,
            } => {
                let x = wide(&inputs[0])?;
                let (n, s) = if x.rank() == 0 {
                    (1.0, 1.0)
                } else {
                    let d = if *dim < 0 {
                        *dim + x.rank() as isize
                    } else {
                        *dim
                    };
                    let n = x.dims().get(d as usize).copied().unwrap_or(1) as f64;
                    let y = x.logcumsumexp(d)?;
                    let weights = y
                        .neg()?
                        .flip(&[d])?
                        .logcumsumexp(d)?
                        .flip(&[d])?
                        .add(&x)?
                        .exp()?;
                    (n, finite_max(weights.to_f64_vec()?).max(1.0))
                };
                let m = finite_max(x.abs()?.to_f64_vec()?);
                let dtype = inputs[0].dtype();
                let steps = n * eps(acc_dtype(dtype)) / eps(dtype);
                s * (8.0 + 2.0 * m + n.ln()) * (5.0 + steps)
            }
            // A p-norm's rule raises |x| and n to p - 1: an error ε·|t| in
            // the exponent's argument t = (p - 1)·ln|x| (or ln n) is a
            // relative one in the result; and n itself carries the forward
            // bound's relative error, which n^(p-1) multiplies by |p - 1|.
            Op::Composite(Composite::VectorNorm { ord, .. })
                if !(*ord == 0.0 || *ord == 1.0 || *ord == 2.0 || ord.is_infinite()) =>
            {
                let x = &inputs[0];
                let q = (ord - 1.0).abs();
                let lx = finite_max(wide(x)?.abs()?.log()?.abs()?.to_f64_vec()?);
                let norms = op.apply(&[wide(x)?])?.to_f64_vec()?;
                let ln = finite_max(norms.iter().map(|v| v.abs().ln().abs()).collect());
                let s = summation(super::terms(op, inputs));
                let ulps = eps(acc_dtype(x.dtype())) / eps(x.dtype());
                let fwd = ((5.0 + s + ord.abs() * lx) / ord.abs() + 5.0 + ln) * ulps;
                q * (lx + ln) + q * fwd
            }
            // The rule reads the saved probabilities, each off by the
            // forward's relative error (2a + S + 4 + r, the row's; take
            // the worst), and exponentiates differences like softmax's
            // (2·max|s|).
            Op::Composite(Composite::Attention { causal, scale }) => {
                let rows = super::scale::attention_rows(inputs, *causal, *scale)?;
                let a = finite_max(rows.a.to_f64_vec()?);
                let r = finite_max(rows.r.to_f64_vec()?);
                let ulps = eps(acc_dtype(inputs[0].dtype())) / eps(inputs[0].dtype());
                2.0 * rows.max_abs_score + (2.0 * a + rows.keys + 4.0 + r) * ulps
            }
            _ => 0.0,
        })
    })
}

/// The per-slice quantities of a layer normalization of `x` over its
/// last `k` dims, in `f64`, broadcast to `x`'s shape: `rstd · Σ|x|/n`,
/// `(Σx²/n) / (var + eps)` and `rstd`.
pub(super) fn layer_norm_moments(x: &Tensor, k: usize, eps: f64) -> Result<[Vec<f64>; 3]> {
    let x = wide(x)?;
    let over: Vec<isize> = (-(k as isize)..0).collect();
    let spread = x.var(&over, 0.0, true)?.add_scalar(eps)?;
    let rstd = spread.rsqrt()?;
    let full = |t: Tensor| t.expand(x.shape().clone())?.to_f64_vec();
    Ok([
        full(rstd.mul(&x.abs()?.mean(&over, true)?)?)?,
        full(x.square()?.mean(&over, true)?.div(&spread)?)?,
        full(rstd)?,
    ])
}

/// The `κ` of a layer normalization's backward, in ulps of the dtype.
///
/// The rule reuses the forward output `y`, which may differ from the
/// reference's by the forward bound `(2s + 6)·ε_acc·(r·A + |y|·(1 + q))`
/// (`q = M2/(v + eps)`, see [`forward`]), and its own `rstd` by
/// `(2s + 2)·q·ε_acc` relative (a variance within the var row's bound).
/// In `rstd · (g - mean(g) - y·mean(g·y))` an error in `y` is multiplied
/// by at most `rstd·‖g‖·(1 + |y|)` twice over, and an error in `rstd` by
/// `‖g‖·(1 + |y|)²`. Normwise against `M ≥ ‖g‖` (the gradient itself can
/// vanish, when `g` is proportional to `y`), all of it is within
/// `2·(2s + 6)·(1 + q + r·A)·(1 + |y|)²·max(1, rstd)` units of ε_acc, taken
/// at the worst slice.
fn layer_norm_conditioning(x: &Tensor, k: usize, shift: f64) -> Result<f64> {
    no_grad(|| {
        if x.numel() == 0 {
            return Ok(0.0);
        }
        let n: usize = x.dims()[x.rank() - k..].iter().product();
        let [ra, q, rstd] = layer_norm_moments(x, k, shift)?;
        let y = wide(x)?.layer_norm(k, shift)?.to_f64_vec()?;
        let worst = (0..y.len())
            .map(|i| (1.0 + q[i] + ra[i]) * (1.0 + y[i].abs()).powi(2) * rstd[i].max(1.0))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let dtype = x.dtype();
        Ok(2.0 * (2.0 * summation(n) + 6.0) * worst * eps(acc_dtype(dtype)) / eps(dtype))
    })
}

/// A normwise gradient tolerance (see [`backward`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackwardTolerance {
    /// The coefficient of `|want|`.
    pub relative: f64,
    /// The coefficient of `M`.
    pub normwise: f64,
}
