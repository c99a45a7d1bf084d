//! Rules of the scans `cumsum`, `cumprod` and `logcumsumexp`.

use oxmera_core::Result;

use crate::autograd::record_unary;
use crate::{ScanOp, Tensor};

/// Records a scan along `dim` with output `y`.
pub(crate) fn scan(op: ScanOp, x: &Tensor, dim: usize, y: Tensor) -> Tensor {
    let (xd, yd) = (x.detach(), y.detach());
    record_unary(y, op.name(), x, move |g| match op {
        ScanOp::Sum => reverse_cumsum(g, dim),
        ScanOp::Prod => cumprod_grad(&xd, &yd, g, dim),
        ScanOp::LogSumExp => logcumsumexp_grad(&xd, &yd, g, dim),
    })
}

/// `Σ_{j >= i} t_j` along `dim`: the adjoint of a running sum.
fn reverse_cumsum(t: &Tensor, dim: usize) -> Result<Tensor> {
    let d = [dim as isize];
    t.flip(&d)?.cumsum(dim as isize)?.flip(&d)
}

/// `∂L/∂x_i = Σ_{j >= i} g_j · Π_{k <= j, k != i} x_k` for `y = cumprod(x)`.
///
/// Before the first zero of a slice, `Π_{k<=j, k≠i} x_k = y_j / x_i` with
/// `x_i ≠ 0`, so the sum is `reverse_cumsum(g·y)_i / x_i`. At the first
/// zero `z` the products leave out `x_z` itself: they are the running
/// products of `x` with `x_z` replaced by 1, and the sum is their reverse
/// running sum against `g` at `z`. After it every product includes `x_z = 0`,
/// so the gradient is 0 there (selected, never a `0/0`).
fn cumprod_grad(x: &Tensor, y: &Tensor, g: &Tensor, dim: usize) -> Result<Tensor> {
    let dt = x.dtype();
    let zero = x.eq_scalar(0.0)?;
    // How many zeros up to and including each position of its slice.
    let zeros_so_far = zero.to_dtype(dt)?.cumsum(dim as isize)?;
    let before_first = zeros_so_far.eq_scalar(0.0)?;
    let at_first = zero.logical_and(&zeros_so_far.eq_scalar(1.0)?)?;
    let plain = reverse_cumsum(&g.mul(y)?, dim)?.div(x)?;
    let skipped = x.masked_fill(&at_first, 1.0)?.cumprod(dim as isize)?;
    let at_zero = reverse_cumsum(&g.mul(&skipped)?, dim)?;
    let rest = Tensor::where_(&at_first, &at_zero, &g.zeros_like()?)?;
    Tensor::where_(&before_first, &plain, &rest)
}

/// `∂L/∂x_i = Σ_{j >= i} g_j · exp(x_i - y_j)` for `y = logcumsumexp(x)`,
/// as PyTorch's `logcumsumexp_backward`: with `g = g⁺ - g⁻` (both parts
/// non-negative), each part's sum is `exp(x_i + log Σ_{j>=i} exp(log g_j -
/// y_j))`, a reversed logcumsumexp, so no `exp` of a large argument is
/// ever formed. Where a part is zero its log is the dtype's lowest finite
/// value rather than `-inf` (PyTorch's choice too), which keeps a zero
/// part from forming `-inf - -inf` where `g` vanishes. It does not save an
/// element under a `-inf` output (a slice that starts with `-inf`):
/// `x_i + r_i` is `-inf + inf` there, and the gradient NaN, as PyTorch's.
fn logcumsumexp_grad(x: &Tensor, y: &Tensor, g: &Tensor, dim: usize) -> Result<Tensor> {
    let d = [dim as isize];
    let lowest = Tensor::full(
        g.shape().clone(),
        -crate::ops::mask::finite_max(g.dtype()),
        g.dtype(),
        g.device(),
    )?;
    let log_abs = g.abs()?.log()?;
    let part = |positive: bool| -> Result<Tensor> {
        let side = if positive {
            g.gt_scalar(0.0)?
        } else {
            g.lt_scalar(0.0)?
        };
        let log_g = Tensor::where_(&side, &log_abs, &lowest)?;
        let reversed = log_g
            .sub(y)?
            .flip(&d)?
            .logcumsumexp(dim as isize)?
            .flip(&d)?;
        reversed.add(x)?.exp()
    };
    part(true)?.sub(&part(false)?)
}
