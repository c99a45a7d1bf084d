//! Front end: inclusive scans along one dim — `cumsum` and `cumprod`.
//!
//! Both are one [`crate::Backend::scan`] call (a Backend method whose
//! default body runs the reference through the counted host fallback, so a
//! device backend has them from day one). The dim counts from the end when
//! negative, as everywhere in the API; a rank-0 tensor is scanned as one
//! element along dim 0 or -1.
//!
//! Dtypes follow PyTorch: floats keep their dtype; integers and bool give
//! `i64` (wrapping on overflow), as [`Tensor::sum`] does.

use oxmera_core::{DType, Result, Shape, normalize_dim};

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

    /// The one path both scans take: dim and dtype, then the backend.
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
