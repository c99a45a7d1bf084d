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
//! always means oxmera is faster. `--out DIR` writes the machine, the
//! runs and their rows as `DIR/bench.json`.
//!
//! Every report names its machine ([`machine`]): the processor, the
//! kernels chosen, the threads, an `f32` FMA ceiling measured at the start
//! and the copy bandwidth measured alongside the streaming rows, and the
//! time the hypervisor stole during each run. `--runs N` repeats the whole
//! interleaved run and reports each figure's median and range ([`runs`]).
//!
//! With the `wgpu` feature it adds rows for `wgpu:0` against the CPU
//! backend (elementwise add, matmul, an MLP step); on a CPU driver such
//! as lavapipe those say nothing about GPUs, and the table says so. With
//! the `cuda` feature it adds rows for `cuda:0` against the same GPU's
//! copy bandwidth and cuBLAS, measured in the run (`cuda.rs`).
//!
//! It must never know about backend internals (it could not tell a fast
//! path from a slow one, and should not), and nothing in the framework may
//! depend on it.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use oxmera_core::{DType, Device, Error, Result};
use oxmera_nn::Param;
use oxmera_optim::{Optimizer, Sgd, SgdConfig};
use oxmera_tensor::{Generator, Tensor};
use serde::{Deserialize, Serialize};

// The backends register themselves at link time; naming the crates keeps
// them linked.
use oxmera_cpu as _;
use oxmera_reference as _;

mod cnn;
mod conv;
#[cfg(feature = "cuda")]
mod cuda;
#[cfg(feature = "wgpu")]
mod gpu;
pub mod machine;
pub mod measure;
pub mod python;
pub mod runs;
#[cfg(feature = "peers")]
pub mod rust_peers;
mod streams;

use machine::{CpuTimes, Machine};
use measure::{Contender, Plan, interleave};
use python::Python;
use runs::{RunRecord, Summary};

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
    /// The Python interpreter to start (`python3` unless told otherwise).
    pub python_exe: String,
    /// How many times to repeat the whole interleaved run (at least 1).
    pub runs: usize,
    /// The sections to run ([`SECTIONS`]); empty runs them all.
    pub only: Vec<String>,
}

/// The bench's sections, in the order they run: what `--only` selects.
pub const SECTIONS: [&str; 9] = [
    "matmul",
    "streams",
    "softmax",
    "layer_norm",
    "conv",
    "cnn",
    "mlp",
    "wgpu",
    "cuda",
];

impl Config {
    /// Whether `section` (one of [`SECTIONS`]) is to run.
    pub fn runs_section(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }
}

/// Everything one invocation measured: what `bench.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// The machine, and what the run chose on it.
    pub machine: Machine,
    /// `quick` or `full`.
    pub mode: String,
    /// Each run's rows, steal and copy bandwidth, in order.
    pub runs: Vec<RunRecord>,
    /// Each (benchmark, peer) pair over the runs: median and range.
    pub summary: Vec<Summary>,
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
    /// The convolutions, forward and backward.
    conv: Vec<conv::ConvShape>,
    /// Digits used for the CNN epoch (`None`: the whole training part).
    cnn_samples: Option<usize>,
    /// batch, input, hidden, classes.
    mlp: (usize, usize, usize, usize),
    /// The CUDA rows' sizes.
    #[cfg(feature = "cuda")]
    cuda: cuda::CudaSizes,
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
                conv: conv::shapes(true),
                cnn_samples: Some(2 * conv::CNN_BATCH),
                mlp: (8, 20, 16, 10),
                #[cfg(feature = "cuda")]
                cuda: cuda::CudaSizes::of(true),
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
                conv: conv::shapes(false),
                cnn_samples: None,
                mlp: (256, 784, 512, 10),
                #[cfg(feature = "cuda")]
                cuda: cuda::CudaSizes::of(false),
                plan: Plan {
                    rounds: 9,
                    round_seconds: 0.05,
                },
            }
        }
    }
}

/// Runs every benchmark `config.runs` times, prints the tables to stdout
/// as it goes (and the medians over the runs, for more than one), writes
/// `bench.json` when asked, and returns what it measured.
///
/// Errors: an oxmera op failing (a bug, reported as the op's error), or
/// the output directory not being writable ([`Error::InvalidArgument`]).
pub fn run(config: &Config) -> Result<BenchReport> {
    let sizes = Sizes::of(config.quick);
    let machine = Machine::measure(config.threads, config.quick);
    println!(
        "oxmera-bench: {} threads, cpu kernels: {}, {} mode, {} run{}",
        config.threads,
        machine.kernels,
        if config.quick { "quick" } else { "full" },
        config.runs.max(1),
        if config.runs > 1 { "s" } else { "" }
    );
    for line in machine.lines() {
        println!("  {line}");
    }
    let samples = cnn::Samples::digits(sizes.cnn_samples)?;
    // The digits for PyTorch's epoch, in a directory of this process's.
    let scratch = std::env::temp_dir().join(format!("oxmera-bench-{}", std::process::id()));
    let digits_file = samples
        .write(&scratch)
        .map_err(|e| Error::invalid("bench", "digits", format!("{}: {e}", scratch.display())))?;
    let mut notes = Vec::new();
    let py = if config.python {
        match Python::start(&config.python_exe, config.threads, &digits_file) {
            Ok(p) => {
                if p.numpy.is_none() {
                    notes.push(format!(
                        "numpy: skipped ({} cannot import numpy)",
                        config.python_exe
                    ));
                }
                if p.torch.is_none() {
                    notes.push(format!(
                        "torch: skipped ({} cannot import torch)",
                        config.python_exe
                    ));
                }
                Some(p)
            }
            Err(e) => {
                notes.push(format!("numpy, torch: skipped ({e})"));
                None
            }
        }
    } else {
        notes.push("numpy, torch: skipped (python peers turned off)".to_string());
        None
    };
    if !cfg!(feature = "peers") {
        notes.push("gemm, matrixmultiply: skipped (built without the `peers` feature)".into());
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
    let peers = PyPeers {
        process: &py,
        libs: &libs,
    };

    let total = config.runs.max(1);
    let mut records = Vec::new();
    for i in 0..total {
        if total > 1 {
            println!("run {} of {total}", i + 1);
        }
        let mut report = Report::default();
        report.columns();
        for n in &notes {
            report.note(n);
        }
        let (before, load_before) = (CpuTimes::now(), machine::load_average());
        let start = Instant::now();
        one_run(&mut report, &sizes, config, &peers, &samples)?;
        let record = RunRecord {
            seconds: start.elapsed().as_secs_f64(),
            steal: before.zip(CpuTimes::now()).map(|(a, b)| a.steal_since(b)),
            load: load_before.zip(machine::load_average()),
            copy_gbs: runs::copy_bandwidth(&report.rows),
            rows: report.rows,
        };
        println!(
            "  run {} of {total}: {}",
            i + 1,
            record.describe(config.threads)
        );
        records.push(record);
    }
    let all: Vec<Vec<Row>> = records.iter().map(|r| r.rows.clone()).collect();
    let summary = runs::summarize(&all);
    if total > 1 {
        print!("{}", runs::table(&summary, total));
        for (i, r) in records.iter().enumerate() {
            println!("  run {}: {}", i + 1, r.describe(config.threads));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let out = BenchReport {
        machine,
        mode: if config.quick { "quick" } else { "full" }.to_string(),
        runs: records,
        summary,
    };
    if let Some(dir) = &config.out {
        let io =
            |e: std::io::Error| Error::invalid("bench", "out", format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(io)?;
        let json = serde_json::to_string_pretty(&out)
            .map_err(|e| Error::invalid("bench", "out", e.to_string()))?;
        std::fs::write(dir.join("bench.json"), json + "\n").map_err(io)?;
        println!("  wrote {}", dir.join("bench.json").display());
    }
    Ok(out)
}

/// The Python process (if running) and the libraries it imported.
pub(crate) struct PyPeers<'a> {
    process: &'a RefCell<Option<Python>>,
    libs: &'a [&'static str],
}

impl PyPeers<'_> {
    /// Whether `lib` (`numpy`, `torch`) imported.
    fn has(&self, lib: &str) -> bool {
        self.libs.contains(&lib)
    }
}

/// Every benchmark once, into `report`.
fn one_run(
    report: &mut Report,
    sizes: &Sizes,
    config: &Config,
    peers: &PyPeers<'_>,
    samples: &cnn::Samples,
) -> Result<()> {
    let (py, libs) = (peers.process, peers.libs);
    let wants = |section| config.runs_section(section);
    if wants("matmul") {
        for &n in &sizes.matmul {
            matmul(report, sizes, config, py, libs, n)?;
        }
    }
    if wants("streams") {
        streams::streams(report, sizes, config, py, libs)?;
    }
    if wants("softmax") {
        streams::softmax(report, sizes, py, libs)?;
    }
    if wants("layer_norm") {
        streams::layer_norm(report, sizes, py, libs)?;
    }
    if wants("conv") {
        conv::rows(report, sizes, peers)?;
    }
    if wants("cnn") {
        cnn::row(report, sizes, peers, samples)?;
    }
    if wants("mlp") {
        mlp(report, sizes, config, py, libs)?;
    }
    #[cfg(feature = "wgpu")]
    if wants("wgpu") {
        gpu::rows(report, sizes)?;
    }
    #[cfg(not(feature = "wgpu"))]
    if wants("wgpu") {
        report.note("wgpu: skipped (built without the `wgpu` feature)");
    }
    #[cfg(feature = "cuda")]
    if wants("cuda") {
        cuda::rows(report, sizes)?;
    }
    #[cfg(not(feature = "cuda"))]
    if wants("cuda") {
        report.note("cuda: skipped (built without the `cuda` feature)");
    }
    Ok(())
}

/// The table as it is printed, and the rows collected for the JSON.
#[derive(Default)]
struct Report {
    rows: Vec<Row>,
}

impl Report {
    /// The column headings.
    fn columns(&self) {
        println!(
            "{:<36} {:>9} {:>11}  {:<14} {:>11} {:>8}",
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
                        "{label:<36} {:>9} {ox_col:>11}  {peer:<14} {:>11} {ratio:>7.2}x",
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
                    "{label:<36} {:>9} {ox_col:>11}  {peer:<14} skipped: {why}",
                    work.unit()
                ),
            }
            first = false;
        }
        if names.len() == 1 {
            println!("{name:<36} {:>9} {:>11}  (no peer)", work.unit(), fmt(ox));
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

/// The learning rate of the MLP rows' SGD steps (`peers/peer.py` writes
/// the same 0.01 into the NumPy and PyTorch steps).
const MLP_LR: f64 = 0.01;

/// A 3-layer ReLU MLP, its SGD optimizer and one batch, for timing
/// training steps.
///
/// The step is the one a user of the library writes: forward,
/// cross-entropy, backward, then the library's own SGD optimizer
/// (`oxmera_optim::Sgd`, one fused pass per parameter; `oxmera train`
/// uses it too). PyTorch's peer does the same with `torch.optim.SGD`; NumPy,
/// which has no optimizer, updates by hand.
struct Mlp {
    params: Vec<Param>,
    opt: Sgd,
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
            params.push(Param::new(
                g.randn([w[0], w[1]], DType::F32, device)?
                    .mul_scalar(scale)?,
            )?);
            params.push(Param::new(Tensor::zeros([w[1]], DType::F32, device)?)?);
        }
        let named = params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                (
                    format!("{}.{}", i / 2, ["weight", "bias"][i % 2]),
                    p.clone(),
                )
            })
            .collect();
        let config = SgdConfig {
            lr: MLP_LR,
            ..SgdConfig::default()
        };
        Ok(Mlp {
            opt: Sgd::new(named, config)?,
            params,
            x: g.randn([batch, d_in], DType::F32, device)?,
            targets: g.randint([batch, 1], 0, classes as i64, DType::I64, device)?,
        })
    }

    /// Forward, cross-entropy, backward, and the optimizer's step.
    fn step(&mut self) -> Result<()> {
        let p: Vec<Tensor> = self.params.iter().map(Param::tensor).collect();
        let h1 = self.x.matmul(&p[0])?.add(&p[1])?.relu()?;
        let h2 = h1.matmul(&p[2])?.add(&p[3])?.relu()?;
        let z = h2.matmul(&p[4])?.add(&p[5])?;
        let loss = z
            .log_softmax(1)?
            .gather(1, &self.targets)?
            .mean_all()?
            .neg()?;
        self.opt.zero_grad();
        loss.backward()?;
        // The optimizer skips a parameter without a gradient; here that
        // would be a broken backward timed as a faster step.
        if self.params.iter().any(|p| p.grad().is_none()) {
            return Err(Error::invalid(
                "mlp_step",
                "grad",
                "a parameter got no gradient",
            ));
        }
        self.opt.step()
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
    // On the backend's worker, as `oxmera train` runs its steps
    // (`oxmera_cpu::on_pool`; the entry into the pool is in the time).
    let mut cs = vec![Contender::timed("oxmera", move || {
        oxmera_cpu::on_pool(|| ox.step()).expect("mlp step");
    })];
    if config.quick {
        let mut rf = Mlp::new(Device::Reference, shape)?;
        cs.push(Contender::timed("reference", move || {
            rf.step().expect("mlp step");
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

    /// The MLP step refuses to time a step in which a parameter got no
    /// gradient (the optimizer alone would skip that parameter, and a
    /// broken backward would look like a faster step).
    #[test]
    fn mlp_step_refuses_a_parameter_without_a_gradient() {
        let mut mlp = Mlp::new(Device::Cpu, (4, 6, 5, 3)).unwrap();
        mlp.step().unwrap();
        // A bias the backward cannot reach: not trainable, so no gradient.
        mlp.params[5] = Param::buffer(Tensor::zeros([3], DType::F32, Device::Cpu).unwrap());
        let err = mlp.step().unwrap_err();
        assert!(err.to_string().contains("no gradient"), "{err}");
    }

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

    /// `--only conv` runs the convolution rows and nothing else.
    #[test]
    fn only_runs_the_chosen_sections() {
        let config = Config {
            quick: true,
            out: None,
            threads: 1,
            python: false,
            python_exe: "python3".into(),
            runs: 1,
            only: vec!["conv".into()],
        };
        let report = run(&config).unwrap();
        let rows = &report.runs[0].rows;
        assert!(!rows.is_empty());
        for r in rows {
            assert!(r.name.starts_with("conv2d_"), "{} ran", r.name);
        }
        assert!(config.runs_section("conv") && !config.runs_section("matmul"));
    }

    /// The quick mode end to end on tiny sizes, without the Python peers
    /// (which depend on the machine), twice: every benchmark produces rows
    /// whose ratio agrees with its two figures in both runs, the summary
    /// pairs them, and bench.json holds it all.
    #[test]
    fn quick_mode_writes_consistent_rows() {
        let dir = std::env::temp_dir().join(format!("oxmera-bench-test-{}", std::process::id()));
        let config = Config {
            quick: true,
            out: Some(dir.clone()),
            threads: 2,
            python: false,
            python_exe: "python3".into(),
            runs: 2,
            only: Vec::new(),
        };
        let report = run(&config).unwrap();
        let text = std::fs::read_to_string(dir.join("bench.json")).unwrap();
        let parsed: BenchReport = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed, report);
        assert_eq!(report.runs.len(), 2);
        assert_eq!(report.machine.threads, 2);
        assert_eq!(report.machine.kernels, machine::kernels(oxmera_cpu::isa()));
        let rows = &report.runs[0].rows;
        for prefix in [
            "matmul_f32_16",
            "add_f32_",
            "fused_relu",
            "sum_f32_",
            "softmax_f32_",
            "layer_norm_f32_",
            "conv2d_f32_2x1x8x8_k3_c16",
            "conv2d_f32_2x16x4x4_k3_c32",
            "conv2d_f32_2x4x9x9_k3_s2_c8",
            "mlp_step_",
        ] {
            assert!(
                rows.iter().any(|r| r.name.starts_with(prefix)),
                "no row for {prefix}: {rows:?}"
            );
        }
        for r in report.runs.iter().flat_map(|r| &r.rows) {
            assert!(r.oxmera > 0.0 && r.peer_value > 0.0, "{r:?}");
            let want = if r.unit == "ms" {
                r.peer_value / r.oxmera
            } else {
                r.oxmera / r.peer_value
            };
            assert!((r.ratio - want).abs() <= 1e-12 * want, "{r:?}");
        }
        // The reference is a peer in quick mode; memcpy gives the copy
        // bandwidth of each run.
        assert!(rows.iter().any(|r| r.peer == "reference"));
        assert!(report.runs.iter().all(|r| r.copy_gbs.is_some()));
        // Every pair measured in both runs is summarized over both.
        assert_eq!(report.summary.len(), rows.len());
        assert!(report.summary.iter().all(|s| s.runs == 2));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
