//! `f16` and `bf16` tensors computed with the `f32` kernels.
//!
//! WGSL has no `bf16`, `f16` only behind an adapter feature, and the kernel
//! language neither (so CUDA, whose PTX has both, computes them the same
//! way, with the same kernels), so a half tensor is stored as packed 16-bit halves and
//! an op on it runs in three launches: each operand widened to `f32`
//! (exactly), the op's `f32` kernel, the result narrowed once, to nearest
//! even (`halves_to_f32`, `f32_to_halves` in the kernel library).
//!
//! Why the result stays within the conformance tolerance of the reference
//! (which computes in `f64` and rounds once to the half type): the widened
//! operands are exact, the `f32` kernels are within a few `f32` ulps of
//! exact (2^-23 relative each), and the final rounding adds half a half-ulp
//! (2^-9 for `bf16`, 2^-12 for `f16`). The `f32` error can tip a value
//! sitting within a few 2^-23 of a rounding midpoint to the other side, so
//! an element may be one half-ulp off the reference's rounding — inside the
//! table's half-precision tolerances, which are already a few half-ulps.
//! An op whose `f32` path declines (a size, a dtype) returns `None` before
//! anything is narrowed, and the caller runs it on the host on the original
//! half tensors: never a double rounding through a host `f32` op.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::Value as KValue;
use oxmera_kernel::library::{self, half_mode};
use oxmera_tensor::{Conv2dParams, Storage, Tensor};

use crate::backend::GpuBackend;
use crate::device::GpuDevice;
use crate::native::Strided;

/// True for the dtypes this module computes through `f32`.
pub(crate) fn is_half(dtype: DType) -> bool {
    matches!(dtype, DType::F16 | DType::BF16)
}

fn mode_of(dtype: DType) -> u32 {
    if dtype == DType::BF16 {
        half_mode::BF16
    } else {
        half_mode::F16
    }
}

impl<D: GpuDevice> GpuBackend<D> {
    /// `x` (f16 or bf16, any layout) as contiguous f32 storage.
    fn widen_storage(&self, x: &Tensor) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::halves_to_f32(),
            name: "cast",
            inputs: &[x],
            shape: x.dims(),
            out: DType::F32,
            per_thread: 1,
            extra: vec![KValue::U32(mode_of(x.dtype()))],
        })
    }

    /// `x` (f16 or bf16) as a contiguous f32 tensor of its shape.
    pub(crate) fn widen(&self, x: &Tensor) -> Result<Option<Tensor>> {
        Ok(self
            .widen_storage(x)?
            .map(|s| Tensor::from_storage(s, x.shape().clone())))
    }

    /// `x` (f32, any layout) rounded to `dtype` (f16 or bf16).
    fn narrow(&self, x: &Tensor, dtype: DType) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::f32_to_halves(),
            name: "cast",
            inputs: &[x],
            shape: x.dims(),
            out: dtype,
            per_thread: 2,
            extra: vec![KValue::U32(mode_of(dtype))],
        })
    }

    /// The casts between a half type and f32, natively.
    pub(crate) fn cast_halves(&self, x: &Tensor, dtype: DType) -> Result<Option<Storage>> {
        match (x.dtype(), dtype) {
            (h, DType::F32) if is_half(h) => self.widen_storage(x),
            (DType::F32, h) if is_half(h) => self.narrow(x, h),
            _ => Ok(None),
        }
    }

    /// Runs `f32_op` on `values` when they are f32, or on their widened
    /// copies when they are all f16 (or all bf16), narrowing the result
    /// back to that type when `narrows` (ops whose result has the operands'
    /// dtype; comparisons and index results do not). `None` for other
    /// dtypes, or when a launch or the f32 path declines.
    pub(crate) fn in_f32(
        &self,
        values: &[&Tensor],
        narrows: bool,
        f32_op: impl FnOnce(&[&Tensor]) -> Result<Option<Storage>>,
    ) -> Result<Option<Storage>> {
        let Some(dtype) = values.first().map(|x| x.dtype()) else {
            return Ok(None);
        };
        if values.iter().any(|x| x.dtype() != dtype) {
            return Ok(None);
        }
        if dtype == DType::F32 {
            return f32_op(values);
        }
        if !is_half(dtype) {
            return Ok(None);
        }
        let mut wide = Vec::with_capacity(values.len());
        for x in values {
            match self.widen(x)? {
                Some(w) => wide.push(w),
                None => return Ok(None),
            }
        }
        let refs: Vec<&Tensor> = wide.iter().collect();
        let Some(result) = f32_op(&refs)? else {
            return Ok(None);
        };
        if !narrows {
            return Ok(Some(result));
        }
        let len = result.len();
        self.narrow(&Tensor::from_storage(result, [len]), dtype)
    }

    /// The convolution's two gradients for half tensors: the three
    /// operands widened exactly, the f32 kernels run, both gradients
    /// narrowed once. `None` for other dtypes or where a launch declines.
    pub(crate) fn conv2d_backward_halves(
        &self,
        x: &Tensor,
        weight: &Tensor,
        grad: &Tensor,
        params: Conv2dParams,
    ) -> Result<Option<(Storage, Storage)>> {
        let dtype = x.dtype();
        if !is_half(dtype) || weight.dtype() != dtype || grad.dtype() != dtype {
            return Ok(None);
        }
        let (Some(xw), Some(ww), Some(gw)) =
            (self.widen(x)?, self.widen(weight)?, self.widen(grad)?)
        else {
            return Ok(None);
        };
        let Some((gx, gwt)) = self.conv2d_backward_f32(&xw, &ww, &gw, params)? else {
            return Ok(None);
        };
        let narrow = |s: Storage| {
            let len = s.len();
            self.narrow(&Tensor::from_storage(s, [len]), dtype)
        };
        Ok(match (narrow(gx)?, narrow(gwt)?) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        })
    }

    /// A data-movement op on half tensors through the word kernels: each
    /// of `values` zero-extended into a word per element (its bits, as
    /// i32), `word_op` run on those, and the low halves of its result
    /// packed back into `dtype`. Every bit pattern moves unchanged, NaN
    /// payloads included — a move never rounds.
    pub(crate) fn in_words(
        &self,
        values: &[&Tensor],
        word_op: impl FnOnce(&[&Tensor]) -> Result<Option<Storage>>,
    ) -> Result<Option<Storage>> {
        let Some(dtype) = values.first().map(|x| x.dtype()) else {
            return Ok(None);
        };
        if !is_half(dtype) || values.iter().any(|x| x.dtype() != dtype) {
            return Ok(None);
        }
        let mut words = Vec::with_capacity(values.len());
        for x in values {
            let s = self.strided(Strided {
                kernel: library::halves_to_f32(),
                name: "contiguous",
                inputs: &[x],
                shape: x.dims(),
                out: DType::I32,
                per_thread: 1,
                extra: vec![KValue::U32(half_mode::BITS)],
            })?;
            match s {
                Some(s) => words.push(Tensor::from_storage(s, x.shape().clone())),
                None => return Ok(None),
            }
        }
        let refs: Vec<&Tensor> = words.iter().collect();
        let Some(result) = word_op(&refs)? else {
            return Ok(None);
        };
        let len = result.len();
        self.strided(Strided {
            kernel: library::f32_to_halves(),
            name: "contiguous",
            inputs: &[&Tensor::from_storage(result, [len])],
            shape: &[len],
            out: dtype,
            per_thread: 2,
            extra: vec![KValue::U32(half_mode::BITS)],
        })
    }
}
