//! `oxmera-bench [--quick] [--runs N] [--out DIR] [--threads N] [--no-python] [--python EXE] [--only SECTION,...]`
//!
//! Measures the CPU backend against the reference and its peers and
//! prints the table; see the library docs for what is measured and how.
//! Build with `--features peers` to include the `gemm` and
//! `matrixmultiply` crates, and in release mode for meaningful figures:
//!
//! ```text
//! cargo run --release -p oxmera-bench --features peers -- --out target/bench
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use oxmera_bench::{Config, SECTIONS, run};

const USAGE: &str = "usage: oxmera-bench [--quick] [--runs N] [--out DIR] [--threads N] [--no-python] [--python EXE] [--only SECTION,...]

  --quick       tiny sizes, two rounds: checks the plumbing, not the speed
  --runs N      repeat the whole interleaved run N times (default 1) and
                report each figure's and ratio's median and range
  --out DIR     also write DIR/bench.json
  --threads N   threads for oxmera and every peer (default: RAYON_NUM_THREADS,
                or one per logical CPU)
  --no-python   do not start the NumPy/PyTorch peers
  --python EXE  the Python interpreter for NumPy/PyTorch (default:
                OXMERA_BENCH_PYTHON, or python3 from PATH)
  --only LIST   run only these sections, comma-separated, of: matmul,
                streams (add, fused, sum), softmax, layer_norm, conv, cnn,
                mlp, wgpu, cuda";

fn main() -> ExitCode {
    let mut config = Config {
        quick: false,
        out: None,
        threads: 0,
        python: true,
        python_exe: std::env::var("OXMERA_BENCH_PYTHON").unwrap_or_else(|_| "python3".into()),
        runs: 1,
        only: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => config.quick = true,
            "--no-python" => config.python = false,
            "--out" => match args.next() {
                Some(d) => config.out = Some(PathBuf::from(d)),
                None => return usage("--out needs a directory"),
            },
            "--python" => match args.next() {
                Some(p) => config.python_exe = p,
                None => return usage("--python needs an interpreter"),
            },
            "--runs" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => config.runs = n,
                _ => return usage("--runs needs a positive number"),
            },
            "--threads" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => config.threads = n,
                _ => return usage("--threads needs a positive number"),
            },
            "--only" => match args.next() {
                Some(list) => {
                    for section in list.split(',').filter(|s| !s.is_empty()) {
                        if !SECTIONS.contains(&section) {
                            let known = SECTIONS.join(", ");
                            return usage(&format!("unknown section {section} (known: {known})"));
                        }
                        config.only.push(section.to_string());
                    }
                }
                None => return usage("--only needs a list of sections"),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => return usage(&format!("unknown argument {other}")),
        }
    }
    let explicit = config.threads != 0;
    if !explicit {
        // What rayon's global pool, and so the CPU backend, will use;
        // worked out here because asking rayon would start its threads.
        config.threads = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|n| n.parse().ok())
            .filter(|&n: &usize| n > 0)
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1);
    }
    // Before any thread exists: this sets an environment variable.
    #[cfg(feature = "peers")]
    oxmera_bench::rust_peers::set_matrixmultiply_threads(config.threads);
    if explicit {
        if let Err(e) = oxmera_cpu::set_num_threads(config.threads) {
            eprintln!("oxmera-bench: {e}");
            return ExitCode::FAILURE;
        }
    }
    match run(&config) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("oxmera-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("oxmera-bench: {problem}\n{USAGE}");
    ExitCode::from(2)
}
