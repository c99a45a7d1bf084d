//! Typed access to host storage, and making `cpu` storage.

use std::borrow::Cow;

use oxmera_core::{Device, Error, Result};
use oxmera_tensor::{Element, HostBuffer, Storage, Tensor};

use crate::strided;

/// The whole storage buffer under `x`, typed (not just the part `x` views).
pub(crate) fn buffer<T: Element>(x: &Tensor) -> Result<&[T]> {
    x.storage()
        .as_host()
        .and_then(T::slice)
        .ok_or_else(|| Error::DeviceMismatch {
            op: "cpu",
            lhs: Device::Cpu,
            rhs: x.device(),
        })
}

/// The elements of `x` in logical order, borrowed when `x` is contiguous
/// and gathered into a fresh vector otherwise.
pub(crate) fn read<T: Element>(x: &Tensor) -> Result<Cow<'_, [T]>> {
    let buf = buffer::<T>(x)?;
    if x.is_contiguous() {
        let start = x.layout().offset();
        Ok(Cow::Borrowed(&buf[start..start + x.numel()]))
    } else {
        Ok(Cow::Owned(strided::gather(buf, x.layout())))
    }
}

/// The elements of a half-precision `x` in logical order, widened to
/// `f32` (exactly: `f16` and `bf16` values are all `f32` values), for the
/// kernels that compute narrow floats in `f32` and round once at the end
/// (see [`narrowed`]).
pub(crate) fn widened<T: Element>(x: &Tensor) -> Result<Vec<f32>> {
    Ok(read::<T>(x)?.iter().map(|v| v.to_f64() as f32).collect())
}

/// `f32` results rounded once into `T`.
pub(crate) fn narrowed<T: Element>(values: Vec<f32>) -> Vec<T> {
    values.into_iter().map(|v| T::from_f64(v as f64)).collect()
}

/// `cpu` storage holding `values`.
pub(crate) fn store<T: Element>(values: Vec<T>) -> Storage {
    Storage::host(Device::Cpu, T::into_buffer(values))
}

/// The same host data, labelled as `cpu` storage (for results the
/// reference backend computed on our behalf).
pub(crate) fn relabel(storage: Storage) -> Storage {
    let buffer: HostBuffer = storage
        .into_host()
        .expect("the reference backend keeps its results in host memory");
    Storage::host(Device::Cpu, buffer)
}
