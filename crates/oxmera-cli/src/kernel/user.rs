//! `oxmera kernel run FILE.rs NAME --arg ..`: a kernel of your own, on
//! arguments described on the command line ([`super::args`]), in the
//! simulator and optionally on a GPU beside it.
//!
//! The run prints the launch, every argument's first elements, every
//! writable buffer after the run and the simulator's counts; a kernel that
//! misbehaves (a barrier some threads never reach, an out-of-bounds access,
//! a race on shared memory) stops with the simulator's witness instead.
//! `--save out=out.npy` keeps a buffer, `--expect out=out.npy` compares
//! with one, `--trace T` prints thread T's path (each statement it ran and
//! what it wrote), and `--device wgpu` runs the same launch on the GPU and
//! compares each writable buffer with the simulator's.

use std::process::ExitCode;

use oxmera_kernel::ir::{Dim3, Kernel, ParamKind};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, SimOptions};
use oxmera_kernel::target::Target;

use super::args::{arguments, compare, describe, head};
use super::{npy, parse_dim, usage};

/// What `kernel run` was told about a kernel from a file.
pub struct FileRun {
    /// The kernel.
    pub kernel: &'static Kernel,
    /// `--block`, else the first declared.
    pub block: Option<String>,
    /// `--grid`, else 1.
    pub grid: Option<String>,
    /// The `--arg NAME=SPEC` items.
    pub args: Vec<String>,
    /// Seed of random buffers.
    pub seed: u64,
    /// Elements of each buffer to print.
    pub show: usize,
    /// `--save NAME=PATH` items.
    pub save: Vec<String>,
    /// `--expect NAME=PATH` items.
    pub expect: Vec<String>,
    /// Tolerance for f32 comparisons.
    pub tol: f64,
    /// `--trace T`: print the path of thread T (linear over the grid).
    pub trace: Option<u64>,
    /// `--shared-bytes N`: dynamic shared memory per block.
    pub shared_bytes: u64,
}

/// `NAME=PATH` items as (parameter index, path), each naming a buffer.
fn buffer_paths(k: &Kernel, items: &[String], flag: &str) -> Result<Vec<(usize, String)>, String> {
    items
        .iter()
        .map(|item| {
            let (name, path) = item
                .split_once('=')
                .ok_or_else(|| format!("`{flag} {item}`: write NAME=PATH, e.g. out=out.npy"))?;
            match k.param_index(name.trim()) {
                Some(i) if matches!(k.params[i as usize].kind, ParamKind::Buffer { .. }) => {
                    Ok((i as usize, path.trim().to_string()))
                }
                _ => Err(format!(
                    "`{flag} {item}`: `{name}` is not a buffer parameter of `{}`",
                    k.name
                )),
            }
        })
        .collect()
}

/// The launch, arguments and target of the run, or a usage message.
fn prepare(
    run: &FileRun,
    target: Option<Target>,
) -> Result<(LaunchConfig, Vec<Arg>, Target), String> {
    let k = run.kernel;
    let block = match &run.block {
        Some(b) => parse_dim(b)?,
        None => *k.launch.blocks.first().ok_or_else(|| {
            format!(
                "`{}` declares no block size; give one with --block (e.g. --block 64)",
                k.name
            )
        })?,
    };
    let grid = match &run.grid {
        Some(g) => parse_dim(g)?,
        None => Dim3::x(1),
    };
    let target = target.or(k.launch.target).unwrap_or_default();
    Ok((
        LaunchConfig { grid, block },
        arguments(k, &run.args, run.seed)?,
        target,
    ))
}

/// Runs a kernel from a file; see the module docs.
pub fn run_file_kernel(run: FileRun, target: Option<String>, device: Option<String>) -> ExitCode {
    let k = run.kernel;
    let device = match device.map(|d| oxmera::tensor::registry::parse_device(&d)) {
        None => None,
        Some(Ok(d)) => Some(d),
        Some(Err(e)) => return usage(e.to_string()),
    };
    let target = match (&device, target) {
        (Some(d), _) => match device_target(*d) {
            Ok(t) => Some(t),
            Err(m) => return usage(m),
        },
        (None, Some(t)) => match t.parse::<Target>() {
            Ok(t) => Some(t),
            Err(e) => return usage(e.to_string()),
        },
        (None, None) => None,
    };
    let prepared = prepare(&run, target).and_then(|p| {
        let save = buffer_paths(k, &run.save, "--save")?;
        let expect = buffer_paths(k, &run.expect, "--expect")?;
        Ok((p, save, expect))
    });
    let ((launch, inputs, target), save, expect) = match prepared {
        Ok(x) => x,
        Err(m) => return usage(m),
    };
    let on = if target == Target::generic() {
        String::new()
    } else {
        format!(" on target {target} (warps of {})", target.warp_width())
    };
    println!("{} ({}): launch {launch}{on}", k.name, k.source.file);
    for (p, a) in k.params.iter().zip(&inputs) {
        match a {
            Arg::Scalar(v) => println!("  {} = {v}", p.name),
            Arg::Buffer(b) => println!(
                "  {}: {} of {} = {}",
                p.name,
                describe(p.kind),
                b.len(),
                head(b, run.show)
            ),
        }
    }
    let threads = launch.grid.count() * launch.block.count();
    if let Some((p, len)) = k
        .params
        .iter()
        .zip(&inputs)
        .filter_map(|(p, a)| Some((p, a.buffer()?.len() as u64)))
        .filter(|(p, _)| matches!(p.kind, ParamKind::Buffer { writable: true, .. }))
        .max_by_key(|(_, len)| *len)
        .filter(|(_, len)| *len > threads)
    {
        let need = len.div_ceil(launch.block.count().max(1));
        println!(
            "  note: the launch has {threads} threads and `{}` has {len} elements; \
             a kernel with one thread per element needs --grid {need}",
            p.name
        );
    }
    let mut simulated = inputs.clone();
    let opts = SimOptions {
        target,
        dynamic_shared_bytes: run.shared_bytes,
        ..SimOptions::default()
    };
    let outcome = match run.trace {
        None => sim::run(k, launch, &mut simulated, &opts),
        Some(thread) => match sim::trace(k, launch, &mut simulated, &opts, thread) {
            Ok(traced) => {
                print!("{}", sim::render_trace(k, &traced.trace, &traced.result));
                if traced.result.is_err() {
                    // The report is part of the trace's ending.
                    return match traced.result {
                        Err(sim::SimError::Report(_)) => ExitCode::from(1),
                        Err(e) => usage(e.to_string()),
                        Ok(_) => unreachable!("checked"),
                    };
                }
                traced.result
            }
            Err(m) => return usage(m),
        },
    };
    let stats = match outcome {
        Ok(s) => s,
        Err(sim::SimError::Report(r)) => {
            print!("{}", sim::render_report(k, &r));
            return ExitCode::from(1);
        }
        Err(e) => return usage(e.to_string()),
    };
    let writable: Vec<usize> = (0..k.params.len())
        .filter(|&i| matches!(k.params[i].kind, ParamKind::Buffer { writable: true, .. }))
        .collect();
    println!("after the simulated run:");
    for &i in &writable {
        let b = simulated[i].buffer().expect("a buffer parameter");
        println!("  {} = {}", k.params[i].name, head(b, run.show));
    }
    println!(
        "  {} lane instructions in {} warp instructions, {} barriers",
        stats.lane_instructions, stats.warp_instructions, stats.barriers
    );
    let mut failed = false;
    if let Some(d) = device {
        match on_device(d, k, launch, inputs) {
            Err(m) => {
                println!("on {d}: {m}");
                failed = true;
            }
            Ok(gpu) => {
                for &i in &writable {
                    let (g, s) = (gpu[i].buffer(), simulated[i].buffer());
                    let (g, s) = (g.expect("buffer"), s.expect("buffer"));
                    let (bad, worst) = compare(g, s, run.tol);
                    println!("  {} on {d} = {}", k.params[i].name, head(g, run.show));
                    if bad == 0 {
                        println!("    agrees with the simulator (max abs difference {worst:.3e})");
                    } else {
                        println!(
                            "    DIFFERS from the simulator in {bad} of {} elements (max abs difference {worst:.3e})",
                            s.len()
                        );
                        failed = true;
                    }
                }
            }
        }
    }
    for (i, path) in save {
        let b = simulated[i].buffer().expect("a buffer parameter");
        match std::fs::write(&path, npy::encode(b)) {
            Ok(()) => println!("  saved `{}` to {path}", k.params[i].name),
            Err(e) => return usage(format!("cannot write {path}: {e}")),
        }
    }
    for (i, path) in expect {
        let b = simulated[i].buffer().expect("a buffer parameter");
        let want = match std::fs::read(&path) {
            Ok(bytes) => npy::decode(&bytes, b.elem, &path),
            Err(e) => Err(format!("cannot read {path}: {e}")),
        };
        let want = match want {
            Ok(w) => w,
            Err(m) => return usage(m),
        };
        let (bad, worst) = compare(b, &want, run.tol);
        let name = &k.params[i].name;
        if want.len() != b.len() {
            println!(
                "  `{name}` has {} elements and {path} {}: DIFFERENT",
                b.len(),
                want.len()
            );
            failed = true;
        } else if bad == 0 {
            println!("  `{name}` matches {path} (max abs difference {worst:.3e})");
        } else {
            println!(
                "  `{name}` DIFFERS from {path} in {bad} of {} elements (max abs difference {worst:.3e})",
                b.len()
            );
            failed = true;
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn device_target(device: oxmera::Device) -> Result<Target, String> {
    crate::gpus::target(device)
}

fn on_device(
    device: oxmera::Device,
    k: &'static Kernel,
    launch: LaunchConfig,
    mut args: Vec<Arg>,
) -> Result<Vec<Arg>, String> {
    crate::gpus::launch(device, k, launch, &mut args)?;
    Ok(args)
}
