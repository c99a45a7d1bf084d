//! NaN dropped: reduce's max folds with `f64::max`, which ignores a NaN instead of letting it win.
//!
//! A named wrong solution of A7, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with max folded by `f64::max` from -inf; the
//! reference (and PyTorch) propagate NaN through max.

use std::any::Any;
use std::sync::Arc;

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
    registry::register_provider(Provider {
        kind: KIND,
        open: |device| Ok(Arc::new(MyBackend { device })),
    });
    Device::custom(KIND, ordinal)
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
    let dims = layout.dims();
    let strides = layout.strides().as_slice();
    let numel: usize = dims.iter().product();
    let mut out = Vec::with_capacity(numel);
    if numel == 0 {
        return out;
    }
    let mut index = vec![0usize; dims.len()];
    let mut offset = layout.offset();
    for _ in 0..numel {
        out.push(offset);
        // Advance the last dim; when it wraps, carry into the one before.
        for d in (0..dims.len()).rev() {
            index[d] += 1;
            offset += strides[d];
            if index[d] < dims[d] {
                break;
            }
            offset -= strides[d] * dims[d];
            index[d] = 0;
        }
    }
    out
}

/// The ops this backend computes itself on f32 and f64 (the rung's
/// contract, which the spec checks: each of them never falls back).
const NATIVE_OPS: [&str; 13] = [
    "add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "relu", "sum", "mean", "max", "matmul",
];

/// The float dtypes this backend has kernels for.
fn native_dtype(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}

/// The unary ops this backend has kernels for, as `f64` functions.
fn unary_fn(op: UnaryOp) -> Option<fn(f64) -> f64> {
    Some(match op {
        UnaryOp::Neg => |x| -x,
        UnaryOp::Exp => f64::exp,
        UnaryOp::Log => f64::ln,
        UnaryOp::Sqrt => f64::sqrt,
        // NaN is not greater than 0, yet must stay NaN.
        UnaryOp::Relu => |x| if x > 0.0 || x.is_nan() { x } else { 0.0 },
        _ => return None,
    })
}

/// The binary ops this backend has kernels for, as `f64` functions.
fn binary_fn(op: BinaryOp) -> Option<fn(f64, f64) -> f64> {
    Some(match op {
        BinaryOp::Add => |a, b| a + b,
        BinaryOp::Sub => |a, b| a - b,
        BinaryOp::Mul => |a, b| a * b,
        BinaryOp::Div => |a, b| a / b,
        _ => return None,
    })
}

/// Whether this backend has a kernel for the reduction.
fn native_reduce(op: ReduceOp) -> bool {
    matches!(op, ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Max)
}

impl MyBackend {
    /// Wraps `data` as storage in this device's memory.
    fn store(&self, data: HostBuffer) -> Storage {
        Storage::device_buffer(
            self.device,
            data.dtype(),
            data.len(),
            Box::new(Memory(data)),
        )
    }

    /// This device's memory inside `storage`, or why it is not.
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

    /// `x`'s elements in logical order, widened to `f64`.
    fn values(&self, x: &Tensor) -> Result<Vec<f64>> {
        let memory = self.memory(x.storage())?;
        Ok(logical_offsets(x.layout())
            .into_iter()
            .map(|o| memory.get_f64(o))
            .collect())
    }

    /// `values` rounded once to `dtype`, stored contiguously.
    fn output(&self, dtype: DType, values: Vec<f64>) -> Storage {
        self.store(HostBuffer::from_f64s(dtype, values))
    }
}

impl Backend for MyBackend {
    fn name(&self) -> &'static str {
        "mine"
    }

    fn device(&self) -> Device {
        self.device
    }

    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        Ok(self.store(data))
    }

    fn download(&self, storage: &Storage) -> Result<HostBuffer> {
        Ok(self.memory(storage)?.clone())
    }

    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        let memory = self.memory(x.storage())?;
        // Integers and bools too: a copy never goes through f64.
        let offsets = logical_offsets(x.layout());
        let copy = oxmera::tensor::with_host_buffer!(memory, v => {
            oxmera::tensor::Element::into_buffer(offsets.iter().map(|&o| v[o]).collect())
        });
        Ok(self.store(copy))
    }

    fn fill(&self, dtype: DType, len: usize, value: f64) -> Result<Storage> {
        Ok(self.store(HostBuffer::filled(dtype, len, value)))
    }

    fn support(&self, op: &str, dtype: DType) -> Support {
        // The services hold any dtype; the kernels are for f32 and f64.
        let service = matches!(op, "contiguous" | "fill");
        if service || (NATIVE_OPS.contains(&op) && native_dtype(dtype)) {
            Support::Native
        } else {
            Support::Fallback
        }
    }

    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
        match unary_fn(op) {
            Some(f) if native_dtype(x.dtype()) => {
                let out = self.values(x)?.into_iter().map(f).collect();
                Ok(self.output(x.dtype(), out))
            }
            _ => fallback::on_host(self).unary(op, x),
        }
    }

    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        match binary_fn(op) {
            Some(f) if native_dtype(a.dtype()) => {
                // The front end broadcast both to one shape (stride-0
                // views), so the logical orders line up element by element.
                let (a_values, b_values) = (self.values(a)?, self.values(b)?);
                let out = a_values.into_iter().zip(b_values).map(|(x, y)| f(x, y));
                Ok(self.output(a.dtype(), out.collect()))
            }
            _ => fallback::on_host(self).binary(op, a, b),
        }
    }

    fn binary_scalar(
        &self,
        op: BinaryOp,
        x: &Tensor,
        value: f64,
        scalar_first: bool,
    ) -> Result<Storage> {
        match binary_fn(op) {
            Some(f) if native_dtype(x.dtype()) => {
                let values = self.values(x)?.into_iter();
                let out = if scalar_first {
                    values.map(|v| f(value, v)).collect()
                } else {
                    values.map(|v| f(v, value)).collect()
                };
                Ok(self.output(x.dtype(), out))
            }
            _ => fallback::on_host(self).binary_scalar(op, x, value, scalar_first),
        }
    }

    fn reduce(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Storage> {
        if !native_reduce(op) || !native_dtype(x.dtype()) || out_dtype != x.dtype() {
            return fallback::on_host(self).reduce(op, x, dims, out_dtype);
        }
        // The output keeps every dim, each reduced one set to 1.
        let in_dims = x.dims();
        let out_dims: Vec<usize> = (0..in_dims.len())
            .map(|d| if dims.contains(&d) { 1 } else { in_dims[d] })
            .collect();
        let out_numel: usize = out_dims.iter().product();
        // Each element goes to the group of its index with the reduced
        // coordinates zeroed, in logical order (so sums add in order).
        let mut groups: Vec<Vec<f64>> = vec![Vec::new(); out_numel];
        let values = self.values(x)?;
        let mut index = vec![0usize; in_dims.len()];
        for v in values {
            let mut group = 0;
            for d in 0..in_dims.len() {
                let coord = if dims.contains(&d) { 0 } else { index[d] };
                group = group * out_dims[d] + coord;
            }
            groups[group].push(v);
            for d in (0..in_dims.len()).rev() {
                index[d] += 1;
                if index[d] < in_dims[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        let out = groups.iter().map(|g| match op {
            ReduceOp::Sum => g.iter().sum(),
            ReduceOp::Mean => g.iter().sum::<f64>() / g.len() as f64,
            // The first NaN wins; on a tie the earlier element stays.
            _ => g.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        });
        Ok(self.output(out_dtype, out.collect()))
    }

    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        if !native_dtype(a.dtype()) {
            return fallback::on_host(self).matmul(a, b);
        }
        let rank = a.dims().len();
        let (m, k, n) = (a.dims()[rank - 2], a.dims()[rank - 1], b.dims()[rank - 1]);
        let batches: usize = a.dims()[..rank - 2].iter().product();
        // In logical order, each batch's matrices are row-major blocks,
        // whatever the operands' strides (transposes, broadcast batches).
        let (av, bv) = (self.values(a)?, self.values(b)?);
        let mut out = Vec::with_capacity(batches * m * n);
        for batch in 0..batches {
            let (a0, b0) = (batch * m * k, batch * k * n);
            for i in 0..m {
                for j in 0..n {
                    // From +0, as the reference starts: k = 0 gives zeros.
                    let mut sum = 0.0;
                    for p in 0..k {
                        sum += av[a0 + i * k + p] * bv[b0 + p * n + j];
                    }
                    out.push(sum);
                }
            }
        }
        Ok(self.output(a.dtype(), out))
    }
}
