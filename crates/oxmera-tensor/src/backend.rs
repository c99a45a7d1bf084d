//! The backend seam: what a device must be able to do.
//!
//! The division of labour is strict. [`Tensor`]'s methods (the front end)
//! validate every argument, resolve negative dims, compute output shapes,
//! and broadcast operands to a common shape *as stride-0 views*; only then
//! do they call a backend. So a backend never sees a malformed request and
//! never re-implements shape logic: it receives operands of known, agreed
//! shapes — possibly non-contiguous, possibly with offsets and zero strides —
//! and returns fresh storage laid out contiguously (row-major) in the output
//! shape the front end announced.
//!
//! The trait has four parts:
//!
//! - **Device services**, which only the device can provide: upload
//!   ([`Backend::from_host`]) and download ([`Backend::download`]) are
//!   required; copy, fill, arange, random numbers and
//!   [`Backend::synchronize`] have bodies that work through upload and
//!   download, for a backend to replace with device code.
//! - **Capabilities**: which dtypes the device stores, its index dtype,
//!   whether it range-checks indices itself, and for each (op, dtype)
//!   whether it computes natively, falls back to the host, or declines
//!   ([`Support`]).
//! - **Operations**, one method per family taking an op enum. Every one
//!   has a default body that runs on the host — download the operands,
//!   compute with the reference backend, upload the result — counted per
//!   op and device in [`crate::fallback`]. So a new backend that
//!   implements the two required services runs every model on its first
//!   day, and goes native one op at a time, with the fallback report
//!   saying which ops are still to do.
//! - **Backward passes and an optimizer step** that a kernel can fuse
//!   (GELU's, softmax's and layer normalization's gradients, Adam's
//!   update): their default bodies are not host fallbacks but the
//!   formulas composed from the backend's own ops
//!   ([`crate::fused_backward`], [`crate::fused_update`]), so they run
//!   where the tensors are, and a backend with a fused kernel overrides
//!   them.
//!
//! # Errors that arrive later
//!
//! A device backend may queue work and return before it has run. A failure
//! found then (out of memory, a lost device, an index a kernel found out
//! of range) cannot be returned by the call that queued it; the backend
//! keeps the first one and returns it, as
//! [`oxmera_core::Error::DeviceFault`] naming the op that queued the
//! failing work, from the next [`Backend::synchronize`] or read-back
//! ([`Backend::download`], [`Backend::to_host`]) on that device. Host
//! backends run every op to completion before returning, so their errors
//! are never late.

use std::fmt;

use oxmera_core::{DType, Device, Result};

use crate::fallback::{self, Host};
use crate::{
    BinaryOp, CmpOp, Conv2dParams, Generator, HostBuffer, Pool2dParams, ReduceOp, ScanOp,
    ScatterMode, Storage, Tensor, UnaryOp,
};

/// How a backend computes an op on a dtype: its answer to
/// [`Backend::support`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Support {
    /// On the device, by the backend's own kernel.
    Native,
    /// On the host, by the reference backend, through download and upload
    /// (counted in [`crate::fallback`]).
    Fallback,
    /// Not at all: a call fails with a typed error, and the conformance
    /// suite lists the case as unsupported rather than run it.
    Unsupported,
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Support::Native => "native",
            Support::Fallback => "fallback",
            Support::Unsupported => "unsupported",
        })
    }
}

/// A distribution the random service draws from. Every backend draws the
/// same Philox4x32-10 blocks for the same stream position (see
/// [`crate::random`] for how each distribution maps a block to a value,
/// and what a device may differ by).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Uniform in `[low, high)`, finite, `low < high`.
    Uniform {
        /// The lower bound (included).
        low: f64,
        /// The upper bound (excluded before rounding).
        high: f64,
    },
    /// Normal, finite `mean`, finite `std >= 0`.
    Normal {
        /// The mean.
        mean: f64,
        /// The standard deviation.
        std: f64,
    },
    /// Integers uniform in `[low, high)`, `low < high`.
    Integers {
        /// The lower bound (included).
        low: i64,
        /// The upper bound (excluded).
        high: i64,
    },
}

impl Distribution {
    /// The public name of the draw (`"uniform"`, `"normal"`, `"randint"`).
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::Uniform { .. } => "uniform",
            Distribution::Normal { .. } => "normal",
            Distribution::Integers { .. } => "randint",
        }
    }
}

/// A device's implementation of the tensor operations.
///
/// Contract for every method: inputs have been validated by the front end;
/// the returned storage is contiguous, row-major, on this backend's device,
/// and holds exactly the number of elements of the output shape stated in
/// the method's doc. Float ops on `f16`/`bf16`/`f32` may compute in any
/// precision that meets the conformance suite's tolerances. Index operands
/// arrive in [`Backend::index_dtype`], in range unless
/// [`Backend::checks_indices`] says the backend checks them itself.
///
/// Only [`Backend::name`], [`Backend::device`], [`Backend::from_host`] and
/// [`Backend::download`] must be written; see the module docs for what
/// every other default does.
pub trait Backend: Send + Sync + fmt::Debug {
    // ---- Device services ------------------------------------------------

    /// A short name (`"reference"`, `"cpu"`).
    fn name(&self) -> &'static str;

    /// The device this backend computes on.
    fn device(&self) -> Device;

    /// Upload: moves host data onto this device. The front end has checked
    /// that the device stores the dtype ([`Backend::stores`]).
    // The name pairs with `to_host`; `self` is the device, not the source.
    #[allow(clippy::wrong_self_convention)]
    fn from_host(&self, data: HostBuffer) -> Result<Storage>;

    /// Download: every element of `storage` (made by this backend), in
    /// storage order, to the host. A read-back: it waits for queued work
    /// and reports a late failure (see the module docs).
    fn download(&self, storage: &Storage) -> Result<HostBuffer>;

    /// Copies a tensor's elements, in logical row-major order, to the host.
    /// The default downloads the whole storage and walks the layout there.
    fn to_host(&self, x: &Tensor) -> Result<HostBuffer> {
        fallback::host_view(self, x)?.to_host()
    }

    /// Copies `x` into fresh contiguous storage (shape of `x`).
    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        let host = Host::begin(self, "contiguous", x.dtype())?;
        host.finish(host.reference().contiguous(&host.tensor_of(x)?)?)
    }

    /// `len` elements of `dtype`, each `value` converted per
    /// [`crate::Element`]'s rules (the front end has checked an integer
    /// or bool value is exact). The default builds them on the host and
    /// uploads them.
    fn fill(&self, dtype: DType, len: usize, value: f64) -> Result<Storage> {
        fallback::record(self, "fill");
        self.from_host(HostBuffer::filled(dtype, len, value))
    }

    /// `start + i·step` for `i` in `0..len`, each computed in `f64` and
    /// converted to `dtype`. The default builds them on the host.
    fn arange(&self, start: f64, step: f64, len: usize, dtype: DType) -> Result<Storage> {
        fallback::record(self, "arange");
        self.from_host(crate::random::arange_host(start, step, len, dtype))
    }

    /// `len` values of `dist` in `dtype`, element `i` drawn from the Philox
    /// block at counter `rng.offset() + i` under key `rng.seed()` (the
    /// caller advances its generator). A device computes the same blocks;
    /// the default draws them on the host and uploads them.
    fn random(
        &self,
        dist: Distribution,
        rng: Generator,
        len: usize,
        dtype: DType,
    ) -> Result<Storage> {
        fallback::record(self, dist.name());
        self.from_host(crate::random::draw_host(dist, rng, len, dtype))
    }

    /// Waits until every piece of work queued on the device has finished,
    /// and returns the first failure among them (see the module docs).
    /// The default has nothing to wait for.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    // ---- Capabilities ---------------------------------------------------

    /// Whether the device can hold tensors of `dtype`. The front end
    /// refuses to create or cast to a dtype it cannot, with
    /// [`oxmera_core::Error::UnsupportedOnDevice`]. Default: every dtype.
    fn stores(&self, dtype: DType) -> bool {
        let _ = dtype;
        true
    }

    /// The dtype index operands arrive in (`I64` or `I32`); the front end
    /// converts on the device. Default: `I64`.
    fn index_dtype(&self) -> DType {
        DType::I64
    }

    /// Whether the backend range-checks index operands itself, where they
    /// live, reporting the first bad index as a late error. When `false`
    /// (the default) the front end reads indices to the host and checks
    /// them before the call.
    fn checks_indices(&self) -> bool {
        false
    }

    /// How the backend computes `op` (the public name: `"add"`,
    /// `"matmul"`, `"conv2d_backward"`) on `dtype`. The default answers
    /// [`Support::Fallback`] for every stored dtype, since it cannot see
    /// which methods a backend overrides; a backend says `Native` for what
    /// it has kernels for. A fallback body refuses an op declared
    /// [`Support::Unsupported`] with [`oxmera_core::Error::NotImplemented`].
    fn support(&self, op: &str, dtype: DType) -> Support {
        let _ = op;
        if self.stores(dtype) {
            Support::Fallback
        } else {
            Support::Unsupported
        }
    }

    // ---- Operations (each falls back to the host by default) -------------

    /// Converts `x` to `dtype` following [`crate::Element`]'s rules (shape of `x`).
    fn cast(&self, x: &Tensor, dtype: DType) -> Result<Storage> {
        let host = Host::begin(self, "cast", x.dtype())?;
        host.finish(host.reference().cast(&host.tensor_of(x)?, dtype)?)
    }

    /// Elementwise `op(x)` (shape and dtype of `x`).
    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
        let host = Host::begin(self, op.name(), x.dtype())?;
        host.finish(host.reference().unary(op, &host.tensor_of(x)?)?)
    }

    /// Elementwise `op(a, b)`; `a` and `b` have the same shape and dtype
    /// (shape and dtype of `a`).
    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        let host = Host::begin(self, op.name(), a.dtype())?;
        let (a, b) = (host.tensor_of(a)?, host.tensor_of(b)?);
        host.finish(host.reference().binary(op, &a, &b)?)
    }

    /// Elementwise `op(x, value)`, or `op(value, x)` when `scalar_first`;
    /// `value` is already exact in `x`'s dtype for integers and bool, and
    /// is rounded to it for floats (shape and dtype of `x`). The scalar
    /// travels as a value: a device passes it to its kernel as an argument.
    fn binary_scalar(
        &self,
        op: BinaryOp,
        x: &Tensor,
        value: f64,
        scalar_first: bool,
    ) -> Result<Storage> {
        let host = Host::begin(self, op.name(), x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(
            host.reference()
                .binary_scalar(op, &x, value, scalar_first)?,
        )
    }

    /// Elementwise comparison; same shape and dtype (shape of `a`, bool).
    fn compare(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        let host = Host::begin(self, op.name(), a.dtype())?;
        let (a, b) = (host.tensor_of(a)?, host.tensor_of(b)?);
        host.finish(host.reference().compare(op, &a, &b)?)
    }

    /// Elementwise `op(x, value)` with `value` converted to `x`'s dtype as
    /// for [`Backend::binary_scalar`] (shape of `x`, bool).
    fn compare_scalar(&self, op: CmpOp, x: &Tensor, value: f64) -> Result<Storage> {
        let host = Host::begin(self, op.name(), x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(host.reference().compare_scalar(op, &x, value)?)
    }

    /// `cond ? a : b` elementwise; all three have one shape, `cond` is bool,
    /// `a` and `b` share a dtype (shape and dtype of `a`).
    fn where_cond(&self, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Storage> {
        let host = Host::begin(self, "where", a.dtype())?;
        let (c, a, b) = (
            host.tensor_of(cond)?,
            host.tensor_of(a)?,
            host.tensor_of(b)?,
        );
        host.finish(host.reference().where_cond(&c, &a, &b)?)
    }

    /// Reduces over `dims` (sorted, distinct, possibly empty, which means
    /// a copy). Output shape: `x`'s with each reduced dim set to 1. Output
    /// dtype: as the front end's doc of each op says (`out_dtype`).
    fn reduce(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Storage> {
        let host = Host::begin(self, op.name(), x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(host.reference().reduce(op, &x, dims, out_dtype)?)
    }

    /// The inclusive scan `op` along `dim` (`cumsum`, `cumprod`,
    /// `logcumsumexp`): shape of `x`, dtype `out_dtype` (`x`'s for floats,
    /// `i64` for integers and bool, wrapping), as the front end's docs say.
    /// Floats are accumulated in at least the computing precision, in
    /// order; `logcumsumexp` (floats only) folds each element into the
    /// running value `a` as `max + log1p(exp(min - max))` of the pair.
    fn scan(&self, op: ScanOp, x: &Tensor, dim: usize, out_dtype: DType) -> Result<Storage> {
        let host = Host::begin(self, op.name(), x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(host.reference().scan(op, &x, dim, out_dtype)?)
    }

    /// The stable sorting permutation of every slice of `x` along `dim`:
    /// an `I64` storage of `x`'s shape, row-major, whose slice lists the
    /// positions along `dim` of the slice's elements in sorted order —
    /// ascending unless `descending`, NaN above every number, equal
    /// elements (`-0` and `0` among them) in their order, `i64` compared
    /// exactly. `x` has a dim and an element (the front end answers the
    /// rest); `sort`, `argsort`, `topk`, `kthvalue` and `median` all start
    /// here.
    fn sort(&self, x: &Tensor, dim: usize, descending: bool) -> Result<Storage> {
        let host = Host::begin(self, "sort", x.dtype())?;
        host.finish(
            host.reference()
                .sort(&host.tensor_of(x)?, dim, descending)?,
        )
    }

    /// Softmax (or log-softmax when `log`) along `dim` (shape of `x`).
    fn softmax(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
        let name = if log { "log_softmax" } else { "softmax" };
        let host = Host::begin(self, name, x.dtype())?;
        host.finish(host.reference().softmax(&host.tensor_of(x)?, dim, log)?)
    }

    /// Layer normalization without the affine part: each slice over the
    /// last `dims` dims (`1 <= dims <= rank`) becomes
    /// `(x - mean) / sqrt(var + eps)`, the variance dividing by the count
    /// (shape of `x`). `x` is a float tensor and `eps` finite and `>= 0`.
    /// A fused op: a backend runs it as one kernel per slice.
    fn layer_norm(&self, x: &Tensor, dims: usize, eps: f64) -> Result<Storage> {
        let host = Host::begin(self, "layer_norm", x.dtype())?;
        host.finish(
            host.reference()
                .layer_norm(&host.tensor_of(x)?, dims, eps)?,
        )
    }

    // ---- Backward passes (composed from this backend's ops by default) ----

    /// The gradient of ReLU with respect to `x`: `grad` where `x > 0`,
    /// zero elsewhere (shape and dtype of `x`; `grad` has both, in any
    /// layout). The default composes it from this backend's own ops
    /// ([`crate::fused_backward::relu`]: a comparison, a fill and a
    /// select); a backend overrides it with one pass.
    fn relu_backward(&self, x: &Tensor, grad: &Tensor) -> Result<Storage> {
        let t = crate::fused_backward::relu(x, grad)?;
        crate::fused_backward::into_storage(self, t)
    }

    /// The gradient of GELU with respect to `x` (of
    /// [`UnaryOp::GeluTanh`] when `tanh`, else of [`UnaryOp::GeluErf`]):
    /// `grad · gelu'(x)` (shape and dtype of `x`; `grad` has both, in any
    /// layout). The default composes it from this backend's own ops
    /// ([`crate::fused_backward::gelu`]); a backend overrides it with one
    /// pass.
    fn gelu_backward(&self, x: &Tensor, grad: &Tensor, tanh: bool) -> Result<Storage> {
        let t = crate::fused_backward::gelu(x, grad, tanh)?;
        crate::fused_backward::into_storage(self, t)
    }

    /// The gradient of [`Backend::softmax`] (log-softmax when `log`) along
    /// `dim`, from its output `y` and the output's gradient `grad` (one
    /// shape and dtype, any layouts; shape of `y`). The default composes
    /// it ([`crate::fused_backward::softmax`]).
    fn softmax_backward(
        &self,
        y: &Tensor,
        grad: &Tensor,
        dim: usize,
        log: bool,
    ) -> Result<Storage> {
        let t = crate::fused_backward::softmax(y, grad, dim, log)?;
        crate::fused_backward::into_storage(self, t)
    }

    /// The gradient of [`Backend::layer_norm`] over the last `dims` dims,
    /// from its input `x`, its output `y` and the output's gradient `grad`
    /// (one shape and dtype, any layouts; shape of `x`). The default
    /// composes it ([`crate::fused_backward::layer_norm`]).
    fn layer_norm_backward(
        &self,
        x: &Tensor,
        y: &Tensor,
        grad: &Tensor,
        dims: usize,
        eps: f64,
    ) -> Result<Storage> {
        let t = crate::fused_backward::layer_norm(x, y, grad, dims, eps)?;
        crate::fused_backward::into_storage(self, t)
    }

    /// One Adam or AdamW step ([`crate::fused_update::AdamStep`]) of
    /// `param` with gradient `grad` and moments `exp_avg`, `exp_avg_sq`
    /// (one shape and float dtype, any layouts): the new parameter, first
    /// and second moments, in that order. The default composes it from
    /// this backend's own ops ([`crate::fused_update::adam_on`]); a backend
    /// overrides it with one pass.
    fn adam_update(
        &self,
        param: &Tensor,
        grad: &Tensor,
        exp_avg: &Tensor,
        exp_avg_sq: &Tensor,
        step: &crate::fused_update::AdamStep,
    ) -> Result<[Storage; 3]> {
        crate::fused_update::adam_on(self, param, grad, exp_avg, exp_avg_sq, step)
    }

    /// One SGD step ([`crate::fused_update::SgdStep`]) of `param` with
    /// gradient `grad` and, with momentum, the previous buffer (`None` on
    /// the first step; one shape and float dtype, any layouts): the new
    /// parameter and, with momentum, the new buffer. The default composes
    /// it from this backend's own ops ([`crate::fused_update::sgd_on`]); a
    /// backend overrides it with one pass.
    fn sgd_update(
        &self,
        param: &Tensor,
        grad: &Tensor,
        momentum_buffer: Option<&Tensor>,
        step: &crate::fused_update::SgdStep,
    ) -> Result<(Storage, Option<Storage>)> {
        crate::fused_update::sgd_on(self, param, grad, momentum_buffer, step)
    }

    /// Batched matrix product: `a` is `[..., m, k]`, `b` is `[..., k, n]`
    /// with identical batch dims (possibly stride-0 broadcasts); the output
    /// is `[..., m, n]`.
    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        let host = Host::begin(self, "matmul", a.dtype())?;
        let (a, b) = (host.tensor_of(a)?, host.tensor_of(b)?);
        host.finish(host.reference().matmul(&a, &b)?)
    }

    /// Concatenates along `dim`; inputs agree on every other dim and dtype.
    fn cat(&self, xs: &[&Tensor], dim: usize) -> Result<Storage> {
        let host = Host::begin(self, "cat", xs[0].dtype())?;
        let xs: Vec<Tensor> = xs
            .iter()
            .map(|x| host.tensor_of(x))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = xs.iter().collect();
        host.finish(host.reference().cat(&refs, dim)?)
    }

    /// Picks slices of `x` along `dim` at `indices` (1-D, of
    /// [`Backend::index_dtype`]). Output: `x`'s shape with `dim` set to
    /// `indices.numel()`.
    fn index_select(&self, x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
        let host = Host::begin(self, "index_select", x.dtype())?;
        let (x, i) = (host.tensor_of(x)?, host.index_of(indices)?);
        host.finish(host.reference().index_select(&x, dim, &i)?)
    }

    /// `out[i][j][k] = x[i][index[i][j][k]][k]` (for `dim == 1`); `index`
    /// is of the output's shape, of [`Backend::index_dtype`].
    fn gather(&self, x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
        let host = Host::begin(self, "gather", x.dtype())?;
        let (x, i) = (host.tensor_of(x)?, host.index_of(index)?);
        host.finish(host.reference().gather(&x, dim, &i)?)
    }

    /// A copy of `x` with `src` values written (or added) at `index` along
    /// `dim`; `index` and `src` have one shape, `index` is of
    /// [`Backend::index_dtype`]. Output: shape of `x`.
    fn scatter(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        mode: ScatterMode,
    ) -> Result<Storage> {
        let name = match mode {
            ScatterMode::Replace => "scatter",
            ScatterMode::Add => "scatter_add",
        };
        let host = Host::begin(self, name, x.dtype())?;
        let (x, i, s) = (
            host.tensor_of(x)?,
            host.index_of(index)?,
            host.tensor_of(src)?,
        );
        host.finish(host.reference().scatter(&x, dim, &i, &s, mode)?)
    }

    /// Pads each dim with `(before, after)` copies of `value`; `pads` has
    /// one pair per dim of `x`.
    fn pad(&self, x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage> {
        let host = Host::begin(self, "pad", x.dtype())?;
        host.finish(host.reference().pad(&host.tensor_of(x)?, pads, value)?)
    }

    /// Reverses the order of elements along each of `dims` (shape of `x`).
    fn flip(&self, x: &Tensor, dims: &[usize]) -> Result<Storage> {
        let host = Host::begin(self, "flip", x.dtype())?;
        host.finish(host.reference().flip(&host.tensor_of(x)?, dims)?)
    }

    /// Keeps the lower (`upper == false`) or upper triangle of the last two
    /// dims relative to `diagonal`, zeroing the rest (shape of `x`).
    fn triangle(&self, x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage> {
        let name = if upper { "triu" } else { "tril" };
        let host = Host::begin(self, name, x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(host.reference().triangle(&x, diagonal, upper)?)
    }

    /// 2-D convolution: `x` is `[n, c_in, h, w]`, `weight` is
    /// `[c_out, c_in / groups, kh, kw]`, `bias` is `[c_out]`; the output is
    /// `[n, c_out, h_out, w_out]` with the usual output-size formula.
    fn conv2d(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: Conv2dParams,
    ) -> Result<Storage> {
        let host = Host::begin(self, "conv2d", x.dtype())?;
        let (x, w) = (host.tensor_of(x)?, host.tensor_of(weight)?);
        let b = bias.map(|b| host.tensor_of(b)).transpose()?;
        host.finish(host.reference().conv2d(&x, &w, b.as_ref(), params)?)
    }

    /// Max pooling over NCHW input; output `[n, c, h_out, w_out]`.
    fn max_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        let host = Host::begin(self, "max_pool2d", x.dtype())?;
        host.finish(host.reference().max_pool2d(&host.tensor_of(x)?, params)?)
    }

    /// Average pooling over NCHW input; output `[n, c, h_out, w_out]`.
    fn avg_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        let host = Host::begin(self, "avg_pool2d", x.dtype())?;
        host.finish(host.reference().avg_pool2d(&host.tensor_of(x)?, params)?)
    }

    /// The gradients of [`Backend::conv2d`] with respect to `x` and
    /// `weight` (in that order, with their shapes), given `grad`, the
    /// gradient of the output. The bias gradient is a sum the front end
    /// takes itself.
    fn conv2d_backward(
        &self,
        x: &Tensor,
        weight: &Tensor,
        grad: &Tensor,
        params: Conv2dParams,
    ) -> Result<(Storage, Storage)> {
        let host = Host::begin(self, "conv2d_backward", x.dtype())?;
        let (x, w, g) = (
            host.tensor_of(x)?,
            host.tensor_of(weight)?,
            host.tensor_of(grad)?,
        );
        let (gx, gw) = host.reference().conv2d_backward(&x, &w, &g, params)?;
        Ok((host.finish(gx)?, host.finish(gw)?))
    }

    /// The gradient of [`Backend::max_pool2d`] with respect to `x` (shape
    /// of `x`): each window's gradient goes to the first position, in
    /// row-major window order, holding the window's maximum.
    fn max_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        let host = Host::begin(self, "max_pool2d_backward", x.dtype())?;
        let (x, g) = (host.tensor_of(x)?, host.tensor_of(grad)?);
        host.finish(host.reference().max_pool2d_backward(&x, &g, params)?)
    }

    /// The gradient of [`Backend::avg_pool2d`] with respect to `x` (shape
    /// of `x`): each window's gradient spread evenly over its taps.
    fn avg_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        let host = Host::begin(self, "avg_pool2d_backward", x.dtype())?;
        let (x, g) = (host.tensor_of(x)?, host.tensor_of(grad)?);
        host.finish(host.reference().avg_pool2d_backward(&x, &g, params)?)
    }
}
