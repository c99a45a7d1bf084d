//! Front end: `F.interpolate` over NCHW input, modes `nearest` and
//! `bilinear` (with `align_corners` false or true), to a size or by a
//! scale factor.
//!
//! A composite, separable by axis: each output column's (then row's)
//! source positions and weights follow from the sizes (and the scale
//! factor) alone, so they are computed on the host exactly as PyTorch's
//! CPU kernels compute them, in the same precision (`f32` for `f32`,
//! `f16` and `bf16`, `f64` for `f64`), and applied on the device with
//! `index_select` — nearest takes one source, bilinear
//! `x0·λ0 + x1·λ1` along the width and then the height, the order of
//! PyTorch's `h0λ·(w0λ·x00 + w1λ·x01) + h1λ·(…)`. The gradients are those
//! parts' (each output's gradient added back to its sources with their
//! weights), PyTorch's `upsample_*_backward`.

use oxmera_core::{DType, Error, Result, Shape};

use super::conv::need_float;
use crate::Tensor;

const NAME: &str = "interpolate";

/// How [`Tensor::interpolate`] fills the output, as `F.interpolate`'s
/// `mode` (and `align_corners`, which only the interpolating modes take).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterpolateMode {
    /// PyTorch's `'nearest'`: output `i` copies input
    /// `min(floor(i·scale), in − 1)` with `scale = in/out` (or
    /// `1/scale_factor`), computed in `f32` as PyTorch does.
    Nearest,
    /// `'bilinear'`: each output a weighted sum of the 2×2 inputs around
    /// its source point. With `align_corners` the corner pixels' centres
    /// line up (`src = i·(in − 1)/(out − 1)`); without, the corners of the
    /// pixels do (`src = (i + ½)·scale − ½`, clamped at 0).
    Bilinear {
        /// PyTorch's `align_corners`.
        align_corners: bool,
    },
}

/// One axis: for each output position, two sources and their weights
/// (nearest: the same source twice, weights 1 and 0 unused).
struct Axis {
    first: Vec<i64>,
    second: Vec<i64>,
    w0: Vec<f64>,
    w1: Vec<f64>,
}

/// The sources of `out` positions along an axis of `len` inputs; `scale`
/// is the caller's scale factor, if any. `wide` is the computing dtype
/// (`f32` or `f64`): positions and weights are rounded to it at each step,
/// as PyTorch's `opmath_t`.
fn axis(len: usize, out: usize, scale: Option<f64>, mode: InterpolateMode, wide: DType) -> Axis {
    let round = |v: f64| {
        if wide == DType::F32 {
            v as f32 as f64
        } else {
            v
        }
    };
    let mut a = Axis {
        first: Vec::with_capacity(out),
        second: Vec::with_capacity(out),
        w0: Vec::with_capacity(out),
        w1: Vec::with_capacity(out),
    };
    let last = len as i64 - 1;
    // PyTorch's compute_scales_value: 1/scale_factor when given (rounded
    // from f64), else in/out in the computing precision.
    let ratio = match scale {
        Some(s) if s > 0.0 => round(1.0 / s),
        _ => round(len as f64) / round(out as f64),
    };
    for i in 0..out {
        let (i0, i1, l0, l1) = match mode {
            InterpolateMode::Nearest => {
                // nearest_idx: the same size copies, twice the size halves,
                // else floorf(i·scale) in f32.
                let j = if out == len {
                    i as i64
                } else if out == 2 * len {
                    (i >> 1) as i64
                } else {
                    let scale = ratio as f32;
                    (((i as f32) * scale).floor() as i64).min(last)
                };
                (j, j, 1.0, 0.0)
            }
            InterpolateMode::Bilinear { align_corners } => {
                if out == len {
                    (i as i64, i as i64, 1.0, 0.0)
                } else {
                    let scale = if align_corners {
                        if out > 1 {
                            round(round(last as f64) / round((out - 1) as f64))
                        } else {
                            0.0
                        }
                    } else {
                        ratio
                    };
                    let src = if align_corners {
                        round(scale * round(i as f64))
                    } else {
                        let s = round(round(scale * round(i as f64 + 0.5)) - 0.5);
                        if s < 0.0 { 0.0 } else { s }
                    };
                    let i0 = (src.floor() as i64).min(last);
                    let l1 = round(src - i0 as f64).clamp(0.0, 1.0);
                    let i1 = i0 + i64::from(i0 < last);
                    (i0, i1, round(1.0 - l1), l1)
                }
            }
        };
        a.first.push(i0);
        a.second.push(i1);
        a.w0.push(l0);
        a.w1.push(l1);
    }
    a
}

impl Tensor {
    /// Resizes the last two dims of NCHW input to `size = (oh, ow)`, as
    /// `F.interpolate(x, size=(oh, ow), mode=…, align_corners=…)`.
    /// `Nearest` takes every dtype; `Bilinear` floats only, `f16` and
    /// `bf16` computed in `f32` and rounded once (PyTorch's opmath).
    ///
    /// Errors: [`Error::RankMismatch`] unless `self` is 4-D;
    /// [`Error::UnsupportedDType`] for bilinear on integers or bool;
    /// [`Error::InvalidArgument`] for a zero output size, an empty height
    /// or width, or empty channels in a non-empty batch (PyTorch's
    /// "non-empty 4D data tensor").
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{InterpolateMode, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0], [1, 1, 1, 2], Device::Reference)?;
    /// let near = x.interpolate((1, 4), InterpolateMode::Nearest)?;
    /// assert_eq!(near.to_vec::<f32>()?, [1.0, 1.0, 3.0, 3.0]);
    /// let lin = x.interpolate((1, 4), InterpolateMode::Bilinear { align_corners: false })?;
    /// assert_eq!(lin.to_vec::<f32>()?, [1.0, 1.5, 2.5, 3.0]);
    /// let corners = x.interpolate((1, 3), InterpolateMode::Bilinear { align_corners: true })?;
    /// assert_eq!(corners.to_vec::<f32>()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn interpolate(&self, size: (usize, usize), mode: InterpolateMode) -> Result<Tensor> {
        self.interpolate_with(size, None, mode)
    }

    /// Resizes by `scale = (sh, sw)`, as `F.interpolate(x,
    /// scale_factor=(sh, sw), mode=…)`: the output is
    /// `(floor(h·sh), floor(w·sw))`, and the scale factor itself sets the
    /// source positions (PyTorch's default `recompute_scale_factor=None`),
    /// except under `align_corners`, which uses the sizes. Each factor must
    /// be positive and finite ([`Error::InvalidArgument`]); otherwise as
    /// [`Tensor::interpolate`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{InterpolateMode, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [1, 1, 2, 2], Device::Reference)?;
    /// let y = x.interpolate_scale((1.5, 1.0), InterpolateMode::Nearest)?;
    /// assert_eq!(y.dims(), &[1, 1, 3, 2]);
    /// // Rows floor(i / 1.5): 0, 0, 1.
    /// assert_eq!(y.to_vec::<f32>()?, [1.0, 2.0, 1.0, 2.0, 3.0, 4.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn interpolate_scale(&self, scale: (f64, f64), mode: InterpolateMode) -> Result<Tensor> {
        for s in [scale.0, scale.1] {
            if !(s.is_finite() && s > 0.0) {
                return Err(Error::invalid(
                    NAME,
                    "scale_factor",
                    format!("each scale factor must be positive and finite, got {scale:?}"),
                ));
            }
        }
        if self.rank() != 4 {
            return Err(Error::RankMismatch {
                op: NAME,
                expected: 4,
                shape: self.shape().clone(),
            });
        }
        let d = self.dims();
        let out = |len: usize, s: f64| {
            let v = (len as f64 * s).floor();
            if v < usize::MAX as f64 {
                Ok(v as usize)
            } else {
                Err(Error::invalid(
                    NAME,
                    "scale_factor",
                    format!("{len} × {s} overflows a dim"),
                ))
            }
        };
        let size = (out(d[2], scale.0)?, out(d[3], scale.1)?);
        self.interpolate_with(size, Some(scale), mode)
    }

    fn interpolate_with(
        &self,
        (oh, ow): (usize, usize),
        scale: Option<(f64, f64)>,
        mode: InterpolateMode,
    ) -> Result<Tensor> {
        if self.rank() != 4 {
            return Err(Error::RankMismatch {
                op: NAME,
                expected: 4,
                shape: self.shape().clone(),
            });
        }
        let bilinear = matches!(mode, InterpolateMode::Bilinear { .. });
        if bilinear {
            need_float(NAME, self)?;
        }
        let &[n, c, h, w] = self.dims() else {
            unreachable!("rank checked above")
        };
        if h == 0 || w == 0 || oh == 0 || ow == 0 || (n > 0 && c == 0) {
            return Err(Error::invalid(
                NAME,
                "size",
                format!(
                    "input and output sizes must be greater than 0, got input {} and output ({oh}, {ow})",
                    self.shape()
                ),
            ));
        }
        let out_shape = Shape::from([n, c, oh, ow]);
        crate::tensor::probe_result(NAME, &out_shape, self.dtype(), self.device())?;
        crate::tensor::probe_result(NAME, &Shape::from([oh.max(ow)]), DType::F64, self.device())?;
        if n == 0 {
            return Tensor::zeros(out_shape, self.dtype(), self.device());
        }
        let wide = match self.dtype() {
            DType::F64 => DType::F64,
            _ if bilinear => DType::F32,
            d => d,
        };
        let cols = axis(w, ow, scale.map(|s| s.1), mode, wide);
        let rows = axis(h, oh, scale.map(|s| s.0), mode, wide);
        let x = self.to_dtype(wide)?;
        // Width first, then height: PyTorch's order of the weighted sums.
        let y = along(&x, 3, &cols, bilinear, wide)?;
        let y = along(&y, 2, &rows, bilinear, wide)?;
        y.to_dtype(self.dtype())
    }
}

/// Resamples `x` along `dim` with `a`'s sources (and weights, bilinear).
fn along(x: &Tensor, dim: isize, a: &Axis, bilinear: bool, wide: DType) -> Result<Tensor> {
    let out = a.first.len();
    let device = x.device();
    let first = Tensor::from_vec(a.first.clone(), [out], device)?;
    let x0 = x.index_select(dim, &first)?;
    if !bilinear {
        return Ok(x0);
    }
    let second = Tensor::from_vec(a.second.clone(), [out], device)?;
    let x1 = x.index_select(dim, &second)?;
    // The weights as a column [out, 1] for the height, a row [out] for the
    // width, broadcast over the rest.
    let shape: Vec<usize> = if dim == 2 { vec![out, 1] } else { vec![out] };
    let w0 = super::host_floats(a.w0.clone(), shape.clone(), wide, device)?;
    let w1 = super::host_floats(a.w1.clone(), shape, wide, device)?;
    x0.mul(&w0)?.add(&x1.mul(&w1)?)
}
