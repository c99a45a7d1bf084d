//! Front end: 2-D transposed convolution, as PyTorch's
//! `F.conv_transpose2d` — the adjoint of [`Tensor::conv2d`] with respect
//! to its input, and a composite over it:
//!
//! 1. zeros inserted between the input's pixels by the stride (a size-1
//!    dim after each spatial dim, padded by `stride − 1` and merged);
//! 2. padded by `dilation·(k − 1) − padding` on each side, plus
//!    `output_padding` at the end (cropped where that is negative);
//! 3. `conv2d` at stride 1 with the same dilation and groups and the
//!    weight flipped in both spatial dims with its in/out channels swapped
//!    per group (`[c_in, c_out/g, kh, kw]` → `[c_out, c_in/g, kh, kw]`).
//!
//! Every backend runs it with its `pad` and `conv2d` kernels; the
//! gradients are `conv2d_backward`'s through those views. The zeros cost
//! work a native kernel would skip (about `stride²` times the taps).

use oxmera_core::{Error, Result, Shape};

use super::conv::{need_float, need_rank, positive_pair, same_device_and_dtype};
use crate::{Conv2dParams, Tensor};

const NAME: &str = "conv_transpose2d";

/// Geometry of a 2-D transposed convolution, as `F.conv_transpose2d`'s
/// arguments, each `(height, width)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConvTranspose2dParams {
    /// The stride of the convolution this one transposes.
    pub stride: (usize, usize),
    /// The padding of the convolution this one transposes: removed from
    /// each side of the output.
    pub padding: (usize, usize),
    /// Extra rows and columns at the end of the output, to pick one of the
    /// input sizes a strided convolution maps to the same output size;
    /// each less than the stride or the dilation.
    pub output_padding: (usize, usize),
    /// Spacing between kernel taps.
    pub dilation: (usize, usize),
    /// Number of channel groups.
    pub groups: usize,
}

impl Default for ConvTranspose2dParams {
    /// PyTorch's defaults: stride 1, no padding or output padding,
    /// dilation 1, one group.
    fn default() -> Self {
        ConvTranspose2dParams {
            stride: (1, 1),
            padding: (0, 0),
            output_padding: (0, 0),
            dilation: (1, 1),
            groups: 1,
        }
    }
}

/// The output extent along one axis, or `None` when it is below 1.
fn extent(input: usize, k: usize, s: usize, p: usize, op: usize, d: usize) -> Option<usize> {
    let full = (input as u128 - 1) * s as u128 + (d as u128) * (k as u128 - 1) + op as u128 + 1;
    let out = full.checked_sub(2 * p as u128)?;
    (out >= 1 && out <= usize::MAX as u128).then_some(out as usize)
}

impl Tensor {
    /// 2-D transposed convolution, as `F.conv_transpose2d(x, weight, bias,
    /// stride, padding, output_padding, groups, dilation)`: `self` is
    /// `[n, c_in, h, w]` (or unbatched `[c_in, h, w]`), `weight` is
    /// `[c_in, c_out / groups, kh, kw]`, `bias` (optional) `[c_out]`. The
    /// output is `[n, c_out, h_out, w_out]` with
    /// `h_out = (h − 1)·stride − 2·padding + dilation·(kh − 1) +
    /// output_padding + 1` (likewise for width), and
    ///
    /// `out[b][o][i·s + p·d − pad][j·s + q·d − pad] += x[b][c][i][j] · weight[c][o − g·cog][p][q]`
    ///
    /// over the input channels `c` of group `g` (`cog = c_out / groups`),
    /// plus `bias[o]`: each input pixel spreads the kernel over the output.
    /// It is the gradient of [`Tensor::conv2d`] with respect to its input.
    /// Float dtypes only; every operand shares one dtype and device.
    ///
    /// Errors, named `conv_transpose2d`: [`Error::RankMismatch`] (input 3-D
    /// or 4-D, weight 4-D, bias 1-D); [`Error::InvalidArgument`] for a zero
    /// stride, dilation, group count or kernel extent, groups that do not
    /// divide the input channels, an `output_padding` not below the stride
    /// or the dilation, an empty height or width, or an output extent below
    /// 1; [`Error::ChannelMismatch`] when `c_in` is not `weight.dims[0]`;
    /// [`Error::ShapeMismatch`] for a bias that is not `[c_out]`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{ConvTranspose2dParams, Tensor};
    /// // Each pixel spreads a 2x2 kernel of ones over its own 2x2 block.
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [1, 1, 2, 2], Device::Reference)?;
    /// let w = Tensor::from_vec(vec![1.0f32; 4], [1, 1, 2, 2], Device::Reference)?;
    /// let p = ConvTranspose2dParams { stride: (2, 2), ..Default::default() };
    /// let y = x.conv_transpose2d(&w, None, p)?;
    /// assert_eq!(y.dims(), &[1, 1, 4, 4]);
    /// assert_eq!(y.to_vec::<f32>()?[..8], [1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn conv_transpose2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: ConvTranspose2dParams,
    ) -> Result<Tensor> {
        need_float(NAME, self)?;
        same_device_and_dtype(NAME, self, weight)?;
        if let Some(b) = bias {
            same_device_and_dtype(NAME, self, b)?;
        }
        let unbatched = self.rank() == 3;
        if !unbatched {
            need_rank(NAME, self, 4)?;
        }
        need_rank(NAME, weight, 4)?;
        if let Some(b) = bias {
            need_rank(NAME, b, 1)?;
        }
        let x = if unbatched {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        let ConvTranspose2dParams {
            stride: s,
            padding: p,
            output_padding: op,
            dilation: d,
            groups,
        } = params;
        positive_pair(NAME, "stride", s)?;
        positive_pair(NAME, "dilation", d)?;
        let &[n, c_in, h, w] = x.dims() else {
            unreachable!("rank checked above")
        };
        let &[w_in, c_out_g, kh, kw] = weight.dims() else {
            unreachable!("rank checked above")
        };
        positive_pair(NAME, "kernel size", (kh, kw))?;
        if groups == 0 || c_in % groups != 0 {
            return Err(Error::invalid(
                NAME,
                "groups",
                format!("{c_in} input channels must be divisible by groups {groups}"),
            ));
        }
        if w_in != c_in {
            return Err(Error::ChannelMismatch {
                op: NAME,
                input: self.shape().clone(),
                weight: weight.shape().clone(),
                groups,
                channels: c_in,
                expected: w_in,
            });
        }
        let c_out = c_out_g * groups;
        if let Some(b) = bias {
            if b.dims() != [c_out] {
                return Err(Error::ShapeMismatch {
                    op: NAME,
                    lhs: b.shape().clone(),
                    rhs: Shape::from([c_out]),
                });
            }
        }
        if op.0 >= s.0.max(d.0) || op.1 >= s.1.max(d.1) {
            return Err(Error::invalid(
                NAME,
                "output_padding",
                format!(
                    "output padding {op:?} must be smaller than either the stride {s:?} or the dilation {d:?} on each axis"
                ),
            ));
        }
        if h == 0 || w == 0 {
            return Err(Error::invalid(
                NAME,
                "input",
                format!(
                    "expected a non-empty height and width, got shape {}",
                    self.shape()
                ),
            ));
        }
        let (Some(oh), Some(ow)) = (
            extent(h, kh, s.0, p.0, op.0, d.0),
            extent(w, kw, s.1, p.1, op.1, d.1),
        ) else {
            return Err(Error::invalid(
                NAME,
                "padding",
                format!(
                    "the output of input {} with kernel ({kh}, {kw}) and padding {p:?} is empty",
                    self.shape()
                ),
            ));
        };
        let out = Shape::from([n, c_out, oh, ow]);
        crate::tensor::probe_result(NAME, &out, self.dtype(), self.device())?;
        // A single row or column has no gaps to fill: its stride is moot.
        let s = (if h == 1 { 1 } else { s.0 }, if w == 1 { 1 } else { s.1 });
        // The zero-inserted, padded input, probed before it is built.
        let up = |len: usize, s: usize, k: usize, d: usize| {
            let v = (len as u128 - 1) * s as u128 + 1 + 2 * d as u128 * (k as u128 - 1);
            usize::try_from(v).map_err(|_| {
                Error::invalid(NAME, "stride", "the zero-inserted input overflows a dim")
            })
        };
        let staged = Shape::from([n, c_in, up(h, s.0, kh, d.0)?, up(w, s.1, kw, d.1)?]);
        crate::tensor::probe_result(NAME, &staged, self.dtype(), self.device())?;

        // 1. Zeros between the pixels: [n, c, h, 1, w, 1] padded to
        //    [n, c, h, s, w, s], merged, and the trailing s - 1 dropped.
        let spread = x
            .reshape([n, c_in, h, 1, w, 1])?
            .pad(
                &[(0, 0), (0, 0), (0, 0), (0, s.0 - 1), (0, 0), (0, s.1 - 1)],
                0.0,
            )?
            .reshape([n, c_in, h * s.0, w * s.1])?
            .narrow(2, 0, (h - 1) * s.0 + 1)?
            .narrow(3, 0, (w - 1) * s.1 + 1)?;
        // 2. The border: d·(k − 1) − padding on each side, output_padding
        //    more at the end; a negative amount crops.
        let border = |k: usize, d: usize, p: usize| d as i128 * (k as i128 - 1) - p as i128;
        let framed = frame(
            &spread,
            2,
            border(kh, d.0, p.0),
            border(kh, d.0, p.0) + op.0 as i128,
        )?;
        let framed = frame(
            &framed,
            3,
            border(kw, d.1, p.1),
            border(kw, d.1, p.1) + op.1 as i128,
        )?;
        // 3. The weight per group with in/out swapped, flipped in space.
        let c_in_g = c_in / groups;
        let flipped = weight
            .reshape([groups, c_in_g, c_out_g, kh, kw])?
            .transpose(1, 2)?
            .reshape([c_out, c_in_g, kh, kw])?
            .flip(&[2, 3])?;
        let y = framed.conv2d(
            &flipped,
            bias,
            Conv2dParams {
                stride: (1, 1),
                padding: (0, 0),
                dilation: d,
                groups,
            },
        )?;
        if unbatched { y.squeeze(0) } else { Ok(y) }
    }
}

/// `x` with `before` and `after` elements added along `dim` (zeros), or
/// removed where negative.
fn frame(x: &Tensor, dim: usize, before: i128, after: i128) -> Result<Tensor> {
    let len = x.dims()[dim] as i128;
    let start = (-before).max(0);
    let end = len - (-after).max(0);
    let x = x.narrow(dim as isize, start as usize, (end - start).max(0) as usize)?;
    let mut pads = vec![(0, 0); x.rank()];
    pads[dim] = (before.max(0) as usize, after.max(0) as usize);
    if pads[dim] == (0, 0) {
        Ok(x)
    } else {
        x.pad(&pads, 0.0)
    }
}
