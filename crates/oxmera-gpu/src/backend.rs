//! `Backend` for any [`GpuDevice`]: the device's services, and for each op
//! the native path (`crate::native` and its siblings) where it has one,
//! else the visible host fallback.

use std::any::Any;
use std::sync::Arc;

use oxmera_core::{DType, Device, Error, Result};
use oxmera_kernel::library::logical_code;
use oxmera_tensor::fallback::on_host;
use oxmera_tensor::fused_backward::into_storage;
use oxmera_tensor::{
    Backend, BinaryOp, CmpOp, Conv2dParams, DeviceBuffer, Distribution, Generator, HostBuffer,
    Pool2dParams, ReduceOp, ScanOp, ScatterMode, Storage, Support, Tensor, UnaryOp,
};

use crate::device::GpuDevice;
use crate::halves::is_half;
use crate::ints::native_int;
use crate::native::{F32_ELEMENT_MOVERS, math_unary_of, native_f32, unary_code_of};
use crate::wide::native_f64;

/// The backend for one opened GPU: every op of [`Backend`] on the device
/// `D` drives.
pub struct GpuBackend<D: GpuDevice> {
    device: Device,
    gpu: Arc<D>,
}

impl<D: GpuDevice> std::fmt::Debug for GpuBackend<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuBackend({}: {})", self.device, self.gpu.part_name())
    }
}

/// A tensor's bytes in device memory, and how many of them are its.
#[derive(Debug)]
pub(crate) struct GpuStorage<B> {
    /// The device's buffer (possibly pooled, possibly larger than the
    /// tensor).
    pub(crate) buffer: B,
    /// The tensor's bytes at its start.
    pub(crate) bytes: u64,
}

impl<B: std::fmt::Debug + Send + Sync + 'static> DeviceBuffer for GpuStorage<B> {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl<D: GpuDevice> GpuBackend<D> {
    /// The backend for `gpu`.
    pub fn new(gpu: Arc<D>) -> GpuBackend<D> {
        GpuBackend {
            device: gpu.device(),
            gpu,
        }
    }

    pub(crate) fn store(&self, dtype: DType, len: usize, buffer: D::Buffer) -> Storage {
        let bytes = (len * dtype.size_in_bytes()) as u64;
        Storage::device_buffer(
            self.device,
            dtype,
            len,
            Box::new(GpuStorage { buffer, bytes }),
        )
    }

    pub(crate) fn buffer<'a>(
        &self,
        storage: &'a Storage,
        op: &'static str,
    ) -> Result<&'a GpuStorage<D::Buffer>> {
        let foreign = || Error::DeviceFault {
            op,
            device: self.device,
            reason: format!(
                "storage of {} was not made by this {} backend",
                storage.device(),
                self.gpu.backend_name()
            ),
        };
        storage
            .device_buffer_as::<GpuStorage<D::Buffer>>()
            .ok_or_else(foreign)
    }

    /// The opened device.
    pub(crate) fn gpu(&self) -> &D {
        &self.gpu
    }
}

impl<D: GpuDevice> Backend for GpuBackend<D> {
    fn name(&self) -> &'static str {
        self.gpu.backend_name()
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

    /// Four- and eight-byte dtypes by the word-copy kernel, halves through
    /// words, bytes by `cast_strided` to their own dtype (a strided read,
    /// four bytes a word written); what none takes (a size past one
    /// launch) through the host (a copy, not a computation: not counted
    /// as a fallback).
    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        if let Some(s) = self.contiguous_words(x)? {
            return Ok(s);
        }
        if let Some(s) = self.in_words(&[x], |xs| self.contiguous_words(xs[0]))? {
            return Ok(s);
        }
        if matches!(x.dtype(), DType::U8 | DType::Bool)
            && let Some(s) = self.cast_words(x, x.dtype())?
        {
            return Ok(s);
        }
        self.from_host(self.to_host(x)?)
    }

    fn index_dtype(&self) -> DType {
        DType::I32
    }

    /// `f64` where the device has it as a shader type (Metal has none);
    /// everything else everywhere: `i64` because the kernels treat it as
    /// word pairs, `f16` and `bf16` because they are moved as 16-bit halves
    /// of words and computed in `f32` (`halves.rs`), never as a shader
    /// type; the rest as bytes.
    fn stores(&self, dtype: DType) -> bool {
        match dtype {
            DType::F64 => self.gpu.has_feature("f64"),
            _ => true,
        }
    }

    fn support(&self, op: &str, dtype: DType) -> Support {
        if !self.stores(dtype) {
            return Support::Unsupported;
        }
        if op == "fill"
            || (dtype == DType::F32 && native_f32(op))
            || (dtype == DType::F64 && self.f64_native() && native_f64(op))
            || (is_half(dtype) && native_f32(op) && !F32_ELEMENT_MOVERS.contains(&op))
            // Every stored dtype (f64 into a half goes to the host).
            || op == "cast"
            // The network needs no arithmetic of the dtype, only its bits.
            || op == "sort"
            || (matches!(op, "gather" | "scatter" | "index_select" | "cumsum")
                && crate::structural::cast_code_of(dtype).is_some())
            // f64 moves as word pairs: gather and replacing scatter need
            // no f64 arithmetic (scatter-add does: `native_f64` above).
            || (matches!(op, "gather" | "scatter") && dtype == DType::F64)
            || (op == "cumprod" && crate::structural::cast_code_of(dtype).is_some())
            || (op == "logcumsumexp" && (dtype == DType::F32 || is_half(dtype)))
            || (op == "scatter_add" && crate::structural::cast_code_of(dtype).is_some())
            || (matches!(
                op,
                "contiguous" | "pad" | "cat" | "flip" | "where" | "triu" | "tril" | "index_select"
            ) && (matches!(dtype.size_in_bytes(), 4 | 8) || is_half(dtype)))
            || (matches!(op, "eq" | "ne" | "lt" | "le" | "gt" | "ge") && dtype == DType::I64)
            || (op == "sum" && matches!(dtype, DType::Bool | DType::U8))
            || (op.starts_with("logical_") && dtype == DType::Bool)
            || native_int(op, dtype)
        {
            Support::Native
        } else {
            Support::Fallback
        }
    }

    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
        if x.dtype() == DType::Bool
            && op == UnaryOp::Not
            && let Some(s) = self.logical_bytes(logical_code::NOT, op.name(), x, x)?
        {
            return Ok(s);
        }
        if x.dtype() == DType::F64
            && self.f64_native()
            && let Some(s) = self.unary_f64(op, x)?
        {
            return Ok(s);
        }
        if let Some(s) = self.unary_int(op, x)? {
            return Ok(s);
        }
        let f32_op = |xs: &[&Tensor]| match (unary_code_of(op), math_unary_of(op)) {
            (Some(code), _) => self.unary_f32(code, xs[0], op.name()),
            (None, Some(math)) => self.unary_math_f32(math, xs[0], op.name()),
            (None, None) => self.clamp_or_leaky_f32(op, xs[0]),
        };
        if let Some(s) = self.in_f32(&[x], true, f32_op)? {
            return Ok(s);
        }
        on_host(self).unary(op, x)
    }

    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        let logical = match op {
            BinaryOp::And => Some(logical_code::AND),
            BinaryOp::Or => Some(logical_code::OR),
            BinaryOp::Xor => Some(logical_code::XOR),
            _ => None,
        };
        if a.dtype() == DType::Bool
            && let Some(code) = logical
            && let Some(s) = self.logical_bytes(code, op.name(), a, b)?
        {
            return Ok(s);
        }
        if a.dtype() == DType::F64
            && self.f64_native()
            && let Some(s) = self.binary_f64(op, a, b)?
        {
            return Ok(s);
        }
        if let Some(s) = self.binary_int(op, a, Some(b), 0.0, false)? {
            return Ok(s);
        }
        if let Some(s) = self.in_f32(&[a, b], true, |xs| self.binary_f32(op, xs[0], xs[1]))? {
            return Ok(s);
        }
        on_host(self).binary(op, a, b)
    }

    /// Every dtype (see `fill_pattern`).
    fn fill(&self, dtype: DType, len: usize, value: f64) -> Result<Storage> {
        self.fill_pattern(dtype, len, value)
    }

    /// Uniform f32 natively (Philox on the device); normal draws (which
    /// need a logarithm and a cosine more accurate than WGSL's) and
    /// integers (64-bit remainders) on the host.
    fn random(
        &self,
        dist: Distribution,
        rng: Generator,
        len: usize,
        dtype: DType,
    ) -> Result<Storage> {
        if let Distribution::Uniform { low, high } = dist
            && dtype == DType::F32
            && let Some(s) = self.uniform_f32(low, high, rng, len)?
        {
            return Ok(s);
        }
        on_host(self).random(dist, rng, len, dtype)
    }

    fn binary_scalar(
        &self,
        op: BinaryOp,
        x: &Tensor,
        value: f64,
        scalar_first: bool,
    ) -> Result<Storage> {
        if let Some(s) = self.binary_int(op, x, None, value, scalar_first)? {
            return Ok(s);
        }
        if x.dtype() == DType::F64
            && self.f64_native()
            && let Some(s) = self.binary_scalar_f64(op, x, value, scalar_first)?
        {
            return Ok(s);
        }
        let f32_op = |xs: &[&Tensor]| self.scalar_f32(op, xs[0], value, scalar_first);
        if let Some(s) = self.in_f32(&[x], true, f32_op)? {
            return Ok(s);
        }
        on_host(self).binary_scalar(op, x, value, scalar_first)
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
        // A value result has the input's dtype (computed in f32 for a half
        // input, then narrowed); an index result keeps its own.
        let values = out_dtype == x.dtype();
        // Walks longer than one thread may take, in chunks (halves widen
        // to f32 first, below).
        if !is_half(x.dtype())
            && let Some(s) = self.reduce_long(op, x, dims, out_dtype)?
        {
            return Ok(s);
        }
        if values
            && x.dtype() == DType::F64
            && self.f64_native()
            && let Some(mean) = mean
            && let Some(s) = self.reduce_f64(x, dims, mean, op.name())?
        {
            return Ok(s);
        }
        if x.dtype() == DType::F64
            && self.f64_native()
            && let Some(s) = self.walk_f64(op, x, dims, out_dtype)?
        {
            return Ok(s);
        }
        let f32_op = |xs: &[&Tensor]| -> Result<Option<Storage>> {
            if values && let Some(mean) = mean {
                return self.reduce_f32(xs[0], dims, mean, op.name());
            }
            let out = if values { DType::F32 } else { out_dtype };
            // A half's long walk, widened (f32's took the call above).
            if is_half(x.dtype())
                && let Some(s) = self.reduce_long(op, xs[0], dims, out)?
            {
                return Ok(Some(s));
            }
            if values && let Some(s) = self.moments_f32(op, xs[0], dims)? {
                return Ok(Some(s));
            }
            if values && op == ReduceOp::LogSumExp {
                let t = self.logsumexp_composed(xs[0], dims)?;
                return into_storage(self, t).map(Some);
            }
            self.reduce_walk(op, xs[0], dims, out)
        };
        if let Some(s) = self.in_f32(&[x], values, f32_op)? {
            return Ok(s);
        }
        if let Some(s) = self.reduce_walk(op, x, dims, out_dtype)? {
            return Ok(s);
        }
        if let Some(s) = self.reduce_int(op, x, dims, out_dtype)? {
            return Ok(s);
        }
        on_host(self).reduce(op, x, dims, out_dtype)
    }

    /// `cumsum` natively (f32 and halves through f32; the integers and
    /// bool into wrapping i64), `cumprod` (a float product carried as
    /// `m·2^e`) and `logcumsumexp` (f32 and halves), a row a thread in
    /// order; f64's in f64 where the device has it.
    fn scan(&self, op: ScanOp, x: &Tensor, dim: usize, out_dtype: DType) -> Result<Storage> {
        if let Some(s) = self.scan_any(op, x, dim, out_dtype)? {
            return Ok(s);
        }
        on_host(self).scan(op, x, dim, out_dtype)
    }

    /// By the library's bitonic network, for every stored dtype.
    fn sort(&self, x: &Tensor, dim: usize, descending: bool) -> Result<Storage> {
        if let Some(s) = self.sort_native(x, dim, descending)? {
            return Ok(s);
        }
        on_host(self).sort(x, dim, descending)
    }

    fn softmax(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
        if x.dtype() == DType::F64
            && self.f64_native()
            && let Some(s) = self.softmax_along(x, dim, log)?
        {
            return Ok(s);
        }
        if let Some(s) = self.in_f32(&[x], true, |xs| self.softmax_along(xs[0], dim, log))? {
            return Ok(s);
        }
        on_host(self).softmax(x, dim, log)
    }

    fn gather(&self, x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
        if x.dtype() == DType::F32
            && index.dtype() == DType::I32
            && let Some(s) = self.gather_f32(x, dim, index)?
        {
            return Ok(s);
        }
        if index.dtype() == DType::I32
            && let Some(s) = self.gather_any(x, dim, index)?
        {
            return Ok(s);
        }
        on_host(self).gather(x, dim, index)
    }

    /// `scatter` and `scatter_add` natively for every dtype (f64's sums
    /// where the device computes in f64), deterministic (a thread per
    /// output, no atomics).
    fn scatter(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        mode: ScatterMode,
    ) -> Result<Storage> {
        if mode == ScatterMode::Add
            && x.dtype() == DType::F32
            && index.dtype() == DType::I32
            && let Some(s) = self.scatter_add_f32(x, dim, index, src)?
        {
            return Ok(s);
        }
        let add = mode == ScatterMode::Add;
        if let Some(s) = self.scatter_any(x, dim, index, src, add)? {
            return Ok(s);
        }
        on_host(self).scatter(x, dim, index, src, mode)
    }

    fn compare(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        let native = match a.dtype() {
            DType::I64 => self.compare_i64(op, a, b)?,
            DType::F64 if self.f64_native() => self.compare_f64(op, a, Some(b), 0.0)?,
            DType::I32 | DType::U8 | DType::Bool => self.compare_int(op, a, Some(b), 0.0)?,
            _ => self.in_f32(&[a, b], false, |xs| {
                self.compare_f32(op, xs[0], Some(xs[1]), 0.0)
            })?,
        };
        match native {
            Some(s) => Ok(s),
            None => on_host(self).compare(op, a, b),
        }
    }

    fn compare_scalar(&self, op: CmpOp, x: &Tensor, value: f64) -> Result<Storage> {
        if x.dtype() == DType::F64
            && self.f64_native()
            && let Some(s) = self.compare_f64(op, x, None, value)?
        {
            return Ok(s);
        }
        if matches!(x.dtype(), DType::I32 | DType::U8 | DType::Bool)
            && let Some(s) = self.compare_int(op, x, None, value)?
        {
            return Ok(s);
        }
        // i64 against a value filled once and broadcast (the value is
        // exact in i64: the front end's contract).
        if x.dtype() == DType::I64
            && let Some(s) = self.compare_i64(op, x, &self.scalar_like(DType::I64, value, x)?)?
        {
            return Ok(s);
        }
        let f32_op = |xs: &[&Tensor]| self.compare_f32(op, xs[0], None, value);
        if let Some(s) = self.in_f32(&[x], false, f32_op)? {
            return Ok(s);
        }
        on_host(self).compare_scalar(op, x, value)
    }

    /// Between any two of f32, f16, bf16, i32, i64, u8, bool and (where
    /// the device stores it) f64 natively (`cast_strided`, on the bits),
    /// but f64 into a half; the older paths (bytes to f32, i64 to i32,
    /// halves to and from f32) where that declines a size.
    fn cast(&self, x: &Tensor, dtype: DType) -> Result<Storage> {
        if let Some(s) = self.cast_words(x, dtype)? {
            return Ok(s);
        }
        if let Some(s) = self.cast_halves(x, dtype)? {
            return Ok(s);
        }
        match self.cast_native(x, dtype)? {
            Some(s) => Ok(s),
            None => on_host(self).cast(x, dtype),
        }
    }

    fn conv2d(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: Conv2dParams,
    ) -> Result<Storage> {
        // Halves widened exactly, convolved in f32, narrowed once.
        let mut values = vec![x, weight];
        values.extend(bias);
        let f32_op = |xs: &[&Tensor]| self.conv2d_f32(xs[0], xs[1], xs.get(2).copied(), params);
        if let Some(s) = self.in_f32(&values, true, f32_op)? {
            return Ok(s);
        }
        on_host(self).conv2d(x, weight, bias, params)
    }

    fn conv2d_backward(
        &self,
        x: &Tensor,
        weight: &Tensor,
        grad: &Tensor,
        params: Conv2dParams,
    ) -> Result<(Storage, Storage)> {
        if x.dtype() == DType::F32
            && let Some(s) = self.conv2d_backward_f32(x, weight, grad, params)?
        {
            return Ok(s);
        }
        if let Some(s) = self.conv2d_backward_halves(x, weight, grad, params)? {
            return Ok(s);
        }
        on_host(self).conv2d_backward(x, weight, grad, params)
    }

    fn max_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        if let Some(s) = self.in_f32(&[x], true, |xs| self.pool_f32(xs[0], params, true))? {
            return Ok(s);
        }
        on_host(self).max_pool2d(x, params)
    }

    fn avg_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        if let Some(s) = self.in_f32(&[x], true, |xs| self.pool_f32(xs[0], params, false))? {
            return Ok(s);
        }
        on_host(self).avg_pool2d(x, params)
    }

    fn max_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        let f32_op = |xs: &[&Tensor]| self.pool_backward_f32(xs[0], xs[1], params, true);
        if let Some(s) = self.in_f32(&[x, grad], true, f32_op)? {
            return Ok(s);
        }
        on_host(self).max_pool2d_backward(x, grad, params)
    }

    fn avg_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        let f32_op = |xs: &[&Tensor]| self.pool_backward_f32(xs[0], xs[1], params, false);
        if let Some(s) = self.in_f32(&[x, grad], true, f32_op)? {
            return Ok(s);
        }
        on_host(self).avg_pool2d_backward(x, grad, params)
    }

    fn pad(&self, x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage> {
        if let Some(s) = self.pad_words(x, pads, value)? {
            return Ok(s);
        }
        // A half or byte tensor pads its words with the value as its own
        // dtype stores it (a half's bits; a byte's value, saturated as the
        // host fills it), zero-extended into the word.
        let bits = match x.dtype() {
            DType::F16 => half::f16::from_f64(value).to_bits(),
            DType::BF16 => half::bf16::from_f64(value).to_bits(),
            DType::U8 | DType::Bool => {
                u16::from(HostBuffer::filled(x.dtype(), 1, value).to_le_bytes()[0])
            }
            // The word dtypes were declined above (a size past one launch).
            _ => return on_host(self).pad(x, pads, value),
        };
        let padded = self.as_words(&[x], |xs, _, _| {
            self.pad_words(xs[0], pads, f64::from(bits))
        })?;
        match padded {
            Some(s) => Ok(s),
            None => on_host(self).pad(x, pads, value),
        }
    }

    fn cat(&self, xs: &[&Tensor], dim: usize) -> Result<Storage> {
        if let Some(s) = self.cat_words(xs, dim)? {
            return Ok(s);
        }
        match self.as_words(xs, |ws, _, _| self.cat_words(ws, dim))? {
            Some(s) => Ok(s),
            None => on_host(self).cat(xs, dim),
        }
    }

    fn flip(&self, x: &Tensor, dims: &[usize]) -> Result<Storage> {
        if let Some(s) = self.flip_words(x, dims)? {
            return Ok(s);
        }
        match self.as_words(&[x], |xs, _, _| self.flip_words(xs[0], dims))? {
            Some(s) => Ok(s),
            None => on_host(self).flip(x, dims),
        }
    }

    fn where_cond(&self, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Storage> {
        if let Some(s) = self.where_words(cond, a, b)? {
            return Ok(s);
        }
        match self.as_words(&[a, b], |xs, _, _| self.where_words(cond, xs[0], xs[1]))? {
            Some(s) => Ok(s),
            None => on_host(self).where_cond(cond, a, b),
        }
    }

    fn triangle(&self, x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage> {
        if let Some(s) = self.triangle_words(x, diagonal, upper)? {
            return Ok(s);
        }
        match self.as_words(&[x], |xs, _, _| self.triangle_words(xs[0], diagonal, upper))? {
            Some(s) => Ok(s),
            None => on_host(self).triangle(x, diagonal, upper),
        }
    }

    fn index_select(&self, x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
        if indices.dtype() == DType::I32
            && let Some(s) = self.select_words(x, dim, indices)?
        {
            return Ok(s);
        }
        if indices.dtype() == DType::I32
            && let Some(s) = self.in_words(&[x], |xs| self.select_words(xs[0], dim, indices))?
        {
            return Ok(s);
        }
        if indices.dtype() == DType::I32
            && let Some(s) = self.select_bytes(x, dim, indices)?
        {
            return Ok(s);
        }
        on_host(self).index_select(x, dim, indices)
    }

    fn layer_norm(&self, x: &Tensor, dims: usize, eps: f64) -> Result<Storage> {
        // f64 composed of its device ops (the mean, the squared
        // deviations' mean, the division): each one f64 kernel.
        if x.dtype() == DType::F64 && self.f64_native() {
            return self.layer_norm_composed(x, dims, eps);
        }
        if let Some(s) = self.in_f32(&[x], true, |xs| self.layer_norm_f32(xs[0], dims, eps))? {
            return Ok(s);
        }
        on_host(self).layer_norm(x, dims, eps)
    }

    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        if a.dtype() == DType::F64
            && self.f64_native()
            && let Some(s) = self.matmul_f64(a, b)?
        {
            return Ok(s);
        }
        if let Some(s) = self.matmul_int(a, b)? {
            return Ok(s);
        }
        if let Some(s) = self.in_f32(&[a, b], true, |xs| self.matmul_f32(xs[0], xs[1]))? {
            return Ok(s);
        }
        on_host(self).matmul(a, b)
    }
}
