//! The structural ops on every dtype the device stores as words (f64
//! aside): casts between any two of f32, f16, bf16, i32, i64, u8 and bool
//! (`cast_strided`, on the bits, the reference's rules exactly); gather,
//! scatter, scatter-add and `index_select` on words for every dtype
//! (`gather_words`, `scatter_words`, deterministic); `cumsum`, and the
//! integers' `cumprod` (`scan_strided`, a row a thread, in order).
//!
//! The kernels here share `crate::native`'s strided parameter order (the
//! input buffers, the output, the output's shape, each input's strides,
//! `ndim`, `n`, each input's offset, the op's scalars), but say
//! themselves how many threads they need: a cast to `i64` writes two
//! words an element, one to `u8` a quarter of one.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::{Kernel, Value};
use oxmera_kernel::library::{self, cast_code, scan_code, scatter_code};
use oxmera_tensor::{ScanOp, Storage, Tensor};

use crate::backend::GpuBackend;
use crate::device::{DeviceMemory, GpuDevice};
use crate::halves::is_half;
use crate::native::{ELEMENTWISE_BLOCK, SCATTER_MAX_ALONG, dims_of, view_of};

/// The `cast_strided` code of a dtype, if the kernel reads and writes it.
pub(crate) fn cast_code_of(dtype: DType) -> Option<u32> {
    Some(match dtype {
        DType::F32 => cast_code::F32,
        DType::F16 => cast_code::F16,
        DType::BF16 => cast_code::BF16,
        DType::I32 => cast_code::I32,
        DType::I64 => cast_code::I64,
        DType::U8 => cast_code::U8,
        DType::Bool => cast_code::BOOL,
        DType::F64 => return None,
    })
}

/// How many 32-bit words `n` elements of `dtype` fill.
fn words_for(dtype: DType, n: usize) -> usize {
    (n * dtype.size_in_bytes()).div_ceil(4)
}

impl<D: GpuDevice> GpuBackend<D> {
    /// Launches a kernel of the strided parameter order over `shape`
    /// with `threads` threads, writing `shape`'s elements of `out`;
    /// `None` where a size does not fit the kernel's i32/u32 or one
    /// dispatch.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn strided_threads(
        &self,
        kernel: &'static Kernel,
        name: &'static str,
        inputs: &[&Tensor],
        shape: &[usize],
        out: DType,
        threads: usize,
        extra: Vec<Value>,
    ) -> Result<Option<Storage>> {
        let n: usize = shape.iter().product();
        let views: Option<Vec<(Vec<u32>, i32)>> = inputs.iter().map(|x| view_of(x)).collect();
        let (Some(dims), Some(views)) = (dims_of(shape), views) else {
            return Ok(None);
        };
        if n >= i32::MAX as usize || threads >= i32::MAX as usize || !self.fits(threads) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let output = gpu.alloc((n * out.size_in_bytes()) as u64, name)?;
        if n > 0 {
            let sources = inputs
                .iter()
                .map(|x| self.buffer(x.storage(), name))
                .collect::<Result<Vec<_>>>()?;
            let shape_meta = gpu.metadata(&dims)?;
            let stride_metas: Vec<D::Raw> = views
                .iter()
                .map(|(s, _)| gpu.metadata(s))
                .collect::<Result<_>>()?;
            let mut buffers: Vec<&D::Raw> = sources.iter().map(|b| b.buffer.raw()).collect();
            buffers.push(output.raw());
            buffers.push(&shape_meta);
            buffers.extend(stride_metas.iter());
            let mut scalars = vec![Value::U32(dims.len() as u32), Value::U32(n as u32)];
            scalars.extend(views.iter().map(|&(_, o)| Value::I32(o)));
            scalars.extend(extra);
            self.linear(kernel, ELEMENTWISE_BLOCK, &buffers, &scalars, threads, name)?;
        }
        Ok(Some(self.store(out, n, output)))
    }

    /// `x` cast to `dtype` by `cast_strided`, for any two of the dtypes
    /// it knows (`None` for f64 into a half, or a size that does not fit).
    pub(crate) fn cast_words(&self, x: &Tensor, dtype: DType) -> Result<Option<Storage>> {
        // f64 is two words to the kernel (it computes nothing in f64), but
        // into a half the reference's own rounding rule decides (see
        // `cast_strided`).
        let code = |d: DType| match d {
            DType::F64 => oxmera_tensor::Backend::stores(self, d).then_some(cast_code::F64),
            _ => cast_code_of(d),
        };
        if x.dtype() == DType::F64 && is_half(dtype) {
            return Ok(None);
        }
        let (Some(from), Some(to)) = (code(x.dtype()), code(dtype)) else {
            return Ok(None);
        };
        let n = x.shape().numel();
        self.strided_threads(
            library::cast_strided(),
            "cast",
            &[x],
            x.dims(),
            dtype,
            words_for(dtype, n),
            vec![Value::U32(from), Value::U32(to)],
        )
    }
}

/// Words per element of a dtype the word kernels move directly.
fn wide_of(dtype: DType) -> Option<u32> {
    match dtype.size_in_bytes() {
        4 => Some(1),
        8 => Some(2),
        _ => None,
    }
}

impl<D: GpuDevice> GpuBackend<D> {
    /// Runs a word op on `values` (one dtype): directly for four- and
    /// eight-byte dtypes (`wide` 1 or 2); for halves through a word each
    /// (`in_words`: their bits zero-extended and packed back); for `u8`
    /// and `bool` through `i32` (`cast_strided` both ways: a byte widens
    /// exactly, and the low byte, or `!= 0` for a bool, comes back). The
    /// op is given the words, `wide` and the dtype its result is stored
    /// as (the values' own for four- and eight-byte dtypes, else i32).
    /// `None` where a launch declines.
    pub(crate) fn as_words(
        &self,
        values: &[&Tensor],
        op: impl FnOnce(&[&Tensor], u32, DType) -> Result<Option<Storage>>,
    ) -> Result<Option<Storage>> {
        let Some(dtype) = values.first().map(|x| x.dtype()) else {
            return Ok(None);
        };
        if values.iter().any(|x| x.dtype() != dtype) {
            return Ok(None);
        }
        if let Some(wide) = wide_of(dtype) {
            return op(values, wide, dtype);
        }
        if is_half(dtype) {
            return self.in_words(values, |ws| op(ws, 1, DType::I32));
        }
        let mut words = Vec::with_capacity(values.len());
        for x in values {
            match self.cast_words(x, DType::I32)? {
                Some(s) => words.push(Tensor::from_storage(s, x.shape().clone())),
                None => return Ok(None),
            }
        }
        let refs: Vec<&Tensor> = words.iter().collect();
        let Some(result) = op(&refs, 1, DType::I32)? else {
            return Ok(None);
        };
        let len = result.len();
        self.cast_words(&Tensor::from_storage(result, [len]), dtype)
    }

    /// `x` gathered along `dim` by i32 `index`, on words (every dtype).
    pub(crate) fn gather_any(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
    ) -> Result<Option<Storage>> {
        self.as_words(&[x], |xs, wide, out| {
            self.strided_threads(
                library::gather_words(),
                "gather",
                &[xs[0], index],
                index.dims(),
                out,
                index.shape().numel(),
                vec![Value::U32(dim as u32), Value::U32(wide)],
            )
        })
    }

    /// `x` with `src` written (`add` false) or added, wrapping, at i32
    /// `index` along `dim`, on words (`scatter_words`; deterministic), or
    /// added in f64 (`scatter_add_f64`) where `out_dtype` is f64. `None`
    /// past the longest walk along `dim` or a size that does not fit.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn scatter_words(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        add: bool,
        wide: u32,
        out_dtype: DType,
    ) -> Result<Option<Storage>> {
        let name = if add { "scatter_add" } else { "scatter" };
        let n = x.shape().numel();
        let (Some(xshape), Some(ishape)) = (dims_of(x.dims()), dims_of(index.dims())) else {
            return Ok(None);
        };
        let (Some((xs, xo)), Some((is, io)), Some((ss, so))) =
            (view_of(x), view_of(index), view_of(src))
        else {
            return Ok(None);
        };
        if index.dims()[dim] > SCATTER_MAX_ALONG || n >= i32::MAX as usize || !self.fits(n) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let out = gpu.alloc((n * 4 * wide as usize) as u64, name)?;
        if n > 0 {
            let (bx, bi, bs) = (
                self.buffer(x.storage(), name)?,
                self.buffer(index.storage(), name)?,
                self.buffer(src.storage(), name)?,
            );
            let (mxs, mis) = (gpu.metadata(&xshape)?, gpu.metadata(&ishape)?);
            let (mx, mi, ms) = (gpu.metadata(&xs)?, gpu.metadata(&is)?, gpu.metadata(&ss)?);
            let mode = if add {
                scatter_code::ADD
            } else {
                scatter_code::REPLACE
            };
            let mut scalars = vec![
                Value::U32(xshape.len() as u32),
                Value::U32(dim as u32),
                Value::U32(n as u32),
                Value::I32(xo),
                Value::I32(io),
                Value::I32(so),
            ];
            let kernel = if add && out_dtype == DType::F64 {
                library::scatter_add_f64()
            } else {
                scalars.extend([Value::U32(mode), Value::U32(wide)]);
                library::scatter_words()
            };
            self.linear(
                kernel,
                ELEMENTWISE_BLOCK,
                &[
                    bx.buffer.raw(),
                    bi.buffer.raw(),
                    bs.buffer.raw(),
                    out.raw(),
                    &mxs,
                    &mis,
                    &mx,
                    &mi,
                    &ms,
                ],
                &scalars,
                n,
                name,
            )?;
        }
        Ok(Some(self.store(out_dtype, n, out)))
    }

    /// `scatter` (replace) for every dtype, and `scatter_add` for the
    /// integers and bool (wrapping, as the reference's i64 sum wrapped
    /// into the dtype; a bool's sum of 0s and 1s is nonzero exactly when
    /// one source is true) and for halves (computed in f32 by
    /// `scatter_add_strided`, then rounded once, as every half op here).
    pub(crate) fn scatter_any(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        add: bool,
    ) -> Result<Option<Storage>> {
        let dtype = x.dtype();
        if src.dtype() != dtype || index.dtype() != DType::I32 {
            return Ok(None);
        }
        if add && dtype.is_float() {
            if dtype == DType::F64 {
                if !self.f64_native() {
                    return Ok(None);
                }
                return self.scatter_words(x, dim, index, src, true, 2, dtype);
            }
            return self.in_f32(&[x, src], true, |xs| {
                self.scatter_add_f32(xs[0], dim, index, xs[1])
            });
        }
        self.as_words(&[x, src], |ws, wide, out| {
            self.scatter_words(ws[0], dim, index, ws[1], add, wide, out)
        })
    }

    /// `index_select` of `u8` and `bool` (bytes through i32 words; the
    /// other dtypes have `select_words` directly).
    pub(crate) fn select_bytes(
        &self,
        x: &Tensor,
        dim: usize,
        indices: &Tensor,
    ) -> Result<Option<Storage>> {
        if x.dtype().size_in_bytes() != 1 {
            return Ok(None);
        }
        self.as_words(&[x], |xs, _, _| self.select_words(xs[0], dim, indices))
    }

    /// The inclusive scan `op` of `x` along `dim` by `scan_strided`, a row
    /// a thread: `cumsum` of f32 (halves through f32, rounded once) into
    /// the input's dtype, `cumprod` of f32 (and halves) with no
    /// underflow or overflow on the way, and `cumsum` and `cumprod` of
    /// i32, i64, u8, bool into i64 (wrapping); `logcumsumexp` of f32 (and
    /// halves) by `logcumsumexp_strided`, the reference's step element by
    /// element; `cumsum` and `cumprod` of f64 by `scan_f64` and its
    /// `logcumsumexp` by `logcumsumexp_f64` where the device computes in
    /// f64. A row past what one thread may walk goes in chunks
    /// (`crate::long`); `None` where a size does not fit.
    pub(crate) fn scan_any(
        &self,
        op: ScanOp,
        x: &Tensor,
        dim: usize,
        out_dtype: DType,
    ) -> Result<Option<Storage>> {
        if x.dims()[dim] > SCATTER_MAX_ALONG {
            return self.scan_long(op, x, dim, out_dtype);
        }
        let rows = x.shape().numel() / x.dims()[dim].max(1);
        if x.dtype() == DType::F64 {
            // In f64 by `scan_f64`, or `logcumsumexp_f64` with the
            // library's f64 exp and ln1p.
            if !self.f64_native() || out_dtype != DType::F64 {
                return Ok(None);
            }
            let (kernel, tail) = match op {
                ScanOp::Sum => (library::scan_f64(), vec![Value::U32(scan_code::SUM)]),
                ScanOp::Prod => (library::scan_f64(), vec![Value::U32(scan_code::PROD)]),
                ScanOp::LogSumExp => (library::logcumsumexp_f64(), vec![]),
            };
            return self.scan_rows(x, dim, kernel, tail, rows, DType::F64, op.name());
        }
        let code = match op {
            ScanOp::Sum => scan_code::SUM,
            ScanOp::Prod => scan_code::PROD,
            ScanOp::LogSumExp => {
                // Floats only (the front end's rule), in f32 step by step.
                return self.in_f32(&[x], true, |xs| {
                    let kernel = library::logcumsumexp_strided();
                    self.scan_rows(xs[0], dim, kernel, vec![], rows, DType::F32, op.name())
                });
            }
        };
        let kind = match x.dtype() {
            DType::I32 | DType::I64 | DType::U8 | DType::Bool if out_dtype == DType::I64 => {
                cast_code_of(x.dtype())
            }
            DType::F32 | DType::F16 | DType::BF16 if out_dtype == x.dtype() => Some(cast_code::F32),
            _ => None,
        };
        let Some(kind) = kind else {
            return Ok(None);
        };
        if kind == cast_code::F32 {
            // A float running product is carried as m·2^e by the kernel,
            // as the reference's f64 carries it through values far below
            // f32's range (2e-37 after 1e-40 · 2e3 in the corpus).
            return self.in_f32(&[x], true, |xs| {
                let tail = vec![Value::U32(code), Value::U32(kind)];
                let kernel = library::scan_strided();
                self.scan_rows(xs[0], dim, kernel, tail, rows, DType::F32, op.name())
            });
        }
        let tail = vec![Value::U32(code), Value::U32(kind)];
        self.scan_rows(
            x,
            dim,
            library::scan_strided(),
            tail,
            rows,
            DType::I64,
            op.name(),
        )
    }

    /// One launch of a scan kernel (`scan_strided` with its op and kind in
    /// `tail`, or `logcumsumexp_strided`): `rows` threads, the output
    /// dense of `x`'s shape.
    #[allow(clippy::too_many_arguments)]
    fn scan_rows(
        &self,
        x: &Tensor,
        dim: usize,
        kernel: &'static Kernel,
        tail: Vec<Value>,
        rows: usize,
        out: DType,
        name: &'static str,
    ) -> Result<Option<Storage>> {
        let n = x.shape().numel();
        let (Some(dims), Some((xs, xo))) = (dims_of(x.dims()), view_of(x)) else {
            return Ok(None);
        };
        if n >= i32::MAX as usize || !self.fits(rows) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let output = gpu.alloc((n * out.size_in_bytes()) as u64, name)?;
        if n > 0 {
            let b = self.buffer(x.storage(), name)?;
            let (ms, mx) = (gpu.metadata(&dims)?, gpu.metadata(&xs)?);
            let mut scalars = vec![
                Value::U32(dims.len() as u32),
                Value::U32(rows as u32),
                Value::I32(xo),
                Value::U32(dim as u32),
            ];
            scalars.extend(tail);
            self.linear(
                kernel,
                ELEMENTWISE_BLOCK,
                &[b.buffer.raw(), output.raw(), &ms, &mx],
                &scalars,
                rows,
                name,
            )?;
        }
        Ok(Some(self.store(out, n, output)))
    }
}
