//! The machine's `f32` multiply-add ceiling, measured: `cargo run
//! --release -p oxmera-cpu --example fma_peak`.
//!
//! Every GEMM figure is best read against what the cores can do at most.
//! That ceiling depends on the processor's vector width *and* on how its
//! units execute it (AMD Zen 4 splits a 512-bit FMA into two 256-bit
//! halves; Zen 5 server parts run it whole), and on the clock, which a
//! virtual machine does not report. So it is measured: each thread runs
//! [`CHAINS`] independent chains of vector FMAs on registers only (more
//! chains than the units' latency × throughput, 4 × 2 on current x86
//! cores, so the units never wait, and few enough that all stay in
//! AVX2's 16 registers), once with 256-bit and once with 512-bit
//! vectors, all threads at once.

#![allow(unsafe_code)]

use std::time::Instant;

/// Vector FMAs per chain per timed call.
const STEPS: usize = 1 << 23;
/// Independent chains per thread.
const CHAINS: usize = 12;

fn main() {
    let threads = oxmera_cpu::num_threads();
    println!("{threads} threads, each {STEPS} steps of {CHAINS} independent FMA chains");
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: the features were detected just above.
            report("AVX2+FMA, 256-bit", 8, threads, || unsafe {
                x86::chains256()
            });
        }
        #[cfg(oxmera_avx512)]
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the feature was detected just above.
            report("AVX-512F, 512-bit", 16, threads, || unsafe {
                x86::chains512()
            });
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    println!("no measurement for this architecture yet");
}

/// Runs `f` on every thread at once, three times, and prints the best
/// total rate.
#[allow(dead_code)]
fn report(label: &str, lanes: usize, threads: usize, f: impl Fn() -> f32 + Sync) {
    let flops = (STEPS * CHAINS * lanes * 2) as f64;
    let mut best = 0.0f64;
    for _ in 0..3 {
        let rates: Vec<f64> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let t = Instant::now();
                        std::hint::black_box(f());
                        flops / t.elapsed().as_secs_f64()
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        best = best.max(rates.iter().sum());
    }
    println!(
        "{label}: {:.1} GFLOP/s on {threads} threads ({:.1} per thread)",
        best / 1e9,
        best / 1e9 / threads as f64
    );
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{CHAINS, STEPS};

    /// Defines `$name`: [`CHAINS`] chains `acc = acc · a + b` of one vector
    /// type, each from its own start (identical chains could be merged by
    /// the compiler), returning a lane of their sum so that the work
    /// cannot be optimized away.
    macro_rules! chains {
        ($(#[$attr:meta])* $name:ident, $feature:literal, $v:ty,
         $set1:ident, $fmadd:ident, $add:ident, $zero:ident, $first:ident) => {
            $(#[$attr])*
            #[target_feature(enable = $feature)]
            pub unsafe fn $name() -> f32 {
                let (a, b) = ($set1(0.999_999), $set1(1e-7));
                let mut acc: [$v; CHAINS] = std::array::from_fn(|i| $set1(i as f32));
                for _ in 0..STEPS {
                    for v in acc.iter_mut() {
                        *v = $fmadd(*v, a, b);
                    }
                }
                $first(acc.iter().fold($zero(), |s, &v| $add(s, v)))
            }
        };
    }

    chains!(
        /// 256-bit chains (AVX2 and FMA).
        chains256, "avx2,fma", __m256,
        _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_setzero_ps, _mm256_cvtss_f32
    );

    chains!(
        /// 512-bit chains (AVX-512F).
        #[cfg(oxmera_avx512)]
        #[allow(clippy::incompatible_msrv)]
        chains512, "avx512f", __m512,
        _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_setzero_ps, _mm512_cvtss_f32
    );
}
