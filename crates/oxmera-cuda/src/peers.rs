//! The peers the bench's CUDA rows measure oxmera against, in the same
//! run on the same GPU: a device-to-device copy (the bandwidth a streaming
//! op is held to: a copy of `B` bytes reads and writes `2B`, as many as an
//! op that reads and writes them) and cuBLAS's SGEMM (the matmul peer,
//! where the library is installed). They live here because only this
//! crate may name cudarc; each `run` waits for the GPU, as an oxmera op
//! timed with `synchronize` does.

use oxmera_core::{Device, Result};

/// A device-to-device copy of a fixed number of bytes between two buffers
/// of the GPU (`cuMemcpyDtoDAsync`, then a wait).
pub struct DeviceCopy {
    #[cfg(feature = "cuda")]
    inner: on_gpu::Copy,
}

impl DeviceCopy {
    /// Two buffers of `bytes` bytes on `device`.
    ///
    /// Errors: `BackendUnavailable` where the device does not open (no
    /// driver, or a build without the `cuda` feature); `DeviceFault` where
    /// the memory cannot be had.
    pub fn new(device: Device, bytes: usize) -> Result<DeviceCopy> {
        #[cfg(feature = "cuda")]
        {
            Ok(DeviceCopy {
                inner: on_gpu::Copy::new(device, bytes)?,
            })
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = bytes;
            Err(crate::not_built(device))
        }
    }

    /// Copies once and waits for the copy.
    pub fn run(&mut self) -> Result<()> {
        #[cfg(feature = "cuda")]
        {
            self.inner.run()
        }
        #[cfg(not(feature = "cuda"))]
        {
            Ok(())
        }
    }
}

/// cuBLAS's single-precision GEMM of two seeded `n × n` matrices on the
/// GPU, in its default math mode (true f32 products: no TF32 unless the
/// environment asks cuBLAS for it, which `NVIDIA_TF32_OVERRIDE` would).
pub struct CublasSgemm {
    #[cfg(feature = "cuda")]
    inner: on_gpu::Sgemm,
}

impl CublasSgemm {
    /// The product's operands on `device`; `Ok(None)` where cuBLAS
    /// (`libcublas.so`) is not installed.
    ///
    /// Errors: as [`DeviceCopy::new`], and `DeviceFault` where cuBLAS is
    /// present but does not start.
    pub fn new(device: Device, n: usize) -> Result<Option<CublasSgemm>> {
        #[cfg(feature = "cuda")]
        {
            Ok(on_gpu::Sgemm::new(device, n)?.map(|inner| CublasSgemm { inner }))
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = n;
            Err(crate::not_built(device))
        }
    }

    /// One product, `c = a · b`, and a wait for it.
    pub fn run(&mut self) -> Result<()> {
        #[cfg(feature = "cuda")]
        {
            self.inner.run()
        }
        #[cfg(not(feature = "cuda"))]
        {
            Ok(())
        }
    }
}

#[cfg(feature = "cuda")]
mod on_gpu {
    // cuBLAS's GEMM and uninitialized allocations are unsafe in cudarc.
    #![allow(unsafe_code)]

    use std::sync::Arc;

    use cudarc::cublas::sys::cublasOperation_t;
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
    use cudarc::driver::CudaSlice;
    use oxmera_core::{Device, Result};

    use crate::driver::{Gpu, guarded, opened};

    pub(crate) struct Copy {
        gpu: Arc<Gpu>,
        src: CudaSlice<u8>,
        dst: CudaSlice<u8>,
    }

    impl Copy {
        pub(crate) fn new(device: Device, bytes: usize) -> Result<Copy> {
            let gpu = opened(device)?;
            let op = "copy";
            let src = gpu
                .stream
                .alloc_zeros::<u8>(bytes.max(1))
                .map_err(gpu.driver_fault(op))?;
            let dst = gpu
                .stream
                .alloc_zeros::<u8>(bytes.max(1))
                .map_err(gpu.driver_fault(op))?;
            Ok(Copy { gpu, src, dst })
        }

        pub(crate) fn run(&mut self) -> Result<()> {
            let op = "copy";
            self.gpu
                .stream
                .memcpy_dtod(&self.src, &mut self.dst)
                .map_err(self.gpu.driver_fault(op))?;
            self.gpu
                .stream
                .synchronize()
                .map_err(self.gpu.driver_fault(op))
        }
    }

    pub(crate) struct Sgemm {
        gpu: Arc<Gpu>,
        blas: CudaBlas,
        a: CudaSlice<f32>,
        b: CudaSlice<f32>,
        c: CudaSlice<f32>,
        n: i32,
    }

    /// `len` values in [-1, 1) from a fixed sequence: products of random
    /// data, not zeros (a GPU's clock, and so its time, can depend on how
    /// many bits toggle).
    fn seeded(len: usize, seed: u32) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9E37_79B9) | 1;
        (0..len)
            .map(|_| {
                // xorshift32: cheap and plenty for operands of a timing.
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x >> 8) as f32 / (1u32 << 23) as f32 - 1.0
            })
            .collect()
    }

    impl Sgemm {
        pub(crate) fn new(device: Device, n: usize) -> Result<Option<Sgemm>> {
            let gpu = opened(device)?;
            let op = "cublas";
            // SAFETY: this only tries to dlopen the library by its usual
            // names, as the driver's probe does; cudarc panics on the first
            // cuBLAS call where it is absent, so nothing is called before.
            if !unsafe { cudarc::cublas::sys::is_culib_present() } {
                return Ok(None);
            }
            let len = n * n;
            let n = i32::try_from(n)
                .map_err(|_| gpu.fault(op, format!("{n} is past cuBLAS's int sizes")))?;
            let upload = |v: Vec<f32>| gpu.stream.clone_htod(&v).map_err(gpu.driver_fault(op));
            let (a, b) = (upload(seeded(len, 1))?, upload(seeded(len, 2))?);
            let c = gpu
                .stream
                .alloc_zeros::<f32>(len.max(1))
                .map_err(gpu.driver_fault(op))?;
            let blas = guarded("starting cuBLAS", || CudaBlas::new(gpu.stream.clone()))
                .map_err(|m| gpu.fault(op, m))?;
            Ok(Some(Sgemm {
                gpu,
                blas,
                a,
                b,
                c,
                n,
            }))
        }

        pub(crate) fn run(&mut self) -> Result<()> {
            let op = "cublas";
            let n = self.n;
            let cfg = GemmConfig {
                transa: cublasOperation_t::CUBLAS_OP_N,
                transb: cublasOperation_t::CUBLAS_OP_N,
                m: n,
                n,
                k: n,
                alpha: 1.0f32,
                lda: n,
                ldb: n,
                beta: 0.0f32,
                ldc: n,
            };
            // SAFETY: a, b and c each hold n·n f32 on this stream's GPU,
            // and the leading dimensions are n: every access is inside.
            unsafe { self.blas.gemm(cfg, &self.a, &self.b, &mut self.c) }
                .map_err(|e| self.gpu.fault(op, format!("cuBLAS SGEMM: {e}")))?;
            self.gpu
                .stream
                .synchronize()
                .map_err(self.gpu.driver_fault(op))
        }
    }
}
