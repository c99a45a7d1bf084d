//! Front end: adaptive pooling over NCHW input, as PyTorch's
//! `F.adaptive_avg_pool2d` and `F.adaptive_max_pool2d`: the caller names
//! the output size and each output `(i, j)` pools the window of rows
//! `floor(i·h/oh) .. ceil((i+1)·h/oh)` and the like for columns, so windows
//! may differ in size and overlap.
//!
//! Why a composite and not a Backend method: the windows depend only on
//! the sizes, so one host-built index expresses PyTorch's rule exactly.
//! Every window's elements are `index_select`ed from the flattened plane
//! into a `[n, c, oh, ow, L]` tensor (`L` the largest window's size,
//! shorter windows filled with copies of their own last row or column),
//! then reduced along the last dim — a `where`-masked sum divided by the
//! window's size for the mean, an `argmax` and one `gather` for the
//! maximum. Every backend runs it with the kernels it has, and the
//! gradients are those parts' (the mean's spread over each window; the
//! maximum's to the first largest element of each window, as PyTorch's).
//! The cost is the gathered copy, at most about four times the input (a
//! window is at most `⌈h/oh⌉ + 1` rows); a native kernel would avoid it,
//! which is the place a GPU backend would go native first.

use oxmera_core::{DType, Error, Result, Shape};

use super::conv::{need_float, positive_pair};
use crate::Tensor;

/// The rows (or columns) `start..end` that output `i` of `out` pools from
/// `len` inputs: `floor(i·len/out)` to `ceil((i+1)·len/out)`, PyTorch's rule.
pub fn adaptive_window(i: usize, len: usize, out: usize) -> (usize, usize) {
    let (i, len, out) = (i as u128, len as u128, out as u128);
    let start = i * len / out;
    let end = ((i + 1) * len).div_ceil(out);
    (start as usize, end as usize)
}

impl Tensor {
    /// Adaptive average pooling, as `F.adaptive_avg_pool2d(x, (oh, ow))`:
    /// `self` is `[n, c, h, w]` (or unbatched `[c, h, w]`), the result
    /// `[n, c, oh, ow]`, each output the mean of its window (see
    /// [`adaptive_window`]) — every window divides by its own size. `f16`
    /// and `bf16` are summed and divided in `f32` and rounded once, as
    /// PyTorch accumulates them.
    ///
    /// Errors: [`Error::UnsupportedDType`] for integers and bool,
    /// [`Error::RankMismatch`] unless the rank is 3 or 4,
    /// [`Error::InvalidArgument`] for a zero output size or an empty
    /// channel, height or width (PyTorch's "non-zero size for non-batch
    /// dimensions").
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // Rows 0..2 and 1..3 of a 3-row column: means 1.5 and 2.5.
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [1, 1, 3, 1], Device::Reference)?;
    /// let y = x.adaptive_avg_pool2d((2, 1))?;
    /// assert_eq!(y.to_vec::<f32>()?, [1.5, 2.5]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn adaptive_avg_pool2d(&self, output_size: (usize, usize)) -> Result<Tensor> {
        self.adaptive_pool2d("adaptive_avg_pool2d", output_size, false)
    }

    /// Adaptive max pooling, as `F.adaptive_max_pool2d(x, (oh, ow))`: the
    /// largest element of each window ([`adaptive_window`]); a NaN in a
    /// window makes that output NaN. The gradient goes to the first largest
    /// element of the window in row-major order (the first NaN where there
    /// is one), as PyTorch's. Arguments and errors as
    /// [`Tensor::adaptive_avg_pool2d`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 2.0, 4.0], [1, 1, 1, 4], Device::Reference)?;
    /// // Columns 0..2, 1..3 and 2..4.
    /// assert_eq!(x.adaptive_max_pool2d((1, 3))?.to_vec::<f32>()?, [5.0, 5.0, 4.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn adaptive_max_pool2d(&self, output_size: (usize, usize)) -> Result<Tensor> {
        self.adaptive_pool2d("adaptive_max_pool2d", output_size, true)
    }

    fn adaptive_pool2d(
        &self,
        op: &'static str,
        (oh, ow): (usize, usize),
        max: bool,
    ) -> Result<Tensor> {
        need_float(op, self)?;
        let unbatched = self.rank() == 3;
        if !unbatched && self.rank() != 4 {
            return Err(Error::RankMismatch {
                op,
                expected: 4,
                shape: self.shape().clone(),
            });
        }
        positive_pair(op, "output size", (oh, ow))?;
        let x = if unbatched {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        let &[n, c, h, w] = x.dims() else {
            unreachable!("rank checked above")
        };
        if c == 0 || h == 0 || w == 0 {
            return Err(Error::invalid(
                op,
                "input",
                format!(
                    "expected non-zero sizes for the non-batch dims, got shape {}",
                    self.shape()
                ),
            ));
        }
        let out_shape = Shape::from([n, c, oh, ow]);
        crate::tensor::probe_result(op, &out_shape, x.dtype(), x.device())?;
        let result = if n == 0 {
            Tensor::zeros(out_shape, x.dtype(), x.device())?
        } else {
            pool(op, &x, (oh, ow), max)?
        };
        if unbatched {
            result.squeeze(0)
        } else {
            Ok(result)
        }
    }
}

/// The pooling of a non-empty `[n, c, h, w]` tensor.
fn pool(op: &'static str, x: &Tensor, (oh, ow): (usize, usize), max: bool) -> Result<Tensor> {
    let &[n, c, h, w] = x.dims() else {
        unreachable!("rank checked by the caller")
    };
    let rows: Vec<(usize, usize)> = (0..oh).map(|i| adaptive_window(i, h, oh)).collect();
    let cols: Vec<(usize, usize)> = (0..ow).map(|j| adaptive_window(j, w, ow)).collect();
    let longest = |v: &[(usize, usize)]| v.iter().map(|(s, e)| e - s).max().unwrap_or(1);
    let (lh, lw) = (longest(&rows), longest(&cols));
    let l = lh * lw;
    let windows = oh
        .checked_mul(ow)
        .and_then(|v| v.checked_mul(l))
        .ok_or_else(|| Error::invalid(op, "output size", "the windows overflow"))?;
    crate::tensor::probe_result(op, &Shape::from([windows]), DType::I64, x.device())?;
    let gathered_shape = Shape::from([n, c, oh, ow, l]);
    crate::tensor::probe_result(op, &gathered_shape, x.dtype(), x.device())?;
    // Position (a, b) of window (i, j), in row-major window order; a
    // shorter window repeats its last row or column after its own
    // elements, so a repeat never precedes the element it copies.
    let mut index = Vec::with_capacity(windows);
    let mut inside = Vec::with_capacity(if max { 0 } else { windows });
    for &(rs, re) in &rows {
        for &(cs, ce) in &cols {
            for a in 0..lh {
                for b in 0..lw {
                    let r = (rs + a).min(re - 1);
                    let col = (cs + b).min(ce - 1);
                    index.push((r * w + col) as i64);
                    if !max {
                        inside.push(rs + a < re && cs + b < ce);
                    }
                }
            }
        }
    }
    let index = Tensor::from_vec(index, [windows], x.device())?;
    let flat = x.reshape([n, c, h * w])?;
    if max {
        let v = flat
            .index_select(2, &index)?
            .reshape(gathered_shape.clone())?;
        let first = v.argmax(4, true)?;
        return v.gather(4, &first)?.squeeze(4);
    }
    // The mean: f16 and bf16 in f32, rounded once at the end.
    let wide = match x.dtype() {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    };
    let v = flat
        .to_dtype(wide)?
        .index_select(2, &index)?
        .reshape(gathered_shape)?;
    let mask = Tensor::from_vec(inside, [oh, ow, l], x.device())?;
    let zero = Tensor::zeros([], wide, x.device())?;
    let sums = Tensor::where_(&mask, &v, &zero)?.sum(&[4], false)?;
    let sizes: Vec<f64> = rows
        .iter()
        .flat_map(|&(rs, re)| {
            cols.iter()
                .map(move |&(cs, ce)| ((re - rs) * (ce - cs)) as f64)
        })
        .collect();
    let sizes = super::host_floats(sizes, [oh, ow], wide, x.device())?;
    sums.div(&sizes)?.to_dtype(x.dtype())
}
