//! The backend seam: what a device must be able to do.
//!
//! The division of labour is strict. [`Tensor`]'s methods (the front end)
//! validate every argument, resolve negative dims, compute output shapes,
//! and broadcast operands to a common shape *as stride-0 views*; only then
//! do they call a backend. So a backend never sees a malformed request and
//! never re-implements shape logic: it receives operands of known, agreed
//! shapes — possibly non-contiguous, possibly with offsets and zero strides —
//! and returns fresh storage laid out contiguously (row-major) in the output
//! shape the front end announced.
//!
//! Each family of operations is one method taking an op enum, which keeps
//! the trait object-safe and small, and lets the conformance suite name
//! ops as data.

use std::fmt;

use oxmera_core::{DType, Device, Result, Shape};

use crate::{HostBuffer, Storage, Tensor};

/// Elementwise operations of one operand.
///
/// Float-only ops (`Exp`, `Sigmoid`, …) are rejected by the front end for
/// integer and bool inputs with [`oxmera_core::Error::UnsupportedDType`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)]
pub enum UnaryOp {
    Neg,
    Abs,
    Sign,
    Exp,
    Log,
    Log1p,
    Sqrt,
    Rsqrt,
    Recip,
    Square,
    Sin,
    Cos,
    Tanh,
    Sigmoid,
    Relu,
    /// `x` for positive `x`, else `slope * x`.
    LeakyRelu(f64),
    /// `x * Φ(x)` with the exact normal CDF.
    GeluErf,
    /// The tanh approximation of GELU.
    GeluTanh,
    Silu,
    Softplus,
    Erf,
    Floor,
    Ceil,
    /// Round half to even.
    Round,
    /// `min(max(x, min), max)`; either bound may be absent.
    Clamp {
        min: Option<f64>,
        max: Option<f64>,
    },
    /// `x^exponent`.
    Powf(f64),
    /// Logical not (bool only).
    Not,
}

impl UnaryOp {
    /// The public name of the op, as used in errors and the conformance corpus.
    pub fn name(&self) -> &'static str {
        use UnaryOp::*;
        match self {
            Neg => "neg",
            Abs => "abs",
            Sign => "sign",
            Exp => "exp",
            Log => "log",
            Log1p => "log1p",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Recip => "recip",
            Square => "square",
            Sin => "sin",
            Cos => "cos",
            Tanh => "tanh",
            Sigmoid => "sigmoid",
            Relu => "relu",
            LeakyRelu(_) => "leaky_relu",
            GeluErf => "gelu",
            GeluTanh => "gelu_tanh",
            Silu => "silu",
            Softplus => "softplus",
            Erf => "erf",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Clamp { .. } => "clamp",
            Powf(_) => "powf",
            Not => "logical_not",
        }
    }
}

/// Elementwise operations of two operands of one dtype, giving that dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Maximum,
    Minimum,
    Rem,
    /// Logical and (bool only).
    And,
    /// Logical or (bool only).
    Or,
    /// Logical exclusive or (bool only).
    Xor,
}

impl BinaryOp {
    /// The public name of the op.
    pub fn name(&self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "sub",
            Mul => "mul",
            Div => "div",
            Pow => "pow",
            Maximum => "maximum",
            Minimum => "minimum",
            Rem => "rem",
            And => "logical_and",
            Or => "logical_or",
            Xor => "logical_xor",
        }
    }
}

/// Comparisons of two operands of one dtype, giving bool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// The public name of the op.
    pub fn name(&self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }
}

/// Reductions over a set of dims.
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(missing_docs)]
pub enum ReduceOp {
    Sum,
    Mean,
    Prod,
    Max,
    Min,
    /// Index of the first maximum, as i64: the row-major position within
    /// the reduced sub-block (the front end passes one dim, or all dims
    /// for the flattened index). NaN counts as the maximum.
    ArgMax,
    /// Index of the first minimum, as for `ArgMax` (NaN counts as the minimum).
    ArgMin,
    /// Variance with `correction` subtracted from the count (1 = Bessel).
    Var {
        correction: f64,
    },
    /// Standard deviation with a correction, as for `Var`.
    Std {
        correction: f64,
    },
    LogSumExp,
    /// Whether every element is true (bool output).
    All,
    /// Whether any element is true (bool output).
    Any,
}

impl ReduceOp {
    /// The public name of the op.
    pub fn name(&self) -> &'static str {
        use ReduceOp::*;
        match self {
            Sum => "sum",
            Mean => "mean",
            Prod => "prod",
            Max => "max",
            Min => "min",
            ArgMax => "argmax",
            ArgMin => "argmin",
            Var { .. } => "var",
            Std { .. } => "std",
            LogSumExp => "logsumexp",
            All => "all",
            Any => "any",
        }
    }
}

/// How `scatter` combines a source value with what is already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterMode {
    /// Overwrite; when indices collide the last write (in source order) wins.
    Replace,
    /// Accumulate: colliding indices add up.
    Add,
}

/// Geometry of a 2-D convolution over NCHW input and OIHW weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Conv2dParams {
    /// Step between windows, (height, width).
    pub stride: (usize, usize),
    /// Zeros added on each side, (height, width).
    pub padding: (usize, usize),
    /// Spacing between kernel taps, (height, width).
    pub dilation: (usize, usize),
    /// Number of channel groups.
    pub groups: usize,
}

impl Default for Conv2dParams {
    fn default() -> Self {
        Conv2dParams {
            stride: (1, 1),
            padding: (0, 0),
            dilation: (1, 1),
            groups: 1,
        }
    }
}

/// Geometry of a 2-D pooling window over NCHW input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pool2dParams {
    /// Window size, (height, width).
    pub kernel: (usize, usize),
    /// Step between windows, (height, width).
    pub stride: (usize, usize),
    /// Padding on each side, (height, width). Max pooling pads with -inf;
    /// average pooling counts padded zeros in the divisor.
    pub padding: (usize, usize),
}

/// A device's implementation of the tensor operations.
///
/// Contract for every method: inputs have been validated by the front end;
/// the returned storage is contiguous, row-major, on this backend's device,
/// and holds exactly the number of elements of the output shape stated in
/// the method's doc. Float ops on `f16`/`bf16`/`f32` may compute in any
/// precision that meets the conformance suite's tolerances.
pub trait Backend: Send + Sync + fmt::Debug {
    /// A short name (`"reference"`, `"cpu"`).
    fn name(&self) -> &'static str;

    /// The device this backend computes on.
    fn device(&self) -> Device;

    /// Moves host data onto this device.
    // The name pairs with `to_host`; `self` is the device, not the source.
    #[allow(clippy::wrong_self_convention)]
    fn from_host(&self, data: HostBuffer) -> Result<Storage>;

    /// Copies a tensor's elements, in logical row-major order, to the host.
    fn to_host(&self, x: &Tensor) -> Result<HostBuffer>;

    /// Copies `x` into fresh contiguous storage (shape of `x`).
    fn contiguous(&self, x: &Tensor) -> Result<Storage>;

    /// Converts `x` to `dtype` following [`crate::Element`]'s rules (shape of `x`).
    fn cast(&self, x: &Tensor, dtype: DType) -> Result<Storage>;

    /// Elementwise `op(x)` (shape and dtype of `x`).
    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage>;

    /// Elementwise `op(a, b)`; `a` and `b` have the same shape and dtype
    /// (shape and dtype of `a`).
    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage>;

    /// Elementwise comparison; same shape and dtype (shape of `a`, bool).
    fn compare(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage>;

    /// `cond ? a : b` elementwise; all three have one shape, `cond` is bool,
    /// `a` and `b` share a dtype (shape and dtype of `a`).
    fn where_cond(&self, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Storage>;

    /// Reduces over `dims` (sorted, distinct, possibly empty, which means
    /// a copy). Output shape: `x`'s with each reduced dim set to 1. Output
    /// dtype: as the front end's doc of each op says (`out_dtype`).
    fn reduce(&self, op: ReduceOp, x: &Tensor, dims: &[usize], out_dtype: DType)
    -> Result<Storage>;

    /// Softmax (or log-softmax when `log`) along `dim` (shape of `x`).
    fn softmax(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage>;

    /// Layer normalization without the affine part: each slice over the
    /// last `dims` dims (`1 <= dims <= rank`) becomes
    /// `(x - mean) / sqrt(var + eps)`, the variance dividing by the count
    /// (shape of `x`). `x` is a float tensor and `eps` finite and `>= 0`.
    ///
    /// The default body composes the backend's own `mean`, `var`, `sub`,
    /// `rsqrt` and `mul`, in `f64` (casting in and out): in the dtype
    /// itself, the rounding of each intermediate would exceed the op's
    /// tolerance for `f16` and `bf16`, and the variance of `f32` values
    /// beyond about 1e19 would overflow. That is five passes, four
    /// temporaries and two casts; a backend overrides it with one fused
    /// kernel per slice.
    fn layer_norm(&self, x: &Tensor, dims: usize, eps: f64) -> Result<Storage> {
        let y = crate::no_grad(|| {
            let wide = x.detach().to_dtype(DType::F64)?;
            let over: Vec<isize> = (-(dims as isize)..0).collect();
            let mean = wide.mean(&over, true)?;
            let rstd = wide.var(&over, 0.0, true)?.add_scalar(eps)?.rsqrt()?;
            wide.sub(&mean)?.mul(&rstd)?.to_dtype(x.dtype())
        })?;
        self.contiguous(&y)
    }

    /// Batched matrix product: `a` is `[..., m, k]`, `b` is `[..., k, n]`
    /// with identical batch dims (possibly stride-0 broadcasts); the output
    /// is `[..., m, n]`.
    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage>;

    /// Concatenates along `dim`; inputs agree on every other dim and dtype.
    fn cat(&self, xs: &[&Tensor], dim: usize) -> Result<Storage>;

    /// Picks slices of `x` along `dim` at `indices` (1-D, i64, in range).
    /// Output: `x`'s shape with `dim` set to `indices.numel()`.
    fn index_select(&self, x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage>;

    /// `out[i][j][k] = x[i][index[i][j][k]][k]` (for `dim == 1`); `index`
    /// is i64 of the output's shape, in range.
    fn gather(&self, x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage>;

    /// A copy of `x` with `src` values written (or added) at `index` along
    /// `dim`; `index` and `src` have one shape, indices are in range.
    /// Output: shape of `x`.
    fn scatter(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        mode: ScatterMode,
    ) -> Result<Storage>;

    /// Pads each dim with `(before, after)` copies of `value`; `pads` has
    /// one pair per dim of `x`.
    fn pad(&self, x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage>;

    /// Reverses the order of elements along each of `dims` (shape of `x`).
    fn flip(&self, x: &Tensor, dims: &[usize]) -> Result<Storage>;

    /// Keeps the lower (`upper == false`) or upper triangle of the last two
    /// dims relative to `diagonal`, zeroing the rest (shape of `x`).
    fn triangle(&self, x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage>;

    /// 2-D convolution: `x` is `[n, c_in, h, w]`, `weight` is
    /// `[c_out, c_in / groups, kh, kw]`, `bias` is `[c_out]`; the output is
    /// `[n, c_out, h_out, w_out]` with the usual output-size formula.
    fn conv2d(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: Conv2dParams,
    ) -> Result<Storage>;

    /// Max pooling over NCHW input; output `[n, c, h_out, w_out]`.
    fn max_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage>;

    /// Average pooling over NCHW input; output `[n, c, h_out, w_out]`.
    fn avg_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage>;

    /// The gradients of [`Backend::conv2d`] with respect to `x` and
    /// `weight` (in that order, with their shapes), given `grad`, the
    /// gradient of the output. The bias gradient is a sum the front end
    /// takes itself.
    ///
    /// The default body reports that the backend cannot differentiate
    /// convolutions; every backend that trains should override it.
    fn conv2d_backward(
        &self,
        x: &Tensor,
        weight: &Tensor,
        grad: &Tensor,
        params: Conv2dParams,
    ) -> Result<(Storage, Storage)> {
        let _ = (x, weight, grad, params);
        Err(missing_backward(self.name(), "conv2d"))
    }

    /// The gradient of [`Backend::max_pool2d`] with respect to `x` (shape
    /// of `x`): each window's gradient goes to the first position, in
    /// row-major window order, holding the window's maximum.
    fn max_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        let _ = (x, grad, params);
        Err(missing_backward(self.name(), "max_pool2d"))
    }

    /// The gradient of [`Backend::avg_pool2d`] with respect to `x` (shape
    /// of `x`): each window's gradient spread evenly over its taps.
    fn avg_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        let _ = (x, grad, params);
        Err(missing_backward(self.name(), "avg_pool2d"))
    }
}

/// The error of a backend without the backward kernel of `op`.
fn missing_backward(backend: &str, op: &'static str) -> oxmera_core::Error {
    oxmera_core::Error::NotImplemented {
        op,
        backend: backend.to_string(),
    }
}

/// The output extent of a sliding window along one axis: how many windows
/// of `kernel` taps spaced `dilation` apart fit, stepping by `stride`, into
/// `input + 2 * padding`. `None` when not even one fits.
pub fn window_output_size(
    input: usize,
    kernel: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
) -> Option<usize> {
    let span = dilation * (kernel.checked_sub(1)?) + 1;
    let padded = input + 2 * padding;
    (padded >= span && stride > 0).then(|| (padded - span) / stride + 1)
}

/// The input index that output position `out` of a sliding window reads
/// through kernel tap `tap` along one axis — `out·stride + tap·dilation −
/// padding` — or `None` when that falls in the padding, outside
/// `[0, extent)`. The other half of [`window_output_size`]'s arithmetic,
/// shared by every backend's convolution and pooling.
///
/// ```
/// use oxmera_tensor::window_input_index;
/// // Stride 2, padding 1, dilation 1, an input of 5: output 2, tap 1
/// // reads 2·2 + 1 − 1 = 4; output 0, tap 0 reads −1, the padding.
/// assert_eq!(window_input_index(2, 1, 2, 1, 1, 5), Some(4));
/// assert_eq!(window_input_index(0, 0, 2, 1, 1, 5), None);
/// assert_eq!(window_input_index(2, 2, 2, 1, 1, 5), None); // 5: past the end
/// ```
pub fn window_input_index(
    out: usize,
    tap: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
    extent: usize,
) -> Option<usize> {
    (out * stride + tap * dilation)
        .checked_sub(padding)
        .filter(|&i| i < extent)
}

/// The shape a reduction over `dims` leaves with every reduced dim kept as 1.
pub fn keepdim_shape(shape: &Shape, dims: &[usize]) -> Shape {
    let mut d = shape.dims().to_vec();
    for &i in dims {
        d[i] = 1;
    }
    Shape::from(d)
}
