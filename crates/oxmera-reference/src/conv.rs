//! Convolution and pooling: naive nested loops over the output, straight
//! from the definitions, accumulating in `f64`.
//!
//! Inputs are NCHW, weights OIHW; everything is read into row-major
//! vectors first, so the loops index plain arrays. Padding is never
//! materialized: a tap whose input coordinate falls outside the input
//! reads the padding value instead (zero for convolution and average
//! pooling, -inf for max pooling).

use oxmera_core::Result;
use oxmera_tensor::{
    Conv2dParams, Pool2dParams, Storage, Tensor, window_input_index, window_output_size,
};

use crate::read;

/// Output extents along height and width (validated by the front end).
fn output_hw(
    h: usize,
    w: usize,
    kernel: (usize, usize),
    stride: (usize, usize),
    padding: (usize, usize),
    dilation: (usize, usize),
) -> (usize, usize) {
    let oh = window_output_size(h, kernel.0, stride.0, padding.0, dilation.0);
    let ow = window_output_size(w, kernel.1, stride.1, padding.1, dilation.1);
    (
        oh.expect("front end checked the window fits"),
        ow.expect("front end checked the window fits"),
    )
}

/// The input position `(i, j)` that output `(oi, oj)` of an `h × w`
/// input reads through kernel tap `(ki, kj)`, or `None` where the tap
/// falls in the padding.
fn tap(
    p: Conv2dParams,
    (h, w): (usize, usize),
    (oi, oj): (usize, usize),
    (ki, kj): (usize, usize),
) -> Option<(usize, usize)> {
    let i = window_input_index(oi, ki, p.stride.0, p.padding.0, p.dilation.0, h)?;
    let j = window_input_index(oj, kj, p.stride.1, p.padding.1, p.dilation.1, w)?;
    Some((i, j))
}

pub(crate) fn conv2d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    p: Conv2dParams,
) -> Result<Storage> {
    let (xd, wd) = (x.dims(), weight.dims());
    let (n, c_in, h, w) = (xd[0], xd[1], xd[2], xd[3]);
    let (c_out, c_in_g, kh, kw) = (wd[0], wd[1], wd[2], wd[3]);
    debug_assert_eq!(c_in_g * p.groups, c_in);
    let c_out_g = c_out / p.groups;
    let (oh, ow) = output_hw(h, w, (kh, kw), p.stride, p.padding, p.dilation);

    let xv = read::f64s(x)?;
    let wv = read::f64s(weight)?;
    let bv = match bias {
        Some(b) => read::f64s(b)?,
        None => vec![0.0; c_out],
    };
    let x_at = |b: usize, c: usize, i: usize, j: usize| xv[((b * c_in + c) * h + i) * w + j];
    let w_at = |o: usize, c: usize, i: usize, j: usize| wv[((o * c_in_g + c) * kh + i) * kw + j];

    let mut out = Vec::with_capacity(n * c_out * oh * ow);
    for b in 0..n {
        for (o, &bias_o) in bv.iter().enumerate() {
            // Output channel `o` belongs to group `g`, which sees only the
            // input channels `g * c_in_g .. (g + 1) * c_in_g`.
            let first_in = (o / c_out_g) * c_in_g;
            for oi in 0..oh {
                for oj in 0..ow {
                    let mut acc = bias_o;
                    for c in 0..c_in_g {
                        for ki in 0..kh {
                            for kj in 0..kw {
                                let Some((i, j)) = tap(p, (h, w), (oi, oj), (ki, kj)) else {
                                    continue;
                                };
                                acc += x_at(b, first_in + c, i, j) * w_at(o, c, ki, kj);
                            }
                        }
                    }
                    out.push(acc);
                }
            }
        }
    }
    Ok(read::store_f64(x.dtype(), out))
}

/// Visits every pooling window of NCHW `x` in output order and lets
/// `reduce` turn the window's values (padding included, as `pad_value`)
/// into one output element.
fn pool(
    x: &Tensor,
    p: Pool2dParams,
    pad_value: f64,
    reduce: impl Fn(&[f64]) -> f64,
) -> Result<Storage> {
    let d = x.dims();
    let (n, c, h, w) = (d[0], d[1], d[2], d[3]);
    let (oh, ow) = output_hw(h, w, p.kernel, p.stride, p.padding, (1, 1));
    let xv = read::f64s(x)?;
    let mut window = Vec::with_capacity(p.kernel.0 * p.kernel.1);
    let mut out = Vec::with_capacity(n * c * oh * ow);
    for plane in 0..n * c {
        let base = plane * h * w;
        for oi in 0..oh {
            for oj in 0..ow {
                window.clear();
                for ki in 0..p.kernel.0 {
                    for kj in 0..p.kernel.1 {
                        let i = window_input_index(oi, ki, p.stride.0, p.padding.0, 1, h);
                        let j = window_input_index(oj, kj, p.stride.1, p.padding.1, 1, w);
                        window.push(match (i, j) {
                            (Some(i), Some(j)) => xv[base + i * w + j],
                            _ => pad_value,
                        });
                    }
                }
                out.push(reduce(&window));
            }
        }
    }
    Ok(read::store_f64(x.dtype(), out))
}

pub(crate) fn max_pool2d(x: &Tensor, p: Pool2dParams) -> Result<Storage> {
    // A NaN anywhere in the window wins (f64::max would skip it).
    pool(x, p, f64::NEG_INFINITY, |win| {
        win.iter().fold(f64::NEG_INFINITY, |m, &v| {
            if m.is_nan() || v.is_nan() {
                f64::NAN
            } else {
                m.max(v)
            }
        })
    })
}

pub(crate) fn avg_pool2d(x: &Tensor, p: Pool2dParams) -> Result<Storage> {
    // Padded zeros count in the divisor: every window divides by kh * kw.
    pool(x, p, 0.0, |win| win.iter().sum::<f64>() / win.len() as f64)
}

/// The gradients of [`conv2d`] with respect to its input and weight, given
/// the gradient `grad` of its output: the forward loops run again, and
/// every product `x · w` that fed an output sends that output's gradient
/// back along both of its factors.
pub(crate) fn conv2d_backward(
    x: &Tensor,
    weight: &Tensor,
    grad: &Tensor,
    p: Conv2dParams,
) -> Result<(Storage, Storage)> {
    let (xd, wd) = (x.dims(), weight.dims());
    let (n, c_in, h, w) = (xd[0], xd[1], xd[2], xd[3]);
    let (c_out, c_in_g, kh, kw) = (wd[0], wd[1], wd[2], wd[3]);
    let c_out_g = c_out / p.groups;
    let (oh, ow) = output_hw(h, w, (kh, kw), p.stride, p.padding, p.dilation);

    let xv = read::f64s(x)?;
    let wv = read::f64s(weight)?;
    let gv = read::f64s(grad)?;
    let x_index = |b: usize, c: usize, i: usize, j: usize| ((b * c_in + c) * h + i) * w + j;
    let w_index = |o: usize, c: usize, i: usize, j: usize| ((o * c_in_g + c) * kh + i) * kw + j;
    let mut gx = vec![0.0; xv.len()];
    let mut gw = vec![0.0; wv.len()];
    for b in 0..n {
        for o in 0..c_out {
            let first_in = (o / c_out_g) * c_in_g;
            for oi in 0..oh {
                for oj in 0..ow {
                    let g = gv[((b * c_out + o) * oh + oi) * ow + oj];
                    for c in 0..c_in_g {
                        for ki in 0..kh {
                            for kj in 0..kw {
                                let Some((i, j)) = tap(p, (h, w), (oi, oj), (ki, kj)) else {
                                    continue;
                                };
                                let (xi, wi) =
                                    (x_index(b, first_in + c, i, j), w_index(o, c, ki, kj));
                                gx[xi] += g * wv[wi];
                                gw[wi] += g * xv[xi];
                            }
                        }
                    }
                }
            }
        }
    }
    Ok((
        read::store_f64(x.dtype(), gx),
        read::store_f64(weight.dtype(), gw),
    ))
}

/// Sends each pooling window's output gradient back to the input
/// positions `route` picks from the window: `route` gets the window's
/// values (padding as `pad_value`) and returns `(tap, share)` pairs, where
/// a tap indexes the window in row-major order.
fn pool_backward(
    x: &Tensor,
    grad: &Tensor,
    p: Pool2dParams,
    pad_value: f64,
    route: impl Fn(&[f64]) -> Vec<(usize, f64)>,
) -> Result<Storage> {
    let d = x.dims();
    let (n, c, h, w) = (d[0], d[1], d[2], d[3]);
    let (oh, ow) = output_hw(h, w, p.kernel, p.stride, p.padding, (1, 1));
    let xv = read::f64s(x)?;
    let gv = read::f64s(grad)?;
    let mut gx = vec![0.0; xv.len()];
    let mut window = Vec::with_capacity(p.kernel.0 * p.kernel.1);
    let mut places = Vec::with_capacity(p.kernel.0 * p.kernel.1);
    for plane in 0..n * c {
        let base = plane * h * w;
        for oi in 0..oh {
            for oj in 0..ow {
                window.clear();
                places.clear();
                for ki in 0..p.kernel.0 {
                    for kj in 0..p.kernel.1 {
                        let i = window_input_index(oi, ki, p.stride.0, p.padding.0, 1, h);
                        let j = window_input_index(oj, kj, p.stride.1, p.padding.1, 1, w);
                        let place = i.zip(j).map(|(i, j)| base + i * w + j);
                        window.push(place.map_or(pad_value, |at| xv[at]));
                        places.push(place);
                    }
                }
                let g = gv[(plane * oh + oi) * ow + oj];
                for (tap, share) in route(&window) {
                    // Gradient routed to padding has nowhere to go.
                    if let Some(at) = places[tap] {
                        gx[at] += g * share;
                    }
                }
            }
        }
    }
    Ok(read::store_f64(x.dtype(), gx))
}

/// The gradient of [`max_pool2d`]: each window's gradient goes to the
/// **first** tap (row-major) holding its maximum, as PyTorch does; a
/// window holding NaN routes it to the first NaN.
pub(crate) fn max_pool2d_backward(x: &Tensor, grad: &Tensor, p: Pool2dParams) -> Result<Storage> {
    pool_backward(x, grad, p, f64::NEG_INFINITY, |win| {
        let mut best = 0;
        for (k, &v) in win.iter().enumerate() {
            if win[best].is_nan() {
                break;
            }
            if v.is_nan() || v > win[best] {
                best = k;
            }
        }
        vec![(best, 1.0)]
    })
}

/// The gradient of [`avg_pool2d`]: each window spreads its gradient evenly
/// over its `kh * kw` taps (padding included in the divisor, as forward).
pub(crate) fn avg_pool2d_backward(x: &Tensor, grad: &Tensor, p: Pool2dParams) -> Result<Storage> {
    pool_backward(x, grad, p, 0.0, |win| {
        let share = 1.0 / win.len() as f64;
        (0..win.len()).map(|k| (k, share)).collect()
    })
}
