//! `Backend` for a wgpu adapter: device services, and the ops it computes
//! with library kernels; the rest through the visible host fallback.

use std::any::Any;
use std::sync::Arc;

use oxmera_core::{DType, Device, Error, Result};
use oxmera_kernel::ir::{Dim3, Kernel, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{self, binary_code, unary_code};
use oxmera_tensor::fallback::Host;
use oxmera_tensor::{
    Backend, BinaryOp, DeviceBuffer, HostBuffer, Storage, StorageData, Support, Tensor, UnaryOp,
};

use crate::gpu::{Gpu, GpuBuffer};

/// The block the elementwise kernels run with: one of the sizes they
/// declare, and a multiple of every subgroup width an adapter reports.
const ELEMENTWISE_BLOCK: u32 = 256;

/// The wgpu backend for one adapter.
pub(crate) struct WgpuBackend {
    device: Device,
    gpu: Arc<Gpu>,
}

impl std::fmt::Debug for WgpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WgpuBackend({}: {})", self.device, self.gpu.report.name)
    }
}

/// A tensor's bytes in a GPU buffer, and how many of them are its.
#[derive(Debug)]
struct WgpuStorage {
    buffer: GpuBuffer,
    bytes: u64,
}

impl DeviceBuffer for WgpuStorage {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl WgpuBackend {
    pub(crate) fn new(device: Device, gpu: Arc<Gpu>) -> WgpuBackend {
        WgpuBackend { device, gpu }
    }

    fn store(&self, dtype: DType, len: usize, buffer: GpuBuffer) -> Storage {
        let bytes = (len * dtype.size_in_bytes()) as u64;
        Storage::device_buffer(
            self.device,
            dtype,
            len,
            Box::new(WgpuStorage { buffer, bytes }),
        )
    }

    fn buffer<'a>(&self, storage: &'a Storage, op: &'static str) -> Result<&'a WgpuStorage> {
        let foreign = || Error::DeviceFault {
            op,
            device: self.device,
            reason: format!(
                "storage of {} was not made by this wgpu backend",
                storage.device()
            ),
        };
        match storage.data() {
            StorageData::Device(b) => b.as_any().downcast_ref::<WgpuStorage>().ok_or_else(foreign),
            StorageData::Host(_) => Err(foreign()),
        }
    }

    /// The strided-view arguments of an elementwise kernel: the output's
    /// shape, a tensor's strides and offset, in the kernel's i32/u32.
    /// `None` if a value does not fit (the host takes those).
    fn view_args(x: &Tensor) -> Option<(Vec<u32>, Vec<u32>, i32)> {
        let layout = x.layout();
        let shape: Option<Vec<u32>> = x
            .shape()
            .dims()
            .iter()
            .map(|&d| u32::try_from(d).ok())
            .collect();
        let strides: Option<Vec<u32>> = layout
            .strides()
            .as_slice()
            .iter()
            .map(|&s| i32::try_from(s).ok().map(|v| v as u32))
            .collect();
        let offset = i32::try_from(layout.offset()).ok()?;
        Some((shape?, strides?, offset))
    }

    /// Launches an elementwise kernel over `n` outputs.
    fn elementwise(
        &self,
        kernel: &'static Kernel,
        buffers: &[&wgpu::Buffer],
        scalars: &[Value],
        n: usize,
        op: &'static str,
    ) -> Result<()> {
        let grid = (n as u32).div_ceil(ELEMENTWISE_BLOCK);
        let launch = LaunchConfig {
            grid: Dim3::x(grid),
            block: Dim3::x(ELEMENTWISE_BLOCK),
        };
        self.gpu.launch(kernel, launch, buffers, scalars, op)
    }

    /// Whether an elementwise launch over `n` elements fits one dispatch.
    fn fits(&self, n: usize) -> bool {
        let max = self.gpu.report.max_workgroups_per_dimension as u64;
        (n as u64) <= max * ELEMENTWISE_BLOCK as u64 && n < i32::MAX as usize
    }

    fn unary_f32(&self, code: u32, x: &Tensor, op: &'static str) -> Result<Option<Storage>> {
        let n = x.shape().numel();
        let Some((shape, strides, offset)) = Self::view_args(x) else {
            return Ok(None);
        };
        if !self.fits(n) {
            return Ok(None);
        }
        let out = self.gpu.alloc((n * 4) as u64, op)?;
        if n > 0 {
            let src = self.buffer(x.storage(), op)?;
            let (s, st) = (self.gpu.metadata(&shape), self.gpu.metadata(&strides));
            self.elementwise(
                library::unary_strided(),
                &[src.buffer.raw(), out.raw(), &s, &st],
                &[
                    Value::U32(shape.len() as u32),
                    Value::U32(n as u32),
                    Value::I32(offset),
                    Value::U32(code),
                ],
                n,
                op,
            )?;
        }
        Ok(Some(self.store(DType::F32, n, out)))
    }
}

/// The unary ops the GPU computes, with their `unary_strided` codes.
///
/// Not yet here, though the kernel has them: `exp`, `log`, `tanh`,
/// `sigmoid` and `relu`. On lavapipe (LLVM) a float comparison may assume
/// no NaN — `x != x` folds to false — so NaN does not propagate as the
/// reference defines, and WGSL specifies `exp`/`log` to 3 + 2|x| ULP and
/// `tanh` only absolutely, looser than the conformance table's rows; both
/// wait for bit casts in the kernel language and WGSL-derived tolerance
/// rows. Measured: `oxmera conformance --device wgpu` on lavapipe.
const NATIVE_UNARY: [(UnaryOp, u32); 8] = [
    (UnaryOp::Neg, unary_code::NEG),
    (UnaryOp::Abs, unary_code::ABS),
    (UnaryOp::Sqrt, unary_code::SQRT),
    (UnaryOp::Rsqrt, unary_code::RSQRT),
    (UnaryOp::Recip, unary_code::RECIP),
    (UnaryOp::Square, unary_code::SQUARE),
    (UnaryOp::Floor, unary_code::FLOOR),
    (UnaryOp::Ceil, unary_code::CEIL),
];

/// The binary ops the GPU computes, with their `binary_strided` codes.
/// `maximum`/`minimum` wait for the same NaN handling as above (and for
/// `max(-0, 0) = 0`, which the reference defines and WGSL does not).
const NATIVE_BINARY: [(BinaryOp, u32); 4] = [
    (BinaryOp::Add, binary_code::ADD),
    (BinaryOp::Sub, binary_code::SUB),
    (BinaryOp::Mul, binary_code::MUL),
    (BinaryOp::Div, binary_code::DIV),
];

fn unary_code_of(op: UnaryOp) -> Option<u32> {
    NATIVE_UNARY.iter().find(|(u, _)| *u == op).map(|(_, c)| *c)
}

fn binary_code_of(op: BinaryOp) -> Option<u32> {
    NATIVE_BINARY
        .iter()
        .find(|(b, _)| *b == op)
        .map(|(_, c)| *c)
}

/// The ops computed natively for f32, by the name [`Backend::support`] is
/// asked with.
fn native_f32(op: &str) -> bool {
    op == "contiguous"
        || NATIVE_UNARY.iter().any(|(u, _)| u.name() == op)
        || NATIVE_BINARY.iter().any(|(b, _)| b.name() == op)
}

impl Backend for WgpuBackend {
    fn name(&self) -> &'static str {
        "wgpu"
    }

    fn device(&self) -> Device {
        self.device
    }

    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        let (dtype, len) = (data.dtype(), data.len());
        let buffer = self.gpu.upload(&data.to_le_bytes(), "upload")?;
        Ok(self.store(dtype, len, buffer))
    }

    fn download(&self, storage: &Storage) -> Result<HostBuffer> {
        let b = self.buffer(storage, "download")?;
        let bytes = self.gpu.download(&b.buffer, b.bytes, "download")?;
        Ok(HostBuffer::from_le_bytes(storage.dtype(), &bytes))
    }

    fn synchronize(&self) -> Result<()> {
        self.gpu.wait("synchronize")
    }

    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        if x.dtype() == DType::F32
            && let Some(s) = self.unary_f32(unary_code::COPY, x, "contiguous")?
        {
            return Ok(s);
        }
        // Other dtypes: a copy through the host, as the trait's default.
        let data = self.download(x.storage())?;
        let offsets: Vec<usize> = x.layout().offsets().collect();
        let picked = oxmera_tensor::with_host_buffer!(&data, v => {
            oxmera_tensor::Element::into_buffer(offsets.iter().map(|&o| v[o]).collect())
        });
        self.from_host(picked)
    }

    fn index_dtype(&self) -> DType {
        DType::I32
    }

    fn support(&self, op: &str, dtype: DType) -> Support {
        if dtype == DType::F32 && native_f32(op) {
            Support::Native
        } else {
            Support::Fallback
        }
    }

    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
        if x.dtype() == DType::F32
            && let Some(code) = unary_code_of(op)
            && let Some(s) = self.unary_f32(code, x, op.name())?
        {
            return Ok(s);
        }
        let host = Host::begin(self, op.name(), x.dtype())?;
        host.finish(host.reference().unary(op, &host.tensor_of(x)?)?)
    }

    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        let n = a.shape().numel();
        if a.dtype() == DType::F32
            && let Some(code) = binary_code_of(op)
            && let (Some((shape, sa, oa)), Some((_, sb, ob))) =
                (Self::view_args(a), Self::view_args(b))
            && self.fits(n)
        {
            let name = op.name();
            let out = self.gpu.alloc((n * 4) as u64, name)?;
            if n > 0 {
                let (ba, bb) = (
                    self.buffer(a.storage(), name)?,
                    self.buffer(b.storage(), name)?,
                );
                let s = self.gpu.metadata(&shape);
                let (ma, mb) = (self.gpu.metadata(&sa), self.gpu.metadata(&sb));
                self.elementwise(
                    library::binary_strided(),
                    &[ba.buffer.raw(), bb.buffer.raw(), out.raw(), &s, &ma, &mb],
                    &[
                        Value::U32(shape.len() as u32),
                        Value::U32(n as u32),
                        Value::I32(oa),
                        Value::I32(ob),
                        Value::U32(code),
                    ],
                    n,
                    name,
                )?;
            }
            return Ok(self.store(DType::F32, n, out));
        }
        let host = Host::begin(self, op.name(), a.dtype())?;
        let (a, b) = (host.tensor_of(a)?, host.tensor_of(b)?);
        host.finish(host.reference().binary(op, &a, &b)?)
    }
}
