//! `oxmera kernel`: list, print, check, run, write as WGSL or PTX, list
//! and tune the launch space of, and explain kernels — the built-in ones by name, your own from a Rust file
//! ([`source`]).
//!
//! `check` exits 0 when the launch is clean, 1 on a finding and 2 on a usage
//! or tool error, so it can gate scripts and CI.

use std::process::ExitCode;

use oxmera_kernel::analysis::{CheckOptions, check};
use oxmera_kernel::emit::wgsl::{WgslOptions, wgsl};
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::ir::Kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::limits::ComputeCapability;
use oxmera_kernel::registry::{self, Entry, Origin};
use oxmera_kernel::target::Target;

mod args;
mod npy;
mod source;
mod tune;
mod user;

use source::{Failure, Picked};

/// Arguments of `oxmera kernel`.
#[derive(Debug, clap::Args)]
pub struct KernelArgs {
    #[command(subcommand)]
    command: KernelCommand,
}

/// Which kernel a command works on.
#[derive(Debug, clap::Args)]
struct Which {
    /// A built-in kernel's name (see `oxmera kernel list`) or a Rust file
    /// holding `#[kernel]` functions.
    kernel: String,
    /// With a file: the kernel in it (`ir` and `check` take every kernel
    /// without it; `run` and `wgsl` the file's only one).
    name: Option<String>,
    /// The instance of a generic kernel: its dtype, e.g. `f64` (`f32,i32`
    /// for several type parameters); `NAME<f64>` names it too. Without
    /// it `ir` and `check` take every instance, and the other commands
    /// need one.
    #[arg(long, value_name = "DTYPE[,DTYPE..]")]
    dtype: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
enum KernelCommand {
    /// List the library and corpus kernels.
    List,
    /// Print a kernel's IR.
    Ir {
        #[command(flatten)]
        which: Which,
    },
    /// Check a kernel for one launch: exit 0 clean, 1 on a finding, 2 on error.
    Check {
        #[command(flatten)]
        which: Which,
        /// Block size: `64`, `16x16` or `8x8x4`. Default: every block size
        /// the kernel's attribute declares.
        #[arg(long)]
        block: Option<String>,
        /// Grid size, same forms as `--block`. Default: the declared grids
        /// with the declared blocks, else 1.
        #[arg(long)]
        grid: Option<String>,
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
        /// Bytes of dynamic shared memory the launch gives each block
        /// (CUDA's third launch parameter): the length of a
        /// `shared_dynamic::<T>()` array, counted by OXK004 with the static
        /// arrays.
        #[arg(long, default_value_t = 0, value_name = "N")]
        shared_bytes: u64,
    },
    /// Simulate a kernel: a built-in on its seeded demo inputs, compared
    /// with the host's result; a kernel from a file on `--arg` inputs.
    Run {
        #[command(flatten)]
        which: Which,
        /// Block size: `64`, `16x16` or `8x8x4`. Default: the first block
        /// size the kernel declares.
        #[arg(long)]
        block: Option<String>,
        /// Grid size (a file's kernel; a built-in's demo picks its own).
        #[arg(long)]
        grid: Option<String>,
        /// A file's kernel: one argument per parameter, `NAME=SPEC`; a
        /// scalar's SPEC is its value, a buffer's one of `zeros:N`, `ones:N`,
        /// `iota:N`, `rand:N`, `fill:V:N`, `1,2,3` or `x.npy`.
        #[arg(long = "arg", value_name = "NAME=SPEC")]
        args: Vec<String>,
        /// Seed of the inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Elements of each buffer to print (a file's kernel).
        #[arg(long, default_value_t = 8)]
        show: usize,
        /// Save a buffer after the run as `.npy`: `NAME=PATH`.
        #[arg(long, value_name = "NAME=PATH")]
        save: Vec<String>,
        /// Compare a buffer after the run with a saved `.npy`:
        /// `NAME=PATH`; exit 1 where they differ by more than `--tol`.
        #[arg(long, value_name = "NAME=PATH")]
        expect: Vec<String>,
        /// Tolerance of `--expect` and of the device check for f32:
        /// |a - b| <= tol * max(1, |b|). Integers compare exactly.
        #[arg(long, default_value_t = 1e-5)]
        tol: f64,
        /// A file's kernel: print the path of one thread — each statement
        /// it ran, in order, and what it wrote. The thread is its linear
        /// index over the grid (block after block, x fastest).
        #[arg(long, value_name = "THREAD")]
        trace: Option<u64>,
        /// Target whose warp width the simulation uses (see `check`; the same
        /// default); warps wider than 32 cannot be simulated.
        #[arg(long, conflicts_with = "device")]
        target: Option<String>,
        /// Also run it on a GPU (`wgpu`, `wgpu:N`, `cuda`, `cuda:N`; a build
        /// with `--features wgpu` or `cuda`), after the analysis passes for
        /// that adapter or part, and compare
        /// the device's output with the simulator's. The simulation then
        /// uses the adapter's warp width.
        #[arg(long)]
        device: Option<String>,
        /// A file's kernel: bytes of dynamic shared memory each block gets
        /// (the length of its `shared_dynamic::<T>()` array).
        #[arg(long, default_value_t = 0, value_name = "N")]
        shared_bytes: u64,
    },
    /// Print a kernel as WGSL (what the wgpu backend compiles) for one
    /// block size and target.
    Wgsl {
        #[command(flatten)]
        which: Which,
        /// Block size: `64`, `16x16` or `8x8x4`. Default: the first the
        /// kernel declares, else 64.
        #[arg(long)]
        block: Option<String>,
        /// Target whose warp width `lane_id()`, `warp_size()` and the
        /// subgroup operations assume (see `check`; the same default).
        #[arg(long)]
        target: Option<String>,
    },
    /// Print a kernel as PTX (what the CUDA driver compiles) for one block
    /// size and compute capability, after the analysis passes for that
    /// part; `--assemble` also runs NVIDIA's ptxas on it (no GPU needed).
    Ptx {
        #[command(flatten)]
        which: Which,
        /// Block size: `64`, `16x16` or `8x8x4`. Default: the first the
        /// kernel declares, else 64.
        #[arg(long)]
        block: Option<String>,
        /// Compute capability, e.g. `8.0` or `9.0`. Default: the one the
        /// kernel's attribute names, else 8.0.
        #[arg(long)]
        cc: Option<String>,
        /// Assemble it with ptxas (`OXMERA_PTXAS`, else the one on PATH) and
        /// print its report: registers per thread, shared memory, spills.
        #[arg(long)]
        assemble: bool,
        /// Print the PTX even where the analysis finds a bug at this launch
        /// (to read it; the backend's gate would refuse to launch it).
        #[arg(long)]
        no_check: bool,
    },
    /// List a kernel's search space for a target: every configuration the
    /// tuner would try, in its order (the contract is printed first).
    Space {
        #[command(flatten)]
        which: Which,
        /// Target (see `check`); default: the kernel's, else generic.
        #[arg(long)]
        target: Option<String>,
    },
    /// Search a kernel's launch space: refuse by proof (OXK001-005 for the
    /// target), validate on ragged inputs, measure, report. Exit 0 when a
    /// safe configuration was found, 1 when none was.
    Tune {
        /// A built-in kernel's name or a Rust file (not with `--all`).
        kernel: Option<String>,
        /// With a file: the kernel in it.
        name: Option<String>,
        /// Tune every library kernel that declares a search space, filling
        /// the cache for the device.
        #[arg(long, conflicts_with = "kernel")]
        all: bool,
        /// `sim` (the simulator's cost model: counts, not a time), or a GPU:
        /// `wgpu`, `wgpu:N` (a build with `--features wgpu`), `cuda`,
        /// `cuda:N` (a build with `--features cuda` and an NVIDIA driver).
        #[arg(long, default_value = "sim")]
        device: String,
        /// Target for `--device sim` (see `check`); a GPU uses its own.
        #[arg(long)]
        target: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Timed launches per configuration on a GPU.
        #[arg(long, default_value_t = 9)]
        reps: usize,
        /// Untimed warm-up launches per configuration on a GPU.
        #[arg(long, default_value_t = 2)]
        warmup: usize,
        /// Seed of the inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Neither read nor write the per-device tuning cache (as
        /// `OXMERA_TUNE_CACHE=off`).
        #[arg(long)]
        no_cache: bool,
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

fn usage(msg: String) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// The kernels the command names, or the exit code after saying why not.
fn picked(which: &Which, several: bool) -> Result<Picked, ExitCode> {
    source::pick(
        &which.kernel,
        which.name.as_deref(),
        which.dtype.as_deref(),
        several,
    )
    .map_err(|f| match f {
        Failure::Usage(m) => usage(m),
        Failure::Source(rendered) => {
            eprint!("{rendered}");
            ExitCode::from(2)
        }
    })
}

/// `--target`/`--cc` as a target, when given.
fn target_arg(cc: Option<String>, target: Option<String>) -> Result<Option<Target>, String> {
    Ok(match (cc, target) {
        (Some(c), _) => Some(Target::cuda(
            c.parse::<ComputeCapability>().map_err(|e| e.to_string())?,
        )),
        (None, Some(t)) => Some(t.parse::<Target>().map_err(|e| e.to_string())?),
        (None, None) => None,
    })
}

/// The launches `check` runs for `k`: the given block and grid, else what
/// the kernel's attribute declares.
fn launches(
    k: &Kernel,
    block: &Option<String>,
    grid: &Option<String>,
) -> Result<Vec<LaunchConfig>, String> {
    let grids = match grid {
        Some(g) => vec![parse_dim(g)?],
        None if block.is_some() || k.launch.grids.is_empty() => vec![Dim3::x(1)],
        None => k.launch.grids.clone(),
    };
    let blocks = match block {
        Some(b) => vec![parse_dim(b)?],
        None if k.launch.blocks.is_empty() => {
            return Err(format!(
                "`{}` declares no block sizes; give one with --block (e.g. --block 64)",
                k.name
            ));
        }
        None => k.launch.blocks.clone(),
    };
    Ok(blocks
        .iter()
        .flat_map(|&block| grids.iter().map(move |&grid| LaunchConfig { grid, block }))
        .collect())
}

/// `oxmera kernel check`: every named kernel at every launch; exit 1 when
/// any finding, else 2 when a kernel could not be checked, else 0.
fn check_command(
    kernels: &[&Kernel],
    block: Option<String>,
    grid: Option<String>,
    target: Option<Target>,
    shared_bytes: u64,
) -> ExitCode {
    let (mut any, mut unchecked) = (false, false);
    for k in kernels {
        let launches = match launches(k, &block, &grid) {
            Ok(l) => l,
            // The file's other kernels are still checked; the exit says 2.
            Err(m) => {
                eprintln!("error: {m}");
                unchecked = true;
                continue;
            }
        };
        let target = target.or(k.launch.target).unwrap_or_default();
        // Name the target unless it is the default, so output for the
        // default reads as it did before targets existed.
        let on = if target == Target::generic() {
            String::new()
        } else {
            format!(" on target {target} (warps of {})", target.warp_width())
        };
        for launch in launches {
            let opts = CheckOptions::new(launch)
                .on(target)
                .with_dynamic_shared(shared_bytes);
            match check(k, &opts) {
                Err(err) => return usage(format!("{}: {err}", k.name)),
                Ok(findings) if findings.is_empty() => {
                    println!("{}: clean at launch {launch}{on}", k.name);
                }
                Ok(findings) => {
                    any = true;
                    for f in &findings {
                        println!("{}", oxmera_kernel::diag::render(k, f));
                    }
                    let confirmed = findings.iter().filter(|f| f.confirmed).count();
                    let possible = if confirmed == findings.len() {
                        String::new()
                    } else {
                        format!(" ({confirmed} confirmed)")
                    };
                    println!(
                        "{}: {} finding(s){possible} at launch {launch}{on}",
                        k.name,
                        findings.len()
                    );
                }
            }
        }
    }
    match (any, unchecked) {
        (true, _) => ExitCode::from(1),
        (false, true) => ExitCode::from(2),
        (false, false) => ExitCode::SUCCESS,
    }
}

/// `oxmera kernel ptx`: the analysis for the part at the launch, the PTX,
/// and ptxas's report when asked.
fn ptx_command(
    k: &Kernel,
    block: Option<String>,
    cc: Option<String>,
    assemble: bool,
    no_check: bool,
) -> ExitCode {
    use oxmera_kernel::emit::ptx::{PtxOptions, find_ptxas, ptx};
    use oxmera_kernel::target::TargetKind;
    let prepared = (|| -> Result<_, String> {
        let cc = match cc {
            Some(c) => c.parse::<ComputeCapability>().map_err(|e| e.to_string())?,
            None => match k.launch.target.map(|t| t.kind()) {
                Some(TargetKind::Cuda(c)) => c,
                _ => ComputeCapability { major: 8, minor: 0 },
            },
        };
        let block = match block {
            Some(b) => parse_dim(&b)?,
            None => k.launch.blocks.first().copied().unwrap_or(Dim3::x(64)),
        };
        Ok((cc, block))
    })();
    let (cc, block) = match prepared {
        Ok(x) => x,
        Err(m) => return usage(m),
    };
    let launch = LaunchConfig {
        grid: k.launch.grids.first().copied().unwrap_or(Dim3::x(1)),
        block,
    };
    let target = Target::cuda(cc);
    let findings = match check(k, &CheckOptions::new(launch).on(target)) {
        Ok(f) => f,
        Err(err) => return usage(format!("{}: {err}", k.name)),
    };
    if !findings.is_empty() {
        for f in &findings {
            eprintln!("{}", oxmera_kernel::diag::render(k, f));
        }
        if !no_check {
            eprintln!(
                "{}: not written: the analysis for sm_{}{} found {} bug(s) at launch {launch} \
                 (the gate would refuse to launch it; --no-check prints it anyway)",
                k.name,
                cc.major,
                cc.minor,
                findings.len()
            );
            return ExitCode::from(1);
        }
    }
    let module = match ptx(k, &PtxOptions::new(cc, block)) {
        Ok(m) => m,
        Err(e) => return usage(e.to_string()),
    };
    print!("{}", module.source);
    if !assemble {
        return ExitCode::SUCCESS;
    }
    let Some(ptxas) = find_ptxas() else {
        return usage(oxmera_kernel::emit::ptx::PtxasError::Missing.to_string());
    };
    match oxmera_kernel::emit::ptx::assemble(&ptxas, &module) {
        Ok(a) => {
            eprintln!(
                "ptxas ({}) assembled `{}` for sm_{}{}: {} registers per thread, {} bytes of \
                 static shared memory, {} bytes spilled",
                ptxas.display(),
                module.entry_point,
                cc.major,
                cc.minor,
                a.registers.map_or("?".into(), |r| r.to_string()),
                a.shared_bytes.unwrap_or(0),
                a.spill_stores.unwrap_or(0)
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
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
            println!(
                "\nYour own: `oxmera kernel check|ir|run|wgsl FILE.rs [NAME]` reads the \
                 #[kernel] functions of a Rust file."
            );
            ExitCode::SUCCESS
        }
        KernelCommand::Ir { which } => match picked(&which, true) {
            Ok(p) => {
                for k in p.kernels {
                    print!("{}", oxmera_kernel::pretty::print(k));
                }
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        KernelCommand::Check {
            which,
            block,
            grid,
            cc,
            target,
            shared_bytes,
        } => {
            let p = match picked(&which, true) {
                Ok(p) => p,
                Err(code) => return code,
            };
            match target_arg(cc, target) {
                Ok(t) => check_command(&p.kernels, block, grid, t, shared_bytes),
                Err(m) => usage(m),
            }
        }
        KernelCommand::Run {
            which,
            block,
            grid,
            args,
            seed,
            show,
            save,
            expect,
            tol,
            trace,
            target,
            device,
            shared_bytes,
        } => {
            let p = match picked(&which, false) {
                Ok(p) => p,
                Err(code) => return code,
            };
            let k = p.kernels[0];
            let Some(e) = p.entry else {
                let run = user::FileRun {
                    kernel: k,
                    block,
                    grid,
                    args,
                    seed,
                    show,
                    save,
                    expect,
                    tol,
                    trace,
                    shared_bytes,
                };
                return user::run_file_kernel(run, target, device);
            };
            if shared_bytes > 0 {
                return usage(format!(
                    "`{}` is a built-in kernel: its demo seeds its own launch \
                     (--shared-bytes is for a kernel from a FILE.rs)",
                    e.name
                ));
            }
            if grid.is_some()
                || !args.is_empty()
                || !save.is_empty()
                || !expect.is_empty()
                || trace.is_some()
            {
                return usage(format!(
                    "`{}` is a built-in kernel: its demo seeds its own launch and arguments \
                     (--grid, --arg, --save, --expect and --trace are for a kernel from a FILE.rs)",
                    e.name
                ));
            }
            // The first block the kernel declares, as for a file's kernel.
            let block = match block {
                Some(b) => match parse_dim(&b) {
                    Ok(b) => b,
                    Err(m) => return usage(m),
                },
                None => match k.launch.blocks.first() {
                    Some(b) => *b,
                    None => {
                        return usage(format!("give `{}` a block size, e.g. --block 64", e.name));
                    }
                },
            };
            if let Some(device) = device {
                return run_on_device(e, block, seed, &device);
            }
            let target = match target.map(|t| t.parse::<Target>()) {
                Some(Ok(t)) => t,
                Some(Err(err)) => return usage(err.to_string()),
                None => k.launch.target.unwrap_or_default(),
            };
            oxmera_kernel_run(e, block, target, seed)
        }
        KernelCommand::Wgsl {
            which,
            block,
            target,
        } => {
            let p = match picked(&which, false) {
                Ok(p) => p,
                Err(code) => return code,
            };
            let k = p.kernels[0];
            let prepared = (|| -> Result<_, String> {
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
        KernelCommand::Ptx {
            which,
            block,
            cc,
            assemble,
            no_check,
        } => {
            let p = match picked(&which, false) {
                Ok(p) => p,
                Err(code) => return code,
            };
            ptx_command(p.kernels[0], block, cc, assemble, no_check)
        }
        KernelCommand::Space { which, target } => {
            let p = match picked(&which, false) {
                Ok(p) => p,
                Err(code) => return code,
            };
            let k = p.kernels[0];
            match target_arg(None, target) {
                Ok(t) => tune::space_command(k, t.or(k.launch.target).unwrap_or_default()),
                Err(m) => usage(m),
            }
        }
        KernelCommand::Tune {
            kernel,
            name,
            all,
            device,
            target,
            json,
            reps,
            warmup,
            seed,
            no_cache,
        } => {
            let target = match target_arg(None, target) {
                Ok(t) => t,
                Err(m) => return usage(m),
            };
            let options = tune::TuneFlags {
                device,
                target,
                json,
                reps,
                warmup,
                seed,
                cache: !no_cache,
            };
            if all {
                return tune::tune_all(&options);
            }
            let Some(kernel) = kernel else {
                return usage("name a kernel to tune, or give --all".into());
            };
            let p = match picked(
                &Which {
                    kernel,
                    name,
                    dtype: None,
                },
                false,
            ) {
                Ok(p) => p,
                Err(code) => return code,
            };
            let k = p.kernels[0];
            let name = p
                .entry
                .map_or_else(|| k.name.clone(), |e| e.name.to_string());
            tune::tune_command(k, &name, &options)
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

/// `kernel run NAME --device wgpu|cuda`: the demo's inputs in the simulator and
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

fn device_run(e: Entry, block: Dim3, seed: u64, device: oxmera::Device) -> ExitCode {
    use oxmera_kernel::sim::{self, SimOptions};
    let k = (e.kernel)();
    let target = match crate::gpus::target(device) {
        Ok(t) => t,
        Err(err) => return usage(err),
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
    if let Err(err) = crate::gpus::launch(device, k, demo.launch, &mut on_device) {
        println!("{}: {err}", k.name);
        return ExitCode::from(1);
    }
    let read = |args: &[sim::Arg]| -> Vec<f64> {
        let b = args[demo.output].buffer().expect("output buffer");
        b.to_f64()
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
