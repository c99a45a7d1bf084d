//! Only the f32 GEMM, without the tensor layer: oxmera's `gemm` against
//! the `gemm` crate on the same buffers, rounds interleaved, medians
//! printed. For tuning the kernel; the full comparison is `oxmera-bench`.
//!
//! ```text
//! cargo run --release -p oxmera-bench --features peers --example gemm_duel -- [N...]
//! ```

use std::time::Instant;

use oxmera_cpu::gemm::{MatRef, gemm};

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1024, 2048]
    } else {
        sizes
    };
    let threads = oxmera_cpu::num_threads();
    for n in sizes {
        let a: Vec<f32> = (0..n * n)
            .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
            .collect();
        let b: Vec<f32> = (0..n * n)
            .map(|i| ((i * 104729) % 1000) as f32 / 500.0 - 1.0)
            .collect();
        let mut c = vec![0.0f32; n * n];
        let rounds = if n >= 2048 { 11 } else { 31 };
        let (mut ours, mut peer, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..=rounds {
            let t = Instant::now();
            gemm(
                oxmera_cpu::isa(),
                n,
                n,
                n,
                MatRef::row_major(&a, n),
                MatRef::row_major(&b, n),
                &mut c,
                true,
            );
            let s = t.elapsed().as_secs_f64();
            let t = Instant::now();
            oxmera_bench::rust_peers::gemm_crate(n, &a, &b, &mut c, threads);
            let p = t.elapsed().as_secs_f64();
            if r > 0 {
                ours.push(s);
                peer.push(p);
                ratios.push(p / s);
            }
        }
        ours.sort_by(f64::total_cmp);
        peer.sort_by(f64::total_cmp);
        ratios.sort_by(f64::total_cmp);
        let flops = 2.0 * (n as f64).powi(3);
        let (o, p) = (
            flops / ours[rounds / 2] / 1e9,
            flops / peer[rounds / 2] / 1e9,
        );
        let best = (flops / ours[0] / 1e9, flops / peer[0] / 1e9);
        println!(
            "n = {n:5}: oxmera {o:6.1} GFLOP/s, gemm crate {p:6.1} GFLOP/s, ratio of medians {:.2}, median ratio {:.2}; best {:.1} vs {:.1}, ratio {:.2} ({threads} threads)",
            o / p,
            ratios[rounds / 2],
            best.0,
            best.1,
            best.0 / best.1
        );
    }
}
