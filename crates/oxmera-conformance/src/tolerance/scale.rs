//! The per-element scale `S` of a tolerance (see the module docs of
//! [`super`]), computed by the reference in `f64` from a case's inputs.

use oxmera_core::{DType, Result};
use oxmera_tensor::{ReduceOp, Tensor, UnaryOp, no_grad};

use super::backward::layer_norm_moments;
use super::{Scale, Tolerance, summation};
use crate::composite::Composite;
use crate::ops::Op;

/// The per-element allowance `unit·S` of `tol`'s scale term for a run of
/// `op` on the reference `inputs` (logical views) whose reference output
/// is `want`, `unit` the computing precision's epsilon: the scale term of
/// the bound is `acc` times it. Multiplied in before the bound can
/// overflow: `S` itself may pass f64's range where `unit·S` does not (a
/// power near f64's largest value times `1 + |b·ln a|`), and a scale that
/// does overflow counts as 0 (no allowance), which would hold such an
/// element to one rounding of its output.
pub(crate) fn scale(
    tol: &Tolerance,
    op: &Op,
    inputs: &[Tensor],
    want: &[f64],
    n: usize,
    unit: f64,
) -> Result<Vec<f64>> {
    no_grad(|| scale_inner(tol, op, inputs, want, n, unit))
}

pub(super) fn wide(x: &Tensor) -> Result<Tensor> {
    x.detach().to_dtype(DType::F64)
}

fn scale_inner(
    tol: &Tolerance,
    op: &Op,
    inputs: &[Tensor],
    want: &[f64],
    n: usize,
    unit: f64,
) -> Result<Vec<f64>> {
    let abs_want = || want.iter().map(|w| w.abs()).collect::<Vec<_>>();
    let nf = n as f64;
    let s = match tol.scale {
        Scale::None => vec![0.0; want.len()],
        Scale::Want => abs_want(),
        Scale::WantPlusOne => want.iter().map(|w| w.abs() + 1.0).collect(),
        Scale::WantPlusInput => {
            let x = wide(&inputs[0])?.to_f64_vec()?;
            want.iter().zip(x).map(|(w, x)| w.abs() + x.abs()).collect()
        }
        Scale::Pow => {
            let a = wide(&inputs[0])?.abs()?;
            let cond = match op {
                Op::Unary(UnaryOp::Powf(p)) => a.log()?.mul_scalar(*p)?,
                _ => a.log()?.mul(&wide(&inputs[1])?)?,
            };
            let cond = cond.abs()?.to_f64_vec()?;
            // `unit` first: `|want|·(1 + c)` overflows for f64 results
            // within a factor `1 + c` of the largest finite value.
            return Ok(finite_or_zero(
                want.iter()
                    .zip(cond)
                    .map(|(w, c)| w.abs() * unit * (1.0 + c))
                    .collect(),
            ));
        }
        Scale::AbsScatter => {
            let (x, i, src) = (
                wide(&inputs[0])?.abs()?,
                inputs[1].detach(),
                wide(&inputs[2])?.abs()?,
            );
            match op {
                Op::Scatter { dim, .. } => x.scatter_add(*dim, &i, &src)?,
                // The same reduction (sum or mean) of the magnitudes.
                Op::Composite(Composite::ScatterReduce {
                    dim,
                    reduce,
                    include_self,
                }) => x.scatter_reduce(*dim, &i, &src, *reduce, *include_self)?,
                _ => unreachable!("the scatter scale belongs to scatter_add and scatter_reduce"),
            }
            .to_f64_vec()?
        }
        Scale::AbsCumSum => {
            let Op::Scan { dim, .. } = op else {
                unreachable!("the running-sum scale belongs to cumsum")
            };
            wide(&inputs[0])?.abs()?.cumsum(*dim)?.to_f64_vec()?
        }
        Scale::LogCumSumExp => {
            let Op::Scan { dim, .. } = op else {
                unreachable!("the running log-sum-exp scale belongs to logcumsumexp")
            };
            let a = wide(&inputs[0])?.abs()?;
            if a.numel() == 0 {
                return Ok(Vec::new());
            }
            let finite = Tensor::where_(&a.isfinite()?, &a, &a.zeros_like()?)?;
            let m = if a.rank() == 0 {
                finite
            } else {
                finite.max(&[*dim], true)?.expand(a.shape().clone())?
            };
            want.iter()
                .zip(m.to_f64_vec()?)
                .map(|(w, m)| 6.0 + w.abs() + m)
                .collect()
        }
        Scale::AbsIndexAdd => {
            let Op::Composite(Composite::IndexAdd { dim, alpha }) = op else {
                unreachable!("the index_add scale belongs to index_add")
            };
            wide(&inputs[0])?
                .abs()?
                .index_add(
                    *dim,
                    &inputs[1].detach(),
                    &wide(&inputs[2])?.abs()?,
                    alpha.abs(),
                )?
                .to_f64_vec()?
        }
        Scale::PNorm => {
            let Op::Composite(Composite::VectorNorm { ord, .. }) = op else {
                unreachable!("the p-norm scale belongs to vector_norm")
            };
            let l = wide(&inputs[0])?
                .abs()?
                .log()?
                .mul_scalar(*ord)?
                .abs()?
                .to_f64_vec()?
                .into_iter()
                .filter(|v| v.is_finite())
                .fold(0.0, f64::max);
            let s = summation(n);
            want.iter()
                .map(|w| w.abs() * ((5.0 + s + l) / ord.abs() + 5.0 + w.abs().ln().abs()))
                .collect()
        }
        Scale::AbsSum if *op == Op::Composite(Composite::Trace) => {
            vec![wide(&inputs[0])?.abs()?.trace()?.item()?]
        }
        Scale::AbsSum | Scale::AbsMean | Scale::Moment2 | Scale::Lse => {
            let x = wide(&inputs[0])?;
            let Op::Reduce {
                op: rop,
                dims,
                keepdim,
            } = op
            else {
                unreachable!("reduction scales belong to reductions")
            };
            let over = |t: &Tensor, max: bool| -> Result<Tensor> {
                match (dims, max) {
                    (None, false) => t.sum_all(),
                    (None, true) => t.max_all(),
                    (Some(d), false) => t.sum(d, *keepdim),
                    (Some(d), true) => t.max(d, *keepdim),
                }
            };
            match tol.scale {
                Scale::AbsSum => over(&x.abs()?, false)?.to_f64_vec()?,
                Scale::AbsMean => over(&x.abs()?, false)?
                    .div_scalar(nf.max(1.0))?
                    .to_f64_vec()?,
                Scale::Moment2 => {
                    let c = match rop {
                        ReduceOp::Var { correction } | ReduceOp::Std { correction } => *correction,
                        _ => 0.0,
                    };
                    over(&x.square()?, false)?
                        .div_scalar((nf - c).max(1.0))?
                        .to_f64_vec()?
                }
                _ => {
                    if n == 0 {
                        vec![0.0; want.len()]
                    } else {
                        let m = over(&x.abs()?, true)?.to_f64_vec()?;
                        m.iter().zip(want).map(|(m, w)| m + w.abs()).collect()
                    }
                }
            }
        }
        Scale::Softmax | Scale::LogSoftmax => {
            let Op::Softmax { dim, .. } = op else {
                unreachable!("softmax scales belong to softmax")
            };
            let x = wide(&inputs[0])?;
            if x.numel() == 0 {
                return Ok(Vec::new());
            }
            let d = x.sub(&x.max(&[*dim], true)?)?.abs()?.to_f64_vec()?;
            want.iter()
                .zip(d)
                .map(|(w, d)| match tol.scale {
                    Scale::Softmax => w.abs() * (summation(n) + 4.0 + d),
                    _ => w.abs() + d + summation(n) + 4.0,
                })
                .collect()
        }
        Scale::LayerNorm => {
            let Op::LayerNorm {
                normalized_dims,
                eps,
            } = op
            else {
                unreachable!("the layer-norm scale belongs to layer_norm")
            };
            if inputs[0].numel() == 0 {
                return Ok(Vec::new());
            }
            let [ra, q, _] = layer_norm_moments(&inputs[0], *normalized_dims, *eps)?;
            want.iter()
                .zip(ra.iter().zip(q))
                .map(|(w, (ra, q))| ra + w.abs() * (1.0 + q))
                .collect()
        }
        Scale::Attention => {
            let Op::Composite(Composite::Attention { causal, scale }) = op else {
                unreachable!("the attention scale belongs to attention")
            };
            let rows = attention_rows(inputs, *causal, *scale)?;
            let spread = rows
                .a
                .mul_scalar(2.0)?
                .add(&rows.r)?
                .add_scalar(2.0 * rows.keys + 6.0)?;
            rows.p_abs_v.mul(&spread)?.to_f64_vec()?
        }
        Scale::AbsEinsum => {
            let Op::Composite(Composite::Einsum { equation }) = op else {
                unreachable!("the einsum scale belongs to einsum")
            };
            let abs = inputs
                .iter()
                .map(|x| wide(x)?.abs())
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&Tensor> = abs.iter().collect();
            Tensor::einsum(equation, &refs)?.to_f64_vec()?
        }
        Scale::AbsMatmul => wide(&inputs[0])?
            .abs()?
            .matmul(&wide(&inputs[1])?.abs()?)?
            .to_f64_vec()?,
        Scale::AbsConv => {
            let bias = match inputs.get(2) {
                Some(b) => Some(wide(b)?.abs()?),
                None => None,
            };
            let (x, w) = (wide(&inputs[0])?.abs()?, wide(&inputs[1])?.abs()?);
            match op {
                Op::Conv2d(params) => x.conv2d(&w, bias.as_ref(), *params)?,
                Op::Composite(Composite::Conv1d(params)) => x.conv1d(&w, bias.as_ref(), *params)?,
                Op::Composite(Composite::ConvTranspose2d(params)) => {
                    x.conv_transpose2d(&w, bias.as_ref(), *params)?
                }
                _ => unreachable!("the conv scale belongs to the convolutions"),
            }
            .to_f64_vec()?
        }
        Scale::AbsInterpolate => {
            let Op::Composite(Composite::Interpolate { size, scale, mode }) = op else {
                unreachable!("the interpolate scale belongs to interpolate")
            };
            let x = wide(&inputs[0])?.abs()?;
            match scale {
                Some(s) => x.interpolate_scale(*s, *mode)?,
                None => x.interpolate(*size, *mode)?,
            }
            .to_f64_vec()?
        }
        Scale::AbsPool => match op {
            Op::AvgPool2d(params) => wide(&inputs[0])?.abs()?.avg_pool2d(*params)?.to_f64_vec()?,
            Op::Composite(Composite::AdaptiveAvgPool2d(size)) => {
                adaptive_abs_mean(&inputs[0], *size)?
            }
            Op::Composite(Composite::AvgPool2dWith(o)) => {
                wide(&inputs[0])?.abs()?.avg_pool2d_with(*o)?.to_f64_vec()?
            }
            _ => unreachable!("the pool scale belongs to the average pools"),
        },
    };
    Ok(finite_or_zero(s.into_iter().map(|v| v * unit).collect()))
}

/// A non-finite allowance (an overflowing scale, or one from infinite
/// inputs) as none.
fn finite_or_zero(s: Vec<f64>) -> Vec<f64> {
    s.into_iter()
        .map(|v| if v.is_finite() { v } else { 0.0 })
        .collect()
}

/// The mean of `|x|` over each adaptive window, on the host in `f64` with
/// every term divided by the window's size before it is added, so a window
/// of values near the largest finite one has a finite scale (the pool of
/// `|x|` itself would overflow where the result does not).
fn adaptive_abs_mean(x: &Tensor, (oh, ow): (usize, usize)) -> Result<Vec<f64>> {
    let d = x.dims();
    let (h, w) = (d[d.len() - 2], d[d.len() - 1]);
    let v = x.to_f64_vec()?;
    let planes = v.len().checked_div(h * w).unwrap_or(0);
    let mut out = Vec::with_capacity(planes * oh * ow);
    for p in 0..planes {
        let plane = &v[p * h * w..(p + 1) * h * w];
        for i in 0..oh {
            let (rs, re) = oxmera_tensor::adaptive_window(i, h, oh);
            for j in 0..ow {
                let (cs, ce) = oxmera_tensor::adaptive_window(j, w, ow);
                let k = ((re - rs) * (ce - cs)) as f64;
                let sum: f64 = (rs..re)
                    .flat_map(|r| (cs..ce).map(move |c| plane[r * w + c].abs() / k))
                    .sum();
                out.push(sum);
            }
        }
    }
    Ok(out)
}

/// What attention's tolerance needs of each query row, in `f64` from the
/// reference inputs: see the forward row of `Composite::Attention`.
pub(super) struct AttentionRows {
    /// `p·|v|`, the shape of the output.
    pub p_abs_v: Tensor,
    /// `max_j (E·|q||k|ᵀ·scale + |s|)` over the unmasked scores, `[.., L, 1]`.
    pub a: Tensor,
    /// `max_j |s - max s|` over the unmasked scores, `[.., L, 1]`.
    pub r: Tensor,
    /// The largest finite `|s|`.
    pub max_abs_score: f64,
    /// S, the number of keys.
    pub keys: f64,
}

pub(super) fn attention_rows(
    inputs: &[Tensor],
    causal: bool,
    scale: Option<f64>,
) -> Result<AttentionRows> {
    let (q, k, v) = (wide(&inputs[0])?, wide(&inputs[1])?, wide(&inputs[2])?);
    let e = q.dims().last().copied().unwrap_or(0);
    let (l, s) = (q.dims()[q.rank() - 2], k.dims()[k.rank() - 2]);
    let scale = scale.unwrap_or(if e == 0 { 1.0 } else { 1.0 / (e as f64).sqrt() });
    let mut scores = q.matmul(&k.transpose(-2, -1)?)?.mul_scalar(scale)?;
    if let Some(mask) = inputs.get(3) {
        scores = scores.add(&wide(mask)?)?;
    }
    if causal {
        let above = Tensor::ones([l, s], DType::Bool, q.device())?.triu(1)?;
        scores = scores.masked_fill(&above, f64::NEG_INFINITY)?;
    }
    let masked = scores.isinf()?;
    let terms = q
        .abs()?
        .matmul(&k.abs()?.transpose(-2, -1)?)?
        .mul_scalar(e as f64 * scale.abs())?
        .add(&scores.abs()?)?
        .masked_fill(&masked, 0.0)?;
    let a = terms.max(&[-1], true)?;
    let top = scores
        .masked_fill(&masked, f64::NEG_INFINITY)?
        .max(&[-1], true)?;
    let r = scores
        .sub(&top)?
        .abs()?
        .masked_fill(&masked, 0.0)?
        .max(&[-1], true)?;
    let p = scores.softmax(-1)?;
    let p_abs_v = p.matmul(&v.abs()?)?;
    let max_abs_score = scores
        .masked_fill(&masked, 0.0)?
        .abs()?
        .to_f64_vec()?
        .into_iter()
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    Ok(AttentionRows {
        p_abs_v,
        a,
        r,
        max_abs_score,
        keys: s as f64,
    })
}
