//! Reductions, softmax and layer norm over more elements than one thread
//! may walk.
//!
//! The walk kernels (`moments_strided`, `argbest_strided`,
//! `int_reduce_strided`, `softmax_strided`, `layer_norm_rows` and their
//! f64 and i64 siblings) give each output one thread that walks its
//! elements, and llvmpipe stops any loop after 65535 iterations, so a
//! thread walks at most [`LONGEST_WALK`] elements. A longer walk is cut
//! here into chunks of that length: the reduced dims are moved last and
//! flattened (a view where the strides allow, else one copy on the device),
//! the whole chunks are a view `[kept.., chunks, LONGEST_WALK]` and the
//! tail another, the kernel reduces each chunk, and the chunks' partials
//! are reduced again — by the same entry point, so a walk longer than
//! `LONGEST_WALK²` takes a third pass. Every step is a launch of this
//! backend; none of it touches the host.
//!
//! What combines, and why it is exact:
//! - max, min, all, any, and the integers' wrapping sums and products are
//!   associative and commutative: the partials' reduction is the same op
//!   and gives the reference's bits.
//! - argmax/argmin: the chunks' maxima (minima) pick the first winning
//!   chunk — NaN propagates through max and wins first, as the reference's
//!   argmax has it — then the index the kernel found within that chunk is
//!   gathered and offset by the chunk's start. Ties go to the first index,
//!   as in one walk.
//! - a float product is taken in f64 (where the device has it), as the
//!   reference takes it, and rounds into the output once; only the order
//!   of its factors differs (chunk by chunk), so a partial product may
//!   over- or underflow where the reference's running one does not, as
//!   under any reordering.
//! - variance, standard deviation, log-sum-exp, softmax and layer norm are
//!   composed of device ops as the reference defines them (the mean by the
//!   blocked multi-pass sum, then the squared deviations, …), so each sum
//!   meets the summation contract of `reduce_strided`.
//!
//! Scans (`cumsum`, `cumprod`, `logcumsumexp`) along a row longer than a
//! scan kernel's walk are cut the same way: each chunk scanned alone, the
//! chunks' last values scanned into carries, and each chunk combined with
//! the carry of those before it (added, multiplied, or log-add-exp'd as
//! the reference's step does). Integers wrap, so their carries are exact;
//! floats run in f64 (where the device has it) and round into the output
//! once, as the reference's f64 running value does.

use oxmera_core::{DType, Result};
use oxmera_kernel::library;
use oxmera_tensor::fused_backward::into_storage;
use oxmera_tensor::{Backend, ReduceOp, ScanOp, Storage, Tensor, no_grad};

use crate::backend::GpuBackend;
use crate::device::GpuDevice;
use crate::halves::is_half;
use crate::native::reduce_sizes;

/// The most elements one thread of a walk kernel reduces; longer walks are
/// cut into chunks of this many. `REDUCE_CHUNK`, the chunk of the blocked
/// sum, so one length bounds every walk (a thread's passes over it stay
/// under llvmpipe's 65535 loop iterations).
pub(crate) const LONGEST_WALK: usize = library::REDUCE_CHUNK as usize;

/// The dims as the front end's signed dims.
fn signed(dims: &[usize]) -> Vec<isize> {
    dims.iter().map(|&d| d as isize).collect()
}

impl<D: GpuDevice> GpuBackend<D> {
    /// `op` over `dims` where one output's walk is longer than
    /// [`LONGEST_WALK`] (see the module docs for how each op combines);
    /// `None` where the walk is short (the walk kernels take it), for
    /// float sums and means (`reduce_strided` is multi-pass already), and
    /// for a float product on a device without f64.
    pub(crate) fn reduce_long(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Option<Storage>> {
        let (n_out, n_walked) = reduce_sizes(x, dims);
        if n_walked <= LONGEST_WALK || n_out == 0 {
            return Ok(None);
        }
        let float = x.dtype().is_float();
        let out = match op {
            ReduceOp::Sum | ReduceOp::Mean if float => return Ok(None),
            ReduceOp::Var { correction } => self.variance(x, dims, correction, false)?,
            ReduceOp::Std { correction } => self.variance(x, dims, correction, true)?,
            ReduceOp::LogSumExp => self.logsumexp_composed(x, dims)?,
            // f64's own product takes the chunks below.
            ReduceOp::Prod if float && x.dtype() != DType::F64 => {
                if !self.f64_native() {
                    return Ok(None);
                }
                let wide = no_grad(|| x.to_dtype(DType::F64))?;
                let product = self.reduce(op, &wide, dims, DType::F64)?;
                let product = Tensor::from_storage(product, [n_out]);
                no_grad(|| product.to_dtype(out_dtype))?
            }
            ReduceOp::ArgMax | ReduceOp::ArgMin => self.arg_in_chunks(op, x, dims)?,
            _ => {
                let rows = rows_last(x, dims)?;
                let partials = self.partials(op, &rows, out_dtype)?;
                let last = partials.rank() - 1;
                let s = self.reduce(op, &partials, &[last], out_dtype)?;
                Tensor::from_storage(s, [n_out])
            }
        };
        into_storage(self, out).map(Some)
    }

    /// `op` of each chunk of `rows` (`[kept.., n]`, `n` walked, past
    /// [`LONGEST_WALK`]): the partials, `[kept.., chunks]`, the last chunk
    /// possibly short.
    fn partials(&self, op: ReduceOp, rows: &Tensor, out_dtype: DType) -> Result<Tensor> {
        let last = rows.rank() - 1;
        let (head, tail) = chunked(rows)?;
        let s = self.reduce(op, &head, &[last + 1], out_dtype)?;
        let head = Tensor::from_storage(s, &head.dims()[..=last]);
        let Some(tail) = tail else {
            return Ok(head);
        };
        let s = self.reduce(op, &tail, &[last], out_dtype)?;
        let tail = Tensor::from_storage(s, [&tail.dims()[..last], &[1]].concat());
        no_grad(|| Tensor::cat(&[head, tail], -1))
    }

    /// Argmax or argmin (`op`) over `dims` in chunks: the first chunk whose
    /// best value wins, then the index within it.
    fn arg_in_chunks(&self, op: ReduceOp, x: &Tensor, dims: &[usize]) -> Result<Tensor> {
        let best = if op == ReduceOp::ArgMax {
            ReduceOp::Max
        } else {
            ReduceOp::Min
        };
        let rows = rows_last(x, dims)?;
        let within = self.partials(op, &rows, DType::I64)?;
        let values = self.partials(best, &rows, x.dtype())?;
        let last = values.rank() - 1;
        let kept = values.dims()[..last].to_vec();
        let chunk = self.reduce(op, &values, &[last], DType::I64)?;
        let chunk = Tensor::from_storage(chunk, [kept.as_slice(), &[1]].concat());
        no_grad(|| {
            let at = chunk.to_dtype(DType::I32)?;
            let index = Tensor::from_storage(self.gather(&within, last, &at)?, chunk.dims());
            let start = chunk.mul_scalar(LONGEST_WALK as i64)?;
            start.add(&index)?.reshape(kept)
        })
    }

    /// Variance (its square root when `root`) over `dims` as the reference
    /// defines it: the mean, then the squared deviations' sum over
    /// `max(n − correction, 0)`.
    fn variance(&self, x: &Tensor, dims: &[usize], correction: f64, root: bool) -> Result<Tensor> {
        let (_, n) = reduce_sizes(x, dims);
        let d = signed(dims);
        no_grad(|| {
            let deviations = x.sub(&x.mean(&d, true)?)?;
            let squares = deviations.square()?.sum(&d, false)?;
            let var = squares.div_scalar((n as f64 - correction).max(0.0))?;
            if root { var.sqrt() } else { Ok(var) }
        })
    }

    /// `logsumexp` of a float tensor (f32, or f64 where the device has it)
    /// over `dims`, composed of device ops as the reference defines it:
    /// `m + ln Σ exp(x − m)` with `m` the maximum clamped into the finite
    /// range (so an all-`−∞` slice gives `−∞`, a `+∞` gives `+∞`, and a
    /// NaN stays NaN, where `x − m` with an infinite `m` would be NaN);
    /// over an empty dim, `−∞` (the log of an empty sum).
    pub(crate) fn logsumexp_composed(&self, x: &Tensor, dims: &[usize]) -> Result<Tensor> {
        let out: Vec<usize> = (0..x.rank())
            .filter(|d| !dims.contains(d))
            .map(|d| x.dims()[d])
            .collect();
        if dims.iter().any(|&d| x.dims()[d] == 0) {
            let len = out.iter().product();
            let fill = self.fill_pattern(x.dtype(), len, f64::NEG_INFINITY)?;
            return Ok(Tensor::from_storage(fill, out));
        }
        let finite = match x.dtype() {
            DType::F64 => f64::MAX,
            _ => f64::from(f32::MAX),
        };
        let d = signed(dims);
        no_grad(|| {
            let shift = x.max(&d, true)?.clamp(Some(-finite), Some(finite))?;
            let sum = x.sub(&shift)?.exp()?.sum(&d, false)?;
            sum.log()?.add(&shift.reshape(out)?)
        })
    }

    /// Softmax or log-softmax along `dim` composed of device ops as the
    /// reference defines it (the maximum subtracted, `exp`, the blocked
    /// sum), for rows too long for one thread.
    pub(crate) fn softmax_composed(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
        let d = [dim as isize];
        let out = no_grad(|| {
            let shifted = x.sub(&x.max(&d, true)?)?;
            let exps = shifted.exp()?;
            let sum = exps.sum(&d, true)?;
            if log {
                shifted.sub(&sum.log()?)
            } else {
                exps.div(&sum)
            }
        })?;
        into_storage(self, out)
    }

    /// Layer normalization over the last `dims` dims composed of device
    /// ops as the reference defines it: the mean, the mean of the squared
    /// deviations, then `(x − mean) / sqrt(var + eps)`.
    pub(crate) fn layer_norm_composed(&self, x: &Tensor, dims: usize, eps: f64) -> Result<Storage> {
        let over: Vec<isize> = (-(dims as isize)..0).collect();
        let out = no_grad(|| {
            let deviations = x.sub(&x.mean(&over, true)?)?;
            let var = deviations.square()?.mean(&over, true)?;
            deviations.div(&var.add_scalar(eps)?.sqrt()?)
        })?;
        into_storage(self, out)
    }
}

impl<D: GpuDevice> GpuBackend<D> {
    /// The scan `op` of `x` along `dim`, a row longer than one thread of
    /// the scan kernels walks, in chunks (see the module docs); `None` for
    /// a float scan on a device without f64.
    pub(crate) fn scan_long(
        &self,
        op: ScanOp,
        x: &Tensor,
        dim: usize,
        out_dtype: DType,
    ) -> Result<Option<Storage>> {
        if x.dtype().is_float() && !self.f64_native() {
            return Ok(None);
        }
        if x.dtype().is_float() && x.dtype() != DType::F64 {
            // f64 into a half is the host's (its rounding rule): halves
            // come back through f32.
            let via = if is_half(out_dtype) {
                DType::F32
            } else {
                out_dtype
            };
            let wide = no_grad(|| x.to_dtype(DType::F64))?;
            let scanned = self.scan(op, &wide, dim, DType::F64)?;
            let t = Tensor::from_storage(scanned, x.shape().clone());
            let out = no_grad(|| t.to_dtype(via)?.to_dtype(out_dtype))?;
            return into_storage(self, out).map(Some);
        }
        let out = no_grad(|| self.scan_in_chunks(op, x, dim, out_dtype))?;
        into_storage(self, out).map(Some)
    }

    /// `op` along `dim` as chunks of [`LONGEST_WALK`], each scanned by the
    /// backend's own `scan`, then carried.
    fn scan_in_chunks(
        &self,
        op: ScanOp,
        x: &Tensor,
        dim: usize,
        out_dtype: DType,
    ) -> Result<Tensor> {
        let (rows, back) = dim_last(x, dim)?;
        let last = x.rank() - 1;
        let kept = rows.dims()[..last].to_vec();
        let scanned = |t: &Tensor, along: usize| -> Result<Tensor> {
            let s = self.scan(op, t, along, out_dtype)?;
            Ok(Tensor::from_storage(s, t.shape().clone()))
        };
        // Each whole chunk scanned alone: [kept.., whole, LONGEST_WALK].
        let (head, tail) = chunked(&rows)?;
        let whole = head.dims()[last];
        let local = scanned(&head, last + 1)?;
        // Each chunk's last value, scanned: the carry through its end.
        let ends = local
            .narrow(-1, LONGEST_WALK - 1, 1)?
            .reshape([kept.as_slice(), &[whole]].concat())?;
        let through = scanned(&ends, last)?;
        let mut chunks = vec![local.narrow(-2, 0, 1)?];
        if whole > 1 {
            let carry = through.narrow(-1, 0, whole - 1)?.unsqueeze(-1)?;
            chunks.push(carried(op, &local.narrow(-2, 1, whole - 1)?, &carry)?);
        }
        let mut parts = vec![
            Tensor::cat(&chunks, -2)?
                .reshape([kept.as_slice(), &[whole * LONGEST_WALK]].concat())?,
        ];
        if let Some(tail) = tail {
            let tail = scanned(&tail, last)?;
            let carry = through.narrow(-1, whole - 1, 1)?;
            parts.push(carried(op, &tail, &carry)?);
        }
        Tensor::cat(&parts, -1)?.permute(&back)
    }
}

/// A chunk's local scan `local` with the running value `carry` of the
/// chunks before it (broadcast along the chunk) folded in, as the
/// reference's step folds: `+`, `×`, or its log-add-exp.
fn carried(op: ScanOp, local: &Tensor, carry: &Tensor) -> Result<Tensor> {
    match op {
        ScanOp::Sum => local.add(carry),
        ScanOp::Prod => local.mul(carry),
        ScanOp::LogSumExp => {
            // `hi + log1p(exp(lo − hi))`, NaN propagating; two infinities
            // of one sign give that infinity (the formula's `∞ − ∞` would
            // be NaN), so `−∞` stays the identity.
            let carry = carry.expand(local.dims())?;
            let hi = local.maximum(&carry)?;
            let lo = local.minimum(&carry)?;
            let formula = hi.add(&lo.sub(&hi)?.exp()?.log1p()?)?;
            let same_infinity = lo.eq(&hi)?.logical_and(&hi.isinf()?)?;
            Tensor::where_(&same_infinity, &hi, &formula)
        }
    }
}

/// `rows` (`[kept.., n]`, `n` past [`LONGEST_WALK`]) as its whole chunks,
/// a view `[kept.., whole, LONGEST_WALK]` (splitting one dim is a view
/// whatever its stride), and the short tail `[kept.., rest]` if any.
fn chunked(rows: &Tensor) -> Result<(Tensor, Option<Tensor>)> {
    let last = rows.rank() - 1;
    let n = rows.dims()[last];
    let (whole, rest) = (n / LONGEST_WALK, n % LONGEST_WALK);
    let head = rows
        .narrow(-1, 0, whole * LONGEST_WALK)?
        .view([&rows.dims()[..last], &[whole, LONGEST_WALK]].concat())?;
    let tail = match rest {
        0 => None,
        _ => Some(rows.narrow(-1, whole * LONGEST_WALK, rest)?),
    };
    Ok((head, tail))
}

/// `x` with `dim` moved last, the other dims in their order (a view), and
/// the permutation that puts it back.
pub(crate) fn dim_last(x: &Tensor, dim: usize) -> Result<(Tensor, Vec<isize>)> {
    let rank = x.rank();
    let order: Vec<usize> = (0..rank).filter(|&d| d != dim).chain([dim]).collect();
    let mut back = vec![0isize; rank];
    for (i, &d) in order.iter().enumerate() {
        back[d] = i as isize;
    }
    Ok((x.permute(&signed(&order))?, back))
}

/// `x` with the dims `dims` moved last, in their order, and flattened into
/// one: `[kept.., n]`, the walk order of the reference's groups. A view
/// where the strides allow; otherwise the front end's reshape copies on
/// the device.
fn rows_last(x: &Tensor, dims: &[usize]) -> Result<Tensor> {
    let mut walked = dims.to_vec();
    walked.sort_unstable();
    let kept: Vec<usize> = (0..x.rank()).filter(|d| !walked.contains(d)).collect();
    let order: Vec<isize> = kept.iter().chain(&walked).map(|&d| d as isize).collect();
    let mut shape: Vec<usize> = kept.iter().map(|&d| x.dims()[d]).collect();
    shape.push(walked.iter().map(|&d| x.dims()[d]).product());
    no_grad(|| x.permute(&order)?.reshape(shape))
}
