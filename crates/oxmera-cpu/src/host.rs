//! Typed access to host storage, and making `cpu` storage.

use std::borrow::Cow;

use half::{bf16, f16};
use oxmera_core::{Device, Error, Layout, Result};
use oxmera_tensor::{Element, HostBuffer, Storage, Tensor};

use crate::gemm::Scalar;
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
        Ok(Cow::Borrowed(contiguous_part(buf, x.layout())))
    } else {
        Ok(Cow::Owned(strided::gather(buf, x.layout())))
    }
}

/// The elements a contiguous `layout` views in `buf`. An empty view may
/// carry any offset (a zero-width `narrow` of an empty tensor keeps one
/// past the end of its storage), so it is answered without slicing.
pub(crate) fn contiguous_part<'b, T>(buf: &'b [T], layout: &Layout) -> &'b [T] {
    if layout.numel() == 0 {
        return &[];
    }
    &buf[layout.offset()..layout.offset() + layout.numel()]
}

/// A float dtype as the kernels compute it: `f32` and `f64` in their own
/// precision, `f16` and `bf16` widened to `f32` (exactly: every half value
/// is an `f32` value) and rounded once into their own type at the end. So
/// one generic kernel entry point serves all four.
pub(crate) trait Computed: Element {
    /// The type the kernels run in.
    type In: Scalar + Element;
    /// The elements of `x` in logical order, in that type (borrowed when
    /// nothing needs converting or gathering).
    fn load(x: &Tensor) -> Result<Cow<'_, [Self::In]>>;
    /// Results rounded back into this type.
    fn finish(values: Vec<Self::In>) -> Vec<Self>;
}

macro_rules! computed_natively {
    ($($t:ty)*) => {$(
        impl Computed for $t {
            type In = $t;
            fn load(x: &Tensor) -> Result<Cow<'_, [$t]>> {
                read(x)
            }
            fn finish(values: Vec<$t>) -> Vec<$t> {
                values
            }
        }
    )*};
}

macro_rules! computed_in_f32 {
    ($($t:ty)*) => {$(
        impl Computed for $t {
            type In = f32;
            fn load(x: &Tensor) -> Result<Cow<'_, [f32]>> {
                Ok(Cow::Owned(read::<$t>(x)?.iter().map(|v| v.to_f64() as f32).collect()))
            }
            fn finish(values: Vec<f32>) -> Vec<$t> {
                values.into_iter().map(|v| <$t as Element>::from_f64(v as f64)).collect()
            }
        }
    )*};
}

computed_natively!(f32 f64);
computed_in_f32!(f16 bf16);

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
