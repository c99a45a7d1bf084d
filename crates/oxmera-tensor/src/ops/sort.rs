//! Sorting along a dim: `sort`, `argsort`, `topk`, `kthvalue` and `median`,
//! as PyTorch has them.
//!
//! The order is the backend's ([`crate::Backend::sort`]: the reference
//! sorts on the host, a GPU backend may run a sorting network), and the
//! values are then gathered on the tensor's own device by the indices, so
//! the values' gradient is `gather`'s: each output's gradient goes back to the element
//! it came from. The order is total and stable: NaN sorts above every
//! number (last ascending, first descending, as in PyTorch), and equal
//! elements keep their order, so the indices are deterministic.

use oxmera_core::{DType, Error, Result, normalize_dim};

use crate::{Tensor, keepdim_shape};

impl Tensor {
    /// `self` sorted along `dim`, ascending unless `descending`, with the
    /// index each value came from (`I64`), as `torch.sort(x, dim,
    /// descending, stable=True)`: NaN is larger than every number, ties
    /// keep their order. Every dtype sorts (bool as `false < true`); a 0-d
    /// tensor is its own sort.
    ///
    /// ```
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// # use oxmera_reference as _;
    /// let x = Tensor::from_vec(vec![3.0f32, 1.0, 2.0, 0.0, f32::NAN, -1.0], [2, 3], Device::Reference)?;
    /// let (values, indices) = x.sort(-1, false)?;
    /// assert_eq!(values.narrow(0, 0, 1)?.to_vec::<f32>()?, [1.0, 2.0, 3.0]);
    /// assert_eq!(indices.to_vec::<i64>()?, [1, 2, 0, 2, 0, 1]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn sort(&self, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        let indices = self.sort_indices("sort", dim, descending)?;
        if self.rank() == 0 {
            return Ok((self.clone(), indices));
        }
        Ok((self.gather(dim, &indices)?, indices))
    }

    /// The indices that sort `self` along `dim` (the second half of
    /// [`Tensor::sort`]), `I64`.
    pub fn argsort(&self, dim: isize, descending: bool) -> Result<Tensor> {
        self.sort_indices("argsort", dim, descending)
    }

    /// The `k` largest elements along `dim` (the smallest unless
    /// `largest`), in order, with their indices, as `torch.topk(x, k, dim,
    /// largest, sorted=True)`: NaN counts as the largest. `k` larger than
    /// the dim is [`Error::InvalidArgument`].
    pub fn topk(&self, k: usize, dim: isize, largest: bool) -> Result<(Tensor, Tensor)> {
        let op = "topk";
        let d = normalize_dim(op, dim, self.rank().max(1))?;
        let extent = if self.rank() == 0 { 1 } else { self.dims()[d] };
        if k > extent {
            return Err(Error::invalid(
                op,
                "k",
                format!("k = {k} is more than the {extent} elements along dim {d}"),
            ));
        }
        if self.rank() == 0 {
            // As a one-element vector; k = 1 gives the 0-d tensor back.
            let (values, indices) = self.reshape([1])?.topk(k, 0, largest)?;
            return if k == 1 {
                Ok((values.reshape([])?, indices.reshape([])?))
            } else {
                Ok((values, indices))
            };
        }
        let indices = self
            .sort_indices(op, dim, largest)?
            .narrow(d as isize, 0, k)?;
        Ok((self.gather(d as isize, &indices)?, indices))
    }

    /// The `k`-th smallest element (1-based) of every slice along `dim`,
    /// with its index, as `torch.kthvalue(x, k, dim, keepdim)`: NaN counts
    /// as the largest, and of equal values the first in the slice is the
    /// one whose index is given. `k` outside `1..=extent` is
    /// [`Error::InvalidArgument`]. The gradient goes to that element.
    ///
    /// ```
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// # use oxmera_reference as _;
    /// let x = Tensor::from_vec(vec![5.0f32, 1.0, 4.0, 2.0], [4], Device::Reference)?;
    /// let (value, index) = x.kthvalue(2, 0, false)?;
    /// assert_eq!((value.item()?, index.to_vec::<i64>()?), (2.0, vec![3]));
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn kthvalue(&self, k: usize, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let op = "kthvalue";
        let (x, d) = self.as_slices(op, dim)?;
        let extent = x.dims()[d];
        if k == 0 || k > extent {
            return Err(Error::invalid(
                op,
                "k",
                format!("k = {k} is outside 1..={extent}, the elements along dim {d}"),
            ));
        }
        let indices =
            x.sort_indices(op, d as isize, false)?
                .narrow(d as isize, (k - 1) as isize, 1)?;
        let values = x.gather(d as isize, &indices)?;
        self.finish_selection(values, indices, d, keepdim)
    }

    /// The median of every slice along `dim`, with its index, as
    /// `torch.median(x, dim, keepdim)`: of an even count the lower of the
    /// two middle values (no average, so the result is an element and the
    /// gradient goes to it), and NaN — with the index of the slice's first
    /// NaN — where a slice holds one (`torch.nanmedian` would skip them).
    ///
    /// ```
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// # use oxmera_reference as _;
    /// let x = Tensor::from_vec(vec![3.0f32, 1.0, 4.0, 2.0, 9.0, f32::NAN], [2, 3], Device::Reference)?;
    /// let (values, indices) = x.median(1, false)?;
    /// let v = values.to_vec::<f32>()?;
    /// assert_eq!(v[0], 3.0);
    /// assert!(v[1].is_nan());
    /// assert_eq!(indices.to_vec::<i64>()?, [0, 2]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn median(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let op = "median";
        let (x, d) = self.as_slices(op, dim)?;
        let extent = x.dims()[d];
        if extent == 0 {
            return Err(Error::invalid(
                op,
                "dim",
                format!("dim {d} is empty: a median needs at least one element"),
            ));
        }
        let order = x.sort_indices(op, d as isize, false)?;
        let sorted = x.gather(d as isize, &order)?;
        // Sorted ascending, NaNs come last: where a slice has `m > 0` of
        // them, position `extent - m` holds its first NaN (the sort is
        // stable); otherwise the lower middle, `(extent - 1) / 2`.
        let nans = if x.dtype().is_float() {
            x.isnan()?.to_dtype(DType::I64)?.sum(&[d as isize], true)?
        } else {
            Tensor::zeros(keepdim_shape(x.shape(), &[d]), DType::I64, x.device())?
        };
        let middle = ((extent - 1) / 2) as i64;
        let first_nan = nans.neg()?.add_scalar(extent as i64)?;
        let lower_middle = Tensor::full(nans.shape().clone(), middle, DType::I64, x.device())?;
        let at = Tensor::where_(&nans.gt_scalar(0)?, &first_nan, &lower_middle)?;
        let indices = order.gather(d as isize, &at)?;
        let values = sorted.gather(d as isize, &at)?;
        self.finish_selection(values, indices, d, keepdim)
    }

    /// The median of all elements (the flattened tensor), 0-d; see
    /// [`Tensor::median`].
    pub fn median_all(&self) -> Result<Tensor> {
        let flat = self.reshape([self.numel()])?;
        Ok(flat.median(0, false)?.0)
    }

    /// `self` as slices along `dim`: a 0-d tensor as a one-element vector.
    fn as_slices(&self, op: &'static str, dim: isize) -> Result<(Tensor, usize)> {
        let d = normalize_dim(op, dim, self.rank().max(1))?;
        let x = if self.rank() == 0 {
            self.reshape([1])?
        } else {
            self.clone()
        };
        Ok((x, d))
    }

    /// The selected `[.., 1, ..]` values and indices in `self`'s rank:
    /// the dim kept or dropped (a 0-d input gives 0-d results).
    fn finish_selection(
        &self,
        values: Tensor,
        indices: Tensor,
        d: usize,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        if self.rank() == 0 {
            return Ok((values.reshape([])?, indices.reshape([])?));
        }
        if keepdim {
            return Ok((values, indices));
        }
        Ok((values.squeeze(d as isize)?, indices.squeeze(d as isize)?))
    }

    /// The stable sorting permutation of every slice along `dim`, as an
    /// `I64` tensor of `self`'s shape on `self`'s device: the backend's
    /// [`crate::Backend::sort`] (the reference's on the host, a kernel
    /// where the device has one).
    fn sort_indices(&self, op: &'static str, dim: isize, descending: bool) -> Result<Tensor> {
        // A 0-d tensor sorts along dim 0 or -1, as in PyTorch.
        let d = normalize_dim(op, dim, self.rank().max(1))?;
        if self.rank() == 0 {
            return Tensor::zeros([], DType::I64, self.device());
        }
        if self.numel() == 0 {
            // Nothing to order, however many slices the other dims make.
            return Tensor::zeros(self.shape().clone(), DType::I64, self.device());
        }
        let storage = self.backend()?.sort(self, d, descending)?;
        Ok(Tensor::from_storage(storage, self.shape().clone()))
    }
}
