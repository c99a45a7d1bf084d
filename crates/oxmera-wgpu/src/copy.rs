//! The ops that only move elements — a contiguous copy, padding,
//! concatenation, flipping — for every dtype of four or eight bytes, by
//! one word-copying kernel (`copy_words`) between strided places.
//!
//! Each op is planned first (every place in the kernel's i32/u32 words,
//! or `None` and the host takes the op) and launched after, so a plan that
//! does not fit never leaves half an output behind.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::Value;
use oxmera_kernel::library;
use oxmera_tensor::{Storage, Tensor};

use crate::backend::WgpuBackend;

/// The block `copy_words` runs with (one of those it declares).
const BLOCK: u32 = 256;

/// A strided place, in elements: where element `c` of a shape lives is
/// `offset + Σ c_d·strides_d` (strides may be negative: a flip).
struct Place {
    strides: Vec<isize>,
    offset: isize,
}

impl Place {
    /// Where a tensor's elements live.
    fn of(x: &Tensor) -> Place {
        let layout = x.layout();
        Place {
            strides: layout
                .strides()
                .as_slice()
                .iter()
                .map(|&s| s as isize)
                .collect(),
            offset: layout.offset() as isize,
        }
    }

    /// The row-major place of `shape` at `offset`: a fresh output.
    fn dense(shape: &[usize], offset: isize) -> Place {
        let mut strides = vec![0isize; shape.len()];
        let mut step = 1isize;
        for d in (0..shape.len()).rev() {
            strides[d] = step;
            step *= shape[d] as isize;
        }
        Place { strides, offset }
    }
}

/// One launch of `copy_words`, in words.
struct WordCopy {
    shape: Vec<u32>,
    from_strides: Vec<u32>,
    to_strides: Vec<u32>,
    from_offset: i32,
    to_offset: i32,
    n: u32,
}

/// The words of `shape` from `from` to `to` for elements of `size` bytes
/// (4, or 8 as two words along an extra last dim), or `None` if the dtype
/// has another size or a value does not fit the kernel's arithmetic.
fn plan(shape: &[usize], from: &Place, to: &Place, size: usize) -> Option<WordCopy> {
    let per = match size {
        4 => 1isize,
        8 => 2,
        _ => return None,
    };
    let words = |p: &Place| -> Option<(Vec<u32>, i32)> {
        let mut strides: Vec<u32> = p
            .strides
            .iter()
            .map(|&s| i32::try_from(s * per).ok().map(|v| v as u32))
            .collect::<Option<_>>()?;
        if per == 2 {
            strides.push(1);
        }
        Some((strides, i32::try_from(p.offset * per).ok()?))
    };
    let mut dims: Vec<u32> = shape
        .iter()
        .map(|&d| u32::try_from(d).ok())
        .collect::<Option<_>>()?;
    if per == 2 {
        dims.push(2);
    }
    let n = shape.iter().product::<usize>() * per as usize;
    let ((from_strides, from_offset), (to_strides, to_offset)) = (words(from)?, words(to)?);
    Some(WordCopy {
        shape: dims,
        from_strides,
        to_strides,
        from_offset,
        to_offset,
        n: u32::try_from(n).ok().filter(|&n| n < i32::MAX as u32)?,
    })
}

impl WgpuBackend {
    /// Runs planned copies from `sources` into `out` (a fresh buffer of
    /// `len` elements of `dtype`); `None` if a copy is past one dispatch.
    fn run_copies(
        &self,
        out: Storage,
        copies: &[(WordCopy, &Tensor)],
        name: &'static str,
    ) -> Result<Option<Storage>> {
        if copies.iter().any(|(c, _)| !self.fits(c.n as usize)) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let dst = self.buffer(&out, name)?;
        for (c, src) in copies {
            if c.n == 0 {
                continue;
            }
            let src = self.buffer(src.storage(), name)?;
            let (shape, from, to) = (
                gpu.metadata(&c.shape),
                gpu.metadata(&c.from_strides),
                gpu.metadata(&c.to_strides),
            );
            self.linear(
                library::copy_words(),
                BLOCK,
                &[src.buffer.raw(), dst.buffer.raw(), &shape, &from, &to],
                &[
                    Value::U32(c.shape.len() as u32),
                    Value::U32(c.n),
                    Value::I32(c.from_offset),
                    Value::I32(c.to_offset),
                ],
                c.n as usize,
                name,
            )?;
        }
        Ok(Some(out))
    }

    /// A fresh output of `len` elements of `dtype`, its words unset.
    fn fresh(&self, dtype: DType, len: usize, name: &'static str) -> Result<Storage> {
        let buffer = self
            .gpu()
            .alloc((len * dtype.size_in_bytes()) as u64, name)?;
        Ok(self.store(dtype, len, buffer))
    }

    /// `x`'s elements in row-major order, in fresh storage.
    pub(crate) fn contiguous_words(&self, x: &Tensor) -> Result<Option<Storage>> {
        let shape = x.dims();
        let to = Place::dense(shape, 0);
        let Some(copy) = plan(shape, &Place::of(x), &to, x.dtype().size_in_bytes()) else {
            return Ok(None);
        };
        let out = self.fresh(x.dtype(), x.shape().numel(), "contiguous")?;
        self.run_copies(out, &[(copy, x)], "contiguous")
    }

    /// `x` with `(before, after)` elements of `value` around each dim: the
    /// output filled with `value`, then `x` copied into its interior.
    pub(crate) fn pad_words(
        &self,
        x: &Tensor,
        pads: &[(usize, usize)],
        value: f64,
    ) -> Result<Option<Storage>> {
        let shape: Vec<usize> = x
            .dims()
            .iter()
            .zip(pads)
            .map(|(&d, &(b, a))| d + b + a)
            .collect();
        let dense = Place::dense(&shape, 0);
        let corner: isize = pads
            .iter()
            .zip(&dense.strides)
            .map(|(&(b, _), &s)| b as isize * s)
            .sum();
        let to = Place {
            strides: dense.strides,
            offset: corner,
        };
        let Some(copy) = plan(x.dims(), &Place::of(x), &to, x.dtype().size_in_bytes()) else {
            return Ok(None);
        };
        let len = shape.iter().product();
        if !self.fits(len) {
            return Ok(None);
        }
        let out = self.fill_pattern(x.dtype(), len, value)?;
        self.run_copies(out, &[(copy, x)], "pad")
    }

    /// The inputs side by side along `dim`, each copied into its region.
    pub(crate) fn cat_words(&self, xs: &[&Tensor], dim: usize) -> Result<Option<Storage>> {
        let mut shape = xs[0].dims().to_vec();
        shape[dim] = xs.iter().map(|x| x.dims()[dim]).sum();
        let dense = Place::dense(&shape, 0);
        let size = xs[0].dtype().size_in_bytes();
        let mut copies = Vec::with_capacity(xs.len());
        let mut start = 0;
        for x in xs {
            let to = Place {
                strides: dense.strides.clone(),
                offset: start as isize * dense.strides[dim],
            };
            let Some(copy) = plan(x.dims(), &Place::of(x), &to, size) else {
                return Ok(None);
            };
            copies.push((copy, *x));
            start += x.dims()[dim];
        }
        let out = self.fresh(xs[0].dtype(), shape.iter().product(), "cat")?;
        self.run_copies(out, &copies, "cat")
    }

    /// `x` reversed along `dims`: read through strides negated there,
    /// starting from each flipped dim's last element.
    pub(crate) fn flip_words(&self, x: &Tensor, dims: &[usize]) -> Result<Option<Storage>> {
        let mut from = Place::of(x);
        for &d in dims {
            let n = x.dims()[d];
            if n > 0 {
                from.offset += (n as isize - 1) * from.strides[d];
                from.strides[d] = -from.strides[d];
            }
        }
        let shape = x.dims();
        let Some(copy) = plan(
            shape,
            &from,
            &Place::dense(shape, 0),
            x.dtype().size_in_bytes(),
        ) else {
            return Ok(None);
        };
        let out = self.fresh(x.dtype(), x.shape().numel(), "flip")?;
        self.run_copies(out, &[(copy, x)], "flip")
    }
}
