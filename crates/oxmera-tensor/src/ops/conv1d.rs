//! Front end: 1-D convolution, as PyTorch's `F.conv1d`, a composite over
//! [`Tensor::conv2d`] with a unit height: `[n, c, l]` is viewed as
//! `[n, c, 1, l]` and the weight `[o, c/g, k]` as `[o, c/g, 1, k]`, so the
//! window moves only along the length. Every backend runs it with the
//! `conv2d` kernel it has, and the gradients are `conv2d_backward`'s.
//!
//! The checks are made here, under the name `conv1d` and with the 1-D
//! shapes, so an error names what the caller passed.

use oxmera_core::{Error, Result, Shape};

use super::conv::{need_float, need_rank, output_extent, positive_pair, same_device_and_dtype};
use crate::{Conv2dParams, Tensor};

const NAME: &str = "conv1d";

/// Geometry of a 1-D convolution over `[n, c, l]` input and `[o, c/g, k]`
/// weight, as `F.conv1d`'s arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Conv1dParams {
    /// Step between windows.
    pub stride: usize,
    /// Zeros added on each side.
    pub padding: usize,
    /// Spacing between kernel taps.
    pub dilation: usize,
    /// Number of channel groups.
    pub groups: usize,
}

impl Default for Conv1dParams {
    /// PyTorch's defaults: stride 1, no padding, dilation 1, one group.
    fn default() -> Self {
        Conv1dParams {
            stride: 1,
            padding: 0,
            dilation: 1,
            groups: 1,
        }
    }
}

impl Conv1dParams {
    /// The same geometry for `conv2d` over a unit height.
    fn as_2d(self) -> Conv2dParams {
        Conv2dParams {
            stride: (1, self.stride),
            padding: (0, self.padding),
            dilation: (1, self.dilation),
            groups: self.groups,
        }
    }
}

impl Tensor {
    /// 1-D cross-correlation, as `F.conv1d(x, weight, bias, stride,
    /// padding, dilation, groups)`: `self` is `[n, c_in, l]` (or unbatched
    /// `[c_in, l]`, as PyTorch allows), `weight` is `[c_out, c_in / groups,
    /// k]`, `bias` (optional) `[c_out]`. The output is `[n, c_out, l_out]`
    /// (`[c_out, l_out]` unbatched) with `l_out = (l + 2·padding −
    /// dilation·(k − 1) − 1) / stride + 1`, rounded down, and
    ///
    /// `out[b][o][i] = bias[o] + Σ_{c,p} x[b][g·cg + c][i·stride + p·dilation − padding] · weight[o][c][p]`
    ///
    /// with `g = o / (c_out / groups)`, `cg = c_in / groups` and zeros in
    /// the padding. Float dtypes only; every operand shares one dtype and
    /// device. Errors are [`Tensor::conv2d`]'s, named `conv1d`:
    /// [`Error::RankMismatch`] (input 2-D or 3-D, weight 3-D, bias 1-D),
    /// [`Error::InvalidArgument`] (a zero stride, dilation, group count or
    /// kernel length; groups that do not divide both channel counts),
    /// [`Error::ChannelMismatch`], [`Error::ShapeMismatch`] (bias),
    /// [`Error::WindowTooLarge`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{Conv1dParams, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [1, 1, 4], Device::Reference)?;
    /// let w = Tensor::from_vec(vec![1.0f32, -1.0], [1, 1, 2], Device::Reference)?;
    /// let y = x.conv1d(&w, None, Conv1dParams::default())?;
    /// assert_eq!(y.dims(), &[1, 1, 3]);
    /// assert_eq!(y.to_vec::<f32>()?, [-1.0, -1.0, -1.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn conv1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: Conv1dParams,
    ) -> Result<Tensor> {
        need_float(NAME, self)?;
        same_device_and_dtype(NAME, self, weight)?;
        if let Some(b) = bias {
            same_device_and_dtype(NAME, self, b)?;
        }
        let unbatched = self.rank() == 2;
        if !unbatched {
            need_rank(NAME, self, 3)?;
        }
        need_rank(NAME, weight, 3)?;
        if let Some(b) = bias {
            need_rank(NAME, b, 1)?;
        }
        let x = if unbatched {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        positive_pair(NAME, "stride", (params.stride, 1))?;
        positive_pair(NAME, "dilation", (params.dilation, 1))?;
        let (xd, wd) = (x.dims(), weight.dims());
        let (c_in, l) = (xd[1], xd[2]);
        let (c_out, c_in_g, k) = (wd[0], wd[1], wd[2]);
        positive_pair(NAME, "kernel size", (k, 1))?;
        let groups = params.groups;
        if groups == 0 || c_in % groups != 0 || c_out % groups != 0 {
            return Err(Error::invalid(
                NAME,
                "groups",
                format!(
                    "{c_in} input and {c_out} output channels must both be divisible by groups {groups}"
                ),
            ));
        }
        if c_in_g * groups != c_in {
            return Err(Error::ChannelMismatch {
                op: NAME,
                input: self.shape().clone(),
                weight: weight.shape().clone(),
                groups,
                channels: c_in,
                expected: c_in_g * groups,
            });
        }
        if let Some(b) = bias {
            if b.dims() != [c_out] {
                return Err(Error::ShapeMismatch {
                    op: NAME,
                    lhs: b.shape().clone(),
                    rhs: Shape::from([c_out]),
                });
            }
        }
        output_extent(
            NAME,
            "length",
            l,
            k,
            params.stride,
            params.padding,
            params.dilation,
        )?;
        let w2 = weight.unsqueeze(2)?;
        let y = x
            .unsqueeze(2)?
            .conv2d(&w2, bias, params.as_2d())?
            .squeeze(2)?;
        if unbatched { y.squeeze(0) } else { Ok(y) }
    }
}
