//! The tuner: search a kernel's launch space, refuse by proof, validate,
//! measure, and report what was refused.
//!
//! Autotuners search for speed and learn about correctness by crashing or
//! by producing wrong numbers. oxmera can do better, because its analysis
//! can *prove* a configuration unsafe before it runs. So [`tune`] takes
//! every configuration of the kernel's search space for the chosen target
//! ([`crate::space::configurations`]) through four gates, in order:
//!
//! 1. **the kernel's own contract**: a configuration that breaks the
//!    space's `require` (a tile the block does not divide) is refused as
//!    OXK005, at the attribute;
//! 2. **the analysis** (OXK001–005) for the target — its warp width, its
//!    shared memory — at the launch the problem needs; the first finding is
//!    kept whole (code, span, rendering), and nothing refused is launched on
//!    a device;
//! 3. **validation**: each survivor runs in the simulator, then on the
//!    device when there is one, on inputs with ragged tails
//!    ([`workload`]), and its output is compared with the host's; a
//!    configuration that is wrong without any finding (a tail bug) is
//!    refused as a wrong result with the first mismatching index;
//! 4. **measuring**: on the simulator, the cost model ([`Cost`]: warp
//!    instructions issued plus barrier waits — a model, not a time); on a
//!    device, warm-up launches, then repeated timed launches interleaved
//!    across configurations (round robin, so drift favours none), reported
//!    as median and range ([`Timing`]), each round starting one
//!    configuration later.
//!
//! A refused configuration is still costed by the simulator when it can run
//! there (a tile over a GPU's shared-memory budget runs fine in a
//! simulator; a divergent barrier hangs and gets no cost), so the report can
//! say which refused configurations the model thinks would have been
//! faster than the best safe one, and why each is unsafe
//! ([`TuneReport::refused_but_faster`]). That is the point of the report:
//! the speed left on the table, and the proof of why it must stay there.
//!
//! This module knows no GPU API: a device comes in as a [`Device`], which
//! the command line implements with the wgpu backend.

pub mod cache;
mod report;
pub mod workload;

pub use report::render;

use crate::analysis::{CheckOptions, check};
use crate::ir::Kernel;
use crate::launch::LaunchConfig;
use crate::sim::{self, Arg, SimOptions, SimStats};
use crate::space::{self, Config};
use crate::target::Target;
pub use workload::Scale;
use workload::first_mismatch;

/// A device the tuner validates and times on (the simulator needs none).
pub trait Device {
    /// How reports name it, e.g. `wgpu:0 (llvmpipe (LLVM 19.1.7, 256 bits))`.
    fn describe(&self) -> String;
    /// Runs `k` once at `launch`; the writable buffers of `args` come back
    /// with the device's result.
    fn run(
        &mut self,
        k: &'static Kernel,
        launch: LaunchConfig,
        args: &mut [Arg],
    ) -> Result<(), String>;
    /// Runs `k` once at `launch` and returns the seconds the launch took
    /// (arguments already on the device where the backend can keep them).
    fn time(
        &mut self,
        k: &'static Kernel,
        launch: LaunchConfig,
        args: &[Arg],
    ) -> Result<f64, String>;
}

/// What to tune for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TuneOptions {
    /// The target the analysis checks for and the simulator runs.
    pub target: Target,
    /// Seed of the inputs.
    pub seed: u64,
    /// Untimed launches per configuration before timing (a device only).
    pub warmup: usize,
    /// Timed launches per configuration (a device only).
    pub reps: usize,
}

impl TuneOptions {
    /// Tuning for `target` with seed 1, 2 warm-up and 9 timed launches.
    pub fn new(target: Target) -> Self {
        TuneOptions {
            target,
            seed: 1,
            warmup: 2,
            reps: 9,
        }
    }
}

/// Why a kernel cannot be tuned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TuneError {
    /// The kernel declares no search space for the target.
    #[error(
        "`{kernel}` declares no search space for target {target}; add `search(block = [..])` to its #[kernel(..)]"
    )]
    NoSearchSpace {
        /// The kernel.
        kernel: String,
        /// The target.
        target: String,
    },
    /// The tuner has no problem to run the kernel on.
    #[error(
        "the tuner has no problem for `{kernel}` (its inputs are not known): `oxmera kernel space` lists its search space, and `oxmera_kernel::tune::tune_with` tunes it from Rust on inputs of your own"
    )]
    NoProblem {
        /// The kernel.
        kernel: String,
    },
}

/// Which gate refused a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedBy {
    /// The search space's `require`: the configuration does not do the
    /// kernel's work (a tile the block does not cover), so it is not costed.
    Contract,
    /// A finding of the analysis for the target.
    Analysis,
    /// The target cannot launch it at all (a block over its thread limit).
    Launch,
}

/// A configuration refused by proof, before it ran anywhere.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// Which gate.
    pub by: RefusedBy,
    /// The rule's code (`OXK001`…); `None` for a launch the target cannot
    /// run at all (a block over its thread limit).
    pub code: Option<&'static str>,
    /// The finding's headline.
    pub message: String,
    /// Where: `line:column` of the finding's span in the kernel's file.
    pub at: String,
    /// The source text there.
    pub snippet: String,
    /// The finding rendered as `oxmera kernel check` prints it.
    pub rendered: String,
}

/// What the tuner concluded about one configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Passed every gate: proven, validated (and measured).
    Safe,
    /// Refused by the contract or the analysis; never run on a device.
    Refused(Refusal),
    /// Ran without a finding but gave a wrong result.
    Wrong {
        /// `simulator` or `device`.
        on: &'static str,
        /// The first element outside its tolerance.
        index: usize,
        /// What the configuration wrote there.
        got: f64,
        /// What the host computed.
        expected: f64,
    },
    /// The simulator stopped (a hang, a race, an access out of bounds) or
    /// the device failed, without an analysis finding.
    Failed(String),
}

/// The simulator's cost model for one run — counts, not a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Warp instructions issued.
    pub warp_instructions: u64,
    /// Lane slots issued but idle (divergence and partial warps):
    /// `warp_instructions × warp width − active lanes`.
    pub idle_lanes: u64,
    /// Barrier waits: barriers released × warps of the block.
    pub barrier_waits: u64,
}

impl Cost {
    fn of(stats: SimStats, launch: LaunchConfig, target: &Target) -> Cost {
        let width = target.warp_width() as u64;
        let warps = (launch.block.count()).div_ceil(width);
        Cost {
            warp_instructions: stats.warp_instructions,
            idle_lanes: (stats.warp_instructions * width).saturating_sub(stats.lane_instructions),
            barrier_waits: stats.barriers * warps,
        }
    }
    /// The number the model ranks by: warp instructions plus barrier waits
    /// (each waiting warp costs an issue slot).
    pub fn units(&self) -> u64 {
        self.warp_instructions + self.barrier_waits
    }
}

/// Timed launches of one configuration on a device.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Every timed launch, in seconds, in the order taken.
    pub samples: Vec<f64>,
}

impl Timing {
    fn sorted(&self) -> Vec<f64> {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        s
    }
    /// The median launch time in seconds.
    pub fn median(&self) -> f64 {
        let s = self.sorted();
        match s.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }
    /// The fastest and slowest launch.
    pub fn range(&self) -> (f64, f64) {
        let s = self.sorted();
        (
            s.first().copied().unwrap_or(f64::NAN),
            s.last().copied().unwrap_or(f64::NAN),
        )
    }
}

/// One configuration's row of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The configuration.
    pub config: Config,
    /// How reports name it.
    pub label: String,
    /// The launch its problem needed.
    pub launch: LaunchConfig,
    /// The verdict.
    pub verdict: Verdict,
    /// The cost model's counts, where the simulator ran it to the end (for
    /// a refused configuration: an estimate of what it would have cost).
    pub cost: Option<Cost>,
    /// Device timings, for safe configurations on a device.
    pub timing: Option<Timing>,
}

/// What [`tune`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneReport {
    /// The kernel.
    pub kernel: String,
    /// The target it was checked and simulated for.
    pub target: Target,
    /// The device timed on; `None`: the simulator's cost model.
    pub device: Option<String>,
    /// The problem, in words (the simulator's, and the device's larger one).
    pub problem: String,
    /// Every configuration, in enumeration order.
    pub rows: Vec<Row>,
    /// The row of the kernel's default configuration (its constants'
    /// defaults at its contract's first block), when the space holds it:
    /// what a backend runs before any tuning.
    pub default: Option<usize>,
}

impl TuneReport {
    /// The measure a row is ranked by: its median time on a device, its
    /// model cost on the simulator.
    pub fn measure(&self, row: &Row) -> Option<f64> {
        match &self.device {
            Some(_) => row.timing.as_ref().map(Timing::median),
            None => row.cost.map(|c| c.units() as f64),
        }
    }
    /// The index of the best safe row.
    pub fn best(&self) -> Option<usize> {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.verdict == Verdict::Safe)
            .filter_map(|(i, r)| Some((i, self.measure(r)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }
    /// A row's measure over the best safe one's.
    pub fn ratio(&self, row: &Row) -> Option<f64> {
        let best = self.measure(&self.rows[self.best()?])?;
        Some(self.measure(row)? / best)
    }
    /// Refused configurations the cost model says would beat the best safe
    /// one (compared by the model on every device: a refused configuration
    /// is never launched on one), cheapest first.
    pub fn refused_but_faster(&self) -> Vec<&Row> {
        let Some(best) = self.best().and_then(|b| self.rows[b].cost) else {
            return Vec::new();
        };
        let mut v: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Refused(_)))
            .filter(|r| r.cost.is_some_and(|c| c.units() < best.units()))
            .collect();
        v.sort_by_key(|r| r.cost.map(|c| c.units()));
        v
    }
}

/// Tunes `k` (registered as `name`, which picks its problem) for
/// `opts.target`: on the simulator's cost model when `device` is `None`,
/// else timed on the device. See the module docs for the gates.
pub fn tune(
    k: &Kernel,
    name: &str,
    opts: &TuneOptions,
    device: Option<&mut dyn Device>,
) -> Result<TuneReport, TuneError> {
    let seed = opts.seed;
    let problem = |c: &Config, scale: Scale| workload::problem(k, name, c, scale, seed);
    tune_with(k, &problem, opts, device)
}

/// [`tune`] on a problem of one's own: `problem` gives, for a
/// configuration and a [`Scale`], the launch, the arguments and the host's
/// expected output (a [`crate::library::Demo`]) — the same inputs for
/// every configuration, only the launch cut for it, and with ragged
/// tails. How a kernel outside the library is tuned (the ladder's B4).
///
/// ```
/// use oxmera_kernel::ir::{Dim3, Value};
/// use oxmera_kernel::kernel;
/// use oxmera_kernel::launch::LaunchConfig;
/// use oxmera_kernel::library::Demo;
/// use oxmera_kernel::sim::{Arg, Buffer};
/// use oxmera_kernel::target::Target;
/// use oxmera_kernel::tune::{TuneOptions, Verdict, tune_with};
///
/// /// Doubles `x`; its barrier is right only when one warp is the block.
/// #[kernel(search(block = [32, 64]))]
/// fn double(x: &[f32], out: &mut [f32], n: u32) {
///     let i = block_idx_x() * block_dim_x() + thread_idx_x();
///     if warp_id() == 0 {
///         sync_threads();
///     }
///     if i < n {
///         out[i] = 2.0 * x[i];
///     }
/// }
///
/// let n = 100u32;
/// let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
/// let problem = |c: &oxmera_kernel::space::Config, _| {
///     Some(Demo {
///         launch: LaunchConfig { grid: Dim3::x(n.div_ceil(c.block.x)), block: c.block },
///         args: vec![
///             Arg::Buffer(Buffer::from_f32(&x)),
///             Arg::Buffer(Buffer::from_f32(&vec![0.0; n as usize])),
///             Arg::Scalar(Value::U32(n)),
///         ],
///         output: 1,
///         expected: x.iter().map(|v| 2.0 * *v as f64).collect(),
///         tolerance: vec![0.0; n as usize],
///         summary: "doubling".into(),
///     })
/// };
/// let r = tune_with(double(), &problem, &TuneOptions::new(Target::generic()), None).unwrap();
/// assert_eq!(r.rows[0].verdict, Verdict::Safe);
/// assert!(matches!(&r.rows[1].verdict, Verdict::Refused(x) if x.code == Some("OXK001")));
/// ```
pub fn tune_with(
    k: &Kernel,
    problem: &dyn Fn(&Config, Scale) -> Option<crate::library::Demo>,
    opts: &TuneOptions,
    mut device: Option<&mut dyn Device>,
) -> Result<TuneReport, TuneError> {
    let configs = space::configurations(k, &opts.target);
    if configs.is_empty() {
        return Err(TuneError::NoSearchSpace {
            kernel: k.name.clone(),
            target: opts.target.to_string(),
        });
    }
    let device_name = device.as_ref().map(|d| d.describe());
    let mut rows = Vec::new();
    let mut summary = None;
    // Specialized kernels that reached a device, kept for its timing.
    let mut on_device: Vec<(usize, &'static Kernel, crate::library::Demo)> = Vec::new();
    for (config, space_index) in configs {
        let demo = problem(&config, Scale::Simulate).ok_or_else(|| TuneError::NoProblem {
            kernel: k.name.clone(),
        })?;
        summary.get_or_insert_with(|| demo.summary.clone());
        let special = space::specialize(k, &config);
        let mut row = Row {
            label: config.label(k),
            launch: demo.launch,
            verdict: Verdict::Safe,
            cost: None,
            timing: None,
            config,
        };
        row.verdict = match refusal(k, space_index, &special, &row, opts) {
            Some(r) => Verdict::Refused(r),
            None => Verdict::Safe,
        };
        let refused = row.verdict != Verdict::Safe;
        // A configuration refused by the analysis runs in the simulator
        // only, unwatched for races: what it would cost, never whether it is
        // right. One that breaks the contract or cannot launch is not run.
        let costable = match &row.verdict {
            Verdict::Refused(r) => r.by == RefusedBy::Analysis,
            _ => true,
        };
        let sim_opts = SimOptions {
            target: opts.target,
            detect_races: !refused,
            ..SimOptions::default()
        };
        let mut args = demo.args.clone();
        let ran = costable.then(|| sim::run(&special, demo.launch, &mut args, &sim_opts));
        match ran {
            Some(Ok(stats)) => {
                row.cost = Some(Cost::of(stats, demo.launch, &opts.target));
                if !refused {
                    if let Some((index, got, expected)) = first_mismatch(&demo, &args) {
                        row.verdict = Verdict::Wrong {
                            on: "simulator",
                            index,
                            got,
                            expected,
                        };
                    }
                }
            }
            Some(Err(e)) if !refused => {
                row.verdict = Verdict::Failed(simulator_stop(&special, e));
            }
            Some(Err(_)) | None => {}
        }
        if let (Some(dev), Verdict::Safe) = (device.as_deref_mut(), &row.verdict) {
            let big = problem(&row.config, Scale::Time).ok_or_else(|| TuneError::NoProblem {
                kernel: k.name.clone(),
            })?;
            // The device API keys its caches by the kernel's address and
            // needs it for the program's life: one leaked copy per
            // configuration that passed every gate.
            let leaked: &'static Kernel = Box::leak(Box::new(special));
            let mut args = big.args.clone();
            match dev.run(leaked, big.launch, &mut args) {
                Err(e) => row.verdict = Verdict::Failed(format!("the device failed: {e}")),
                Ok(()) => match first_mismatch(&big, &args) {
                    Some((index, got, expected)) => {
                        row.verdict = Verdict::Wrong {
                            on: "device",
                            index,
                            got,
                            expected,
                        };
                    }
                    None => on_device.push((rows.len(), leaked, big)),
                },
            }
        }
        rows.push(row);
    }
    let mut problem_text = summary.unwrap_or_default();
    if let Some((_, _, big)) = on_device.first() {
        problem_text = format!("{problem_text} (simulator); {} (device)", big.summary);
    }
    if let Some(dev) = device {
        measure(dev, &mut rows, &on_device, opts);
    }
    let default = k.launch.blocks.first().and_then(|&block| {
        let d = Config {
            block,
            specs: k.default_specs(),
        };
        rows.iter().position(|r| r.config == d)
    });
    Ok(TuneReport {
        kernel: k.name.clone(),
        target: opts.target,
        device: device_name,
        problem: problem_text,
        rows,
        default,
    })
}

/// Warm-up, then timed launches round robin over the configurations.
fn measure(
    dev: &mut dyn Device,
    rows: &mut [Row],
    on_device: &[(usize, &'static Kernel, crate::library::Demo)],
    opts: &TuneOptions,
) {
    let mut failed = vec![None; on_device.len()];
    for (slot, (_, k, demo)) in on_device.iter().enumerate() {
        for _ in 0..opts.warmup {
            if let Err(e) = dev.time(k, demo.launch, &demo.args) {
                failed[slot].get_or_insert(e);
            }
        }
    }
    let mut samples = vec![Vec::new(); on_device.len()];
    let count = on_device.len().max(1);
    for rep in 0..opts.reps.max(1) {
        // Round robin, each round starting one configuration later, so no
        // configuration always runs first (after an idle pause) or last.
        for turn in 0..on_device.len() {
            let slot = (rep + turn) % count;
            let (_, k, demo) = &on_device[slot];
            if failed[slot].is_some() {
                continue;
            }
            match dev.time(k, demo.launch, &demo.args) {
                Ok(s) => samples[slot].push(s),
                Err(e) => failed[slot] = Some(e),
            }
        }
    }
    for (slot, (index, _, _)) in on_device.iter().enumerate() {
        match failed[slot].take() {
            Some(e) => rows[*index].verdict = Verdict::Failed(format!("the device failed: {e}")),
            None => {
                rows[*index].timing = Some(Timing {
                    samples: std::mem::take(&mut samples[slot]),
                });
            }
        }
    }
}

/// The contract's and the analysis's verdict on one configuration.
fn refusal(
    k: &Kernel,
    space_index: usize,
    special: &Kernel,
    row: &Row,
    opts: &TuneOptions,
) -> Option<Refusal> {
    let where_ = |span: u32| {
        let s = special.span(span);
        (
            format!("{}:{}", s.line, s.column),
            special.snippet(span).to_string(),
        )
    };
    if let Some(unmet) = k
        .launch
        .search
        .get(space_index)
        .and_then(|s| space::unmet(k, s, &row.config))
    {
        let (at, snippet) = where_(0);
        let message = format!("{} {unmet}", row.label);
        return Some(Refusal {
            by: RefusedBy::Contract,
            code: Some(crate::analysis::Rule::LaunchContract.code()),
            rendered: format!("OXK005: the kernel's own contract: {message}"),
            message,
            at,
            snippet,
        });
    }
    let check_opts = CheckOptions::new(row.launch).on(opts.target);
    match check(special, &check_opts) {
        Ok(findings) => findings.first().map(|f| {
            let (at, snippet) = where_(f.span);
            Refusal {
                by: RefusedBy::Analysis,
                code: Some(f.rule.code()),
                message: f.message.clone(),
                at,
                snippet,
                rendered: crate::diag::render(special, f),
            }
        }),
        Err(e) => Some(Refusal {
            by: RefusedBy::Launch,
            code: None,
            message: e.to_string(),
            at: String::new(),
            snippet: String::new(),
            rendered: e.to_string(),
        }),
    }
}

fn simulator_stop(k: &Kernel, e: sim::SimError) -> String {
    match e {
        sim::SimError::Report(r) => format!(
            "the simulator stopped ({}) with no analysis finding:\n{}",
            r.kind_name(),
            sim::render_report(k, &r)
        ),
        other => other.to_string(),
    }
}
