//! The vocabulary a backend is called with: op enums (one per family, so
//! the trait stays small and object-safe, and the conformance suite can
//! name ops as data), the geometry of convolution and pooling, and the
//! window arithmetic every backend's convolution shares.

use oxmera_core::Shape;

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
    /// `e^x - 1`, accurate for tiny `x`.
    Expm1,
    /// The base-2 logarithm.
    Log2,
    /// The base-10 logarithm.
    Log10,
    /// `2^x`.
    Exp2,
    /// The tangent (radians).
    Tan,
    /// The inverse tangent, in `[-π/2, π/2]`.
    Atan,
    /// The inverse sine, in `[-π/2, π/2]`; NaN outside `[-1, 1]`.
    Asin,
    /// The inverse cosine, in `[0, π]`; NaN outside `[-1, 1]`.
    Acos,
    /// The hyperbolic sine.
    Sinh,
    /// The hyperbolic cosine.
    Cosh,
    /// Rounding toward zero.
    Trunc,
    /// `x` for positive `x`, else `alpha * (e^x - 1)`.
    Elu(f64),
    /// `SCALE * elu(x, ALPHA)` with the self-normalizing constants.
    Selu,
    /// `x * tanh(softplus(x))`.
    Mish,
    /// `min(max(x, min), max)`, with a gradient of 0 at the bounds.
    Hardtanh {
        min: f64,
        max: f64,
    },
    /// `min(max(x / 6 + 1/2, 0), 1)`.
    Hardsigmoid,
    /// `x * hardsigmoid(x)`.
    Hardswish,
    /// `ln(sigmoid(x)) = -softplus(-x)`.
    Logsigmoid,
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
            Expm1 => "expm1",
            Log2 => "log2",
            Log10 => "log10",
            Exp2 => "exp2",
            Tan => "tan",
            Atan => "atan",
            Asin => "asin",
            Acos => "acos",
            Sinh => "sinh",
            Cosh => "cosh",
            Trunc => "trunc",
            Elu(_) => "elu",
            Selu => "selu",
            Mish => "mish",
            Hardtanh { .. } => "hardtanh",
            Hardsigmoid => "hardsigmoid",
            Hardswish => "hardswish",
            Logsigmoid => "logsigmoid",
        }
    }
}

/// SELU's `alpha` (Klambauer et al., 2017, to PyTorch's precision).
pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
/// SELU's `scale` (Klambauer et al., 2017, to PyTorch's precision).
pub const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

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
    /// The angle of the point `(b, a)`: `atan2(a, b)`, in `[-π, π]` (floats only).
    Atan2,
    /// The remainder with the **dividend's** sign (C's `fmod`, Rust's `%`).
    Fmod,
    /// `sqrt(a² + b²)` without intermediate overflow (floats only).
    Hypot,
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
            Atan2 => "atan2",
            Fmod => "fmod",
            Hypot => "hypot",
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

/// Inclusive scans along one dim (`cumsum`, `cumprod`, `logcumsumexp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanOp {
    /// Running sums: element `i` is the sum of elements `0..=i`.
    Sum,
    /// Running products: element `i` is the product of elements `0..=i`.
    Prod,
    /// Running log-sum-exps: element `i` is `log Σ_{j<=i} exp(x_j)`
    /// (floats only).
    LogSumExp,
}

impl ScanOp {
    /// The public name of the op (`"cumsum"`, `"cumprod"`,
    /// `"logcumsumexp"`).
    pub fn name(&self) -> &'static str {
        match self {
            ScanOp::Sum => "cumsum",
            ScanOp::Prod => "cumprod",
            ScanOp::LogSumExp => "logcumsumexp",
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
