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
//! Images run one after another, each product threaded by the GEMM, so
//! the sum over images has one fixed order whatever the thread count.

use half::{bf16, f16};
use oxmera_core::{DType, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{Backend, Conv2dParams, Element, Storage, Tensor};

use super::{Geometry, im2col};
use crate::gemm::{MatRef, Scalar, gemm};
use crate::host::Computed;
use crate::{Isa, host, isa, strided};

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
    let (pos, k) = (g.positions(), g.k());
    let c_out_g = g.c_out / g.p.groups;
    let plane = g.h * g.w;
    let mut gx = strided::zeros::<T>(g.n * g.c_in * plane);
    let mut gw = strided::zeros::<T>(g.c_out * k);
    let (mut cols, mut gcols) = (Vec::new(), Vec::new());
    let mut part = vec![T::default(); c_out_g * k];
    for b in 0..g.n {
        for gi in 0..g.p.groups {
            let at = (b * g.c_in + gi * g.c_in_g) * plane;
            let input = &x[at..at + g.c_in_g * plane];
            let gout = MatRef::row_major(&gy[(b * g.c_out + gi * c_out_g) * pos..], pos);
            let cols: &[T] = if g.is_pointwise() {
                input
            } else {
                cols.resize(k * pos, T::default());
                im2col(g, input, &mut cols);
                &cols
            };
            // ∂W of this group += G · colsᵀ.
            let cols_t = MatRef::row_major(cols, pos).t();
            gemm(isa, c_out_g, k, pos, gout, cols_t, &mut part, true);
            let gw_group = &mut gw[gi * c_out_g * k..(gi + 1) * c_out_g * k];
            for (d, &v) in gw_group.iter_mut().zip(&part) {
                *d = *d + v;
            }
            // ∂cols = Wᵀ · G, folded back onto this group's channels.
            let w_t = MatRef {
                data: w,
                offset: gi * c_out_g * k,
                row_stride: k,
                col_stride: 1,
            }
            .t();
            let gx_group = &mut gx[at..at + g.c_in_g * plane];
            if g.is_pointwise() {
                gemm(isa, k, pos, c_out_g, w_t, gout, gx_group, true);
            } else {
                gcols.resize(k * pos, T::default());
                gemm(isa, k, pos, c_out_g, w_t, gout, &mut gcols, true);
                col2im(g, &gcols, gx_group);
            }
        }
    }
    (gx, gw)
}

/// The adjoint of `im2col`: adds each entry of `cols` (`K × P`) to the
/// input position (of `x`, one group's `c_in_g` planes) that im2col
/// copied it from. Padding taps have no input position and are dropped.
fn col2im<T: Scalar + Element>(g: &Geometry, cols: &[T], x: &mut [T]) {
    let pos = g.positions();
    let sw = g.p.stride.1;
    for c in 0..g.c_in_g {
        let plane = &mut x[c * g.h * g.w..(c + 1) * g.h * g.w];
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let row = &cols[((c * g.kh + ki) * g.kw + kj) * pos..][..pos];
                let (lo, hi, first) = g.inside_columns(kj);
                for oi in 0..g.oh {
                    let Some(i) = g.input_row(oi, ki) else {
                        continue;
                    };
                    let dst = &mut plane[i * g.w..(i + 1) * g.w];
                    let src = &row[oi * g.ow + lo..oi * g.ow + hi];
                    for (t, &v) in src.iter().enumerate() {
                        let d = &mut dst[first + t * sw];
                        *d = *d + v;
                    }
                }
            }
        }
    }
}
