//! Simulator throughput: lane instructions per second for the elementwise
//! `add` kernel and for `reduce_sum`, each over 2^20 elements.
//!
//! Run: `cargo run --release -p oxmera-kernel --example sim_bench`

use std::time::Instant;

use oxmera_kernel::ir::Value;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{self, rng_f32};
use oxmera_kernel::sim::{Arg, Buffer, Program, SimOptions, run_program};

const N: u32 = 1 << 20;

fn measure(name: &str, prog: &Program, launch: LaunchConfig, mut args: Vec<Arg>) {
    let elements = N as f64;
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
    println!(
        "oxmera-sim {name} {} elements, {launch}: {} lane instructions in {:.1} ms = {:.1} M lane-instructions/s = {:.0} elements/s",
        N,
        stats.lane_instructions,
        best * 1e3,
        stats.lane_instructions as f64 / best / 1e6,
        elements / best
    );
}

fn main() {
    let x = rng_f32(1, N as usize);
    let y = rng_f32(2, N as usize);
    let add = Program::compile(library::add());
    measure(
        "add",
        &add,
        LaunchConfig::linear(N / 256, 256),
        vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&y)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; N as usize])),
            Arg::Scalar(Value::U32(N)),
        ],
    );
    let reduce = Program::compile(library::reduce_sum());
    measure(
        "reduce_sum",
        &reduce,
        LaunchConfig::linear(256, 256),
        vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&[0.0; 256])),
            Arg::Scalar(Value::U32(N)),
        ],
    );
}
