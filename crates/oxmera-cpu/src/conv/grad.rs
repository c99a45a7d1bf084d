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
//!   `∂x` is `∂cols`.
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

use super::{Geometry, im2col, images_per_product};
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
    let mut gx = strided::zeros::<T>(g.n * image_len);
    if gx.is_empty() {
        // No images, or images of no values (then K = 0 too).
        return (gx, strided::zeros::<T>(g.c_out * g.k()));
    }
    let nb = images_per_product(g);
    let out_len = g.c_out * g.positions();
    let batch = |(i, gx_batch): (usize, &mut [T]), parallel: bool| {
        let images = gx_batch.len() / image_len;
        let b0 = i * nb;
        let xs = &x[b0 * image_len..(b0 + images) * image_len];
        let gys = &gy[b0 * out_len..(b0 + images) * out_len];
        batch_grads(isa, g, (xs, images), w, gys, gx_batch, parallel)
    };
    let parts: Vec<Vec<T>> = if g.n > nb {
        threads::run(|| {
            gx.par_chunks_mut(nb * image_len)
                .enumerate()
                .map(|job| batch(job, false))
                .collect()
        })
    } else {
        vec![batch((0, &mut gx[..]), true)]
    };
    // ∂W: the batches' parts added in batch order.
    let mut parts = parts.into_iter();
    let mut gw = parts.next().expect("at least one batch");
    for part in parts {
        for (d, v) in gw.iter_mut().zip(part) {
            *d = *d + v;
        }
    }
    (gx, gw)
}

/// One batch of images side by side (`x`, their output gradient `gy`):
/// adds their `∂x` into `gx` and returns their part of `∂W`.
fn batch_grads<T: Scalar + Element>(
    isa: Isa,
    g: &Geometry,
    (x, nb): (&[T], usize),
    w: &[T],
    gy: &[T],
    gx: &mut [T],
    parallel: bool,
) -> Vec<T> {
    let (pos, k) = (g.positions(), g.k());
    let c_out_g = g.c_out / g.p.groups;
    let plane = g.h * g.w;
    let image_len = g.c_in * plane;
    let columns = nb * pos;
    let mut gw = vec![T::default(); g.c_out * k];
    let (mut cols, mut gcols, mut gout) = (Vec::new(), Vec::new(), Vec::new());
    for gi in 0..g.p.groups {
        let group_at = |b: usize| b * image_len + gi * g.c_in_g * plane;
        let pointwise = nb == 1 && g.is_pointwise();
        let cols: &[T] = if pointwise {
            &x[group_at(0)..group_at(0) + g.c_in_g * plane]
        } else {
            cols.resize(k * columns, T::default());
            for b in 0..nb {
                let input = &x[group_at(b)..group_at(b) + g.c_in_g * plane];
                im2col(g, input, &mut cols[b * pos..], columns);
            }
            &cols
        };
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
        // ∂W of this group = G · colsᵀ.
        let cols_t = MatRef::row_major(cols, columns).t();
        let gw_group = &mut gw[gi * c_out_g * k..(gi + 1) * c_out_g * k];
        gemm(isa, c_out_g, k, columns, gout, cols_t, gw_group, parallel);
        // ∂cols = Wᵀ · G, folded back onto each image's channels.
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
            gcols.resize(k * columns, T::default());
            gemm(isa, k, columns, c_out_g, w_t, gout, &mut gcols, parallel);
            for b in 0..nb {
                let gx_group = &mut gx[group_at(b)..group_at(b) + g.c_in_g * plane];
                col2im(g, &gcols[b * pos..], columns, gx_group);
            }
        }
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
                    for (t, &v) in src[lo..hi].iter().enumerate() {
                        let d = &mut dst[first + t * sw];
                        *d = *d + v;
                    }
                }
            }
        }
    }
}
