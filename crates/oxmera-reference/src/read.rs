//! Reading a strided tensor into plain vectors, and writing results back.
//!
//! Every op in this crate starts by reading its inputs in logical
//! row-major order into `Vec<f64>` (floats, exact) or `Vec<i64>`
//! (integers and bool), and ends by converting one plain vector into the
//! output dtype. Doing the strided walk in one place keeps the ops
//! themselves about arithmetic, and guarantees that views — permuted,
//! narrowed, stride-0 broadcast, offset — are all handled the same way.

use oxmera_core::{DType, Result};
use oxmera_tensor::{Element, HostBuffer, Storage, Tensor, with_host_buffer};

/// The elements of `x` in logical order, widened to `f64`.
pub(crate) fn f64s(x: &Tensor) -> Result<Vec<f64>> {
    let host = host_of(x)?;
    Ok(with_host_buffer!(host, v => x.layout().offsets().map(|o| v[o].to_f64()).collect()))
}

/// The elements of `x` in logical order, as `i64` (for integer and bool
/// dtypes; floats truncate).
pub(crate) fn i64s(x: &Tensor) -> Result<Vec<i64>> {
    let host = host_of(x)?;
    Ok(with_host_buffer!(host, v => x.layout().offsets().map(|o| v[o].to_i64()).collect()))
}

/// The elements of a bool tensor in logical order.
pub(crate) fn bools(x: &Tensor) -> Result<Vec<bool>> {
    Ok(i64s(x)?.into_iter().map(|v| v != 0).collect())
}

fn host_of(x: &Tensor) -> Result<&HostBuffer> {
    x.storage()
        .as_host()
        .ok_or_else(|| oxmera_core::Error::DeviceMismatch {
            op: "reference",
            lhs: oxmera_core::Device::Reference,
            rhs: x.device(),
        })
}

/// Reference-device storage of `dtype` from `f64` values, rounded once.
pub(crate) fn store_f64(dtype: DType, values: Vec<f64>) -> Storage {
    Storage::host(
        oxmera_core::Device::Reference,
        HostBuffer::from_f64s(dtype, values),
    )
}

/// Reference-device storage of `dtype` from `i64` values (wrapping into
/// integer dtypes, `!= 0` into bool, rounding into floats).
pub(crate) fn store_i64(dtype: DType, values: Vec<i64>) -> Storage {
    fn build<T: Element>(values: Vec<i64>) -> HostBuffer {
        T::into_buffer(values.into_iter().map(T::from_i64).collect())
    }
    use half::{bf16, f16};
    let buf = match dtype {
        DType::F16 => build::<f16>(values),
        DType::BF16 => build::<bf16>(values),
        DType::F32 => build::<f32>(values),
        DType::F64 => build::<f64>(values),
        DType::I32 => build::<i32>(values),
        DType::I64 => build::<i64>(values),
        DType::U8 => build::<u8>(values),
        DType::Bool => build::<bool>(values),
    };
    Storage::host(oxmera_core::Device::Reference, buf)
}

/// Whether the reference computes this dtype in `f64` (floats) or `i64`.
pub(crate) fn is_float(x: &Tensor) -> bool {
    x.dtype().is_float()
}

/// A copy of `x`'s elements in logical order, in `x`'s own dtype — exact
/// for every dtype, including `i64` beyond 2^53.
pub(crate) fn copy_logical(x: &Tensor) -> Result<HostBuffer> {
    let host = host_of(x)?;
    Ok(
        with_host_buffer!(host, v => Element::into_buffer(x.layout().offsets().map(|o| v[o]).collect())),
    )
}
