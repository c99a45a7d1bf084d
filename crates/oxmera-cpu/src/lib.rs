//! The optimized CPU backend: the reference's answers, fast.
//!
//! The reference backend defines what every op means; this crate computes
//! the same answers as quickly as a CPU allows, and the conformance suite
//! holds it to the reference's results within each op's tolerance. It
//! registers itself for [`Device::Cpu`] at link time, exactly as the
//! reference does for [`Device::Reference`], so depending on it (or on the
//! `oxmera` crate, which re-exports it) is enough.
//!
//! # Where the speed comes from
//!
//! - **No copies it can avoid.** A contiguous input is read in place; a
//!   strided or broadcast one is walked run by run (see `strided`), after
//!   merging the dims that can be merged, so a bias broadcast over a batch
//!   is a loop over contiguous rows, and a scalar operand is a register.
//! - **Loops the compiler can vectorize**, written over plain slices in
//!   `f32`/`f64`. Where that is not enough — the exponential inside
//!   softmax — the loop is compiled a second time for AVX2+FMA and for
//!   AVX-512 and picked at run time (see `simd`).
//! - **Its own GEMM** ([`gemm`]), from first principles: packed panels
//!   (or operands read in place, for narrow products), a
//!   register-blocked micro-kernel per instruction set (AVX-512, AVX2+FMA,
//!   NEON, portable), cache blocking, and threads over row blocks. It
//!   serves matmul, linear layers (which are matmuls) and conv2d
//!   (im2col, then GEMM), forward and backward.
//! - **Threads** from rayon, over output chunks large enough to amortize
//!   the hand-off. The count follows `RAYON_NUM_THREADS`, or
//!   [`set_num_threads`]. A loop of many small ops runs fastest on one of
//!   the pool's own threads ([`on_pool`]): each op then splits its work
//!   in place instead of waking the pool and sleeping until it is done.
//! - **Fewer page faults.** A large output is fresh memory the operating
//!   system maps in page by page on first write, which costs more than
//!   the writing; large outputs are hinted onto 2 MiB huge pages on Linux
//!   (see `pages`).
//! - **Fusion where asked for**: [`fused::zip3`] evaluates a three-operand
//!   expression in one pass instead of one pass per op; softmax,
//!   log-softmax and layer normalization are one kernel per row each
//!   (`softmax`, `norm`), the row staying in cache between its passes;
//!   so are the scans `cumsum` and `cumprod` (`scan`, rows to threads,
//!   folded in `f64` as the reference folds them).
//!
//! # Determinism
//!
//! Results are bit-for-bit reproducible, and they do not depend on the
//! thread count either: work is cut into pieces of a fixed size (GEMM row
//! panels, reduction chunks, rows) whatever the number of threads, each
//! piece is computed by the same code, and partial results are combined
//! in a fixed order. The tests check this on 1, 2, 3 and 5 threads. What
//! does change results is the instruction set ([`Isa`]): FMA rounds once
//! where a separate multiply and add round twice.
//!
//! # Accuracy
//!
//! `f32` is computed in `f32`, with FMA where the instruction set has it,
//! except where `f64` costs nothing measurable and removes an error
//! source: sums of `f32` add 16 terms per `f32` partial sum and carry
//! those into `f64` (at most 15 `f32` roundings per term, at any length;
//! widening every term cost a fifth of the bandwidth), and transcendental
//! functions other than `exp` are evaluated in `f64` and rounded once, so
//! they match the reference to the last bit. `f64` sums are blocked and
//! pairwise. The exponential used by softmax is an `f32` polynomial within
//! two ulps; softmax subtracts the row maximum in `f32`, so an entry far
//! below the maximum carries the exponential's conditioning,
//! `|x - max|·u` relative, as any `f32` softmax does; matmul and convolution accumulate in the
//! operand's precision, in blocked order. `f16` and `bf16` matmul and
//! convolution run in `f32` and round once.
//!
//! # What is delegated to the reference
//!
//! Ops off the training hot path, and dtypes no model trains in, are
//! computed by the reference backend (both keep their data in host memory,
//! so delegating costs no conversion) and re-labelled as `cpu` storage:
//!
//! - `cat`, `pad`, `flip`, `triangle`, and `cumsum`/`cumprod` on dtypes
//!   other than `f32` and `f64`;
//! - `erf` and exact-`erf` GELU (the reference owns the `erf` evaluation);
//! - reductions `prod`, `all`, `any`, and every reduction, elementwise op,
//!   softmax and layer normalization on `f16`, `bf16` and integer dtypes
//!   (comparisons, `where`, casts, copies and indexing are native for
//!   every dtype);
//! - integer matmul and convolution (forward and backward), and pooling
//!   and its backward on integer and half-precision dtypes;
//!   `scatter_add` on integers.
//!
//! # What this crate must never know about
//!
//! Any other backend but the reference (which it may call), any GPU
//! library, and anything above the tensor layer (autograd, layers,
//! optimizers): it receives validated operands and returns fresh storage,
//! like every backend.

use std::sync::Arc;

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{
    Backend, BinaryOp, CmpOp, Conv2dParams, HostBuffer, Pool2dParams, Provider, ReduceOp, ScanOp,
    ScatterMode, Storage, Tensor, UnaryOp,
};

/// Runs a generic body with the Rust type of a dtype as `$t` (defined
/// here, before the modules, so that every module of the crate can use it).
macro_rules! by_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            ::oxmera_core::DType::F16 => {
                type $t = ::half::f16;
                $body
            }
            ::oxmera_core::DType::BF16 => {
                type $t = ::half::bf16;
                $body
            }
            ::oxmera_core::DType::F32 => {
                type $t = f32;
                $body
            }
            ::oxmera_core::DType::F64 => {
                type $t = f64;
                $body
            }
            ::oxmera_core::DType::I32 => {
                type $t = i32;
                $body
            }
            ::oxmera_core::DType::I64 => {
                type $t = i64;
                $body
            }
            ::oxmera_core::DType::U8 => {
                type $t = u8;
                $body
            }
            ::oxmera_core::DType::Bool => {
                type $t = bool;
                $body
            }
        }
    };
}

mod backward;
mod conv;
mod data;
mod elementwise;
pub mod fused;
pub mod gemm;
mod host;
mod index;
mod isa;
mod matmul;
mod norm;
mod pages;
pub mod peak;
mod reduce;
mod scan;
mod simd;
mod softmax;
mod strided;
mod threads;
mod update;
mod vmath;

pub use isa::{Isa, isa};
pub use threads::{num_threads, on_pool, set_num_threads};

/// The optimized CPU backend (a unit value; its settings are global).
#[derive(Debug, Clone, Copy, Default)]
pub struct Cpu;

#[linkme::distributed_slice(oxmera_tensor::BACKEND_PROVIDERS)]
#[linkme(crate = oxmera_tensor::__linkme)]
static PROVIDE_CPU: Provider = Provider {
    kind: "cpu",
    open: |_| Ok(provide()),
};

fn provide() -> Arc<dyn Backend> {
    Arc::new(Cpu)
}

/// Registers the CPU backend for [`Device::Cpu`] explicitly. Needed only
/// by a program that links this crate without naming it; the link-time
/// provider does it otherwise.
pub fn register() {
    oxmera_tensor::registry::register(provide());
}

/// Re-labels storage the reference backend computed as `cpu` storage.
fn delegated(storage: Result<Storage>) -> Result<Storage> {
    Ok(host::relabel(storage?))
}

impl Backend for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn device(&self) -> Device {
        Device::Cpu
    }

    oxmera_tensor::host_backend_services!(Device::Cpu, fill = data::fill, random = data::random);

    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        Ok(Storage::host(Device::Cpu, data))
    }

    fn to_host(&self, x: &Tensor) -> Result<HostBuffer> {
        data::to_host(x)
    }

    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        Ok(Storage::host(Device::Cpu, data::to_host(x)?))
    }

    fn cast(&self, x: &Tensor, dtype: DType) -> Result<Storage> {
        data::cast(x, dtype)
    }

    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
        elementwise::unary(op, x)
    }

    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        elementwise::binary(op, a, b)
    }

    fn compare(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        elementwise::compare(op, a, b)
    }

    fn where_cond(&self, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Storage> {
        elementwise::where_cond(cond, a, b)
    }

    fn reduce(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Storage> {
        reduce::reduce(op, x, dims, out_dtype)
    }

    fn softmax(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
        softmax::softmax(x, dim, log)
    }

    fn layer_norm(&self, x: &Tensor, dims: usize, eps: f64) -> Result<Storage> {
        norm::layer_norm(x, dims, eps)
    }

    fn relu_backward(&self, x: &Tensor, grad: &Tensor) -> Result<Storage> {
        backward::relu(x, grad)
    }

    fn gelu_backward(&self, x: &Tensor, grad: &Tensor, tanh: bool) -> Result<Storage> {
        backward::gelu(x, grad, tanh)
    }

    fn softmax_backward(
        &self,
        y: &Tensor,
        grad: &Tensor,
        dim: usize,
        log: bool,
    ) -> Result<Storage> {
        backward::softmax(y, grad, dim, log)
    }

    fn layer_norm_backward(
        &self,
        x: &Tensor,
        y: &Tensor,
        grad: &Tensor,
        dims: usize,
        eps: f64,
    ) -> Result<Storage> {
        backward::layer_norm(x, y, grad, dims, eps)
    }

    fn adam_update(
        &self,
        param: &Tensor,
        grad: &Tensor,
        exp_avg: &Tensor,
        exp_avg_sq: &Tensor,
        step: &oxmera_tensor::fused_update::AdamStep,
    ) -> Result<[Storage; 3]> {
        update::adam(param, grad, exp_avg, exp_avg_sq, step)
    }

    fn sgd_update(
        &self,
        param: &Tensor,
        grad: &Tensor,
        momentum_buffer: Option<&Tensor>,
        step: &oxmera_tensor::fused_update::SgdStep,
    ) -> Result<(Storage, Option<Storage>)> {
        update::sgd(param, grad, momentum_buffer, step)
    }

    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        matmul::matmul(a, b)
    }

    fn scan(&self, op: ScanOp, x: &Tensor, dim: usize, out_dtype: DType) -> Result<Storage> {
        scan::scan(op, x, dim, out_dtype)
    }

    fn sort(&self, x: &Tensor, dim: usize, descending: bool) -> Result<Storage> {
        delegated(oxmera_reference::Reference.sort(x, dim, descending))
    }

    fn cat(&self, xs: &[&Tensor], dim: usize) -> Result<Storage> {
        delegated(oxmera_reference::Reference.cat(xs, dim))
    }

    fn index_select(&self, x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
        index::index_select(x, dim, indices)
    }

    fn gather(&self, x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
        index::gather(x, dim, index)
    }

    fn scatter(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        mode: ScatterMode,
    ) -> Result<Storage> {
        index::scatter(x, dim, index, src, mode)
    }

    fn pad(&self, x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage> {
        index::pad(x, pads, value)
    }

    fn flip(&self, x: &Tensor, dims: &[usize]) -> Result<Storage> {
        delegated(oxmera_reference::Reference.flip(x, dims))
    }

    fn triangle(&self, x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage> {
        delegated(oxmera_reference::Reference.triangle(x, diagonal, upper))
    }

    fn conv2d(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: Conv2dParams,
    ) -> Result<Storage> {
        conv::conv2d(x, weight, bias, params)
    }

    fn max_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        conv::max_pool2d(x, params)
    }

    fn avg_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        conv::avg_pool2d(x, params)
    }

    fn conv2d_backward(
        &self,
        x: &Tensor,
        weight: &Tensor,
        grad: &Tensor,
        params: Conv2dParams,
    ) -> Result<(Storage, Storage)> {
        conv::grad::conv2d_backward(x, weight, grad, params)
    }

    fn max_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        conv::max_pool2d_backward(x, grad, params)
    }

    fn avg_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        conv::avg_pool2d_backward(x, grad, params)
    }
}
