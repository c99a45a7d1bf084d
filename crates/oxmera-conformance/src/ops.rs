//! The ops a case can name and how a case's parameters become one (how
//! each is applied through the tensor front end is in `apply.rs`).
//!
//! Ops are applied through the public [`oxmera_tensor::Tensor`] methods rather than by
//! calling a [`oxmera_tensor::Backend`] directly: the front end's
//! validation, broadcasting views and autograd recording are then the
//! same for every device, and a case is exactly what a user would run.
//! The names are the backend-level names ([`UnaryOp::name`] and
//! friends), so the report speaks the vocabulary of the `Backend` trait.

use oxmera_core::DType;

use crate::composite::Composite;
use oxmera_tensor::{
    BinaryOp, CmpOp, Conv2dParams, Pool2dParams, ReduceOp, ScanOp, ScatterMode, UnaryOp,
};

/// One operation of the corpus, with its parameters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Op {
    /// An elementwise op of one operand.
    Unary(UnaryOp),
    /// An elementwise op of two operands (broadcast by the front end).
    Binary(BinaryOp),
    /// A comparison of two operands.
    Compare(CmpOp),
    /// `where(cond, a, b)`.
    Where,
    /// A reduction; `dims: None` reduces every dim (the `_all` forms).
    Reduce {
        /// Which reduction.
        op: ReduceOp,
        /// The dims (negative counts from the end); `None` is all of them.
        dims: Option<Vec<isize>>,
        /// Whether reduced dims stay as size 1.
        keepdim: bool,
    },
    /// Softmax, or log-softmax when `log`, along `dim`.
    Softmax {
        /// The dim normalised over.
        dim: isize,
        /// Log-softmax instead.
        log: bool,
    },
    /// An inclusive scan (`cumsum`, `cumprod`, `logcumsumexp`) along `dim`.
    Scan {
        /// Which scan.
        op: ScanOp,
        /// The dim scanned along.
        dim: isize,
    },
    /// Layer normalization (no weight or bias) over the last
    /// `normalized_dims` dims.
    LayerNorm {
        /// How many trailing dims each slice spans.
        normalized_dims: usize,
        /// Added to the variance before the square root.
        eps: f64,
    },
    /// Batched matrix product.
    Matmul,
    /// Concatenation of every input along `dim`.
    Cat {
        /// The dim joined along.
        dim: isize,
    },
    /// `x.index_select(dim, indices)`.
    IndexSelect {
        /// The dim picked along.
        dim: isize,
    },
    /// `x.gather(dim, index)`.
    Gather {
        /// The dim gathered along.
        dim: isize,
    },
    /// `x.scatter(dim, index, src)` or `scatter_add`.
    Scatter {
        /// The dim scattered along.
        dim: isize,
        /// Overwrite or accumulate.
        mode: ScatterMode,
    },
    /// Constant padding.
    Pad {
        /// `(before, after)` per dim.
        pads: Vec<(usize, usize)>,
        /// The fill value.
        value: f64,
    },
    /// Reversal along `dims`.
    Flip {
        /// The dims reversed.
        dims: Vec<isize>,
    },
    /// `tril` (lower) or `triu` (upper).
    Triangle {
        /// The diagonal kept relative to the main one.
        diagonal: i64,
        /// `triu` instead of `tril`.
        upper: bool,
    },
    /// 2-D convolution; a third input, when present, is the bias.
    Conv2d(Conv2dParams),
    /// Max pooling.
    MaxPool2d(Pool2dParams),
    /// Average pooling.
    AvgPool2d(Pool2dParams),
    /// Conversion to another dtype.
    Cast(DType),
    /// A contiguous copy.
    Contiguous,
    /// An op built from other ops in the tensor layer (no backend method).
    Composite(Composite),
}

/// Every unary op, with placeholder parameters (for names and coverage).
pub(crate) fn all_unary() -> Vec<UnaryOp> {
    use UnaryOp::*;
    let ops = vec![
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
        LeakyRelu(0.0),
        GeluErf,
        GeluTanh,
        Silu,
        Softplus,
        Erf,
        Floor,
        Ceil,
        Round,
        Clamp {
            min: None,
            max: None,
        },
        Powf(0.0),
        Not,
        Expm1,
        Log2,
        Log10,
        Exp2,
        Tan,
        Atan,
        Asin,
        Acos,
        Sinh,
        Cosh,
        Trunc,
        Elu(1.0),
        Selu,
        Mish,
        Hardtanh {
            min: -1.0,
            max: 1.0,
        },
        Hardsigmoid,
        Hardswish,
        Logsigmoid,
    ];
    // Exhaustive on purpose: a new variant fails to compile here until it
    // is added to the list above (and so to the coverage test).
    for op in &ops {
        match op {
            Neg
            | Abs
            | Sign
            | Exp
            | Log
            | Log1p
            | Sqrt
            | Rsqrt
            | Recip
            | Square
            | Sin
            | Cos
            | Tanh
            | Sigmoid
            | Relu
            | LeakyRelu(_)
            | GeluErf
            | GeluTanh
            | Silu
            | Softplus
            | Erf
            | Floor
            | Ceil
            | Round
            | Clamp { .. }
            | Powf(_)
            | Not
            | Expm1
            | Log2
            | Log10
            | Exp2
            | Tan
            | Atan
            | Asin
            | Acos
            | Sinh
            | Cosh
            | Trunc
            | Elu(_)
            | Selu
            | Mish
            | Hardtanh { .. }
            | Hardsigmoid
            | Hardswish
            | Logsigmoid => {}
        }
    }
    ops
}

/// Every binary op.
pub(crate) fn all_binary() -> Vec<BinaryOp> {
    use BinaryOp::*;
    let ops = vec![
        Add, Sub, Mul, Div, Pow, Maximum, Minimum, Rem, And, Or, Xor, Atan2, Fmod, Hypot,
    ];
    for op in &ops {
        match op {
            Add | Sub | Mul | Div | Pow | Maximum | Minimum | Rem | And | Or | Xor | Atan2
            | Fmod | Hypot => {}
        }
    }
    ops
}

/// Every comparison.
pub(crate) fn all_compare() -> Vec<CmpOp> {
    use CmpOp::*;
    let ops = vec![Eq, Ne, Lt, Le, Gt, Ge];
    for op in &ops {
        match op {
            Eq | Ne | Lt | Le | Gt | Ge => {}
        }
    }
    ops
}

/// Every reduction, with placeholder parameters.
pub(crate) fn all_reduce() -> Vec<ReduceOp> {
    use ReduceOp::*;
    let ops = vec![
        Sum,
        Mean,
        Prod,
        Max,
        Min,
        ArgMax,
        ArgMin,
        Var { correction: 1.0 },
        Std { correction: 1.0 },
        LogSumExp,
        All,
        Any,
    ];
    for op in &ops {
        match op {
            Sum
            | Mean
            | Prod
            | Max
            | Min
            | ArgMax
            | ArgMin
            | Var { .. }
            | Std { .. }
            | LogSumExp
            | All
            | Any => {}
        }
    }
    ops
}

/// The name of every operation of the [`oxmera_tensor::Backend`] trait, as
/// the corpus and the report spell them. The backward kernels
/// (`conv2d_backward` and the pooling ones) are exercised by the gradient
/// runs of `conv2d`, `max_pool2d` and `avg_pool2d`; `from_host` and
/// `to_host` by every run.
pub fn backend_op_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    names.extend(all_unary().iter().map(UnaryOp::name));
    names.extend(all_binary().iter().map(BinaryOp::name));
    names.extend(all_compare().iter().map(CmpOp::name));
    names.extend(all_reduce().iter().map(ReduceOp::name));
    names.extend([
        "where",
        "softmax",
        "log_softmax",
        "cumsum",
        "cumprod",
        "logcumsumexp",
        "sort",
        "layer_norm",
        "matmul",
        "cat",
        "index_select",
        "gather",
        "scatter",
        "scatter_add",
        "pad",
        "flip",
        "tril",
        "triu",
        "conv2d",
        "max_pool2d",
        "avg_pool2d",
        "cast",
        "contiguous",
    ]);
    names
}

/// The optional parameters a case may give; [`Op::parse`] takes the ones
/// its op uses and the rest must be absent.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Params {
    pub dim: Option<i64>,
    pub dims: Option<Vec<i64>>,
    pub keepdim: Option<bool>,
    pub correction: Option<f64>,
    pub slope: Option<f64>,
    pub alpha: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub exponent: Option<f64>,
    pub to: Option<DType>,
    pub pads: Option<Vec<[usize; 2]>>,
    pub value: Option<f64>,
    pub diagonal: Option<i64>,
    pub stride: Option<Vec<usize>>,
    pub padding: Option<Vec<usize>>,
    pub dilation: Option<Vec<usize>>,
    pub groups: Option<usize>,
    pub kernel: Option<Vec<usize>>,
    pub normalized_dims: Option<usize>,
    pub eps: Option<f64>,
    pub nan: Option<f64>,
    pub posinf: Option<f64>,
    pub neginf: Option<f64>,
    pub shifts: Option<Vec<i64>>,
    pub repeats: Option<Vec<usize>>,
    pub descending: Option<bool>,
    pub largest: Option<bool>,
    pub k: Option<usize>,
    pub ord: Option<f64>,
    pub mode: Option<String>,
    pub output_size: Option<Vec<usize>>,
    pub scale: Option<Vec<f64>>,
    pub align_corners: Option<bool>,
    pub output_padding: Option<Vec<usize>>,
    pub reduce: Option<String>,
    pub include_self: Option<bool>,
    pub equation: Option<String>,
    pub causal: Option<bool>,
    pub ceil_mode: Option<bool>,
}

impl Params {
    /// The names of the parameters still present (given but not used).
    fn leftover(&self) -> Vec<&'static str> {
        let mut left = Vec::new();
        let mut note = |present: bool, name| {
            if present {
                left.push(name);
            }
        };
        note(self.dim.is_some(), "dim");
        note(self.dims.is_some(), "dims");
        note(self.keepdim.is_some(), "keepdim");
        note(self.correction.is_some(), "correction");
        note(self.slope.is_some(), "slope");
        note(self.alpha.is_some(), "alpha");
        note(self.min.is_some(), "min");
        note(self.max.is_some(), "max");
        note(self.exponent.is_some(), "exponent");
        note(self.to.is_some(), "to");
        note(self.pads.is_some(), "pads");
        note(self.value.is_some(), "value");
        note(self.diagonal.is_some(), "diagonal");
        note(self.stride.is_some(), "stride");
        note(self.padding.is_some(), "padding");
        note(self.dilation.is_some(), "dilation");
        note(self.groups.is_some(), "groups");
        note(self.kernel.is_some(), "kernel");
        note(self.normalized_dims.is_some(), "normalized_dims");
        note(self.eps.is_some(), "eps");
        note(self.nan.is_some(), "nan");
        note(self.posinf.is_some(), "posinf");
        note(self.neginf.is_some(), "neginf");
        note(self.shifts.is_some(), "shifts");
        note(self.repeats.is_some(), "repeats");
        note(self.descending.is_some(), "descending");
        note(self.largest.is_some(), "largest");
        note(self.k.is_some(), "k");
        note(self.ord.is_some(), "ord");
        note(self.mode.is_some(), "mode");
        note(self.output_size.is_some(), "output_size");
        note(self.scale.is_some(), "scale");
        note(self.align_corners.is_some(), "align_corners");
        note(self.output_padding.is_some(), "output_padding");
        note(self.reduce.is_some(), "reduce");
        note(self.include_self.is_some(), "include_self");
        note(self.equation.is_some(), "equation");
        note(self.causal.is_some(), "causal");
        note(self.ceil_mode.is_some(), "ceil_mode");
        left
    }
}

fn required<T>(value: Option<T>, op: &str, name: &str) -> std::result::Result<T, String> {
    value.ok_or_else(|| format!("op `{op}` needs `{name}`"))
}

fn isize_dims(dims: Vec<i64>) -> Vec<isize> {
    dims.into_iter().map(|d| d as isize).collect()
}

fn pair(p: [usize; 2]) -> (usize, usize) {
    (p[0], p[1])
}

/// A window parameter of `len` entries (2 for `[h, w]`, 1 for a length),
/// `default` when absent.
pub(crate) fn window_param(
    value: Option<Vec<usize>>,
    op: &str,
    name: &str,
    len: usize,
    default: usize,
) -> std::result::Result<Vec<usize>, String> {
    match value {
        None => Ok(vec![default; len]),
        Some(v) if v.len() == len => Ok(v),
        Some(v) => Err(format!(
            "op `{op}` takes {len} entries of `{name}`, got {}",
            v.len()
        )),
    }
}

/// [`window_param`] for `[h, w]` pairs.
pub(crate) fn window_pair(
    value: Option<Vec<usize>>,
    op: &str,
    name: &str,
    default: usize,
) -> std::result::Result<(usize, usize), String> {
    let v = window_param(value, op, name, 2, default)?;
    Ok((v[0], v[1]))
}

impl Op {
    /// Builds the op called `name` from `params`, taking the parameters it
    /// uses. A missing required parameter, an unknown name or a parameter
    /// the op does not take is an error naming it.
    pub(crate) fn parse(name: &str, mut p: Params) -> std::result::Result<Op, String> {
        let op = Op::parse_taking(name, &mut p)?;
        let left = p.leftover();
        if !left.is_empty() {
            return Err(format!(
                "op `{name}` takes no parameter {}",
                left.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(op)
    }

    fn parse_taking(name: &str, p: &mut Params) -> std::result::Result<Op, String> {
        if let Some(u) = all_unary().into_iter().find(|u| u.name() == name) {
            let u = match u {
                UnaryOp::LeakyRelu(_) => {
                    UnaryOp::LeakyRelu(required(p.slope.take(), name, "slope")?)
                }
                UnaryOp::Clamp { .. } => UnaryOp::Clamp {
                    min: p.min.take(),
                    max: p.max.take(),
                },
                UnaryOp::Powf(_) => UnaryOp::Powf(required(p.exponent.take(), name, "exponent")?),
                // PyTorch's defaults: alpha 1; bounds -1 and 1.
                UnaryOp::Elu(_) => UnaryOp::Elu(p.alpha.take().unwrap_or(1.0)),
                UnaryOp::Hardtanh { .. } => UnaryOp::Hardtanh {
                    min: p.min.take().unwrap_or(-1.0),
                    max: p.max.take().unwrap_or(1.0),
                },
                other => other,
            };
            return Ok(Op::Unary(u));
        }
        if let Some(b) = all_binary().into_iter().find(|b| b.name() == name) {
            return Ok(Op::Binary(b));
        }
        if let Some(c) = all_compare().into_iter().find(|c| c.name() == name) {
            return Ok(Op::Compare(c));
        }
        if let Some(r) = all_reduce().into_iter().find(|r| r.name() == name) {
            let r = match r {
                ReduceOp::Var { .. } => ReduceOp::Var {
                    correction: p.correction.take().unwrap_or(1.0),
                },
                ReduceOp::Std { .. } => ReduceOp::Std {
                    correction: p.correction.take().unwrap_or(1.0),
                },
                other => other,
            };
            let dims = if matches!(r, ReduceOp::ArgMax | ReduceOp::ArgMin) {
                if p.dims.is_some() {
                    return Err(format!("op `{name}` takes one `dim`, not `dims`"));
                }
                p.dim.take().map(|d| vec![d as isize])
            } else {
                p.dims.take().map(isize_dims)
            };
            let keepdim = p.keepdim.take().unwrap_or(false);
            if dims.is_none() && keepdim {
                return Err(format!(
                    "op `{name}` over every dim (no `dims`) has no `keepdim`"
                ));
            }
            return Ok(Op::Reduce {
                op: r,
                dims,
                keepdim,
            });
        }
        if let Some(c) = Composite::parse(name, p) {
            return c.map(Op::Composite);
        }
        let dim = |p: &mut Params| required(p.dim.take(), name, "dim").map(|d| d as isize);
        Ok(match name {
            "where" => Op::Where,
            "softmax" | "log_softmax" => Op::Softmax {
                dim: dim(p)?,
                log: name == "log_softmax",
            },
            "cumsum" => Op::Scan {
                op: ScanOp::Sum,
                dim: dim(p)?,
            },
            "cumprod" => Op::Scan {
                op: ScanOp::Prod,
                dim: dim(p)?,
            },
            "logcumsumexp" => Op::Scan {
                op: ScanOp::LogSumExp,
                dim: dim(p)?,
            },
            "layer_norm" => Op::LayerNorm {
                normalized_dims: required(p.normalized_dims.take(), name, "normalized_dims")?,
                eps: p.eps.take().unwrap_or(1e-5),
            },
            "matmul" => Op::Matmul,
            "cat" => Op::Cat { dim: dim(p)? },
            "index_select" => Op::IndexSelect { dim: dim(p)? },
            "gather" => Op::Gather { dim: dim(p)? },
            "scatter" | "scatter_add" => Op::Scatter {
                dim: dim(p)?,
                mode: if name == "scatter" {
                    ScatterMode::Replace
                } else {
                    ScatterMode::Add
                },
            },
            "pad" => Op::Pad {
                pads: required(p.pads.take(), name, "pads")?
                    .into_iter()
                    .map(pair)
                    .collect(),
                value: p.value.take().unwrap_or(0.0),
            },
            "flip" => Op::Flip {
                dims: isize_dims(required(p.dims.take(), name, "dims")?),
            },
            "tril" | "triu" => Op::Triangle {
                diagonal: p.diagonal.take().unwrap_or(0),
                upper: name == "triu",
            },
            "conv2d" => Op::Conv2d(Conv2dParams {
                stride: window_pair(p.stride.take(), name, "stride", 1)?,
                padding: window_pair(p.padding.take(), name, "padding", 0)?,
                dilation: window_pair(p.dilation.take(), name, "dilation", 1)?,
                groups: p.groups.take().unwrap_or(1),
            }),
            "max_pool2d" | "avg_pool2d" => {
                let kernel = window_pair(
                    Some(required(p.kernel.take(), name, "kernel")?),
                    name,
                    "kernel",
                    0,
                )?;
                let stride = match p.stride.take() {
                    Some(s) => window_pair(Some(s), name, "stride", 1)?,
                    None => kernel,
                };
                let params = Pool2dParams {
                    kernel,
                    stride,
                    padding: window_pair(p.padding.take(), name, "padding", 0)?,
                };
                if name == "max_pool2d" {
                    Op::MaxPool2d(params)
                } else {
                    Op::AvgPool2d(params)
                }
            }
            "cast" => Op::Cast(required(p.to.take(), name, "to")?),
            "contiguous" => Op::Contiguous,
            _ => return Err(format!("unknown op `{name}`")),
        })
    }

    /// The backend-level name (`"exp"`, `"sum"`, `"tril"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Unary(u) => u.name(),
            Op::Binary(b) => b.name(),
            Op::Compare(c) => c.name(),
            Op::Where => "where",
            Op::Reduce { op, .. } => op.name(),
            Op::Softmax { log: false, .. } => "softmax",
            Op::Softmax { log: true, .. } => "log_softmax",
            Op::Scan { op, .. } => op.name(),
            Op::LayerNorm { .. } => "layer_norm",
            Op::Matmul => "matmul",
            Op::Cat { .. } => "cat",
            Op::IndexSelect { .. } => "index_select",
            Op::Gather { .. } => "gather",
            Op::Scatter {
                mode: ScatterMode::Replace,
                ..
            } => "scatter",
            Op::Scatter {
                mode: ScatterMode::Add,
                ..
            } => "scatter_add",
            Op::Pad { .. } => "pad",
            Op::Flip { .. } => "flip",
            Op::Triangle { upper: false, .. } => "tril",
            Op::Triangle { upper: true, .. } => "triu",
            Op::Conv2d(_) => "conv2d",
            Op::MaxPool2d(_) => "max_pool2d",
            Op::AvgPool2d(_) => "avg_pool2d",
            Op::Cast(_) => "cast",
            Op::Contiguous => "contiguous",
            Op::Composite(c) => c.name(),
        }
    }

    /// How many inputs the op takes: `(least, most)`.
    pub(crate) fn arity(&self) -> (usize, usize) {
        match self {
            Op::Unary(_)
            | Op::Reduce { .. }
            | Op::Softmax { .. }
            | Op::Scan { .. }
            | Op::LayerNorm { .. }
            | Op::Pad { .. }
            | Op::Flip { .. }
            | Op::Triangle { .. }
            | Op::MaxPool2d(_)
            | Op::AvgPool2d(_)
            | Op::Cast(_)
            | Op::Contiguous => (1, 1),
            Op::Binary(_) | Op::Compare(_) | Op::Matmul => (2, 2),
            Op::IndexSelect { .. } | Op::Gather { .. } => (2, 2),
            Op::Where | Op::Scatter { .. } => (3, 3),
            Op::Conv2d(_) => (2, 3),
            Op::Cat { .. } => (1, usize::MAX),
            Op::Composite(c) => c.arity(),
        }
    }

    /// Whether autograd records the op (for float outputs). Ops with
    /// integer or bool outputs, and the logical ops, are not.
    pub fn differentiable(&self) -> bool {
        match self {
            Op::Unary(u) => *u != UnaryOp::Not,
            Op::Binary(b) => !matches!(b, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor),
            Op::Compare(_) => false,
            Op::Reduce { op, .. } => !matches!(
                op,
                ReduceOp::ArgMax | ReduceOp::ArgMin | ReduceOp::All | ReduceOp::Any
            ),
            Op::Composite(c) => c.differentiable(),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_parse() {
        for name in backend_op_names() {
            let mut p = Params::default();
            // Give the parameters the parametric ops require.
            match name {
                "leaky_relu" => p.slope = Some(0.1),
                "powf" => p.exponent = Some(2.0),
                "softmax" | "log_softmax" | "cat" | "index_select" | "gather" | "scatter"
                | "scatter_add" | "cumsum" | "cumprod" | "logcumsumexp" => p.dim = Some(0),
                "pad" => p.pads = Some(vec![[0, 1]]),
                "flip" => p.dims = Some(vec![0]),
                "max_pool2d" | "avg_pool2d" => p.kernel = Some(vec![2, 2]),
                "layer_norm" => p.normalized_dims = Some(1),
                "cast" => p.to = Some(DType::F32),
                _ => {}
            }
            let op = Op::parse(name, p).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(op.name(), name);
        }
    }

    #[test]
    fn unused_and_missing_parameters_are_named() {
        let p = Params {
            slope: Some(0.1),
            ..Params::default()
        };
        let err = Op::parse("exp", p).unwrap_err();
        assert!(err.contains("`slope`"), "{err}");
        let err = Op::parse("powf", Params::default()).unwrap_err();
        assert!(err.contains("`exponent`"), "{err}");
        assert!(
            Op::parse("expp", Params::default())
                .unwrap_err()
                .contains("unknown op")
        );
        let p = Params {
            dims: Some(vec![0]),
            ..Params::default()
        };
        assert!(Op::parse("argmax", p).unwrap_err().contains("one `dim`"));
    }

    #[test]
    fn reductions_take_dims_keepdim_and_correction() {
        let p = Params {
            dims: Some(vec![0, -1]),
            keepdim: Some(true),
            correction: Some(0.0),
            ..Params::default()
        };
        assert_eq!(
            Op::parse("var", p).unwrap(),
            Op::Reduce {
                op: ReduceOp::Var { correction: 0.0 },
                dims: Some(vec![0, -1]),
                keepdim: true
            }
        );
    }
}
