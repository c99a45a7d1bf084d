//! One opened adapter: its device and queue, the buffer pool, compiled
//! kernels, and the gate every kernel passes before its first launch.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, mpsc};

use oxmera_core::{Device, Error, Result};
use oxmera_kernel::emit::wgsl::{WgslKernel, WgslOptions, wgsl};
use oxmera_kernel::ir::{Dim3, Kernel, Scalar, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::target::Target;
use wgpu::util::DeviceExt;

use crate::probe::AdapterReport;
use crate::{PoolStats, QueueStats, unavailable};

/// The identity the tuning cache keys an adapter by: its name, backend
/// and driver.
pub(crate) fn identity(report: &AdapterReport) -> String {
    format!(
        "wgpu: {}; {}; {}",
        report.name, report.backend, report.driver
    )
}

/// Every adapter wgpu finds, in a fixed order.
pub(crate) fn adapters() -> Vec<wgpu::Adapter> {
    let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    pollster::block_on(instance.enumerate_adapters(backends))
}

/// The features named in `OXMERA_WGPU_MASK` (comma-separated, as the
/// probe names them: `f16`, `f64`, `i64`, `f32-atomics`), read once:
/// treated as absent from every adapter, to see what a device without
/// them (Metal has no f64) can and cannot do, on the adapter at hand.
fn masked_features() -> &'static [String] {
    static MASK: OnceLock<Vec<String>> = OnceLock::new();
    MASK.get_or_init(|| {
        std::env::var("OXMERA_WGPU_MASK")
            .map(|v| {
                v.split(',')
                    .map(|w| w.trim().to_string())
                    .filter(|w| !w.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// The probe's facts about one adapter.
pub(crate) fn report(ordinal: usize, a: &wgpu::Adapter) -> AdapterReport {
    let info = a.get_info();
    let f = a.features();
    let l = a.limits();
    let (mut features, mut masked) = (Vec::new(), Vec::new());
    for (flag, name) in [
        (wgpu::Features::SHADER_F16, "f16"),
        (wgpu::Features::SHADER_F64, "f64"),
        (wgpu::Features::SHADER_INT64, "i64"),
        (wgpu::Features::SHADER_FLOAT32_ATOMIC, "f32-atomics"),
        (wgpu::Features::SUBGROUP, "subgroups"),
    ] {
        if f.contains(flag) {
            if masked_features().iter().any(|m| m == name) {
                masked.push(name);
            } else {
                features.push(name);
            }
        }
    }
    AdapterReport {
        ordinal,
        name: info.name,
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: format!("{} {}", info.driver, info.driver_info)
            .trim()
            .to_string(),
        subgroup_sizes: (info.subgroup_min_size, info.subgroup_max_size),
        features,
        masked,
        max_workgroup_storage: l.max_compute_workgroup_storage_size,
        max_storage_binding: l.max_storage_buffer_binding_size,
        max_invocations: l.max_compute_invocations_per_workgroup,
        max_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
    }
}

/// Every adapter opened in this process, for [`crate::pool_stats`].
static OPENED: Mutex<Vec<(Device, std::sync::Weak<Gpu>)>> = Mutex::new(Vec::new());

/// The pool statistics of an opened device.
pub(crate) fn pool_stats(device: Device) -> Option<PoolStats> {
    Some(opened_gpu(device)?.pool_stats())
}

/// Destroys an opened device (see [`crate::destroy`]).
pub(crate) fn destroy(device: Device) -> bool {
    let Some(gpu) = opened_gpu(device) else {
        return false;
    };
    gpu.flush();
    gpu.device.destroy();
    // The lost callback runs on a poll; the fault is set here too, so the
    // very next call sees it whichever way the driver reports the loss.
    let _ = gpu.device.poll(wgpu::PollType::Poll);
    if let Ok(mut f) = gpu.fault.lock()
        && f.is_none()
    {
        *f = Some("the device was lost (destroyed)".into());
    }
    true
}

/// The queue statistics of an opened device.
pub(crate) fn queue_stats(device: Device) -> Option<QueueStats> {
    Some(opened_gpu(device)?.queue_stats())
}

/// An opened device, if it is open.
fn opened_gpu(device: Device) -> Option<Arc<Gpu>> {
    let opened = OPENED.lock().ok()?;
    opened.iter().find(|(d, _)| *d == device)?.1.upgrade()
}

/// The opened adapter behind `device`, opening it if need be (through the
/// registry, so that the backend and this share one device).
pub(crate) fn opened(device: Device) -> Result<Arc<Gpu>> {
    oxmera_tensor::registry::backend(device)?;
    let opened = OPENED.lock().expect("opened adapters");
    opened
        .iter()
        .find(|(d, _)| *d == device)
        .and_then(|(_, g)| g.upgrade())
        .ok_or_else(|| unavailable(device, "not a wgpu device"))
}

/// Buffers kept for reuse, by size class.
#[derive(Default)]
struct Pool {
    free: HashMap<u64, Vec<wgpu::Buffer>>,
    stats: PoolStats,
}

/// The most bytes the pool keeps; a buffer returned past it is freed.
const POOL_CAP: u64 = 1 << 30;

/// The size class of an allocation: a power of two up to 1 MiB, then
/// whole MiB, so a training loop's repeated shapes land in few classes; a
/// class wastes at most half its size below 1 MiB and under 1 MiB above.
/// At least 8 bytes: a shader's `array<f64>` binding needs room for one
/// element, even for an empty tensor (a sum over an empty dim, a matmul
/// with `k = 0` bind their empty inputs).
fn size_class(bytes: u64) -> u64 {
    let b = bytes.max(8);
    if b <= 1 << 20 {
        b.next_power_of_two()
    } else {
        b.div_ceil(1 << 20) << 20
    }
}

/// A buffer in device memory, returned to its pool when dropped.
#[derive(Debug)]
pub(crate) struct GpuBuffer {
    buffer: Option<wgpu::Buffer>,
    pool: Arc<Mutex<PoolHandle>>,
}

/// The pool as a buffer sees it (Debug for `DeviceBuffer`).
pub(crate) struct PoolHandle(Pool);

impl std::fmt::Debug for PoolHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pool({:?})", self.0.stats)
    }
}

impl GpuBuffer {
    pub(crate) fn raw(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("a live buffer")
    }
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take()
            && let Ok(mut p) = self.pool.lock()
        {
            let pool = &mut p.0;
            if pool.stats.pooled_bytes + b.size() <= POOL_CAP {
                pool.stats.pooled_bytes += b.size();
                pool.free.entry(b.size()).or_default().push(b);
            }
        }
    }
}

/// A compiled kernel: its shader's facts and its pipeline.
pub(crate) struct Compiled {
    shader: WgslKernel,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// One opened adapter.
pub(crate) struct Gpu {
    pub(crate) device_id: Device,
    device: wgpu::Device,
    queue: wgpu::Queue,
    pub(crate) report: AdapterReport,
    pub(crate) target: Target,
    fault: Arc<Mutex<Option<String>>>,
    pool: Arc<Mutex<PoolHandle>>,
    compiled: Mutex<HashMap<(usize, Dim3), Arc<Compiled>>>,
    passed: Mutex<HashSet<(usize, Dim3, Dim3)>>,
    /// Launches recorded but not yet submitted, and how many.
    pending: Mutex<Pending>,
    /// The matmul kernel and tile for this adapter: read from the tuning
    /// cache at the first matmul (see `crate::tuned`).
    matmul: std::sync::OnceLock<(&'static Kernel, u32)>,
    /// The block of `reduce_strided`, likewise.
    reduce_block: std::sync::OnceLock<u32>,
}

/// The commands of launches recorded since the last submission: the queue
/// sees them at the next read-back, upload, wait, or once
/// [`BATCH_LAUNCHES`] have gathered.
#[derive(Default)]
struct Pending {
    encoder: Option<wgpu::CommandEncoder>,
    launches: usize,
    /// Counted since the device opened.
    stats: QueueStats,
}

/// The most launches one submission carries: enough that a training step
/// is a few submissions, few enough that the device starts early.
const BATCH_LAUNCHES: usize = 64;

impl Gpu {
    /// Opens adapter `wgpu:N`.
    pub(crate) fn open(device_id: Device) -> Result<Arc<Gpu>> {
        let ordinal = device_id.ordinal();
        let all = adapters();
        let Some(adapter) = all.get(ordinal) else {
            let names: Vec<String> = all.iter().map(|a| a.get_info().name).collect();
            return Err(unavailable(
                device_id,
                if names.is_empty() {
                    "wgpu found no adapter (no Vulkan, Metal or DX12 driver; on Linux \
                     without a GPU install Mesa's lavapipe: apt-get install mesa-vulkan-drivers)"
                        .to_string()
                } else {
                    format!(
                        "wgpu found {} adapter(s): {}",
                        names.len(),
                        names.join("; ")
                    )
                },
            ));
        };
        let report = report(ordinal, adapter);
        // Subgroups, and the 64-bit shader types the probe reports (not
        // masked): the f64 kernels need SHADER_F64 and SHADER_INT64 (they
        // read an f64's bits as a u64).
        let mut features = adapter.features() & wgpu::Features::SUBGROUP;
        if report.features.contains(&"f64") {
            features |= wgpu::Features::SHADER_F64;
        }
        if report.features.contains(&"i64") {
            features |= wgpu::Features::SHADER_INT64;
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("oxmera"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| unavailable(device_id, format!("{}: {e}", report.name)))?;
        let fault = Arc::new(Mutex::new(None::<String>));
        let sink = fault.clone();
        // An error wgpu finds after a call returned (validation of queued
        // work, out of memory) is kept and surfaces at the next read-back
        // or synchronize, as the device seam defines; it never panics.
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut f) = sink.lock()
                && f.is_none()
            {
                *f = Some(e.to_string());
            }
        }));
        // A lost device (a driver reset, an unplugged GPU, `destroy`) is
        // kept as the fault every later call reports.
        let lost = fault.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut f) = lost.lock() {
                *f = Some(format!("the device was lost ({reason:?}): {message}"));
            }
        });
        let (lo, hi) = report.subgroup_sizes;
        // The analysis needs one width; an adapter reporting a range gets
        // the largest (uniformity proofs for it hold for narrower warps
        // only where the kernel uses no collective, which the launch checks).
        let width = if lo == hi { lo } else { hi };
        let limits = adapter.limits();
        let target = Target::from_limits(
            width.clamp(1, 64).next_power_of_two(),
            limits.max_compute_invocations_per_workgroup,
            limits.max_compute_workgroup_storage_size as u64,
        )
        .map_err(|e| unavailable(device_id, format!("{}: {e}", report.name)))?;
        // The shader types are the adapter's: without SHADER_F64 no kernel
        // holding an f64 is emitted (Metal), without SHADER_INT64 none
        // holding an i64 or u64 (the word-pair kernels hold u32s).
        let mut dtypes = target.dtypes();
        if !report.features.contains(&"f64") {
            dtypes = dtypes.without(Scalar::F64);
        }
        if !report.features.contains(&"i64") {
            dtypes = dtypes.without(Scalar::I64).without(Scalar::U64);
        }
        let target = target.with_dtypes(dtypes);
        let gpu = Arc::new(Gpu {
            device_id,
            device,
            queue,
            report,
            target,
            fault,
            pool: Arc::new(Mutex::new(PoolHandle(Pool::default()))),
            compiled: Mutex::new(HashMap::new()),
            passed: Mutex::new(HashSet::new()),
            matmul: std::sync::OnceLock::new(),
            reduce_block: std::sync::OnceLock::new(),
            pending: Mutex::new(Pending::default()),
        });
        if let Ok(mut o) = OPENED.lock() {
            o.push((device_id, Arc::downgrade(&gpu)));
        }
        Ok(gpu)
    }

    /// The first asynchronous error, as the seam's `DeviceFault`.
    pub(crate) fn check_fault(&self, op: &'static str) -> Result<()> {
        match self.fault.lock().ok().and_then(|f| f.clone()) {
            Some(reason) => Err(Error::DeviceFault {
                op,
                device: self.device_id,
                reason,
            }),
            None => Ok(()),
        }
    }

    pub(crate) fn pool_stats(&self) -> PoolStats {
        self.pool.lock().map(|p| p.0.stats).unwrap_or_default()
    }

    /// Refuses a buffer a kernel could not bind, naming the limit.
    pub(crate) fn check_binding(&self, bytes: u64, op: &'static str) -> Result<()> {
        if bytes > self.report.max_storage_binding {
            return Err(Error::DeviceFault {
                op,
                device: self.device_id,
                reason: format!(
                    "a buffer of {bytes} bytes is over the adapter's storage binding limit of {} bytes",
                    self.report.max_storage_binding
                ),
            });
        }
        Ok(())
    }

    /// A buffer of at least `bytes` bytes, from the pool if one is free.
    pub(crate) fn alloc(&self, bytes: u64, op: &'static str) -> Result<GpuBuffer> {
        // A device that faulted (or was lost) takes no more work.
        self.check_fault(op)?;
        self.check_binding(bytes, op)?;
        // Rounding up to the class must not pass the binding limit.
        let class = size_class(bytes)
            .min(self.report.max_storage_binding)
            .max(bytes.max(8).next_multiple_of(4));
        let mut pool = self.pool.lock().expect("pool lock");
        let reused = pool.0.free.get_mut(&class).and_then(Vec::pop);
        let buffer = match reused {
            Some(b) => {
                pool.0.stats.hits += 1;
                pool.0.stats.pooled_bytes -= b.size();
                b
            }
            None => {
                pool.0.stats.misses += 1;
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: class,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_SRC
                        | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            }
        };
        Ok(GpuBuffer {
            buffer: Some(buffer),
            pool: self.pool.clone(),
        })
    }

    /// Copies `bytes` into a fresh buffer.
    pub(crate) fn upload(&self, bytes: &[u8], op: &'static str) -> Result<GpuBuffer> {
        let buf = self.alloc(bytes.len() as u64, op)?;
        if !bytes.is_empty() {
            // A queue write lands before any command submitted after it:
            // recorded launches that still read this (pooled) buffer's
            // old contents go first.
            self.flush();
            if bytes.len() % 4 == 0 {
                self.queue.write_buffer(buf.raw(), 0, bytes);
            } else {
                let mut padded = bytes.to_vec();
                padded.resize(bytes.len().next_multiple_of(4), 0);
                self.queue.write_buffer(buf.raw(), 0, &padded);
            }
        }
        Ok(buf)
    }

    /// Reads the first `bytes` bytes of `buf` back (waits for queued work).
    pub(crate) fn download(
        &self,
        buf: &GpuBuffer,
        bytes: u64,
        op: &'static str,
    ) -> Result<Vec<u8>> {
        self.check_fault(op)?;
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let size = bytes.next_multiple_of(4);
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("oxmera read-back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        {
            let mut pending = self.pending.lock().expect("pending commands");
            let enc = pending
                .encoder
                .get_or_insert_with(|| self.device.create_command_encoder(&Default::default()));
            enc.copy_buffer_to_buffer(buf.raw(), 0, &staging, 0, size);
        }
        self.flush();
        let (tx, rx) = mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait(op)?;
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(self.fault_now(op, e.to_string())),
            Err(_) => return Err(self.fault_now(op, "the read-back was never mapped".into())),
        }
        let data = staging
            .get_mapped_range(..)
            .map_err(|e| self.fault_now(op, e.to_string()))?
            .to_vec();
        staging.unmap();
        self.check_fault(op)?;
        Ok(data[..bytes as usize].to_vec())
    }

    fn fault_now(&self, op: &'static str, reason: String) -> Error {
        Error::DeviceFault {
            op,
            device: self.device_id,
            reason,
        }
    }

    /// Submits the recorded launches, if any. The lock is held through the
    /// submission: a thread whose flush finds nothing to submit must know
    /// that what another took is on the queue already (before its upload
    /// is written, or its read-back mapped).
    pub(crate) fn flush(&self) {
        let mut pending = self.pending.lock().expect("pending commands");
        pending.launches = 0;
        if let Some(enc) = pending.encoder.take() {
            self.queue.submit([enc.finish()]);
            pending.stats.submissions += 1;
        }
    }

    /// How the queue has been fed so far.
    pub(crate) fn queue_stats(&self) -> QueueStats {
        self.pending.lock().map(|p| p.stats).unwrap_or_default()
    }

    /// Submits the recorded launches and waits for every submitted command.
    pub(crate) fn wait(&self, op: &'static str) -> Result<()> {
        self.flush();
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| self.fault_now(op, e.to_string()))?;
        self.check_fault(op)
    }

    /// The gate: the analysis for this adapter's warp width and limits, at
    /// this launch, once per (kernel, block, grid).
    fn gate(&self, k: &'static Kernel, launch: LaunchConfig, op: &'static str) -> Result<()> {
        let key = (k as *const Kernel as usize, launch.block, launch.grid);
        if self.passed.lock().expect("gate lock").contains(&key) {
            return Ok(());
        }
        oxmera_kernel::gate(k, launch, self.target, &self.report.name)
            .map_err(|m| self.fault_now(op, m))?;
        self.passed.lock().expect("gate lock").insert(key);
        Ok(())
    }

    fn compile(&self, k: &'static Kernel, block: Dim3, op: &'static str) -> Result<Arc<Compiled>> {
        let key = (k as *const Kernel as usize, block);
        if let Some(c) = self.compiled.lock().expect("kernel cache").get(&key) {
            return Ok(c.clone());
        }
        let opts = WgslOptions::new(block).with_target(self.target);
        let shader = wgsl(k, &opts).map_err(|e| self.fault_now(op, e.to_string()))?;
        if let Some(w) = shader.subgroup_width {
            let (lo, hi) = self.report.subgroup_sizes;
            if lo != hi || lo != w {
                return Err(self.fault_now(
                    op,
                    format!(
                        "kernel `{}` uses warp collectives checked for warps of {w}, but {} runs subgroups of {lo}..{hi} lanes",
                        k.name, self.report.name
                    ),
                ));
            }
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&k.name),
                source: wgpu::ShaderSource::Wgsl(shader.source.as_str().into()),
            });
        let mut entries = Vec::new();
        for b in &shader.buffers {
            entries.push(wgpu::BindGroupLayoutEntry {
                binding: b.binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage {
                        read_only: !b.writable,
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            });
        }
        if let Some(u) = shader.uniform_binding {
            entries.push(wgpu::BindGroupLayoutEntry {
                binding: u,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            });
        }
        let layout = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(&k.name),
                entries: &entries,
            });
        let pipeline_layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&k.name),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&k.name),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(&shader.entry_point),
                compilation_options: Default::default(),
                cache: None,
            });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(self.fault_now(
                op,
                format!("kernel `{}`: the driver refused its WGSL: {e}", k.name),
            ));
        }
        let c = Arc::new(Compiled {
            shader,
            pipeline,
            layout,
        });
        self.compiled
            .lock()
            .expect("kernel cache")
            .insert(key, c.clone());
        Ok(c)
    }

    /// Launches `k`: `buffers` bind its buffer parameters in order,
    /// `scalars` its scalar parameters in order.
    pub(crate) fn launch(
        &self,
        k: &'static Kernel,
        launch: LaunchConfig,
        buffers: &[&wgpu::Buffer],
        scalars: &[Value],
        op: &'static str,
    ) -> Result<()> {
        let max = self.report.max_workgroups_per_dimension;
        let g = launch.grid;
        if g.x > max || g.y > max || g.z > max {
            return Err(self.fault_now(
                op,
                format!(
                    "kernel `{}`: grid {g} is past the adapter's {max} workgroups per dimension",
                    k.name
                ),
            ));
        }
        self.gate(k, launch, op)?;
        let c = self.compile(k, launch.block, op)?;
        let uniform = c.shader.uniform_binding.map(|_| {
            self.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: &c.shader.uniform_bytes(scalars),
                    usage: wgpu::BufferUsages::UNIFORM,
                })
        });
        let mut entries: Vec<wgpu::BindGroupEntry> = c
            .shader
            .buffers
            .iter()
            .zip(buffers)
            .map(|(b, buf)| wgpu::BindGroupEntry {
                binding: b.binding,
                resource: buf.as_entire_binding(),
            })
            .collect();
        if let (Some(binding), Some(u)) = (c.shader.uniform_binding, &uniform) {
            entries.push(wgpu::BindGroupEntry {
                binding,
                resource: u.as_entire_binding(),
            });
        }
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &c.layout,
            entries: &entries,
        });
        // Recorded, not submitted: the queue gets a batch of launches at
        // once (the bind group and uniform live as long as the commands).
        let full = {
            let mut pending = self.pending.lock().expect("pending commands");
            let enc = pending
                .encoder
                .get_or_insert_with(|| self.device.create_command_encoder(&Default::default()));
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(&c.pipeline);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(g.x, g.y, g.z);
            }
            pending.launches += 1;
            pending.stats.launches += 1;
            pending.launches >= BATCH_LAUNCHES
        };
        if full {
            self.flush();
        }
        Ok(())
    }

    /// A user's kernel with the simulator's arguments (checked by the
    /// caller): buffers uploaded as their words, scalars as values; the
    /// writable buffers read back into `args`.
    pub(crate) fn run_user(
        &self,
        k: &'static Kernel,
        launch: LaunchConfig,
        args: &mut [oxmera_kernel::sim::Arg],
    ) -> Result<()> {
        use oxmera_kernel::ir::ParamKind;
        use oxmera_kernel::sim::Arg;
        let op = "launch";
        let mut buffers = Vec::new();
        let mut scalars = Vec::new();
        for a in args.iter() {
            match a {
                Arg::Buffer(b) => {
                    buffers.push(self.upload(b.as_bytes(), op)?);
                }
                Arg::Scalar(v) => scalars.push(*v),
            }
        }
        let raw: Vec<&wgpu::Buffer> = buffers.iter().map(GpuBuffer::raw).collect();
        self.launch(k, launch, &raw, &scalars, op)?;
        let mut next = buffers.iter();
        for (p, a) in k.params.iter().zip(args.iter_mut()) {
            if let (ParamKind::Buffer { writable, .. }, Arg::Buffer(b)) = (p.kind, a) {
                let buf = next.next().expect("one GPU buffer per buffer argument");
                if writable {
                    let out = b.as_bytes_mut();
                    let bytes = self.download(buf, out.len() as u64, op)?;
                    // The read-back is padded to whole words; the buffer
                    // takes its own bytes (a u8 or u16 buffer's count may
                    // not be a multiple of 4).
                    out.copy_from_slice(&bytes[..out.len()]);
                }
            }
        }
        Ok(())
    }

    /// The matmul kernel and its tile: the tuning cache's entry for this
    /// adapter, else the documented default (`oxmera_gpu::tuned`).
    pub(crate) fn matmul_kernel(&self) -> (&'static Kernel, u32) {
        *self.matmul.get_or_init(|| {
            let base = oxmera_kernel::library::matmul_strided();
            let id = identity(&self.report);
            oxmera_gpu::tuned::matmul_choice(
                base,
                oxmera_kernel::tune::cache::tuned(&id, base),
                self.target,
            )
        })
    }

    /// The block `reduce_strided` runs with: the tuning cache's entry for
    /// this adapter, else the documented default (`oxmera_gpu::tuned`).
    pub(crate) fn reduce_block(&self) -> u32 {
        *self.reduce_block.get_or_init(|| {
            let k = oxmera_kernel::library::reduce_strided();
            let id = identity(&self.report);
            oxmera_gpu::tuned::reduce_block_choice(
                k,
                oxmera_kernel::tune::cache::tuned(&id, k),
                self.target,
            )
        })
    }

    /// One launch of a user's kernel, timed: the arguments are uploaded
    /// and the queue drained first (untimed), then the launch is submitted
    /// and waited for, so the time is the kernel's and the submission's,
    /// not the transfers'. The launch passes the same gate as `run_user`.
    pub(crate) fn time_user(
        &self,
        k: &'static Kernel,
        launch: LaunchConfig,
        args: &[oxmera_kernel::sim::Arg],
    ) -> Result<std::time::Duration> {
        use oxmera_kernel::sim::Arg;
        let op = "launch";
        let mut buffers = Vec::new();
        let mut scalars = Vec::new();
        for a in args {
            match a {
                Arg::Buffer(b) => {
                    buffers.push(self.upload(b.as_bytes(), op)?);
                }
                Arg::Scalar(v) => scalars.push(*v),
            }
        }
        let raw: Vec<&wgpu::Buffer> = buffers.iter().map(GpuBuffer::raw).collect();
        self.wait(op)?;
        let start = std::time::Instant::now();
        self.launch(k, launch, &raw, &scalars, op)?;
        self.wait(op)?;
        Ok(start.elapsed())
    }

    /// A small read-only buffer of kernel metadata (shapes, strides).
    pub(crate) fn metadata(&self, words: &[u32]) -> wgpu::Buffer {
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        if bytes.is_empty() {
            bytes = vec![0; 4];
        }
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: &bytes,
                usage: wgpu::BufferUsages::STORAGE,
            })
    }
}

impl oxmera_gpu::DeviceMemory for GpuBuffer {
    type Raw = wgpu::Buffer;

    fn raw(&self) -> &wgpu::Buffer {
        GpuBuffer::raw(self)
    }
}

/// The op layer's view of an adapter: each method is the one above of the
/// same name.
impl oxmera_gpu::GpuDevice for Gpu {
    type Raw = wgpu::Buffer;
    type Buffer = GpuBuffer;

    fn device(&self) -> Device {
        self.device_id
    }

    fn backend_name(&self) -> &'static str {
        "wgpu"
    }

    fn part_name(&self) -> String {
        self.report.name.clone()
    }

    fn alloc(&self, bytes: u64, op: &'static str) -> Result<GpuBuffer> {
        Gpu::alloc(self, bytes, op)
    }

    fn upload(&self, bytes: &[u8], op: &'static str) -> Result<GpuBuffer> {
        Gpu::upload(self, bytes, op)
    }

    fn download(&self, buffer: &GpuBuffer, bytes: u64, op: &'static str) -> Result<Vec<u8>> {
        Gpu::download(self, buffer, bytes, op)
    }

    fn wait(&self, op: &'static str) -> Result<()> {
        Gpu::wait(self, op)
    }

    fn metadata(&self, words: &[u32]) -> Result<wgpu::Buffer> {
        Ok(Gpu::metadata(self, words))
    }

    fn launch(
        &self,
        kernel: &'static Kernel,
        launch: LaunchConfig,
        buffers: &[&wgpu::Buffer],
        scalars: &[Value],
        op: &'static str,
    ) -> Result<()> {
        Gpu::launch(self, kernel, launch, buffers, scalars, op)
    }

    fn check_binding(&self, bytes: u64, op: &'static str) -> Result<()> {
        Gpu::check_binding(self, bytes, op)
    }

    fn max_grid(&self) -> Dim3 {
        let max = self.report.max_workgroups_per_dimension;
        Dim3::new(max, max, max)
    }

    fn has_feature(&self, name: &str) -> bool {
        self.report.features.contains(&name)
    }

    fn matmul_kernel(&self) -> (&'static Kernel, u32) {
        Gpu::matmul_kernel(self)
    }

    fn reduce_block(&self) -> u32 {
        Gpu::reduce_block(self)
    }
}
