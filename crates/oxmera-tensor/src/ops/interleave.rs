//! Front end: `repeat_interleave`, as PyTorch's: each element repeated in
//! place along a dim (`[a, b]` → `[a, a, b, b]`), where `repeat` tiles
//! the whole tensor (`[a, b, a, b]`).
//!
//! With one count for every element it is a view and a copy (a size-1
//! dim stretched by a stride-0 `expand`, then merged), so its gradient is
//! `expand`'s sum. With a count per element the result's length depends
//! on the counts, which are read to the host (as `sort` reads its keys);
//! the positions they make are then `index_select`ed on the tensor's own
//! device, so the gradient is `index_select`'s: each output's gradient
//! added back to the element it copies.

use oxmera_core::{DType, Error, Result, Shape, normalize_dim};

use crate::Tensor;

const NAME: &str = "repeat_interleave";

impl Tensor {
    /// Every element repeated `repeats` times along `dim`, in place, as
    /// `torch.repeat_interleave(x, repeats, dim)`; `dim: None` flattens
    /// `self` first (a 1-D result, as PyTorch's `dim=None`). A rank-0
    /// tensor has no dim to name ([`Error::DimOutOfRange`]) but can be
    /// flattened. `repeats = 0` gives an empty dim.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // [[1, 2],
    /// //  [3, 4]]
    /// let x = Tensor::from_vec(vec![1i64, 2, 3, 4], [2, 2], Device::Reference)?;
    /// assert_eq!(x.repeat_interleave(2, None)?.to_vec::<i64>()?, [1, 1, 2, 2, 3, 3, 4, 4]);
    /// let rows = x.repeat_interleave(2, Some(0))?;
    /// assert_eq!(rows.dims(), &[4, 2]);
    /// assert_eq!(rows.to_vec::<i64>()?, [1, 2, 1, 2, 3, 4, 3, 4]);
    /// assert_eq!(x.repeat_interleave_counts(&[1, 3], Some(1))?.to_vec::<i64>()?, [1, 2, 2, 2, 3, 4, 4, 4]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn repeat_interleave(&self, repeats: usize, dim: Option<isize>) -> Result<Tensor> {
        let (x, d) = self.interleave_input(dim)?;
        let dims = x.dims();
        // [.., n, ..] → [.., n, 1, ..] → [.., n, r, ..] → [.., n·r, ..]
        let mut split = dims.to_vec();
        split.insert(d + 1, 1);
        let mut stretched = split.clone();
        stretched[d + 1] = repeats;
        let mut merged = dims.to_vec();
        merged[d] = dims[d].checked_mul(repeats).ok_or_else(|| {
            Error::invalid(
                NAME,
                "repeats",
                format!("{} × {repeats} elements overflow", dims[d]),
            )
        })?;
        x.reshape(split)?.expand(stretched)?.reshape(merged)
    }

    /// Element `i` along `dim` repeated `counts[i]` times, as
    /// `torch.repeat_interleave(x, counts, dim)` with a tensor of counts:
    /// one count per element along `dim` (or one count for all of them).
    /// `dim: None` flattens `self` first. Another number of counts is
    /// [`Error::InvalidArgument`].
    pub fn repeat_interleave_counts(&self, counts: &[usize], dim: Option<isize>) -> Result<Tensor> {
        let (x, d) = self.interleave_input(dim)?;
        let n = x.dims()[d];
        if counts.len() == 1 {
            return self.repeat_interleave(counts[0], dim);
        }
        if counts.len() != n {
            return Err(Error::invalid(
                NAME,
                "repeats",
                format!(
                    "{} counts for the {n} elements along dim {d} of {}",
                    counts.len(),
                    x.shape()
                ),
            ));
        }
        let total = counts
            .iter()
            .try_fold(0usize, |t, &c| t.checked_add(c))
            .ok_or_else(|| Error::invalid(NAME, "repeats", "the counts' sum overflows"))?;
        let mut out_dims = x.dims().to_vec();
        out_dims[d] = total;
        let out_shape = Shape::from(out_dims);
        crate::tensor::probe_result(NAME, &out_shape, x.dtype(), x.device())?;
        if x.numel() == 0 {
            // Nothing to copy, however long the positions would be — but
            // the result stays in the graph, as PyTorch's does: x itself
            // when the empty dim is `d` (no counts, so nothing added), else
            // one empty slice of x broadcast along `d`.
            return if x.dims()[d] == 0 {
                x.reshape(out_shape)
            } else {
                x.narrow(d as isize, 0, 1)?.broadcast_to(out_shape)
            };
        }
        // The positions are i64, possibly wider than the result's dtype.
        crate::tensor::probe_result(NAME, &Shape::from([total]), DType::I64, x.device())?;
        let mut positions = Vec::with_capacity(total);
        for (i, &c) in counts.iter().enumerate() {
            positions.extend(std::iter::repeat_n(i as i64, c));
        }
        let index = Tensor::from_vec(positions, [total], x.device())?;
        x.index_select(d as isize, &index)
    }

    /// [`Tensor::repeat_interleave_counts`] with the counts in a tensor, as
    /// PyTorch takes them: `i64` or `i32`, 0-d or 1-D, none negative (read
    /// to the host: the result's length depends on them). Another dtype is
    /// [`Error::UnsupportedDType`], a negative count or a rank above 1
    /// [`Error::InvalidArgument`].
    pub fn repeat_interleave_tensor(&self, counts: &Tensor, dim: Option<isize>) -> Result<Tensor> {
        if !matches!(counts.dtype(), DType::I64 | DType::I32) {
            return Err(Error::UnsupportedDType {
                op: NAME,
                dtype: counts.dtype(),
                hint: "the counts are i64 or i32",
            });
        }
        if counts.rank() > 1 {
            return Err(Error::invalid(
                NAME,
                "repeats",
                format!("the counts are 0-d or 1-D, got shape {}", counts.shape()),
            ));
        }
        let values = counts.to_dtype(DType::I64)?.to_vec::<i64>()?;
        let counts = values
            .iter()
            .map(|&c| usize::try_from(c))
            .collect::<std::result::Result<Vec<usize>, _>>()
            .map_err(|_| Error::invalid(NAME, "repeats", "a count is negative"))?;
        self.repeat_interleave_counts(&counts, dim)
    }

    /// `self` and the dim to repeat along: flattened for `None`.
    fn interleave_input(&self, dim: Option<isize>) -> Result<(Tensor, usize)> {
        match dim {
            None => Ok((self.reshape([self.numel()])?, 0)),
            Some(dim) => Ok((self.clone(), normalize_dim(NAME, dim, self.rank())?)),
        }
    }
}
