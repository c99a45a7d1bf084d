//! Data movement: contiguous copies and dtype casts, for every dtype.

use half::{bf16, f16};
use oxmera_core::{DType, Layout, Result};
use oxmera_tensor::{Element, HostBuffer, Storage, Tensor, with_host_buffer};

use crate::{host, strided};

/// The elements of `x` in logical order, in its own dtype.
pub(crate) fn to_host(x: &Tensor) -> Result<HostBuffer> {
    let buf = x.storage().as_host().ok_or_else(|| host_error(x))?;
    Ok(with_host_buffer!(buf, v => Element::into_buffer(copy(v, x.layout()))))
}

/// A contiguous copy; a contiguous source is copied in parallel chunks
/// (one thread cannot saturate the memory bus).
fn copy<T: Element>(buf: &[T], layout: &Layout) -> Vec<T> {
    if layout.is_contiguous() {
        let src = crate::host::contiguous_part(buf, layout);
        let mut out = strided::output(src.len());
        strided::fill(&mut out, |start, chunk| {
            chunk.copy_from_slice(&src[start..start + chunk.len()]);
        });
        out
    } else {
        strided::gather(buf, layout)
    }
}

/// Converts `x` to `dtype` by [`Element`]'s rules, exactly as the
/// reference does: float sources go through `f64`, integer and bool
/// sources through `i64` (both exact for the source).
pub(crate) fn cast(x: &Tensor, dtype: DType) -> Result<Storage> {
    let buf = x.storage().as_host().ok_or_else(|| host_error(x))?;
    Ok(with_host_buffer!(buf, v => cast_from(v, x.layout(), dtype)))
}

fn cast_from<S: Element>(buf: &[S], layout: &Layout, dtype: DType) -> Storage {
    match dtype {
        DType::F16 => host::store(convert::<S, f16>(buf, layout)),
        DType::BF16 => host::store(convert::<S, bf16>(buf, layout)),
        DType::F32 => host::store(convert::<S, f32>(buf, layout)),
        DType::F64 => host::store(convert::<S, f64>(buf, layout)),
        DType::I32 => host::store(convert::<S, i32>(buf, layout)),
        DType::I64 => host::store(convert::<S, i64>(buf, layout)),
        DType::U8 => host::store(convert::<S, u8>(buf, layout)),
        DType::Bool => host::store(convert::<S, bool>(buf, layout)),
    }
}

fn convert<S: Element, U: Element>(buf: &[S], layout: &Layout) -> Vec<U> {
    if S::DTYPE.is_float() {
        strided::map1(buf, layout, |s: S| U::from_f64(s.to_f64()))
    } else {
        strided::map1(buf, layout, |s: S| U::from_i64(s.to_i64()))
    }
}

fn host_error(x: &Tensor) -> oxmera_core::Error {
    oxmera_core::Error::DeviceMismatch {
        op: "cpu",
        lhs: oxmera_core::Device::Cpu,
        rhs: x.device(),
    }
}
