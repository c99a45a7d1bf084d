//! The machine's `f32` multiply-add ceiling, measured.
//!
//! Every GEMM or convolution figure is best read against what the cores
//! can do at most. That ceiling depends on the processor's vector width
//! *and* on how its units execute it (AMD Zen 4 splits a 512-bit FMA into
//! two 256-bit halves; Zen 5 server parts run it whole), and on the clock,
//! which a virtual machine does not report. So it is measured: each
//! thread runs [`CHAINS`] independent chains of vector FMAs on registers
//! only (more chains than the units' latency × throughput, 4 × 2 on
//! current x86 cores, so the units never wait, and few enough that all
//! stay in AVX2's 16 registers), once per vector width this processor and
//! build can run, all threads at once.
//!
//! The `fma_peak` example prints it; `oxmera-bench` measures it at the
//! start of every report. Both call [`fma_peak`].

#![allow(unsafe_code)]

use std::time::Instant;

/// Independent chains per thread.
pub const CHAINS: usize = 12;

/// Vector FMAs per chain per timed call in a full measurement: about
/// 30 ms per call on a 4 GHz core with two 512-bit FMA units.
pub const FULL_STEPS: usize = 1 << 23;

/// One measured ceiling: a vector width, and the best total rate of all
/// threads at once over the tries.
#[derive(Debug, Clone, PartialEq)]
pub struct FmaPeak {
    /// What ran, e.g. `AVX-512F, 512-bit`.
    pub label: &'static str,
    /// Vector width in bits (256 or 512).
    pub bits: usize,
    /// Threads that ran at once.
    pub threads: usize,
    /// The best total rate over the tries, in GFLOP/s (an FMA counts 2).
    pub gflops: f64,
}

impl FmaPeak {
    /// The rate per thread, in GFLOP/s.
    pub fn per_thread(&self) -> f64 {
        self.gflops / self.threads.max(1) as f64
    }
}

/// Measures the `f32` FMA ceiling of every vector width this processor
/// (and this build) can run — 256-bit AVX2+FMA and 512-bit AVX-512F on
/// x86-64 — on `threads` threads at once, each running [`CHAINS`] chains
/// of `steps` FMAs, best of `tries`. Narrowest width first; empty on an
/// architecture without a measurement yet.
pub fn fma_peak(threads: usize, steps: usize, tries: usize) -> Vec<FmaPeak> {
    let threads = threads.max(1);
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: the features were detected just above.
            let f = move || unsafe { x86::chains256(steps) };
            out.push(measure("AVX2+FMA, 256-bit", 256, threads, steps, tries, f));
        }
        #[cfg(oxmera_avx512)]
        if is_x86_feature_detected!("avx512f") {
            // SAFETY: the feature was detected just above.
            let f = move || unsafe { x86::chains512(steps) };
            out.push(measure("AVX-512F, 512-bit", 512, threads, steps, tries, f));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (threads, steps, tries);
    out
}

/// Runs `f` on every thread at once, `tries` times, and keeps the best
/// total rate.
#[allow(dead_code)] // unused on architectures without a measurement
fn measure(
    label: &'static str,
    bits: usize,
    threads: usize,
    steps: usize,
    tries: usize,
    f: impl Fn() -> f32 + Sync,
) -> FmaPeak {
    let lanes = bits / 32;
    let flops = (steps * CHAINS * lanes * 2) as f64;
    let mut best = 0.0f64;
    for _ in 0..tries.max(1) {
        let rates: Vec<f64> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let t = Instant::now();
                        std::hint::black_box(f());
                        flops / t.elapsed().as_secs_f64().max(1e-12)
                    })
                })
                .collect();
            // A thread can only fail by panicking, which these loops
            // cannot; a lost one counts as no work.
            runs.into_iter().map(|r| r.join().unwrap_or(0.0)).collect()
        });
        best = best.max(rates.iter().sum());
    }
    FmaPeak {
        label,
        bits,
        threads,
        gflops: best / 1e9,
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::CHAINS;

    /// Defines `$name(steps)`: [`CHAINS`] chains `acc = acc · a + b` of one
    /// vector type, each from its own start (identical chains could be
    /// merged by the compiler), returning a lane of their sum so that the
    /// work cannot be optimized away.
    macro_rules! chains {
        ($(#[$attr:meta])* $name:ident, $feature:literal, $v:ty,
         $set1:ident, $fmadd:ident, $add:ident, $zero:ident, $first:ident) => {
            $(#[$attr])*
            #[target_feature(enable = $feature)]
            pub unsafe fn $name(steps: usize) -> f32 {
                let (a, b) = ($set1(0.999_999), $set1(1e-7));
                let mut acc: [$v; CHAINS] = std::array::from_fn(|i| $set1(i as f32));
                for _ in 0..steps {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_measurement_reports_positive_rates_narrowest_first() {
        let peaks = fma_peak(2, 1 << 10, 1);
        for p in &peaks {
            assert!(p.gflops > 0.0 && p.gflops.is_finite(), "{p:?}");
            assert_eq!(p.threads, 2);
            assert_eq!(p.per_thread() * 2.0, p.gflops);
        }
        assert!(peaks.windows(2).all(|w| w[0].bits < w[1].bits));
    }
}
