//! The op layer's view of a GPU: memory, uploads, read-backs and launches
//! through the driver, so that [`oxmera_gpu::GpuBackend`] computes every
//! op it has a kernel for on this GPU, exactly as it does through wgpu —
//! the same kernels (as PTX rather than WGSL), arguments and size limits.
//!
//! Memory comes from the driver's stream-ordered allocator
//! (`cuMemAllocAsync` / `cuMemFreeAsync` on the backend's one stream,
//! which cudarc uses wherever the driver has it), whose pool `opened`
//! tells to keep what is freed ([`keep_freed_memory`]): in a training loop
//! an op's output reuses the bytes an earlier step freed, in stream order,
//! with no allocation from the device and no synchronization.

// Allocating device memory without initializing it is unsafe in cudarc.
#![allow(unsafe_code)]

use cudarc::driver::{CudaSlice, sys};
use oxmera_core::{Device, Error, Result};
use oxmera_gpu::{DenseMatmul, DeviceMemory, GpuDevice};
use oxmera_kernel::ir::{Dim3, Kernel, Value};
use oxmera_kernel::launch::LaunchConfig;

use crate::driver::Gpu;

/// A tensor's memory on the GPU, whole 32-bit words.
#[derive(Debug)]
pub(crate) struct GpuMemory(CudaSlice<u8>);

/// A tensor may be dropped on any thread, and cudarc frees its memory
/// (`cuMemFreeAsync` on the null stream) in the thread's *current*
/// context without making it current: on a thread that never called the
/// driver that free would fail, be recorded as the context's error and
/// fail every later call. So the context is made current first.
impl Drop for GpuMemory {
    fn drop(&mut self) {
        // An error here is the context's own (already recorded); the free
        // that follows reports nothing new.
        let _ = self.0.context().bind_to_thread();
    }
}

impl DeviceMemory for GpuMemory {
    type Raw = CudaSlice<u8>;

    fn raw(&self) -> &CudaSlice<u8> {
        &self.0
    }
}

/// The largest buffer the kernels can index: they address 32-bit words
/// with `i32` indices.
const MAX_BUFFER_BYTES: u64 = (i32::MAX as u64) * 4;

/// Bytes allocated for a request of `bytes`: whole words, at least two (a
/// kernel of 64-bit elements reads whole elements; a null pointer is no
/// buffer).
fn allocated(bytes: u64) -> usize {
    bytes.max(8).next_multiple_of(4) as usize
}

/// Tells the driver's default memory pool for `gpu`'s device to keep
/// memory that is freed instead of returning it at each synchronization
/// (its release threshold, 0 by default, set to the largest value). A
/// driver without stream-ordered allocation (cudarc then allocates
/// synchronously) is left as it is.
pub(crate) fn keep_freed_memory(gpu: &Gpu) -> std::result::Result<(), String> {
    if !gpu.ctx.has_async_alloc() {
        return Ok(());
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut threshold = u64::MAX;
    // SAFETY: `pool` is a valid place for the driver to write the handle;
    // the device is the context's own; `threshold` is the u64 this
    // attribute takes, alive for the call.
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, gpu.ctx.cu_device())
            .result()
            .map_err(|e| format!("reading the default memory pool: {e}"))?;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
        .result()
        .map_err(|e| format!("keeping freed memory in the pool: {e}"))?;
    }
    Ok(())
}

impl Gpu {
    /// A fresh allocation holding `bytes`, padded as [`allocated`] says.
    fn uploaded(&self, bytes: &[u8], op: &'static str) -> Result<CudaSlice<u8>> {
        self.check_binding(bytes.len() as u64, op)?;
        let mut padded = bytes.to_vec();
        padded.resize(allocated(bytes.len() as u64), 0);
        self.stream
            .clone_htod(&padded)
            .map_err(self.driver_fault(op))
    }
}

impl GpuDevice for Gpu {
    type Raw = CudaSlice<u8>;
    type Buffer = GpuMemory;

    fn device(&self) -> Device {
        self.device
    }

    fn backend_name(&self) -> &'static str {
        "cuda"
    }

    fn part_name(&self) -> String {
        format!("sm_{}{}", self.cc.major, self.cc.minor)
    }

    fn alloc(&self, bytes: u64, op: &'static str) -> Result<GpuMemory> {
        self.check_binding(bytes, op)?;
        // SAFETY: the bytes are left as the pool had them. No Rust value is
        // ever read from device memory: the op layer's kernels write every
        // element of an output before it is read, and a read-back copies
        // bytes (any bytes are valid `u8`s).
        let slice =
            unsafe { self.stream.alloc::<u8>(allocated(bytes)) }.map_err(self.driver_fault(op))?;
        Ok(GpuMemory(slice))
    }

    fn upload(&self, bytes: &[u8], op: &'static str) -> Result<GpuMemory> {
        Ok(GpuMemory(self.uploaded(bytes, op)?))
    }

    fn download(&self, buffer: &GpuMemory, bytes: u64, op: &'static str) -> Result<Vec<u8>> {
        let n = bytes as usize;
        if n > buffer.0.len() {
            return Err(self.fault(
                op,
                format!(
                    "a read-back of {n} bytes from a buffer of {}",
                    buffer.0.len()
                ),
            ));
        }
        let mut out = vec![0u8; n];
        if n > 0 {
            self.stream
                .memcpy_dtoh(&buffer.0.slice(..n), &mut out)
                .map_err(self.driver_fault(op))?;
        }
        // The copy is ordered after every launch before it; waiting here
        // surfaces a fault of any of them as this read-back's error.
        self.stream.synchronize().map_err(self.driver_fault(op))?;
        Ok(out)
    }

    fn wait(&self, op: &'static str) -> Result<()> {
        self.stream.synchronize().map_err(self.driver_fault(op))
    }

    fn metadata(&self, words: &[u32]) -> Result<CudaSlice<u8>> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.uploaded(&bytes, "metadata")
    }

    fn launch(
        &self,
        kernel: &'static Kernel,
        launch: LaunchConfig,
        buffers: &[&CudaSlice<u8>],
        scalars: &[Value],
        op: &'static str,
    ) -> Result<()> {
        let (g, max) = (launch.grid, self.max_grid());
        if g.x > max.x || g.y > max.y || g.z > max.z {
            return Err(self.fault(
                op,
                format!(
                    "kernel `{}`: grid {g} is past the part's {max} blocks",
                    kernel.name
                ),
            ));
        }
        let words: Vec<u64> = scalars.iter().map(|v| Value::to_bits(*v)).collect();
        self.launch_bound(kernel, launch, buffers, &words, false, op)?;
        Ok(())
    }

    fn check_binding(&self, bytes: u64, op: &'static str) -> Result<()> {
        if bytes > MAX_BUFFER_BYTES {
            return Err(Error::DeviceFault {
                op,
                device: self.device,
                reason: format!(
                    "a buffer of {bytes} bytes is past the {MAX_BUFFER_BYTES} bytes the kernels' 32-bit word indices reach"
                ),
            });
        }
        Ok(())
    }

    fn max_grid(&self) -> Dim3 {
        self.cc.max_grid()
    }

    fn has_feature(&self, name: &str) -> bool {
        // PTX has f64 and 64-bit integers on every part.
        matches!(name, "f64" | "i64")
    }

    fn matmul_kernel(&self) -> (&'static Kernel, u32) {
        self.tuned_matmul()
    }

    fn reduce_block(&self) -> u32 {
        self.tuned_reduce_block()
    }

    /// The library's register-tiled kernel (32 × 32 tiles of `c`, 4 × 4
    /// a thread): each value read from shared memory serves four
    /// multiply-adds where the strided kernel's serves one. Unmeasured:
    /// no NVIDIA GPU has run it.
    fn dense_matmul_kernel(&self) -> Option<DenseMatmul> {
        Some(DenseMatmul::register_tiled())
    }
}
