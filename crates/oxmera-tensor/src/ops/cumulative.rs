//! Front end: inclusive scans along one dim — `cumsum`, `cumprod` and
//! `logcumsumexp`.
//!
//! Both are one [`crate::Backend::scan`] call (a Backend method whose
//! default body runs the reference through the counted host fallback, so a
//! device backend has them from day one). The dim counts from the end when
//! negative, as everywhere in the API; a rank-0 tensor is scanned as one
//! element along dim 0 or -1.
//!
//! Dtypes follow PyTorch: floats keep their dtype; integers and bool give
//! `i64` (wrapping on overflow), as [`Tensor::sum`] does; `logcumsumexp`
//! takes floats only, as PyTorch's.

use oxmera_core::{DType, Error, Result, Shape, normalize_dim};

use super::unary::FLOAT_ONLY_HINT;
use crate::{ScanOp, Tensor};

impl Tensor {
    /// The running sums along `dim`: element `i` is the sum of elements
    /// `0..=i` of its slice. Floats keep their dtype (the reference adds in
    /// `f64`, in order, and rounds each prefix once); integers and bool give
    /// `i64`. Its gradient is the reversed running sum of the incoming
    /// gradient. A dim out of range is [`oxmera_core::Error::DimOutOfRange`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{DType, Device};
    /// use oxmera_tensor::Tensor;
    /// // [[1, 2, 3],
    /// //  [4, 5, 6]]
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], Device::Reference)?;
    /// assert_eq!(x.cumsum(-1)?.to_vec::<f32>()?, vec![1.0, 3.0, 6.0, 4.0, 9.0, 15.0]);
    /// assert_eq!(x.cumsum(0)?.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 5.0, 7.0, 9.0]);
    /// let b = Tensor::from_vec(vec![true, false, true], [3], Device::Reference)?;
    /// assert_eq!(b.cumsum(0)?.dtype(), DType::I64);
    /// assert_eq!(b.cumsum(0)?.to_vec::<i64>()?, vec![1, 1, 2]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn cumsum(&self, dim: isize) -> Result<Tensor> {
        self.scan_op(ScanOp::Sum, dim)
    }

    /// The running products along `dim`: element `i` is the product of
    /// elements `0..=i` of its slice. Dtypes as for [`Tensor::cumsum`]
    /// (integers wrap). The gradient is exact where the input has zeros
    /// (no division by them): only the first zero of a slice can receive
    /// a non-zero gradient, and it gets the running product with itself
    /// left out, as PyTorch's `cumprod_backward`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![2.0f64, 3.0, 0.0, 5.0], [4], Device::Reference)?;
    /// assert_eq!(x.cumprod(0)?.to_vec::<f64>()?, vec![2.0, 6.0, 0.0, 0.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn cumprod(&self, dim: isize) -> Result<Tensor> {
        self.scan_op(ScanOp::Prod, dim)
    }

    /// The running log-sum-exp along `dim`, as `torch.logcumsumexp`:
    /// element `i` is `log Σ_{j<=i} exp(x_j)` of its slice, computed
    /// without overflow by folding each element into the running value
    /// as `max + log1p(exp(min - max))` (so `[1000, 1000]` gives
    /// `[1000, 1000 + ln 2]`, not `inf`). A slice that starts with `-inf`
    /// stays `-inf` until a larger element; `+inf` and NaN propagate
    /// forward. Floats only ([`Error::UnsupportedDType`] otherwise, as
    /// PyTorch's); the reference folds in `f64` and rounds each prefix
    /// once.
    ///
    /// The gradient is `∂L/∂x_i = Σ_{j>=i} g_j · exp(x_i - y_j)` (each
    /// output's softmax weights over its prefix), computed as PyTorch's
    /// `logcumsumexp_backward`: in logs, the positive and negative parts of
    /// `g` apart, so that no `exp` overflows.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // log(e^0) = 0, log(e^0 + e^0) = ln 2, log(1 + 1 + 1) = ln 3
    /// let x = Tensor::from_vec(vec![0.0f64, 0.0, 0.0], [3], Device::Reference)?;
    /// let y = x.logcumsumexp(0)?.to_vec::<f64>()?;
    /// assert!((y[1] - 2f64.ln()).abs() < 1e-15 && (y[2] - 3f64.ln()).abs() < 1e-15);
    /// let big = Tensor::from_vec(vec![1000.0f32, 1000.0], [2], Device::Reference)?;
    /// assert_eq!(big.logcumsumexp(-1)?.to_vec::<f32>()?, [1000.0, 1000.0 + 2f32.ln()]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn logcumsumexp(&self, dim: isize) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType {
                op: ScanOp::LogSumExp.name(),
                dtype: self.dtype(),
                hint: FLOAT_ONLY_HINT,
            });
        }
        self.scan_op(ScanOp::LogSumExp, dim)
    }

    /// The one path every scan takes: dim and dtype, then the backend.
    fn scan_op(&self, op: ScanOp, dim: isize) -> Result<Tensor> {
        if self.rank() == 0 {
            // A scalar is a slice of one: validate the dim against rank 1.
            normalize_dim(op.name(), dim, 1)?;
            return self.reshape([1])?.scan_op(op, 0)?.reshape(Shape::scalar());
        }
        let dim = normalize_dim(op.name(), dim, self.rank())?;
        let out_dtype = if self.dtype().is_float() {
            self.dtype()
        } else {
            DType::I64
        };
        crate::tensor::probe_result(op.name(), self.shape(), out_dtype, self.device())?;
        let storage = self.backend()?.scan(op, self, dim, out_dtype)?;
        let out = Tensor::from_storage(storage, self.shape().clone());
        Ok(crate::autograd::rules::scan(op, self, dim, out))
    }
}
