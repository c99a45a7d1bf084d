//! The driver, reached through cudarc: probed before it is called, one
//! context per GPU, and PTX modules compiled once per (kernel, block).

// The driver API is C: calling it is unsafe, and each call below says why
// it is sound.
#![allow(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, DriverError, sys};
use oxmera_core::{Device, Error, Result};
use oxmera_kernel::emit::ptx::{PtxOptions, ptx};
use oxmera_kernel::ir::{Dim3, Kernel};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::limits::ComputeCapability;
use oxmera_kernel::target::Target;

use crate::report::GpuReport;
use crate::unavailable;

/// One opened GPU.
pub(crate) struct Gpu {
    pub device: Device,
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    /// The part's compute capability, as the table names it.
    pub cc: ComputeCapability,
    /// What the analysis checks kernels for on this part.
    pub target: Target,
    /// Compiled entry points by (kernel, block).
    functions: Mutex<HashMap<(usize, Dim3), (CudaFunction, u32)>>,
    /// (kernel, block, grid) launches the analysis passed.
    passed: Mutex<HashSet<(usize, Dim3, Dim3)>>,
    /// The matmul kernel and tile for this part: read from the tuning
    /// cache at the first matmul (`oxmera_gpu::tuned`).
    matmul: OnceLock<(&'static Kernel, u32)>,
    /// The block of `reduce_strided`, likewise.
    reduce_block: OnceLock<u32>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Gpu({}, sm_{}{})",
            self.device, self.cc.major, self.cc.minor
        )
    }
}

/// Whether the driver library loads at all. cudarc panics on its first
/// call where it does not, so nothing else is called before this says yes.
fn driver_present() -> bool {
    // SAFETY: this only tries to dlopen the driver library by its usual
    // names and closes it again; loading libcuda runs the driver's own
    // initializers, as any CUDA program's start does.
    unsafe { sys::is_culib_present() }
}

/// Runs a driver call; a panic inside cudarc (a symbol an old driver lacks)
/// becomes an error like any other.
pub(crate) fn guarded<T, E: std::fmt::Display>(
    what: &str,
    f: impl FnOnce() -> std::result::Result<T, E>,
) -> std::result::Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("{what}: {e}")),
        Err(panic) => Err(format!(
            "{what}: the driver library is not usable: {}",
            oxmera_tensor::panic_message(&*panic)
        )),
    }
}

const NO_DRIVER: &str = "no CUDA driver on this machine: libcuda.so could not be loaded \
    (install the NVIDIA driver; no CUDA toolkit is needed)";

fn opened_gpus() -> &'static Mutex<HashMap<usize, Arc<Gpu>>> {
    static GPUS: OnceLock<Mutex<HashMap<usize, Arc<Gpu>>>> = OnceLock::new();
    GPUS.get_or_init(Default::default)
}

/// The opened GPU `device` names, opening it on first use.
pub(crate) fn opened(device: Device) -> Result<Arc<Gpu>> {
    let Device::Cuda(ordinal) = device else {
        return Err(unavailable(device, "not a CUDA device"));
    };
    let mut gpus = opened_gpus().lock().expect("the GPU table");
    if let Some(g) = gpus.get(&ordinal) {
        return Ok(g.clone());
    }
    if !driver_present() {
        return Err(unavailable(device, NO_DRIVER));
    }
    let count =
        guarded("counting GPUs", CudaContext::device_count).map_err(|m| unavailable(device, m))?;
    if ordinal >= count.max(0) as usize {
        return Err(unavailable(
            device,
            format!("the CUDA driver lists {count} GPU(s); cuda:{ordinal} is not one of them"),
        ));
    }
    let ctx = guarded("opening a context", || CudaContext::new(ordinal))
        .map_err(|m| unavailable(device, m))?;
    let (major, minor) = guarded("reading the compute capability", || {
        ctx.compute_capability()
    })
    .map_err(|m| unavailable(device, m))?;
    let cc = ComputeCapability {
        major: major as u32,
        minor: minor as u32,
    };
    let stream = ctx.default_stream();
    // SAFETY: every allocation, copy and launch of this context goes to its
    // one stream, in order, so the per-buffer events cudarc would record to
    // order work across streams have nothing to order (and would cost two
    // events an allocation).
    unsafe { ctx.disable_event_tracking() };
    let gpu = Arc::new(Gpu {
        device,
        ctx,
        stream,
        cc,
        target: Target::cuda(cc),
        functions: Mutex::default(),
        passed: Mutex::default(),
        matmul: OnceLock::new(),
        reduce_block: OnceLock::new(),
    });
    // Without it the device still works, allocating from the driver more
    // often: said, not fatal.
    if let Err(why) = crate::device::keep_freed_memory(&gpu) {
        eprintln!("warning: {device}: {why}");
    }
    gpus.insert(ordinal, gpu.clone());
    Ok(gpu)
}

/// Every GPU the driver lists, with its facts.
pub(crate) fn probe() -> Result<Vec<GpuReport>> {
    let device = Device::Cuda(0);
    if !driver_present() {
        return Err(unavailable(device, NO_DRIVER));
    }
    let count =
        guarded("counting GPUs", CudaContext::device_count).map_err(|m| unavailable(device, m))?;
    let mut reports = Vec::new();
    for ordinal in 0..count.max(0) as usize {
        reports.push(report(ordinal)?);
    }
    Ok(reports)
}

/// The CUDA version the driver reports (`12040` is 12.4); the library must
/// have been found present.
fn driver_version(device: Device) -> Result<i32> {
    let mut version = 0;
    // SAFETY: `version` is a valid, writable c_int for the call's duration.
    guarded("reading the driver version", || unsafe {
        sys::cuDriverGetVersion(&mut version).result()
    })
    .map_err(|m| unavailable(device, m))?;
    Ok(version)
}

/// The facts of `cuda:ordinal`, opening it on first use.
fn report(ordinal: usize) -> Result<GpuReport> {
    let device = Device::Cuda(ordinal);
    let gpu = opened(device)?;
    let version = driver_version(device)?;
    let facts = guarded("reading the GPU's facts", || {
        let sms = gpu
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        Ok::<_, DriverError>((gpu.ctx.name()?, sms, gpu.ctx.total_mem()?))
    })
    .map_err(|m| unavailable(device, m))?;
    Ok(GpuReport {
        ordinal,
        name: facts.0,
        compute_capability: (gpu.cc.major as i32, gpu.cc.minor as i32),
        multiprocessors: facts.1,
        memory_bytes: facts.2 as u64,
        driver_cuda_version: version,
    })
}

/// The tuning cache's name for `device` ([`crate::identity_of`]),
/// with the driver's release where Linux's kernel module tells it.
pub(crate) fn identity(device: Device) -> Result<String> {
    let Device::Cuda(ordinal) = device else {
        return Err(unavailable(device, "not a CUDA device"));
    };
    let report = report(ordinal)?;
    let release = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| crate::report::driver_release(&t));
    Ok(crate::report::identity_of(&report, release.as_deref()))
}

impl Gpu {
    /// The matmul kernel and its tile: the tuning cache's entry for this
    /// part, else the library's default (`oxmera_gpu::tuned`).
    pub fn tuned_matmul(&self) -> (&'static Kernel, u32) {
        *self.matmul.get_or_init(|| {
            let base = oxmera_kernel::library::matmul_strided();
            oxmera_gpu::tuned::matmul_choice(base, self.cached(base), self.target)
        })
    }

    /// The block `reduce_strided` runs with: the tuning cache's entry for
    /// this part, else the default (`oxmera_gpu::tuned`).
    pub fn tuned_reduce_block(&self) -> u32 {
        *self.reduce_block.get_or_init(|| {
            let k = oxmera_kernel::library::reduce_strided();
            oxmera_gpu::tuned::reduce_block_choice(k, self.cached(k), self.target)
        })
    }

    /// The tuning cache's configuration of `k` for this part, if any (none
    /// where the part's identity cannot be read).
    fn cached(&self, k: &Kernel) -> Option<oxmera_kernel::space::Config> {
        let id = identity(self.device).ok()?;
        oxmera_kernel::tune::cache::tuned(&id, k)
    }

    /// A failure on the device, as the seam reports it.
    pub fn fault(&self, op: &'static str, message: impl Into<String>) -> Error {
        Error::DeviceFault {
            op,
            device: self.device,
            reason: message.into(),
        }
    }

    /// The gate: the analysis for this part at this launch, once per
    /// (kernel, block, grid); a finding is an error and nothing launches.
    pub fn gate(&self, k: &'static Kernel, launch: LaunchConfig, op: &'static str) -> Result<()> {
        let key = (k as *const Kernel as usize, launch.block, launch.grid);
        if self.passed.lock().expect("gate lock").contains(&key) {
            return Ok(());
        }
        let part = format!("sm_{}{}", self.cc.major, self.cc.minor);
        oxmera_kernel::gate(k, launch, self.target, &part).map_err(|m| self.fault(op, m))?;
        self.passed.lock().expect("gate lock").insert(key);
        Ok(())
    }

    /// The kernel's entry point for `block` and the dynamic shared memory
    /// its launch must request: PTX emitted for this part, JIT-compiled by
    /// the driver once and kept.
    pub fn function(
        &self,
        k: &'static Kernel,
        block: Dim3,
        op: &'static str,
    ) -> Result<(CudaFunction, u32)> {
        let key = (k as *const Kernel as usize, block);
        if let Some(f) = self.functions.lock().expect("module cache").get(&key) {
            return Ok(f.clone());
        }
        let module =
            ptx(k, &PtxOptions::new(self.cc, block)).map_err(|e| self.fault(op, e.to_string()))?;
        let source = module.source.clone();
        let loaded = guarded("loading the PTX", || {
            self.ctx.load_module(cudarc::nvrtc::Ptx::from_src(source))
        })
        .map_err(|m| self.fault(op, format!("the driver refused `{}`'s PTX: {m}", k.name)))?;
        let f = guarded("finding the entry point", || {
            loaded.load_function(&module.entry_point)
        })
        .map_err(|m| self.fault(op, m))?;
        let dynamic = module.dynamic_shared_bytes;
        if dynamic > 0 {
            // Past 48 KiB a function must be opted in to its dynamic size.
            guarded("opting in to shared memory", || {
                f.set_attribute(
                    sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dynamic as i32,
                )
            })
            .map_err(|m| self.fault(op, m))?;
        }
        self.functions
            .lock()
            .expect("module cache")
            .insert(key, (f.clone(), dynamic));
        Ok((f, dynamic))
    }
}
