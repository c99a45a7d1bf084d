//! The reference backend: the definition of correct.
//!
//! Every operation here is a plain loop over logical indices, written to be
//! read rather than to be fast. Float inputs of every width are widened to
//! `f64`, computed on, and rounded once to the output dtype at the end, so
//! that for `f16`, `bf16` and `f32` the result is (for the elementwise ops)
//! the correctly rounded value of the exact-in-`f64` computation. That makes
//! it an oracle: the conformance suite compares every other backend with
//! it, using tolerances derived from each op's error analysis.
//!
//! Integer inputs are computed in `i64` and wrapped (two's complement) into
//! the output width, which is what the hardware does for `i32` and `u8`.
//!
//! This crate knows the tensor front end and the core vocabulary, and no
//! other backend. It registers itself for [`Device::Reference`] at link
//! time, so depending on it (or on the `oxmera` crate) is enough.

use std::sync::Arc;

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{
    Backend, BinaryOp, CmpOp, Conv2dParams, HostBuffer, Pool2dParams, Provider, ReduceOp, ScanOp,
    ScatterMode, Storage, Tensor, UnaryOp,
};

mod conv;
mod data;
mod elementwise;
mod index;
mod matmul;
mod read;
mod reduce;
mod sort;

/// The reference's definitions of the element functions whose evaluation
/// needs care (overflow, cancellation, limits at infinity, the sign of a
/// remainder), each on one `f64`. A faster backend that evaluates these
/// ops in `f64` calls them rather than restating them, so it agrees with
/// the reference to the last bit by construction.
pub mod scalar {
    pub use crate::elementwise::erf::erf;
    pub use crate::elementwise::{
        clamp_f64 as clamp, elu, gelu_erf, gelu_tanh, hardsigmoid, hardswish, logsigmoid, mish,
        rem_f64 as rem, selu, sigmoid, silu, softplus,
    };
    pub use crate::reduce::{log_add_exp, scan_identity, scan_step};
}

/// The reference backend (a unit value; it has no state).
#[derive(Debug, Clone, Copy, Default)]
pub struct Reference;

#[linkme::distributed_slice(oxmera_tensor::BACKEND_PROVIDERS)]
#[linkme(crate = oxmera_tensor::__linkme)]
static PROVIDE_REFERENCE: Provider = Provider {
    kind: "reference",
    open: |_| Ok(provide()),
};

fn provide() -> Arc<dyn Backend> {
    Arc::new(Reference)
}

/// Registers the reference backend for [`Device::Reference`] explicitly.
/// Needed only by a program that links this crate without naming it; the
/// link-time provider does it otherwise.
pub fn register() {
    oxmera_tensor::registry::register(provide());
}

impl Backend for Reference {
    fn name(&self) -> &'static str {
        "reference"
    }

    fn device(&self) -> Device {
        Device::Reference
    }

    oxmera_tensor::host_backend_services!(Device::Reference);

    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        Ok(Storage::host(Device::Reference, data))
    }

    fn to_host(&self, x: &Tensor) -> Result<HostBuffer> {
        data::to_host(x)
    }

    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        data::contiguous(x)
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

    fn scan(&self, op: ScanOp, x: &Tensor, dim: usize, out_dtype: DType) -> Result<Storage> {
        reduce::scan(op, x, dim, out_dtype)
    }

    fn sort(&self, x: &Tensor, dim: usize, descending: bool) -> Result<Storage> {
        sort::sort(x, dim, descending)
    }

    fn softmax(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
        reduce::softmax(x, dim, log)
    }

    fn layer_norm(&self, x: &Tensor, dims: usize, eps: f64) -> Result<Storage> {
        reduce::layer_norm(x, dims, eps)
    }

    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        matmul::matmul(a, b)
    }

    fn cat(&self, xs: &[&Tensor], dim: usize) -> Result<Storage> {
        index::cat(xs, dim)
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
        index::flip(x, dims)
    }

    fn triangle(&self, x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage> {
        index::triangle(x, diagonal, upper)
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
        conv::conv2d_backward(x, weight, grad, params)
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
