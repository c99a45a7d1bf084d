//! Convolution and pooling layers over NCHW input.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::{Conv2dParams, Generator, Pool2dOptions, Pool2dParams, Tensor};

use crate::init::{self, FanMode, Nonlinearity};
use crate::linear::inverse_sqrt;
use crate::{Module, ModuleState, Param, join_name};

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
    #[track_caller]
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
    #[track_caller]
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
    #[track_caller]
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
}

impl ModuleState for Conv2d {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
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
                    options: Pool2dOptions::new(kernel),
                }
            }

            /// Sets the step between windows, `(height, width)`.
            pub fn stride(mut self, stride: (usize, usize)) -> $ty {
                self.options.stride = stride;
                self
            }

            /// Sets the padding on each side, `(height, width)`; at most half
            /// the kernel (checked by `forward`).
            pub fn padding(mut self, padding: (usize, usize)) -> $ty {
                self.options.padding = padding;
                self
            }

            /// Rounds the output size up (PyTorch's `ceil_mode`), keeping a
            /// last partial window that starts inside the input or its left
            /// padding.
            pub fn ceil_mode(mut self, ceil_mode: bool) -> $ty {
                self.options.ceil_mode = ceil_mode;
                self
            }

            /// Kernel, stride and padding.
            pub fn params(&self) -> Pool2dParams {
                self.options.params()
            }

            /// Every option: kernel, stride, padding, dilation, `ceil_mode`.
            pub fn options(&self) -> Pool2dOptions {
                self.options
            }
        }

        impl Module for $ty {
            fn forward(&self, x: &Tensor) -> Result<Tensor> {
                x.$op(self.options)
            }
        }

        impl ModuleState for $ty {
            fn visit_params(&self, _prefix: &str, _out: &mut Vec<(String, Param)>) {}
        }
    };
}

/// Max pooling over the last two dims of NCHW input (see
/// [`Tensor::max_pool2d`]: padding is -inf, a NaN in a window wins), with
/// PyTorch's `dilation` and `ceil_mode` ([`Tensor::max_pool2d_with`]).
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
    options: Pool2dOptions,
}
pool_layer!(MaxPool2d, max_pool2d_with, "max");

impl MaxPool2d {
    /// Sets the spacing between kernel taps, `(height, width)` (PyTorch's
    /// `dilation`; average pooling has none).
    pub fn dilation(mut self, dilation: (usize, usize)) -> MaxPool2d {
        self.options.dilation = dilation;
        self
    }
}

/// Average pooling over the last two dims of NCHW input (see
/// [`Tensor::avg_pool2d`]: padded zeros count in the divisor), with
/// PyTorch's `ceil_mode` ([`Tensor::avg_pool2d_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvgPool2d {
    options: Pool2dOptions,
}
pool_layer!(AvgPool2d, avg_pool2d_with, "average");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    fn conv(c_in: usize, c_out: usize, k: (usize, usize)) -> Conv2d {
        Conv2d::new(c_in, c_out, k, &mut Generator::new(11), DType::F64, DEV).unwrap()
    }

    #[test]
    fn forward_on_a_3x3_image_is_hand_computable() {
        // A 2x2 box filter plus bias 1 over [[1,2,3],[4,5,6],[7,8,9]]:
        // each output is its 2x2 block's sum plus 1.
        let c = conv(1, 1, (2, 2));
        c.weight().set(t64(&[1.0; 4], [1, 1, 2, 2])).unwrap();
        c.bias_param().unwrap().set(t64(&[1.0], [1])).unwrap();
        let x = t64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [1, 1, 3, 3]);
        let y = c.forward(&x).unwrap();
        assert_eq!(y.to_vec::<f64>().unwrap(), vec![13.0, 17.0, 25.0, 29.0]);
        // With padding 1 the corner window holds only x[0][0] = 1.
        let padded = c.clone().padding((1, 1)).forward(&x).unwrap();
        assert_eq!(padded.dims(), &[1, 1, 4, 4]);
        assert_eq!(padded.get(&[0, 0, 0, 0]).unwrap(), 2.0);
    }

    #[test]
    fn init_bound_is_one_over_root_fan_in() {
        let c = conv(3, 8, (3, 3));
        let bound = 1.0 / 27f64.sqrt();
        let w = c.weight().tensor().to_f64_vec().unwrap();
        let b = c.bias_param().unwrap().tensor().to_f64_vec().unwrap();
        assert!(w.iter().chain(&b).all(|v| v.abs() <= bound));
        assert_eq!(c.weight().tensor().dims(), &[8, 3, 3, 3]);
    }

    #[test]
    fn groups_narrow_and_rescale_the_drawn_weight() {
        let whole = conv(4, 6, (3, 3));
        let w = whole.weight().tensor();
        let b = whole.bias_param().unwrap().tensor().to_f64_vec().unwrap();
        let grouped = whole.groups(2).unwrap();
        let gw = grouped.weight().tensor();
        assert_eq!(gw.dims(), &[6, 2, 3, 3]);
        let want = w.narrow(1, 0, 2).unwrap().mul_scalar(2f64.sqrt()).unwrap();
        assert_close(
            &gw.to_f64_vec().unwrap(),
            &want.to_f64_vec().unwrap(),
            1e-15,
        );
        // fan_in is now 2 * 3 * 3 = 18.
        let bound = 1.0 / 18f64.sqrt();
        assert!(gw.to_f64_vec().unwrap().iter().all(|v| v.abs() <= bound));
        let gb = grouped.bias_param().unwrap().tensor().to_f64_vec().unwrap();
        let want_b: Vec<f64> = b.iter().map(|v| v * 2f64.sqrt()).collect();
        assert_close(&gb, &want_b, 1e-15);
        assert_eq!(grouped.params().groups, 2);
        let x = Tensor::zeros([1, 4, 5, 5], DType::F64, DEV).unwrap();
        assert_eq!(grouped.forward(&x).unwrap().dims(), &[1, 6, 3, 3]);
    }

    #[test]
    fn invalid_groups_are_rejected() {
        for g in [0, 3, 4] {
            let err = conv(4, 6, (1, 1)).groups(g).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::InvalidArgument {
                        op: "Conv2d::groups",
                        name: "groups",
                        ..
                    }
                ),
                "{g}: {err}"
            );
        }
        let err = conv(4, 4, (1, 1)).groups(4).unwrap().groups(2).unwrap_err();
        assert!(err.to_string().contains("groups can only grow"), "{err}");
    }

    #[test]
    fn bias_can_be_removed_and_restored() {
        let c = conv(2, 3, (1, 1));
        let drawn = c.bias_param().unwrap().tensor().to_f64_vec().unwrap();
        let c = c.bias(false).unwrap();
        let names: Vec<String> = c.named_parameters().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["weight"]);
        let c = c.bias(true).unwrap();
        let restored = c.bias_param().unwrap();
        assert!(restored.is_trainable());
        assert_eq!(restored.tensor().to_f64_vec().unwrap(), drawn);
    }

    #[test]
    fn zero_stride_or_dilation_is_reported() {
        let x = Tensor::zeros([1, 1, 4, 4], DType::F64, DEV).unwrap();
        let bad = conv(1, 1, (2, 2)).stride((0, 1));
        assert!(matches!(
            bad.check(),
            Err(Error::InvalidArgument {
                op: "Conv2d",
                name: "stride",
                ..
            })
        ));
        assert!(matches!(
            bad.forward(&x),
            Err(Error::InvalidArgument {
                op: "Conv2d",
                name: "stride",
                ..
            })
        ));
        let bad = conv(1, 1, (2, 2)).dilation((1, 0));
        assert!(matches!(
            bad.forward(&x),
            Err(Error::InvalidArgument {
                name: "dilation",
                ..
            })
        ));
        let err = Conv2d::new(1, 1, (0, 2), &mut Generator::new(0), DType::F32, DEV).unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidArgument {
                op: "Conv2d::new",
                ..
            }
        ));
    }

    #[test]
    fn input_gradient_passes_gradcheck() {
        let c = conv(4, 2, (2, 2))
            .groups(2)
            .unwrap()
            .stride((2, 1))
            .padding((1, 0))
            .dilation((1, 2));
        let x = Generator::new(12)
            .randn([1, 4, 3, 4], DType::F64, DEV)
            .unwrap();
        check_grad(|xs| c.forward(&xs[0]), &[x]);
    }

    #[test]
    fn pooling_layers_are_hand_computable() {
        let x = t64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [1, 1, 3, 3]);
        let max = MaxPool2d::new((2, 2)).stride((1, 1));
        assert_eq!(
            max.forward(&x).unwrap().to_vec::<f64>().unwrap(),
            vec![5.0, 6.0, 8.0, 9.0]
        );
        let avg = AvgPool2d::new((2, 2)).stride((1, 1));
        assert_eq!(
            avg.forward(&x).unwrap().to_vec::<f64>().unwrap(),
            vec![3.0, 4.0, 6.0, 7.0]
        );
        // Stride defaults to the kernel: one 2x2 window fits in 3x3.
        assert_eq!(
            AvgPool2d::new((2, 2))
                .forward(&x)
                .unwrap()
                .to_vec::<f64>()
                .unwrap(),
            vec![3.0]
        );
        assert_eq!(MaxPool2d::new((3, 1)).params().stride, (3, 1));
        // ceil_mode's partial windows: [3, 6] / 2, [7, 8] / 2, [9] / 1.
        let avg = AvgPool2d::new((2, 2)).ceil_mode(true);
        assert_eq!(
            avg.forward(&x).unwrap().to_vec::<f64>().unwrap(),
            vec![3.0, 4.5, 7.5, 9.0]
        );
        // Taps 2 apart: the corners.
        let max = MaxPool2d::new((2, 2)).stride((1, 1)).dilation((2, 2));
        assert_eq!(max.forward(&x).unwrap().to_vec::<f64>().unwrap(), vec![9.0]);
        assert!(max.options().dilation == (2, 2) && !max.options().ceil_mode);
        assert!(MaxPool2d::new((2, 2)).named_parameters().is_empty());
        let bad = MaxPool2d::new((2, 2)).padding((2, 0)).forward(&x);
        assert!(matches!(
            bad,
            Err(Error::InvalidArgument {
                op: "max_pool2d",
                ..
            })
        ));
    }
}
