//! The composite ops a case can name: ops built from other ops in the
//! tensor layer, with no [`oxmera_tensor::Backend`] method of their own.
//!
//! A backend runs a composite with the kernels it already has, so a case
//! of one checks that those kernels compose into PyTorch's semantics on
//! every layout class and dtype — and that the composite's gradient,
//! assembled by autograd from its parts, agrees with the reference's.

use oxmera_core::Result;
use oxmera_tensor::{
    Conv1dParams, ConvTranspose2dParams, InterpolateMode, PadMode, Pool2dOptions, ScatterReduce,
    Tensor,
};

use crate::ops::Params;

/// One composite op, with its parameters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Composite {
    /// `x.isnan()` (bool).
    IsNan,
    /// `x.isinf()` (bool).
    IsInf,
    /// `x.isfinite()` (bool).
    IsFinite,
    /// `x.nan_to_num(nan, posinf, neginf)`.
    NanToNum {
        /// NaN's replacement.
        nan: f64,
        /// `+inf`'s replacement; `None` is the dtype's largest value.
        posinf: Option<f64>,
        /// `-inf`'s replacement; `None` is the dtype's lowest value.
        neginf: Option<f64>,
    },
    /// `x.roll(shifts, dims)`.
    Roll {
        /// The shift along each dim.
        shifts: Vec<isize>,
        /// The dims rolled (empty: the flattened tensor).
        dims: Vec<isize>,
    },
    /// `x.repeat(repeats)`.
    Repeat(Vec<usize>),
    /// `x.tile(reps)`.
    Tile(Vec<usize>),
    /// `x.diagonal(offset, dim1, dim2)`.
    Diagonal {
        /// Above the main diagonal when positive.
        offset: i64,
        /// The row dim.
        dim1: isize,
        /// The column dim.
        dim2: isize,
    },
    /// `x.diag(diagonal)`: a vector to a matrix, or a matrix's diagonal.
    Diag(i64),
    /// `x.trace()`.
    Trace,
    /// `a.outer(b)`.
    Outer,
    /// `x.sort(dim, descending).0`: the sorted values.
    Sort {
        /// The dim sorted along.
        dim: isize,
        /// Largest first.
        descending: bool,
    },
    /// `x.argsort(dim, descending)`: the sorting permutation (`i64`).
    Argsort {
        /// The dim sorted along.
        dim: isize,
        /// Largest first.
        descending: bool,
    },
    /// `x.topk(k, dim, largest).0`.
    Topk {
        /// How many.
        k: usize,
        /// The dim.
        dim: isize,
        /// The largest `k` (else the smallest).
        largest: bool,
    },
    /// `x.kthvalue(k, dim, keepdim).0`.
    Kthvalue {
        /// 1-based rank.
        k: usize,
        /// The dim.
        dim: isize,
        /// Keep the dim as size 1.
        keepdim: bool,
    },
    /// `x.median(dim, keepdim).0`.
    Median {
        /// The dim.
        dim: isize,
        /// Keep the dim as size 1.
        keepdim: bool,
    },
    /// `x.repeat_interleave(r, dim)` for one count, else
    /// `x.repeat_interleave_counts(counts, dim)`.
    RepeatInterleave {
        /// One count for every element, or one per element along `dim`.
        repeats: Vec<usize>,
        /// The dim; `None` flattens first.
        dim: Option<isize>,
    },
    /// `x.index_add(dim, index, source, alpha)`.
    IndexAdd {
        /// The dim written along.
        dim: isize,
        /// The source's factor.
        alpha: f64,
    },
    /// `x.index_copy(dim, index, source)`.
    IndexCopy {
        /// The dim written along.
        dim: isize,
    },
    /// `x.masked_select(mask)`: 1-D, the elements where the (broadcast)
    /// bool mask is true.
    MaskedSelect,
    /// `x.nonzero()`: the coordinates of the nonzero elements (`i64`).
    Nonzero,
    /// `x.pad_mode(pads, mode)`: reflect, replicate or circular padding.
    PadMode {
        /// One `(before, after)` pair per dim.
        pads: Vec<(usize, usize)>,
        /// How the padding is filled.
        mode: PadMode,
    },
    /// `x.conv1d(weight, bias, params)`: `conv2d` over a unit height.
    Conv1d(Conv1dParams),
    /// `x.adaptive_avg_pool2d(output_size)`.
    AdaptiveAvgPool2d((usize, usize)),
    /// `x.adaptive_max_pool2d(output_size)`.
    AdaptiveMaxPool2d((usize, usize)),
    /// `x.max_pool2d_with(options)`: dilation and `ceil_mode`.
    MaxPool2dWith(Pool2dOptions),
    /// `x.avg_pool2d_with(options)`: `ceil_mode`.
    AvgPool2dWith(Pool2dOptions),
    /// `x.interpolate(size, mode)`, or `x.interpolate_scale(scale, mode)`
    /// when `scale` is given.
    Interpolate {
        /// The output size `(oh, ow)` (unused when `scale` is given).
        size: (usize, usize),
        /// The scale factors `(sh, sw)`.
        scale: Option<(f64, f64)>,
        /// Nearest or bilinear (with `align_corners`).
        mode: InterpolateMode,
    },
    /// `x.conv_transpose2d(weight, bias, params)`: zero insertion, a
    /// border, and `conv2d` with the flipped, swapped weight.
    ConvTranspose2d(ConvTranspose2dParams),
    /// `x.scatter_reduce(dim, index, src, reduce, include_self)`.
    ScatterReduce {
        /// The dim written along.
        dim: isize,
        /// Sum, prod, mean, amax or amin.
        reduce: ScatterReduce,
        /// Whether `x`'s own values join the reduction.
        include_self: bool,
    },
    /// `q.scaled_dot_product_attention(k, v, options)`, with a float mask
    /// when a fourth input is given.
    Attention {
        /// Query `i` sees keys `j <= i` only.
        causal: bool,
        /// The scores' factor; `None` is `1/√E`.
        scale: Option<f64>,
    },
    /// `Tensor::einsum(equation, inputs)`.
    Einsum {
        /// The subscripts, as PyTorch writes them (`"ij,jk->ik"`).
        equation: String,
    },
    /// `x.vector_norm(ord, dims, keepdim)`, or `x.vector_norm_all(ord)`
    /// when `dims` is `None`.
    VectorNorm {
        /// Which norm: 2, 1, 0, ±inf or any other `p`.
        ord: f64,
        /// The dims reduced; `None` is every dim.
        dims: Option<Vec<isize>>,
        /// Keep the reduced dims as size 1.
        keepdim: bool,
    },
}

impl Composite {
    /// The names of every composite, as cases spell them (for coverage).
    pub fn names() -> Vec<&'static str> {
        vec![
            "isnan",
            "isinf",
            "isfinite",
            "nan_to_num",
            "roll",
            "repeat",
            "tile",
            "diagonal",
            "diag",
            "trace",
            "outer",
            "sort",
            "argsort",
            "topk",
            "kthvalue",
            "median",
            "vector_norm",
            "repeat_interleave",
            "index_add",
            "index_copy",
            "masked_select",
            "nonzero",
            "pad_mode",
            "conv1d",
            "adaptive_avg_pool2d",
            "adaptive_max_pool2d",
            "max_pool2d_with",
            "avg_pool2d_with",
            "interpolate",
            "conv_transpose2d",
            "scatter_reduce",
            "einsum",
            "attention",
        ]
    }

    /// The composite called `name`, taking the parameters it uses from
    /// `p`; `None` when no composite has that name.
    pub(crate) fn parse(
        name: &str,
        p: &mut Params,
    ) -> Option<std::result::Result<Composite, String>> {
        let isizes = |v: Vec<i64>| v.into_iter().map(|d| d as isize).collect::<Vec<_>>();
        let needed = |v: Option<Vec<usize>>, what: &str| {
            v.ok_or_else(|| format!("op `{name}` needs `{what}`"))
        };
        Some(Ok(match name {
            "isnan" => Composite::IsNan,
            "isinf" => Composite::IsInf,
            "isfinite" => Composite::IsFinite,
            // PyTorch's defaults: nan 0, the infinities the dtype's extremes.
            "nan_to_num" => Composite::NanToNum {
                nan: p.nan.take().unwrap_or(0.0),
                posinf: p.posinf.take(),
                neginf: p.neginf.take(),
            },
            "roll" => Composite::Roll {
                shifts: match p.shifts.take() {
                    Some(v) => isizes(v),
                    None => return Some(Err(format!("op `{name}` needs `shifts`"))),
                },
                dims: isizes(p.dims.take().unwrap_or_default()),
            },
            "repeat" => match needed(p.repeats.take(), "repeats") {
                Ok(r) => Composite::Repeat(r),
                Err(e) => return Some(Err(e)),
            },
            "tile" => match needed(p.repeats.take(), "repeats") {
                Ok(r) => Composite::Tile(r),
                Err(e) => return Some(Err(e)),
            },
            // PyTorch's defaults: offset 0 over dims 0 and 1.
            "diagonal" => {
                let dims = isizes(p.dims.take().unwrap_or(vec![0, 1]));
                if dims.len() != 2 {
                    return Some(Err(format!("op `{name}` takes two `dims`")));
                }
                Composite::Diagonal {
                    offset: p.diagonal.take().unwrap_or(0),
                    dim1: dims[0],
                    dim2: dims[1],
                }
            }
            "diag" => Composite::Diag(p.diagonal.take().unwrap_or(0)),
            "trace" => Composite::Trace,
            "masked_select" => Composite::MaskedSelect,
            "nonzero" => Composite::Nonzero,
            "outer" => Composite::Outer,
            // PyTorch's defaults: the last dim, ascending / largest, no keepdim.
            "sort" | "argsort" => {
                let dim = p.dim.take().unwrap_or(-1) as isize;
                let descending = p.descending.take().unwrap_or(false);
                if name == "sort" {
                    Composite::Sort { dim, descending }
                } else {
                    Composite::Argsort { dim, descending }
                }
            }
            "topk" | "kthvalue" => {
                let Some(k) = p.k.take() else {
                    return Some(Err(format!("op `{name}` needs `k`")));
                };
                let dim = p.dim.take().unwrap_or(-1) as isize;
                if name == "topk" {
                    let largest = p.largest.take().unwrap_or(true);
                    Composite::Topk { k, dim, largest }
                } else {
                    let keepdim = p.keepdim.take().unwrap_or(false);
                    Composite::Kthvalue { k, dim, keepdim }
                }
            }
            "median" => Composite::Median {
                dim: p.dim.take().unwrap_or(-1) as isize,
                keepdim: p.keepdim.take().unwrap_or(false),
            },
            // PyTorch's default: no dim, the flattened tensor.
            "repeat_interleave" => match needed(p.repeats.take(), "repeats") {
                Ok(repeats) => Composite::RepeatInterleave {
                    repeats,
                    dim: p.dim.take().map(|d| d as isize),
                },
                Err(e) => return Some(Err(e)),
            },
            // PyTorch's default: alpha 1.
            "index_add" | "index_copy" => {
                let Some(dim) = p.dim.take() else {
                    return Some(Err(format!("op `{name}` needs `dim`")));
                };
                if name == "index_add" {
                    Composite::IndexAdd {
                        dim: dim as isize,
                        alpha: p.alpha.take().unwrap_or(1.0),
                    }
                } else {
                    Composite::IndexCopy { dim: dim as isize }
                }
            }
            "pad_mode" => {
                let Some(pads) = p.pads.take() else {
                    return Some(Err(format!("op `{name}` needs `pads`")));
                };
                let mode = p.mode.take().unwrap_or_default();
                let Some(mode) = PadMode::from_name(&mode) else {
                    return Some(Err(format!(
                        "op `{name}` needs `mode`: reflect, replicate or circular, got `{mode}`"
                    )));
                };
                Composite::PadMode {
                    pads: pads.into_iter().map(|[b, a]| (b, a)).collect(),
                    mode,
                }
            }
            // PyTorch's defaults: stride 1, no padding, dilation 1, one group.
            "conv1d" => {
                let one = |v, what, default| {
                    crate::ops::window_param(v, name, what, 1, default).map(|v| v[0])
                };
                let params = (|| {
                    Ok::<_, String>(Conv1dParams {
                        stride: one(p.stride.take(), "stride", 1)?,
                        padding: one(p.padding.take(), "padding", 0)?,
                        dilation: one(p.dilation.take(), "dilation", 1)?,
                        groups: p.groups.take().unwrap_or(1),
                    })
                })();
                match params {
                    Ok(params) => Composite::Conv1d(params),
                    Err(e) => return Some(Err(e)),
                }
            }
            "adaptive_avg_pool2d" | "adaptive_max_pool2d" => {
                let size = match p.output_size.take() {
                    Some(v) => crate::ops::window_pair(Some(v), name, "output_size", 0),
                    None => Err(format!("op `{name}` needs `output_size`")),
                };
                match size {
                    Ok(s) if name == "adaptive_avg_pool2d" => Composite::AdaptiveAvgPool2d(s),
                    Ok(s) => Composite::AdaptiveMaxPool2d(s),
                    Err(e) => return Some(Err(e)),
                }
            }
            // PyTorch's defaults: the stride is the kernel, no padding,
            // dilation 1 (max only), ceil_mode false.
            "max_pool2d_with" | "avg_pool2d_with" => {
                let options = (|| {
                    let kernel = crate::ops::window_pair(
                        Some(needed(p.kernel.take(), "kernel")?),
                        name,
                        "kernel",
                        0,
                    )?;
                    let mut o = Pool2dOptions::new(kernel)
                        .padding(crate::ops::window_pair(
                            p.padding.take(),
                            name,
                            "padding",
                            0,
                        )?)
                        .ceil_mode(p.ceil_mode.take().unwrap_or(false));
                    if let Some(s) = p.stride.take() {
                        o = o.stride(crate::ops::window_pair(Some(s), name, "stride", 1)?);
                    }
                    if name == "max_pool2d_with" {
                        o = o.dilation(crate::ops::window_pair(
                            p.dilation.take(),
                            name,
                            "dilation",
                            1,
                        )?);
                    }
                    Ok::<_, String>(o)
                })();
                match options {
                    Ok(o) if name == "max_pool2d_with" => Composite::MaxPool2dWith(o),
                    Ok(o) => Composite::AvgPool2dWith(o),
                    Err(e) => return Some(Err(e)),
                }
            }
            // PyTorch's defaults: nearest, align_corners false.
            "interpolate" => match interpolate(name, p) {
                Ok(c) => c,
                Err(e) => return Some(Err(e)),
            },
            // PyTorch's defaults: stride 1, no padding, dilation 1, one group.
            "conv_transpose2d" => {
                let pair = crate::ops::window_pair;
                let params = (|| {
                    Ok::<_, String>(ConvTranspose2dParams {
                        stride: pair(p.stride.take(), name, "stride", 1)?,
                        padding: pair(p.padding.take(), name, "padding", 0)?,
                        output_padding: pair(p.output_padding.take(), name, "output_padding", 0)?,
                        dilation: pair(p.dilation.take(), name, "dilation", 1)?,
                        groups: p.groups.take().unwrap_or(1),
                    })
                })();
                match params {
                    Ok(params) => Composite::ConvTranspose2d(params),
                    Err(e) => return Some(Err(e)),
                }
            }
            // PyTorch's default: include_self true.
            "scatter_reduce" => {
                let Some(dim) = p.dim.take() else {
                    return Some(Err(format!("op `{name}` needs `dim`")));
                };
                let r = p.reduce.take().unwrap_or_default();
                let Some(reduce) = ScatterReduce::from_name(&r) else {
                    return Some(Err(format!(
                        "op `{name}` needs `reduce`: sum, prod, mean, amax or amin, got `{r}`"
                    )));
                };
                Composite::ScatterReduce {
                    dim: dim as isize,
                    reduce,
                    include_self: p.include_self.take().unwrap_or(true),
                }
            }
            // PyTorch's defaults: no causal mask, the scale 1/√E.
            "attention" => {
                let scale = match p.scale.take().as_deref() {
                    None => None,
                    Some(&[s]) => Some(s),
                    Some(_) => return Some(Err(format!("op `{name}` takes one `scale`"))),
                };
                Composite::Attention {
                    causal: p.causal.take().unwrap_or(false),
                    scale,
                }
            }
            "einsum" => match p.equation.take() {
                Some(equation) => Composite::Einsum { equation },
                None => return Some(Err(format!("op `{name}` needs `equation`"))),
            },
            // PyTorch's defaults: the 2-norm of every element.
            "vector_norm" => {
                let dims = p.dims.take().map(isizes);
                let keepdim = p.keepdim.take().unwrap_or(false);
                if dims.is_none() && keepdim {
                    return Some(Err(format!(
                        "op `{name}` over every dim (no `dims`) has no `keepdim`"
                    )));
                }
                Composite::VectorNorm {
                    ord: p.ord.take().unwrap_or(2.0),
                    dims,
                    keepdim,
                }
            }
            _ => return None,
        }))
    }

    /// The name cases and the report use.
    pub fn name(&self) -> &'static str {
        match self {
            Composite::IsNan => "isnan",
            Composite::IsInf => "isinf",
            Composite::IsFinite => "isfinite",
            Composite::NanToNum { .. } => "nan_to_num",
            Composite::Roll { .. } => "roll",
            Composite::Repeat(_) => "repeat",
            Composite::Tile(_) => "tile",
            Composite::Diagonal { .. } => "diagonal",
            Composite::Diag(_) => "diag",
            Composite::Trace => "trace",
            Composite::Outer => "outer",
            Composite::Sort { .. } => "sort",
            Composite::Argsort { .. } => "argsort",
            Composite::Topk { .. } => "topk",
            Composite::Kthvalue { .. } => "kthvalue",
            Composite::Median { .. } => "median",
            Composite::VectorNorm { .. } => "vector_norm",
            Composite::RepeatInterleave { .. } => "repeat_interleave",
            Composite::IndexAdd { .. } => "index_add",
            Composite::IndexCopy { .. } => "index_copy",
            Composite::MaskedSelect => "masked_select",
            Composite::Nonzero => "nonzero",
            Composite::PadMode { .. } => "pad_mode",
            Composite::Conv1d(_) => "conv1d",
            Composite::AdaptiveAvgPool2d(_) => "adaptive_avg_pool2d",
            Composite::AdaptiveMaxPool2d(_) => "adaptive_max_pool2d",
            Composite::MaxPool2dWith(_) => "max_pool2d_with",
            Composite::AvgPool2dWith(_) => "avg_pool2d_with",
            Composite::Interpolate { .. } => "interpolate",
            Composite::ConvTranspose2d(_) => "conv_transpose2d",
            Composite::ScatterReduce { .. } => "scatter_reduce",
            Composite::Einsum { .. } => "einsum",
            Composite::Attention { .. } => "attention",
        }
    }

    /// How many inputs it takes: `(least, most)`.
    pub(crate) fn arity(&self) -> (usize, usize) {
        match self {
            Composite::Outer | Composite::MaskedSelect => (2, 2),
            Composite::Conv1d(_) | Composite::ConvTranspose2d(_) => (2, 3),
            Composite::Einsum { .. } => (1, 3),
            Composite::IndexAdd { .. }
            | Composite::IndexCopy { .. }
            | Composite::ScatterReduce { .. } => (3, 3),
            Composite::Attention { .. } => (3, 4),
            _ => (1, 1),
        }
    }

    /// Whether autograd records it (for float outputs): all but the masks,
    /// whose outputs are bool, and `argsort` and `nonzero`, whose outputs
    /// are `i64`.
    pub fn differentiable(&self) -> bool {
        !matches!(
            self,
            Composite::IsNan
                | Composite::IsInf
                | Composite::IsFinite
                | Composite::Argsort { .. }
                | Composite::Nonzero
        )
    }

    /// Applies it through the tensor front end.
    pub(crate) fn apply(&self, x: &[Tensor]) -> Result<Tensor> {
        match self {
            Composite::IsNan => x[0].isnan(),
            Composite::IsInf => x[0].isinf(),
            Composite::IsFinite => x[0].isfinite(),
            Composite::NanToNum {
                nan,
                posinf,
                neginf,
            } => x[0].nan_to_num(*nan, *posinf, *neginf),
            Composite::Roll { shifts, dims } => x[0].roll(shifts, dims),
            Composite::Repeat(r) => x[0].repeat(r),
            Composite::Tile(r) => x[0].tile(r),
            Composite::Diagonal { offset, dim1, dim2 } => x[0].diagonal(*offset, *dim1, *dim2),
            Composite::Diag(k) => x[0].diag(*k),
            Composite::Trace => x[0].trace(),
            Composite::Outer => x[0].outer(&x[1]),
            Composite::Attention { causal, scale } => x[0].scaled_dot_product_attention(
                &x[1],
                &x[2],
                &attention_options(x, *causal, *scale),
            ),
            Composite::Einsum { equation } => {
                let operands: Vec<&Tensor> = x.iter().collect();
                Tensor::einsum(equation, &operands)
            }
            Composite::Sort { dim, descending } => Ok(x[0].sort(*dim, *descending)?.0),
            Composite::Argsort { dim, descending } => x[0].argsort(*dim, *descending),
            Composite::Topk { k, dim, largest } => Ok(x[0].topk(*k, *dim, *largest)?.0),
            Composite::Kthvalue { k, dim, keepdim } => Ok(x[0].kthvalue(*k, *dim, *keepdim)?.0),
            Composite::Median { dim, keepdim } => Ok(x[0].median(*dim, *keepdim)?.0),
            Composite::IndexAdd { dim, alpha } => x[0].index_add(*dim, &x[1], &x[2], *alpha),
            Composite::IndexCopy { dim } => x[0].index_copy(*dim, &x[1], &x[2]),
            Composite::MaskedSelect => x[0].masked_select(&x[1]),
            Composite::Nonzero => x[0].nonzero(),
            Composite::PadMode { pads, mode } => x[0].pad_mode(pads, *mode),
            Composite::Conv1d(params) => x[0].conv1d(&x[1], x.get(2), *params),
            Composite::AdaptiveAvgPool2d(size) => x[0].adaptive_avg_pool2d(*size),
            Composite::AdaptiveMaxPool2d(size) => x[0].adaptive_max_pool2d(*size),
            Composite::MaxPool2dWith(o) => x[0].max_pool2d_with(*o),
            Composite::AvgPool2dWith(o) => x[0].avg_pool2d_with(*o),
            Composite::ScatterReduce {
                dim,
                reduce,
                include_self,
            } => x[0].scatter_reduce(*dim, &x[1], &x[2], *reduce, *include_self),
            Composite::ConvTranspose2d(params) => x[0].conv_transpose2d(&x[1], x.get(2), *params),
            Composite::Interpolate { size, scale, mode } => match scale {
                Some(s) => x[0].interpolate_scale(*s, *mode),
                None => x[0].interpolate(*size, *mode),
            },
            Composite::RepeatInterleave { repeats, dim } => match repeats.as_slice() {
                [r] => x[0].repeat_interleave(*r, *dim),
                counts => x[0].repeat_interleave_counts(counts, *dim),
            },
            Composite::VectorNorm { ord, dims, keepdim } => match dims {
                Some(d) => x[0].vector_norm(*ord, d, *keepdim),
                None => x[0].vector_norm_all(*ord),
            },
        }
    }
}

/// `interpolate`'s parameters: `output_size` or `scale` (one of them),
/// `mode` (`nearest`, the default, or `bilinear`) and `align_corners`
/// (bilinear only, default false).
fn interpolate(name: &str, p: &mut Params) -> std::result::Result<Composite, String> {
    let size = p
        .output_size
        .take()
        .map(|v| crate::ops::window_pair(Some(v), name, "output_size", 0))
        .transpose()?;
    let scale = match p.scale.take() {
        Some(v) if v.len() == 2 => Some((v[0], v[1])),
        Some(v) => {
            return Err(format!(
                "op `{name}` takes 2 entries of `scale`, got {}",
                v.len()
            ));
        }
        None => None,
    };
    let size = match (size, scale) {
        (Some(s), None) => s,
        (None, Some(_)) => (0, 0),
        _ => {
            return Err(format!(
                "op `{name}` needs one of `output_size` and `scale`"
            ));
        }
    };
    let align_corners = p.align_corners.take();
    let mode = match (p.mode.take().as_deref(), align_corners) {
        (None | Some("nearest"), None) => InterpolateMode::Nearest,
        (Some("bilinear"), a) => InterpolateMode::Bilinear {
            align_corners: a.unwrap_or(false),
        },
        (m, _) => {
            return Err(format!(
                "op `{name}` takes mode `nearest` (no `align_corners`) or `bilinear`, got {m:?}"
            ));
        }
    };
    Ok(Composite::Interpolate { size, scale, mode })
}

/// The options of an attention case: the fourth input, if any, is an
/// additive float mask.
pub(crate) fn attention_options(
    x: &[Tensor],
    causal: bool,
    scale: Option<f64>,
) -> oxmera_tensor::AttentionOptions {
    let mut options = oxmera_tensor::AttentionOptions::new().causal(causal);
    if let Some(s) = scale {
        options = options.scale(s);
    }
    if let Some(mask) = x.get(3) {
        options = options.mask(mask.clone());
    }
    options
}
