//! Simulator throughput per workload shape: lane instructions per second
//! for the elementwise `add` and `saxpy`, the warp-shuffle `reduce_sum`, a
//! shared-atomic `histogram` (each over 2^20 elements) and a 256³ tiled
//! matmul (shared tiles and barriers), each with its rate as a ratio of
//! `add`'s in the same run (the machine is shared: only ratios compare).
//!
//! Run: `cargo run --release -p oxmera-kernel --example sim_bench`

use std::time::Instant;

use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{self, rng_f32};
use oxmera_kernel::sim::{Arg, Buffer, Program, SimOptions, run_program};

const N: u32 = 1 << 20;

/// `y = a·x + y`: one load more than `add`, and a scalar.
#[kernel]
fn saxpy(x: &[f32], y: &mut [f32], a: f32, n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        y[i] = a * x[i] + y[i];
    }
}

/// A 64-bin histogram of values in [0, 1): shared counts, zeroed and
/// flushed around barriers, global atomics to combine blocks.
#[kernel]
fn histogram(x: &[f32], bins: &mut [u32], n: u32) {
    let counts = shared::<u32>(64);
    let t = thread_idx_x();
    let i = block_idx_x() * block_dim_x() + t;
    if t < 64 {
        counts[t] = 0u32;
    }
    sync_threads();
    if i < n {
        atomic_add(counts, (x[i] * 64.0) as u32 % 64, 1u32);
    }
    sync_threads();
    if t < 64 {
        atomic_add(bins, t, counts[t]);
    }
}

/// Runs one workload and returns its rate in lane instructions per second.
fn measure(
    name: &str,
    prog: &Program,
    launch: LaunchConfig,
    mut args: Vec<Arg>,
    elements: u64,
) -> f64 {
    let elements = elements as f64;
    let opts = SimOptions {
        max_warp_steps: u64::MAX,
        detect_races: true,
        ..SimOptions::default()
    };
    // One warm-up run, then the best of three.
    let mut best = f64::INFINITY;
    let mut stats = run_program(prog, launch, &mut args, &opts).expect("runs");
    for _ in 0..3 {
        let t = Instant::now();
        stats = run_program(prog, launch, &mut args, &opts).expect("runs");
        best = best.min(t.elapsed().as_secs_f64());
    }
    let rate = stats.lane_instructions as f64 / best;
    println!(
        "oxmera-sim {name} {elements} elements, {launch}: {} lane instructions in {:.1} ms = {:.1} M lane-instructions/s = {:.0} elements/s",
        stats.lane_instructions,
        best * 1e3,
        rate / 1e6,
        elements / best
    );
    rate
}

fn main() {
    let x = rng_f32(1, N as usize);
    let y = rng_f32(2, N as usize);
    let add = Program::compile(library::add());
    let add_rate = measure(
        "add",
        &add,
        LaunchConfig::linear(N / 256, 256),
        vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&y)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; N as usize])),
            Arg::Scalar(Value::U32(N)),
        ],
        N as u64,
    );
    let mut rates = Vec::new();
    let reduce = Program::compile(library::reduce_sum());
    rates.push((
        "reduce_sum",
        measure(
            "reduce_sum",
            &reduce,
            LaunchConfig::linear(256, 256),
            vec![
                Arg::Buffer(Buffer::from_f32(&x)),
                Arg::Buffer(Buffer::from_f32(&[0.0; 256])),
                Arg::Scalar(Value::U32(N)),
            ],
            N as u64,
        ),
    ));
    rates.push((
        "saxpy",
        measure(
            "saxpy",
            &Program::compile(saxpy()),
            LaunchConfig::linear(N / 256, 256),
            vec![
                Arg::Buffer(Buffer::from_f32(&x)),
                Arg::Buffer(Buffer::from_f32(&y)),
                Arg::Scalar(Value::F32(2.0)),
                Arg::Scalar(Value::U32(N)),
            ],
            N as u64,
        ),
    ));
    rates.push((
        "histogram",
        measure(
            "histogram",
            &Program::compile(histogram()),
            LaunchConfig::linear(N / 256, 256),
            vec![
                Arg::Buffer(Buffer::from_f32(&x)),
                Arg::Buffer(Buffer::from_u32(&[0; 64])),
                Arg::Scalar(Value::U32(N)),
            ],
            N as u64,
        ),
    ));
    const M: u32 = 256;
    let a = rng_f32(3, (M * M) as usize);
    let b = rng_f32(4, (M * M) as usize);
    rates.push((
        "matmul_tiled",
        measure(
            "matmul_tiled 256³",
            &Program::compile(library::matmul_tiled()),
            LaunchConfig {
                grid: Dim3::new(M / 16, M / 16, 1),
                block: Dim3::new(16, 16, 1),
            },
            vec![
                Arg::Buffer(Buffer::from_f32(&a)),
                Arg::Buffer(Buffer::from_f32(&b)),
                Arg::Buffer(Buffer::from_f32(&vec![0.0; (M * M) as usize])),
                Arg::Scalar(Value::U32(M)),
                Arg::Scalar(Value::U32(M)),
                Arg::Scalar(Value::U32(M)),
            ],
            (M * M) as u64,
        ),
    ));
    for (name, rate) in rates {
        println!(
            "{name}: {:.2}x add's lane-instruction rate",
            rate / add_rate
        );
    }
}
