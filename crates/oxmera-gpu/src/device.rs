//! What the op layer needs from a GPU: memory, a way to launch a kernel,
//! and a few facts about the part.
//!
//! A backend crate implements [`GpuDevice`] for its opened device — wgpu
//! for an adapter, the CUDA backend for a GPU through the driver, the
//! crate's tests for the simulator — and gets every op of
//! [`crate::GpuBackend`] for it. The trait is deliberately small: the
//! kernels, their arguments and their launches are the op layer's; the
//! device only moves bytes and runs what it is given.

use std::fmt::Debug;

use oxmera_core::{Device, Result};
use oxmera_kernel::ir::{Dim3, Kernel, Value};
use oxmera_kernel::launch::LaunchConfig;

/// Device memory a tensor owns, as the device allocated it (possibly from
/// a pool, possibly larger than asked).
pub trait DeviceMemory: Send + Sync + Debug + 'static {
    /// What a launch binds: the device's handle to the bytes.
    type Raw;
    /// The handle a launch binds.
    fn raw(&self) -> &Self::Raw;
}

/// One opened GPU, as the op layer drives it.
///
/// Every method that touches the device returns the seam's errors: a
/// `DeviceFault` naming `op` for a failure on the device (or a device that
/// was lost), never a panic.
pub trait GpuDevice: Send + Sync + 'static {
    /// What a kernel binds: a tensor's memory or a metadata buffer.
    type Raw: Send + Sync + 'static;
    /// A tensor's memory.
    type Buffer: DeviceMemory<Raw = Self::Raw>;

    /// The device this is (`wgpu:0`, `cuda:1`).
    fn device(&self) -> Device;

    /// The backend's name, as `Backend::name` reports it.
    fn backend_name(&self) -> &'static str;

    /// The part's name, for `Debug`.
    fn part_name(&self) -> String;

    /// A buffer of at least `bytes` bytes (contents unspecified).
    fn alloc(&self, bytes: u64, op: &'static str) -> Result<Self::Buffer>;

    /// A fresh buffer holding `bytes` (padded to whole 32-bit words).
    fn upload(&self, bytes: &[u8], op: &'static str) -> Result<Self::Buffer>;

    /// The first `bytes` bytes of `buffer`, after the work queued before.
    fn download(&self, buffer: &Self::Buffer, bytes: u64, op: &'static str) -> Result<Vec<u8>>;

    /// Waits for every queued launch.
    fn wait(&self, op: &'static str) -> Result<()>;

    /// A small read-only buffer of kernel metadata (shapes, strides): at
    /// least one word, so it binds even when `words` is empty.
    fn metadata(&self, words: &[u32]) -> Result<Self::Raw>;

    /// Launches `kernel` (after the analysis has passed for the part at
    /// this launch): `buffers` bind its buffer parameters in order,
    /// `scalars` its scalar parameters in order. May return before the
    /// kernel has run; launches run in the order they were made.
    fn launch(
        &self,
        kernel: &'static Kernel,
        launch: LaunchConfig,
        buffers: &[&Self::Raw],
        scalars: &[Value],
        op: &'static str,
    ) -> Result<()>;

    /// Refuses a buffer of `bytes` that a kernel could not bind, naming
    /// the limit.
    fn check_binding(&self, bytes: u64, op: &'static str) -> Result<()>;

    /// The most blocks a launch may have along each grid dimension (on
    /// wgpu one limit for all three; on CUDA 2³¹ − 1 along x, 65535 along y
    /// and z).
    fn max_grid(&self) -> Dim3;

    /// Whether the part has the shader type `name` (`"f64"`, `"i64"`).
    fn has_feature(&self, name: &str) -> bool;

    /// The matmul kernel and its tile for this part (a tuned choice, or
    /// the library's default).
    fn matmul_kernel(&self) -> (&'static Kernel, u32);

    /// The block `reduce_strided` runs with on this part.
    fn reduce_block(&self) -> u32;

    /// A matmul kernel for dense operands, where the part runs one faster
    /// than [`GpuDevice::matmul_kernel`]'s: a kernel with
    /// `matmul_register_tiled`'s parameters (`a`, `b`, `c`, `m`, `n`, `k`;
    /// row-major, each buffer from its start), the side of the square tile
    /// of `c` one block computes, and its block. `None` (the default):
    /// every matmul goes through `matmul_kernel`'s strided kernel.
    fn dense_matmul_kernel(&self) -> Option<DenseMatmul> {
        None
    }
}

/// A register-tiled matmul as a device runs it (see
/// [`GpuDevice::dense_matmul_kernel`]).
#[derive(Debug, Clone, Copy)]
pub struct DenseMatmul {
    /// The kernel, with `matmul_register_tiled`'s parameters.
    pub kernel: &'static Kernel,
    /// The side of the tile of `c` one block computes.
    pub tile: u32,
    /// The block it runs with.
    pub block: Dim3,
}

impl DenseMatmul {
    /// The library's `matmul_register_tiled` at its contract: `TILE` of
    /// its default specialization, its one declared block.
    pub fn register_tiled() -> DenseMatmul {
        let kernel = oxmera_kernel::library::matmul_register_tiled();
        DenseMatmul {
            kernel,
            tile: kernel.default_specs().first().map_or(32, |&t| t as u32),
            block: kernel
                .launch
                .blocks
                .first()
                .copied()
                .unwrap_or(Dim3::new(8, 8, 1)),
        }
    }
}
