//! `Backend` for a wgpu adapter: device services, and the ops it computes
//! with library kernels; the rest through the visible host fallback.

use std::any::Any;
use std::sync::Arc;

use oxmera_core::{DType, Device, Error, Result};
use oxmera_kernel::ir::{Dim3, Kernel, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{self, binary_code, compare_code, scalar_code, unary_code};
use oxmera_tensor::fallback::Host;
use oxmera_tensor::{
    Backend, BinaryOp, CmpOp, DeviceBuffer, HostBuffer, ReduceOp, ScatterMode, Storage,
    StorageData, Support, Tensor, UnaryOp,
};

use crate::gpu::{Gpu, GpuBuffer};

/// The block the elementwise kernels run with: one of the sizes they
/// declare, and a multiple of every subgroup width an adapter reports.
const ELEMENTWISE_BLOCK: u32 = 256;

/// The block `softmax_strided` runs with (the one it declares).
const SOFTMAX_BLOCK: u32 = 64;

/// The longest row `softmax_strided` takes: three passes of a thread over
/// its row must stay under llvmpipe's 65535 loop iterations.
const SOFTMAX_MAX_ROW: usize = 4096;

/// The longest walk one thread makes in `scatter_add_strided` (along the
/// scattered dim), `argbest_strided` and `count_bytes_strided` (over the
/// reduced elements): llvmpipe stops a loop after 65535 iterations.
const SCATTER_MAX_ALONG: usize = 16384;

/// The block `reduce_strided` runs with: one of those it declares; small,
/// because its threads' loops can be long and uneven.
const REDUCE_BLOCK: u32 = 64;

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
        self.linear(kernel, ELEMENTWISE_BLOCK, buffers, scalars, n, op)
    }

    /// Launches a kernel with one thread per output, `block` threads a
    /// block.
    fn linear(
        &self,
        kernel: &'static Kernel,
        block: u32,
        buffers: &[&wgpu::Buffer],
        scalars: &[Value],
        n: usize,
        op: &'static str,
    ) -> Result<()> {
        let launch = LaunchConfig {
            grid: Dim3::x((n as u32).div_ceil(block)),
            block: Dim3::x(block),
        };
        self.gpu.launch(kernel, launch, buffers, scalars, op)
    }

    /// Whether an elementwise launch over `n` elements fits one dispatch.
    fn fits(&self, n: usize) -> bool {
        let max = self.gpu.report.max_workgroups_per_dimension as u64;
        (n as u64) <= max * ELEMENTWISE_BLOCK as u64 && n < i32::MAX as usize
    }

    /// `a @ b` by `matmul_strided`: both operands read through their
    /// strides (transposed and broadcast operands are views). `None` where
    /// a size does not fit the kernel's u32/i32 or one dispatch.
    fn matmul_f32(&self, a: &Tensor, b: &Tensor) -> Result<Option<Storage>> {
        const TILE: u32 = 16;
        let (ad, bd) = (a.dims(), b.dims());
        let rank = ad.len();
        let (m, k, n) = (ad[rank - 2], ad[rank - 1], bd[rank - 1]);
        let batch: usize = ad[..rank - 2].iter().product();
        let count = batch * m * n;
        let (Some((_, sa, oa)), Some((_, sb, ob))) = (Self::view_args(a), Self::view_args(b))
        else {
            return Ok(None);
        };
        let max = self.gpu.report.max_workgroups_per_dimension as usize;
        let fits = |v: usize| u32::try_from(v).is_ok();
        if !(fits(count)
            && fits(k)
            && batch <= max
            && n.div_ceil(16) <= max
            && m.div_ceil(16) <= max)
        {
            return Ok(None);
        }
        let out = self.gpu.alloc((count * 4) as u64, "matmul")?;
        if count > 0 {
            let (ba, bb) = (
                self.buffer(a.storage(), "matmul")?,
                self.buffer(b.storage(), "matmul")?,
            );
            let shape: Vec<u32> = ad[..rank - 2].iter().map(|&d| d as u32).collect();
            let s = self.gpu.metadata(&shape);
            let (ma, mb) = (
                self.gpu.metadata(&sa[..rank - 2]),
                self.gpu.metadata(&sb[..rank - 2]),
            );
            let i = |v: u32| Value::I32(v as i32);
            let launch = LaunchConfig {
                grid: Dim3::new(
                    (n as u32).div_ceil(TILE),
                    (m as u32).div_ceil(TILE),
                    batch as u32,
                ),
                block: Dim3::new(TILE, TILE, 1),
            };
            self.gpu.launch(
                library::matmul_strided(),
                launch,
                &[ba.buffer.raw(), bb.buffer.raw(), out.raw(), &s, &ma, &mb],
                &[
                    Value::U32((rank - 2) as u32),
                    Value::U32(m as u32),
                    Value::U32(n as u32),
                    Value::U32(k as u32),
                    i(sa[rank - 2]),
                    i(sa[rank - 1]),
                    i(sb[rank - 2]),
                    i(sb[rank - 1]),
                    Value::I32(oa),
                    Value::I32(ob),
                ],
                "matmul",
            )?;
        }
        Ok(Some(self.store(DType::F32, count, out)))
    }

    /// Sum or mean over `dims` by passes of `reduce_strided`: chunks of at
    /// most `REDUCE_CHUNK` terms, then the chunks' partials, until one
    /// chunk is left (see the kernel for why). `None` where sizes do not
    /// fit its u32 arithmetic or one dispatch.
    fn reduce_f32(
        &self,
        x: &Tensor,
        (shape, strides, offset): (Vec<u32>, Vec<u32>, i32),
        dims: &[usize],
        mean: bool,
        name: &'static str,
    ) -> Result<Option<Storage>> {
        let n_reduced: usize = dims.iter().map(|&d| x.dims()[d]).product();
        let n_out: usize = (0..x.dims().len())
            .filter(|d| !dims.contains(d))
            .map(|d| x.dims()[d])
            .product();
        let chunk = library::REDUCE_CHUNK as usize;
        let max_threads =
            self.gpu.report.max_workgroups_per_dimension as usize * REDUCE_BLOCK as usize;
        let first_chunks = n_reduced.div_ceil(chunk).max(1);
        if u32::try_from(n_reduced).is_err()
            || n_out
                .checked_mul(first_chunks)
                .is_none_or(|t| t > max_threads)
        {
            return Ok(None);
        }
        if n_out == 0 {
            return Ok(Some(self.store(DType::F32, 0, self.gpu.alloc(0, name)?)));
        }
        let marks: Vec<u32> = (0..shape.len()).map(|d| dims.contains(&d) as u32).collect();
        // The current input: a buffer and how to read it.
        let src = self.buffer(x.storage(), name)?;
        let mut held: Option<GpuBuffer> = None;
        let (mut shape, mut strides, mut marks, mut offset) = (shape, strides, marks, offset);
        let mut terms = n_reduced;
        loop {
            let n_chunks = terms.div_ceil(chunk).max(1);
            let last = n_chunks == 1;
            let out = self.gpu.alloc((n_out * n_chunks * 4) as u64, name)?;
            let (s, st, r) = (
                self.gpu.metadata(&shape),
                self.gpu.metadata(&strides),
                self.gpu.metadata(&marks),
            );
            let input = held.as_ref().map_or(src.buffer.raw(), |b| b.raw());
            self.linear(
                library::reduce_strided(),
                REDUCE_BLOCK,
                &[input, out.raw(), &s, &st, &r],
                &[
                    Value::U32(shape.len() as u32),
                    Value::U32(n_out as u32),
                    Value::U32(terms as u32),
                    Value::U32(n_chunks as u32),
                    Value::U32(chunk as u32),
                    Value::I32(offset),
                    Value::Bool(mean && last),
                    Value::U32(n_reduced as u32),
                ],
                n_out * n_chunks,
                name,
            )?;
            if last {
                return Ok(Some(self.store(DType::F32, n_out, out)));
            }
            // Next pass: the partials, [n_out, n_chunks] contiguous, over dim 1.
            shape = vec![n_out as u32, n_chunks as u32];
            strides = vec![n_chunks as u32, 1];
            marks = vec![0, 1];
            offset = 0;
            terms = n_chunks;
            held = Some(out);
        }
    }

    /// `a op b` for i64 operands (word pairs), as bytes four to a word.
    fn compare_i64(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Option<Storage>> {
        let n = a.shape().numel();
        let (Some((shape, sa, oa)), Some((_, sb, ob))) = (Self::view_args(a), Self::view_args(b))
        else {
            return Ok(None);
        };
        let words = n.div_ceil(4);
        if !self.fits(words) {
            return Ok(None);
        }
        let name = op.name();
        let out = self.gpu.alloc(n as u64, name)?;
        if n > 0 {
            let (ba, bb) = (
                self.buffer(a.storage(), name)?,
                self.buffer(b.storage(), name)?,
            );
            let meta = self.gpu.metadata(&shape);
            let (ma, mb) = (self.gpu.metadata(&sa), self.gpu.metadata(&sb));
            self.elementwise(
                library::compare_i64_packed(),
                &[ba.buffer.raw(), bb.buffer.raw(), out.raw(), &meta, &ma, &mb],
                &[
                    Value::U32(shape.len() as u32),
                    Value::U32(n as u32),
                    Value::I32(oa),
                    Value::I32(ob),
                    Value::U32(compare_code_of(op)),
                ],
                words,
                name,
            )?;
        }
        Ok(Some(self.store(DType::Bool, n, out)))
    }

    /// `a op b` (or `a op s`) for f32 operands, as bytes four to a word.
    fn compare_f32(
        &self,
        op: CmpOp,
        a: &Tensor,
        b: Option<&Tensor>,
        s: f64,
    ) -> Result<Option<Storage>> {
        let n = a.shape().numel();
        let code = compare_code_of(op);
        let Some((shape, sa, oa)) = Self::view_args(a) else {
            return Ok(None);
        };
        let (sb, ob) = match b.map(Self::view_args) {
            Some(None) => return Ok(None),
            Some(Some((_, sb, ob))) => (sb, ob),
            None => (sa.clone(), oa),
        };
        let words = n.div_ceil(4);
        if !self.fits(words) {
            return Ok(None);
        }
        let name = op.name();
        let out = self.gpu.alloc(n as u64, name)?;
        if n > 0 {
            let ba = self.buffer(a.storage(), name)?;
            let bb = match b {
                Some(b) => self.buffer(b.storage(), name)?,
                None => ba,
            };
            let meta = self.gpu.metadata(&shape);
            let (ma, mb) = (self.gpu.metadata(&sa), self.gpu.metadata(&sb));
            self.elementwise(
                library::compare_packed(),
                &[ba.buffer.raw(), bb.buffer.raw(), out.raw(), &meta, &ma, &mb],
                &[
                    Value::U32(shape.len() as u32),
                    Value::U32(n as u32),
                    Value::I32(oa),
                    Value::I32(ob),
                    Value::U32(code),
                    Value::Bool(b.is_none()),
                    Value::F32(s as f32),
                ],
                words,
                name,
            )?;
        }
        Ok(Some(self.store(DType::Bool, n, out)))
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
/// `relu` keeps NaN by testing the bits (`to_bits`): on lavapipe (LLVM) a
/// float comparison may assume no NaN — `x != x` folds to false. `exp` and
/// `sigmoid` use the kernel's own exp (range reduction and a polynomial,
/// within 2 ulp), not the driver's. Not yet here, though the kernel has
/// them: `log` and `tanh`, which use WGSL's builtins — specified to 3 +
/// 2|x| ULP and only absolutely, looser than the conformance rows.
/// Measured: `oxmera conformance --device wgpu` on lavapipe.
const NATIVE_UNARY: [(UnaryOp, u32); 11] = [
    (UnaryOp::Relu, unary_code::RELU),
    (UnaryOp::Exp, unary_code::EXP),
    (UnaryOp::Sigmoid, unary_code::SIGMOID),
    (UnaryOp::Neg, unary_code::NEG),
    (UnaryOp::Abs, unary_code::ABS),
    (UnaryOp::Sqrt, unary_code::SQRT),
    (UnaryOp::Rsqrt, unary_code::RSQRT),
    (UnaryOp::Recip, unary_code::RECIP),
    (UnaryOp::Square, unary_code::SQUARE),
    (UnaryOp::Floor, unary_code::FLOOR),
    (UnaryOp::Ceil, unary_code::CEIL),
];

/// The ops with a scalar operand the GPU computes, with their
/// `scalar_strided` codes.
const NATIVE_SCALAR: [(BinaryOp, u32); 4] = [
    (BinaryOp::Add, scalar_code::ADD),
    (BinaryOp::Sub, scalar_code::SUB),
    (BinaryOp::Mul, scalar_code::MUL),
    (BinaryOp::Div, scalar_code::DIV),
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

fn compare_code_of(op: CmpOp) -> u32 {
    match op {
        CmpOp::Eq => compare_code::EQ,
        CmpOp::Ne => compare_code::NE,
        CmpOp::Lt => compare_code::LT,
        CmpOp::Le => compare_code::LE,
        CmpOp::Gt => compare_code::GT,
        CmpOp::Ge => compare_code::GE,
    }
}

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
    matches!(
        op,
        "contiguous"
            | "matmul"
            | "fill"
            | "sum"
            | "mean"
            | "softmax"
            | "log_softmax"
            | "gather"
            | "scatter_add"
            | "argmax"
            | "argmin"
            | "eq"
            | "ne"
            | "lt"
            | "le"
            | "gt"
            | "ge"
    ) || NATIVE_UNARY.iter().any(|(u, _)| u.name() == op)
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
        if op == "fill"
            || (dtype == DType::F32 && native_f32(op))
            || (op == "cast" && matches!(dtype, DType::Bool | DType::U8 | DType::I64))
            || (matches!(op, "eq" | "ne" | "lt" | "le" | "gt" | "ge") && dtype == DType::I64)
            || (op == "sum" && matches!(dtype, DType::Bool | DType::U8))
        {
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

    /// Every dtype: its bytes repeat with a period of at most 8, so one
    /// kernel writes the two words of the pattern.
    fn fill(&self, dtype: DType, len: usize, value: f64) -> Result<Storage> {
        let size = dtype.size_in_bytes();
        let bytes = len * size;
        let words = bytes.div_ceil(4);
        if !self.fits(words) {
            return Err(Error::DeviceFault {
                op: "fill",
                device: self.device,
                reason: format!("{len} elements of {dtype} are past one dispatch of fill_words"),
            });
        }
        let pattern = HostBuffer::filled(dtype, 8 / size, value).to_le_bytes();
        let word = |k: usize| u32::from_le_bytes(pattern[k..k + 4].try_into().expect("4 bytes"));
        let out = self.gpu.alloc(bytes as u64, "fill")?;
        if words > 0 {
            self.elementwise(
                library::fill_words(),
                &[out.raw()],
                &[
                    Value::U32(words as u32),
                    Value::U32(word(0)),
                    Value::U32(word(4)),
                ],
                words,
                "fill",
            )?;
        }
        Ok(self.store(dtype, len, out))
    }

    fn binary_scalar(
        &self,
        op: BinaryOp,
        x: &Tensor,
        value: f64,
        scalar_first: bool,
    ) -> Result<Storage> {
        let n = x.shape().numel();
        if x.dtype() == DType::F32
            && let Some((_, code)) = NATIVE_SCALAR.iter().find(|(b, _)| *b == op)
            && let Some((shape, strides, offset)) = Self::view_args(x)
            && self.fits(n)
        {
            let name = op.name();
            let out = self.gpu.alloc((n * 4) as u64, name)?;
            if n > 0 {
                let src = self.buffer(x.storage(), name)?;
                let (s, st) = (self.gpu.metadata(&shape), self.gpu.metadata(&strides));
                self.elementwise(
                    library::scalar_strided(),
                    &[src.buffer.raw(), out.raw(), &s, &st],
                    &[
                        Value::U32(shape.len() as u32),
                        Value::U32(n as u32),
                        Value::I32(offset),
                        Value::U32(*code),
                        Value::F32(value as f32),
                        Value::Bool(scalar_first),
                    ],
                    n,
                    name,
                )?;
            }
            return Ok(self.store(DType::F32, n, out));
        }
        let host = Host::begin(self, op.name(), x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(
            host.reference()
                .binary_scalar(op, &x, value, scalar_first)?,
        )
    }

    fn reduce(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Storage> {
        let mean = match op {
            ReduceOp::Sum => Some(false),
            ReduceOp::Mean => Some(true),
            _ => None,
        };
        if x.dtype() == DType::F32
            && out_dtype == DType::F32
            && let Some(mean) = mean
            && let Some(view) = Self::view_args(x)
            && let Some(s) = self.reduce_f32(x, view, dims, mean, op.name())?
        {
            return Ok(s);
        }
        // Argmax/argmin of f32 and the count of bools or bytes, one thread
        // per output (each walks its reduced elements: bounded, for
        // llvmpipe's loop limit).
        let n_reduced: usize = dims.iter().map(|&d| x.dims()[d]).product();
        let n_out: usize = (0..x.dims().len())
            .filter(|d| !dims.contains(d))
            .map(|d| x.dims()[d])
            .product();
        let kernel = match (op, x.dtype()) {
            (ReduceOp::ArgMax | ReduceOp::ArgMin, DType::F32) => Some(library::argbest_strided()),
            (ReduceOp::Sum, DType::Bool | DType::U8) => Some(library::count_bytes_strided()),
            _ => None,
        };
        if let Some(kernel) = kernel
            && out_dtype == DType::I64
            && n_reduced <= SCATTER_MAX_ALONG
            && let Some((shape, strides, offset)) = Self::view_args(x)
            && self.fits(n_out)
        {
            let name = op.name();
            let out = self.gpu.alloc((n_out * 8) as u64, name)?;
            if n_out > 0 {
                let src = self.buffer(x.storage(), name)?;
                let marks: Vec<u32> = (0..shape.len()).map(|d| dims.contains(&d) as u32).collect();
                let (s, st, r) = (
                    self.gpu.metadata(&shape),
                    self.gpu.metadata(&strides),
                    self.gpu.metadata(&marks),
                );
                let mut scalars = vec![
                    Value::U32(shape.len() as u32),
                    Value::U32(n_out as u32),
                    Value::U32(n_reduced as u32),
                    Value::I32(offset),
                ];
                if op != ReduceOp::Sum {
                    scalars.push(Value::U32((op == ReduceOp::ArgMin) as u32));
                }
                self.elementwise(
                    kernel,
                    &[src.buffer.raw(), out.raw(), &s, &st, &r],
                    &scalars,
                    n_out,
                    name,
                )?;
            }
            return Ok(self.store(DType::I64, n_out, out));
        }
        let host = Host::begin(self, op.name(), x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(host.reference().reduce(op, &x, dims, out_dtype)?)
    }

    fn softmax(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
        let name = if log { "log_softmax" } else { "softmax" };
        let n = x.shape().numel();
        let len = x.dims()[dim];
        if x.dtype() == DType::F32
            && len <= SOFTMAX_MAX_ROW
            && let Some((shape, strides, offset)) = Self::view_args(x)
            && self.fits(n)
        {
            let rows = n.checked_div(len).unwrap_or(0);
            let out = self.gpu.alloc((n * 4) as u64, name)?;
            if rows > 0 && len > 0 {
                let src = self.buffer(x.storage(), name)?;
                let (s, st) = (self.gpu.metadata(&shape), self.gpu.metadata(&strides));
                self.linear(
                    library::softmax_strided(),
                    SOFTMAX_BLOCK,
                    &[src.buffer.raw(), out.raw(), &s, &st],
                    &[
                        Value::U32(shape.len() as u32),
                        Value::U32(dim as u32),
                        Value::U32(rows as u32),
                        Value::I32(offset),
                        Value::Bool(log),
                    ],
                    rows,
                    name,
                )?;
            }
            return Ok(self.store(DType::F32, n, out));
        }
        let host = Host::begin(self, name, x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(host.reference().softmax(&x, dim, log)?)
    }

    fn gather(&self, x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
        let n = index.shape().numel();
        if x.dtype() == DType::F32
            && index.dtype() == DType::I32
            && let (Some((_, xs, xo)), Some((shape, is, io))) =
                (Self::view_args(x), Self::view_args(index))
            && self.fits(n)
        {
            let out = self.gpu.alloc((n * 4) as u64, "gather")?;
            if n > 0 {
                let (bx, bi) = (
                    self.buffer(x.storage(), "gather")?,
                    self.buffer(index.storage(), "gather")?,
                );
                let m = self.gpu.metadata(&shape);
                let (mx, mi) = (self.gpu.metadata(&xs), self.gpu.metadata(&is));
                self.elementwise(
                    library::gather_strided(),
                    &[bx.buffer.raw(), bi.buffer.raw(), out.raw(), &m, &mx, &mi],
                    &[
                        Value::U32(shape.len() as u32),
                        Value::U32(dim as u32),
                        Value::U32(n as u32),
                        Value::I32(xo),
                        Value::I32(io),
                    ],
                    n,
                    "gather",
                )?;
            }
            return Ok(self.store(DType::F32, n, out));
        }
        let host = Host::begin(self, "gather", x.dtype())?;
        let (x, i) = (host.tensor_of(x)?, host.index_of(index)?);
        host.finish(host.reference().gather(&x, dim, &i)?)
    }

    /// `scatter_add` natively, deterministic (no atomics); `scatter`
    /// (replace) on the host.
    fn scatter(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        mode: ScatterMode,
    ) -> Result<Storage> {
        let n = x.shape().numel();
        if mode == ScatterMode::Add
            && x.dtype() == DType::F32
            && index.dtype() == DType::I32
            && index.dims()[dim] <= SCATTER_MAX_ALONG
            && let (Some((xshape, xs, xo)), Some((ishape, is, io)), Some((_, ss, so))) = (
                Self::view_args(x),
                Self::view_args(index),
                Self::view_args(src),
            )
            && self.fits(n)
        {
            let out = self.gpu.alloc((n * 4) as u64, "scatter_add")?;
            if n > 0 {
                let name = "scatter_add";
                let (bx, bi, bs) = (
                    self.buffer(x.storage(), name)?,
                    self.buffer(index.storage(), name)?,
                    self.buffer(src.storage(), name)?,
                );
                let (mxs, mis) = (self.gpu.metadata(&xshape), self.gpu.metadata(&ishape));
                let (mx, mi, ms) = (
                    self.gpu.metadata(&xs),
                    self.gpu.metadata(&is),
                    self.gpu.metadata(&ss),
                );
                self.elementwise(
                    library::scatter_add_strided(),
                    &[
                        bx.buffer.raw(),
                        bi.buffer.raw(),
                        bs.buffer.raw(),
                        out.raw(),
                        &mxs,
                        &mis,
                        &mx,
                        &mi,
                        &ms,
                    ],
                    &[
                        Value::U32(xshape.len() as u32),
                        Value::U32(dim as u32),
                        Value::U32(n as u32),
                        Value::I32(xo),
                        Value::I32(io),
                        Value::I32(so),
                    ],
                    n,
                    name,
                )?;
            }
            return Ok(self.store(DType::F32, n, out));
        }
        let name = match mode {
            ScatterMode::Replace => "scatter",
            ScatterMode::Add => "scatter_add",
        };
        let host = Host::begin(self, name, x.dtype())?;
        let (x, i, s) = (
            host.tensor_of(x)?,
            host.index_of(index)?,
            host.tensor_of(src)?,
        );
        host.finish(host.reference().scatter(&x, dim, &i, &s, mode)?)
    }

    fn compare(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        if a.dtype() == DType::F32
            && let Some(s) = self.compare_f32(op, a, Some(b), 0.0)?
        {
            return Ok(s);
        }
        if a.dtype() == DType::I64
            && let Some(s) = self.compare_i64(op, a, b)?
        {
            return Ok(s);
        }
        let host = Host::begin(self, op.name(), a.dtype())?;
        let (a, b) = (host.tensor_of(a)?, host.tensor_of(b)?);
        host.finish(host.reference().compare(op, &a, &b)?)
    }

    fn compare_scalar(&self, op: CmpOp, x: &Tensor, value: f64) -> Result<Storage> {
        if x.dtype() == DType::F32
            && let Some(s) = self.compare_f32(op, x, None, value)?
        {
            return Ok(s);
        }
        let host = Host::begin(self, op.name(), x.dtype())?;
        let x = host.tensor_of(x)?;
        host.finish(host.reference().compare_scalar(op, &x, value)?)
    }

    /// Bool and u8 to f32 natively (their bytes, read four to a word), and
    /// i64 to i32 (the low words).
    fn cast(&self, x: &Tensor, dtype: DType) -> Result<Storage> {
        let n = x.shape().numel();
        if matches!(x.dtype(), DType::Bool | DType::U8)
            && dtype == DType::F32
            && let Some((shape, strides, offset)) = Self::view_args(x)
            && self.fits(n)
        {
            let out = self.gpu.alloc((n * 4) as u64, "cast")?;
            if n > 0 {
                let src = self.buffer(x.storage(), "cast")?;
                let (s, st) = (self.gpu.metadata(&shape), self.gpu.metadata(&strides));
                self.elementwise(
                    library::bytes_to_f32(),
                    &[src.buffer.raw(), out.raw(), &s, &st],
                    &[
                        Value::U32(shape.len() as u32),
                        Value::U32(n as u32),
                        Value::I32(offset),
                    ],
                    n,
                    "cast",
                )?;
            }
            return Ok(self.store(DType::F32, n, out));
        }
        if x.dtype() == DType::I64
            && dtype == DType::I32
            && let Some((shape, strides, offset)) = Self::view_args(x)
            && self.fits(n)
        {
            let out = self.gpu.alloc((n * 4) as u64, "cast")?;
            if n > 0 {
                let src = self.buffer(x.storage(), "cast")?;
                let (s, st) = (self.gpu.metadata(&shape), self.gpu.metadata(&strides));
                self.elementwise(
                    library::i64_to_i32(),
                    &[src.buffer.raw(), out.raw(), &s, &st],
                    &[
                        Value::U32(shape.len() as u32),
                        Value::U32(n as u32),
                        Value::I32(offset),
                    ],
                    n,
                    "cast",
                )?;
            }
            return Ok(self.store(DType::I32, n, out));
        }
        let host = Host::begin(self, "cast", x.dtype())?;
        host.finish(host.reference().cast(&host.tensor_of(x)?, dtype)?)
    }

    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        if a.dtype() == DType::F32
            && let Some(s) = self.matmul_f32(a, b)?
        {
            return Ok(s);
        }
        let host = Host::begin(self, "matmul", a.dtype())?;
        let (a, b) = (host.tensor_of(a)?, host.tensor_of(b)?);
        host.finish(host.reference().matmul(&a, &b)?)
    }
}
