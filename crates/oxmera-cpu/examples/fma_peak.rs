//! The machine's `f32` multiply-add ceiling, measured: `cargo run
//! --release -p oxmera-cpu --example fma_peak`.
//!
//! A thin wrapper around [`oxmera_cpu::peak::fma_peak`] (whose docs say
//! how it measures), which `oxmera-bench` also calls at the start of
//! every report.

use oxmera_cpu::peak::{CHAINS, FULL_STEPS, fma_peak};

fn main() {
    let threads = oxmera_cpu::num_threads();
    println!("{threads} threads, each {FULL_STEPS} steps of {CHAINS} independent FMA chains");
    let peaks = fma_peak(threads, FULL_STEPS, 3);
    if peaks.is_empty() {
        println!("no measurement for this architecture yet");
    }
    for p in peaks {
        println!(
            "{}: {:.1} GFLOP/s on {} threads ({:.1} per thread)",
            p.label,
            p.gflops,
            p.threads,
            p.per_thread()
        );
    }
}
