//! Convolution and pooling layers over NCHW input.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::{Conv2dParams, Generator, Pool2dParams, Tensor};

use crate::init::{self, FanMode, Nonlinearity};
use crate::linear::inverse_sqrt;
use crate::{Module, Param, join_name};

/// 2-D convolution (cross-correlation) with weight
/// `[c_out, c_in / groups, kh, kw]` and a bias `[c_out]`, over input
/// `[n, c_in, h, w]`; see [`Tensor::conv2d`] for the output extents.
///
/// Built with [`Conv2d::new`] (stride 1, no padding, dilation 1, one
/// group, a bias), then adjusted by builder methods. Initialized as
/// PyTorch's `nn.Conv2d`: weight and bias from `U(-1/√fan_in, 1/√fan_in)`
/// with `fan_in = c_in / groups · kh · kw`.
///
/// Builders are for construction, before training:
/// - [`Conv2d::stride`], [`Conv2d::padding`], [`Conv2d::dilation`] take
///   any values; a zero stride or dilation is reported by
///   [`Module::forward`] as the [`Error::InvalidArgument`] of
///   `conv2d`, and [`Conv2d::check`] reports it up front;
/// - [`Conv2d::groups`] checks that the count divides both channel counts
///   and rescales the drawn values to the smaller fan (so the layer is
///   distributed exactly as one built with those groups);
/// - [`Conv2d::bias`] removes the bias or restores the drawn one.
///
/// Weight then bias are always drawn in [`Conv2d::new`], so the caller's
/// generator advances by the same amount whatever the builders do.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Conv2d, Module};
/// use oxmera_tensor::{Generator, Tensor};
/// let conv = Conv2d::new(3, 8, (3, 3), &mut Generator::new(1), DType::F32, Device::Reference)?
///     .padding((1, 1))
///     .stride((2, 2));
/// let x = Tensor::zeros([2, 3, 8, 8], DType::F32, Device::Reference)?;
/// assert_eq!(conv.forward(&x)?.dims(), &[2, 8, 4, 4]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Conv2d {
    weight: Param,
    bias: Option<Param>,
    /// The bias values drawn at construction (rescaled with the groups),
    /// kept so that `.bias(false).bias(true)` restores them.
    drawn_bias: Tensor,
    params: Conv2dParams,
    in_channels: usize,
    out_channels: usize,
    kernel: (usize, usize),
}

impl Conv2d {
    /// A convolution from `c_in` to `c_out` channels with a `kernel`
    /// `(kh, kw)` window, values drawn from `rng` in `dtype` (a float) on
    /// `device`. [`Error::InvalidArgument`] for a zero kernel extent.
    pub fn new(
        c_in: usize,
        c_out: usize,
        kernel: (usize, usize),
        rng: &mut Generator,
        dtype: DType,
        device: Device,
    ) -> Result<Conv2d> {
        if kernel.0 == 0 || kernel.1 == 0 {
            return Err(Error::invalid(
                "Conv2d::new",
                "kernel",
                format!("both extents must be at least 1, got {kernel:?}"),
            ));
        }
        let gain = Nonlinearity::LeakyRelu(5f64.sqrt()).gain()?;
        let shape = [c_out, c_in, kernel.0, kernel.1];
        let weight = init::kaiming_uniform(shape, gain, FanMode::FanIn, rng, dtype, device)?;
        let fan_in = c_in * kernel.0 * kernel.1;
        let bias = init::uniform_symmetric([c_out], inverse_sqrt(fan_in), rng, dtype, device)?;
        Ok(Conv2d {
            weight: Param::new(weight)?,
            bias: Some(Param::new(bias.clone())?),
            drawn_bias: bias,
            params: Conv2dParams::default(),
            in_channels: c_in,
            out_channels: c_out,
            kernel,
        })
    }

    /// Sets the step between windows, `(height, width)`.
    pub fn stride(mut self, stride: (usize, usize)) -> Conv2d {
        self.params.stride = stride;
        self
    }

    /// Sets the zeros added on each side, `(height, width)`.
    pub fn padding(mut self, padding: (usize, usize)) -> Conv2d {
        self.params.padding = padding;
        self
    }

    /// Sets the spacing between kernel taps, `(height, width)`.
    pub fn dilation(mut self, dilation: (usize, usize)) -> Conv2d {
        self.params.dilation = dilation;
        self
    }

    /// Splits the channels into `groups` independent convolutions: the
    /// weight becomes `[c_out, c_in / groups, kh, kw]`.
    ///
    /// The new weight keeps the first `c_in / groups` input columns of the
    /// drawn one, scaled by `√(groups / old groups)`: a uniform draw on
    /// `(-b, b)` scaled by `s` is a uniform draw on `(-s·b, s·b)`, so this
    /// is exactly the distribution for the smaller fan, without drawing
    /// again. The bias is rescaled the same way.
    ///
    /// [`Error::InvalidArgument`] unless `groups >= 1` divides both channel
    /// counts.
    pub fn groups(mut self, groups: usize) -> Result<Conv2d> {
        let (c_in, c_out) = (self.in_channels, self.out_channels);
        if groups == 0 || c_in % groups != 0 || c_out % groups != 0 {
            return Err(Error::invalid(
                "Conv2d::groups",
                "groups",
                format!(
                    "{groups} groups must be at least 1 and divide both {c_in} input and {c_out} output channels"
                ),
            ));
        }
        let per_group = self.weight.tensor().dims()[1];
        if c_in / groups > per_group {
            return Err(Error::invalid(
                "Conv2d::groups",
                "groups",
                format!(
                    "the weight already has {per_group} input channels per group ({} groups); groups can only grow, got {groups}",
                    self.params.groups
                ),
            ));
        }
        let scale = (groups as f64 / self.params.groups as f64).sqrt();
        let w = self.weight.tensor().detach();
        let w = w
            .narrow(1, 0, c_in / groups)?
            .mul_scalar(scale)?
            .contiguous()?;
        self.weight = Param::new(w)?;
        self.drawn_bias = self.drawn_bias.mul_scalar(scale)?;
        if self.bias.is_some() {
            self.bias = Some(Param::new(self.drawn_bias.clone())?);
        }
        self.params.groups = groups;
        Ok(self)
    }

    /// With `false`, removes the bias; with `true`, restores the one drawn
    /// at construction (a fresh trainable leaf).
    pub fn bias(mut self, bias: bool) -> Result<Conv2d> {
        self.bias = if bias {
            Some(Param::new(self.drawn_bias.clone())?)
        } else {
            None
        };
        Ok(self)
    }

    /// Checks the geometry set by the builders: [`Error::InvalidArgument`]
    /// for a zero stride or dilation entry (what `forward` would report).
    pub fn check(&self) -> Result<()> {
        for (name, pair) in [
            ("stride", self.params.stride),
            ("dilation", self.params.dilation),
        ] {
            if pair.0 == 0 || pair.1 == 0 {
                return Err(Error::invalid(
                    "Conv2d",
                    name,
                    format!("both entries must be at least 1, got {pair:?}"),
                ));
            }
        }
        Ok(())
    }

    /// The weight, `[c_out, c_in / groups, kh, kw]`.
    pub fn weight(&self) -> &Param {
        &self.weight
    }

    /// The bias, `[c_out]`, if the layer has one.
    pub fn bias_param(&self) -> Option<&Param> {
        self.bias.as_ref()
    }

    /// Stride, padding, dilation and groups.
    pub fn params(&self) -> Conv2dParams {
        self.params
    }

    /// The input channel count.
    pub fn in_channels(&self) -> usize {
        self.in_channels
    }

    /// The output channel count.
    pub fn out_channels(&self) -> usize {
        self.out_channels
    }

    /// The window, `(kh, kw)`.
    pub fn kernel(&self) -> (usize, usize) {
        self.kernel
    }
}

impl Module for Conv2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.check()?;
        let bias = self.bias.as_ref().map(Param::tensor);
        x.conv2d(&self.weight.tensor(), bias.as_ref(), self.params)
    }

    fn named_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        out.push((join_name(prefix, "weight"), self.weight.clone()));
        if let Some(b) = &self.bias {
            out.push((join_name(prefix, "bias"), b.clone()));
        }
    }
}

/// Implements the shared builders of the two pooling layers.
macro_rules! pool_layer {
    ($ty:ident, $op:ident, $what:literal) => {
        impl $ty {
            #[doc = concat!("A ", $what, " pooling over `kernel` `(kh, kw)` windows, stepping by the kernel, with no padding (PyTorch's defaults).")]
            pub fn new(kernel: (usize, usize)) -> $ty {
                $ty {
                    params: Pool2dParams::new(kernel),
                }
            }

            /// Sets the step between windows, `(height, width)`.
            pub fn stride(mut self, stride: (usize, usize)) -> $ty {
                self.params.stride = stride;
                self
            }

            /// Sets the padding on each side, `(height, width)`; at most half
            /// the kernel (checked by `forward`).
            pub fn padding(mut self, padding: (usize, usize)) -> $ty {
                self.params.padding = padding;
                self
            }

            /// Kernel, stride and padding.
            pub fn params(&self) -> Pool2dParams {
                self.params
            }
        }

        impl Module for $ty {
            fn forward(&self, x: &Tensor) -> Result<Tensor> {
                x.$op(self.params)
            }

            fn named_params(&self, _prefix: &str, _out: &mut Vec<(String, Param)>) {}
        }
    };
}

/// Max pooling over the last two dims of NCHW input (see
/// [`Tensor::max_pool2d`]: padding is -inf, a NaN in a window wins).
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::Device;
/// use oxmera_nn::{MaxPool2d, Module};
/// use oxmera_tensor::Tensor;
/// let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), [1, 1, 4, 4], Device::Reference)?;
/// let y = MaxPool2d::new((2, 2)).forward(&x)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![5.0, 7.0, 13.0, 15.0]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxPool2d {
    params: Pool2dParams,
}
pool_layer!(MaxPool2d, max_pool2d, "max");

/// Average pooling over the last two dims of NCHW input (see
/// [`Tensor::avg_pool2d`]: padded zeros count in the divisor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvgPool2d {
    params: Pool2dParams,
}
pool_layer!(AvgPool2d, avg_pool2d, "average");
