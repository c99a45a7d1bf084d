//! Front end: the special-value masks PyTorch users reach for — `isnan`,
//! `isinf`, `isfinite` — and `nan_to_num`.
//!
//! All four are **composites**: built from comparisons, `where` and
//! `masked_fill` in this layer, so every backend has them without a
//! kernel of its own, and a device backend runs them with the
//! comparison and selection kernels it already has.
//!
//! Integer and bool tensors have no NaN or infinity: `isnan` and `isinf`
//! are all false, `isfinite` all true, and `nan_to_num` returns the values
//! unchanged (as PyTorch does).

use half::{bf16, f16};
use oxmera_core::{DType, Result};

use crate::Tensor;

/// The largest finite value of a float `dtype` (`f64::MAX` otherwise,
/// never asked for).
pub(crate) fn finite_max(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => f16::MAX.to_f64(),
        DType::BF16 => bf16::MAX.to_f64(),
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

impl Tensor {
    /// Where the element is NaN (bool, same shape). Every dtype; all false
    /// for integers and bool. Computed as `x != x`, IEEE's one way to see
    /// a NaN.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, f32::NAN, f32::INFINITY], [3], Device::Reference)?;
    /// assert_eq!(x.isnan()?.to_vec::<bool>()?, vec![false, true, false]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn isnan(&self) -> Result<Tensor> {
        self.ne(self)
    }

    /// Where the element is `+inf` or `-inf` (bool, same shape). Every
    /// dtype; all false for integers and bool.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![f64::NEG_INFINITY, f64::NAN, f64::MAX, f64::INFINITY], [4], Device::Reference)?;
    /// assert_eq!(x.isinf()?.to_vec::<bool>()?, vec![true, false, false, true]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn isinf(&self) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return self.ne(self);
        }
        self.detach().abs()?.eq_scalar(f64::INFINITY)
    }

    /// Where the element is neither NaN nor infinite (bool, same shape).
    /// Every dtype; all true for integers and bool. Computed as
    /// `x - x == 0`, which NaN and both infinities fail (their difference
    /// is NaN).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, f32::NAN, f32::NEG_INFINITY, f32::MAX], [4], Device::Reference)?;
    /// assert_eq!(x.isfinite()?.to_vec::<bool>()?, vec![true, false, false, true]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn isfinite(&self) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return self.eq(self);
        }
        let x = self.detach();
        x.sub(&x)?.eq_scalar(0.0)
    }

    /// NaN replaced by `nan`, `+inf` by `posinf` and `-inf` by `neginf`;
    /// an absent bound is the dtype's largest (or lowest) finite value, as
    /// PyTorch's `nan_to_num(x, nan=0.0)` defaults. The replacements take
    /// the dtype by the scalar rules (rounded to nearest, so a replacement
    /// beyond the dtype's range becomes an infinity again). Integer and
    /// bool tensors come back unchanged. The gradient passes where the
    /// element was finite and is 0 where it was replaced (PyTorch's rule).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.5], [4], Device::Reference)?;
    /// let y = x.nan_to_num(0.0, None, None)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![0.0, f32::MAX, f32::MIN, 1.5]);
    /// let z = x.nan_to_num(-1.0, Some(9.0), Some(-9.0))?;
    /// assert_eq!(z.to_vec::<f32>()?, vec![-1.0, 9.0, -9.0, 1.5]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn nan_to_num(&self, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Result<Tensor> {
        let dtype = self.dtype();
        if !dtype.is_float() {
            return Ok(self.clone());
        }
        let x = self.detach();
        let posinf = posinf.unwrap_or(finite_max(dtype));
        let neginf = neginf.unwrap_or(-finite_max(dtype));
        self.masked_fill(&x.isnan()?, nan)?
            .masked_fill(&x.eq_scalar(f64::INFINITY)?, posinf)?
            .masked_fill(&x.eq_scalar(f64::NEG_INFINITY)?, neginf)
    }
}
