//! Convolution as im2col + GEMM, and direct pooling.
//!
//! A 2-D convolution is a matrix product in disguise. For one image and
//! one channel group, lay out every input value each output position reads
//! as a matrix `cols` of `K = c_in_g · kh · kw` rows (one per channel and
//! kernel tap) by `P = oh · ow` columns (one per output position) — the
//! "im2col" matrix, built with contiguous row copies. Then
//! `out[o][p] = Σ_k W[o][k] · cols[k][p]`: a GEMM with the weight
//! `[c_out_g × K]`. Small images are laid side by side first, several
//! images' matrices making one `[K × nb·P]` (see [`TARGET_COLUMNS`]): the
//! digits CNN's 4 × 4 images would otherwise each be a product of 16
//! columns, half of one micro-kernel tile. Batches of images go to threads
//! whole when there are enough of them, each product on one thread, else
//! the threads split each product. Where output positions outnumber
//! output channels (the usual case) the product is taken transposed,
//! `outᵀ = colsᵀ · Wᵀ`, and the result transposed back: `colsᵀ` has unit
//! row stride, so the GEMM reads it where it lies (its rows a cache line
//! further apart where they would share the L1's sets: `spread_rows`),
//! `MR` positions of one tap per step, and packs only the small weights
//! (for one image at a time and up to `TRANSPOSED_MAX_CHANNELS`).
//! On a Zen 4, 8×32×64×64 with 32 3×3 filters took 7.5–8.6 ms computed
//! untransposed with cols read in place, 10.5 ms with cols packed, and
//! 4.3–4.4 ms transposed.
//! A 1 × 1 convolution with stride 1 and no padding needs no im2col at
//! all: the image already is `cols`.
//!
//! Im2col costs `K · P` copies per image against `2 · c_out_g · K · P`
//! flops of GEMM, so it is cheap whenever there are more than a few
//! output channels; a direct convolution was not measured to beat it.

use half::{bf16, f16};
use oxmera_core::{DType, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{
    Backend, Conv2dParams, Element, Pool2dParams, Storage, Tensor, window_output_size,
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

    /// For kernel row `ki`: the output rows `lo..hi` whose input row
    /// `oi·sh + ki·dh - ph` is inside the image, and the input row of `lo`
    /// (the others follow every `sh`).
    fn inside_rows(&self, ki: usize) -> (usize, usize, usize) {
        let p = self.p;
        inside(self.h, self.oh, p.stride.0, p.dilation.0, p.padding.0, ki)
    }

    /// For kernel column `kj`: the output columns `lo..hi` whose input
    /// column `oj·sw + kj·dw - pw` is inside the image, and the input
    /// column of `lo` (the others follow every `sw`).
    fn inside_columns(&self, kj: usize) -> (usize, usize, usize) {
        let p = self.p;
        inside(self.w, self.ow, p.stride.1, p.dilation.1, p.padding.1, kj)
    }

    fn is_pointwise(&self) -> bool {
        self.kh == 1 && self.kw == 1 && self.p.stride == (1, 1) && self.p.padding == (0, 0)
    }
}

/// Along one axis of `extent` inputs and `out_len` outputs, for kernel
/// tap `tap`: the outputs `lo..hi` whose input `o·stride + tap·dilation -
/// padding` is inside `[0, extent)`, and the input of `lo`. (`o` is inside
/// when `o·stride ≥ padding - tap·dilation` and `o·stride < extent +
/// padding - tap·dilation`.)
fn inside(
    extent: usize,
    out_len: usize,
    stride: usize,
    dilation: usize,
    padding: usize,
    tap: usize,
) -> (usize, usize, usize) {
    let shift = tap * dilation;
    let lo = padding.saturating_sub(shift).div_ceil(stride).min(out_len);
    let hi = (extent + padding)
        .checked_sub(shift)
        .map_or(0, |v| v.div_ceil(stride))
        .min(out_len)
        .max(lo);
    (lo, hi, (lo * stride + shift).saturating_sub(padding))
}

/// Output rows shorter than this take [`im2col_small`]: for the digits
/// CNN's second layer (4-wide rows) the row-by-row copy — a zero fill, a
/// copy and another fill per row, three library calls for four values —
/// was a third of the layer's time.
const SHORT_ROW: usize = 16;

/// The distance between the rows of an im2col matrix of `columns`
/// columns: `columns`, or a cache line more where rows that far apart
/// would fall into the same few sets of the L1 (a multiple of 1 KiB
/// apart: 4096 positions of `f32`). Rows spread over the sets let the
/// GEMM read the matrix where it lies instead of copying it into panels
/// (see `gemm::spreads_over_l1`): the forward pass reads it as B, the
/// weight gradient as A.
fn spread_rows<T>(columns: usize) -> usize {
    let line = 64 / size_of::<T>().max(1);
    if (columns * size_of::<T>()) % 1024 == 0 {
        columns + line
    } else {
        columns
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

/// Columns a convolution's product should have before images are
/// batched into one: a product of an image with few output positions (the
/// digits CNN's second layer has 16) wastes most of each 32-column tile of
/// the micro-kernel and pays packing and dispatch per image, so small
/// images are laid side by side in one im2col matrix, `[K × nb·P]`, and
/// multiplied at once.
const TARGET_COLUMNS: usize = 256;

/// The fewest batches a batch of images is cut into (when it has that
/// many), so that a few of them go to each thread.
const MIN_BATCHES: usize = 4;

/// Images per product: enough to reach [`TARGET_COLUMNS`], at most a
/// [`MIN_BATCHES`]th of the batch. It depends on the geometry alone —
/// never on the thread count — so the weight gradient, summed batch by
/// batch, has the same bits on every machine size.
fn images_per_product(g: &Geometry) -> usize {
    let want = TARGET_COLUMNS.div_ceil(g.positions().max(1));
    want.min(g.n / MIN_BATCHES).max(1)
}

/// The most output channels (per group) for which an image's product is
/// taken transposed (see the module docs). A 1 × 1 convolution to 256
/// channels of 56 × 56 images ran at 61 GFLOP/s transposed against 106
/// untransposed (the image itself read in place as B); small images side
/// by side (the digits CNN's layers) also ran slower transposed in the
/// bench (1.35× and 0.92× PyTorch against 1.77× and 1.36×), so they stay
/// untransposed too.
const TRANSPOSED_MAX_CHANNELS: usize = 128;

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
    let nb = images_per_product(g);
    let image_len = g.c_in * g.h * g.w;
    let batch = |(i, o): (usize, &mut [T]), parallel: bool| {
        let images = o.len() / per_image;
        let xs = &x[i * nb * image_len..(i * nb + images) * image_len];
        conv_images(isa, g, (xs, images), w, o, parallel);
        if let Some(bias) = bias {
            for image in o.chunks_mut(per_image) {
                for (plane, &bv) in image.chunks_mut(pos).zip(bias) {
                    plane.iter_mut().for_each(|v| *v = *v + bv);
                }
            }
        }
    };
    let batches = g.n.div_ceil(nb);
    let flops_per_batch = nb * per_image * g.k();
    if batches > 1 && (flops_per_batch < 1 << 21 || batches >= threads::num_threads()) {
        // Small batches, or at least one batch per thread: one batch per
        // task, each product single-threaded, so that im2col (a serial
        // copy) runs on every thread at once instead of stalling all but
        // one between products. (The GEMM's result does not depend on
        // whether it is split, so neither path changes the values.)
        threads::run(|| {
            out.par_chunks_mut(nb * per_image)
                .enumerate()
                .for_each(|job| batch(job, false))
        });
    } else {
        out.chunks_mut(nb * per_image)
            .enumerate()
            .for_each(|job| batch(job, true));
    }
    out
}

/// A batch of `nb` images side by side: `x` holds them, `out` is their
/// `[nb, c_out, oh * ow]` block.
fn conv_images<T: Scalar + Element>(
    isa: Isa,
    g: &Geometry,
    (x, nb): (&[T], usize),
    w: &[T],
    out: &mut [T],
    parallel: bool,
) {
    let (pos, k) = (g.positions(), g.k());
    let groups = g.p.groups;
    let c_out_g = g.c_out / groups;
    let columns = nb * pos;
    let mut scratch: Option<Vec<T>> = None;
    // The product of several images, before it is dealt back to them.
    let mut side_by_side: Option<Vec<T>> = None;
    for gi in 0..groups {
        let cols = im2col_matrix(g, (x, nb), gi, &mut scratch);
        let weights = MatRef {
            data: w,
            offset: gi * c_out_g * k,
            row_stride: k,
            col_stride: 1,
        };
        if nb == 1 && pos >= c_out_g && c_out_g <= TRANSPOSED_MAX_CHANNELS {
            // outᵀ [P × c_out_g] = colsᵀ · weightsᵀ, then transposed back.
            // colsᵀ has unit row stride, so the GEMM reads it where it
            // lies, `MR` positions of one tap per step; the weights are
            // the small operand it packs.
            let t = side_by_side.get_or_insert_with(|| strided::output(pos * c_out_g));
            gemm(isa, pos, c_out_g, k, cols.t(), weights.t(), t, parallel);
            let dst = &mut out[gi * c_out_g * pos..(gi + 1) * c_out_g * pos];
            for (o, row) in dst.chunks_mut(pos).enumerate() {
                for (d, position) in row.iter_mut().zip(t.chunks_exact(c_out_g)) {
                    *d = position[o];
                }
            }
        } else if nb > 1 {
            // [c_out_g × nb·P], then each image's rows to its own block.
            let t = side_by_side.get_or_insert_with(|| strided::output(c_out_g * columns));
            gemm(isa, c_out_g, columns, k, weights, cols, t, parallel);
            for (b, image) in out.chunks_mut(g.c_out * pos).enumerate() {
                let dst = &mut image[gi * c_out_g * pos..(gi + 1) * c_out_g * pos];
                for (o, row) in dst.chunks_mut(pos).enumerate() {
                    row.copy_from_slice(&t[o * columns + b * pos..][..pos]);
                }
            }
        } else {
            let dst = &mut out[gi * c_out_g * pos..(gi + 1) * c_out_g * pos];
            gemm(isa, c_out_g, pos, k, weights, cols, dst, parallel);
        }
    }
    // Dropped as storage, the buffers go back to the host cache for the
    // next batch.
    for buf in [scratch, side_by_side].into_iter().flatten() {
        drop(host::store(buf));
    }
}

/// Group `gi`'s im2col matrix of the `nb` images in `x`, side by side,
/// `[K × nb·P]`: one 1 × 1 image at stride 1 without padding is its own,
/// read where it lies; otherwise the matrix is built in `scratch` (taken
/// on first use from the host cache — im2col overwrites every element, so
/// a recycled buffer serves: a fresh one was zero-filled first, 9% of a
/// profiled batch), its rows [`spread_rows`] apart. The forward pass and
/// the weight gradient both read it.
fn im2col_matrix<'a, T: Element>(
    g: &Geometry,
    (x, nb): (&'a [T], usize),
    gi: usize,
    scratch: &'a mut Option<Vec<T>>,
) -> MatRef<'a, T> {
    let (pos, k, plane) = (g.positions(), g.k(), g.h * g.w);
    let group_input = |b: usize| {
        let at = (b * g.c_in + gi * g.c_in_g) * plane;
        &x[at..at + g.c_in_g * plane]
    };
    if nb == 1 && g.is_pointwise() {
        return MatRef::row_major(group_input(0), pos);
    }
    let ld = spread_rows::<T>(nb * pos);
    let buf = scratch.get_or_insert_with(|| strided::output(k * ld));
    // (With no input channels, K = 0: no taps, and the product is 0.)
    for b in (0..nb).filter(|_| k > 0) {
        im2col(g, group_input(b), &mut buf[b * pos..], ld);
    }
    MatRef {
        data: &buf[..],
        offset: 0,
        row_stride: ld,
        col_stride: 1,
    }
}

/// Fills `cols` (`K × P`, row-major, rows `ld` apart: several images'
/// matrices side by side start `P` apart) with the taps of one group's
/// channels `x` (`c_in_g` planes of `h × w`): row `(c, ki, kj)`, column
/// `(oi, oj)` holds `x[c][oi·sh + ki·dh - ph][oj·sw + kj·dw - pw]`, or 0
/// in the padding.
fn im2col<T: Element>(g: &Geometry, x: &[T], cols: &mut [T], ld: usize) {
    if g.ow < SHORT_ROW {
        return im2col_small(g, x, cols, ld);
    }
    let zero = T::from_f64(0.0);
    let (sh, sw) = g.p.stride;
    let (pos, ow) = (g.positions(), g.ow);
    for c in 0..g.c_in_g {
        let plane = &x[c * g.h * g.w..(c + 1) * g.h * g.w];
        for ki in 0..g.kh {
            let (rlo, rhi, first_row) = g.inside_rows(ki);
            for kj in 0..g.kw {
                let row = &mut cols[((c * g.kh + ki) * g.kw + kj) * ld..][..pos];
                let (lo, hi, first) = g.inside_columns(kj);
                row[..rlo * ow].fill(zero);
                row[rhi * ow..].fill(zero);
                let inside = row[rlo * ow..rhi * ow].chunks_exact_mut(ow);
                for (r, dst) in inside.enumerate() {
                    let i = first_row + r * sh;
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

/// [`im2col`] for images with short output rows: each channel is copied
/// once into a zero-bordered plane, so that every entry of `cols` is one
/// read at an offset computed once per call — no edge cases in the loop.
fn im2col_small<T: Element>(g: &Geometry, x: &[T], cols: &mut [T], ld: usize) {
    let zero = T::from_f64(0.0);
    let Conv2dParams {
        stride: (sh, sw),
        padding: (ph, pw),
        dilation: (dh, dw),
        ..
    } = g.p;
    let (wide, pos, taps) = (g.w + 2 * pw, g.positions(), g.kh * g.kw);
    // The bordered plane's index each (tap, position) reads. The last
    // output row's last tap reads row (oh - 1)·sh + (kh - 1)·dh, at most
    // h + 2·ph - 1 by the output size's definition, so all are inside.
    let mut at = Vec::with_capacity(taps * pos);
    for ki in 0..g.kh {
        for kj in 0..g.kw {
            for oi in 0..g.oh {
                for oj in 0..g.ow {
                    at.push((oi * sh + ki * dh) * wide + oj * sw + kj * dw);
                }
            }
        }
    }
    let mut bordered = vec![zero; (g.h + 2 * ph) * wide];
    for c in 0..g.c_in_g {
        let plane = &x[c * g.h * g.w..(c + 1) * g.h * g.w];
        for (i, src) in plane.chunks_exact(g.w).enumerate() {
            bordered[(i + ph) * wide + pw..][..g.w].copy_from_slice(src);
        }
        for (t, reads) in at.chunks_exact(pos).enumerate() {
            let row = &mut cols[(c * taps + t) * ld..][..pos];
            for (d, &ix) in row.iter_mut().zip(reads) {
                *d = bordered[ix];
            }
        }
    }
}

/// Visits the taps of pooling window `(oi, oj)` over an `h × w` plane in
/// row-major order: `visit(Some(i·w + j))` for a tap on input `(i, j)`,
/// `visit(None)` for one in the padding. (Plain loops with the window's
/// corner computed once: an iterator of per-tap index checks was a
/// third of the digits CNN's training step.)
#[inline]
fn for_window_taps(
    p: Pool2dParams,
    (oi, oj): (usize, usize),
    (h, w): (usize, usize),
    mut visit: impl FnMut(Option<usize>),
) {
    // Tensor extents fit in isize (allocations are at most isize::MAX).
    let i0 = (oi * p.stride.0) as isize - p.padding.0 as isize;
    let j0 = (oj * p.stride.1) as isize - p.padding.1 as isize;
    for i in i0..i0 + p.kernel.0 as isize {
        let row_inside = i >= 0 && (i as usize) < h;
        for j in j0..j0 + p.kernel.1 as isize {
            let inside = row_inside && j >= 0 && (j as usize) < w;
            visit(inside.then(|| i as usize * w + j as usize));
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
                for_window_taps(p, (oi, oj), (h, w), |tap| {
                    let Some(at) = tap else { return };
                    let v = src[at].to_f64();
                    acc = match kind {
                        Pool::Max if acc.is_nan() || v.is_nan() => f64::NAN,
                        Pool::Max => acc.max(v),
                        Pool::Avg => acc + v,
                    };
                });
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
                match kind {
                    Pool::Avg => for_window_taps(p, (oi, oj), (h, w), |tap| {
                        if let Some(at) = tap {
                            acc[at] += g * share;
                        }
                    }),
                    Pool::Max => {
                        let value =
                            |t: Option<usize>| t.map_or(f64::NEG_INFINITY, |at| src[at].to_f64());
                        let mut best: Option<(Option<usize>, f64)> = None;
                        for_window_taps(p, (oi, oj), (h, w), |t| {
                            let v = value(t);
                            best = match best {
                                Some((_, b)) if b.is_nan() => best,
                                Some((_, b)) if !(v.is_nan() || v > b) => best,
                                _ => Some((t, v)),
                            };
                        });
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
