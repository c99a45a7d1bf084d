//! Constructors. `full` (with `zeros` and `ones`) and `arange` ask the
//! device's fill and arange services, so a GPU writes them in place;
//! `linspace` and `eye` build their few values on the host and upload them.

use oxmera_core::{DType, Device, Error, Result, Scalar, Shape};

use crate::tensor::backend_storing;
use crate::{HostBuffer, Tensor};

impl Tensor {
    /// A tensor of `shape` filled with `value` (any Rust number, converted
    /// to `dtype` as [`Element`](crate::Element)'s casts convert).
    pub fn full(
        shape: impl Into<Shape>,
        value: impl Into<Scalar>,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        let value = value.into().to_f64("full")?;
        let shape = shape.into();
        let n = crate::tensor::probe_result("full", &shape, dtype, device)?;
        let backend = backend_storing(device, "full", dtype)?;
        let storage = backend.fill(dtype, n, value)?;
        Ok(Tensor::from_storage(storage, shape))
    }

    /// A tensor of zeros.
    pub fn zeros(shape: impl Into<Shape>, dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::full(shape, 0.0, dtype, device)
    }

    /// A tensor of ones.
    pub fn ones(shape: impl Into<Shape>, dtype: DType, device: Device) -> Result<Tensor> {
        Tensor::full(shape, 1.0, dtype, device)
    }

    /// Zeros with this tensor's shape, dtype and device.
    pub fn zeros_like(&self) -> Result<Tensor> {
        Tensor::zeros(self.shape().clone(), self.dtype(), self.device())
    }

    /// Ones with this tensor's shape, dtype and device.
    pub fn ones_like(&self) -> Result<Tensor> {
        Tensor::ones(self.shape().clone(), self.dtype(), self.device())
    }

    /// `start, start + step, …` up to but excluding `end` (1-D).
    ///
    /// The count is `ceil((end - start) / step)`, computed in `f64`; each
    /// value is `start + i * step` (not a running sum, so errors do not
    /// accumulate). The bounds may be any Rust numbers: `arange(0, 10, 2, ..)`.
    pub fn arange(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        step: impl Into<Scalar>,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        let op = "arange";
        let (start, end, step) = (
            start.into().to_f64(op)?,
            end.into().to_f64(op)?,
            step.into().to_f64(op)?,
        );
        if step == 0.0 || !step.is_finite() || !start.is_finite() || !end.is_finite() {
            return Err(Error::invalid(
                op,
                "range",
                format!("start {start}, end {end} and a non-zero step {step} must be finite"),
            ));
        }
        let n = ((end - start) / step).ceil();
        if n > oxmera_core::MAX_NUMEL as f64 {
            return Err(Error::invalid(
                op,
                "range",
                format!(
                    "{n} elements is too many (a tensor holds at most {})",
                    oxmera_core::MAX_NUMEL
                ),
            ));
        }
        let n = n.max(0.0) as usize;
        crate::tensor::probe_result(op, &Shape::from([n]), dtype, device)?;
        let backend = backend_storing(device, op, dtype)?;
        let storage = backend.arange(start, step, n, dtype)?;
        Ok(Tensor::from_storage(storage, [n]))
    }

    /// `steps` evenly spaced values from `start` to `end` inclusive (1-D).
    pub fn linspace(
        start: f64,
        end: f64,
        steps: usize,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        // Built on the host in f64, whatever the device.
        crate::tensor::probe_result("linspace", &Shape::from([steps]), DType::F64, device)?;
        let values = (0..steps).map(|i| match steps {
            1 => start,
            // Interpolate from whichever end is nearer, so both ends are exact.
            _ if i < steps / 2 => start + (end - start) * i as f64 / (steps - 1) as f64,
            _ => end - (end - start) * (steps - 1 - i) as f64 / (steps - 1) as f64,
        });
        Tensor::from_host(
            HostBuffer::from_f64s(dtype, values),
            [steps],
            device,
            "linspace",
        )
    }

    /// The `n × n` identity matrix.
    pub fn eye(n: usize, dtype: DType, device: Device) -> Result<Tensor> {
        // n * n overflows for n = 2^32 (and wraps to 0 in a release build).
        // Built on the host in f64, whatever the device.
        crate::tensor::probe_result("eye", &Shape::from([n, n]), DType::F64, device)?;
        let values = (0..n * n).map(|i| if i / n == i % n { 1.0 } else { 0.0 });
        Tensor::from_host(HostBuffer::from_f64s(dtype, values), [n, n], device, "eye")
    }
}
