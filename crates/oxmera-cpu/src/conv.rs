//! Convolution as im2col + GEMM, and direct pooling.
//!
//! A 2-D convolution is a matrix product in disguise. For one image and
//! one channel group, lay out every input value each output position reads
//! as a matrix `cols` of `K = c_in_g · kh · kw` rows (one per channel and
//! kernel tap) by `P = oh · ow` columns (one per output position) — the
//! "im2col" matrix, built with contiguous row copies. Then
//! `out[o][p] = Σ_k W[o][k] · cols[k][p]`: a GEMM with the weight
//! `[c_out_g × K]`. When output positions outnumber output channels (the
//! usual case early in a network) the product is computed transposed,
//! `outᵀ = colsᵀ · Wᵀ`, so the large dim `P` is the GEMM's row dim that
//! threads split; both transposes are only strides given to the packing.
//! A 1 × 1 convolution with stride 1 and no padding needs no im2col at
//! all: the image already is `cols`.
//!
//! Im2col costs `K · P` copies per image against `2 · c_out_g · K · P`
//! flops of GEMM, so it is cheap whenever there are more than a few
//! output channels; a direct convolution was not measured to beat it.

use std::borrow::Cow;

use half::{bf16, f16};
use oxmera_core::{DType, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{
    Backend, Conv2dParams, Element, Pool2dParams, Storage, Tensor, window_output_size,
};
use rayon::prelude::*;

use crate::gemm::{MatRef, Scalar, gemm};
use crate::{Isa, delegated, host, isa, strided, threads};

pub(crate) fn conv2d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: Conv2dParams,
) -> Result<Storage> {
    let isa = isa();
    match x.dtype() {
        DType::F32 => Ok(host::store(conv_native::<f32>(isa, x, weight, bias, p)?)),
        DType::F64 => Ok(host::store(conv_native::<f64>(isa, x, weight, bias, p)?)),
        DType::F16 => Ok(host::store(conv_via_f32::<f16>(isa, x, weight, bias, p)?)),
        DType::BF16 => Ok(host::store(conv_via_f32::<bf16>(isa, x, weight, bias, p)?)),
        _ => delegated(Reference.conv2d(x, weight, bias, p)),
    }
}

/// The geometry of one convolution.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    n: usize,
    c_in: usize,
    h: usize,
    w: usize,
    c_out: usize,
    c_in_g: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    p: Conv2dParams,
}

impl Geometry {
    fn of(xd: &[usize], wd: &[usize], p: Conv2dParams) -> Geometry {
        let oh = window_output_size(xd[2], wd[2], p.stride.0, p.padding.0, p.dilation.0);
        let ow = window_output_size(xd[3], wd[3], p.stride.1, p.padding.1, p.dilation.1);
        Geometry {
            n: xd[0],
            c_in: xd[1],
            h: xd[2],
            w: xd[3],
            c_out: wd[0],
            c_in_g: wd[1],
            kh: wd[2],
            kw: wd[3],
            oh: oh.expect("the front end checked the window fits"),
            ow: ow.expect("the front end checked the window fits"),
            p,
        }
    }

    /// Rows of the im2col matrix.
    fn k(&self) -> usize {
        self.c_in_g * self.kh * self.kw
    }

    /// Output positions per image.
    fn positions(&self) -> usize {
        self.oh * self.ow
    }

    fn is_pointwise(&self) -> bool {
        self.kh == 1 && self.kw == 1 && self.p.stride == (1, 1) && self.p.padding == (0, 0)
    }
}

fn conv_native<T: Scalar + Element>(
    isa: Isa,
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: Conv2dParams,
) -> Result<Vec<T>> {
    let xs = host::read::<T>(x)?;
    let ws = host::read::<T>(weight)?;
    let bs = bias.map(host::read::<T>).transpose()?;
    let g = Geometry::of(x.dims(), weight.dims(), p);
    Ok(conv_values(isa, &g, &xs, &ws, bs.as_deref()))
}

/// Half-precision convolution in `f32`, rounded once at the end.
fn conv_via_f32<T: Element>(
    isa: Isa,
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: Conv2dParams,
) -> Result<Vec<T>> {
    let widen = |t: &Tensor| -> Result<Vec<f32>> {
        Ok(host::read::<T>(t)?
            .iter()
            .map(|v| v.to_f64() as f32)
            .collect())
    };
    let bs = bias.map(widen).transpose()?;
    let g = Geometry::of(x.dims(), weight.dims(), p);
    let out = conv_values(isa, &g, &widen(x)?, &widen(weight)?, bs.as_deref());
    Ok(out.into_iter().map(|v| T::from_f64(v as f64)).collect())
}

/// The convolution of contiguous NCHW `x` with contiguous OIHW `w`.
fn conv_values<T: Scalar + Element>(
    isa: Isa,
    g: &Geometry,
    x: &[T],
    w: &[T],
    bias: Option<&[T]>,
) -> Vec<T> {
    let (pos, per_image) = (g.positions(), g.c_out * g.positions());
    let mut out = strided::zeros::<T>(g.n * per_image);
    if out.is_empty() {
        return out;
    }
    let flops_per_image = per_image * g.k();
    let image = |(b, o): (usize, &mut [T]), parallel: bool| {
        conv_image(isa, g, &x[b * g.c_in * g.h * g.w..], w, o, parallel);
        if let Some(bias) = bias {
            for (plane, &bv) in o.chunks_mut(pos).zip(bias) {
                plane.iter_mut().for_each(|v| *v = *v + bv);
            }
        }
    };
    if g.n > 1 && (flops_per_image < 1 << 21 || g.n >= threads::num_threads()) {
        // Small images, or at least one image per thread: one image per
        // task, each product single-threaded, so that im2col (a serial
        // copy) runs on every thread at once instead of stalling all but
        // one between products. (The GEMM's result does not depend on
        // whether it is split, so neither path changes the values.)
        threads::run(|| {
            out.par_chunks_mut(per_image)
                .enumerate()
                .for_each(|job| image(job, false))
        });
    } else {
        out.chunks_mut(per_image)
            .enumerate()
            .for_each(|job| image(job, true));
    }
    out
}

/// One image: `out` is its `[c_out, oh * ow]` block.
fn conv_image<T: Scalar + Element>(
    isa: Isa,
    g: &Geometry,
    x: &[T],
    w: &[T],
    out: &mut [T],
    parallel: bool,
) {
    let (pos, k) = (g.positions(), g.k());
    let groups = g.p.groups;
    let c_out_g = g.c_out / groups;
    let plane = g.h * g.w;
    let mut scratch = Vec::new();
    for gi in 0..groups {
        let input = &x[gi * g.c_in_g * plane..(gi + 1) * g.c_in_g * plane];
        let cols: Cow<[T]> = if g.is_pointwise() {
            Cow::Borrowed(input)
        } else {
            scratch.resize(k * pos, T::default());
            im2col(g, input, &mut scratch);
            Cow::Borrowed(&scratch[..])
        };
        let cols = MatRef::row_major(&cols[..], pos);
        let weights = MatRef {
            data: w,
            offset: gi * c_out_g * k,
            row_stride: k,
            col_stride: 1,
        };
        let dst = &mut out[gi * c_out_g * pos..(gi + 1) * c_out_g * pos];
        if pos >= c_out_g {
            // outᵀ [pos × c_out_g] = colsᵀ · weightsᵀ, then transposed back.
            let mut t = vec![T::default(); pos * c_out_g];
            gemm(
                isa,
                pos,
                c_out_g,
                k,
                cols.t(),
                weights.t(),
                &mut t,
                parallel,
            );
            for (o, row) in dst.chunks_mut(pos).enumerate() {
                for (pi, d) in row.iter_mut().enumerate() {
                    *d = t[pi * c_out_g + o];
                }
            }
        } else {
            gemm(isa, c_out_g, pos, k, weights, cols, dst, parallel);
        }
    }
}

/// Fills `cols` (`K × P`, row-major) with the taps of one group's channels
/// `x` (`c_in_g` planes of `h × w`): row `(c, ki, kj)`, column `(oi, oj)`
/// holds `x[c][oi·sh + ki·dh - ph][oj·sw + kj·dw - pw]`, or 0 in the padding.
fn im2col<T: Element>(g: &Geometry, x: &[T], cols: &mut [T]) {
    let zero = T::from_f64(0.0);
    let (sh, sw) = g.p.stride;
    let (ph, pw) = g.p.padding;
    let (dh, dw) = g.p.dilation;
    let pos = g.positions();
    for c in 0..g.c_in_g {
        let plane = &x[c * g.h * g.w..(c + 1) * g.h * g.w];
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let row = &mut cols[((c * g.kh + ki) * g.kw + kj) * pos..][..pos];
                // Output columns whose input column is inside the image:
                // oj·sw + kj·dw - pw in [0, w).
                let shift = kj * dw;
                let lo = pw.saturating_sub(shift).div_ceil(sw);
                let hi = (g.w + pw)
                    .checked_sub(shift)
                    .map_or(0, |v| v.div_ceil(sw))
                    .min(g.ow)
                    .max(lo);
                for oi in 0..g.oh {
                    let dst = &mut row[oi * g.ow..(oi + 1) * g.ow];
                    let i = (oi * sh + ki * dh).checked_sub(ph).filter(|&i| i < g.h);
                    let Some(i) = i else {
                        dst.fill(zero);
                        continue;
                    };
                    let src = &plane[i * g.w..(i + 1) * g.w];
                    dst[..lo].fill(zero);
                    dst[hi..].fill(zero);
                    let first = lo * sw + shift - pw;
                    if sw == 1 {
                        dst[lo..hi].copy_from_slice(&src[first..first + (hi - lo)]);
                    } else {
                        for (t, d) in dst[lo..hi].iter_mut().enumerate() {
                            *d = src[first + t * sw];
                        }
                    }
                }
            }
        }
    }
}

pub(crate) fn max_pool2d(x: &Tensor, p: Pool2dParams) -> Result<Storage> {
    match x.dtype() {
        DType::F32 => Ok(host::store(pool::<f32>(x, p, Pool::Max)?)),
        DType::F64 => Ok(host::store(pool::<f64>(x, p, Pool::Max)?)),
        _ => delegated(Reference.max_pool2d(x, p)),
    }
}

pub(crate) fn avg_pool2d(x: &Tensor, p: Pool2dParams) -> Result<Storage> {
    match x.dtype() {
        DType::F32 => Ok(host::store(pool::<f32>(x, p, Pool::Avg)?)),
        DType::F64 => Ok(host::store(pool::<f64>(x, p, Pool::Avg)?)),
        _ => delegated(Reference.avg_pool2d(x, p)),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Pool {
    /// NaN anywhere in the window wins; padding never does.
    Max,
    /// Padded zeros count in the divisor: every window divides by kh·kw.
    Avg,
}

/// Pooling, one plane (image × channel) per task, windows visited
/// directly; values are combined in `f64` and rounded once.
fn pool<T: Element>(x: &Tensor, p: Pool2dParams, kind: Pool) -> Result<Vec<T>> {
    let xs = host::read::<T>(x)?;
    let d = x.dims();
    let (planes, h, w) = (d[0] * d[1], d[2], d[3]);
    let oh = window_output_size(h, p.kernel.0, p.stride.0, p.padding.0, 1)
        .expect("the front end checked the window fits");
    let ow = window_output_size(w, p.kernel.1, p.stride.1, p.padding.1, 1)
        .expect("the front end checked the window fits");
    let mut out = strided::zeros::<T>(planes * oh * ow);
    if out.is_empty() {
        return Ok(out);
    }
    let taps = (p.kernel.0 * p.kernel.1) as f64;
    let plane = |(pi, o): (usize, &mut [T])| {
        let src = &xs[pi * h * w..(pi + 1) * h * w];
        for oi in 0..oh {
            for oj in 0..ow {
                let mut acc = if kind == Pool::Max {
                    f64::NEG_INFINITY
                } else {
                    0.0
                };
                for ki in 0..p.kernel.0 {
                    let Some(i) = (oi * p.stride.0 + ki)
                        .checked_sub(p.padding.0)
                        .filter(|&i| i < h)
                    else {
                        continue;
                    };
                    for kj in 0..p.kernel.1 {
                        let Some(j) = (oj * p.stride.1 + kj)
                            .checked_sub(p.padding.1)
                            .filter(|&j| j < w)
                        else {
                            continue;
                        };
                        let v = src[i * w + j].to_f64();
                        acc = match kind {
                            Pool::Max if acc.is_nan() || v.is_nan() => f64::NAN,
                            Pool::Max => acc.max(v),
                            Pool::Avg => acc + v,
                        };
                    }
                }
                if kind == Pool::Avg {
                    acc /= taps;
                }
                o[oi * ow + oj] = T::from_f64(acc);
            }
        }
    };
    if threads::worth_splitting(xs.len()) {
        threads::run(|| out.par_chunks_mut(oh * ow).enumerate().for_each(plane));
    } else {
        out.chunks_mut(oh * ow).enumerate().for_each(plane);
    }
    Ok(out)
}
