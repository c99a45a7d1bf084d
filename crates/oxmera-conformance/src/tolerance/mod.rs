//! The tolerance table, and the comparison of a result with the reference.
//!
//! # The measure
//!
//! For a float output element with reference value `want`, a device value
//! `got` passes when
//!
//! ```text
//! |got - want| <= out · ε_out · max(|want|, tiny_out)  +  acc · ε_acc · S
//! ```
//!
//! - `ε_out` is the output dtype's machine epsilon (the spacing of its
//!   numbers at 1; one ulp of any value `v` is at most `ε_out · |v|`) and
//!   `tiny_out` its smallest normal, so that near zero the first term
//!   never falls below one subnormal spacing. `out` counts roundings into
//!   the output dtype.
//! - `ε_acc` is the epsilon of the precision a backend may compute in:
//!   `f32` for `f16`, `bf16` and `f32` (the [`oxmera_tensor::Backend`]
//!   contract lets narrow floats be computed in `f32`), `f64` for `f64`.
//!   `acc` counts roundings in that precision, and `S` is the magnitude
//!   they apply to: `|want|` for a well-conditioned elementwise op, and for
//!   sums the sum of the magnitudes of the terms (the quantity every
//!   summation error bound is proportional to), computed by the reference
//!   in `f64` from the case's inputs.
//!
//! The reported error of an element is the ratio of the two sides; an
//! element passes when it is at most 1, so the worst ratio of a run says
//! how close it came. NaN must meet NaN, an infinity must meet the same
//! infinity, and a finite reference value must not meet an infinity.
//! Integer and bool outputs compare exactly. For the ops that only move
//! values (copies, `cat`, `flip`, `neg`, ...) the sign of a zero must match
//! too.
//!
//! Where a scale `S` cannot be formed (an infinite or NaN input makes it
//! infinite or NaN), it is taken as 0, which only makes the bound
//! stricter.
//!
//! # Gradients
//!
//! The backward of an op is a composition of tensor ops run in the
//! tensor's dtype (each rule is written with public ops), so its error is
//! bounded normwise rather than element by element; see [`backward`].

use oxmera_core::DType;
use oxmera_tensor::{ReduceOp, Tensor, UnaryOp};

use crate::composite::Composite;
use crate::ops::Op;

mod backward;
mod compare;
mod scale;

pub use backward::{BackwardTolerance, backward, backward_conditioning, backward_roundings};
pub use compare::{Comparison, Worst};
pub(crate) use compare::{compare_backward, compare_exact, compare_forward};
pub(crate) use scale::scale;
use scale::wide;

/// What an error bound scales with (the `S` of the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// No second term.
    None,
    /// `|want|`: the op is well conditioned, its roundings are relative.
    Want,
    /// `|want| + 1`: a bounded periodic function whose argument reduction
    /// leaves an absolute error (sin, cos).
    WantPlusOne,
    /// `|want| + |x|`: `x · f(x)` with `f` computed as `1 ± g(x)`, whose
    /// cancellation leaves an absolute error proportional to `|x|`
    /// (GELU in both forms).
    WantPlusInput,
    /// `|want| · (1 + |b · ln|a||)`: the condition of `a^b` with respect to
    /// the rounding of `b · ln a` (pow, powf).
    Pow,
    /// `Σ|x|` over the reduced elements (sum).
    AbsSum,
    /// `Σ|x| / n` (mean).
    AbsMean,
    /// `Σx² / max(n - correction, 1)` (var).
    Moment2,
    /// `Σ_{j<=i} |x_j|` along the scanned dim: the running sum of the
    /// magnitudes (cumsum).
    AbsCumSum,
    /// `6 + |want| + max|x|` over the finite elements of the scanned
    /// slice (logcumsumexp).
    LogCumSumExp,
    /// `index_add(|x|, index, |src|, |alpha|)`: the magnitudes that meet in
    /// each element (index_add).
    AbsIndexAdd,
    /// `|want| · ((5 + s + L)/|p| + 5 + |ln want|)`, `s` the [`summation`]
    /// count and `L` the largest finite `|p · ln|x||` (a `p`-norm).
    PNorm,
    /// `max|x|` over the reduced elements plus `|want|` (logsumexp).
    Lse,
    /// `|want| · (s + 4 + |x - max|)` per element, `s` the [`summation`]
    /// count of the dim (softmax).
    Softmax,
    /// `|want| + |x - max| + s + 4` per element (log_softmax).
    LogSoftmax,
    /// `rstd · Σ|x|/n  +  |want| · (1 + (Σx²/n) / (var + eps))` per element,
    /// with the moments of its slice (layer_norm).
    LayerNorm,
    /// `(|A| · |B|)` (matmul).
    AbsMatmul,
    /// The equation over the operands' magnitudes (einsum).
    AbsEinsum,
    /// `(p·|v|) · (2·a + 2·S + 6 + r)` per output element, with the row's
    /// `a = max_j (E·|q||k|ᵀ·scale + |s|)` and `r = max_j |s - max s|` over
    /// its unmasked scores `s` (attention; see its forward row).
    Attention,
    /// `conv2d(|x|, |w|) + |b|` (conv2d).
    AbsConv,
    /// `avg_pool2d(|x|)` (avg_pool2d).
    AbsPool,
    /// `interpolate(|x|)` with the case's size and mode: the weighted
    /// magnitudes that meet in each output (bilinear interpolate).
    AbsInterpolate,
    /// `scatter_add(|x|, index, |src|)`: the sum of the magnitudes that
    /// meet in each element (scatter_add).
    AbsScatter,
}

/// The error bound of one op in one dtype (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Roundings into the output dtype, relative to `|want|`.
    pub out: f64,
    /// Roundings in the computing precision, applied to `scale`.
    pub acc: f64,
    /// What `acc` applies to.
    pub scale: Scale,
    /// Whether the sign of a zero must match.
    pub zero_sign: bool,
}

impl Tolerance {
    /// Bit-for-bit (for floats, NaN payloads aside): the op only moves or
    /// selects values, or is one correctly rounded operation.
    pub const EXACT: Tolerance = Tolerance {
        out: 0.0,
        acc: 0.0,
        scale: Scale::None,
        zero_sign: false,
    };

    const fn new(out: f64, acc: f64, scale: Scale) -> Tolerance {
        Tolerance {
            out,
            acc,
            scale,
            zero_sign: false,
        }
    }

    /// Whether every element must match exactly.
    pub fn is_exact(&self) -> bool {
        self.out == 0.0 && self.acc == 0.0
    }
}

/// The number of input elements that meet in one output element of a
/// reduction-like op (1 for elementwise ops).
pub fn terms(op: &Op, inputs: &[Tensor]) -> usize {
    let x = &inputs[0];
    match op {
        Op::Reduce { dims, .. } => reduced_extent(x, dims.as_deref()),
        Op::Composite(Composite::Trace) => x.dims().iter().copied().min().unwrap_or(1),
        // The products summed into one output element: the equation run
        // on ones counts them (an equation that fails here fails the case
        // on the reference first).
        Op::Composite(Composite::Einsum { equation }) => {
            einsum_terms(equation, inputs).unwrap_or(1)
        }
        // Each output sums S products p·v; each score sums E products
        // q·k; a gradient entry chains both.
        Op::Composite(Composite::Attention { .. }) => {
            let s = inputs[1].dims().iter().rev().nth(1).copied().unwrap_or(1);
            let e = inputs[0].dims().last().copied().unwrap_or(1);
            s.max(1) * e.max(1)
        }
        // x and the source slices whose index lands there: at most the
        // index's length, plus x.
        Op::Composite(Composite::IndexAdd { .. }) => inputs[1].numel() + 1,
        Op::Composite(Composite::VectorNorm { dims, .. }) => reduced_extent(x, dims.as_deref()),
        Op::Softmax { dim, .. } | Op::Scan { dim, .. } => {
            let d = if *dim < 0 {
                *dim + x.rank() as isize
            } else {
                *dim
            };
            x.dims().get(d as usize).copied().unwrap_or(1)
        }
        Op::LayerNorm {
            normalized_dims, ..
        } => x.dims()[x.rank().saturating_sub(*normalized_dims)..]
            .iter()
            .product(),
        // The contracted extent: the last dim of `a` (1 for a vector
        // promoted on the left is still its only dim).
        Op::Matmul => x.dims().last().copied().unwrap_or(1),
        Op::Conv2d(_) | Op::Composite(Composite::Conv1d(_)) => {
            let taps: usize = inputs[1].dims().iter().skip(1).product();
            taps + usize::from(inputs.len() > 2)
        }
        // The conv2d it runs: c_in/groups channels of kh·kw taps (zeros
        // included) and the bias.
        Op::Composite(Composite::ConvTranspose2d(p)) => {
            let w = inputs[1].dims();
            w[0] / p.groups.max(1) * w[2] * w[3] + usize::from(inputs.len() > 2)
        }
        Op::AvgPool2d(p) | Op::MaxPool2d(p) => p.kernel.0 * p.kernel.1,
        // A window's taps (a ceil_mode window's missing ones are padding).
        Op::Composite(Composite::MaxPool2dWith(o) | Composite::AvgPool2dWith(o)) => {
            o.kernel.0 * o.kernel.1
        }
        // Bilinear interpolation's 2x2 sources.
        Op::Composite(Composite::Interpolate {
            mode: oxmera_tensor::InterpolateMode::Bilinear { .. },
            ..
        }) => 4,
        // The largest window's size.
        Op::Composite(
            Composite::AdaptiveAvgPool2d((oh, ow)) | Composite::AdaptiveMaxPool2d((oh, ow)),
        ) => {
            let d = x.dims();
            let (h, w) = (d[d.len().saturating_sub(2)], d[d.len().saturating_sub(1)]);
            let longest = |len: usize, out: usize| {
                (0..out)
                    .map(|i| {
                        let (s, e) = oxmera_tensor::adaptive_window(i, len, out);
                        e - s
                    })
                    .max()
                    .unwrap_or(1)
            };
            longest(h, *oh) * longest(w, *ow)
        }
        Op::Scatter { dim, .. } | Op::Composite(Composite::ScatterReduce { dim, .. }) => {
            let src = &inputs[2];
            let d = if *dim < 0 {
                *dim + src.rank() as isize
            } else {
                *dim
            };
            src.dims().get(d as usize).copied().unwrap_or(1) + 1
        }
        _ => 1,
    }
}

/// The forward tolerance of `op` with output dtype `dtype`, `n` being
/// [`terms`]. Integer and bool outputs are always exact and never reach
/// this table.
///
/// Every row's comment is its error analysis. "Innocuous double
/// rounding": for `+ - × ÷ √` a result first rounded to a precision of
/// `p'` bits and then to `p` bits equals the direct rounding when
/// `p' ≥ 2p + 2` (Figueroa); `f64` (53) over `f32` (24), and `f32` over
/// `f16` (11) and `bf16` (8), all qualify. So the reference (exact in
/// `f64`, rounded once) and a backend computing these ops in `f32` or in
/// the dtype itself agree bit for bit.
pub fn forward(op: &Op, n: usize) -> Tolerance {
    use Scale::*;
    use UnaryOp::*;
    let s = summation(n);
    let n = n as f64;
    let moved = Tolerance {
        zero_sign: true,
        ..Tolerance::EXACT
    };
    match op {
        // Values are copied, never computed: identical bits, signed zeros
        // included. `neg` and `abs` only touch the sign bit, and a cast is
        // one correctly rounded conversion under Element's rules.
        Op::Contiguous
        | Op::Cast(_)
        | Op::Cat { .. }
        | Op::Flip { .. }
        | Op::Pad { .. }
        | Op::IndexSelect { .. }
        | Op::Gather { .. }
        | Op::Triangle { .. }
        | Op::Where
        | Op::Scatter {
            mode: oxmera_tensor::ScatterMode::Replace,
            ..
        }
        | Op::Unary(Neg | Abs)
        // Composites that select or move input values, or given constants
        // (and pad zeros).
        | Op::Composite(
            Composite::IsNan
            | Composite::IsInf
            | Composite::IsFinite
            | Composite::NanToNum { .. }
            | Composite::Roll { .. }
            | Composite::Repeat(_)
            | Composite::Tile(_)
            | Composite::Diagonal { .. }
            | Composite::Diag(_)
            | Composite::Sort { .. }
            | Composite::Argsort { .. }
            | Composite::Topk { .. }
            | Composite::Kthvalue { .. }
            | Composite::Median { .. }
            | Composite::RepeatInterleave { .. }
            | Composite::IndexCopy { .. }
            | Composite::MaskedSelect
            | Composite::Nonzero
            | Composite::PadMode { .. }
            // adaptive max pooling selects one element of each window.
            | Composite::AdaptiveMaxPool2d(_)
            // and so does max pooling with dilation and ceil_mode.
            | Composite::MaxPool2dWith(_)
            // amax and amin select an element (maximum and minimum order
            // -0 below +0).
            | Composite::ScatterReduce {
                reduce: oxmera_tensor::ScatterReduce::Amax | oxmera_tensor::ScatterReduce::Amin,
                ..
            }
            // nearest interpolation copies one source.
            | Composite::Interpolate {
                mode: oxmera_tensor::InterpolateMode::Nearest,
                ..
            },
        )
        // maximum and minimum order -0 below +0 (IEEE 754-2019), so the
        // sign of a zero result is defined too.
        | Op::Binary(oxmera_tensor::BinaryOp::Maximum | oxmera_tensor::BinaryOp::Minimum) => moved,
        // atan2 and hypot: one library function each, accurate to a few
        // ulps of the computing precision relative to the result (hypot's
        // condition number is at most 1; atan2's relative one is bounded
        // away from its zeros, which it meets only at exact zeros of the
        // input), then one rounding into the output dtype. fmod falls to
        // the exact row below.
        Op::Binary(oxmera_tensor::BinaryOp::Atan2 | oxmera_tensor::BinaryOp::Hypot) => {
            Tolerance::new(1.0, 4.0, Want)
        }
        // Selections and exact functions: the value is one of the inputs
        // (max, min, clamp, relu, max pooling), an integer (floor, ceil,
        // round, sign), or the single correctly rounded result of one
        // basic operation under innocuous double rounding (add, sub, mul,
        // div, sqrt, recip = 1/x, square = x·x, rem = an exact fmod plus
        // at most one addition of the divisor). The sign of a zero is
        // left free: `max(-0, +0)`-style ties may pick either.
        Op::Unary(
            Sign
            | Floor
            | Ceil
            | Round
            | Trunc
            | Relu
            | Clamp { .. }
            | Hardtanh { .. }
            | Sqrt
            | Recip
            | Square,
        )
        | Op::Binary(_)
        | Op::Compare(_)
        // outer: one product per element.
        | Op::Composite(Composite::Outer)
        | Op::MaxPool2d(_)
        | Op::Reduce {
            op: ReduceOp::Max | ReduceOp::Min | ReduceOp::ArgMax | ReduceOp::ArgMin,
            ..
        }
        | Op::Reduce {
            op: ReduceOp::All | ReduceOp::Any,
            ..
        } => match op {
            Op::Binary(oxmera_tensor::BinaryOp::Pow) => pow_tolerance(),
            _ => Tolerance::EXACT,
        },
        // `slope · x` with the slope rounded to the computing precision
        // first: two relative roundings there, one into the output.
        Op::Unary(LeakyRelu(_)) => Tolerance::new(1.0, 2.0, Want),
        // 1/√x as two correctly rounded steps: two relative roundings,
        // then one into the output dtype.
        Op::Unary(Rsqrt) => Tolerance::new(1.0, 2.0, Want),
        // Transcendentals: a vectorized polynomial with range reduction is
        // accurate to a few ulps of the computing precision (4 allowed),
        // then one rounding into the output dtype. Sigmoid, silu and
        // softplus are computed from exp with a few more relative roundings
        // (the 4 covers them: each step is relative).
        Op::Unary(Exp | Log | Log1p | Tanh | Sigmoid | Erf | Silu | Softplus) => {
            Tolerance::new(1.0, 4.0, Want)
        }
        // The same for the rest of the library functions: the input is
        // exact, so a few ulps of the computing precision relative to the
        // result (tan included: the corpus keeps its arguments off the
        // poles, where any one ulp of reduction error would be amplified),
        // then one rounding into the output dtype. logsigmoid is
        // -softplus(-x).
        Op::Unary(
            Expm1 | Log2 | Log10 | Exp2 | Tan | Atan | Asin | Acos | Sinh | Cosh | Logsigmoid,
        ) => Tolerance::new(1.0, 4.0, Want),
        // alpha·expm1(x) (and SELU's scale): expm1's few ulps, then up to
        // two products with a rounded constant, every step relative.
        Op::Unary(Elu(_) | Selu) => Tolerance::new(1.0, 6.0, Want),
        // x·tanh(softplus(x)): softplus's 4 ulps pass through tanh with a
        // relative condition s·tanh'(s)/tanh(s) <= 1, tanh adds its own
        // 4 and the product 1; then one rounding into the output.
        Op::Unary(Mish) => Tolerance::new(1.0, 10.0, Want),
        // x/6 + 1/2 cancels near x = -3: the division's rounding is
        // relative to |x|/6 and the addition's to the result, so the error
        // is within ε·(|x| + |want|).
        Op::Unary(Hardsigmoid) => Tolerance::new(1.0, 2.0, WantPlusInput),
        // x·(x + 3)/6: x is exact, so each of the three roundings is
        // relative to its own (same-signed) factor of the result.
        Op::Unary(Hardswish) => Tolerance::new(1.0, 3.0, Want),
        // A running sum in order: element i meets i additions, each
        // rounding relative to a partial sum bounded by Σ_{j<=i}|x_j|, so
        // |error| <= n·ε_acc·Σ_{j<=i}|x_j| (γ_n), then one rounding into the
        // output dtype. A parallel scan's tree of partial sums is within
        // the same bound.
        Op::Scan {
            op: oxmera_tensor::ScanOp::Sum,
            ..
        } => Tolerance::new(1.0, n, AbsCumSum),
        // A running product: element i meets i multiplications, each a
        // relative rounding, so n·ε_acc·|want| (away from underflow), then
        // one rounding into the output dtype.
        Op::Scan {
            op: oxmera_tensor::ScanOp::Prod,
            ..
        } => Tolerance::new(1.0, n, Want),
        // A running log-add-exp, `hi + log1p(exp(lo - hi))` per step: the
        // running value's error passes on with a weight at most 1 (the
        // step's derivatives are softmax weights); each step adds the
        // subtraction's u·|lo - hi| (after exp, at most u/e), exp's 4 ulps
        // of t ≤ 1 (through log1p, at most 2u), log1p's 4 ulps of at most
        // ln 2 (3u) and the addition's u·|y_k|. The running values are
        // monotone, from the first finite element to `want`, so |y_k| ≤
        // max(max|x|, |want|), and element i meets at most n steps:
        // n·ε_acc·(6 + |want| + max|x|), then one rounding into the output.
        Op::Scan {
            op: oxmera_tensor::ScanOp::LogSumExp,
            ..
        } => Tolerance::new(1.0, n, LogCumSumExp),
        Op::Unary(Sin | Cos) => Tolerance::new(1.0, 4.0, WantPlusOne),
        Op::Unary(GeluErf | GeluTanh) => Tolerance::new(1.0, 4.0, WantPlusInput),
        Op::Unary(Powf(_)) => pow_tolerance(),
        Op::Unary(Not) => Tolerance::EXACT,
        // An accurate summation of n terms (the backends' contract asks for
        // pairwise or blocked accumulation): sequential leaves of at most
        // LEAF terms combined as a tree, so every term meets at most
        // LEAF - 1 + ⌈log2(n/LEAF)⌉ additions and |error| ≤ γ_that·Σ|x|
        // (γ_k = k·u/(1 - k·u) ≤ k·ε here); see [`summation`]. A plain
        // running sum stays within this for n ≤ LEAF and fails beyond it
        // where it loses terms (the corpus's absorption case). Then one
        // rounding into the output dtype.
        Op::Reduce {
            op: ReduceOp::Sum, ..
        } => Tolerance::new(1.0, s, AbsSum),
        Op::Composite(Composite::VectorNorm { ord, .. }) => norm_tolerance(*ord, s),
        // x plus the alpha·source slices that land on it: n terms summed
        // as scatter_add's, over their magnitudes, after one relative
        // rounding of each product alpha·s.
        Op::Composite(Composite::IndexAdd { .. }) => {
            Tolerance::new(1.0, n + 1.0, AbsIndexAdd)
        }
        // A contraction of n products per output element, computed as
        // sums over one operand's own labels and a chain of batched
        // matmuls, each of whose results the next one reads: every step
        // is an inner product or a sum (γ over its extent, on the
        // magnitudes |a|·|b|·… that meet), and the extents of the steps
        // multiply to at most n, so their sum is at most n plus one per
        // operand (for extents of 1). Each intermediate rounds into the
        // dtype: the corpus keeps einsum to f32, f64 and integers, where
        // that dtype is the computing precision. One more rounding into
        // the output.
        Op::Composite(Composite::Einsum { equation }) => {
            Tolerance::new(1.0, n + einsum_operands(equation), AbsEinsum)
        }
        // softmax(q·kᵀ·scale + mask)·v over S keys of width E, in three
        // steps whose errors compose (units of ε_acc):
        // - a score s_ij is an inner product of E terms, scaled and masked:
        //   |δs| <= E·|q||k|ᵀ·scale + |s| (γ_E, then two roundings), at most
        //   a_i over row i's unmasked keys;
        // - softmax of scores each off by at most a_i moves every p_ij by a
        //   factor within e^(±2a_i): a relative error 2a_i; its own
        //   roundings are the softmax row's, S + 4 + r_i relative;
        // - o = Σ_j p_ij v_jd sums S products (γ_S) on Σ p|v|, and carries
        //   the relative errors of p onto the same Σ p|v|.
        // So |δo| <= (p·|v|)·(2a + 2S + 4 + r) plus a rounding or two; one
        // more rounding into the output. The corpus keeps attention to f32
        // and f64, where the intermediates round in ε_acc.
        Op::Composite(Composite::Attention { .. }) => Tolerance::new(1.0, 1.0, Attention),
        // trace: the sum of the diagonal's n terms, as for sum.
        Op::Composite(Composite::Trace) => Tolerance::new(1.0, s, AbsSum),
        // The sum's bound scaled by 1/n, plus the division's rounding.
        Op::Reduce {
            op: ReduceOp::Mean,
            ..
        } => Tolerance::new(2.0, s + 1.0, AbsMean),
        // n multiplications, each a relative rounding.
        Op::Reduce {
            op: ReduceOp::Prod,
            ..
        } => Tolerance::new(1.0, n, Want),
        // Two accumulations of n terms (the mean, then the squared
        // deviations), each bounded by γ_n times a sum no larger than Σx²,
        // the mean's error entering the second twice: 4n + 4 roundings of
        // Σx²/(n - correction). A backend may use two passes or Welford.
        Op::Reduce {
            op: ReduceOp::Var { .. } | ReduceOp::Std { .. },
            ..
        } => Tolerance::new(1.0, 4.0 * s + 4.0, Moment2),
        // m + log Σ exp(x - m): the final addition rounds relative to |m|
        // and |want|, each subtraction x - m relative to |x - m| ≤ 2·max|x|
        // (absorbed in the 4), and the sum of n positive terms is relative
        // (γ_n), which log turns into an absolute n·u.
        Op::Reduce {
            op: ReduceOp::LogSumExp,
            ..
        } => Tolerance::new(1.0, s + 4.0, Lse),
        // exp(x - m) / Σ: the subtraction's relative rounding becomes a
        // relative error |x - m|·u after exp; exp's few ulps; a sum of n
        // positive terms (γ_n, relative); one division. The output term
        // counts 2 because a subnormal result is rounded twice (the
        // exp, then the quotient).
        Op::Softmax { log: false, .. } => Tolerance::new(2.0, 1.0, Softmax),
        // (x - m) - log Σ exp(x - m): absolute errors u|x - m| and
        // u·(n + 4) from the log of a relatively accurate sum, and one
        // final rounding.
        Op::Softmax { log: true, .. } => Tolerance::new(1.0, 1.0, LogSoftmax),
        // (x - mean) · rstd over a slice of n, with r = rstd, A = Σ|x|/n,
        // M2 = Σx²/n and v the variance, in units of ε_acc:
        // - the mean is a sum (s roundings of Σ|x|) and a division, and a
        //   backend may round it into the dtype once more: r·(s + 2)·A;
        // - the subtraction rounds relative to |x - mean|: r·|x - mean| = |y|;
        // - the variance is within (4s + 4)·M2 (the var row), adding eps
        //   one more relative rounding; the square root halves the relative
        //   error, and the root, the reciprocal and a rounding of rstd into
        //   the dtype add three: |y|·((2s + 2)·M2/(v + eps) + 3.5);
        // - the final product: |y|.
        // All are within (2s + 6)·(r·A + |y|·(1 + M2/(v + eps))), then one
        // rounding into the output. The M2/(v + eps) factor is the
        // conditioning of a slice whose mean is large against its spread.
        Op::LayerNorm { .. } => Tolerance::new(1.0, 2.0 * s + 6.0, LayerNorm),
        // Inner products of length k: |error| ≤ γ_k (|A|·|B|) (Higham,
        // Accuracy and Stability, §3.5), with or without FMA and in any
        // order or blocking. One more rounding into the output.
        Op::Matmul => Tolerance::new(1.0, n, AbsMatmul),
        // An inner product of c_in/groups·kh·kw taps (plus the bias): the
        // matmul bound, whether computed directly or by im2col + GEMM.
        // conv1d is conv2d over a unit height: the same inner products.
        // conv_transpose2d is conv2d over the zero-inserted input: the zeros
        // add nothing, the bound is the same over |x|, |w| and |b|.
        Op::Conv2d(_) | Op::Composite(Composite::Conv1d(_) | Composite::ConvTranspose2d(_)) => {
            Tolerance::new(1.0, n, AbsConv)
        }
        // A sum of kh·kw taps (the divisor counts padding, per the
        // reference), then one division.
        Op::AvgPool2d(_) => Tolerance::new(2.0, n + 1.0, AbsPool),
        // The same for adaptive windows (n the largest window's size), each
        // divided by its own size; f16 and bf16 sum and divide in f32, then
        // round once into the dtype (within the 2 ulps of the output term).
        Op::Composite(Composite::AdaptiveAvgPool2d(_)) => Tolerance::new(2.0, n + 1.0, AbsPool),
        // ceil_mode's mean: a sum of at most kh·kw taps (padded zeros
        // included) divided by the window's clipped size, f16 and bf16 in
        // f32 rounded once (within the output term's 2 ulps) — avg_pool2d's.
        Op::Composite(Composite::AvgPool2dWith(_)) => Tolerance::new(2.0, n + 1.0, AbsPool),
        // Bilinear: along the width x0·λ0 + x1·λ1 (two products and a sum,
        // within 2ε·(λ0|x0| + λ1|x1|)), then the same along the height on
        // those results (2ε more, and the width's error carried with
        // weights that sum to 1): 4ε_acc times the interpolation of |x|.
        // Both sides use the same host-computed weights. Then one rounding
        // into the output (f16 and bf16 are computed in f32).
        Op::Composite(Composite::Interpolate { .. }) => Tolerance::new(1.0, 4.0, AbsInterpolate),
        // scatter_reduce: sum is scatter_add's row over the magnitudes that
        // meet; mean divides that sum (rounded into the dtype, relative to
        // the result) by the count, one more rounding, and its scale is the
        // mean of the magnitudes; prod multiplies in the dtype, n relative
        // roundings of it (n the sources plus self).
        Op::Composite(Composite::ScatterReduce { reduce, .. }) => match reduce {
            oxmera_tensor::ScatterReduce::Mean => Tolerance::new(2.0, n, AbsScatter),
            oxmera_tensor::ScatterReduce::Prod => Tolerance::new(n, 0.0, None),
            _ => Tolerance::new(1.0, n, AbsScatter),
        },
        // Each element is x plus the source values whose index lands on
        // it: a sum of at most n terms (the source's extent along `dim`,
        // plus x), bounded as `sum` is, over the magnitudes that meet.
        Op::Scatter {
            mode: oxmera_tensor::ScatterMode::Add,
            ..
        } => Tolerance::new(1.0, n, AbsScatter),
    }
}

/// The forward bound of a vector norm of `ord` whose sum meets `s`
/// additions ([`summation`]).
fn norm_tolerance(ord: f64, s: f64) -> Tolerance {
    if ord == 0.0 || ord.is_infinite() {
        // A count of ones (exact below 2^24 terms) or a selected |x|.
        Tolerance::EXACT
    } else if ord == 1.0 {
        // Σ|x|: positive terms, so the sum's s roundings are relative to
        // the result, then one rounding into the output.
        Tolerance::new(1.0, s, Scale::Want)
    } else if ord == 2.0 {
        // √Σx²: the squares (1) and the sum (s), both relative on positive
        // terms, and the sum's rounding into the computing dtype (1); the
        // root halves that relative error and adds its own rounding, which
        // is the one into the output (or, for f16/bf16, one more in f32).
        Tolerance::new(1.0, (s + 2.0) / 2.0 + 1.0, Scale::Want)
    } else {
        // (Σ|x|^p)^(1/p): see [`Scale::PNorm`]: each power is within a few
        // ulps plus its condition |p ln|x|| (4 + L, and one rounding), the
        // sum is relative (s), the root divides that relative error by |p|
        // and adds its own few ulps and condition |ln want|, and a rounding.
        Tolerance::new(1.0, 1.0, Scale::PNorm)
    }
}

/// The longest sequential run of an accurate summation's leaves.
pub const LEAF: usize = 512;

/// The number of additions a term of an accurate `n`-term summation can
/// meet: all `n - 1` up to [`LEAF`] terms; beyond, at most `LEAF - 1`
/// within its leaf and one per level of the tree over `⌈n / LEAF⌉`
/// leaves. (Counted as `n`, and as `LEAF + levels`, for a little slack.)
pub fn summation(n: usize) -> f64 {
    if n <= LEAF {
        n as f64
    } else {
        let leaves = n.div_ceil(LEAF);
        (LEAF + leaves.next_power_of_two().trailing_zeros() as usize) as f64
    }
}

/// `a^b` computed as `exp(b · ln a)`: the product's relative rounding
/// becomes an absolute error of `u·|b ln a|` in the exponent, so a
/// relative error of that size in the result, on top of the few ulps of
/// `exp` and `ln` themselves.
fn pow_tolerance() -> Tolerance {
    Tolerance::new(1.0, 4.0, Scale::Pow)
}

/// The machine epsilon of a float dtype ([`DType::machine_epsilon`]);
/// the integer dtypes and bool, compared exactly, get `f64`'s.
pub fn eps(dtype: DType) -> f64 {
    dtype.machine_epsilon().unwrap_or(f64::EPSILON)
}

/// The smallest normal number of a float dtype.
pub fn tiny(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 2f64.powi(-14),
        DType::BF16 | DType::F32 => 2f64.powi(-126),
        _ => f64::MIN_POSITIVE,
    }
}

/// The precision a backend may compute `dtype` in.
pub fn acc_dtype(dtype: DType) -> DType {
    if dtype == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// The elements of `x` that meet in one output of a reduction over `dims`
/// (`None`: every element; negative dims count from the end).
fn reduced_extent(x: &Tensor, dims: Option<&[isize]>) -> usize {
    match dims {
        None => x.numel(),
        Some(d) => d
            .iter()
            .map(|&d| {
                let d = if d < 0 { d + x.rank() as isize } else { d };
                x.dims().get(d as usize).copied().unwrap_or(1)
            })
            .product(),
    }
}

/// How many operands an einsum equation names.
pub(crate) fn einsum_operands(equation: &str) -> f64 {
    let inputs = equation.split("->").next().unwrap_or("");
    (inputs.matches(',').count() + 1) as f64
}

/// The products that meet in one output element of `equation`: the
/// equation over ones, in `f64` on the reference.
fn einsum_terms(equation: &str, inputs: &[Tensor]) -> Option<usize> {
    let ones: Vec<Tensor> = inputs
        .iter()
        .map(|x| {
            Tensor::ones(
                x.shape().clone(),
                DType::F64,
                oxmera_core::Device::Reference,
            )
        })
        .collect::<oxmera_core::Result<_>>()
        .ok()?;
    let refs: Vec<&Tensor> = ones.iter().collect();
    let counts = oxmera_tensor::no_grad(|| Tensor::einsum(equation, &refs)).ok()?;
    let first = counts.to_f64_vec().ok()?.first().copied()?;
    Some((first as usize).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmera_tensor::HostBuffer;

    #[test]
    fn one_ulp_of_f32_is_within_one_epsilon_unit() {
        let tol = Tolerance::new(1.0, 0.0, Scale::None);
        let want = 1.5f32;
        let got = f32::from_bits(want.to_bits() + 1);
        let c = compare_forward(&[got as f64], &[want as f64], DType::F32, &tol, &[0.0]);
        assert!(c.passed());
        // 2^-23 / (2^-23 · 1.5) = 2/3
        assert!((c.ratio - 2.0 / 3.0).abs() < 1e-12, "{}", c.ratio);
        let got2 = f32::from_bits(want.to_bits() + 2);
        let c = compare_forward(&[got2 as f64], &[want as f64], DType::F32, &tol, &[0.0]);
        assert!(!c.passed());
    }

    #[test]
    fn subnormals_are_compared_on_the_subnormal_spacing() {
        let tol = Tolerance::new(1.0, 0.0, Scale::None);
        let s = f32::from_bits(1) as f64;
        let c = compare_forward(&[2.0 * s], &[s], DType::F32, &tol, &[0.0]);
        assert_eq!(c.ratio, 1.0);
        let c = compare_forward(&[3.0 * s], &[s], DType::F32, &tol, &[0.0]);
        assert_eq!(c.ratio, 2.0);
    }

    #[test]
    fn the_scale_term_uses_the_computing_precision() {
        // f16 output, sum bound 4·ε_f32·S with S = 10 (`scale` hands
        // `ε_f32·S` over): an error of 4·2^-23·10 is allowed beyond the
        // output rounding.
        let tol = Tolerance::new(0.0, 4.0, Scale::AbsSum);
        let allowed = 4.0 * 2f64.powi(-23) * 10.0;
        let unit = eps(acc_dtype(DType::F16));
        let c = compare_forward(&[1.0 + allowed], &[1.0], DType::F16, &tol, &[unit * 10.0]);
        assert!((c.ratio - 1.0).abs() < 1e-9, "{}", c.ratio);
    }

    #[test]
    fn special_values_must_match_in_kind() {
        let tol = Tolerance::new(100.0, 0.0, Scale::None);
        let cmp = |g: f64, w: f64| compare_forward(&[g], &[w], DType::F32, &tol, &[0.0]);
        assert!(cmp(f64::NAN, f64::NAN).passed());
        assert_eq!(cmp(1.0, f64::NAN).worst.unwrap().reason, Some("want NaN"));
        assert_eq!(cmp(f64::NAN, 1.0).worst.unwrap().reason, Some("got NaN"));
        assert!(cmp(f64::INFINITY, f64::INFINITY).passed());
        assert!(!cmp(f64::NEG_INFINITY, f64::INFINITY).passed());
        assert!(!cmp(f64::MAX, f64::INFINITY).passed());
        assert!(!cmp(f64::INFINITY, 3.0e38).passed());
        // Signed zeros: free unless the op only moves values.
        assert!(cmp(-0.0, 0.0).passed());
        let moved = Tolerance {
            zero_sign: true,
            ..Tolerance::EXACT
        };
        let c = compare_forward(&[-0.0], &[0.0], DType::F32, &moved, &[0.0]);
        assert_eq!(c.worst.unwrap().reason, Some("sign of zero"));
    }

    #[test]
    fn exact_means_exact() {
        let c = compare_forward(&[1.0, 2.0], &[1.0, 2.0], DType::F64, &Tolerance::EXACT, &[]);
        assert_eq!(c.ratio, 0.0);
        let c = compare_forward(
            &[1.0, 2.0 + 1e-15],
            &[1.0, 2.0],
            DType::F64,
            &Tolerance::EXACT,
            &[],
        );
        assert!(c.ratio.is_infinite());
        assert_eq!(c.worst.unwrap().index, 1);
        let a = HostBuffer::I64(vec![1, 2, 3]);
        let b = HostBuffer::I64(vec![1, 2, 4]);
        assert!(compare_exact(&a, &a).passed());
        assert_eq!(compare_exact(&b, &a).worst.unwrap().index, 2);
    }

    #[test]
    fn gradients_are_bounded_normwise() {
        let tol = backward(&Op::Unary(UnaryOp::Neg), DType::F32, 1, 0.0);
        // neg: no rounding in the rule, none in the forward, one final:
        // (0 + 0 + 1)·ε + 2·1·ε_acc = 3·2^-23 of M.
        assert_eq!(tol.normwise, 3.0 * 2f64.powi(-23));
        // M = max(‖want‖, ‖g‖) = 4.
        let slack = tol.normwise * 4.0;
        let c = compare_backward(&[0.0 + slack * 0.5, 4.0], &[0.0, 4.0], &tol, 1.0);
        assert!(c.passed());
        let c = compare_backward(&[0.0 + slack * 2.0, 4.0], &[0.0, 4.0], &tol, 1.0);
        assert!(!c.passed());
        assert_eq!(c.worst.unwrap().index, 0);
    }

    #[test]
    fn a_power_near_the_largest_f64_keeps_its_allowance() {
        // `pow/specials`: the largest subnormal to the power -1 is about
        // 2^1022, and `|want|·(1 + |b·ln a|)` (709 times that) passes
        // f64's range. Counted as no allowance, it held the element to
        // one rounding of its output, and a device's `exp(b·ln a)` (124
        // ulp there, inside its derived bound) failed; `ε·S` is finite.
        let r = oxmera_core::Device::Reference;
        let x = f64::MIN_POSITIVE - f64::from_bits(1);
        let a = Tensor::from_vec(vec![x], [1], r).unwrap();
        let b = Tensor::from_vec(vec![-1.0f64], [1], r).unwrap();
        let want = [x.powf(-1.0)];
        let op = Op::Binary(oxmera_tensor::BinaryOp::Pow);
        let tol = forward(&op, 1);
        let unit = eps(DType::F64);
        let s = scale(&tol, &op, &[a, b], &want, 1, unit).unwrap();
        let expected = want[0] * unit * (1.0 + x.ln().abs());
        assert!(
            (s[0] / expected - 1.0).abs() < 1e-12,
            "{s:?} vs {expected:e}"
        );
        let got = 4.494_232_837_155_666_5e307;
        let c = compare_forward(&[got], &want, DType::F64, &tol, &s);
        assert!(c.passed(), "{c:?}");
        // An error past the derived bound still fails.
        let far = want[0] * (1.0 - 8.0 * tol.acc * unit * (1.0 + x.ln().abs()));
        assert!(!compare_forward(&[far], &want, DType::F64, &tol, &s).passed());
    }

    #[test]
    fn a_running_sum_fails_absorption_and_an_accurate_one_does_not() {
        // 2^24 then 69999 ones, in f32. Exact: 16847215, which f32 rounds
        // to 16847216. A running f32 sum never leaves 2^24.
        let n = 70000;
        let sum = Op::Reduce {
            op: ReduceOp::Sum,
            dims: None,
            keepdim: false,
        };
        let tol = forward(&sum, n);
        // 512 sequential terms plus ⌈log2 ⌈70000/512⌉⌉ = 8 tree levels.
        assert_eq!(tol.acc, 520.0);
        let exact = 16_777_216.0 + 69_999.0;
        let want = exact as f32 as f64;
        let running = 16_777_216.0f32 as f64;
        // The scale `S = Σ|x| = exact`, handed over as `ε_f32·S`.
        let s = eps(DType::F32) * exact;
        let c = compare_forward(&[running], &[want], DType::F32, &tol, &[s]);
        assert!(!c.passed(), "{c:?}");
        // One leaf of 512 absorbed whole (the worst an accurate sum does
        // here) stays inside.
        let blocked = (16_777_216.0f32 + 69_488.0f32) as f64;
        let c = compare_forward(&[blocked], &[want], DType::F32, &tol, &[s]);
        assert!(c.passed(), "{c:?}");
    }

    #[test]
    fn basic_arithmetic_is_exact_and_sums_are_not() {
        let add = forward(&Op::Binary(oxmera_tensor::BinaryOp::Add), 1);
        assert!(add.is_exact());
        let sum = forward(
            &Op::Reduce {
                op: ReduceOp::Sum,
                dims: None,
                keepdim: false,
            },
            10,
        );
        assert_eq!((sum.acc, sum.scale), (10.0, Scale::AbsSum));
        assert!(forward(&Op::Flip { dims: vec![0] }, 1).zero_sign);
    }
}
