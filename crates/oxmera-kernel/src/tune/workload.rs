//! The problems a configuration is validated and measured on.
//!
//! A tuner compares configurations, so every configuration of one kernel
//! gets the *same* problem (the same inputs, the same sizes); only the
//! launch that covers it changes with the block and the tile. Every size
//! here leaves a ragged tail for every configuration of the kernel's
//! search space (no extent a multiple of 8), because a tail is where a
//! tiled kernel goes wrong without any finding: a guard that covers whole
//! tiles only.

use crate::ir::{Dim3, Kernel, Value};
use crate::launch::LaunchConfig;
use crate::library::{Demo, rng_f32};
use crate::sim::{Arg, Buffer};
use crate::space::Config;

const EPS: f64 = f32::EPSILON as f64;

/// How large a problem: small enough to simulate every configuration, or
/// large enough that a device's launch time is the kernel's and not the
/// driver's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// For the simulator (validation and the cost model).
    Simulate,
    /// For timing on a device.
    Time,
}

/// The problem `config` of kernel `name` runs, with its launch and the
/// host's expected output; `None` when the tuner has no problem for the
/// kernel. Every kernel with a search space in the library has a problem
/// of its own at each scale; any other kernel without specialization
/// constants falls back on its library demo at the configuration's block,
/// the same problem at both scales.
pub fn problem(k: &Kernel, name: &str, config: &Config, scale: Scale, seed: u64) -> Option<Demo> {
    let spec = |n: &str| -> Option<u32> {
        let i = k.specs.iter().position(|s| s.name == n)?;
        u32::try_from(*config.specs.get(i)?).ok()
    };
    let block = config.block;
    Some(match name {
        "flip" | "flip_fixed" => block_sums(block, scale, seed),
        "matmul_tiled" => {
            let (m, kk, n) = match scale {
                Scale::Simulate => (70, 45, 53),
                Scale::Time => (250, 261, 243),
            };
            matmul(block, spec("TILE")?, m, kk, n, seed)
        }
        "stencil3_tiled" => {
            // 65536 - 37: every tile of the space covers it with the same
            // number of wasted slots at the end, and a ragged last block.
            let n = match scale {
                Scale::Simulate => 65_499,
                Scale::Time => 1_048_539,
            };
            crate::library::stencil_workload(block, spec("TILE")?, n, seed)
        }
        // The wgpu backend's matmul (its tile read from the cache): a
        // batch of products with a transposed operand and a broadcast one,
        // as the backend runs them.
        "matmul_strided" => {
            let size = match scale {
                Scale::Simulate => [2, 19, 23, 17],
                Scale::Time => [4, 250, 261, 243],
            };
            crate::library::matmul_strided_workload(block, spec("TILE")?, size, seed)
        }
        // The wgpu backend's reduction (its block read from the cache):
        // strided outputs, each over terms two dims apart; at `Time` 4.2M
        // terms in 1034 chunks of up to 4096.
        "reduce_strided" => {
            let shape = match scale {
                Scale::Simulate => [3, 4, 5],
                Scale::Time => [97, 517, 83],
            };
            crate::library::reduce_strided_workload(block, shape, seed)
        }
        _ if k.specs.is_empty() => crate::library::prepare(name, block, seed)?,
        _ => return None,
    })
}

/// Per-block sums of `n` seeded values, `n` a multiple of no block.
fn block_sums(block: Dim3, scale: Scale, seed: u64) -> Demo {
    let n: u32 = match scale {
        Scale::Simulate => 1_001,
        // A grid of one block per 8 values must stay under the 65535
        // blocks a dimension allows.
        Scale::Time => 400_003,
    };
    let bt = block.count() as u32;
    let grid = n.div_ceil(bt.max(1));
    let x = rng_f32(seed, n as usize);
    let mut expected = vec![0f64; grid as usize];
    let mut abs = vec![0f64; grid as usize];
    for (i, v) in x.iter().enumerate() {
        let b = i / bt.max(1) as usize;
        expected[b] += *v as f64;
        abs[b] += v.abs() as f64;
    }
    let depth = (bt.max(2) as f64).log2() + 2.0;
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(grid),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; grid as usize])),
            Arg::Scalar(Value::U32(n)),
        ],
        output: 1,
        tolerance: abs.iter().map(|a| depth * EPS * a).collect(),
        expected,
        summary: format!("per-block sums of {n} seeded values"),
    }
}

/// `m x k` by `k x n`, covered by `tile x tile` blocks of `c`.
fn matmul(block: Dim3, tile: u32, m: u32, k: u32, n: u32, seed: u64) -> Demo {
    let a = rng_f32(seed, (m * k) as usize);
    let b = rng_f32(seed + 7, (k * n) as usize);
    let mut expected = vec![0f64; (m * n) as usize];
    let mut tolerance = vec![0f64; (m * n) as usize];
    for r in 0..m as usize {
        for c in 0..n as usize {
            let (mut s, mut abs) = (0f64, 0f64);
            for q in 0..k as usize {
                let p = a[r * k as usize + q] as f64 * b[q * n as usize + c] as f64;
                s += p;
                abs += p.abs();
            }
            expected[r * n as usize + c] = s;
            tolerance[r * n as usize + c] = (k as f64 + 1.0) * EPS * abs;
        }
    }
    let tile = tile.max(1);
    Demo {
        launch: LaunchConfig {
            grid: Dim3::new(n.div_ceil(tile), m.div_ceil(tile), 1),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&a)),
            Arg::Buffer(Buffer::from_f32(&b)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; (m * n) as usize])),
            Arg::Scalar(Value::U32(m)),
            Arg::Scalar(Value::U32(n)),
            Arg::Scalar(Value::U32(k)),
        ],
        output: 2,
        expected,
        tolerance,
        summary: format!("matmul {m}x{k} by {k}x{n}"),
    }
}

/// The first element of `args[demo.output]` outside its tolerance (NaN
/// never matches), with what was found there.
pub fn first_mismatch(demo: &Demo, args: &[Arg]) -> Option<(usize, f64, f64)> {
    let out = args.get(demo.output)?.buffer()?;
    let got = out.to_f64().into_iter();
    for (i, ((g, e), t)) in got.zip(&demo.expected).zip(&demo.tolerance).enumerate() {
        if (g - e).abs() > *t || g.is_nan() {
            return Some((i, g, *e));
        }
    }
    (out.len() != demo.expected.len()).then(|| {
        let i = out.len().min(demo.expected.len());
        (
            i,
            f64::NAN,
            demo.expected.get(i).copied().unwrap_or(f64::NAN),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library;
    use crate::target::Target;

    /// Every configuration of the kernels a GPU backend reads from the
    /// tuning cache (wgpu: `matmul_strided`'s tile, `reduce_strided`'s
    /// block), and of the other library kernels with a search space, is
    /// timed on a problem of its own, larger than the simulator's: a tile
    /// chosen on a toy problem is the driver's overhead, not the kernel's.
    #[test]
    fn every_cached_kernel_is_timed_on_a_larger_problem_than_it_is_simulated_on() {
        let kernels: [(&str, &Kernel); 6] = [
            ("matmul_strided", library::matmul_strided()),
            ("reduce_strided", library::reduce_strided()),
            ("matmul_tiled", library::matmul_tiled()),
            ("stencil3_tiled", library::stencil3_tiled()),
            ("flip", library::flip()),
            ("flip_fixed", library::flip_fixed()),
        ];
        for (name, k) in kernels {
            for target in [Target::generic(), Target::lavapipe()] {
                let configs = crate::space::configurations(k, &target);
                assert!(
                    !configs.is_empty() || name == "flip_fixed",
                    "{name}: no configurations"
                );
                for (c, _) in configs {
                    let small = problem(k, name, &c, Scale::Simulate, 1).expect("a problem");
                    let big = problem(k, name, &c, Scale::Time, 1).expect("a problem");
                    assert_ne!(small.summary, big.summary, "{name} at {c:?}");
                    assert!(
                        big.expected.len() > small.expected.len()
                            || big.args.iter().map(arg_words).sum::<usize>()
                                > 10 * small.args.iter().map(arg_words).sum::<usize>(),
                        "{name} at {c:?}: {} vs {}",
                        small.summary,
                        big.summary
                    );
                    assert_eq!(big.launch.block, c.block);
                }
            }
        }
        // The timing problems are the sizes a backend meets: a few hundred
        // per side for the matmul, millions of terms for the reduction.
        let c = |k: &Kernel| {
            crate::space::configurations(k, &Target::generic())[0]
                .0
                .clone()
        };
        let mm = library::matmul_strided();
        let big = problem(mm, "matmul_strided", &c(mm), Scale::Time, 1).unwrap();
        assert_eq!(big.expected.len(), 4 * 250 * 243);
        let r = library::reduce_strided();
        let big = problem(r, "reduce_strided", &c(r), Scale::Time, 1).unwrap();
        assert!(arg_words(&big.args[0]) > 4_000_000, "{}", big.summary);
        // Its chunking (two chunks an output, as at `Time`) is the
        // kernel's: simulated on fewer outputs, every partial matches.
        let mut chunked = library::reduce_strided_workload(Dim3::x(64), [97, 3, 83], 1);
        assert_eq!(chunked.expected.len(), 6);
        let mut args = std::mem::take(&mut chunked.args);
        crate::sim::run(r, chunked.launch, &mut args, &Default::default()).unwrap();
        assert_eq!(first_mismatch(&chunked, &args), None);
    }

    fn arg_words(a: &Arg) -> usize {
        a.buffer().map_or(0, |b| b.len())
    }
}
