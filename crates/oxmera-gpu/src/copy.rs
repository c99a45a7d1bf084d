//! The ops that only move elements — a contiguous copy, padding,
//! concatenation, flipping, `where`, a triangle, `index_select` — for
//! every dtype of four or eight bytes, by the library's word kernels
//! (`copy_words`, `where_words`, `triangle_words`, `select_words`).
//!
//! The kernels move 32-bit words without reading them as numbers, so one
//! launch serves f32, i32, f64 and i64: an 8-byte element is two words
//! along an extra last dim of stride 1 (its other strides and offset
//! doubled). Each op is planned first (every place in the kernels' i32/u32
//! words, or `None` and the host takes the op) and launched after, so a
//! plan that does not fit never leaves half an output behind.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::{Kernel, Value};
use oxmera_kernel::library;
use oxmera_tensor::{Storage, Tensor};

use crate::backend::GpuBackend;
use crate::device::{DeviceMemory, GpuDevice};

/// The block the word kernels run with (one of those they declare).
const BLOCK: u32 = 256;

/// A strided place, in elements: where element `c` of a shape lives is
/// `offset + Σ c_d·strides_d` (strides may be negative: a flip).
#[derive(Clone)]
pub(crate) struct Place {
    strides: Vec<isize>,
    offset: isize,
}

impl Place {
    /// Where a tensor's elements live.
    pub(crate) fn of(x: &Tensor) -> Place {
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

    /// This place in words for elements of `per` words (1 or 2), or
    /// `None` if a value does not fit the kernels' i32.
    pub(crate) fn words(&self, per: isize) -> Option<(Vec<u32>, i32)> {
        let mut strides: Vec<u32> = self
            .strides
            .iter()
            .map(|&s| i32::try_from(s * per).ok().map(|v| v as u32))
            .collect::<Option<_>>()?;
        if per == 2 {
            strides.push(1);
        }
        Some((strides, i32::try_from(self.offset * per).ok()?))
    }

    /// This place of byte elements (bools) read beside a `per`-word
    /// output: its strides unchanged, the extra dim (if any) of stride 0.
    fn bytes_beside(&self, per: isize) -> Option<(Vec<u32>, i32)> {
        let (mut strides, offset) = self.words(1)?;
        if per == 2 {
            strides.push(0);
        }
        Some((strides, offset))
    }
}

/// Words per element of `dtype`, if the word kernels serve it.
fn words_per(dtype: DType) -> Option<isize> {
    match dtype.size_in_bytes() {
        4 => Some(1),
        8 => Some(2),
        _ => None,
    }
}

/// `shape` in words (the extra last dim for 8-byte elements) and its word
/// count, or `None` if it does not fit the kernels' u32/i32.
fn word_shape(shape: &[usize], per: isize) -> Option<(Vec<u32>, u32)> {
    let mut dims: Vec<u32> = shape
        .iter()
        .map(|&d| u32::try_from(d).ok())
        .collect::<Option<_>>()?;
    if per == 2 {
        dims.push(2);
    }
    let n = shape.iter().product::<usize>().checked_mul(per as usize)?;
    let n = u32::try_from(n).ok().filter(|&n| n < i32::MAX as u32)?;
    Some((dims, n))
}

/// One planned launch of a word kernel. They all take their buffers in
/// one order — the tensors read, the output, then small metadata (shape,
/// strides) — followed by scalars; `threads` is how many words it writes.
struct Launch<'a> {
    kernel: &'static Kernel,
    tensors: Vec<&'a Tensor>,
    metas: Vec<Vec<u32>>,
    scalars: Vec<Value>,
    threads: u32,
}

impl<D: GpuDevice> GpuBackend<D> {
    /// Runs planned launches writing into `out`; `None` (and nothing
    /// launched) if one is past one dispatch.
    fn run_words(
        &self,
        out: Storage,
        launches: Vec<Launch<'_>>,
        name: &'static str,
    ) -> Result<Option<Storage>> {
        if launches.iter().any(|l| !self.fits(l.threads as usize)) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let dst = self.buffer(&out, name)?;
        for l in launches.into_iter().filter(|l| l.threads > 0) {
            let metas: Vec<D::Raw> = l
                .metas
                .iter()
                .map(|m| gpu.metadata(m))
                .collect::<Result<_>>()?;
            let mut buffers = l
                .tensors
                .iter()
                .map(|t| Ok(self.buffer(t.storage(), name)?.buffer.raw()))
                .collect::<Result<Vec<&D::Raw>>>()?;
            buffers.push(dst.buffer.raw());
            buffers.extend(metas.iter());
            self.linear(
                l.kernel,
                BLOCK,
                &buffers,
                &l.scalars,
                l.threads as usize,
                name,
            )?;
        }
        Ok(Some(out))
    }

    /// A fresh output of `len` elements of `dtype`, its words unset.
    fn fresh(&self, dtype: DType, len: usize, name: &'static str) -> Result<Storage> {
        let bytes = (len * dtype.size_in_bytes()) as u64;
        Ok(self.store(dtype, len, self.gpu().alloc(bytes, name)?))
    }

    /// The `copy_words` launch of `x`'s elements (shape `shape`, read at
    /// `from`) to the place `to` of the output.
    fn copy_plan<'a>(
        x: &'a Tensor,
        shape: &[usize],
        from: &Place,
        to: &Place,
    ) -> Option<Launch<'a>> {
        let per = words_per(x.dtype())?;
        let (dims, n) = word_shape(shape, per)?;
        let ((fs, fo), (ts, to)) = (from.words(per)?, to.words(per)?);
        Some(Launch {
            kernel: library::copy_words(),
            tensors: vec![x],
            scalars: vec![
                Value::U32(dims.len() as u32),
                Value::U32(n),
                Value::I32(fo),
                Value::I32(to),
            ],
            metas: vec![dims, fs, ts],
            threads: n,
        })
    }

    /// `x`'s elements in row-major order, in fresh storage.
    pub(crate) fn contiguous_words(&self, x: &Tensor) -> Result<Option<Storage>> {
        let shape = x.dims();
        let Some(plan) = Self::copy_plan(x, shape, &Place::of(x), &Place::dense(shape, 0)) else {
            return Ok(None);
        };
        let out = self.fresh(x.dtype(), x.shape().numel(), "contiguous")?;
        self.run_words(out, vec![plan], "contiguous")
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
        let mut to = Place::dense(&shape, 0);
        to.offset = pads
            .iter()
            .zip(&to.strides)
            .map(|(&(b, _), &s)| b as isize * s)
            .sum();
        let len: usize = shape.iter().product();
        let Some(plan) = Self::copy_plan(x, x.dims(), &Place::of(x), &to) else {
            return Ok(None);
        };
        if !self.fits(len) {
            return Ok(None);
        }
        let out = self.fill_pattern(x.dtype(), len, value)?;
        self.run_words(out, vec![plan], "pad")
    }

    /// The inputs side by side along `dim`, each copied into its region.
    pub(crate) fn cat_words(&self, xs: &[&Tensor], dim: usize) -> Result<Option<Storage>> {
        let mut shape = xs[0].dims().to_vec();
        shape[dim] = xs.iter().map(|x| x.dims()[dim]).sum();
        let dense = Place::dense(&shape, 0);
        let mut plans = Vec::with_capacity(xs.len());
        let mut start = 0;
        for x in xs {
            let mut to = dense.clone();
            to.offset = start as isize * dense.strides[dim];
            let Some(plan) = Self::copy_plan(x, x.dims(), &Place::of(x), &to) else {
                return Ok(None);
            };
            plans.push(plan);
            start += x.dims()[dim];
        }
        let out = self.fresh(xs[0].dtype(), shape.iter().product(), "cat")?;
        self.run_words(out, plans, "cat")
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
        let Some(plan) = Self::copy_plan(x, shape, &from, &Place::dense(shape, 0)) else {
            return Ok(None);
        };
        let out = self.fresh(x.dtype(), x.shape().numel(), "flip")?;
        self.run_words(out, vec![plan], "flip")
    }

    /// `cond ? a : b` (one shape; `cond` bool).
    pub(crate) fn where_words(
        &self,
        cond: &Tensor,
        a: &Tensor,
        b: &Tensor,
    ) -> Result<Option<Storage>> {
        let Some(per) = words_per(a.dtype()) else {
            return Ok(None);
        };
        let plan = || -> Option<Launch<'_>> {
            let (dims, n) = word_shape(a.dims(), per)?;
            let (cs, co) = Place::of(cond).bytes_beside(per)?;
            let ((as_, ao), (bs, bo)) = (Place::of(a).words(per)?, Place::of(b).words(per)?);
            Some(Launch {
                kernel: library::where_words(),
                tensors: vec![cond, a, b],
                scalars: vec![
                    Value::U32(dims.len() as u32),
                    Value::U32(n),
                    Value::I32(co),
                    Value::I32(ao),
                    Value::I32(bo),
                ],
                metas: vec![dims, cs, as_, bs],
                threads: n,
            })
        };
        let Some(plan) = plan() else {
            return Ok(None);
        };
        let out = self.fresh(a.dtype(), a.shape().numel(), "where")?;
        self.run_words(out, vec![plan], "where")
    }

    /// The upper or lower triangle of the last two dims from `diagonal`.
    pub(crate) fn triangle_words(
        &self,
        x: &Tensor,
        diagonal: i64,
        upper: bool,
    ) -> Result<Option<Storage>> {
        let name = if upper { "triu" } else { "tril" };
        let plan = || -> Option<Launch<'_>> {
            let per = words_per(x.dtype())?;
            let (dims, n) = word_shape(x.dims(), per)?;
            let (xs, xo) = Place::of(x).words(per)?;
            Some(Launch {
                kernel: library::triangle_words(),
                tensors: vec![x],
                scalars: vec![
                    Value::U32(dims.len() as u32),
                    Value::U32(n),
                    Value::I32(xo),
                    Value::U32((x.rank() - 2) as u32),
                    Value::I32(i32::try_from(diagonal).ok()?),
                    Value::Bool(upper),
                ],
                metas: vec![dims, xs],
                threads: n,
            })
        };
        let Some(plan) = plan() else {
            return Ok(None);
        };
        let out = self.fresh(x.dtype(), x.shape().numel(), name)?;
        self.run_words(out, vec![plan], name)
    }

    /// Slices of `x` along `dim` at the i32 `indices` (1-D).
    pub(crate) fn select_words(
        &self,
        x: &Tensor,
        dim: usize,
        indices: &Tensor,
    ) -> Result<Option<Storage>> {
        let mut shape = x.dims().to_vec();
        shape[dim] = indices.shape().numel();
        let plan = || -> Option<Launch<'_>> {
            let per = words_per(x.dtype())?;
            let (dims, n) = word_shape(&shape, per)?;
            let (xs, xo) = Place::of(x).words(per)?;
            let (is, io) = Place::of(indices).words(1)?;
            Some(Launch {
                kernel: library::select_words(),
                tensors: vec![x, indices],
                scalars: vec![
                    Value::U32(dims.len() as u32),
                    Value::U32(n),
                    Value::I32(xo),
                    Value::U32(dim as u32),
                    Value::I32(is[0] as i32),
                    Value::I32(io),
                ],
                metas: vec![dims, xs],
                threads: n,
            })
        };
        let Some(plan) = plan() else {
            return Ok(None);
        };
        let out = self.fresh(x.dtype(), shape.iter().product(), "index_select")?;
        self.run_words(out, vec![plan], "index_select")
    }
}
