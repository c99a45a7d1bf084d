//! Convolution as im2col + GEMM, and direct pooling.
//!
//! A 2-D convolution is a matrix product in disguise. For one image and
//! one channel group, lay out every input value each output position reads
//! as a matrix `cols` of `K = c_in_g · kh · kw` rows (one per channel and
//! kernel tap) by `P = oh · ow` columns (one per output position) — the
//! "im2col" matrix, built with contiguous row copies. Then
//! `out[o][p] = Σ_k W[o][k] · cols[k][p]`: a GEMM with the weight
//! `[c_out_g × K]`. Images go to threads whole when there are enough of
//! them, each product on one thread; that form packs `cols` as B, a
//! streaming copy of whole rows. An image whose product the threads
//! split instead is computed transposed when output positions outnumber
//! output channels (the usual case early in a network),
//! `outᵀ = colsᵀ · Wᵀ`, so that the large dim `P` is the GEMM's row dim
//! that threads split (its packing gathers 12 values from each of `K`
//! rows per step, and the result is transposed back: 8×32×64×64 with 32
//! 3×3 filters took 3.3–3.7 ms that way against 3.0–3.1 ms direct, when
//! each image ran on one thread).
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
    Backend, Conv2dParams, Element, Pool2dParams, Storage, Tensor, window_input_index,
    window_output_size,
};
use rayon::prelude::*;

use crate::gemm::{MatRef, Scalar, gemm};

pub(crate) mod grad;
use crate::host::Computed;
use crate::{Isa, delegated, host, isa, strided, threads};

pub(crate) fn conv2d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: Conv2dParams,
) -> Result<Storage> {
    let isa = isa();
    match x.dtype() {
        DType::F32 => conv_in::<f32>(isa, x, weight, bias, p),
        DType::F64 => conv_in::<f64>(isa, x, weight, bias, p),
        DType::F16 => conv_in::<f16>(isa, x, weight, bias, p),
        DType::BF16 => conv_in::<bf16>(isa, x, weight, bias, p),
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

    /// The input row that output row `oi` reads through kernel row `ki`,
    /// if it is inside the image (`oi·sh + ki·dh - ph` in `[0, h)`).
    fn input_row(&self, oi: usize, ki: usize) -> Option<usize> {
        let p = self.p;
        window_input_index(oi, ki, p.stride.0, p.padding.0, p.dilation.0, self.h)
    }

    /// For kernel column `kj`: the output columns `lo..hi` whose input
    /// column `oj·sw + kj·dw - pw` is inside the image, and the input
    /// column of `lo` (the others follow every `sw`).
    fn inside_columns(&self, kj: usize) -> (usize, usize, usize) {
        let (sw, dw, pw) = (self.p.stride.1, self.p.dilation.1, self.p.padding.1);
        let shift = kj * dw;
        let lo = pw.saturating_sub(shift).div_ceil(sw);
        let hi = (self.w + pw)
            .checked_sub(shift)
            .map_or(0, |v| v.div_ceil(sw))
            .min(self.ow)
            .max(lo);
        (lo, hi, (lo * sw + shift).saturating_sub(pw))
    }

    fn is_pointwise(&self) -> bool {
        self.kh == 1 && self.kw == 1 && self.p.stride == (1, 1) && self.p.padding == (0, 0)
    }
}

/// The convolution in `T`'s computing type (see [`host::Computed`]).
fn conv_in<T: Computed>(
    isa: Isa,
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: Conv2dParams,
) -> Result<Storage> {
    let bs = bias.map(T::load).transpose()?;
    let g = Geometry::of(x.dims(), weight.dims(), p);
    let out = conv_values(isa, &g, &T::load(x)?, &T::load(weight)?, bs.as_deref());
    Ok(host::store(T::finish(out)))
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
    let mut out = strided::output::<T>(g.n * per_image);
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
    // im2col overwrites every element, so a recycled buffer serves (a
    // fresh one was zero-filled first: 9% of a profiled batch).
    let mut scratch: Option<Vec<T>> = None;
    for gi in 0..groups {
        let input = &x[gi * g.c_in_g * plane..(gi + 1) * g.c_in_g * plane];
        let cols: Cow<[T]> = if g.is_pointwise() {
            Cow::Borrowed(input)
        } else {
            let buf = scratch.get_or_insert_with(|| strided::output(k * pos));
            im2col(g, input, buf);
            Cow::Borrowed(&buf[..])
        };
        let cols = MatRef::row_major(&cols[..], pos);
        let weights = MatRef {
            data: w,
            offset: gi * c_out_g * k,
            row_stride: k,
            col_stride: 1,
        };
        let dst = &mut out[gi * c_out_g * pos..(gi + 1) * c_out_g * pos];
        if parallel && pos >= c_out_g {
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
    if let Some(buf) = scratch {
        // Dropped as storage, it goes back to the host cache for the next
        // image.
        drop(host::store(buf));
    }
}

/// Fills `cols` (`K × P`, row-major) with the taps of one group's channels
/// `x` (`c_in_g` planes of `h × w`): row `(c, ki, kj)`, column `(oi, oj)`
/// holds `x[c][oi·sh + ki·dh - ph][oj·sw + kj·dw - pw]`, or 0 in the padding.
fn im2col<T: Element>(g: &Geometry, x: &[T], cols: &mut [T]) {
    let zero = T::from_f64(0.0);
    let sw = g.p.stride.1;
    let pos = g.positions();
    for c in 0..g.c_in_g {
        let plane = &x[c * g.h * g.w..(c + 1) * g.h * g.w];
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let row = &mut cols[((c * g.kh + ki) * g.kw + kj) * pos..][..pos];
                let (lo, hi, first) = g.inside_columns(kj);
                for oi in 0..g.oh {
                    let dst = &mut row[oi * g.ow..(oi + 1) * g.ow];
                    let Some(i) = g.input_row(oi, ki) else {
                        dst.fill(zero);
                        continue;
                    };
                    let src = &plane[i * g.w..(i + 1) * g.w];
                    dst[..lo].fill(zero);
                    dst[hi..].fill(zero);
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

/// The taps of pooling window `(oi, oj)` over an `h × w` plane, in
/// row-major order: each one's input position `i·w + j`, or `None` where
/// it falls in the padding.
fn window_taps(
    p: Pool2dParams,
    (oi, oj): (usize, usize),
    (h, w): (usize, usize),
) -> impl Iterator<Item = Option<usize>> {
    (0..p.kernel.0).flat_map(move |ki| {
        let i = window_input_index(oi, ki, p.stride.0, p.padding.0, 1, h);
        (0..p.kernel.1).map(move |kj| {
            let j = window_input_index(oj, kj, p.stride.1, p.padding.1, 1, w);
            i.zip(j).map(|(i, j)| i * w + j)
        })
    })
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
    let mut out = strided::output::<T>(planes * oh * ow);
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
                for at in window_taps(p, (oi, oj), (h, w)).flatten() {
                    let v = src[at].to_f64();
                    acc = match kind {
                        Pool::Max if acc.is_nan() || v.is_nan() => f64::NAN,
                        Pool::Max => acc.max(v),
                        Pool::Avg => acc + v,
                    };
                }
                if kind == Pool::Avg {
                    acc /= taps;
                }
                o[oi * ow + oj] = T::from_f64(acc);
            }
        }
    };
    threads::for_each_chunk(&mut out, oh * ow, threads::worth_splitting(xs.len()), plane);
    Ok(out)
}

pub(crate) fn max_pool2d_backward(x: &Tensor, grad: &Tensor, p: Pool2dParams) -> Result<Storage> {
    match x.dtype() {
        DType::F32 => Ok(host::store(pool_backward::<f32>(x, grad, p, Pool::Max)?)),
        DType::F64 => Ok(host::store(pool_backward::<f64>(x, grad, p, Pool::Max)?)),
        _ => delegated(Reference.max_pool2d_backward(x, grad, p)),
    }
}

pub(crate) fn avg_pool2d_backward(x: &Tensor, grad: &Tensor, p: Pool2dParams) -> Result<Storage> {
    match x.dtype() {
        DType::F32 => Ok(host::store(pool_backward::<f32>(x, grad, p, Pool::Avg)?)),
        DType::F64 => Ok(host::store(pool_backward::<f64>(x, grad, p, Pool::Avg)?)),
        _ => delegated(Reference.avg_pool2d_backward(x, grad, p)),
    }
}

/// The gradient of pooling, one plane per task: each window sends its
/// gradient to the first tap (row-major, padding included) holding its
/// maximum — NaN counting as the largest — or spreads it over all
/// `kh·kw` taps; what lands on padding is dropped. Sums in `f64`, rounded
/// once, as the reference does.
fn pool_backward<T: Element>(
    x: &Tensor,
    grad: &Tensor,
    p: Pool2dParams,
    kind: Pool,
) -> Result<Vec<T>> {
    let (xs, gs) = (host::read::<T>(x)?, host::read::<T>(grad)?);
    let d = x.dims();
    let (planes, h, w) = (d[0] * d[1], d[2], d[3]);
    let (oh, ow) = (grad.dims()[2], grad.dims()[3]);
    let mut gx = strided::zeros::<T>(planes * h * w);
    if gx.is_empty() || oh * ow == 0 {
        return Ok(gx);
    }
    let (kh, kw) = p.kernel;
    let share = 1.0 / (kh * kw) as f64;
    let plane = |(pi, out): (usize, &mut [T])| {
        let src = &xs[pi * h * w..(pi + 1) * h * w];
        let mut acc = vec![0.0f64; h * w];
        for oi in 0..oh {
            for oj in 0..ow {
                let g = gs[(pi * oh + oi) * ow + oj].to_f64();
                let taps = window_taps(p, (oi, oj), (h, w));
                match kind {
                    Pool::Avg => {
                        for at in taps.flatten() {
                            acc[at] += g * share;
                        }
                    }
                    Pool::Max => {
                        let value =
                            |t: Option<usize>| t.map_or(f64::NEG_INFINITY, |at| src[at].to_f64());
                        let mut best: Option<(Option<usize>, f64)> = None;
                        for t in taps {
                            let v = value(t);
                            best = match best {
                                Some((_, b)) if b.is_nan() => best,
                                Some((_, b)) if !(v.is_nan() || v > b) => best,
                                _ => Some((t, v)),
                            };
                        }
                        if let Some((Some(at), _)) = best {
                            acc[at] += g;
                        }
                    }
                }
            }
        }
        for (o, a) in out.iter_mut().zip(acc) {
            *o = T::from_f64(a);
        }
    };
    threads::for_each_chunk(&mut gx, h * w, threads::worth_splitting(xs.len()), plane);
    Ok(gx)
}
