//! The loopback device: a backend that implements device services and
//! nothing else.
//!
//! `loopback:N` keeps every tensor in memory of its own — a buffer behind
//! [`oxmera_tensor::DeviceBuffer`], which nothing but this crate can read,
//! exactly as a GPU's memory is readable only through its driver. It
//! implements what only a device can: upload, download, a copy, fill,
//! arange and random numbers. Every *operation* (arithmetic, reductions,
//! matmul, convolution, their gradients) is left to the trait's default
//! body, which downloads the operands, computes with the reference and
//! uploads the result, and counts it in [`oxmera_tensor::fallback`].
//!
//! It exists for two reasons:
//!
//! - **The proof that the device seam works**: `oxmera conformance
//!   --device loopback` runs the whole corpus, forward and backward, and
//!   every op is reported as a fallback; `oxmera train --device loopback`
//!   trains a model. A custom device, from a crate oxmera's core does not
//!   know about, registered at link time.
//! - **The template for a new backend**: a learner's or a vendor's backend
//!   starts as this file with its buffer type replaced by device memory,
//!   then overrides one op at a time (declaring it [`Support::Native`]),
//!   with the fallback report saying what is left.
//!
//! Its index dtype is `i32`, as a WGSL device's is, so the front end's
//! index conversion is exercised on every index op.
//!
//! What it must never know about: how any op is computed.

use std::any::Any;
use std::sync::Arc;

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::random::{arange_host, draw_host};
use oxmera_tensor::{
    Backend, DeviceBuffer, Distribution, Generator, HostBuffer, Provider, Storage, Support, Tensor,
    with_host_buffer,
};

// The host fallback computes with the reference backend; naming the crate
// keeps its link-time provider in every program that links this one.
use oxmera_reference as _;

/// The device kind this crate provides.
pub const KIND: &str = "loopback";

/// The loopback device with `ordinal` (`loopback:N`).
pub fn device(ordinal: usize) -> Device {
    Device::custom(KIND, ordinal).expect("\"loopback\" is a well-formed custom device name")
}

#[linkme::distributed_slice(oxmera_tensor::BACKEND_PROVIDERS)]
#[linkme(crate = oxmera_tensor::__linkme)]
static PROVIDE_LOOPBACK: Provider = Provider {
    kind: KIND,
    open: |device| Ok(Arc::new(Loopback { device })),
};

/// The loopback backend for one device.
#[derive(Debug)]
pub struct Loopback {
    device: Device,
}

/// "Device memory": a host buffer only this backend reads.
#[derive(Debug)]
struct LoopBuffer(HostBuffer);

impl DeviceBuffer for LoopBuffer {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Loopback {
    /// Wraps `data` as storage in this device's memory.
    fn store(&self, data: HostBuffer) -> Storage {
        Storage::device_buffer(
            self.device,
            data.dtype(),
            data.len(),
            Box::new(LoopBuffer(data)),
        )
    }

    /// This device's buffer inside `storage`.
    fn buffer<'a>(&self, storage: &'a Storage) -> Result<&'a HostBuffer> {
        match storage.device_buffer_as::<LoopBuffer>() {
            Some(LoopBuffer(data)) => Ok(data),
            None => Err(self.foreign(storage)),
        }
    }

    fn foreign(&self, storage: &Storage) -> Error {
        Error::BackendUnavailable {
            op: "download",
            device: self.device,
            reason: format!(
                "storage of {} was not made by the loopback backend",
                storage.device()
            ),
        }
    }
}

impl Backend for Loopback {
    fn name(&self) -> &'static str {
        "loopback"
    }

    fn device(&self) -> Device {
        self.device
    }

    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        Ok(self.store(data))
    }

    fn download(&self, storage: &Storage) -> Result<HostBuffer> {
        Ok(self.buffer(storage)?.clone())
    }

    /// A copy within device memory: the elements of `x`'s layout, in order.
    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        let data = self.buffer(x.storage())?;
        let offsets = x.layout().offsets();
        let copy = with_host_buffer!(data, v => {
            oxmera_tensor::Element::into_buffer(offsets.map(|o| v[o]).collect())
        });
        Ok(self.store(copy))
    }

    fn fill(&self, dtype: DType, len: usize, value: f64) -> Result<Storage> {
        Ok(self.store(HostBuffer::filled(dtype, len, value)))
    }

    fn arange(&self, start: f64, step: f64, len: usize, dtype: DType) -> Result<Storage> {
        Ok(self.store(arange_host(start, step, len, dtype)))
    }

    fn random(
        &self,
        dist: Distribution,
        rng: Generator,
        len: usize,
        dtype: DType,
    ) -> Result<Storage> {
        Ok(self.store(draw_host(dist, rng, len, dtype)))
    }

    fn index_dtype(&self) -> DType {
        DType::I32
    }

    /// Its services are native; every op falls back.
    fn support(&self, op: &str, _dtype: DType) -> Support {
        match op {
            "contiguous" | "fill" | "arange" | "uniform" | "normal" | "randint" => Support::Native,
            _ => Support::Fallback,
        }
    }
}

#[cfg(test)]
mod tests {
    use oxmera_tensor::{fallback, transfer};

    use super::*;

    #[test]
    fn data_lives_in_device_memory_and_round_trips() {
        let d = device(0);
        let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2], d).unwrap();
        assert!(x.storage().as_host().is_none(), "not host memory");
        assert_eq!(x.device(), d);
        // A transposed view is read through the backend's download.
        assert_eq!(
            x.t().unwrap().to_vec::<f32>().unwrap(),
            vec![1.0, 3.0, 2.0, 4.0]
        );
        let copy = x.t().unwrap().contiguous().unwrap();
        assert_eq!(copy.device(), d);
        assert_eq!(copy.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 2.0, 4.0]);
    }

    #[test]
    fn an_op_falls_back_is_counted_and_equals_the_reference() {
        let d = device(1);
        let before = fallback::count(d, "matmul");
        let a = Tensor::arange(0.0, 6.0, 1.0, DType::F32, d).unwrap();
        let a = a.reshape([2, 3]).unwrap();
        let y = a.matmul(&a.t().unwrap()).unwrap();
        assert_eq!(y.device(), d);
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![5.0, 14.0, 14.0, 50.0]);
        assert_eq!(fallback::count(d, "matmul"), before + 1);
        let b = Loopback { device: d };
        assert_eq!(b.support("matmul", DType::F32), Support::Fallback);
        assert_eq!(b.support("contiguous", DType::F64), Support::Native);
    }

    #[test]
    fn services_are_native_and_scalars_are_not_uploaded() {
        let d = device(2);
        let mut rng = Generator::new(7);
        let uploads = transfer::uploads(d);
        let z = Tensor::zeros([3], DType::F32, d).unwrap();
        let r = rng.randn([3], DType::F32, d).unwrap();
        let y = z
            .add(&r)
            .unwrap()
            .mul_scalar(2.0)
            .unwrap()
            .add_scalar(1.0)
            .unwrap();
        assert_eq!(transfer::uploads(d), uploads, "nothing built on the host");
        for op in ["fill", "normal", "arange"] {
            assert_eq!(fallback::count(d, op), 0, "{op} is a native service");
        }
        // The same stream on the reference gives the same values.
        let want = Generator::new(7)
            .randn([3], DType::F32, Device::Reference)
            .unwrap()
            .mul_scalar(2.0)
            .unwrap()
            .add_scalar(1.0)
            .unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
    }

    #[test]
    fn index_ops_take_i32_indices_converted_on_the_device() {
        let d = device(3);
        let x = Tensor::from_vec(vec![10i64, 11, 12, 13], [4], d).unwrap();
        let i = Tensor::from_vec(vec![3i64, 0, 3], [3], d).unwrap();
        let y = x.index_select(0, &i).unwrap();
        assert_eq!(y.to_vec::<i64>().unwrap(), vec![13, 10, 13]);
        let bad = Tensor::from_vec(vec![4i64], [1], d).unwrap();
        assert!(matches!(
            x.index_select(0, &bad),
            Err(Error::IndexOutOfBounds { index: 4, .. })
        ));
    }

    #[test]
    fn the_device_name_parses_once_the_registry_lists_it() {
        assert_eq!(
            oxmera_tensor::registry::parse_device("loopback:4").unwrap(),
            device(4)
        );
        assert!(oxmera_tensor::registry::kinds().contains(&KIND));
    }
}
