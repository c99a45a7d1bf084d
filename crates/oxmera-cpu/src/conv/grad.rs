//! The gradients of a convolution, by the same im2col + GEMM as the
//! forward pass (see the parent module).
//!
//! For one image and one channel group the forward pass is
//! `out = W · cols`, with `W` the weights `[c_out_g × K]` and `cols` the
//! im2col matrix `[K × P]`. So, given `G`, the gradient of `out`
//! `[c_out_g × P]`:
//!
//! - `∂W = G · colsᵀ`, summed over the images;
//! - `∂cols = Wᵀ · G`, and `∂x` is `∂cols` folded back onto the image
//!   ("col2im", the adjoint of im2col): each input value receives the sum
//!   of the gradients of every tap that read it. A 1 × 1 convolution with
//!   stride 1 and no padding reads the image as `cols` itself, so there
//!   `∂x` is `∂cols`. With stride 1 and many input channels, `∂x` is
//!   computed instead as a convolution of `G` with the flipped weights
//!   (`input_grad_as_conv`), which never builds `∂cols`.
//!
//! Images go in the forward pass's batches (`images_per_product`: small
//! images side by side, one product per batch), and the batches to
//! threads whole when there are at least two: each computes its part of
//! `∂W` and its images' `∂x`, and the parts of `∂W` are added in batch
//! order. The batches depend on the geometry alone, so the sum has one
//! fixed order whatever the thread count. (A batch that is the whole
//! input splits its products across threads instead; a product's result
//! does not depend on that.)

use half::{bf16, f16};
use oxmera_core::{DType, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{Backend, Conv2dParams, Element, Storage, Tensor};

use rayon::prelude::*;

use super::{Geometry, conv_values, im2col_matrix, images_per_product};
use crate::gemm::{MatRef, Scalar, gemm};
use crate::host::Computed;
use crate::{Isa, host, isa, strided, threads};

pub(crate) fn conv2d_backward(
    x: &Tensor,
    weight: &Tensor,
    grad: &Tensor,
    p: Conv2dParams,
) -> Result<(Storage, Storage)> {
    let isa = isa();
    let g = Geometry::of(x.dims(), weight.dims(), p);
    match x.dtype() {
        DType::F32 => grads_in::<f32>(isa, &g, x, weight, grad),
        DType::F64 => grads_in::<f64>(isa, &g, x, weight, grad),
        DType::F16 => grads_in::<f16>(isa, &g, x, weight, grad),
        DType::BF16 => grads_in::<bf16>(isa, &g, x, weight, grad),
        _ => {
            let (gx, gw) = Reference.conv2d_backward(x, weight, grad, p)?;
            Ok((host::relabel(gx), host::relabel(gw)))
        }
    }
}

/// The gradients in `T`'s computing type (see [`host::Computed`]), each
/// rounded once at the end.
fn grads_in<T: Computed>(
    isa: Isa,
    g: &Geometry,
    x: &Tensor,
    weight: &Tensor,
    grad: &Tensor,
) -> Result<(Storage, Storage)> {
    let (gx, gw) = grads(isa, g, &T::load(x)?, &T::load(weight)?, &T::load(grad)?);
    Ok((host::store(T::finish(gx)), host::store(T::finish(gw))))
}

/// `(∂x, ∂W)` of the convolution of contiguous NCHW `x` with contiguous
/// OIHW `w`, given the contiguous output gradient `gy`.
fn grads<T: Scalar + Element>(
    isa: Isa,
    g: &Geometry,
    x: &[T],
    w: &[T],
    gy: &[T],
) -> (Vec<T>, Vec<T>) {
    let image_len = g.c_in * g.h * g.w;
    if g.n * image_len == 0 {
        // No images, or images of no values: every tap reads padding (or
        // there are none), so both gradients are zeros.
        let gw = strided::zeros::<T>(g.c_out * g.k());
        return (strided::zeros::<T>(g.n * image_len), gw);
    }
    let as_conv = input_grad_as_conv(isa, g, w, gy);
    let mut gx = match as_conv {
        Some(_) => Vec::new(),
        None => strided::zeros::<T>(g.n * image_len),
    };
    let nb = images_per_product(g);
    let out_len = g.c_out * g.positions();
    let batch = |i: usize, gx_batch: Option<&mut [T]>, parallel: bool| {
        let (b0, images) = (i * nb, nb.min(g.n - i * nb));
        let xs = &x[b0 * image_len..(b0 + images) * image_len];
        let gys = &gy[b0 * out_len..(b0 + images) * out_len];
        batch_grads(isa, g, (xs, images), w, gys, gx_batch, parallel)
    };
    let parts: Vec<Vec<T>> = match (g.n > nb, as_conv.is_some()) {
        (true, true) => threads::run(|| {
            (0..g.n.div_ceil(nb))
                .into_par_iter()
                .map(|i| batch(i, None, false))
                .collect()
        }),
        (true, false) => threads::run(|| {
            gx.par_chunks_mut(nb * image_len)
                .enumerate()
                .map(|(i, gx_batch)| batch(i, Some(gx_batch), false))
                .collect()
        }),
        (false, direct) => vec![batch(0, (!direct).then_some(&mut gx[..]), true)],
    };
    // ∂W: the batches' parts added in batch order.
    let mut parts = parts.into_iter();
    let mut gw = parts.next().expect("at least one batch");
    for part in parts {
        for (d, v) in gw.iter_mut().zip(part) {
            *d = *d + v;
        }
    }
    (as_conv.unwrap_or(gx), gw)
}

/// The fewest input channels per group for which [`input_grad_as_conv`]
/// serves.
const MIN_CHANNELS_AS_CONV: usize = 32;

/// `∂x` as a convolution of its own, where the geometry allows: with
/// stride 1 and no dilation, each input value receives
/// `Σ_o Σ_(ki,kj) G[o][i + ph - ki][j + pw - kj] · W[o][c][ki][kj]`, which
/// is the output gradient, padded by `k - 1 - p`, convolved with the
/// weights flipped in space and with their in and out channels swapped
/// per group. That runs as the forward pass does (its products read the
/// im2col matrix where it lies), instead of a product `Wᵀ · G` as large as
/// the im2col matrix followed by col2im's scattered adds — half the
/// backward pass's time on `[8, 32, 64, 64]` with 32 3 × 3 filters.
/// `None` where the geometry does not allow it (a stride, a dilation, a
/// padding of the whole kernel), no im2col is needed (1 × 1, stride 1), or
/// there are too few input channels for it to pay.
fn input_grad_as_conv<T: Scalar + Element>(
    isa: Isa,
    g: &Geometry,
    w: &[T],
    gy: &[T],
) -> Option<Vec<T>> {
    let p = g.p;
    let (kh, kw) = (g.kh, g.kw);
    let plain = p.stride == (1, 1) && p.dilation == (1, 1);
    // With few input channels the convolution's product is a sliver (one
    // output channel for the digits CNN's first layer) and its im2col of
    // the gradient, c_out_g·kh·kw rows, costs more than the product:
    // col2im is faster there (that layer's backward: 196–208 µs this way,
    // 64–69 µs with col2im; its second layer, 16 channels, within the
    // noise either way; Zen 4, 2 threads).
    let wide = g.c_in_g >= MIN_CHANNELS_AS_CONV;
    if !plain || !wide || p.padding.0 >= kh || p.padding.1 >= kw || g.is_pointwise() {
        return None;
    }
    let c_out_g = g.c_out / p.groups;
    // flipped[gi·c_in_g + c][o][ki][kj] = w[gi·c_out_g + o][c][kh-1-ki][kw-1-kj]
    let mut flipped = strided::output::<T>(w.len());
    for gi in 0..p.groups {
        for o in 0..c_out_g {
            for c in 0..g.c_in_g {
                let from = ((gi * c_out_g + o) * g.c_in_g + c) * kh * kw;
                let to = ((gi * g.c_in_g + c) * c_out_g + o) * kh * kw;
                let taps = &w[from..from + kh * kw];
                for (d, &v) in flipped[to..to + kh * kw].iter_mut().zip(taps.iter().rev()) {
                    *d = v;
                }
            }
        }
    }
    let transposed = Geometry {
        n: g.n,
        c_in: g.c_out,
        h: g.oh,
        w: g.ow,
        c_out: g.c_in,
        c_in_g: c_out_g,
        kh,
        kw,
        oh: g.h,
        ow: g.w,
        p: Conv2dParams {
            stride: (1, 1),
            padding: (kh - 1 - p.padding.0, kw - 1 - p.padding.1),
            dilation: (1, 1),
            groups: p.groups,
        },
    };
    let gx = conv_values(isa, &transposed, gy, &flipped, None);
    drop(host::store(flipped));
    Some(gx)
}

/// One batch of images side by side (`x`, their output gradient `gy`):
/// adds their `∂x` into `gx` (unless it is computed elsewhere: `None`)
/// and returns their part of `∂W`.
fn batch_grads<T: Scalar + Element>(
    isa: Isa,
    g: &Geometry,
    (x, nb): (&[T], usize),
    w: &[T],
    gy: &[T],
    mut gx: Option<&mut [T]>,
    parallel: bool,
) -> Vec<T> {
    let (pos, k) = (g.positions(), g.k());
    let c_out_g = g.c_out / g.p.groups;
    let plane = g.h * g.w;
    let image_len = g.c_in * plane;
    let columns = nb * pos;
    let mut gw = vec![T::default(); g.c_out * k];
    // im2col and the ∂cols product overwrite every element they read, so
    // recycled buffers serve (fresh ones cost a page fault per 4 KiB).
    let (mut cols_buf, mut gcols) = (None, None);
    let mut gout = Vec::new();
    for gi in 0..g.p.groups {
        let group_at = |b: usize| b * image_len + gi * g.c_in_g * plane;
        let pointwise = nb == 1 && g.is_pointwise();
        let cols = im2col_matrix(g, (x, nb), gi, &mut cols_buf);
        // This group's output gradient, [c_out_g × nb·P]: the images' rows
        // side by side (one image's is a view of `gy`).
        let gout = if nb == 1 {
            MatRef::row_major(&gy[gi * c_out_g * pos..], pos)
        } else {
            gout.resize(c_out_g * columns, T::default());
            for (b, image) in gy.chunks(g.c_out * pos).enumerate() {
                let src = &image[gi * c_out_g * pos..(gi + 1) * c_out_g * pos];
                for (o, row) in src.chunks(pos).enumerate() {
                    gout[o * columns + b * pos..][..pos].copy_from_slice(row);
                }
            }
            MatRef::row_major(&gout[..], columns)
        };
        // ∂W of this group = G · colsᵀ, computed as (∂W)ᵀ = cols · Gᵀ where
        // cols is the larger operand (K ≥ c_out_g): then cols is the
        // product's A, read in place, and only G is transposed into panels
        // (as B, colsᵀ was: the whole im2col matrix through a transpose).
        let gw_group = &mut gw[gi * c_out_g * k..(gi + 1) * c_out_g * k];
        if k >= c_out_g {
            let mut t = strided::output::<T>(k * c_out_g);
            gemm(isa, k, c_out_g, columns, cols, gout.t(), &mut t, parallel);
            for (o, row) in gw_group.chunks_mut(k).enumerate() {
                for (kk, d) in row.iter_mut().enumerate() {
                    *d = t[kk * c_out_g + o];
                }
            }
            drop(host::store(t));
        } else {
            gemm(isa, c_out_g, k, columns, gout, cols.t(), gw_group, parallel);
        }
        // ∂cols = Wᵀ · G, folded back onto each image's channels.
        let Some(gx) = gx.as_deref_mut() else {
            continue;
        };
        let w_t = MatRef {
            data: w,
            offset: gi * c_out_g * k,
            row_stride: k,
            col_stride: 1,
        }
        .t();
        if pointwise {
            let gx_group = &mut gx[group_at(0)..group_at(0) + g.c_in_g * plane];
            gemm(isa, k, pos, c_out_g, w_t, gout, gx_group, parallel);
        } else {
            let gcols = gcols.get_or_insert_with(|| strided::output::<T>(k * columns));
            gemm(isa, k, columns, c_out_g, w_t, gout, gcols, parallel);
            for b in 0..nb {
                let gx_group = &mut gx[group_at(b)..group_at(b) + g.c_in_g * plane];
                col2im(g, &gcols[b * pos..], columns, gx_group);
            }
        }
    }
    for buf in [cols_buf, gcols].into_iter().flatten() {
        drop(host::store(buf));
    }
    gw
}

/// The adjoint of `im2col`: adds each entry of `cols` (`K × P`, rows `ld`
/// apart) to the input position (of `x`, one group's `c_in_g` planes)
/// that im2col copied it from. Padding taps have no input position and
/// are dropped.
fn col2im<T: Scalar + Element>(g: &Geometry, cols: &[T], ld: usize, x: &mut [T]) {
    let (sh, sw) = g.p.stride;
    let (pos, ow) = (g.positions(), g.ow);
    for c in 0..g.c_in_g {
        let plane = &mut x[c * g.h * g.w..(c + 1) * g.h * g.w];
        for ki in 0..g.kh {
            let (rlo, rhi, first_row) = g.inside_rows(ki);
            for kj in 0..g.kw {
                let row = &cols[((c * g.kh + ki) * g.kw + kj) * ld..][..pos];
                let (lo, hi, first) = g.inside_columns(kj);
                let inside = row[rlo * ow..rhi * ow].chunks_exact(ow.max(1));
                for (r, src) in inside.enumerate() {
                    let i = first_row + r * sh;
                    let dst = &mut plane[i * g.w..(i + 1) * g.w];
                    if sw == 1 {
                        // Adjacent taps: one pass the compiler vectorizes.
                        let dst = &mut dst[first..first + (hi - lo)];
                        for (d, &v) in dst.iter_mut().zip(&src[lo..hi]) {
                            *d = *d + v;
                        }
                        continue;
                    }
                    for (t, &v) in src[lo..hi].iter().enumerate() {
                        let d = &mut dst[first + t * sw];
                        *d = *d + v;
                    }
                }
            }
        }
    }
}
