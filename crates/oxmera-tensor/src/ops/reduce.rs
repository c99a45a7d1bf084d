//! Front end: reductions over sets of dims, and softmax along one dim.
//!
//! Every reduction goes through the private chokepoint `reduce_op`, which resolves the
//! dims, picks the output dtype, rejects what has no meaning, and asks the
//! backend for the *keepdim-shaped* result; dropping the reduced dims is
//! then a free view. Every softmax goes through `softmax_op`; layer
//! normalization, a fused reduction and elementwise pass like softmax,
//! lives here too.
//!
//! Semantic choices shared by all reductions (each one is tested):
//!
//! - **An empty `dims` slice reduces over nothing**, as NumPy's `axis=()`:
//!   each output element is the reduction of the one input element at its
//!   position (so `sum(&[], _)` is a copy converted to the output dtype,
//!   `var(&[], 1.0, _)` is NaN everywhere). PyTorch reads `dim=[]` as
//!   "all dims"; oxmera spells that [`Tensor::sum_all`] and friends, so
//!   that a computed, possibly empty, list of dims never silently means
//!   everything.
//! - Dims may be negative (`-1` is the last) and must be distinct.
//!   A rank-0 tensor has no dims: any dim given for it is
//!   [`Error::DimOutOfRange`] (PyTorch accepts `0` and `-1` there), while
//!   the `_all` forms and an empty `dims` work and give a rank-0 result.
//! - Over an empty extent (a reduced dim of size 0), reductions with an
//!   identity return it — `sum` 0, `prod` 1, `all` true, `any` false,
//!   `logsumexp` -inf — and `mean`, `var`, `std` give NaN (0/0); `max`,
//!   `min`, `argmax` and `argmin` have no identity and fail with
//!   [`Error::EmptyReduction`].

use oxmera_core::{DType, Error, Result, Shape, normalize_dim, normalize_dims};

use crate::{ReduceOp, Tensor, keepdim_shape};

use super::unary::FLOAT_ONLY_HINT;

impl Tensor {
    /// The sum over `dims` (see the module docs for an empty `dims`).
    ///
    /// Dtype: floats keep their dtype (accumulated in `f64` by the
    /// reference, rounded once); integers and bool give `i64`, wrapping on
    /// overflow (PyTorch's rule, so that summing `u8` or `bool` counts
    /// instead of overflowing). The sum of an empty extent is 0.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{DType, Device};
    /// use oxmera_tensor::Tensor;
    /// // [[1, 2, 3],
    /// //  [4, 5, 6]]
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], Device::Reference)?;
    /// assert_eq!(x.sum(&[0], false)?.to_vec::<f32>()?, vec![5.0, 7.0, 9.0]);
    /// assert_eq!(x.sum(&[-1], true)?.dims(), &[2, 1]);
    /// assert_eq!(x.sum_all()?.item()?, 21.0);
    /// let b = Tensor::from_vec(vec![true, false, true], [3], Device::Reference)?;
    /// assert_eq!(b.sum_all()?.dtype(), DType::I64);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn sum(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::Sum, dims, keepdim)
    }

    /// The sum of every element, as a rank-0 tensor.
    pub fn sum_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::Sum)
    }

    /// The arithmetic mean over `dims`. Floats only
    /// ([`Error::UnsupportedDType`] otherwise); the mean of an empty extent
    /// is NaN (0/0), as in both NumPy and PyTorch.
    pub fn mean(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::Mean, dims, keepdim)
    }

    /// The mean of every element, as a rank-0 tensor.
    pub fn mean_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::Mean)
    }

    /// The product over `dims`. Dtypes as for [`Tensor::sum`] (integers and
    /// bool give `i64`, wrapping); the product of an empty extent is 1.
    pub fn prod(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::Prod, dims, keepdim)
    }

    /// The product of every element, as a rank-0 tensor.
    pub fn prod_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::Prod)
    }

    /// The largest value over `dims`, in the input's dtype (bool: "any").
    ///
    /// **NaN propagates**: a NaN anywhere in the extent makes the result
    /// NaN (PyTorch's `amax`; NumPy's `max` agrees, `nanmax` does not).
    /// An empty extent is [`Error::EmptyReduction`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{Device, Error};
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, f64::NAN, 3.0, 4.0], [2, 2], Device::Reference)?;
    /// let m = x.max(&[1], false)?.to_vec::<f64>()?;
    /// assert!(m[0].is_nan());
    /// assert_eq!(m[1], 4.0);
    /// let empty = Tensor::from_vec(Vec::<f64>::new(), [0], Device::Reference)?;
    /// assert!(matches!(empty.max_all(), Err(Error::EmptyReduction { .. })));
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn max(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::Max, dims, keepdim)
    }

    /// The largest of every element, as a rank-0 tensor (NaN propagates).
    pub fn max_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::Max)
    }

    /// The smallest value over `dims`; the mirror of [`Tensor::max`]
    /// (NaN propagates, empty extents are an error).
    pub fn min(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::Min, dims, keepdim)
    }

    /// The smallest of every element, as a rank-0 tensor (NaN propagates).
    pub fn min_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::Min)
    }

    /// The index (`i64`) of the largest value along `dim`.
    ///
    /// Ties go to the **first** index. A NaN counts as larger than
    /// everything, so the result is the index of the first NaN if there is
    /// one (PyTorch and NumPy agree). An empty extent is
    /// [`Error::EmptyReduction`]. Any dtype is accepted.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![3i32, 7, 7, 1, 0, 9], [2, 3], Device::Reference)?;
    /// assert_eq!(x.argmax(1, false)?.to_vec::<i64>()?, vec![1, 2]);
    /// assert_eq!(x.argmax_all()?.item()?, 5.0);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn argmax(&self, dim: isize, keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::ArgMax, &[dim], keepdim)
    }

    /// The index of the first largest element of the tensor flattened in
    /// row-major order, as a rank-0 `i64` tensor.
    pub fn argmax_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::ArgMax)
    }

    /// The index (`i64`) of the smallest value along `dim`: ties go to the
    /// first index, and a NaN wins (it is the index of the first NaN), as in
    /// PyTorch and NumPy.
    pub fn argmin(&self, dim: isize, keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::ArgMin, &[dim], keepdim)
    }

    /// The index of the first smallest element of the flattened tensor, as
    /// a rank-0 `i64` tensor.
    pub fn argmin_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::ArgMin)
    }

    /// The variance over `dims`: `Σ(x - mean)² / max(0, N - correction)`
    /// where `N` is the number of elements reduced. `correction = 1.0` is
    /// Bessel's unbiased estimate (PyTorch's default), `0.0` the population
    /// variance (NumPy's default `ddof=0`).
    ///
    /// When `correction >= N` the divisor is 0, giving NaN if every
    /// deviation is 0 (in particular for `N = 1, correction = 1`) and +inf
    /// otherwise, as PyTorch does. An empty extent gives NaN. Floats only;
    /// a non-finite `correction` is [`Error::InvalidArgument`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], [4], Device::Reference)?;
    /// assert_eq!(x.var(&[0], 1.0, false)?.item()?, 5.0 / 3.0);
    /// assert_eq!(x.var(&[0], 0.0, false)?.item()?, 1.25);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn var(&self, dims: &[isize], correction: f64, keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::Var { correction }, dims, keepdim)
    }

    /// The variance of every element, as a rank-0 tensor.
    pub fn var_all(&self, correction: f64) -> Result<Tensor> {
        self.reduce_all(ReduceOp::Var { correction })
    }

    /// The standard deviation over `dims`: the square root of
    /// [`Tensor::var`] with the same `correction` (same NaN/inf cases).
    pub fn std(&self, dims: &[isize], correction: f64, keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::Std { correction }, dims, keepdim)
    }

    /// The standard deviation of every element, as a rank-0 tensor.
    pub fn std_all(&self, correction: f64) -> Result<Tensor> {
        self.reduce_all(ReduceOp::Std { correction })
    }

    /// `log(Σ exp(x))` over `dims`, computed stably as
    /// `m + log(Σ exp(x - m))` with `m` the maximum, so large inputs do not
    /// overflow. When `m` is infinite the shift is skipped (PyTorch does the
    /// same): an extent of only `-inf` gives `-inf`, one containing `+inf`
    /// gives `+inf`, and an empty extent gives `-inf` (the log of an empty
    /// sum). NaN propagates. Floats only.
    pub fn logsumexp(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::LogSumExp, dims, keepdim)
    }

    /// The log-sum-exp of every element, as a rank-0 tensor.
    pub fn logsumexp_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::LogSumExp)
    }

    /// Whether every element over `dims` is nonzero, as `bool`. Any input
    /// dtype; NaN is nonzero and so counts as true. An empty extent is true.
    pub fn all(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::All, dims, keepdim)
    }

    /// Whether every element is nonzero, as a rank-0 bool tensor.
    pub fn all_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::All)
    }

    /// Whether any element over `dims` is nonzero, as `bool`. Any input
    /// dtype; NaN counts as true. An empty extent is false.
    pub fn any(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.reduce_op(ReduceOp::Any, dims, keepdim)
    }

    /// Whether any element is nonzero, as a rank-0 bool tensor.
    pub fn any_all(&self) -> Result<Tensor> {
        self.reduce_all(ReduceOp::Any)
    }

    /// `exp(x) / Σ exp(x)` along `dim`, computed stably by first
    /// subtracting the maximum along `dim`. Floats only.
    ///
    /// A slice along `dim` that is entirely `-inf` gives NaN everywhere in
    /// that slice (PyTorch's behaviour: `-inf - -inf` is NaN), and so does
    /// one containing `+inf` or NaN. A zero-size `dim` gives an empty
    /// result. Rank-0 tensors have no dim to normalise over.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, 0.0, 1000.0, 1000.0], [2, 2], Device::Reference)?;
    /// assert_eq!(x.softmax(-1)?.to_vec::<f64>()?, vec![0.5, 0.5, 0.5, 0.5]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn softmax(&self, dim: isize) -> Result<Tensor> {
        self.softmax_op(dim, false)
    }

    /// `x - log(Σ exp(x))` along `dim`, computed as
    /// `(x - m) - log(Σ exp(x - m))` with `m` the maximum: more accurate
    /// than `log(softmax(x))` where softmax underflows. Same NaN cases as
    /// [`Tensor::softmax`]. Floats only.
    pub fn log_softmax(&self, dim: isize) -> Result<Tensor> {
        self.softmax_op(dim, true)
    }

    /// Layer normalization without weight and bias: each slice over the
    /// last `normalized_dims` dims becomes `(x - mean) / sqrt(var + eps)`,
    /// with the variance dividing by the count (as PyTorch's
    /// `layer_norm`). Floats only; the result has `x`'s shape.
    ///
    /// One backend call (a fused kernel where the backend has one), and
    /// one recorded node whose backward is
    /// `rstd · (g - mean(g) - y · mean(g · y))` over the same dims.
    ///
    /// `normalized_dims` must be between 1 and the rank, and `eps` finite
    /// and `>= 0` ([`Error::InvalidArgument`] otherwise). A slice of equal
    /// values gives 0 when `eps > 0` and NaN (`0 / 0`) when `eps == 0`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // Row [1, 3]: mean 2, variance 1, so (x - 2) / 1.
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0, 5.0, 5.0], [2, 2], Device::Reference)?;
    /// assert_eq!(x.layer_norm(1, 0.0)?.to_vec::<f64>()?[..2], [-1.0, 1.0]);
    /// assert_eq!(x.layer_norm(1, 1e-5)?.to_vec::<f64>()?[2..], [0.0, 0.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn layer_norm(&self, normalized_dims: usize, eps: f64) -> Result<Tensor> {
        const NAME: &str = "layer_norm";
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType {
                op: NAME,
                dtype: self.dtype(),
                hint: FLOAT_ONLY_HINT,
            });
        }
        if normalized_dims == 0 || normalized_dims > self.rank() {
            return Err(Error::invalid(
                NAME,
                "normalized_dims",
                format!(
                    "counts the trailing dims normalized over: 1 to {} for shape {}, got {normalized_dims}",
                    self.rank(),
                    self.shape()
                ),
            ));
        }
        if !(eps.is_finite() && eps >= 0.0) {
            return Err(Error::invalid(
                NAME,
                "eps",
                format!("must be finite and >= 0, got {eps}"),
            ));
        }
        crate::tensor::probe_result("layer_norm", self.shape(), self.dtype(), self.device())?;
        let storage = self.backend()?.layer_norm(self, normalized_dims, eps)?;
        let out = Tensor::from_storage(storage, self.shape().clone());
        Ok(crate::autograd::rules::layer_norm(
            self,
            normalized_dims,
            eps,
            out,
        ))
    }

    /// A reduction over every dim, giving a rank-0 tensor.
    fn reduce_all(&self, op: ReduceOp) -> Result<Tensor> {
        let all: Vec<isize> = (0..self.rank() as isize).collect();
        self.reduce_op(op, &all, false)
    }

    /// The chokepoint of every reduction: validation, output dtype, the
    /// backend call with the keepdim shape, and the squeezing view.
    fn reduce_op(&self, op: ReduceOp, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        let name = op.name();
        let reduced = normalize_dims(name, dims, self.rank())?;
        let out_dtype = reduce_dtype(op, self.dtype())?;
        if let ReduceOp::Var { correction } | ReduceOp::Std { correction } = op {
            if !correction.is_finite() {
                return Err(Error::invalid(
                    name,
                    "correction",
                    format!("must be finite, got {correction}"),
                ));
            }
        }
        let extent: usize = reduced.iter().map(|&d| self.dims()[d]).product();
        let has_identity = !matches!(
            op,
            ReduceOp::Max | ReduceOp::Min | ReduceOp::ArgMax | ReduceOp::ArgMin
        );
        if extent == 0 && !has_identity {
            return Err(Error::EmptyReduction {
                op: name,
                shape: self.shape().clone(),
                dims: reduced,
            });
        }
        let kept = keepdim_shape(self.shape(), &reduced);
        // A view's elements may be read whole (the reference reads every
        // reduction in f64): `sum_all` of a 2^40-element broadcast of one
        // row must be a typed error, not a host copy of it.
        if !self.is_contiguous() {
            crate::tensor::probe_result(name, self.shape(), DType::F64, self.device())?;
        }
        // Reducing an empty dim leaves the others: [0, 2^40] summed over
        // dim 0 is 2^40 zeros.
        crate::tensor::probe_result(name, &kept, out_dtype, self.device())?;
        let storage = self.backend()?.reduce(op, self, &reduced, out_dtype)?;
        let out = Tensor::from_storage(storage, kept);
        let out = crate::autograd::rules::reduce(op, self, &reduced, out);
        if keepdim {
            return Ok(out);
        }
        let squeezed: Vec<usize> = (0..self.rank())
            .filter(|d| !reduced.contains(d))
            .map(|d| self.dims()[d])
            .collect();
        out.view(Shape::from(squeezed))
    }

    /// The chokepoint of softmax and log-softmax.
    fn softmax_op(&self, dim: isize, log: bool) -> Result<Tensor> {
        let name = if log { "log_softmax" } else { "softmax" };
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType {
                op: name,
                dtype: self.dtype(),
                hint: FLOAT_ONLY_HINT,
            });
        }
        let dim = normalize_dim(name, dim, self.rank())?;
        crate::tensor::probe_result(name, self.shape(), self.dtype(), self.device())?;
        let storage = self.backend()?.softmax(self, dim, log)?;
        let out = Tensor::from_storage(storage, self.shape().clone());
        Ok(crate::autograd::rules::softmax(self, dim, log, out))
    }
}

/// The output dtype of a reduction of `dtype`, or why there is none.
fn reduce_dtype(op: ReduceOp, dtype: DType) -> Result<DType> {
    use ReduceOp::*;
    Ok(match op {
        Sum | Prod if dtype.is_float() => dtype,
        Sum | Prod => DType::I64,
        Mean | Var { .. } | Std { .. } | LogSumExp if dtype.is_float() => dtype,
        Mean | Var { .. } | Std { .. } | LogSumExp => {
            return Err(Error::UnsupportedDType {
                op: op.name(),
                dtype,
                hint: FLOAT_ONLY_HINT,
            });
        }
        Max | Min => dtype,
        ArgMax | ArgMin => DType::I64,
        All | Any => DType::Bool,
    })
}
