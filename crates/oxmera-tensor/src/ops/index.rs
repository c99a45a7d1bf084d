//! Front end: joining, indexing, padding and reordering.
//!
//! Every op here checks devices, dtypes, dims and index ranges, then calls
//! exactly one private chokepoint per backend method (`cat_op`,
//! `index_select_op`, `gather_op`, `scatter_op`, `pad_op`, `flip_op`,
//! `triangle_op`), which is where reverse-mode autograd will record them.
//!
//! Index tensors may be `i64` or `i32`; they are converted to `i64` before
//! dispatch, so backends see one index dtype. Their values are read on the
//! host to check the ranges: an out-of-range index is a typed error here,
//! never undefined behaviour in a backend. That costs one device-to-host
//! copy of the index per call, which is the price of that guarantee.
//! Negative indices are rejected (PyTorch's `index_select`, `gather` and
//! `scatter` reject them too; only its Python-level indexing wraps them).

use std::borrow::Borrow;

use oxmera_core::{DType, Error, Result, Scalar, Shape, normalize_dim, normalize_dims};

use crate::autograd::rules;
use crate::{HostBuffer, ScatterMode, Tensor};

/// Fails unless `b` is on `a`'s device.
pub(super) fn same_device(op: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.device() == b.device() {
        Ok(())
    } else {
        Err(Error::DeviceMismatch {
            op,
            lhs: a.device(),
            rhs: b.device(),
        })
    }
}

/// Fails unless `b` has `a`'s dtype.
pub(super) fn same_dtype(op: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() == b.dtype() {
        Ok(())
    } else {
        Err(Error::DTypeMismatch {
            op,
            lhs: a.dtype(),
            rhs: b.dtype(),
        })
    }
}

/// An index tensor in the backend's index dtype (converted on its
/// device), each value checked to lie in `0..size` — on the host by the
/// front end, or by the backend where the data lives when it says it
/// checks indices itself (then a bad index is a late error).
fn checked_index(
    op: &'static str,
    x: &Tensor,
    index: &Tensor,
    dim: usize,
    size: usize,
) -> Result<Tensor> {
    same_device(op, x, index)?;
    if !matches!(index.dtype(), DType::I64 | DType::I32) {
        return Err(Error::UnsupportedDType {
            op,
            dtype: index.dtype(),
            hint: "indices must be i64 or i32",
        });
    }
    let backend = x.backend()?;
    let checked_here = !backend.checks_indices();
    if checked_here {
        let host = index.to_host()?;
        let values: Vec<i64> = (0..host.len()).map(|i| host.get_i64(i)).collect();
        check_range(op, &values, dim, size)?;
    }
    in_index_dtype(index, backend.index_dtype(), checked_here)
}

/// `index` converted to `want` on its device. Narrowing `i64` to `i32`
/// saturates first, so a value out of `i32`'s range stays out of range
/// for a backend that checks on the device (a wrapped one might land
/// inside it) — unless the range was checked here (`in_range`), where
/// every value fits and the plain conversion is exact.
fn in_index_dtype(index: &Tensor, want: DType, in_range: bool) -> Result<Tensor> {
    if index.dtype() == want {
        return Ok(index.clone());
    }
    if index.dtype() == DType::I64 && want == DType::I32 && !in_range {
        let (lo, hi) = (f64::from(i32::MIN), f64::from(i32::MAX));
        return index.clamp(Some(lo), Some(hi))?.to_dtype(want);
    }
    index.to_dtype(want)
}

/// Fails with the first value outside `0..size`.
pub(super) fn check_range(op: &'static str, values: &[i64], dim: usize, size: usize) -> Result<()> {
    match values
        .iter()
        .find(|&&v| usize::try_from(v).map_or(true, |u| u >= size))
    {
        Some(&index) => Err(Error::IndexOutOfBounds {
            op,
            index,
            dim,
            size,
        }),
        None => Ok(()),
    }
}

/// Index ops are defined along a dim, so a rank-0 tensor has none to use.
fn need_rank_1(op: &'static str, x: &Tensor) -> Result<()> {
    if x.rank() == 0 {
        Err(Error::RankMismatch {
            op,
            expected: 1,
            shape: x.shape().clone(),
        })
    } else {
        Ok(())
    }
}

impl Tensor {
    /// Concatenates tensors along `dim` (negative counts from the end).
    ///
    /// Every member must have the dtype, device and rank of the first and
    /// the same extent in every other dim; members with zero extent along
    /// `dim` (or anywhere) are allowed and contribute nothing. An empty
    /// list is an [`Error::InvalidArgument`]; rank-0 members are an
    /// [`Error::RankMismatch`] (there is no dim to join along — unsqueeze
    /// them, or use [`Tensor::stack`]). Accepts `&[Tensor]` and `&[&Tensor]`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let a = Tensor::from_vec(vec![1i64, 2], [1, 2], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![3i64, 4, 5, 6], [2, 2], Device::Reference)?;
    /// let c = Tensor::cat(&[&a, &b], 0)?;
    /// assert_eq!(c.dims(), &[3, 2]);
    /// assert_eq!(c.to_vec::<i64>()?, vec![1, 2, 3, 4, 5, 6]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn cat<T: Borrow<Tensor>>(xs: &[T], dim: isize) -> Result<Tensor> {
        let op = "cat";
        let xs: Vec<&Tensor> = xs.iter().map(Borrow::borrow).collect();
        let Some(&first) = xs.first() else {
            return Err(Error::invalid(
                op,
                "tensors",
                "expected at least one tensor to concatenate, got none",
            ));
        };
        need_rank_1(op, first)?;
        let d = normalize_dim(op, dim, first.rank())?;
        let mut out_dims = first.dims().to_vec();
        out_dims[d] = 0;
        for &x in &xs {
            same_device(op, first, x)?;
            same_dtype(op, first, x)?;
            let other_dims_agree = x.rank() == first.rank()
                && (0..x.rank()).all(|i| i == d || x.dims()[i] == first.dims()[i]);
            if !other_dims_agree {
                return Err(Error::ShapeMismatch {
                    op,
                    lhs: first.shape().clone(),
                    rhs: x.shape().clone(),
                });
            }
            // Saturating: a sum past usize is a shape no tensor may have,
            // which the element limit below refuses.
            out_dims[d] = out_dims[d].saturating_add(x.dims()[d]);
        }
        let out = Shape::from(out_dims);
        crate::tensor::probe_result(op, &out, first.dtype(), first.device())?;
        cat_op(&xs, d, out)
    }

    /// Joins equally shaped tensors along a new dim inserted at `dim`
    /// (which may be `rank`, or negative counting from `rank + 1`'s end):
    /// each member is unsqueezed, then they are concatenated.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], [2], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![3.0f32, 4.0], [2], Device::Reference)?;
    /// let s = Tensor::stack(&[&a, &b], 1)?;
    /// assert_eq!(s.dims(), &[2, 2]);
    /// assert_eq!(s.to_vec::<f32>()?, vec![1.0, 3.0, 2.0, 4.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn stack<T: Borrow<Tensor>>(xs: &[T], dim: isize) -> Result<Tensor> {
        let op = "stack";
        let xs: Vec<&Tensor> = xs.iter().map(Borrow::borrow).collect();
        let Some(&first) = xs.first() else {
            return Err(Error::invalid(
                op,
                "tensors",
                "expected at least one tensor to stack, got none",
            ));
        };
        let d = normalize_dim(op, dim, first.rank() + 1)?;
        let mut out_dims = first.dims().to_vec();
        out_dims.insert(d, xs.len());
        let out = Shape::from(out_dims);
        crate::tensor::probe_result(op, &out, first.dtype(), first.device())?;
        let mut parts = Vec::with_capacity(xs.len());
        for &x in &xs {
            same_device(op, first, x)?;
            same_dtype(op, first, x)?;
            if x.shape() != first.shape() {
                return Err(Error::ShapeMismatch {
                    op,
                    lhs: first.shape().clone(),
                    rhs: x.shape().clone(),
                });
            }
            parts.push(x.unsqueeze(d as isize)?);
        }
        let parts: Vec<&Tensor> = parts.iter().collect();
        cat_op(&parts, d, out)
    }

    /// Picks the slices of `dim` named by `indices`, in that order
    /// (repeats allowed): the result has `self`'s shape with `dim`'s extent
    /// replaced by the number of indices.
    ///
    /// `indices` is a 1-D `i64` or `i32` tensor on the same device, each
    /// value in `0..dims[dim]`. Negative indices are rejected with
    /// [`Error::IndexOutOfBounds`], as is any index past the end (the error
    /// names the first offending value).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::{Device, Error};
    /// let x = Tensor::from_vec(vec![10i64, 11, 20, 21, 30, 31], [3, 2], Device::Reference)?;
    /// let i = Tensor::from_vec(vec![2i64, 0, 2], [3], Device::Reference)?;
    /// assert_eq!(x.index_select(0, &i)?.to_vec::<i64>()?, vec![30, 31, 10, 11, 30, 31]);
    /// let bad = Tensor::from_vec(vec![3i64], [1], Device::Reference)?;
    /// assert!(matches!(x.index_select(0, &bad), Err(Error::IndexOutOfBounds { index: 3, .. })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn index_select(&self, dim: isize, indices: &Tensor) -> Result<Tensor> {
        let op = "index_select";
        need_rank_1(op, self)?;
        let d = normalize_dim(op, dim, self.rank())?;
        if indices.rank() != 1 {
            return Err(Error::RankMismatch {
                op,
                expected: 1,
                shape: indices.shape().clone(),
            });
        }
        let indices = checked_index(op, self, indices, d, self.dims()[d])?;
        let mut out_dims = self.dims().to_vec();
        out_dims[d] = indices.numel();
        index_select_op(self, d, &indices, Shape::from(out_dims))
    }

    /// Gathers along `dim`: for a 3-D tensor and `dim == 1`,
    /// `out[i][j][k] = self[i][index[i][j][k]][k]`. The result has
    /// `index`'s shape.
    ///
    /// `index` is `i64` or `i32`, of `self`'s rank, no larger than `self`
    /// in any dim but `dim` (as in PyTorch), with values in
    /// `0..dims[dim]`; negative values are rejected with
    /// [`Error::IndexOutOfBounds`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2], Device::Reference)?;
    /// let i = Tensor::from_vec(vec![1i64, 1, 0, 1], [2, 2], Device::Reference)?;
    /// assert_eq!(x.gather(1, &i)?.to_vec::<f32>()?, vec![2.0, 2.0, 3.0, 4.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn gather(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let op = "gather";
        need_rank_1(op, self)?;
        let d = normalize_dim(op, dim, self.rank())?;
        check_index_shape(op, self, index, d)?;
        let index = checked_index(op, self, index, d, self.dims()[d])?;
        let out_shape = index.shape().clone();
        gather_op(self, d, &index, out_shape)
    }

    /// A copy of `self` with the values of `src` written along `dim` at
    /// the positions `index` names: for `dim == 0` of a 2-D tensor,
    /// `out[index[i][j]][j] = src[i][j]`.
    ///
    /// When indices collide, the **last write in source order wins**
    /// (source order is row-major over `index`). PyTorch leaves that case
    /// unspecified; oxmera defines it so every backend can be checked
    /// against the reference. To accumulate instead, use
    /// [`Tensor::scatter_add`].
    ///
    /// `index` (`i64` or `i32`) and `src` (of `self`'s dtype) have
    /// `self`'s rank; `index` is no larger than `src` in any dim and no
    /// larger than `self` in any dim but `dim`; only the leading
    /// `index`-shaped block of `src` is read. Index values must lie in
    /// `0..dims[dim]`; negative ones are rejected.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![0i64; 4], [4], Device::Reference)?;
    /// let i = Tensor::from_vec(vec![1i64, 3, 1], [3], Device::Reference)?;
    /// let s = Tensor::from_vec(vec![5i64, 6, 7], [3], Device::Reference)?;
    /// assert_eq!(x.scatter(0, &i, &s)?.to_vec::<i64>()?, vec![0, 7, 0, 6]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn scatter(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        self.scatter_with("scatter", dim, index, src, ScatterMode::Replace)
    }

    /// Like [`Tensor::scatter`], but values sent to the same position add
    /// up (and add to what `self` holds there). Floats accumulate in the
    /// backend's precision (the reference: exactly in `f64`, rounded
    /// once); integers wrap. Not defined for bool.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![0i64; 4], [4], Device::Reference)?;
    /// let i = Tensor::from_vec(vec![1i64, 3, 1], [3], Device::Reference)?;
    /// let s = Tensor::from_vec(vec![5i64, 6, 7], [3], Device::Reference)?;
    /// assert_eq!(x.scatter_add(0, &i, &s)?.to_vec::<i64>()?, vec![0, 12, 0, 6]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn scatter_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            return Err(Error::UnsupportedDType {
                op: "scatter_add",
                dtype: DType::Bool,
                hint: "cast to an integer or float dtype first",
            });
        }
        self.scatter_with("scatter_add", dim, index, src, ScatterMode::Add)
    }

    fn scatter_with(
        &self,
        op: &'static str,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        mode: ScatterMode,
    ) -> Result<Tensor> {
        let (d, index, src) = self.scatter_checks(op, dim, index, src)?;
        scatter_op(self, d, &index, &src, mode)
    }

    /// The checks of a scatter named `op`: the normalized dim, the
    /// validated index, and the index-shaped corner of `src` (a view).
    pub(super) fn scatter_checks(
        &self,
        op: &'static str,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
    ) -> Result<(usize, Tensor, Tensor)> {
        need_rank_1(op, self)?;
        let d = normalize_dim(op, dim, self.rank())?;
        same_device(op, self, src)?;
        same_dtype(op, self, src)?;
        check_index_shape(op, self, index, d)?;
        if src.rank() != index.rank() {
            return Err(Error::RankMismatch {
                op,
                expected: index.rank(),
                shape: src.shape().clone(),
            });
        }
        if let Some(i) = (0..src.rank()).find(|&i| index.dims()[i] > src.dims()[i]) {
            return Err(Error::invalid(
                op,
                "src",
                format!(
                    "index shape {} exceeds src shape {} at dim {i}",
                    index.shape(),
                    src.shape()
                ),
            ));
        }
        let index = checked_index(op, self, index, d, self.dims()[d])?;
        // Only the index-shaped corner of `src` takes part; narrowing is a
        // view, so the backend gets operands of one shape without a copy.
        let mut src = src.clone();
        for (i, &n) in index.dims().iter().enumerate() {
            src = src.narrow(i as isize, 0, n)?;
        }
        Ok((d, index, src))
    }

    /// Pads with `value`: `pads[i] = (before, after)` adds that many
    /// elements at the start and end of dim `i`.
    ///
    /// Convention: **one pair per dim, in dim order starting from the
    /// first**, so `pads.len()` must equal the rank. (PyTorch's `F.pad`
    /// instead takes a flat list that starts from the *last* dim and may
    /// cover only trailing dims; to pad only the last two dims of an NCHW
    /// tensor here, pass `(0, 0)` for N and C.) `value` is converted to the
    /// tensor's dtype as [`crate::Element`] converts `f64` (saturating
    /// into integers). Only constant padding is offered.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![1i64, 2], [1, 2], Device::Reference)?;
    /// let p = x.pad(&[(1, 0), (0, 2)], 9.0)?;
    /// assert_eq!(p.dims(), &[2, 4]);
    /// assert_eq!(p.to_vec::<i64>()?, vec![9, 9, 9, 9, 1, 2, 9, 9]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn pad(&self, pads: &[(usize, usize)], value: impl Into<Scalar>) -> Result<Tensor> {
        let op = "pad";
        let value = value.into().to_f64(op)?;
        if pads.len() != self.rank() {
            return Err(Error::invalid(
                op,
                "pads",
                format!(
                    "expected one (before, after) pair per dim of {} ({} pairs), got {}",
                    self.shape(),
                    self.rank(),
                    pads.len()
                ),
            ));
        }
        let mut out_dims = Vec::with_capacity(pads.len());
        for (&d, &(before, after)) in self.dims().iter().zip(pads) {
            let total = d
                .checked_add(before)
                .and_then(|t| t.checked_add(after))
                .ok_or_else(|| {
                    Error::invalid(op, "pads", format!("({before}, {after}) overflows a dim"))
                })?;
            out_dims.push(total);
        }
        let out = Shape::from(out_dims);
        crate::tensor::probe_result(op, &out, self.dtype(), self.device())?;
        // Round the value into the dtype here so that every backend pads
        // with exactly the same element.
        let value = HostBuffer::filled(self.dtype(), 1, value).get_f64(0);
        pad_op(self, pads, value, out)
    }

    /// Reverses the order of elements along each of `dims` (negative dims
    /// count from the end; duplicates are an error; an empty list copies).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6], [2, 3], Device::Reference)?;
    /// assert_eq!(x.flip(&[-1])?.to_vec::<i64>()?, vec![3, 2, 1, 6, 5, 4]);
    /// assert_eq!(x.flip(&[0, 1])?.to_vec::<i64>()?, vec![6, 5, 4, 3, 2, 1]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn flip(&self, dims: &[isize]) -> Result<Tensor> {
        let dims = normalize_dims("flip", dims, self.rank())?;
        flip_op(self, &dims)
    }

    /// The lower triangle of the last two dims (every leading dim is a
    /// batch): element `(i, j)` is kept when `j - i <= diagonal` and set to
    /// zero (false for bool) otherwise. `diagonal` 0 is the main diagonal,
    /// positive values reach above it, negative ones below. Rank ≥ 2.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6, 7, 8, 9], [3, 3], Device::Reference)?;
    /// assert_eq!(x.tril(0)?.to_vec::<i64>()?, vec![1, 0, 0, 4, 5, 0, 7, 8, 9]);
    /// assert_eq!(x.tril(-1)?.to_vec::<i64>()?, vec![0, 0, 0, 4, 0, 0, 7, 8, 0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle("tril", diagonal, false)
    }

    /// The upper triangle of the last two dims: element `(i, j)` is kept
    /// when `j - i >= diagonal`, zeroed otherwise. See [`Tensor::tril`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let x = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6, 7, 8, 9], [3, 3], Device::Reference)?;
    /// assert_eq!(x.triu(1)?.to_vec::<i64>()?, vec![0, 2, 3, 0, 0, 6, 0, 0, 0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        self.triangle("triu", diagonal, true)
    }

    fn triangle(&self, op: &'static str, diagonal: i64, upper: bool) -> Result<Tensor> {
        if self.rank() < 2 {
            return Err(Error::RankMismatch {
                op,
                expected: 2,
                shape: self.shape().clone(),
            });
        }
        triangle_op(self, diagonal, upper)
    }

    /// One-hot encoding of integer class indices: the result has `self`'s
    /// shape plus a last dim of `num_classes`, dtype `i64`, with a 1 at
    /// each element's class and 0 elsewhere.
    ///
    /// `self` must be `i64`, `i32` or `u8`, every value in
    /// `0..num_classes` (else [`Error::IndexOutOfBounds`], naming the
    /// value; its `dim` is the new class dim). Unlike PyTorch,
    /// `num_classes` is never inferred from the data: the output shape
    /// should not depend on the values.
    ///
    /// Built from other ops: zeros, then a [`Tensor::scatter`] of ones
    /// along the class dim.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let y = Tensor::from_vec(vec![2i64, 0], [2], Device::Reference)?;
    /// let h = y.one_hot(3)?;
    /// assert_eq!(h.dims(), &[2, 3]);
    /// assert_eq!(h.to_vec::<i64>()?, vec![0, 0, 1, 1, 0, 0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn one_hot(&self, num_classes: usize) -> Result<Tensor> {
        let op = "one_hot";
        if !matches!(self.dtype(), DType::I64 | DType::I32 | DType::U8) {
            return Err(Error::UnsupportedDType {
                op,
                dtype: self.dtype(),
                hint: "class indices must be an integer dtype",
            });
        }
        let mut out_dims = self.dims().to_vec();
        out_dims.push(num_classes);
        // Before anything is read or made: 2^63 classes fit no tensor.
        crate::tensor::probe_result(
            op,
            &Shape::from(out_dims.clone()),
            DType::I64,
            self.device(),
        )?;
        let classes = self.to_dtype(DType::I64)?;
        check_range(op, &classes.to_vec::<i64>()?, self.rank(), num_classes)?;
        let zeros = Tensor::zeros(out_dims, DType::I64, self.device())?;
        let index = classes.unsqueeze(-1)?;
        let ones = Tensor::ones(index.shape().clone(), DType::I64, self.device())?;
        zeros.scatter(-1, &index, &ones)
    }
}

/// `index` must have `x`'s rank and fit inside `x` in every dim but `dim`.
fn check_index_shape(op: &'static str, x: &Tensor, index: &Tensor, dim: usize) -> Result<()> {
    if index.rank() != x.rank() {
        return Err(Error::RankMismatch {
            op,
            expected: x.rank(),
            shape: index.shape().clone(),
        });
    }
    match (0..x.rank()).find(|&i| i != dim && index.dims()[i] > x.dims()[i]) {
        Some(i) => Err(Error::invalid(
            op,
            "index",
            format!(
                "index shape {} exceeds input shape {} at dim {i} (only dim {dim} may be larger)",
                index.shape(),
                x.shape()
            ),
        )),
        None => Ok(()),
    }
}

// The chokepoints: one per backend method.

fn cat_op(xs: &[&Tensor], dim: usize, out_shape: Shape) -> Result<Tensor> {
    let backend = xs[0].backend()?;
    // Nothing to copy: a backend's walk over the outer dims of an empty
    // result would cost their product ([2^40, 0] stacked took hours).
    let storage = if out_shape.numel() == 0 {
        backend.fill(xs[0].dtype(), 0, 0.0)?
    } else {
        backend.cat(xs, dim)?
    };
    Ok(rules::cat(
        xs,
        dim,
        Tensor::from_storage(storage, out_shape),
    ))
}

fn index_select_op(x: &Tensor, dim: usize, indices: &Tensor, out_shape: Shape) -> Result<Tensor> {
    crate::tensor::probe_result("index_select", &out_shape, x.dtype(), x.device())?;
    let storage = x.backend()?.index_select(x, dim, indices)?;
    let out = Tensor::from_storage(storage, out_shape);
    Ok(rules::index_select(x, dim, indices, out))
}

fn gather_op(x: &Tensor, dim: usize, index: &Tensor, out_shape: Shape) -> Result<Tensor> {
    crate::tensor::probe_result("gather", &out_shape, x.dtype(), x.device())?;
    let storage = x.backend()?.gather(x, dim, index)?;
    Ok(rules::gather(
        x,
        dim,
        index,
        Tensor::from_storage(storage, out_shape),
    ))
}

fn scatter_op(
    x: &Tensor,
    dim: usize,
    index: &Tensor,
    src: &Tensor,
    mode: ScatterMode,
) -> Result<Tensor> {
    crate::tensor::probe_result("scatter", x.shape(), x.dtype(), x.device())?;
    let storage = x.backend()?.scatter(x, dim, index, src, mode)?;
    let out = Tensor::from_storage(storage, x.shape().clone());
    Ok(rules::scatter(x, dim, index, src, mode, out))
}

fn pad_op(x: &Tensor, pads: &[(usize, usize)], value: f64, out_shape: Shape) -> Result<Tensor> {
    let storage = x.backend()?.pad(x, pads, value)?;
    Ok(rules::pad(
        x,
        pads,
        Tensor::from_storage(storage, out_shape),
    ))
}

fn flip_op(x: &Tensor, dims: &[usize]) -> Result<Tensor> {
    crate::tensor::probe_result("flip", x.shape(), x.dtype(), x.device())?;
    let storage = x.backend()?.flip(x, dims)?;
    Ok(rules::flip(
        x,
        dims,
        Tensor::from_storage(storage, x.shape().clone()),
    ))
}

fn triangle_op(x: &Tensor, diagonal: i64, upper: bool) -> Result<Tensor> {
    crate::tensor::probe_result("triangle", x.shape(), x.dtype(), x.device())?;
    let storage = x.backend()?.triangle(x, diagonal, upper)?;
    let out = Tensor::from_storage(storage, x.shape().clone());
    Ok(rules::triangle(x, diagonal, upper, out))
}
