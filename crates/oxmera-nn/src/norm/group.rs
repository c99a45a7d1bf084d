//! GroupNorm and RMSNorm: normalizations that need no batch statistics,
//! so they behave the same in training and evaluation.

use oxmera_core::{DType, Device, Error, Result, Shape};
use oxmera_tensor::Tensor;

use super::{affine, check_eps};
use crate::{Module, ModuleState, Param, join_name};

/// Normalizes each sample's channels in `num_groups` groups: `[N, C, *]`
/// is seen as `[N, G, C/G · *]`, each group gets zero mean and unit
/// (biased) variance, then the per-channel `weight · y + bias`, as
/// PyTorch's `nn.GroupNorm`. One group is layer norm over `[C, *]`; `C`
/// groups is instance norm.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{GroupNorm, Module};
/// use oxmera_tensor::Tensor;
/// // Two channels in two groups: each channel normalized on its own.
/// let gn = GroupNorm::new(2, 2, DType::F64, Device::Reference)?.eps(0.0)?;
/// let x = Tensor::from_vec(vec![1.0f64, 3.0, 10.0, 30.0], [1, 2, 2], Device::Reference)?;
/// assert_eq!(gn.forward(&x)?.to_vec::<f64>()?, vec![-1.0, 1.0, -1.0, 1.0]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct GroupNorm {
    weight: Option<Param>,
    bias: Option<Param>,
    num_groups: usize,
    num_channels: usize,
    eps: f64,
}

impl GroupNorm {
    /// `num_groups` groups over `num_channels` channels (which it must
    /// divide; [`Error::InvalidArgument`] otherwise), `eps = 1e-5`,
    /// weight ones and bias zeros of `[num_channels]`.
    #[track_caller]
    pub fn new(
        num_groups: usize,
        num_channels: usize,
        dtype: DType,
        device: Device,
    ) -> Result<GroupNorm> {
        if num_groups == 0 || num_channels % num_groups != 0 {
            return Err(Error::invalid(
                "GroupNorm",
                "num_groups",
                format!("{num_groups} groups must divide the {num_channels} channels"),
            ));
        }
        let c = [num_channels];
        Ok(GroupNorm {
            weight: Some(Param::new(Tensor::ones(c, dtype, device)?)?),
            bias: Some(Param::new(Tensor::zeros(c, dtype, device)?)?),
            num_groups,
            num_channels,
            eps: 1e-5,
        })
    }

    /// Sets the constant added to the variance (finite, `>= 0`).
    pub fn eps(mut self, eps: f64) -> Result<GroupNorm> {
        self.eps = check_eps("GroupNorm", eps)?;
        Ok(self)
    }

    /// Drops the learned weight and bias.
    pub fn without_affine(mut self) -> GroupNorm {
        self.weight = None;
        self.bias = None;
        self
    }

    /// The number of groups.
    pub fn num_groups(&self) -> usize {
        self.num_groups
    }

    /// The learned per-channel scale, if any.
    pub fn weight(&self) -> Option<&Param> {
        self.weight.as_ref()
    }

    /// The learned per-channel shift, if any.
    pub fn bias(&self) -> Option<&Param> {
        self.bias.as_ref()
    }
}

impl Module for GroupNorm {
    /// `x` is `[N, C, *]` with `C = num_channels` ([`Error::ShapeMismatch`]
    /// named `"GroupNorm"` otherwise).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if x.rank() < 2 || x.dims()[1] != self.num_channels {
            return Err(Error::ShapeMismatch {
                op: "GroupNorm",
                lhs: x.shape().clone(),
                rhs: Shape::from([0, self.num_channels]),
            });
        }
        let n = x.dims()[0];
        let per_group = x.numel() / n.max(1) / self.num_groups;
        let grouped = x.reshape([n, self.num_groups, per_group])?;
        let y = grouped
            .layer_norm(1, self.eps)?
            .reshape(x.shape().clone())?;
        // The channel's scale and shift broadcast over the trailing dims.
        let mut channel = vec![self.num_channels];
        channel.resize(x.rank() - 1, 1);
        affine(y, self.weight.as_ref(), self.bias.as_ref(), Some(&channel))
    }
}

impl ModuleState for GroupNorm {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        if let Some(w) = &self.weight {
            out.push((join_name(prefix, "weight"), w.clone()));
        }
        if let Some(b) = &self.bias {
            out.push((join_name(prefix, "bias"), b.clone()));
        }
    }
}

/// Root-mean-square normalization over the trailing `normalized_shape`
/// dims: `y = x / √(mean(x²) + eps) · weight`, no centering and no bias,
/// as PyTorch's `nn.RMSNorm`. `eps` defaults, as there, to the machine
/// epsilon of the input's dtype.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Module, RMSNorm};
/// use oxmera_tensor::Tensor;
/// let rms = RMSNorm::new([2], DType::F64, Device::Reference)?.eps(Some(0.0))?;
/// // The root mean square of [3, 4] is √12.5.
/// let x = Tensor::from_vec(vec![3.0f64, 4.0], [1, 2], Device::Reference)?;
/// let y = rms.forward(&x)?.to_vec::<f64>()?;
/// assert!((y[0] - 3.0 / 12.5f64.sqrt()).abs() < 1e-15);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RMSNorm {
    weight: Option<Param>,
    normalized_shape: Shape,
    eps: Option<f64>,
}

impl RMSNorm {
    /// An RMS norm over trailing dims `normalized_shape` (at least one dim;
    /// [`Error::InvalidArgument`] otherwise), weight ones, `eps` the
    /// dtype's machine epsilon.
    #[track_caller]
    pub fn new(
        normalized_shape: impl Into<Shape>,
        dtype: DType,
        device: Device,
    ) -> Result<RMSNorm> {
        let normalized_shape = normalized_shape.into();
        if normalized_shape.rank() == 0 {
            return Err(Error::invalid(
                "RMSNorm",
                "normalized_shape",
                "needs at least one dim",
            ));
        }
        let weight = Param::new(Tensor::ones(normalized_shape.clone(), dtype, device)?)?;
        Ok(RMSNorm {
            weight: Some(weight),
            normalized_shape,
            eps: None,
        })
    }

    /// Sets the constant added to the mean square (finite, `>= 0`), or
    /// `None` for the input dtype's machine epsilon.
    pub fn eps(mut self, eps: Option<f64>) -> Result<RMSNorm> {
        self.eps = match eps {
            Some(e) => Some(check_eps("RMSNorm", e)?),
            None => None,
        };
        Ok(self)
    }

    /// Drops the learned weight.
    pub fn without_affine(mut self) -> RMSNorm {
        self.weight = None;
        self
    }

    /// The learned scale, if any.
    pub fn weight(&self) -> Option<&Param> {
        self.weight.as_ref()
    }
}

impl Module for RMSNorm {
    /// `x`'s trailing dims must equal `normalized_shape`
    /// ([`Error::ShapeMismatch`] named `"RMSNorm"` otherwise).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let k = self.normalized_shape.rank();
        if x.rank() < k || x.dims()[x.rank() - k..] != *self.normalized_shape.dims() {
            return Err(Error::ShapeMismatch {
                op: "RMSNorm",
                lhs: x.shape().clone(),
                rhs: self.normalized_shape.clone(),
            });
        }
        if !x.dtype().is_float() {
            return Err(Error::UnsupportedDType {
                op: "RMSNorm",
                dtype: x.dtype(),
                hint: "normalization needs a float dtype",
            });
        }
        // PyTorch's default: the input dtype's machine epsilon (a float,
        // checked just above).
        let eps = self
            .eps
            .or(x.dtype().machine_epsilon())
            .unwrap_or(f64::from(f32::EPSILON));
        let over: Vec<isize> = (-(k as isize)..0).collect();
        let rstd = x.square()?.mean(&over, true)?.add_scalar(eps)?.rsqrt()?;
        affine(x.mul(&rstd)?, self.weight.as_ref(), None, None)
    }
}

impl ModuleState for RMSNorm {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        if let Some(w) = &self.weight {
            out.push((join_name(prefix, "weight"), w.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use oxmera_tensor::Generator;

    #[test]
    fn group_norm_by_hand_and_its_groups() {
        // One sample, four channels of two values, two groups: group 0 is
        // channels 0–1 = [1, 2, 3, 4] (mean 2.5, variance 1.25).
        let gn = GroupNorm::new(2, 4, DType::F64, DEV)
            .unwrap()
            .eps(0.0)
            .unwrap();
        let x = t64(&[1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 5.0, 5.0], [1, 4, 2]);
        let y = gn.forward(&x).unwrap().to_f64_vec().unwrap();
        let s = 1.25f64.sqrt();
        let want = [-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s, -1.0, -1.0, 1.0, 1.0];
        assert_close(&y, &want, 1e-15);
        gn.weight()
            .unwrap()
            .set(t64(&[1.0, 2.0, 1.0, 1.0], [4]))
            .unwrap();
        gn.bias()
            .unwrap()
            .set(t64(&[0.0, 0.0, 0.0, 10.0], [4]))
            .unwrap();
        let y = gn.forward(&x).unwrap().to_f64_vec().unwrap();
        assert_close(&y[2..4], &[1.0 / s, 3.0 / s], 1e-15);
        assert_close(&y[6..], &[11.0, 11.0], 1e-15);
        let names: Vec<String> = gn.state_dict().into_keys().collect();
        assert_eq!(names, ["bias", "weight"]);
    }

    #[test]
    fn group_norm_gradients_and_errors() {
        let mut rng = Generator::new(3);
        let gn = GroupNorm::new(3, 6, DType::F64, DEV).unwrap();
        gn.weight()
            .unwrap()
            .set(rng.randn([6], DType::F64, DEV).unwrap())
            .unwrap();
        let x = rng.randn([2, 6, 3], DType::F64, DEV).unwrap();
        let w = rng.randn([2, 6, 3], DType::F64, DEV).unwrap();
        check_grad(|xs| gn.forward(&xs[0])?.mul(&w)?.sum_all(), &[x]);
        assert!(matches!(
            GroupNorm::new(4, 6, DType::F64, DEV),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            gn.forward(&t64(&[0.0; 4], [1, 4])),
            Err(Error::ShapeMismatch {
                op: "GroupNorm",
                ..
            })
        ));
    }

    #[test]
    fn rms_norm_default_eps_is_the_dtypes_and_gradients_check() {
        let rms = RMSNorm::new([3], DType::F64, DEV).unwrap();
        // A row of zeros divides by √eps: zeros stay zeros, no NaN.
        let y = rms.forward(&t64(&[0.0; 3], [1, 3])).unwrap();
        assert_eq!(y.to_f64_vec().unwrap(), vec![0.0; 3]);
        // Tiny values show the eps: x = 1e-8, mean square 1e-16 ≈ ε/2.2.
        let x = t64(&[1e-8; 3], [1, 3]);
        let got = rms.forward(&x).unwrap().to_f64_vec().unwrap()[0];
        let want = 1e-8 / (1e-16 + f64::EPSILON).sqrt();
        assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        let mut rng = Generator::new(4);
        rms.weight()
            .unwrap()
            .set(rng.randn([3], DType::F64, DEV).unwrap())
            .unwrap();
        let x = rng.randn([2, 3], DType::F64, DEV).unwrap();
        let w = rng.randn([2, 3], DType::F64, DEV).unwrap();
        check_grad(|xs| rms.forward(&xs[0])?.mul(&w)?.sum_all(), &[x]);
        assert!(matches!(
            rms.forward(&t64(&[0.0; 4], [1, 4])),
            Err(Error::ShapeMismatch { op: "RMSNorm", .. })
        ));
        assert!(
            RMSNorm::new([3], DType::F64, DEV)
                .unwrap()
                .eps(Some(-1.0))
                .is_err()
        );
    }
}
