//! `oxmera kernel space` and `oxmera kernel tune`: a kernel's search space
//! listed, and searched — on the simulator's cost model (`--device sim`)
//! or timed on a GPU (`--device wgpu` by the host's clock, `--device cuda`
//! by CUDA events).
//!
//! The tuning itself is `oxmera_kernel::tune`; this module picks the
//! target (the device's, else `--target`, else the kernel's), adapts a GPU
//! backend to the tuner's `Device`, and prints the report as text or JSON.

use std::process::ExitCode;

use oxmera_kernel::ir::Kernel;
use oxmera_kernel::space::{self, configurations};
use oxmera_kernel::target::Target;
use oxmera_kernel::tune::{
    self, Refusal, RefusedBy, Row, TuneOptions, TuneReport, Verdict, render,
};

use super::usage;

/// `oxmera kernel space`: the contract, then every configuration of the
/// search space for the target, numbered in the tuner's order.
pub fn space_command(k: &Kernel, target: Target) -> ExitCode {
    let contract: Vec<String> = k.launch.blocks.iter().map(|b| b.to_string()).collect();
    println!(
        "`{}` promises (the contract, proven at compile time): {}",
        k.name,
        if contract.is_empty() {
            "no launch".to_string()
        } else {
            format!("block {}", contract.join(", "))
        }
    );
    let configs = configurations(k, &target);
    if configs.is_empty() {
        println!(
            "no search space for target {target}; add `search(block = [..])` to its #[kernel(..)]"
        );
        return ExitCode::from(1);
    }
    println!(
        "search space for target {target} (warps of {}): {} configurations, checked at tune time",
        target.warp_width(),
        configs.len()
    );
    for (i, (c, space_index)) in configs.iter().enumerate() {
        let shared = k
            .shared_bytes(&c.specs)
            .map_or_else(|| "?".to_string(), |b| b.to_string());
        let unmet = k
            .launch
            .search
            .get(*space_index)
            .and_then(|s| space::unmet(k, s, c))
            .map(|u| format!("  ({u})"))
            .unwrap_or_default();
        println!(
            "  {:>3}  {:<28} shared {shared:>6} bytes{unmet}",
            i + 1,
            c.label(k)
        );
    }
    ExitCode::SUCCESS
}

/// What `oxmera kernel tune` was asked, beside the kernel.
pub struct TuneFlags {
    /// `sim`, `wgpu`, `wgpu:N`, `cuda` or `cuda:N`.
    pub device: String,
    /// `--target` (the simulator only).
    pub target: Option<Target>,
    /// Print JSON.
    pub json: bool,
    /// Timed launches per configuration.
    pub reps: usize,
    /// Warm-up launches per configuration.
    pub warmup: usize,
    /// Seed of the inputs.
    pub seed: u64,
    /// Read and write the per-device cache.
    pub cache: bool,
}

/// The tuner's device for `flags`, its target and its identity (the
/// cache's key; `None` where the backend could not read it, which
/// `cache_identity` has warned about); `k` supplies the simulator's
/// default target.
fn device_for(
    flags: &TuneFlags,
    k: &Kernel,
) -> Result<(Target, Option<Gpu>, Option<String>), String> {
    if flags.device == "sim" {
        let t = flags.target.or(k.launch.target).unwrap_or_default();
        return Ok((t, None, Some(format!("simulator; {t}; cost model"))));
    }
    if flags.target.is_some() {
        return Err("--target is for --device sim; a GPU is tuned for its own target".into());
    }
    let device =
        oxmera::tensor::registry::parse_device(&flags.device).map_err(|e| e.to_string())?;
    // Opening the device first: a build without its backend, or a machine
    // without its driver, is refused here, saying which, before anything
    // is validated or timed. On cuda the target is `Target::cuda(cc)` for
    // the part the driver reports.
    let target = crate::gpus::target(device)?;
    let identity = cache_identity(device, crate::gpus::identity(device), flags.cache);
    Ok((target, Some(Gpu { device }), identity))
}

/// The key a tuning result is cached under: the device's identity, or
/// `None` — with a warning when the cache is on — where it could not be
/// read. Never the ordinal (`cuda:0`): another machine's `cuda:0` is
/// another part, and a tile tuned here could be slow or refused there.
fn cache_identity(
    device: oxmera::Device,
    identity: Result<String, String>,
    cache: bool,
) -> Option<String> {
    match identity {
        Ok(id) => Some(id),
        Err(e) => {
            if cache {
                eprintln!(
                    "warning: {device}'s identity could not be read ({e}); the result will not be cached"
                );
            }
            None
        }
    }
}

/// Tunes one kernel and prints the report; the best safe configuration goes
/// to the cache. Exit 0 when one was found, 1 when none was, 2 on a usage
/// error.
pub fn tune_command(k: &'static Kernel, name: &str, flags: &TuneFlags) -> ExitCode {
    match tune_one(k, name, flags) {
        Ok(report) => {
            if flags.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json(&report)).expect("JSON of plain values")
                );
            } else {
                print!("{}", render(&report));
            }
            if report.best().is_some() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(m) => usage(m),
    }
}

fn tune_one(k: &'static Kernel, name: &str, flags: &TuneFlags) -> Result<TuneReport, String> {
    let (target, mut device, identity) = device_for(flags, k)?;
    let opts = TuneOptions {
        target,
        seed: flags.seed,
        warmup: flags.warmup,
        reps: flags.reps,
    };
    let dev = device.as_mut().map(|d| d as &mut dyn tune::Device);
    let report = tune::tune(k, name, &opts, dev).map_err(|e| e.to_string())?;
    if let (true, Some(identity)) = (flags.cache, identity) {
        remember(k, &report, &identity);
    }
    Ok(report)
}

/// Writes the report's best safe configuration to the cache for
/// `identity`; a corrupt cache is warned about and rewritten, an
/// unwritable one warned about — the tuning result stands either way.
fn remember(k: &Kernel, report: &TuneReport, identity: &str) {
    use oxmera_kernel::tune::cache::{CacheKey, TuneCache, default_path};
    let (Some(path), Some(best)) = (default_path(), report.best()) else {
        return;
    };
    let mut cache = TuneCache::load(&path).unwrap_or_else(|e| {
        eprintln!("warning: {e}; ignoring it and writing a new one");
        TuneCache::default()
    });
    let row = &report.rows[best];
    let measure = match (&row.timing, &row.cost) {
        (Some(t), _) => format!("median {:.6} s", t.median()),
        (None, Some(c)) => format!("{} model units", c.units()),
        _ => String::new(),
    };
    cache.insert(CacheKey::new(identity, k), row.config.clone(), &measure);
    match cache.save(&path) {
        Ok(()) => eprintln!(
            "cached {} for `{}` on {identity} in {}",
            row.label,
            k.name,
            path.display()
        ),
        Err(e) => eprintln!("warning: {e}; the result was not cached"),
    }
}

/// `oxmera kernel tune --all`: every library kernel with a search space for
/// the device's target, one summary line each; the cache filled.
pub fn tune_all(flags: &TuneFlags) -> ExitCode {
    let mut any_failed = false;
    let mut summary = Vec::new();
    for e in oxmera_kernel::library::entries() {
        let k = (e.kernel)();
        if k.launch.search.is_empty() {
            continue;
        }
        match tune_one(k, e.name, flags) {
            Ok(report) => {
                let best = report.best().map_or("no safe configuration".into(), |b| {
                    report.rows[b].label.clone()
                });
                let refused = report
                    .rows
                    .iter()
                    .filter(|r| matches!(r.verdict, Verdict::Refused(_)))
                    .count();
                any_failed |= report.best().is_none();
                if flags.json {
                    summary.push(json(&report));
                } else {
                    println!(
                        "{:<16} best: {best}; {} configurations, {refused} refused by proof",
                        e.name,
                        report.rows.len()
                    );
                }
            }
            Err(m) => {
                any_failed = true;
                eprintln!("{}: {m}", e.name);
            }
        }
    }
    if flags.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("JSON of plain values")
        );
    }
    if any_failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn refusal_json(r: &Refusal) -> serde_json::Value {
    serde_json::json!({
        "by": match r.by {
            RefusedBy::Contract => "contract",
            RefusedBy::Analysis => "analysis",
            RefusedBy::Launch => "launch",
        },
        "code": r.code,
        "message": r.message,
        "at": r.at,
        "snippet": r.snippet,
        "finding": r.rendered,
    })
}

fn row_json(report: &TuneReport, row: &Row) -> serde_json::Value {
    let (verdict, detail) = match &row.verdict {
        Verdict::Safe => ("safe", serde_json::Value::Null),
        Verdict::Refused(r) => ("refused", refusal_json(r)),
        Verdict::Wrong {
            on,
            index,
            got,
            expected,
        } => (
            "wrong result",
            serde_json::json!({"on": on, "index": index, "got": got, "expected": expected}),
        ),
        Verdict::Failed(why) => ("failed", serde_json::json!(why)),
    };
    let b = row.config.block;
    serde_json::json!({
        "configuration": row.label,
        "block": [b.x, b.y, b.z],
        "specs": row.config.specs,
        "launch": {"grid": [row.launch.grid.x, row.launch.grid.y, row.launch.grid.z]},
        "verdict": verdict,
        "detail": detail,
        "cost_model": row.cost.map(|c| serde_json::json!({
            "units": c.units(),
            "warp_instructions": c.warp_instructions,
            "idle_lanes": c.idle_lanes,
            "barrier_waits": c.barrier_waits,
        })),
        "time_s": row.timing.as_ref().map(|t| {
            let (lo, hi) = t.range();
            serde_json::json!({"median": t.median(), "min": lo, "max": hi, "samples": t.samples})
        }),
        "ratio_to_best": if row.verdict == Verdict::Safe { report.ratio(row) } else { None },
    })
}

/// The report as JSON: one object per configuration, the best, and the
/// refused-but-faster list.
pub fn json(report: &TuneReport) -> serde_json::Value {
    serde_json::json!({
        "kernel": report.kernel,
        "target": report.target.to_string(),
        "warp_width": report.target.warp_width(),
        "device": report.device,
        "measure": if report.device.is_some() {
            "median launch time in seconds"
        } else {
            "simulator cost model: warp instructions + barrier waits (a model, not a time)"
        },
        "problem": report.problem,
        "configurations": report.rows.iter().map(|r| row_json(report, r)).collect::<Vec<_>>(),
        "best": report.best().map(|i| report.rows[i].label.clone()),
        "default": report.default.map(|i| report.rows[i].label.clone()),
        "best_over_default": match (report.best(), report.default) {
            (Some(b), Some(d)) => report
                .measure(&report.rows[b])
                .zip(report.measure(&report.rows[d]))
                .map(|(b, d)| b / d),
            _ => None,
        },
        "refused_but_faster": report.refused_but_faster().iter().map(|r| r.label.clone()).collect::<Vec<_>>(),
    })
}

/// A GPU backend as the tuner's device: the launch API of `crate::gpus`.
struct Gpu {
    device: oxmera::Device,
}

impl tune::Device for Gpu {
    fn describe(&self) -> String {
        crate::gpus::describe(self.device)
    }
    fn run(
        &mut self,
        k: &'static Kernel,
        launch: oxmera_kernel::launch::LaunchConfig,
        args: &mut [oxmera_kernel::sim::Arg],
    ) -> Result<(), String> {
        crate::gpus::launch(self.device, k, launch, args)
    }
    fn time(
        &mut self,
        k: &'static Kernel,
        launch: oxmera_kernel::launch::LaunchConfig,
        args: &[oxmera_kernel::sim::Arg],
    ) -> Result<f64, String> {
        crate::gpus::time(self.device, k, launch, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose identity could not be read is tuned but not cached:
    /// no key at all rather than its ordinal.
    #[test]
    fn an_unreadable_identity_caches_nothing() {
        let cuda0 = oxmera::tensor::registry::parse_device("cuda:0").unwrap();
        let failed = Err("no CUDA driver on this machine".to_string());
        assert_eq!(cache_identity(cuda0, failed.clone(), true), None);
        assert_eq!(cache_identity(cuda0, failed, false), None);
        let id = "cuda: NVIDIA H100; sm_90; CUDA 12.4; 550.54".to_string();
        assert_eq!(cache_identity(cuda0, Ok(id.clone()), true), Some(id));
    }
}
