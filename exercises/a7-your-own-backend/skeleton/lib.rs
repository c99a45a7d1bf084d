//! # A7 — your own backend
//!
//! Tier A's capstone: a device of your own, `mine:N`, that oxmera trains
//! on. Its memory is a buffer only this crate reads (as a GPU's memory is
//! readable only through its driver); its kernels are your A1–A4 pieces —
//! offsets from strides, broadcasting as stride-0 reads, reductions, the
//! batched matmul — and every op you write no kernel for goes through the
//! device seam's fallback: downloaded, computed by the reference, uploaded,
//! and counted.
//!
//! The front end (`Tensor`'s methods) has already validated every call,
//! computed its output shape and broadcast its operands to one shape as
//! stride-0 views. Your backend receives operands of agreed shapes, in any
//! layout, and returns fresh contiguous storage in the output's shape.
//!
//! Work through the TODOs in order; `oxmera-learn ladder check A7` runs
//! the spec, and `oxmera-learn ladder hint A7` gives a nudge.

use std::any::Any;
// Used once you write A7.1.
#[allow(unused_imports)]
use std::sync::Arc;

// Used once you write A7.1.
#[allow(unused_imports)]
use oxmera::tensor::registry::{self, Provider};
use oxmera::tensor::{
    Backend, BinaryOp, DeviceBuffer, HostBuffer, ReduceOp, Storage, Support, Tensor, UnaryOp,
    fallback,
};
use oxmera::{DType, Device, Error, Layout, Result};

/// The device kind this backend serves: devices are `mine:0`, `mine:1`, ….
pub const KIND: &str = "mine";

/// The device `mine:ordinal`, with this backend registered for every
/// `mine` device.
pub fn device(ordinal: usize) -> Result<Device> {
    // TODO(A7.1): register a `Provider` for KIND whose `open` makes a
    // `MyBackend` for the device it is asked for (registry::register_provider),
    // then return the custom device `mine:ordinal` (Device::custom).
    todo!("A7.1: register the provider and return mine:{ordinal}")
}

/// Device memory: a host buffer that only this backend reads. (Given.)
#[derive(Debug)]
pub struct Memory(pub HostBuffer);

impl DeviceBuffer for Memory {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The backend of one `mine` device.
#[derive(Debug)]
pub struct MyBackend {
    device: Device,
}

/// The storage offset of every element of `layout`, in logical
/// (row-major) order: A1's `offset + Σ index·stride`, walked like an
/// odometer (A3). A stride of 0 (a broadcast) reads one element many times.
pub fn logical_offsets(layout: &Layout) -> Vec<usize> {
    // TODO(A7.2): layout.dims(), layout.strides().as_slice(), layout.offset().
    todo!("A7.2: the offsets of {:?}", layout.dims())
}

// Given helpers: your code calls them (until it does, they are unused).
#[allow(dead_code)]
impl MyBackend {
    /// Wraps `data` as storage in this device's memory. (Given.)
    fn store(&self, data: HostBuffer) -> Storage {
        Storage::device_buffer(
            self.device,
            data.dtype(),
            data.len(),
            Box::new(Memory(data)),
        )
    }

    /// This device's memory inside `storage`, or why it is not. (Given.)
    fn memory<'a>(&self, storage: &'a Storage) -> Result<&'a HostBuffer> {
        match storage.device_buffer_as::<Memory>() {
            Some(Memory(data)) => Ok(data),
            None => Err(Error::BackendUnavailable {
                op: "download",
                device: self.device,
                reason: format!("storage of {} is not in mine's memory", storage.device()),
            }),
        }
    }

    /// `x`'s elements in logical order, widened to `f64`. (Given: it reads
    /// through your `logical_offsets`.)
    fn values(&self, x: &Tensor) -> Result<Vec<f64>> {
        let memory = self.memory(x.storage())?;
        Ok(logical_offsets(x.layout())
            .into_iter()
            .map(|o| memory.get_f64(o))
            .collect())
    }

    /// `values` rounded once to `dtype`, stored contiguously. (Given.)
    fn output(&self, dtype: DType, values: Vec<f64>) -> Storage {
        self.store(HostBuffer::from_f64s(dtype, values))
    }
}

impl Backend for MyBackend {
    fn name(&self) -> &'static str {
        "mine"
    }

    fn device(&self) -> Device {
        // TODO(A7.1): the device this backend was opened for.
        todo!("A7.1: device()")
    }

    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        // TODO(A7.1): upload: keep `data` in this device's memory.
        todo!("A7.1: from_host of {} elements", data.len())
    }

    fn download(&self, storage: &Storage) -> Result<HostBuffer> {
        // TODO(A7.1): download: every element of the storage, in storage order.
        todo!("A7.1: download of {} elements", storage.len())
    }

    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        // TODO(A7.3): copy x's elements in logical order, in x's own dtype
        // (any dtype: `oxmera::tensor::with_host_buffer!` gives the typed vector).
        fallback::on_host(self).contiguous(x)
    }

    fn fill(&self, dtype: DType, len: usize, value: f64) -> Result<Storage> {
        // TODO(A7.3): `len` copies of `value` in `dtype`, made on the device.
        fallback::on_host(self).fill(dtype, len, value)
    }

    fn support(&self, op: &str, dtype: DType) -> Support {
        // TODO(A7.4): Native for what you compute yourself (the services
        // for every dtype, your kernels for f32 and f64), Fallback for the rest.
        let _ = (op, dtype);
        Support::Fallback
    }

    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
        // TODO(A7.5): neg, exp, log, sqrt, relu on f32/f64 (computed in f64,
        // rounded once by `output`); everything else through the fallback.
        fallback::on_host(self).unary(op, x)
    }

    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        // TODO(A7.5): add, sub, mul, div on f32/f64; each operand read
        // through its own layout.
        fallback::on_host(self).binary(op, a, b)
    }

    fn binary_scalar(
        &self,
        op: BinaryOp,
        x: &Tensor,
        value: f64,
        scalar_first: bool,
    ) -> Result<Storage> {
        // TODO(A7.5): the same four with a scalar: op(x, value), or
        // op(value, x) when `scalar_first`.
        fallback::on_host(self).binary_scalar(op, x, value, scalar_first)
    }

    fn reduce(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Storage> {
        // TODO(A7.6): sum, mean, max over `dims` on f32/f64 (out_dtype is
        // x's dtype for them). The output keeps every dim, each reduced one
        // set to 1; max lets NaN win and keeps the earlier of a tie.
        fallback::on_host(self).reduce(op, x, dims, out_dtype)
    }

    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        // TODO(A7.7): [..., m, k] @ [..., k, n] on f32/f64, the batch dims
        // identical (broadcast ones are stride-0 views): A4's loops.
        fallback::on_host(self).matmul(a, b)
    }
}
