//! Front end: 2-D convolution and pooling over NCHW tensors.
//!
//! The checks here make the backend's loops safe to write naively: ranks
//! are 4, channel counts agree with the groups, and at least one window
//! fits along each spatial axis (so the output extents from
//! [`window_output_size`] exist). Each op reaches its backend method
//! through one private chokepoint (`conv2d_op`, `max_pool2d_op`,
//! `avg_pool2d_op`), where autograd will record it.
//!
//! Only float dtypes are accepted; there is no ceil mode (output extents
//! round down, as PyTorch's default) and no 3-D (unbatched) input.

use oxmera_core::{Error, Result, Shape};

use crate::{Conv2dParams, Pool2dParams, Tensor, window_output_size};

impl Pool2dParams {
    /// A `kernel`-sized window stepping by its own size, with no padding:
    /// PyTorch's defaults. Set `stride` and `padding` on the result to
    /// change them.
    pub fn new(kernel: (usize, usize)) -> Self {
        Pool2dParams {
            kernel,
            stride: kernel,
            padding: (0, 0),
        }
    }
}

pub(super) fn need_float(op: &'static str, x: &Tensor) -> Result<()> {
    if x.dtype().is_float() {
        Ok(())
    } else {
        Err(Error::UnsupportedDType {
            op,
            dtype: x.dtype(),
            hint: "cast to a float dtype first",
        })
    }
}

pub(super) fn need_rank(op: &'static str, x: &Tensor, rank: usize) -> Result<()> {
    if x.rank() == rank {
        Ok(())
    } else {
        Err(Error::RankMismatch {
            op,
            expected: rank,
            shape: x.shape().clone(),
        })
    }
}

/// `b` must share `x`'s device and dtype.
pub(super) fn same_device_and_dtype(op: &'static str, x: &Tensor, b: &Tensor) -> Result<()> {
    if x.device() != b.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: x.device(),
            rhs: b.device(),
        });
    }
    if x.dtype() != b.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            lhs: x.dtype(),
            rhs: b.dtype(),
        });
    }
    Ok(())
}

/// A `(height, width)` pair of counts that must each be at least 1.
pub(super) fn positive_pair(
    op: &'static str,
    name: &'static str,
    pair: (usize, usize),
) -> Result<()> {
    if pair.0 == 0 || pair.1 == 0 {
        Err(Error::invalid(
            op,
            name,
            format!("both entries must be at least 1, got {pair:?}"),
        ))
    } else {
        Ok(())
    }
}

/// The output extent along one axis, or [`Error::WindowTooLarge`].
pub(super) fn output_extent(
    op: &'static str,
    axis: &'static str,
    input: usize,
    kernel: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
) -> Result<usize> {
    window_output_size(input, kernel, stride, padding, dilation).ok_or(Error::WindowTooLarge {
        op,
        axis,
        input,
        padding,
        window: dilation * (kernel.saturating_sub(1)) + 1,
    })
}

impl Tensor {
    /// 2-D cross-correlation (what deep learning calls convolution):
    /// `self` is `[n, c_in, h, w]`, `weight` is `[c_out, c_in / groups,
    /// kh, kw]`, `bias` (optional) is `[c_out]`. The output is
    /// `[n, c_out, h_out, w_out]` with
    /// `h_out = (h + 2·pad_h − dil_h·(kh − 1) − 1) / stride_h + 1`
    /// (rounded down; likewise for width), and
    ///
    /// `out[b][o][i][j] = bias[o] + Σ_{c,p,q} x[b][g·cg + c][i·s_h + p·d_h − pad_h][j·s_w + q·d_w − pad_w] · weight[o][c][p][q]`
    ///
    /// where `g = o / (c_out / groups)`, `cg = c_in / groups`, and taps that
    /// land in the padding read zero. Float dtypes only; every operand
    /// shares one dtype and device.
    ///
    /// Errors: [`Error::RankMismatch`] unless input and weight are 4-D and
    /// bias 1-D; [`Error::InvalidArgument`] for a zero stride, dilation,
    /// group count or kernel extent, or groups that do not divide both
    /// channel counts; [`Error::ChannelMismatch`] when `c_in` is not
    /// `weight.dims[1] * groups`; [`Error::ShapeMismatch`] for a bias that
    /// is not `[c_out]`; [`Error::WindowTooLarge`] when the dilated kernel
    /// exceeds the padded input.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::{Conv2dParams, Tensor};
    /// use oxmera_core::Device;
    /// // A 2x2 box filter over a 3x3 image sums each 2x2 block.
    /// let x = Tensor::from_vec((1..=9).map(|v| v as f32).collect(), [1, 1, 3, 3], Device::Reference)?;
    /// let w = Tensor::from_vec(vec![1.0f32; 4], [1, 1, 2, 2], Device::Reference)?;
    /// let y = x.conv2d(&w, None, Conv2dParams::default())?;
    /// assert_eq!(y.dims(), &[1, 1, 2, 2]);
    /// assert_eq!(y.to_vec::<f32>()?, vec![12.0, 16.0, 24.0, 28.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn conv2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: Conv2dParams,
    ) -> Result<Tensor> {
        let op = "conv2d";
        need_float(op, self)?;
        same_device_and_dtype(op, self, weight)?;
        if let Some(b) = bias {
            same_device_and_dtype(op, self, b)?;
        }
        need_rank(op, self, 4)?;
        need_rank(op, weight, 4)?;
        if let Some(b) = bias {
            need_rank(op, b, 1)?;
        }
        positive_pair(op, "stride", params.stride)?;
        positive_pair(op, "dilation", params.dilation)?;
        let (xd, wd) = (self.dims(), weight.dims());
        let (n, c_in, h, w) = (xd[0], xd[1], xd[2], xd[3]);
        let (c_out, c_in_g, kh, kw) = (wd[0], wd[1], wd[2], wd[3]);
        positive_pair(op, "kernel size", (kh, kw))?;
        let groups = params.groups;
        if groups == 0 || c_in % groups != 0 || c_out % groups != 0 {
            return Err(Error::invalid(
                op,
                "groups",
                format!(
                    "{c_in} input and {c_out} output channels must both be divisible by groups {groups}"
                ),
            ));
        }
        if c_in_g * groups != c_in {
            return Err(Error::ChannelMismatch {
                op,
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
                    op,
                    lhs: b.shape().clone(),
                    rhs: Shape::from([c_out]),
                });
            }
        }
        let (s, p, d) = (params.stride, params.padding, params.dilation);
        let oh = output_extent(op, "height", h, kh, s.0, p.0, d.0)?;
        let ow = output_extent(op, "width", w, kw, s.1, p.1, d.1)?;
        // A padding of 2^32 makes an output no tensor may have.
        let out = Shape::from([n, c_out, oh, ow]);
        crate::tensor::probe_result(op, &out, self.dtype(), self.device())?;
        conv2d_op(self, weight, bias, params, out)
    }

    /// Max pooling over the last two dims of NCHW input: each output
    /// element is the largest value in its `kernel` window. The padding
    /// is -inf, so it never wins over a real value; **a NaN in a window
    /// makes that output NaN** (as PyTorch's `max_pool2d`; NumPy-style
    /// `fmax` would skip it).
    ///
    /// Requires `padding <= kernel / 2` on each axis (as PyTorch does), so
    /// every window holds at least one real element. Float dtypes only;
    /// rank 4. Errors are typed as for [`Tensor::conv2d`], plus
    /// [`Error::InvalidArgument`] for a zero kernel or stride or a padding
    /// over half the kernel.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::{Pool2dParams, Tensor};
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 2.0, 0.0, 3.0, 4.0, 8.0, 7.0, 6.0, 9.0, 1.0, 1.0, 0.0, 2.0, 3.0, 4.0], [1, 1, 4, 4], Device::Reference)?;
    /// let y = x.max_pool2d(Pool2dParams::new((2, 2)))?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![5.0, 8.0, 9.0, 4.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn max_pool2d(&self, params: Pool2dParams) -> Result<Tensor> {
        let out_shape = self.pool_shape("max_pool2d", params)?;
        max_pool2d_op(self, params, out_shape)
    }

    /// Average pooling over the last two dims of NCHW input: each output
    /// element is the mean of its `kernel` window, **padded zeros
    /// included in the divisor** — every window divides by `kh * kw`, as
    /// PyTorch's default `count_include_pad=True`. Same arguments and
    /// errors as [`Tensor::max_pool2d`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::{Pool2dParams, Tensor};
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![4.0f32, 8.0], [1, 1, 1, 2], Device::Reference)?;
    /// let y = x.avg_pool2d(Pool2dParams { kernel: (1, 2), stride: (1, 1), padding: (0, 1) })?;
    /// // Windows [0, 4], [4, 8], [8, 0]: each divided by 2.
    /// assert_eq!(y.to_vec::<f32>()?, vec![2.0, 6.0, 4.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn avg_pool2d(&self, params: Pool2dParams) -> Result<Tensor> {
        let out_shape = self.pool_shape("avg_pool2d", params)?;
        avg_pool2d_op(self, params, out_shape)
    }

    /// Validates a pooling call and returns its output shape.
    fn pool_shape(&self, op: &'static str, params: Pool2dParams) -> Result<Shape> {
        need_float(op, self)?;
        need_rank(op, self, 4)?;
        positive_pair(op, "kernel size", params.kernel)?;
        positive_pair(op, "stride", params.stride)?;
        let (k, s, p) = (params.kernel, params.stride, params.padding);
        if p.0 > k.0 / 2 || p.1 > k.1 / 2 {
            return Err(Error::invalid(
                op,
                "padding",
                format!("padding {p:?} must be at most half the kernel {k:?} on each axis"),
            ));
        }
        let d = self.dims();
        let oh = output_extent(op, "height", d[2], k.0, s.0, p.0, 1)?;
        let ow = output_extent(op, "width", d[3], k.1, s.1, p.1, 1)?;
        let out = Shape::from([d[0], d[1], oh, ow]);
        crate::tensor::probe_result(op, &out, self.dtype(), self.device())?;
        Ok(out)
    }
}

// The chokepoints: one per backend method.

fn conv2d_op(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    params: Conv2dParams,
    out_shape: Shape,
) -> Result<Tensor> {
    let storage = x.backend()?.conv2d(x, weight, bias, params)?;
    let out = Tensor::from_storage(storage, out_shape);
    Ok(crate::autograd::rules::conv2d(x, weight, bias, params, out))
}

fn max_pool2d_op(x: &Tensor, params: Pool2dParams, out_shape: Shape) -> Result<Tensor> {
    let storage = x.backend()?.max_pool2d(x, params)?;
    let out = Tensor::from_storage(storage, out_shape);
    Ok(crate::autograd::rules::pool2d(x, params, true, out))
}

fn avg_pool2d_op(x: &Tensor, params: Pool2dParams, out_shape: Shape) -> Result<Tensor> {
    let storage = x.backend()?.avg_pool2d(x, params)?;
    let out = Tensor::from_storage(storage, out_shape);
    Ok(crate::autograd::rules::pool2d(x, params, false, out))
}
