//! The op layer on the kernel simulator: a [`GpuDevice`] whose memory is
//! host bytes and whose launches run lane by lane in
//! `oxmera_kernel::sim`, with warps of 32 as on an NVIDIA part. Every op
//! the layer computes natively runs here exactly as a GPU backend would
//! launch it — the same kernels, arguments, grids and size limits — and the
//! conformance corpus compares it with the reference. This is how the code
//! the CUDA backend runs is checked on a machine with no GPU.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use oxmera_core::{Device, Error, Result};
use oxmera_gpu::{DenseMatmul, DeviceMemory, GpuBackend, GpuDevice};
use oxmera_kernel::ir::{Dim3, Kernel, ParamKind, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library;
use oxmera_kernel::limits::ComputeCapability;
use oxmera_kernel::sim::{Arg, Buffer, Program, SimOptions, run_program};
use oxmera_kernel::target::Target;
use oxmera_tensor::{Provider, Support, Tensor};

/// The device kind the simulated GPU registers.
const KIND: &str = "gpusim";

/// The part the simulated GPU stands for.
const SM_80: ComputeCapability = ComputeCapability { major: 8, minor: 0 };

/// Device memory: bytes behind a lock (a launch reads and writes them).
#[derive(Debug)]
struct SimMemory(Mutex<Vec<u8>>);

impl DeviceMemory for SimMemory {
    type Raw = SimMemory;

    fn raw(&self) -> &SimMemory {
        self
    }
}

/// The simulated GPU: an sm_80's target (warps of 32, its limits).
struct SimGpu {
    device: Device,
    target: Target,
    /// Kernels compiled for the simulator, by address (as a GPU backend
    /// keeps its modules).
    programs: Mutex<HashMap<usize, Arc<Program>>>,
    /// (kernel, block, grid) launches the analysis passed, as a GPU
    /// backend's gate keeps them.
    passed: Mutex<HashSet<(usize, Dim3, Dim3)>>,
}

impl SimGpu {
    fn fault(&self, op: &'static str, reason: String) -> Error {
        Error::DeviceFault {
            op,
            device: self.device,
            reason,
        }
    }
}

/// Bytes rounded exactly as the CUDA backend (and wgpu's pool, at its
/// smallest) allocates: whole 32-bit words, at least two. A launch binds a
/// buffer as whole elements of the parameter's type, so a kernel reading
/// past what the CUDA backend would have allocated fails here.
fn rounded(bytes: u64) -> usize {
    bytes.max(8).next_multiple_of(4) as usize
}

impl GpuDevice for SimGpu {
    type Raw = SimMemory;
    type Buffer = SimMemory;

    fn device(&self) -> Device {
        self.device
    }

    fn backend_name(&self) -> &'static str {
        "gpusim"
    }

    fn part_name(&self) -> String {
        format!("the kernel simulator as {}", self.target)
    }

    fn alloc(&self, bytes: u64, op: &'static str) -> Result<SimMemory> {
        self.check_binding(bytes, op)?;
        // Not zeroed on a GPU either: a pattern that a kernel which reads
        // before it writes turns into wrong results the corpus catches.
        Ok(SimMemory(Mutex::new(vec![0xA5; rounded(bytes)])))
    }

    fn upload(&self, bytes: &[u8], op: &'static str) -> Result<SimMemory> {
        let m = self.alloc(bytes.len() as u64, op)?;
        m.0.lock().expect("memory")[..bytes.len()].copy_from_slice(bytes);
        Ok(m)
    }

    fn download(&self, buffer: &SimMemory, bytes: u64, _op: &'static str) -> Result<Vec<u8>> {
        Ok(buffer.0.lock().expect("memory")[..bytes as usize].to_vec())
    }

    fn wait(&self, _op: &'static str) -> Result<()> {
        Ok(())
    }

    fn metadata(&self, words: &[u32]) -> Result<SimMemory> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.upload(&bytes, "metadata")
    }

    fn launch(
        &self,
        kernel: &'static Kernel,
        launch: LaunchConfig,
        buffers: &[&SimMemory],
        scalars: &[Value],
        op: &'static str,
    ) -> Result<()> {
        let key = kernel as *const Kernel as usize;
        let gated = (key, launch.block, launch.grid);
        if !self.passed.lock().expect("gate").contains(&gated) {
            oxmera_kernel::gate(kernel, launch, self.target, "gpusim")
                .map_err(|m| self.fault(op, m))?;
            self.passed.lock().expect("gate").insert(gated);
        }
        let program = self
            .programs
            .lock()
            .expect("programs")
            .entry(key)
            .or_insert_with(|| Arc::new(Program::compile(kernel)))
            .clone();
        let (mut next_buffer, mut next_scalar) = (buffers.iter(), scalars.iter());
        let mut args = Vec::new();
        let mut bound = Vec::new();
        for p in &kernel.params {
            match p.kind {
                ParamKind::Buffer { elem, writable } => {
                    let m = next_buffer
                        .next()
                        .ok_or_else(|| self.fault(op, "too few buffers".into()))?;
                    // Bound as whole elements of the parameter's type.
                    let mut bytes = m.0.lock().expect("memory").clone();
                    bytes.truncate(bytes.len() - bytes.len() % elem.size_bytes() as usize);
                    args.push(Arg::Buffer(Buffer::from_bytes(elem, bytes)));
                    bound.push(writable.then_some(*m));
                }
                ParamKind::Scalar(_) => {
                    let v = next_scalar
                        .next()
                        .ok_or_else(|| self.fault(op, "too few scalars".into()))?;
                    args.push(Arg::Scalar(*v));
                    bound.push(None);
                }
            }
        }
        let opts = SimOptions {
            target: self.target,
            ..SimOptions::default()
        };
        run_program(&program, launch, &mut args, &opts)
            .map_err(|e| self.fault(op, format!("kernel `{}`: {e}", kernel.name)))?;
        for (a, m) in args.iter().zip(bound) {
            if let (Arg::Buffer(b), Some(m)) = (a, m) {
                let out = b.as_bytes();
                m.0.lock().expect("memory")[..out.len()].copy_from_slice(out);
            }
        }
        LAUNCHES.with(|l| *l.borrow_mut().entry(kernel.name.clone()).or_default() += 1);
        Ok(())
    }

    fn check_binding(&self, bytes: u64, op: &'static str) -> Result<()> {
        const LIMIT: u64 = 128 << 20;
        if bytes > LIMIT {
            return Err(self.fault(
                op,
                format!("a buffer of {bytes} bytes is over the simulator's {LIMIT} bytes"),
            ));
        }
        Ok(())
    }

    fn max_grid(&self) -> Dim3 {
        // An NVIDIA part's, as the CUDA backend reports them.
        SM_80.max_grid()
    }

    fn has_feature(&self, name: &str) -> bool {
        matches!(name, "f64" | "i64")
    }

    fn matmul_kernel(&self) -> (&'static Kernel, u32) {
        (library::matmul_strided(), 16)
    }

    fn reduce_block(&self) -> u32 {
        64
    }

    fn dense_matmul_kernel(&self) -> Option<DenseMatmul> {
        // As the CUDA backend's.
        Some(DenseMatmul::register_tiled())
    }
}

fn opened() -> &'static Arc<SimGpu> {
    static GPU: std::sync::OnceLock<Arc<SimGpu>> = std::sync::OnceLock::new();
    GPU.get_or_init(|| {
        Arc::new(SimGpu {
            device: device(),
            target: Target::cuda(SM_80),
            programs: Mutex::default(),
            passed: Mutex::default(),
        })
    })
}

fn device() -> Device {
    Device::custom(KIND, 0).expect("a well-formed device name")
}

#[linkme::distributed_slice(oxmera_tensor::BACKEND_PROVIDERS)]
#[linkme(crate = oxmera_tensor::__linkme)]
static PROVIDE_SIM: Provider = Provider {
    kind: KIND,
    open: |_| Ok(Arc::new(GpuBackend::new(opened().clone()))),
};

thread_local! {
    /// Launches this thread made, by kernel name: per thread, because the
    /// tests run side by side on one simulated GPU (and a launch runs on
    /// the thread that makes it).
    static LAUNCHES: std::cell::RefCell<HashMap<String, u64>> = Default::default();
}

/// Launches this thread has made so far: all, and of the kernel `name`.
fn launches(name: &str) -> (u64, u64) {
    LAUNCHES.with(|l| {
        let all = l.borrow();
        (all.values().sum(), all.get(name).copied().unwrap_or(0))
    })
}

#[test]
fn a_small_mlp_step_runs_its_ops_as_launches_on_the_simulated_gpu() {
    let d = device();
    let xs: Vec<f32> = (0..12).map(|i| i as f32 * 0.25 - 1.0).collect();
    let ws: Vec<f32> = (0..8).map(|i| 0.5 - i as f32 * 0.125).collect();
    let x = Tensor::from_vec(xs.clone(), [3, 4], d).unwrap();
    let w = Tensor::from_vec(ws.clone(), [4, 2], d).unwrap();
    let (before, _) = launches("");
    let y = x.matmul(&w).unwrap().relu().unwrap().sum_all().unwrap();
    assert!(
        launches("").0 >= before + 3,
        "matmul, relu and sum each launch"
    );
    let mut want = 0.0f32;
    for i in 0..3 {
        for j in 0..2 {
            let v: f32 = (0..4).map(|k| xs[i * 4 + k] * ws[k * 2 + j]).sum();
            want += v.max(0.0);
        }
    }
    let got = y.to_vec::<f32>().unwrap()[0];
    assert!(
        (got - want).abs() <= 1e-5 * want.abs().max(1.0),
        "{got} vs {want}"
    );
}

/// `a @ b` on the host, in f64, for `m × k` by `k × n` row-major data.
fn host_matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k)
                .map(|q| f64::from(a[i * k + q]) * f64::from(b[q * n + j]))
                .sum();
        }
    }
    c
}

/// A dense product runs the register-tiled kernel (as on CUDA); a
/// transposed operand or a batch, the strided one; both as the host
/// computes them, within `(k + 1)·ε·Σ|a·b|` (here `Σ|a·b| ≤ k`, the data
/// in [-1, 1)).
#[test]
fn dense_products_run_the_register_tiled_kernel_and_views_the_strided_one() {
    let d = device();
    let (m, k, n) = (45, 37, 50);
    let data = |len: usize, seed: u32| -> Vec<f32> {
        (0..len)
            .map(|i| {
                ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) as f32
                    / (1u32 << 23) as f32
                    - 1.0
            })
            .collect()
    };
    let (av, bv) = (data(m * k, 1), data(k * n, 2));
    let want = host_matmul(&av, &bv, m, k, n);
    let bound = (k as f64 + 1.0) * f64::from(f32::EPSILON) * k as f64;
    let check = |got: Vec<f32>| {
        for (g, w) in got.iter().zip(&want) {
            assert!((f64::from(*g) - w).abs() <= bound, "{g} vs {w}");
        }
    };
    let a = Tensor::from_vec(av.clone(), [m, k], d).unwrap();
    let b = Tensor::from_vec(bv.clone(), [k, n], d).unwrap();
    let (_, dense_before) = launches("matmul_register_tiled");
    check(a.matmul(&b).unwrap().to_vec::<f32>().unwrap());
    assert_eq!(launches("matmul_register_tiled").1, dense_before + 1);
    // `a` as the transpose of its transpose: the same values, a strided
    // view, so the strided kernel.
    let at = Tensor::from_vec(host_transpose(&av, m, k), [k, m], d).unwrap();
    let (_, strided_before) = launches("matmul_strided");
    check(at.t().unwrap().matmul(&b).unwrap().to_vec::<f32>().unwrap());
    assert_eq!(launches("matmul_register_tiled").1, dense_before + 1);
    assert_eq!(launches("matmul_strided").1, strided_before + 1);
}

/// The `rows × cols` row-major `x`, transposed.
fn host_transpose(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..rows * cols)
        .map(|i| x[(i % rows) * cols + i / rows])
        .collect()
}

#[test]
fn the_native_ops_say_so() {
    let b = GpuBackend::new(opened().clone());
    use oxmera_tensor::Backend;
    for op in ["add", "matmul", "sum", "softmax", "relu", "exp"] {
        assert_eq!(
            b.support(op, oxmera_core::DType::F32),
            Support::Native,
            "{op}"
        );
    }
}

#[test]
fn the_conformance_corpus_passes_with_every_native_op_simulated() {
    let report = oxmera_conformance::run(device(), None);
    assert!(report.passed(), "{report}");
    eprintln!(
        "{} runs, {} native, {} declined",
        report.runs(),
        report.native_runs(),
        report.declined_runs()
    );
    assert!(report.native_runs() > 0, "{report}");
}
