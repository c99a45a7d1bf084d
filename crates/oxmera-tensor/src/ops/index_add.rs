//! Front end: `index_add` and `index_copy`, as PyTorch's: whole slices of
//! a source written (or added) into a copy of `self` at the positions a
//! 1-D index names along a dim.
//!
//! Both are `scatter`s with the index stretched (a stride-0 `expand`) to
//! the source's shape, so every backend runs them with its `scatter`
//! kernel and the gradients are `scatter`'s, which are PyTorch's:
//! `index_add` passes `g` to `self` and `alpha · g[index]` to the source;
//! `index_copy` passes `g` to `self` with the overwritten slices zeroed,
//! and `g[index]` to the source.

use oxmera_core::{DType, Error, Result, Shape, normalize_dim};

use super::index::{check_range, same_device, same_dtype};
use crate::Tensor;

impl Tensor {
    /// A copy of `self` with `alpha · source` added along `dim` at the
    /// positions `index` names, as `torch.index_add(x, dim, index, source,
    /// alpha=alpha)`: slice `i` of `source` along `dim` is added to slice
    /// `index[i]` of the copy, and repeated positions add up.
    ///
    /// `index` is 0-d or 1-D, `i64` or `i32`, with values in
    /// `0..dims[dim]`; `source` has `self`'s dtype and rank and its shape,
    /// except `index.numel()` along `dim`. Floats accumulate as
    /// [`Tensor::scatter_add`] does (the reference exactly in `f64`,
    /// rounded once; PyTorch adds in index order in the dtype); integer
    /// `alpha` must be integral; bool is not defined (PyTorch ORs).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // Rows 0 and 2 of a 3×2 zero matrix get [1, 2] twice and [3, 4].
    /// let x = Tensor::zeros([3, 2], oxmera_core::DType::F32, Device::Reference)?;
    /// let index = Tensor::from_vec(vec![0i64, 2, 0], [3], Device::Reference)?;
    /// let source = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 1.0, 2.0], [3, 2], Device::Reference)?;
    /// let y = x.index_add(0, &index, &source, 1.0)?;
    /// assert_eq!(y.to_vec::<f32>()?, [2.0, 4.0, 0.0, 0.0, 3.0, 4.0]);
    /// let y = x.index_add(0, &index, &source, -0.5)?;
    /// assert_eq!(y.to_vec::<f32>()?, [-1.0, -2.0, 0.0, 0.0, -1.5, -2.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn index_add(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        alpha: f64,
    ) -> Result<Tensor> {
        const OP: &str = "index_add";
        if self.dtype() == DType::Bool {
            return Err(Error::UnsupportedDType {
                op: OP,
                dtype: DType::Bool,
                hint: "cast to an integer or float dtype first",
            });
        }
        // 2^63: the first float past i64's range (`as` would clamp to it).
        const I64_END: f64 = 9_223_372_036_854_775_808.0;
        let integral = alpha.fract() == 0.0 && (-I64_END..I64_END).contains(&alpha);
        if !self.dtype().is_float() && !integral {
            return Err(Error::invalid(
                OP,
                "alpha",
                format!(
                    "must be an integer within i64's range for {} input, got {alpha}",
                    self.dtype()
                ),
            ));
        }
        let (x, d, index, source) = self.index_write_operands(OP, dim, index, source)?;
        let src = if alpha == 1.0 {
            source
        } else if x.dtype().is_float() {
            source.mul_scalar(alpha)?
        } else {
            source.mul_scalar(alpha as i64)?
        };
        let out = x.scatter_add(d as isize, &index, &src)?;
        out.reshape(self.shape().clone())
    }

    /// A copy of `self` with the slices of `source` along `dim` written at
    /// the positions `index` names, as `torch.index_copy(x, dim, index,
    /// source)`. Operands as for [`Tensor::index_add`] (every dtype, bool
    /// too). Where `index` repeats a position the last slice in index
    /// order wins (PyTorch leaves it unspecified); the source gradient
    /// still reaches every slice, as in PyTorch.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![0i64, 0, 0, 0], [4], Device::Reference)?;
    /// let index = Tensor::from_vec(vec![3i64, 1], [2], Device::Reference)?;
    /// let source = Tensor::from_vec(vec![7i64, 9], [2], Device::Reference)?;
    /// assert_eq!(x.index_copy(0, &index, &source)?.to_vec::<i64>()?, [0, 9, 0, 7]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn index_copy(&self, dim: isize, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        let (x, d, index, source) = self.index_write_operands("index_copy", dim, index, source)?;
        let out = x.scatter(d as isize, &index, &source)?;
        out.reshape(self.shape().clone())
    }

    /// The checked operands of `index_add` / `index_copy`, as `scatter`
    /// takes them: `self` (a 0-d tensor as one element), the dim, the
    /// index stretched to the source's shape, and the source.
    fn index_write_operands(
        &self,
        op: &'static str,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
    ) -> Result<(Tensor, usize, Tensor, Tensor)> {
        let d = normalize_dim(op, dim, self.rank().max(1))?;
        same_device(op, self, source)?;
        same_device(op, self, index)?;
        same_dtype(op, self, source)?;
        if !matches!(index.dtype(), DType::I64 | DType::I32) {
            return Err(Error::UnsupportedDType {
                op,
                dtype: index.dtype(),
                hint: "indices must be i64 or i32",
            });
        }
        if index.rank() > 1 {
            return Err(Error::RankMismatch {
                op,
                expected: 1,
                shape: index.shape().clone(),
            });
        }
        if source.rank() != self.rank() {
            return Err(Error::RankMismatch {
                op,
                expected: self.rank(),
                shape: source.shape().clone(),
            });
        }
        // A 0-d self (and source) is one element along dim 0.
        let (x, source) = if self.rank() == 0 {
            (self.reshape([1])?, source.reshape([1])?)
        } else {
            (self.clone(), source.clone())
        };
        let k = index.numel();
        let mut want = x.dims().to_vec();
        want[d] = k;
        if source.dims() != want.as_slice() {
            return Err(Error::ShapeMismatch {
                op,
                lhs: Shape::from(want),
                rhs: source.shape().clone(),
            });
        }
        let host = index.to_host()?;
        let values: Vec<i64> = (0..host.len()).map(|i| host.get_i64(i)).collect();
        check_range(op, &values, d, x.dims()[d])?;
        let mut along = vec![1; x.rank()];
        along[d] = k;
        let index = index.reshape(along)?.expand(source.shape().clone())?;
        Ok((x, d, index, source))
    }
}
