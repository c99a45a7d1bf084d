//! Device services for a backend whose memory is host memory.
//!
//! The reference and CPU backends keep their data in [`HostBuffer`]s, so
//! their upload is a move, their download a clone, and a scalar operand
//! costs nothing to materialize. These are those services, written once
//! for every host backend (and for a learner's first backend, which may
//! start as one).

use std::sync::Arc;

use oxmera_core::{DType, Device, Error, Layout, Result};

use crate::random::{arange_host, draw_host};
use crate::{Distribution, Generator, HostBuffer, Storage, Tensor};

/// A clone of a host storage's buffer; `Err` for device storage (a host
/// backend never made it).
pub fn download(storage: &Storage) -> Result<HostBuffer> {
    storage
        .as_host()
        .cloned()
        .ok_or_else(|| Error::BackendUnavailable {
            op: "download",
            device: storage.device(),
            reason: "a host backend was handed storage that lives on a device".into(),
        })
}

/// `len` copies of `value` in `dtype`, on `device`.
pub fn fill(device: Device, dtype: DType, len: usize, value: f64) -> Storage {
    Storage::host(device, HostBuffer::filled(dtype, len, value))
}

/// `start + i·step` for `i` in `0..len`, on `device`.
pub fn arange(device: Device, start: f64, step: f64, len: usize, dtype: DType) -> Storage {
    Storage::host(device, arange_host(start, step, len, dtype))
}

/// `len` draws of `dist` from `rng`'s position, on `device`.
pub fn random(
    device: Device,
    dist: Distribution,
    rng: Generator,
    len: usize,
    dtype: DType,
) -> Storage {
    Storage::host(device, draw_host(dist, rng, len, dtype))
}

/// `value` in `x`'s dtype, on `x`'s (host) device, viewed with stride 0 at
/// `x`'s shape: the second operand a host backend's `binary` and `compare`
/// take for the `_scalar` forms. One element is stored.
pub fn scalar_operand(x: &Tensor, value: f64) -> Result<Tensor> {
    let storage = Storage::host(x.device(), HostBuffer::filled(x.dtype(), 1, value));
    let one = Tensor::from_parts(
        Arc::new(storage),
        Layout::contiguous(oxmera_core::Shape::scalar()),
    );
    one.broadcast_to(x.shape().clone())
}

/// Writes, inside an `impl Backend for X` block, the methods every host
/// backend shares: `download`, `fill`, `arange` and `random` on
/// `$device`'s host memory, the `_scalar` ops as `binary`/`compare` with
/// a stride-0 host operand, and `support` answering native for every op.
/// The reference and CPU backends write
/// `oxmera_tensor::host_backend_services!(Device::Cpu);` (with their own
/// device) among their methods, and the ops after it. A backend with its
/// own way to fill a buffer and to draw random values names them:
/// `host_backend_services!(Device::Cpu, fill = path::to::fill, random =
/// path::to::random)`, functions of the same signatures as [`fill`] and
/// [`random`].
#[macro_export]
macro_rules! host_backend_services {
    ($device:expr) => {
        $crate::host_backend_services!(
            $device,
            fill = $crate::host_device::fill,
            random = $crate::host_device::random
        );
    };
    ($device:expr, fill = $fill:path, random = $random:path) => {
        fn download(
            &self,
            storage: &$crate::Storage,
        ) -> $crate::__core::Result<$crate::HostBuffer> {
            $crate::host_device::download(storage)
        }

        fn fill(
            &self,
            dtype: $crate::__core::DType,
            len: usize,
            value: f64,
        ) -> $crate::__core::Result<$crate::Storage> {
            Ok($fill($device, dtype, len, value))
        }

        fn arange(
            &self,
            start: f64,
            step: f64,
            len: usize,
            dtype: $crate::__core::DType,
        ) -> $crate::__core::Result<$crate::Storage> {
            Ok($crate::host_device::arange(
                $device, start, step, len, dtype,
            ))
        }

        fn random(
            &self,
            dist: $crate::Distribution,
            rng: $crate::Generator,
            len: usize,
            dtype: $crate::__core::DType,
        ) -> $crate::__core::Result<$crate::Storage> {
            Ok($random($device, dist, rng, len, dtype))
        }

        fn support(&self, _op: &str, _dtype: $crate::__core::DType) -> $crate::Support {
            $crate::Support::Native
        }

        fn binary_scalar(
            &self,
            op: $crate::BinaryOp,
            x: &$crate::Tensor,
            value: f64,
            scalar_first: bool,
        ) -> $crate::__core::Result<$crate::Storage> {
            let s = $crate::host_device::scalar_operand(x, value)?;
            if scalar_first {
                self.binary(op, &s, x)
            } else {
                self.binary(op, x, &s)
            }
        }

        fn compare_scalar(
            &self,
            op: $crate::CmpOp,
            x: &$crate::Tensor,
            value: f64,
        ) -> $crate::__core::Result<$crate::Storage> {
            self.compare(op, x, &$crate::host_device::scalar_operand(x, value)?)
        }
    };
}
