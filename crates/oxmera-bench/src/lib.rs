//! `oxmera-bench`: how fast the CPU backend is, next to the reference and
//! to the libraries people would otherwise use, measured in one run.
//!
//! This crate owns the measuring, not the computing: every oxmera number
//! comes from the public tensor API on [`Device::Cpu`] (so it includes
//! dispatch, validation and allocation, as a user would see it), and every
//! peer is called as its own users call it — the `gemm` and
//! `matrixmultiply` crates (behind the `peers` cargo feature, so the
//! default build stays lean), NumPy and PyTorch through a long-lived
//! Python process (`peers/peer.py`), and the machine's own copy bandwidth,
//! measured here with plain threaded `memcpy`. A peer that is not
//! installed is skipped with a line saying so, never estimated.
//!
//! Contenders are interleaved round by round and reported as medians (see
//! [`measure`]); each benchmark's ratio is oxmera's figure over the peer's
//! for rates, the peer's time over oxmera's for times, so a ratio above 1
//! always means oxmera is faster. `--out DIR` writes the rows as
//! `DIR/bench.json`.
//!
//! With the `wgpu` feature it adds rows for `wgpu:0` against the CPU
//! backend (elementwise add, matmul, an MLP step); on a CPU driver such
//! as lavapipe those say nothing about GPUs, and the table says so.
//!
//! It must never know about backend internals (it could not tell a fast
//! path from a slow one, and should not), and nothing in the framework may
//! depend on it.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::{Conv2dParams, Generator, Tensor, no_grad};
use serde::{Deserialize, Serialize};

// The backends register themselves at link time; naming the crates keeps
// them linked.
use oxmera_cpu as _;
use oxmera_reference as _;

#[cfg(feature = "wgpu")]
mod gpu;
pub mod measure;
pub mod python;
#[cfg(feature = "peers")]
pub mod rust_peers;

use measure::{Contender, Plan, interleave};
use python::Python;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Tiny sizes and few rounds: a smoke run of the whole plumbing.
    pub quick: bool,
    /// Where to write `bench.json`, if anywhere.
    pub out: Option<PathBuf>,
    /// Threads for oxmera and for every peer.
    pub threads: usize,
    /// Whether to start the Python peers (NumPy, PyTorch).
    pub python: bool,
}

/// One row of `bench.json`: oxmera against one peer on one benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The benchmark, e.g. `matmul_f32_1024`.
    pub name: String,
    /// oxmera's figure, in `unit`.
    pub oxmera: f64,
    /// The peer, e.g. `gemm`, `numpy`, `memcpy`, `reference`.
    pub peer: String,
    /// The peer's figure, in `unit`.
    pub peer_value: f64,
    /// `GFLOP/s`, `GB/s` (higher is better) or `ms` (lower is better).
    pub unit: String,
    /// How many times faster oxmera is (above 1: oxmera is faster).
    pub ratio: f64,
}

/// What one run of a benchmark is worth, which fixes its unit.
#[derive(Debug, Clone, Copy)]
enum Work {
    /// Floating-point operations per run: reported in GFLOP/s.
    Flops(f64),
    /// Bytes read and written per run: reported in GB/s.
    Bytes(f64),
    /// Reported as milliseconds per run.
    Time,
}

impl Work {
    fn unit(self) -> &'static str {
        match self {
            Work::Flops(_) => "GFLOP/s",
            Work::Bytes(_) => "GB/s",
            Work::Time => "ms",
        }
    }

    /// The figure for a run of `seconds`.
    fn figure(self, seconds: f64) -> f64 {
        match self {
            Work::Flops(f) | Work::Bytes(f) => f / seconds / 1e9,
            Work::Time => seconds * 1e3,
        }
    }

    /// oxmera over the peer, oriented so that above 1 means oxmera wins.
    fn ratio(self, oxmera: f64, peer: f64) -> f64 {
        match self {
            Work::Time => peer / oxmera,
            _ => oxmera / peer,
        }
    }
}

/// The sizes of one run.
struct Sizes {
    matmul: Vec<usize>,
    /// Largest matmul the reference (f64 loops) is timed on.
    reference_matmul_max: usize,
    stream: usize,
    softmax: (usize, usize),
    /// `[n, c_in, h, w]`, `c_out`, kernel.
    conv: ([usize; 4], usize, usize),
    /// batch, input, hidden, classes.
    mlp: (usize, usize, usize, usize),
    plan: Plan,
}

impl Sizes {
    fn of(quick: bool) -> Sizes {
        if quick {
            Sizes {
                matmul: vec![16, 33],
                reference_matmul_max: 64,
                stream: 1 << 12,
                softmax: (16, 64),
                conv: ([2, 3, 8, 8], 4, 3),
                mlp: (8, 20, 16, 10),
                plan: Plan {
                    rounds: 2,
                    round_seconds: 0.0,
                },
            }
        } else {
            Sizes {
                matmul: vec![128, 512, 1024, 2048],
                reference_matmul_max: 128,
                stream: 1 << 24,
                softmax: (4096, 4096),
                conv: ([8, 32, 64, 64], 32, 3),
                mlp: (256, 784, 512, 10),
                plan: Plan {
                    rounds: 9,
                    round_seconds: 0.05,
                },
            }
        }
    }
}

/// Runs every benchmark, prints the table to stdout as it goes, writes
/// `bench.json` when asked, and returns the rows.
///
/// Errors: an oxmera op failing (a bug, reported as the op's error), or
/// the output directory not being writable ([`Error::InvalidArgument`]).
pub fn run(config: &Config) -> Result<Vec<Row>> {
    let sizes = Sizes::of(config.quick);
    let mut report = Report::default();
    report.header(config);
    let py = if config.python {
        match Python::start(config.threads) {
            Ok(p) => {
                if p.numpy.is_none() {
                    report.note("numpy: skipped (python3 cannot import numpy)");
                }
                if p.torch.is_none() {
                    report.note("torch: skipped (python3 cannot import torch)");
                }
                Some(p)
            }
            Err(e) => {
                report.note(&format!("numpy, torch: skipped ({e})"));
                None
            }
        }
    } else {
        report.note("numpy, torch: skipped (python peers turned off)");
        None
    };
    if !cfg!(feature = "peers") {
        report.note("gemm, matrixmultiply: skipped (built without the `peers` feature)");
    }
    let libs: Vec<&'static str> = py
        .as_ref()
        .map(|p| {
            let mut v = Vec::new();
            if p.numpy.is_some() {
                v.push("numpy");
            }
            if p.torch.is_some() {
                v.push("torch");
            }
            v
        })
        .unwrap_or_default();

    let py = RefCell::new(py);
    for &n in &sizes.matmul {
        matmul(&mut report, &sizes, config, &py, &libs, n)?;
    }
    streams(&mut report, &sizes, config, &py, &libs)?;
    softmax(&mut report, &sizes, &py, &libs)?;
    layer_norm(&mut report, &sizes, &py, &libs)?;
    conv(&mut report, &sizes, &py, &libs)?;
    mlp(&mut report, &sizes, config, &py, &libs)?;
    #[cfg(feature = "wgpu")]
    gpu::rows(&mut report, &sizes)?;
    #[cfg(not(feature = "wgpu"))]
    report.note("wgpu: skipped (built without the `wgpu` feature)");

    if let Some(dir) = &config.out {
        let io =
            |e: std::io::Error| Error::invalid("bench", "out", format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(io)?;
        let json = serde_json::to_string_pretty(&report.rows)
            .map_err(|e| Error::invalid("bench", "out", e.to_string()))?;
        std::fs::write(dir.join("bench.json"), json + "\n").map_err(io)?;
        report.note(&format!("wrote {}", dir.join("bench.json").display()));
    }
    Ok(report.rows)
}

/// The table as it is printed, and the rows collected for the JSON.
#[derive(Default)]
struct Report {
    rows: Vec<Row>,
}

impl Report {
    fn header(&self, config: &Config) {
        println!(
            "oxmera-bench: {} threads, cpu kernels: {}, {} mode",
            config.threads,
            oxmera_cpu::isa(),
            if config.quick { "quick" } else { "full" }
        );
        println!(
            "{:<34} {:>9} {:>11}  {:<14} {:>11} {:>8}",
            "benchmark", "unit", "oxmera", "peer", "peer", "ratio"
        );
    }

    fn note(&self, line: &str) {
        println!("  {line}");
    }

    /// Prints and records one benchmark's results; `results[0]` is
    /// oxmera's.
    fn record(
        &mut self,
        name: &str,
        work: Work,
        names: &[String],
        results: Vec<std::result::Result<f64, String>>,
    ) -> Result<()> {
        let ox = match &results[0] {
            Ok(s) => work.figure(*s),
            Err(e) => return Err(Error::invalid("bench", "oxmera", format!("{name}: {e}"))),
        };
        let mut first = true;
        for (peer, r) in names.iter().zip(&results).skip(1) {
            let label = if first { name } else { "" };
            let ox_col = if first { fmt(ox) } else { String::new() };
            match r {
                Ok(s) => {
                    let pv = work.figure(*s);
                    let ratio = work.ratio(ox, pv);
                    println!(
                        "{label:<34} {:>9} {ox_col:>11}  {peer:<14} {:>11} {ratio:>7.2}x",
                        work.unit(),
                        fmt(pv)
                    );
                    self.rows.push(Row {
                        name: name.to_string(),
                        oxmera: ox,
                        peer: peer.clone(),
                        peer_value: pv,
                        unit: work.unit().to_string(),
                        ratio,
                    });
                }
                Err(why) => println!(
                    "{label:<34} {:>9} {ox_col:>11}  {peer:<14} skipped: {why}",
                    work.unit()
                ),
            }
            first = false;
        }
        if names.len() == 1 {
            println!("{name:<34} {:>9} {:>11}  (no peer)", work.unit(), fmt(ox));
        }
        Ok(())
    }
}

/// A figure with about four significant digits.
fn fmt(v: f64) -> String {
    let decimals = match v.abs() {
        x if x >= 1000.0 => 0,
        x if x >= 100.0 => 1,
        x if x >= 10.0 => 2,
        x if x >= 1.0 => 3,
        _ => 4,
    };
    format!("{v:.decimals$}")
}

/// Measures `contenders` (oxmera first) and records them under `name`.
fn measure_and_record(
    report: &mut Report,
    plan: Plan,
    name: &str,
    work: Work,
    mut contenders: Vec<Contender<'_>>,
) -> Result<()> {
    let names: Vec<String> = contenders.iter().map(|c| c.name.clone()).collect();
    let results = interleave(&mut contenders, plan);
    drop(contenders);
    report.record(name, work, &names, results)
}

/// A contender that runs a Python peer's benchmark.
fn python_contender<'a>(
    py: &'a RefCell<Option<Python>>,
    lib: &'static str,
    bench: &'static str,
    args: Vec<usize>,
) -> Contender<'a> {
    Contender::reporting(lib, move || match py.borrow_mut().as_mut() {
        Some(p) => p.run(lib, bench, &args),
        None => Err("python3 is not running".into()),
    })
    .settling(PYTHON_SETTLE_SECONDS)
}

/// Idle time after each Python peer's turn. OpenBLAS (under NumPy)
/// keeps its worker threads spinning after a call returns — 2^28 cycles
/// by default (`OPENBLAS_THREAD_TIMEOUT`), about 0.1 s: measured here as
/// 0.13 CPU-seconds burnt during a 0.5 s sleep after one 1024 × 1024
/// product. Without the pause, whichever contender runs next shares the
/// cores with those spinning threads. (Setting the timeout lower instead
/// would change NumPy's own configuration.)
const PYTHON_SETTLE_SECONDS: f64 = 0.25;

fn randn(seed: u64, shape: &[usize], device: Device) -> Result<Tensor> {
    Generator::new(seed).randn(shape.to_vec(), DType::F32, device)
}

/// Runs `f`, turning an oxmera error into a panic-free skip message.
fn keep<T>(r: Result<T>) -> std::result::Result<T, String> {
    r.map_err(|e| e.to_string())
}

fn matmul(
    report: &mut Report,
    sizes: &Sizes,
    config: &Config,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
    n: usize,
) -> Result<()> {
    let a = randn(1, &[n, n], Device::Cpu)?;
    let b = randn(2, &[n, n], Device::Cpu)?;
    let (ra, rb) = (
        a.to_device(Device::Reference)?,
        b.to_device(Device::Reference)?,
    );
    // The peers' operands: the same values, as plain row-major buffers.
    #[cfg(feature = "peers")]
    let (av, bv) = (a.to_vec::<f32>()?, b.to_vec::<f32>()?);
    #[cfg(feature = "peers")]
    let (mut c1, mut c2) = (vec![0f32; n * n], vec![0f32; n * n]);
    let mut contenders = vec![Contender::reporting("oxmera", || {
        let t = Instant::now();
        keep(a.matmul(&b))?;
        Ok(t.elapsed().as_secs_f64())
    })];
    if n <= sizes.reference_matmul_max {
        contenders.push(Contender::reporting("reference", || {
            let t = Instant::now();
            keep(ra.matmul(&rb))?;
            Ok(t.elapsed().as_secs_f64())
        }));
    } else {
        report.note(&format!(
            "reference: not timed at matmul {n} (its f64 loops would take minutes)"
        ));
    }
    #[cfg(feature = "peers")]
    {
        let threads = config.threads;
        contenders.push(Contender::timed("gemm", move || {
            rust_peers::gemm_crate(n, &av, &bv, &mut c1, threads)
        }));
        // `av` and `bv` moved into the first closure; the second reads
        // them through the tensors again (a copy made once, not timed).
        let (av, bv) = (a.to_vec::<f32>()?, b.to_vec::<f32>()?);
        contenders.push(Contender::timed("matrixmultiply", move || {
            rust_peers::matrixmultiply(n, &av, &bv, &mut c2)
        }));
    }
    let _ = config;
    for &lib in libs {
        contenders.push(python_contender(py, lib, "matmul", vec![n]));
    }
    let work = Work::Flops(2.0 * (n as f64).powi(3));
    measure_and_record(
        report,
        sizes.plan,
        &format!("matmul_f32_{n}"),
        work,
        contenders,
    )
}

/// The machine's copy bandwidth: `dst = src` split over `threads`
/// threads, into a buffer that already exists.
fn threaded_copy(src: &[f32], dst: &mut [f32], threads: usize) {
    let chunk = src.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        for (d, c) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
            s.spawn(move || d.copy_from_slice(c));
        }
    });
}

/// Elementwise add, a fused expression and a sum over one long vector,
/// each against the copy bandwidth measured alongside it.
fn streams(
    report: &mut Report,
    sizes: &Sizes,
    config: &Config,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
) -> Result<()> {
    let n = sizes.stream;
    let label = if n >= 1 << 20 {
        format!("{}M", n >> 20)
    } else {
        format!("{}K", n >> 10)
    };
    let a = randn(11, &[n], Device::Cpu)?;
    let b = randn(12, &[n], Device::Cpu)?;
    let c = randn(13, &[n], Device::Cpu)?;
    let src = a.to_vec::<f32>()?;
    let mut dst = vec![0f32; n];
    let threads = config.threads;
    let bytes = |arrays: usize| Work::Bytes((arrays * n * 4) as f64);

    // Copy moves 2 arrays; the figure is GB/s of traffic either way, so
    // the ratio compares bandwidths.
    let copy_secs = RefCell::new(&mut dst);
    let memcpy = |name: &str| {
        let (src, dst) = (&src, &copy_secs);
        Contender::timed(name, move || {
            threaded_copy(src, &mut dst.borrow_mut()[..], threads)
        })
    };
    let scale = |arrays_peer: f64, arrays_ox: f64| arrays_ox / arrays_peer;

    // add: reads 2 arrays, writes 1.
    let mut cs = vec![
        Contender::timed("oxmera", || {
            a.add(&b).expect("add");
        }),
        rescaled(memcpy("memcpy"), scale(2.0, 3.0)),
    ];
    for &lib in libs {
        cs.push(python_contender(py, lib, "add", vec![n]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("add_f32_{label}"),
        bytes(3),
        cs,
    )?;

    // relu(a * b + c): reads 3, writes 1 — fused, against the same
    // expression as three tensor ops, copy, and the Python libraries.
    let mut cs = vec![
        Contender::timed("oxmera", || {
            oxmera_cpu::fused::zip3(&a, &b, &c, |x, y, z| (x * y + z).max(0.0)).expect("fused");
        }),
        Contender::timed("oxmera-unfused", || {
            a.mul(&b)
                .and_then(|t| t.add(&c))
                .and_then(|t| t.relu())
                .expect("unfused");
        }),
        rescaled(memcpy("memcpy"), scale(2.0, 4.0)),
    ];
    for &lib in libs {
        cs.push(python_contender(py, lib, "fused", vec![n]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("fused_relu_mul_add_f32_{label}"),
        bytes(4),
        cs,
    )?;

    // sum: reads 1.
    let mut cs = vec![
        Contender::timed("oxmera", || {
            a.sum_all().expect("sum");
        }),
        rescaled(memcpy("memcpy"), scale(2.0, 1.0)),
    ];
    for &lib in libs {
        cs.push(python_contender(py, lib, "sum", vec![n]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("sum_f32_{label}"),
        bytes(1),
        cs,
    )
}

/// A contender whose time is scaled so that its figure, computed with
/// another benchmark's byte count, is its own bandwidth: a copy moving
/// 2 arrays in `t` seconds reads as moving 3 arrays in `t · 3/2`.
fn rescaled(mut c: Contender<'_>, factor: f64) -> Contender<'_> {
    let mut inner = std::mem::replace(&mut c.run, Box::new(|| Ok(0.0)));
    c.run = Box::new(move || inner().map(|t| t * factor));
    c
}

fn softmax(
    report: &mut Report,
    sizes: &Sizes,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
) -> Result<()> {
    rowwise(report, sizes, py, libs, "softmax", |x| x.softmax(1), &[])
}

/// Layer normalization over rows, against the same normalization written
/// as five tensor ops (the composed form a framework without the fused
/// kernel runs), on the same backend and input in the same run.
fn layer_norm(
    report: &mut Report,
    sizes: &Sizes,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
) -> Result<()> {
    let composed = |x: &Tensor| -> Result<Tensor> {
        let mean = x.mean(&[1], true)?;
        let rstd = x.var(&[1], 0.0, true)?.add_scalar(1e-5)?.rsqrt()?;
        x.sub(&mean)?.mul(&rstd)
    };
    let fused = |x: &Tensor| x.layer_norm(1, 1e-5);
    rowwise(
        report,
        sizes,
        py,
        libs,
        "layer_norm",
        fused,
        &[("composed", composed)],
    )
}

/// A way of computing a row-wise op on a tensor.
type RowOp = fn(&Tensor) -> Result<Tensor>;

/// An op applied to the rows of one input of the softmax shape, timed for
/// oxmera, the reference on small sizes, `same_input` (other ways of
/// computing it in oxmera, by label), and the Python peers' `name`.
fn rowwise(
    report: &mut Report,
    sizes: &Sizes,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
    name: &'static str,
    op: RowOp,
    same_input: &[(&'static str, RowOp)],
) -> Result<()> {
    let (r, c) = sizes.softmax;
    let x = randn(21, &[r, c], Device::Cpu)?;
    let mut cs = vec![Contender::timed("oxmera", || {
        op(&x).expect(name);
    })];
    let rx = x.to_device(Device::Reference)?;
    if r * c <= 1 << 16 {
        cs.push(Contender::timed("reference", move || {
            op(&rx).expect(name);
        }));
    }
    for &(label, f) in same_input {
        let x = &x;
        cs.push(Contender::timed(label, move || {
            f(x).expect(label);
        }));
    }
    for &lib in libs {
        cs.push(python_contender(py, lib, name, vec![r, c]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("{name}_f32_{r}x{c}"),
        Work::Time,
        cs,
    )
}

fn conv(
    report: &mut Report,
    sizes: &Sizes,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
) -> Result<()> {
    let ([n, ci, h, w], co, k) = sizes.conv;
    let x = randn(31, &[n, ci, h, w], Device::Cpu)?;
    let wt = randn(32, &[co, ci, k, k], Device::Cpu)?;
    let bias = randn(33, &[co], Device::Cpu)?;
    let params = Conv2dParams {
        padding: (k / 2, k / 2),
        ..Conv2dParams::default()
    };
    let mut cs = vec![Contender::timed("oxmera", || {
        x.conv2d(&wt, Some(&bias), params).expect("conv2d");
    })];
    let (rx, rw, rb) = (
        x.to_device(Device::Reference)?,
        wt.to_device(Device::Reference)?,
        bias.to_device(Device::Reference)?,
    );
    let flops = 2.0 * (n * co * h * w * ci * k * k) as f64;
    if flops <= 1e7 {
        cs.push(Contender::timed("reference", move || {
            rx.conv2d(&rw, Some(&rb), params).expect("conv2d");
        }));
    }
    for &lib in libs {
        cs.push(python_contender(py, lib, "conv", vec![n, ci, h, w, co, k]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("conv2d_f32_{n}x{ci}x{h}x{w}_k{k}_c{co}"),
        Work::Flops(flops),
        cs,
    )
}

/// A 3-layer ReLU MLP and one batch, for timing SGD steps.
struct Mlp {
    params: Vec<Tensor>,
    x: Tensor,
    targets: Tensor,
}

impl Mlp {
    fn new(
        device: Device,
        (batch, d_in, hidden, classes): (usize, usize, usize, usize),
    ) -> Result<Mlp> {
        let mut g = Generator::new(41);
        let dims = [d_in, hidden, hidden, classes];
        let mut params = Vec::new();
        for w in dims.windows(2) {
            let scale = (2.0 / w[0] as f64).sqrt();
            params.push(
                g.randn([w[0], w[1]], DType::F32, device)?
                    .mul_scalar(scale)?
                    .with_requires_grad(true)?,
            );
            params.push(Tensor::zeros([w[1]], DType::F32, device)?.with_requires_grad(true)?);
        }
        Ok(Mlp {
            params,
            x: g.randn([batch, d_in], DType::F32, device)?,
            targets: g.randint([batch, 1], 0, classes as i64, DType::I64, device)?,
        })
    }

    /// Forward, cross-entropy, backward, and `p -= lr · grad` for every
    /// parameter, done by hand without recording.
    fn step(&mut self, lr: f64) -> Result<()> {
        let p = &self.params;
        let h1 = self.x.matmul(&p[0])?.add(&p[1])?.relu()?;
        let h2 = h1.matmul(&p[2])?.add(&p[3])?.relu()?;
        let z = h2.matmul(&p[4])?.add(&p[5])?;
        let loss = z
            .log_softmax(1)?
            .gather(1, &self.targets)?
            .mean_all()?
            .neg()?;
        loss.backward()?;
        let next = no_grad(|| {
            p.iter()
                .map(|w| {
                    let g = w.grad().ok_or_else(|| {
                        Error::invalid("mlp_step", "grad", "a parameter got no gradient")
                    })?;
                    w.sub(&g.mul_scalar(lr)?)?.with_requires_grad(true)
                })
                .collect::<Result<Vec<_>>>()
        })?;
        self.params = next;
        Ok(())
    }
}

fn mlp(
    report: &mut Report,
    sizes: &Sizes,
    config: &Config,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
) -> Result<()> {
    let shape = sizes.mlp;
    let (batch, d_in, hidden, classes) = shape;
    let mut ox = Mlp::new(Device::Cpu, shape)?;
    let mut cs = vec![Contender::timed("oxmera", move || {
        ox.step(0.01).expect("mlp step");
    })];
    if config.quick {
        let mut rf = Mlp::new(Device::Reference, shape)?;
        cs.push(Contender::timed("reference", move || {
            rf.step(0.01).expect("mlp step");
        }));
    }
    for &lib in libs {
        cs.push(python_contender(
            py,
            lib,
            "mlp",
            vec![batch, d_in, hidden, classes],
        ));
    }
    let mut name = String::new();
    let _ = write!(name, "mlp_step_{d_in}-{hidden}-{hidden}-{classes}_b{batch}");
    measure_and_record(report, sizes.plan, &name, Work::Time, cs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_units_and_ratio_orientation() {
        // 2 GFLOP in 0.5 s is 4 GFLOP/s; a peer at 2 GFLOP/s is 2x slower.
        let f = Work::Flops(2e9);
        assert_eq!(f.figure(0.5), 4.0);
        assert_eq!(f.ratio(4.0, 2.0), 2.0);
        // 10 ms against a peer's 30 ms: oxmera 3x faster.
        let t = Work::Time;
        assert_eq!(t.figure(0.010), 10.0);
        assert_eq!(t.ratio(10.0, 30.0), 3.0);
    }

    /// The quick mode end to end on tiny sizes, without the Python peers
    /// (which depend on the machine): every benchmark produces rows whose
    /// ratio agrees with its two figures, and bench.json holds them.
    #[test]
    fn quick_mode_writes_consistent_rows() {
        let dir = std::env::temp_dir().join(format!("oxmera-bench-test-{}", std::process::id()));
        let config = Config {
            quick: true,
            out: Some(dir.clone()),
            threads: 2,
            python: false,
        };
        let rows = run(&config).unwrap();
        let text = std::fs::read_to_string(dir.join("bench.json")).unwrap();
        let parsed: Vec<Row> = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, rows);
        for prefix in [
            "matmul_f32_16",
            "add_f32_",
            "fused_relu",
            "sum_f32_",
            "softmax_f32_",
            "layer_norm_f32_",
            "conv2d_f32_",
            "mlp_step_",
        ] {
            assert!(
                rows.iter().any(|r| r.name.starts_with(prefix)),
                "no row for {prefix}: {rows:?}"
            );
        }
        for r in &rows {
            assert!(r.oxmera > 0.0 && r.peer_value > 0.0, "{r:?}");
            let want = if r.unit == "ms" {
                r.peer_value / r.oxmera
            } else {
                r.oxmera / r.peer_value
            };
            assert!((r.ratio - want).abs() <= 1e-12 * want, "{r:?}");
        }
        // The reference is a peer in quick mode.
        assert!(rows.iter().any(|r| r.peer == "reference"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
