//! The two AVX-512 `f32` GEMM tiles (12 × 32 and 8 × 32, see
//! `oxmera_cpu::gemm::tile`) on the same products, alternating call by
//! call in one process so that the machine's drift lands on both alike:
//! the MLP training step's eight products (784-512-512-10, batch 256:
//! forward, weight and input gradients, with the layouts autograd hands
//! the GEMM), two convolutions' products as the CPU backend takes them
//! for one image (transposed, `outᵀ = colsᵀ · Wᵀ`, the im2col matrix read
//! in place as A, on one thread: each image is its own task) and square
//! products. Medians of `reps` calls each, on the backend's pool as a
//! training step runs. Prints nothing useful without AVX-512.
//!
//! ```text
//! cargo run --release -p oxmera-bench --example gemm_tiles -- [reps] [square sizes...]
//! ```

use std::time::Instant;

use oxmera_cpu::gemm::{MatRef, Tile, avx512_f32_kernel, gemm_with};

/// A product's name, `m`, `n`, `k`, operands, and whether it is split
/// between the pool's threads.
type Product<'a> = (
    String,
    usize,
    usize,
    usize,
    MatRef<'a, f32>,
    MatRef<'a, f32>,
    bool,
);

/// A convolution's im2col matrix (`taps` rows, one per input channel and
/// kernel tap, of `positions` columns) laid out as the CPU backend lays
/// it, and its weights. The row stride mirrors `spread_rows` in
/// `oxmera_cpu::conv` (private there): a row a multiple of 1 KiB long
/// gets one cache line more, so that rows do not share the L1's sets.
struct Conv {
    name: &'static str,
    positions: usize,
    taps: usize,
    c_out: usize,
    stride: usize,
    cols: Vec<f32>,
    weights: Vec<f32>,
}

impl Conv {
    fn new(name: &'static str, positions: usize, taps: usize, c_out: usize) -> Conv {
        let stride = if positions * 4 % 1024 == 0 {
            positions + 16
        } else {
            positions
        };
        Conv {
            name,
            positions,
            taps,
            c_out,
            stride,
            cols: values(taps * stride, 7919),
            weights: values(c_out * taps, 104729),
        }
    }

    /// `outᵀ [positions × c_out] = colsᵀ · Wᵀ`, on one thread.
    fn product(&self) -> Product<'_> {
        let cols = MatRef {
            data: &self.cols,
            offset: 0,
            row_stride: self.stride,
            col_stride: 1,
        };
        (
            self.name.into(),
            self.positions,
            self.c_out,
            self.taps,
            cols.t(),
            MatRef::row_major(&self.weights, self.taps).t(),
            false,
        )
    }
}

fn values(len: usize, seed: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * seed) % 1000) as f32 / 500.0 - 1.0)
        .collect()
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let reps = args.first().copied().unwrap_or(300).max(3);
    let squares = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        vec![128, 512, 1024]
    };
    let (Some(wide), Some(narrow)) = (
        avx512_f32_kernel(Tile::Wide),
        avx512_f32_kernel(Tile::Narrow),
    ) else {
        println!("no AVX-512 here: one tile only");
        return;
    };
    println!(
        "chosen tile on this processor: {}",
        oxmera_cpu::gemm::tile::avx512_f32_tile().name()
    );
    let (x, w1, h1) = (
        values(256 * 784, 7919),
        values(784 * 512, 104729),
        values(256 * 512, 7),
    );
    let (w2, h2, w3) = (
        values(512 * 512, 13),
        values(256 * 512, 17),
        values(512 * 10, 19),
    );
    let (g3, g2, g1) = (
        values(256 * 10, 23),
        values(256 * 512, 29),
        values(256 * 512, 31),
    );
    let rm = MatRef::row_major;
    // The MLP step's products, each split between the pool's threads.
    let mlp = [
        ("x·W1", 256, 512, 784, rm(&x, 784), rm(&w1, 512)),
        ("h1·W2", 256, 512, 512, rm(&h1, 512), rm(&w2, 512)),
        ("h2·W3", 256, 10, 512, rm(&h2, 512), rm(&w3, 10)),
        ("h2ᵀ·g3", 512, 10, 256, rm(&h2, 512).t(), rm(&g3, 10)),
        ("g3·W3ᵀ", 256, 512, 10, rm(&g3, 10), rm(&w3, 10).t()),
        ("h1ᵀ·g2", 512, 512, 256, rm(&h1, 512).t(), rm(&g2, 512)),
        ("g2·W2ᵀ", 256, 512, 512, rm(&g2, 512), rm(&w2, 512).t()),
        ("xᵀ·g1", 784, 512, 256, rm(&x, 784).t(), rm(&g1, 512)),
    ];
    let mut products: Vec<Product<'_>> = mlp
        .into_iter()
        .map(|(name, m, n, k, a, b)| (name.into(), m, n, k, a, b, true))
        .collect();
    // The bench's conv2d rows [8,32,64,64] with 32 3×3 filters and
    // [8,64,56,56] with 64 (padding 1): one image's product each.
    let convs = [
        Conv::new("conv 32", 64 * 64, 32 * 9, 32),
        Conv::new("conv 64", 56 * 56, 64 * 9, 64),
    ];
    products.extend(convs.iter().map(Conv::product));
    let square_data: Vec<(usize, Vec<f32>, Vec<f32>)> = squares
        .iter()
        .map(|&n| (n, values(n * n, 7919), values(n * n, 104729)))
        .collect();
    for (n, a, b) in &square_data {
        products.push((format!("{n}³"), *n, *n, *n, rm(a, *n), rm(b, *n), true));
    }
    oxmera_cpu::on_pool(|| {
        println!(
            "{:<10} {:>16} {:>12} {:>12} {:>8}",
            "product", "m×n×k", "12x32 µs", "8x32 µs", "ratio"
        );
        let mut step = [0.0; 2];
        for (i, (name, m, n, k, a, b, parallel)) in products.iter().enumerate() {
            let mut c = vec![0f32; m * n];
            // Fewer calls for the large squares: about a second each.
            let calls = reps.min((4e9 / (2 * m * n * k) as f64) as usize + 3);
            let mut times = [Vec::new(), Vec::new()];
            for call in 0..=calls {
                for (t, kernel) in [&wide, &narrow].into_iter().enumerate() {
                    let start = Instant::now();
                    gemm_with(kernel, *m, *n, *k, *a, *b, &mut c, *parallel);
                    if call > 0 {
                        times[t].push(start.elapsed().as_secs_f64());
                    }
                }
            }
            let med = times.map(|mut v| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            });
            if i < 8 {
                step[0] += med[0];
                step[1] += med[1];
            }
            let shape = format!("{m}×{n}×{k}");
            println!(
                "{name:<10} {shape:>16} {:>12.1} {:>12.1} {:>7.3}x",
                med[0] * 1e6,
                med[1] * 1e6,
                med[0] / med[1]
            );
            if i == 7 {
                println!(
                    "{:<10} {:>16} {:>12.1} {:>12.1} {:>7.3}x",
                    "MLP step",
                    "eight products",
                    step[0] * 1e6,
                    step[1] * 1e6,
                    step[0] / step[1]
                );
            }
        }
    });
}
