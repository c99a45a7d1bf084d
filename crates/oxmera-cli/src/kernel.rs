//! `oxmera kernel`: list, print, check, run, write as WGSL and explain
//! kernels.
//!
//! `check` exits 0 when the launch is clean, 1 on a finding and 2 on a usage
//! or tool error, so it can gate scripts and CI.

use std::process::ExitCode;

use oxmera_kernel::analysis::{CheckOptions, check};
use oxmera_kernel::emit::wgsl::{WgslOptions, wgsl};
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::limits::ComputeCapability;
use oxmera_kernel::registry::{self, Entry, Origin};
use oxmera_kernel::target::Target;

/// Arguments of `oxmera kernel`.
#[derive(Debug, clap::Args)]
pub struct KernelArgs {
    #[command(subcommand)]
    command: KernelCommand,
}

#[derive(Debug, clap::Subcommand)]
enum KernelCommand {
    /// List the library and corpus kernels.
    List,
    /// Print a kernel's IR.
    Ir {
        /// Kernel name (see `oxmera kernel list`).
        name: String,
    },
    /// Check a kernel for one launch: exit 0 clean, 1 on a finding, 2 on error.
    Check {
        /// Kernel name.
        name: String,
        /// Block size: `64`, `16x16` or `8x8x4`.
        #[arg(long)]
        block: String,
        /// Grid size, same forms as `--block`.
        #[arg(long, default_value = "1")]
        grid: String,
        /// Target compute capability for the shared-memory limit, e.g. `8.6`
        /// (the same as `--target cuda:sm_86`).
        #[arg(long, conflicts_with = "target")]
        cc: Option<String>,
        /// Target: `generic` (warps of 32, 48 KiB shared), `cuda:sm_80`,
        /// `lavapipe` (subgroups of 8), `wave64`, `wave32`, `apple`; append
        /// `/warpN` for another warp width. Verdicts depend on the warp
        /// width. Default: the target the kernel's attribute names, else
        /// generic.
        #[arg(long)]
        target: Option<String>,
    },
    /// Simulate a kernel on seeded inputs and compare with the expected result.
    Run {
        /// Kernel name.
        name: String,
        /// Block size: `64`, `16x16` or `8x8x4`.
        #[arg(long)]
        block: String,
        /// Seed of the inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Target whose warp width the simulation uses (see `check`; the same
        /// default); warps wider than 32 cannot be simulated.
        #[arg(long, conflicts_with = "device")]
        target: Option<String>,
        /// Also run it on a GPU (`wgpu`, `wgpu:N`; a build with `--features
        /// wgpu`), after the analysis passes for that adapter, and compare
        /// the device's output with the simulator's. The simulation then
        /// uses the adapter's warp width.
        #[arg(long)]
        device: Option<String>,
    },
    /// Print a kernel as WGSL (what the wgpu backend compiles) for one
    /// block size and target.
    Wgsl {
        /// Kernel name.
        name: String,
        /// Block size: `64`, `16x16` or `8x8x4`. Default: the first the
        /// kernel declares, else 64.
        #[arg(long)]
        block: Option<String>,
        /// Target whose warp width `lane_id()`, `warp_size()` and the
        /// subgroup operations assume (see `check`; the same default).
        #[arg(long)]
        target: Option<String>,
    },
    /// Explain a rule, e.g. `OXK001`.
    Explain {
        /// The rule's code.
        code: String,
    },
}

fn parse_dim(s: &str) -> Result<Dim3, String> {
    let parts: Result<Vec<u32>, _> = s
        .split(['x', ','])
        .map(|p| p.trim().parse::<u32>())
        .collect();
    match parts
        .map_err(|_| format!("cannot read the size `{s}`; write e.g. 64 or 16x16"))?
        .as_slice()
    {
        [x] => Ok(Dim3::x(*x)),
        [x, y] => Ok(Dim3::new(*x, *y, 1)),
        [x, y, z] => Ok(Dim3::new(*x, *y, *z)),
        _ => Err(format!("a size has 1 to 3 extents, got `{s}`")),
    }
}

fn lookup(name: &str) -> Result<Entry, String> {
    registry::find(name)
        .ok_or_else(|| format!("no kernel named `{name}`; `oxmera kernel list` shows them"))
}

fn usage(msg: String) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// Runs `oxmera kernel`.
pub fn run(args: KernelArgs) -> ExitCode {
    match args.command {
        KernelCommand::List => {
            for e in registry::entries() {
                let tag = if e.origin == Origin::Library {
                    "library"
                } else {
                    "corpus "
                };
                println!("{tag}  {:<28} {}", e.name, e.summary);
            }
            ExitCode::SUCCESS
        }
        KernelCommand::Ir { name } => match lookup(&name) {
            Ok(e) => {
                print!("{}", oxmera_kernel::pretty::print((e.kernel)()));
                ExitCode::SUCCESS
            }
            Err(m) => usage(m),
        },
        KernelCommand::Check {
            name,
            block,
            grid,
            cc,
            target,
        } => {
            let prepared = (|| -> Result<_, String> {
                let e = lookup(&name)?;
                let launch = LaunchConfig {
                    grid: parse_dim(&grid)?,
                    block: parse_dim(&block)?,
                };
                let target = match (cc, target) {
                    (Some(c), _) => Some(Target::cuda(
                        c.parse::<ComputeCapability>().map_err(|e| e.to_string())?,
                    )),
                    (None, Some(t)) => Some(t.parse::<Target>().map_err(|e| e.to_string())?),
                    (None, None) => None,
                };
                Ok((e, launch, target))
            })();
            let (e, launch, target) = match prepared {
                Ok(x) => x,
                Err(m) => return usage(m),
            };
            let k = (e.kernel)();
            let target = target.or(k.launch.target).unwrap_or_default();
            let opts = CheckOptions::new(launch).on(target);
            // Name the target unless it is the default, so output for the
            // default reads as it did before targets existed.
            let on = if target == Target::generic() {
                String::new()
            } else {
                format!(" on target {target} (warps of {})", target.warp_width())
            };
            match check(k, &opts) {
                Err(err) => usage(err.to_string()),
                Ok(findings) if findings.is_empty() => {
                    println!("{}: clean at launch {launch}{on}", k.name);
                    ExitCode::SUCCESS
                }
                Ok(findings) => {
                    for f in &findings {
                        println!("{}", oxmera_kernel::diag::render(k, f));
                    }
                    println!(
                        "{}: {} finding(s) at launch {launch}{on}",
                        k.name,
                        findings.len()
                    );
                    ExitCode::from(1)
                }
            }
        }
        KernelCommand::Run {
            name,
            block,
            seed,
            target,
            device: Some(device),
        } => {
            let _ = target;
            match (lookup(&name), parse_dim(&block)) {
                (Ok(e), Ok(block)) => run_on_device(e, block, seed, &device),
                (Err(m), _) | (_, Err(m)) => usage(m),
            }
        }
        KernelCommand::Run {
            name,
            block,
            seed,
            target,
            device: None,
        } => {
            let prepared = (|| -> Result<_, String> {
                let e = lookup(&name)?;
                let target = match target {
                    Some(t) => t.parse::<Target>().map_err(|e| e.to_string())?,
                    None => (e.kernel)().launch.target.unwrap_or_default(),
                };
                Ok((e, parse_dim(&block)?, target))
            })();
            let (e, block, target) = match prepared {
                Ok(x) => x,
                Err(m) => return usage(m),
            };
            oxmera_kernel_run(e, block, target, seed)
        }
        KernelCommand::Wgsl {
            name,
            block,
            target,
        } => {
            let prepared = (|| -> Result<_, String> {
                let e = lookup(&name)?;
                let k = (e.kernel)();
                let target = match target {
                    Some(t) => t.parse::<Target>().map_err(|e| e.to_string())?,
                    None => k.launch.target.unwrap_or_default(),
                };
                let block = match block {
                    Some(b) => parse_dim(&b)?,
                    None => k.launch.blocks.first().copied().unwrap_or(Dim3::x(64)),
                };
                let opts = WgslOptions::new(block).with_target(target);
                wgsl(k, &opts).map_err(|e| e.to_string())
            })();
            match prepared {
                Ok(w) => {
                    print!("{}", w.source);
                    ExitCode::SUCCESS
                }
                Err(m) => usage(m),
            }
        }
        KernelCommand::Explain { code } => match oxmera_kernel::explain::explain(&code) {
            Some(page) => {
                print!("{page}");
                ExitCode::SUCCESS
            }
            None => usage(format!("no rule `{code}`; the rules are OXK001 to OXK005")),
        },
    }
}

/// `kernel run NAME --device wgpu`: the demo's inputs in the simulator and
/// on the GPU, both outputs, and whether they agree.
fn run_on_device(e: Entry, block: Dim3, seed: u64, device: &str) -> ExitCode {
    let device = match oxmera::tensor::registry::parse_device(device) {
        Ok(d) => d,
        Err(err) => return usage(err.to_string()),
    };
    if e.origin != Origin::Library {
        return usage(format!(
            "`{}` is a corpus kernel, wrong on purpose: run it in the simulator",
            e.name
        ));
    }
    device_run(e, block, seed, device)
}

#[cfg(not(feature = "wgpu"))]
fn device_run(_: Entry, _: Dim3, _: u64, device: oxmera::Device) -> ExitCode {
    usage(format!(
        "{device}: this build has no wgpu support; rebuild with \
         `cargo run --release -p oxmera-cli --features wgpu -- kernel run ...`"
    ))
}

#[cfg(feature = "wgpu")]
fn device_run(e: Entry, block: Dim3, seed: u64, device: oxmera::Device) -> ExitCode {
    use oxmera_kernel::sim::{self, SimOptions};
    let k = (e.kernel)();
    let target = match oxmera_wgpu::target(device) {
        Ok(t) => t,
        Err(err) => return usage(err.to_string()),
    };
    let Some(demo) = oxmera_kernel::library::prepare(e.name, block, seed) else {
        return usage(format!("kernel `{}` has no seeded demo", e.name));
    };
    let mut in_sim = demo.args.clone();
    let opts = SimOptions {
        target,
        ..SimOptions::default()
    };
    if let Err(err) = sim::run(k, demo.launch, &mut in_sim, &opts) {
        return match err {
            sim::SimError::Report(r) => {
                print!("{}", sim::render_report(k, &r));
                ExitCode::from(1)
            }
            other => usage(other.to_string()),
        };
    }
    let mut on_device = demo.args.clone();
    if let Err(err) = oxmera_wgpu::run(device, k, demo.launch, &mut on_device) {
        println!("{}: {err}", k.name);
        return ExitCode::from(1);
    }
    let read = |args: &[sim::Arg]| -> Vec<f64> {
        let b = args[demo.output].buffer().expect("output buffer");
        b.data
            .iter()
            .map(|&w| match b.elem {
                oxmera_kernel::ir::Scalar::F32 => f32::from_bits(w) as f64,
                oxmera_kernel::ir::Scalar::I32 => w as i32 as f64,
                _ => w as f64,
            })
            .collect()
    };
    let (s, g) = (read(&in_sim), read(&on_device));
    let head = |v: &[f64]| {
        v.iter()
            .take(6)
            .map(|x| format!("{x:.6}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("{}: {}", k.name, demo.summary);
    println!(
        "  launch {} on {device} (warps of {})",
        demo.launch,
        target.warp_width()
    );
    println!("  simulator output[..6] = [{}]", head(&s));
    println!("  device    output[..6] = [{}]", head(&g));
    let diff = s
        .iter()
        .zip(&g)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let within = g
        .iter()
        .zip(&demo.expected)
        .zip(&demo.tolerance)
        .all(|((g, w), t)| (g - w).abs() <= *t && !g.is_nan());
    println!(
        "  device vs simulator: max abs difference {diff:.3e} over {} elements",
        g.len()
    );
    if within {
        println!("  the device's output matches the host result");
        ExitCode::SUCCESS
    } else {
        println!("  the device's output DIFFERS from the host result");
        ExitCode::from(1)
    }
}

fn oxmera_kernel_run(e: Entry, block: Dim3, target: Target, seed: u64) -> ExitCode {
    let k = (e.kernel)();
    let outcome = match e.origin {
        Origin::Library => oxmera_kernel::library::demo_on(e.name, block, target, seed),
        Origin::Corpus => oxmera_kernel::corpus::demo_on(e.name, block, target, seed),
    };
    match outcome {
        None => usage(format!("kernel `{}` has no seeded demo", e.name)),
        Some(Err(oxmera_kernel::sim::SimError::Report(r))) => {
            print!("{}", oxmera_kernel::sim::render_report(k, &r));
            ExitCode::from(1)
        }
        Some(Err(err)) => usage(err.to_string()),
        Some(Ok(out)) => {
            println!("{}: {}", k.name, out.summary);
            if target == Target::generic() {
                println!("  launch {}", out.launch);
            } else {
                println!(
                    "  launch {} on target {target} (warps of {})",
                    out.launch,
                    target.warp_width()
                );
            }
            let head: Vec<String> = out.head.iter().map(|v| format!("{v:.6}")).collect();
            println!("  output[..{}] = [{}]", head.len(), head.join(", "));
            println!(
                "  {} lane instructions in {} warp instructions, {} barriers",
                out.stats.lane_instructions, out.stats.warp_instructions, out.stats.barriers
            );
            if out.passed {
                println!(
                    "  matches the host result (max abs error {:.3e})",
                    out.max_abs_err
                );
                ExitCode::SUCCESS
            } else {
                println!(
                    "  DIFFERS from the host result (max abs error {:.3e})",
                    out.max_abs_err
                );
                ExitCode::from(1)
            }
        }
    }
}
