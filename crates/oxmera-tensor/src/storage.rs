//! Storage: the flat, dtype-tagged buffer that tensors view.

use std::any::Any;
use std::fmt;

use half::{bf16, f16};
use oxmera_core::{DType, Device};

use crate::Element;

/// A flat vector of elements in host memory, tagged by dtype.
#[derive(Clone, PartialEq)]
#[allow(missing_docs)]
pub enum HostBuffer {
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    Bool(Vec<bool>),
}

/// Calls `$body` with `$v` bound to the typed vector inside a
/// [`HostBuffer`], whatever its dtype. Lets generic code over
/// [`Element`] be written once.
#[macro_export]
macro_rules! with_host_buffer {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            $crate::HostBuffer::F16($v) => $body,
            $crate::HostBuffer::BF16($v) => $body,
            $crate::HostBuffer::F32($v) => $body,
            $crate::HostBuffer::F64($v) => $body,
            $crate::HostBuffer::I32($v) => $body,
            $crate::HostBuffer::I64($v) => $body,
            $crate::HostBuffer::U8($v) => $body,
            $crate::HostBuffer::Bool($v) => $body,
        }
    };
}

/// Calls the generic `$build::<T>($args)` with the element type of `$dtype`.
macro_rules! by_dtype {
    ($dtype:expr, $build:ident ( $($arg:expr),* )) => {
        match $dtype {
            ::oxmera_core::DType::F16 => $build::<::half::f16>($($arg),*),
            ::oxmera_core::DType::BF16 => $build::<::half::bf16>($($arg),*),
            ::oxmera_core::DType::F32 => $build::<f32>($($arg),*),
            ::oxmera_core::DType::F64 => $build::<f64>($($arg),*),
            ::oxmera_core::DType::I32 => $build::<i32>($($arg),*),
            ::oxmera_core::DType::I64 => $build::<i64>($($arg),*),
            ::oxmera_core::DType::U8 => $build::<u8>($($arg),*),
            ::oxmera_core::DType::Bool => $build::<bool>($($arg),*),
        }
    };
}
pub(crate) use by_dtype;

impl HostBuffer {
    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        match self {
            HostBuffer::F16(_) => DType::F16,
            HostBuffer::BF16(_) => DType::BF16,
            HostBuffer::F32(_) => DType::F32,
            HostBuffer::F64(_) => DType::F64,
            HostBuffer::I32(_) => DType::I32,
            HostBuffer::I64(_) => DType::I64,
            HostBuffer::U8(_) => DType::U8,
            HostBuffer::Bool(_) => DType::Bool,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        with_host_buffer!(self, v => v.len())
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A buffer of `len` elements of `dtype`, each the conversion of `value`.
    pub fn filled(dtype: DType, len: usize, value: f64) -> HostBuffer {
        HostBuffer::from_f64s(dtype, std::iter::repeat_n(value, len))
    }

    /// A buffer of `dtype` built from `f64` values (converted per
    /// [`Element`]'s rules).
    pub fn from_f64s(dtype: DType, values: impl IntoIterator<Item = f64>) -> HostBuffer {
        fn build<T: Element>(values: impl IntoIterator<Item = f64>) -> HostBuffer {
            T::into_buffer(values.into_iter().map(T::from_f64).collect())
        }
        by_dtype!(dtype, build(values))
    }

    /// A buffer of `dtype` built from `i64` values, each converted as a
    /// cast from `i64` converts it ([`Element::from_i64`]: integers wrap,
    /// floats round).
    pub fn from_i64s(dtype: DType, values: impl IntoIterator<Item = i64>) -> HostBuffer {
        fn build<T: Element>(values: impl IntoIterator<Item = i64>) -> HostBuffer {
            T::into_buffer(values.into_iter().map(T::from_i64).collect())
        }
        by_dtype!(dtype, build(values))
    }

    /// Element `i` as an `f64`.
    pub fn get_f64(&self, i: usize) -> f64 {
        with_host_buffer!(self, v => v[i].to_f64())
    }

    /// Element `i` as an `i64`.
    pub fn get_i64(&self, i: usize) -> i64 {
        with_host_buffer!(self, v => v[i].to_i64())
    }

    /// The elements as little-endian bytes, `dtype().size_in_bytes()` each
    /// (a `bool` is one byte, 0 or 1): the layout of a checkpoint file and
    /// of a device buffer.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        fn bytes<T, const N: usize>(v: &[T], f: impl Fn(&T) -> [u8; N]) -> Vec<u8> {
            v.iter().flat_map(f).collect()
        }
        match self {
            HostBuffer::F16(v) => bytes(v, |x| x.to_le_bytes()),
            HostBuffer::BF16(v) => bytes(v, |x| x.to_le_bytes()),
            HostBuffer::F32(v) => bytes(v, |x| x.to_le_bytes()),
            HostBuffer::F64(v) => bytes(v, |x| x.to_le_bytes()),
            HostBuffer::I32(v) => bytes(v, |x| x.to_le_bytes()),
            HostBuffer::I64(v) => bytes(v, |x| x.to_le_bytes()),
            HostBuffer::U8(v) => v.clone(),
            HostBuffer::Bool(v) => bytes(v, |&x| [u8::from(x)]),
        }
    }

    /// Reads elements of `dtype` from little-endian bytes, the inverse of
    /// [`HostBuffer::to_le_bytes`]. Trailing bytes short of a whole element
    /// are ignored (a device pads its buffers to whole words); a `bool` is
    /// true for any non-zero byte — a caller that must refuse other bytes
    /// checks them first.
    pub fn from_le_bytes(dtype: DType, bytes: &[u8]) -> HostBuffer {
        fn values<T, const N: usize>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            bytes
                .chunks_exact(N)
                .map(|c| f(c.try_into().expect("chunks_exact gives N bytes")))
                .collect()
        }
        match dtype {
            DType::F16 => HostBuffer::F16(values(bytes, f16::from_le_bytes)),
            DType::BF16 => HostBuffer::BF16(values(bytes, bf16::from_le_bytes)),
            DType::F32 => HostBuffer::F32(values(bytes, f32::from_le_bytes)),
            DType::F64 => HostBuffer::F64(values(bytes, f64::from_le_bytes)),
            DType::I32 => HostBuffer::I32(values(bytes, i32::from_le_bytes)),
            DType::I64 => HostBuffer::I64(values(bytes, i64::from_le_bytes)),
            DType::U8 => HostBuffer::U8(bytes.to_vec()),
            DType::Bool => HostBuffer::Bool(bytes.iter().map(|&b| b != 0).collect()),
        }
    }
}

impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        with_host_buffer!(self, v => write!(f, "{}{:?}", self.dtype(), v))
    }
}

/// Memory owned by a non-host backend (a GPU buffer handle, say). The
/// tensor crate never looks inside; only the backend that made it does.
pub trait DeviceBuffer: Any + Send + Sync + fmt::Debug {
    /// Upcast for the owning backend to downcast to its concrete type.
    fn as_any(&self) -> &dyn Any;
}

/// Where a storage's bytes are.
#[derive(Debug)]
pub enum StorageData {
    /// In host memory, readable by anyone.
    Host(HostBuffer),
    /// In a device's memory, readable only through its backend.
    Device(Box<dyn DeviceBuffer>),
}

/// A flat buffer on a device, shared (through `Arc`) by every tensor that
/// views it. Storage is immutable once made: an operation writes its result
/// into fresh storage, which keeps views and autograd simple to reason
/// about.
#[derive(Debug)]
pub struct Storage {
    device: Device,
    dtype: DType,
    len: usize,
    data: StorageData,
}

impl Storage {
    /// Host storage for a host device (`reference` or `cpu`).
    pub fn host(device: Device, buffer: HostBuffer) -> Storage {
        Storage {
            device,
            dtype: buffer.dtype(),
            len: buffer.len(),
            data: StorageData::Host(buffer),
        }
    }

    /// Storage held in a device's own memory.
    pub fn device_buffer(
        device: Device,
        dtype: DType,
        len: usize,
        buffer: Box<dyn DeviceBuffer>,
    ) -> Storage {
        Storage {
            device,
            dtype,
            len,
            data: StorageData::Device(buffer),
        }
    }

    /// The device buffer inside, as the backend's own type `B`; `None` for
    /// host data or another backend's buffer (each backend says how that
    /// is an error for it).
    pub fn device_buffer_as<B: DeviceBuffer>(&self) -> Option<&B> {
        match &self.data {
            StorageData::Device(b) => b.as_any().downcast_ref::<B>(),
            StorageData::Host(_) => None,
        }
    }

    /// The device the memory is on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The element dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The host buffer, when the memory is on the host.
    pub fn as_host(&self) -> Option<&HostBuffer> {
        match &self.data {
            StorageData::Host(b) => Some(b),
            StorageData::Device(_) => None,
        }
    }

    /// The raw data.
    pub fn data(&self) -> &StorageData {
        &self.data
    }

    /// Takes the host buffer out, if the storage is on the host.
    pub fn into_host(mut self) -> Option<HostBuffer> {
        match &mut self.data {
            StorageData::Host(b) => Some(std::mem::replace(b, HostBuffer::F32(Vec::new()))),
            StorageData::Device(_) => None,
        }
    }
}

/// A host buffer is offered to the [`host_cache`](crate::host_cache) when
/// its storage goes, so a later output of the same size can reuse it.
impl Drop for Storage {
    fn drop(&mut self) {
        if let StorageData::Host(b) = &mut self.data {
            crate::host_cache::give(std::mem::replace(b, HostBuffer::F32(Vec::new())));
        }
    }
}
