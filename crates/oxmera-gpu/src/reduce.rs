//! Reductions on the device: sum and mean in blocked passes; the walks
//! of one thread per output (argmax/argmin, byte counts, variance, std,
//! max, min, prod); softmax, log-softmax and layer norm, a row a thread.
//! A walk longer than one thread may take goes to `crate::long` in chunks.
//! Each returns `None` where a size does not fit the kernel's arithmetic or
//! one dispatch; the caller then hands the op to the host.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::{Kernel, Value};
use oxmera_kernel::library::{self, moment_code};
use oxmera_tensor::{ReduceOp, Storage, Tensor};

use crate::backend::GpuBackend;
use crate::device::{DeviceMemory, GpuDevice};

use crate::long::LONGEST_WALK;
use crate::native::{
    ELEMENTWISE_BLOCK, SCATTER_MAX_ALONG, SOFTMAX_BLOCK, dims_of, reduce_sizes, view_of,
};

/// One launch of a kernel that walks, a thread per output, the elements
/// of `x` over the dims `dims` in row-major order. Such kernels share their
/// parameters: `x, out, shape, strides, marks` (1 on a walked dim), then
/// `ndim, n_out, n_walked, offset` and the op's own scalars.
struct Walk<'a> {
    kernel: &'static Kernel,
    name: &'static str,
    x: &'a Tensor,
    dims: &'a [usize],
    /// The output's dtype, and how many elements each thread writes.
    out: DType,
    per_output: usize,
    block: u32,
    /// The longest walk the kernel's loops may take.
    max_walk: usize,
    extra: Vec<Value>,
}

impl<D: GpuDevice> GpuBackend<D> {
    /// Launches a [`Walk`]; `None` where a size does not fit.
    fn walk(&self, w: Walk<'_>) -> Result<Option<Storage>> {
        let (n_out, n_walked) = reduce_sizes(w.x, w.dims);
        let len = n_out * w.per_output;
        let (Some(shape), Some((strides, offset))) = (dims_of(w.x.dims()), view_of(w.x)) else {
            return Ok(None);
        };
        if n_walked > w.max_walk || !self.fits(len) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let out = gpu.alloc((len * w.out.size_in_bytes()) as u64, w.name)?;
        if len > 0 {
            let src = self.buffer(w.x.storage(), w.name)?;
            let marks: Vec<u32> = (0..shape.len())
                .map(|d| u32::from(w.dims.contains(&d)))
                .collect();
            let (s, st, r) = (
                gpu.metadata(&shape)?,
                gpu.metadata(&strides)?,
                gpu.metadata(&marks)?,
            );
            let mut scalars = vec![
                Value::U32(shape.len() as u32),
                Value::U32(n_out as u32),
                Value::U32(n_walked as u32),
                Value::I32(offset),
            ];
            scalars.extend(w.extra);
            self.linear(
                w.kernel,
                w.block,
                &[src.buffer.raw(), out.raw(), &s, &st, &r],
                &scalars,
                n_out,
                w.name,
            )?;
        }
        Ok(Some(self.store(w.out, len, out)))
    }

    /// Argmax/argmin of f32 and the count of bools or bytes: one thread per
    /// output, each walking its reduced elements (bounded, for llvmpipe's
    /// loop limit).
    pub(crate) fn reduce_walk(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Option<Storage>> {
        let kernel = match (op, x.dtype()) {
            (ReduceOp::ArgMax | ReduceOp::ArgMin, DType::F32) => library::argbest_strided(),
            (ReduceOp::Sum, DType::Bool | DType::U8) => library::count_bytes_strided(),
            _ => return Ok(None),
        };
        if out_dtype != DType::I64 {
            return Ok(None);
        }
        let extra = match op {
            ReduceOp::Sum => vec![],
            _ => vec![Value::U32(u32::from(op == ReduceOp::ArgMin))],
        };
        self.walk(Walk {
            kernel,
            name: op.name(),
            x,
            dims,
            out: DType::I64,
            per_output: 1,
            block: ELEMENTWISE_BLOCK,
            max_walk: SCATTER_MAX_ALONG,
            extra,
        })
    }

    /// Variance, standard deviation, maximum, minimum, product or
    /// log-sum-exp of f64 over `dims` (`moments_f64`), or its argmax or
    /// argmin (`argbest_f64`), a thread per output walking its elements in
    /// order, as the reference does.
    pub(crate) fn walk_f64(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Option<Storage>> {
        let (kernel, out, extra) = match op {
            ReduceOp::ArgMax | ReduceOp::ArgMin => (
                library::argbest_f64(),
                DType::I64,
                vec![Value::U32(u32::from(op == ReduceOp::ArgMin))],
            ),
            _ => {
                let (code, correction) = match op {
                    ReduceOp::Var { correction } => (moment_code::VAR, correction),
                    ReduceOp::Std { correction } => (moment_code::STD, correction),
                    ReduceOp::Max => (moment_code::MAX, 0.0),
                    ReduceOp::Min => (moment_code::MIN, 0.0),
                    ReduceOp::Prod => (moment_code::PROD, 0.0),
                    ReduceOp::LogSumExp => (library::MOMENT_LOGSUMEXP, 0.0),
                    _ => return Ok(None),
                };
                let extra = vec![Value::U32(code), Value::F64(correction)];
                (library::moments_f64(), DType::F64, extra)
            }
        };
        if out_dtype != out {
            return Ok(None);
        }
        self.walk(Walk {
            kernel,
            name: op.name(),
            x,
            dims,
            out,
            per_output: 1,
            block: ELEMENTWISE_BLOCK,
            max_walk: LONGEST_WALK,
            extra,
        })
    }

    /// Variance, standard deviation, maximum, minimum or product of f32
    /// over `dims`, a thread per output walking its elements in order.
    pub(crate) fn moments_f32(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
    ) -> Result<Option<Storage>> {
        let (code, correction) = match op {
            ReduceOp::Var { correction } => (moment_code::VAR, correction),
            ReduceOp::Std { correction } => (moment_code::STD, correction),
            ReduceOp::Max => (moment_code::MAX, 0.0),
            ReduceOp::Min => (moment_code::MIN, 0.0),
            ReduceOp::Prod => (moment_code::PROD, 0.0),
            _ => return Ok(None),
        };
        self.walk(Walk {
            kernel: library::moments_strided(),
            name: op.name(),
            x,
            dims,
            out: DType::F32,
            per_output: 1,
            block: ELEMENTWISE_BLOCK,
            max_walk: LONGEST_WALK,
            extra: vec![Value::U32(code), Value::F32(correction as f32)],
        })
    }

    /// Softmax or log-softmax of f32 (`softmax_strided`) or f64
    /// (`softmax_f64`) along `dim`, a row a thread (rows longer than
    /// [`LONGEST_WALK`] are composed of device ops instead).
    pub(crate) fn softmax_along(
        &self,
        x: &Tensor,
        dim: usize,
        log: bool,
    ) -> Result<Option<Storage>> {
        let name = if log { "log_softmax" } else { "softmax" };
        let (kernel, block, dtype) = match x.dtype() {
            DType::F64 => (library::softmax_f64(), ELEMENTWISE_BLOCK, DType::F64),
            _ => (library::softmax_strided(), SOFTMAX_BLOCK, DType::F32),
        };
        let n = x.shape().numel();
        let len = x.dims()[dim];
        let (Some(shape), Some((strides, offset))) = (dims_of(x.dims()), view_of(x)) else {
            return Ok(None);
        };
        if len > LONGEST_WALK {
            return self.softmax_composed(x, dim, log).map(Some);
        }
        if !self.fits(n) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let rows = n.checked_div(len).unwrap_or(0);
        let out = gpu.alloc((n * dtype.size_in_bytes()) as u64, name)?;
        if rows > 0 && len > 0 {
            let src = self.buffer(x.storage(), name)?;
            let (s, st) = (gpu.metadata(&shape)?, gpu.metadata(&strides)?);
            self.linear(
                kernel,
                block,
                &[src.buffer.raw(), out.raw(), &s, &st],
                &[
                    Value::U32(shape.len() as u32),
                    Value::U32(dim as u32),
                    Value::U32(rows as u32),
                    Value::I32(offset),
                    Value::Bool(log),
                ],
                rows,
                name,
            )?;
        }
        Ok(Some(self.store(dtype, n, out)))
    }

    /// Layer normalization of f32 over the last `dims` dims, a row a
    /// thread (rows longer than [`LONGEST_WALK`] are composed of device
    /// ops instead).
    pub(crate) fn layer_norm_f32(
        &self,
        x: &Tensor,
        dims: usize,
        eps: f64,
    ) -> Result<Option<Storage>> {
        let rank = x.rank();
        let trailing: Vec<usize> = (rank - dims..rank).collect();
        let row_len: usize = x.dims()[rank - dims..].iter().product();
        if row_len > LONGEST_WALK {
            return self.layer_norm_composed(x, dims, eps).map(Some);
        }
        self.walk(Walk {
            kernel: library::layer_norm_rows(),
            name: "layer_norm",
            x,
            dims: &trailing,
            out: DType::F32,
            per_output: row_len,
            block: SOFTMAX_BLOCK,
            max_walk: LONGEST_WALK,
            extra: vec![Value::F32(eps as f32)],
        })
    }

    /// Sum or mean over `dims` by passes of `reduce_strided`: chunks of at
    /// most `REDUCE_CHUNK` terms, then the chunks' partials, until one
    /// chunk is left (see the kernel for why). `None` where sizes do not
    /// fit its u32 arithmetic or one dispatch.
    pub(crate) fn reduce_f32(
        &self,
        x: &Tensor,
        dims: &[usize],
        mean: bool,
        name: &'static str,
    ) -> Result<Option<Storage>> {
        // The tuned block for this device, else 64 (`crate::tuned`).
        let block = self.gpu().reduce_block();
        self.reduce_passes(
            library::reduce_strided(),
            DType::F32,
            block,
            x,
            dims,
            mean,
            name,
        )
    }

    /// A sum or mean of an f64 tensor by `reduce_strided_f64`: the same
    /// chunks and passes, at the contract's block of 64.
    pub(crate) fn reduce_f64(
        &self,
        x: &Tensor,
        dims: &[usize],
        mean: bool,
        name: &'static str,
    ) -> Result<Option<Storage>> {
        self.reduce_passes(
            library::reduce_strided_f64(),
            DType::F64,
            64,
            x,
            dims,
            mean,
            name,
        )
    }

    /// The passes of `reduce_strided` or its f64 sibling (`elem`), which
    /// share their parameters.
    #[allow(clippy::too_many_arguments)]
    fn reduce_passes(
        &self,
        kernel: &'static oxmera_kernel::ir::Kernel,
        elem: DType,
        block: u32,
        x: &Tensor,
        dims: &[usize],
        mean: bool,
        name: &'static str,
    ) -> Result<Option<Storage>> {
        let (Some(shape), Some((strides, offset))) = (dims_of(x.dims()), view_of(x)) else {
            return Ok(None);
        };
        let (n_out, n_reduced) = reduce_sizes(x, dims);
        let chunk = library::REDUCE_CHUNK as usize;
        let max_threads = self.gpu().max_grid().x as usize * block as usize;
        let first_chunks = n_reduced.div_ceil(chunk).max(1);
        if u32::try_from(n_reduced).is_err()
            || n_out
                .checked_mul(first_chunks)
                .is_none_or(|t| t > max_threads)
        {
            return Ok(None);
        }
        if n_out == 0 {
            return Ok(Some(self.store(elem, 0, self.gpu().alloc(0, name)?)));
        }
        let marks: Vec<u32> = (0..shape.len()).map(|d| dims.contains(&d) as u32).collect();
        // The current input: a buffer and how to read it.
        let src = self.buffer(x.storage(), name)?;
        let mut held: Option<D::Buffer> = None;
        let (mut shape, mut strides, mut marks, mut offset) = (shape, strides, marks, offset);
        let mut terms = n_reduced;
        loop {
            let n_chunks = terms.div_ceil(chunk).max(1);
            let last = n_chunks == 1;
            let out = self
                .gpu()
                .alloc((n_out * n_chunks * elem.size_in_bytes()) as u64, name)?;
            let (s, st, r) = (
                self.gpu().metadata(&shape)?,
                self.gpu().metadata(&strides)?,
                self.gpu().metadata(&marks)?,
            );
            let input = held.as_ref().map_or(src.buffer.raw(), |b| b.raw());
            self.linear(
                kernel,
                block,
                &[input, out.raw(), &s, &st, &r],
                &[
                    Value::U32(shape.len() as u32),
                    Value::U32(n_out as u32),
                    Value::U32(terms as u32),
                    Value::U32(n_chunks as u32),
                    Value::U32(chunk as u32),
                    Value::I32(offset),
                    Value::Bool(mean && last),
                    Value::U32(n_reduced as u32),
                ],
                n_out * n_chunks,
                name,
            )?;
            if last {
                return Ok(Some(self.store(elem, n_out, out)));
            }
            // Next pass: the partials, [n_out, n_chunks] contiguous, over dim 1.
            shape = vec![n_out as u32, n_chunks as u32];
            strides = vec![n_chunks as u32, 1];
            marks = vec![0, 1];
            offset = 0;
            terms = n_chunks;
            held = Some(out);
        }
    }
}
