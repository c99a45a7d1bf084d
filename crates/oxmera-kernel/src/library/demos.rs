//! Seeded demo runs of the library kernels with host-computed expectations.
//!
//! Tolerances come from a first-order error analysis of each kernel in f32
//! against an f64 host result: elementwise ops are correctly rounded
//! (half an ulp), transcendental ones within a few ulps, and sums of `n`
//! terms within about `n_eff * eps * sum|x|` where `n_eff` is the depth of
//! the summation (tree depth plus the sequential part).

use crate::ir::{Dim3, Value};
use crate::launch::LaunchConfig;
use crate::sim::{self, Arg, Buffer, SimError, SimOptions, SimStats};
use crate::target::Target;

pub(crate) const EPS: f64 = f32::EPSILON as f64;

/// A deterministic stream of f32 values in `[-1, 1)` (splitmix64).
pub fn rng_f32(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

/// A prepared demo: the launch, the arguments, and how to judge the result.
pub struct Demo {
    /// The launch.
    pub launch: LaunchConfig,
    /// Arguments.
    pub args: Vec<Arg>,
    /// Index of the output buffer in `args`.
    pub output: usize,
    /// Expected output.
    pub expected: Vec<f64>,
    /// Allowed absolute error per element.
    pub tolerance: Vec<f64>,
    /// What is computed.
    pub summary: String,
}

/// The result of a demo.
#[derive(Debug, Clone)]
pub struct DemoOutcome {
    /// What was computed.
    pub summary: String,
    /// The launch.
    pub launch: LaunchConfig,
    /// Largest |got - expected|.
    pub max_abs_err: f64,
    /// Whether every element was within its tolerance.
    pub passed: bool,
    /// First few output values.
    pub head: Vec<f32>,
    /// Simulator statistics.
    pub stats: SimStats,
}

fn f32buf(v: &[f32]) -> Arg {
    Arg::Buffer(Buffer::from_f32(v))
}
fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}
fn i(v: i32) -> Arg {
    Arg::Scalar(Value::I32(v))
}

/// Builds the demo of a library kernel for a block size, if it has one.
pub fn prepare(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    let bt = block.count() as u32;
    if let Some(entry) = crate::registry::find(name) {
        let k = (entry.kernel)();
        if !k.type_args.is_empty() {
            return super::generic::demo(k, block, seed);
        }
    }
    Some(match name {
        "halves_to_f32" | "f32_to_halves" => return super::halves::demo(name, block, seed),
        "binary_strided_f64" | "unary_strided_f64" | "compare_packed_f64"
        | "reduce_strided_f64" | "matmul_strided_f64" => {
            return super::wide::demo(name, block, seed);
        }
        "unary_math_strided" | "binary_math_strided" | "logcumsumexp_strided" => {
            return super::math_demo::demo(name, block, seed);
        }
        "stencil3_tiled" => return Some(super::stencil::demo(block, seed)),
        "cast_strided" => return Some(super::cast::demo(block)),
        "scan_strided" => return Some(super::scan::demo(block)),
        "sort_keys" | "bitonic_step" => return super::sort::demo(name, block, seed),
        "scatter_add_f64" | "scan_f64" => return super::wide_accumulate::demo(name, block, seed),
        "unary_math_f64" => super::wide_math_demo::demo(block, seed),
        "binary_math_f64" => super::wide_math_demo::binary_demo(block, seed),
        "logcumsumexp_f64" => super::wide_math_demo::scan_demo(block, seed),
        "softmax_f64" => super::wide_math_demo::softmax_demo(block, seed),
        "moments_f64" | "argbest_f64" => {
            return super::wide_math_demo::walk_demo(name, block, seed);
        }
        "gather_words" | "scatter_words" => return super::moves::demo(name, block),
        "matmul_register_tiled" => return Some(super::register_tiled::demo(block, seed)),
        "add" => {
            let n = 1000u32;
            let a = rng_f32(seed, n as usize);
            let b = rng_f32(seed + 1, n as usize);
            let expected: Vec<f64> = a
                .iter()
                .zip(&b)
                .map(|(x, y)| *x as f64 + *y as f64)
                .collect();
            let tolerance = expected.iter().map(|e| e.abs() * EPS).collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(n.div_ceil(bt)),
                    block,
                },
                args: vec![f32buf(&a), f32buf(&b), f32buf(&vec![0.0; n as usize]), u(n)],
                output: 2,
                expected,
                tolerance,
                summary: format!("add of two seeded vectors of {n}"),
            }
        }
        "flip" | "flip_fixed" | "reduce_sum" => {
            let grid = 4u32;
            let n = if name == "reduce_sum" {
                10_000
            } else {
                grid * bt
            };
            let x = rng_f32(seed, n as usize);
            // Which block sums which element follows the kernel's indexing.
            let stride = if name == "reduce_sum" { grid * bt } else { n };
            let mut expected = vec![0f64; grid as usize];
            let mut abs = vec![0f64; grid as usize];
            for (k, v) in x.iter().enumerate() {
                let b = (k as u32 % stride) / bt;
                expected[b as usize] += *v as f64;
                abs[b as usize] += v.abs() as f64;
            }
            let depth = (n / (grid * bt) + 1) as f64 + (bt as f64).log2() + 2.0;
            let tolerance = abs.iter().map(|a| depth * EPS * a).collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(grid),
                    block,
                },
                args: vec![f32buf(&x), f32buf(&vec![0.0; grid as usize]), u(n)],
                output: 1,
                expected,
                tolerance,
                summary: format!("per-block sums of {n} seeded values over {grid} blocks"),
            }
        }
        "softmax_rows" => {
            let (rows, cols) = (6u32, 100u32);
            let x = rng_f32(seed, (rows * cols) as usize)
                .iter()
                .map(|v| v * 4.0)
                .collect::<Vec<_>>();
            let mut expected = Vec::new();
            for r in 0..rows as usize {
                let row = &x[r * cols as usize..(r + 1) * cols as usize];
                let m = row.iter().fold(f64::NEG_INFINITY, |a, b| a.max(*b as f64));
                let s: f64 = row.iter().map(|v| (*v as f64 - m).exp()).sum();
                expected.extend(row.iter().map(|v| (*v as f64 - m).exp() / s));
            }
            let depth = (cols / bt + 1) as f64 + (bt as f64).log2() + 8.0;
            let tolerance = expected.iter().map(|e| e * depth * EPS + 1e-9).collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(rows),
                    block,
                },
                args: vec![
                    f32buf(&x),
                    f32buf(&vec![0.0; (rows * cols) as usize]),
                    u(cols),
                ],
                output: 1,
                expected,
                tolerance,
                summary: format!("softmax of each row of a {rows}x{cols} matrix"),
            }
        }
        "transpose_tiled" => {
            let (rows, cols) = (37u32, 45u32);
            let x = rng_f32(seed, (rows * cols) as usize);
            let mut expected = vec![0f64; (rows * cols) as usize];
            for r in 0..rows {
                for c in 0..cols {
                    expected[(c * rows + r) as usize] = x[(r * cols + c) as usize] as f64;
                }
            }
            let tolerance = vec![0.0; expected.len()];
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::new(cols.div_ceil(16), rows.div_ceil(16), 1),
                    block,
                },
                args: vec![
                    f32buf(&x),
                    f32buf(&vec![0.0; (rows * cols) as usize]),
                    u(rows),
                    u(cols),
                ],
                output: 1,
                expected,
                tolerance,
                summary: format!("transpose of a {rows}x{cols} matrix"),
            }
        }
        "matmul_tiled" => {
            let (m, k, n) = (33u32, 29u32, 21u32);
            let a = rng_f32(seed, (m * k) as usize);
            let b = rng_f32(seed + 7, (k * n) as usize);
            let mut expected = vec![0f64; (m * n) as usize];
            let mut tolerance = vec![0f64; (m * n) as usize];
            for r in 0..m {
                for c in 0..n {
                    let (mut s, mut abs) = (0f64, 0f64);
                    for q in 0..k {
                        let p = a[(r * k + q) as usize] as f64 * b[(q * n + c) as usize] as f64;
                        s += p;
                        abs += p.abs();
                    }
                    expected[(r * n + c) as usize] = s;
                    tolerance[(r * n + c) as usize] = (k as f64 + 1.0) * EPS * abs;
                }
            }
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::new(n.div_ceil(16), m.div_ceil(16), 1),
                    block,
                },
                args: vec![
                    f32buf(&a),
                    f32buf(&b),
                    f32buf(&vec![0.0; (m * n) as usize]),
                    u(m),
                    u(n),
                    u(k),
                ],
                output: 2,
                expected,
                tolerance,
                summary: format!("matmul {m}x{k} by {k}x{n}"),
            }
        }
        // Two batches of a^T b: `a` is stored [2, k, m] and read
        // transposed; `b` is one [k, n] matrix broadcast over the batch.
        "matmul_strided" => matmul_strided_workload(block, 16, [2, 19, 23, 17], seed),
        "fill_words" => {
            // 37 words of an f64 pattern (low word, high word), odd length.
            let bits = (-1.25f64).to_bits();
            let (even, odd) = (bits as u32, (bits >> 32) as u32);
            let n = 37u32;
            let expected = (0..n)
                .map(|w| if w % 2 == 0 { even as f64 } else { odd as f64 })
                .collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(n.div_ceil(bt)),
                    block,
                },
                args: vec![
                    Arg::Buffer(Buffer::from_u32(&vec![0; n as usize])),
                    u(n),
                    u(even),
                    u(odd),
                ],
                output: 0,
                expected,
                tolerance: vec![0.0; n as usize],
                summary: "37 words of the f64 -1.25".into(),
            }
        }
        "scalar_strided" => {
            // out[4,5] = 2.5 / x viewed transposed from a [5,4] buffer.
            let x: Vec<f32> = rng_f32(seed, 20).iter().map(|v| v + 2.0).collect();
            let mut expected = Vec::new();
            for r in 0..4usize {
                for c in 0..5usize {
                    expected.push(2.5 / x[c * 4 + r] as f64);
                }
            }
            let tolerance = expected.iter().map(|e: &f64| EPS * e.abs()).collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(20u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    f32buf(&x),
                    f32buf(&[0.0; 20]),
                    Arg::Buffer(Buffer::from_u32(&[4, 5])),
                    Arg::Buffer(Buffer::from_i32(&[1, 4])),
                    u(2),
                    u(20),
                    i(0),
                    u(crate::library::scalar_code::DIV),
                    Arg::Scalar(crate::ir::Value::F32(2.5)),
                    Arg::Scalar(crate::ir::Value::Bool(true)),
                ],
                output: 1,
                expected,
                tolerance,
                summary: "2.5 / x over a transposed [5,4] view".into(),
            }
        }
        // Sum of x[3,4,5] over dims 0 and 2: 4 outputs of 15 terms.
        "reduce_strided" => reduce_strided_workload(block, [3, 4, 5], seed),
        "compare_packed" => {
            // a[3,5] > b[5] (broadcast), 15 bools in 4 words, with a NaN.
            let mut a = rng_f32(seed, 15);
            a[4] = f32::NAN;
            let b = rng_f32(seed + 1, 5);
            let bools: Vec<bool> = (0..15).map(|i| a[i] > b[i % 5]).collect();
            let expected = (0..4)
                .map(|w| {
                    (0..4)
                        .filter(|e| w * 4 + e < 15 && bools[w * 4 + e])
                        .map(|e| 1u32 << (8 * e))
                        .sum::<u32>() as f64
                })
                .collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(4u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    f32buf(&a),
                    f32buf(&b),
                    Arg::Buffer(Buffer::from_u32(&[0; 4])),
                    Arg::Buffer(Buffer::from_u32(&[3, 5])),
                    Arg::Buffer(Buffer::from_i32(&[5, 1])),
                    Arg::Buffer(Buffer::from_i32(&[0, 1])),
                    u(2),
                    u(15),
                    i(0),
                    i(0),
                    u(crate::library::compare_code::GT),
                    Arg::Scalar(crate::ir::Value::Bool(false)),
                    Arg::Scalar(crate::ir::Value::F32(0.0)),
                ],
                output: 2,
                expected,
                tolerance: vec![0.0; 4],
                summary: "a[3,5] > b[5] as 15 byte bools, NaN false".into(),
            }
        }
        "bytes_to_f32" => {
            // 10 bytes read through a transposed [2,5] view of a [5,2] buffer.
            let bytes: Vec<u8> = (0..10u8).map(|v| v * 25).collect();
            let words: Vec<u32> = bytes
                .chunks(4)
                .map(|c| {
                    c.iter()
                        .enumerate()
                        .map(|(k, &b)| (b as u32) << (8 * k))
                        .sum()
                })
                .collect();
            let mut expected = Vec::new();
            for r in 0..2usize {
                for c in 0..5usize {
                    expected.push(bytes[c * 2 + r] as f64);
                }
            }
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(10u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    Arg::Buffer(Buffer::from_u32(&words)),
                    f32buf(&[0.0; 10]),
                    Arg::Buffer(Buffer::from_u32(&[2, 5])),
                    Arg::Buffer(Buffer::from_i32(&[1, 2])),
                    u(2),
                    u(10),
                    i(0),
                ],
                output: 1,
                expected,
                tolerance: vec![0.0; 10],
                summary: "bytes of a transposed [5,2] u8 view as f32".into(),
            }
        }
        "softmax_strided" => {
            // log-softmax of x[4,6] along dim 0, read transposed from [6,4].
            let x = rng_f32(seed, 24);
            let mut expected = vec![0f64; 24];
            for c in 0..6usize {
                let col: Vec<f64> = (0..4).map(|r| x[c * 4 + r] as f64).collect();
                let m = col.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let lse = m + col.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
                for r in 0..4usize {
                    expected[r * 6 + c] = col[r] - lse;
                }
            }
            let tolerance = expected
                .iter()
                .map(|e: &f64| 16.0 * EPS * (e.abs() + 1.0))
                .collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(6u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    f32buf(&x),
                    f32buf(&[0.0; 24]),
                    Arg::Buffer(Buffer::from_u32(&[4, 6])),
                    Arg::Buffer(Buffer::from_i32(&[1, 4])),
                    u(2),
                    u(0),
                    u(6),
                    i(0),
                    Arg::Scalar(crate::ir::Value::Bool(true)),
                ],
                output: 1,
                expected,
                tolerance,
                summary: "log-softmax of a transposed [6,4] view along dim 0".into(),
            }
        }
        "gather_strided" => {
            // out[3,2] = x[3,5] gathered along dim 1 (cross-entropy's pick).
            let x = rng_f32(seed, 15);
            let idx = [4i32, 0, 2, 2, 1, 3];
            let expected = (0..6)
                .map(|k| x[(k / 2) * 5 + idx[k] as usize] as f64)
                .collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(6u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    f32buf(&x),
                    Arg::Buffer(Buffer::from_i32(&idx)),
                    f32buf(&[0.0; 6]),
                    Arg::Buffer(Buffer::from_u32(&[3, 2])),
                    Arg::Buffer(Buffer::from_i32(&[5, 1])),
                    Arg::Buffer(Buffer::from_i32(&[2, 1])),
                    u(2),
                    u(6),
                    i(0),
                    i(0),
                    u(1),
                ],
                output: 2,
                expected,
                tolerance: vec![0.0; 6],
                summary: "x[3,5] gathered along dim 1 by a [3,2] index".into(),
            }
        }
        "scatter_add_strided" => {
            // x[2,4] plus src[2,3] at index[2,3] along dim 1, with collisions.
            let x = rng_f32(seed, 8);
            let src = rng_f32(seed + 1, 6);
            let idx = [1i32, 1, 3, 0, 0, 0];
            let mut expected: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            for k in 0..6 {
                expected[(k / 3) * 4 + idx[k] as usize] += src[k] as f64;
            }
            let tolerance = expected
                .iter()
                .map(|e| 4.0 * EPS * (e.abs() + 2.0))
                .collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(8u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    f32buf(&x),
                    Arg::Buffer(Buffer::from_i32(&idx)),
                    f32buf(&src),
                    f32buf(&[0.0; 8]),
                    Arg::Buffer(Buffer::from_u32(&[2, 4])),
                    Arg::Buffer(Buffer::from_u32(&[2, 3])),
                    Arg::Buffer(Buffer::from_i32(&[4, 1])),
                    Arg::Buffer(Buffer::from_i32(&[3, 1])),
                    Arg::Buffer(Buffer::from_i32(&[3, 1])),
                    u(2),
                    u(1),
                    u(8),
                    i(0),
                    i(0),
                    i(0),
                ],
                output: 3,
                expected,
                tolerance,
                summary: "x[2,4] + src[2,3] scattered along dim 1, with collisions".into(),
            }
        }
        "i64_to_i32" => {
            // Five i64 read through a stride of 2 from ten.
            let v: Vec<i64> = (0..10).map(|k| (k - 4) * 1_000_000_007).collect();
            let words: Vec<u32> = v
                .iter()
                .flat_map(|&x| [x as u32, (x >> 32) as u32])
                .collect();
            let expected = (0..5).map(|k| v[2 * k] as i32 as f64).collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(5u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    Arg::Buffer(Buffer::from_u32(&words)),
                    Arg::Buffer(Buffer::from_i32(&[0; 5])),
                    Arg::Buffer(Buffer::from_u32(&[5])),
                    Arg::Buffer(Buffer::from_i32(&[2])),
                    u(1),
                    u(5),
                    i(0),
                ],
                output: 1,
                expected,
                tolerance: vec![0.0; 5],
                summary: "every other of ten i64 as i32 (wrapping)".into(),
            }
        }
        "argbest_strided" => {
            // argmax of x[3,5] along dim 1, a NaN in row 1 and a tie in row 2.
            let mut x = rng_f32(seed, 15);
            x[7] = f32::NAN;
            x[11] = 9.0;
            x[13] = 9.0;
            let mut expected = Vec::new();
            for r in 0..3usize {
                let row = &x[r * 5..r * 5 + 5];
                let best = match row.iter().position(|v| v.is_nan()) {
                    Some(p) => p,
                    None => (0..5).fold(0, |b, j| if row[j] > row[b] { j } else { b }),
                };
                expected.extend([best as f64, 0.0]);
            }
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(3u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    f32buf(&x),
                    Arg::Buffer(Buffer::from_u32(&[0; 6])),
                    Arg::Buffer(Buffer::from_u32(&[3, 5])),
                    Arg::Buffer(Buffer::from_i32(&[5, 1])),
                    Arg::Buffer(Buffer::from_u32(&[0, 1])),
                    u(2),
                    u(3),
                    u(5),
                    i(0),
                    u(0),
                ],
                output: 1,
                expected,
                tolerance: vec![0.0; 6],
                summary: "argmax of three rows: a NaN wins, a tie goes to the first".into(),
            }
        }
        "compare_i64_packed" => {
            // a < b for five i64 pairs around the word boundaries.
            let a: [i64; 5] = [-1, 0, 1 << 32, -(1 << 40), 7];
            let b: [i64; 5] = [0, -1, (1 << 32) - 1, 3, 7];
            let words = |v: &[i64]| -> Vec<u32> {
                v.iter()
                    .flat_map(|&x| [x as u32, (x >> 32) as u32])
                    .collect()
            };
            let bools: Vec<bool> = (0..5).map(|k| a[k] < b[k]).collect();
            let expected = (0..2)
                .map(|w| {
                    (0..4)
                        .filter(|e| w * 4 + e < 5 && bools[w * 4 + e])
                        .map(|e| 1u32 << (8 * e))
                        .sum::<u32>() as f64
                })
                .collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(2u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    Arg::Buffer(Buffer::from_u32(&words(&a))),
                    Arg::Buffer(Buffer::from_u32(&words(&b))),
                    Arg::Buffer(Buffer::from_u32(&[0; 2])),
                    Arg::Buffer(Buffer::from_u32(&[5])),
                    Arg::Buffer(Buffer::from_i32(&[1])),
                    Arg::Buffer(Buffer::from_i32(&[1])),
                    u(1),
                    u(5),
                    i(0),
                    i(0),
                    u(crate::library::compare_code::LT),
                ],
                output: 2,
                expected,
                tolerance: vec![0.0; 2],
                summary: "a < b for five i64 across the word boundary".into(),
            }
        }
        "count_bytes_strided" => {
            // Trues per column of a [3,4] bool, as i64.
            let b: Vec<u8> = (0..12u32)
                .map(|k| ((k * 7 + seed as u32) % 3 == 0) as u8)
                .collect();
            let words: Vec<u32> = b
                .chunks(4)
                .map(|c| {
                    c.iter()
                        .enumerate()
                        .map(|(k, &v)| (v as u32) << (8 * k))
                        .sum()
                })
                .collect();
            let mut expected = Vec::new();
            for c in 0..4usize {
                let n: u32 = (0..3).map(|r| b[r * 4 + c] as u32).sum();
                expected.extend([n as f64, 0.0]);
            }
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(4u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    Arg::Buffer(Buffer::from_u32(&words)),
                    Arg::Buffer(Buffer::from_u32(&[0; 8])),
                    Arg::Buffer(Buffer::from_u32(&[3, 4])),
                    Arg::Buffer(Buffer::from_i32(&[4, 1])),
                    Arg::Buffer(Buffer::from_u32(&[1, 0])),
                    u(2),
                    u(4),
                    u(3),
                    i(0),
                ],
                output: 1,
                expected,
                tolerance: vec![0.0; 8],
                summary: "trues per column of a [3,4] bool, as i64".into(),
            }
        }
        "unary_strided" => {
            // out[3,5,7] = tanh(x viewed through a transposed layout of a [7,5,3] buffer).
            let shape = [3u32, 5, 7];
            let x = rng_f32(seed, 105);
            let strides = [1i32, 3, 15];
            let mut expected = Vec::new();
            for a in 0..3i32 {
                for b in 0..5i32 {
                    for c in 0..7i32 {
                        expected.push(
                            (x[(a * strides[0] + b * strides[1] + c * strides[2]) as usize] as f64)
                                .tanh(),
                        );
                    }
                }
            }
            let tolerance = expected
                .iter()
                .map(|e| 4.0 * EPS * e.abs() + 1e-7)
                .collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(105u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    f32buf(&x),
                    f32buf(&[0.0; 105]),
                    Arg::Buffer(Buffer::from_u32(&shape)),
                    Arg::Buffer(Buffer::from_i32(&strides)),
                    u(3),
                    u(105),
                    i(0),
                    u(2),
                ],
                output: 1,
                expected,
                tolerance,
                summary: "tanh over a transposed [7,5,3] view".into(),
            }
        }
        "binary_strided" => {
            // out[3,5,7] = a[3,1,7] (broadcast over axis 1) * b[5,7] (broadcast over axis 0).
            let a = rng_f32(seed, 21);
            let b = rng_f32(seed + 3, 35);
            let (sa, sb) = ([7i32, 0, 1], [0i32, 7, 1]);
            let mut expected = Vec::new();
            for x in 0..3i32 {
                for y in 0..5i32 {
                    for z in 0..7i32 {
                        let av = a[(x * sa[0] + y * sa[1] + z * sa[2]) as usize] as f64;
                        let bv = b[(x * sb[0] + y * sb[1] + z * sb[2]) as usize] as f64;
                        expected.push(av * bv);
                    }
                }
            }
            let tolerance = expected.iter().map(|e| EPS * e.abs()).collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(105u32.div_ceil(bt)),
                    block,
                },
                args: vec![
                    f32buf(&a),
                    f32buf(&b),
                    f32buf(&[0.0; 105]),
                    Arg::Buffer(Buffer::from_u32(&[3, 5, 7])),
                    Arg::Buffer(Buffer::from_i32(&sa)),
                    Arg::Buffer(Buffer::from_i32(&sb)),
                    u(3),
                    u(105),
                    i(0),
                    i(0),
                    u(2),
                ],
                output: 2,
                expected,
                tolerance,
                summary: "a[3,1,7] * b[5,7] broadcast to [3,5,7]".into(),
            }
        }
        "philox_uniform" => super::random::demo(block, seed),
        "logical_packed" => super::bools::demo(block),
        "layer_norm_rows" => super::norm::demo(block, seed),
        "moments_strided" => super::norm::moments_demo(block, seed),
        "int_elementwise" | "int_reduce_strided" | "int_matmul_strided" | "i64_elementwise"
        | "i64_reduce_strided" | "i64_matmul_strided" => {
            return super::ints_demos::demo(name, block, seed);
        }
        "copy_words" | "where_words" | "triangle_words" | "select_words" => {
            return super::copy::demo(name, block);
        }
        _ => return super::conv::demo(name, block, seed),
    })
}

/// Runs the demo of a library kernel on the generic target; `None` if it
/// has none.
pub fn demo(name: &str, block: Dim3, seed: u64) -> Option<Result<DemoOutcome, SimError>> {
    demo_on(name, block, Target::generic(), seed)
}

/// Runs the demo of a library kernel on `target` (its warp width decides
/// what the kernel's warp builtins and collectives see); `None` if it has
/// none.
pub fn demo_on(
    name: &str,
    block: Dim3,
    target: Target,
    seed: u64,
) -> Option<Result<DemoOutcome, SimError>> {
    let entry = crate::registry::find(name)?;
    // A block the target cannot run (a zero extent, too many threads) is
    // refused before the demo sizes its data by it: `--block 0` would
    // divide by zero there, a huge block ask for gigabytes.
    if let Err(e) = (LaunchConfig {
        grid: Dim3::x(1),
        block,
    })
    .validate(&target)
    {
        return Some(Err(SimError::Launch(e)));
    }
    let mut d = prepare(name, block, seed)?;
    let opts = SimOptions {
        target,
        ..SimOptions::default()
    };
    let stats = match sim::run((entry.kernel)(), d.launch, &mut d.args, &opts) {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    // The output read as its own element type (a fill writes u32 words).
    let out = d.args[d.output].buffer().expect("output buffer");
    let got: Vec<f64> = out.to_f64();
    let mut max_abs_err = 0f64;
    let mut passed = got.len() == d.expected.len();
    for ((g, e), t) in got.iter().zip(&d.expected).zip(&d.tolerance) {
        let err = (*g - e).abs();
        max_abs_err = max_abs_err.max(err);
        if err > *t || g.is_nan() {
            passed = false;
        }
    }
    Some(Ok(DemoOutcome {
        summary: d.summary,
        launch: d.launch,
        max_abs_err,
        passed,
        head: got.iter().take(8).map(|&v| v as f32).collect(),
        stats,
    }))
}

/// The launch a library kernel's demo uses for a block size.
///
/// # Panics
/// If the kernel has no demo.
pub fn demos_launch(name: &str, block: Dim3) -> LaunchConfig {
    prepare(name, block, 0).expect("a demo").launch
}

/// `batch` products a^T b for `matmul_strided` at `[batch, m, k, n]`: `a`
/// is stored `[batch, k, m]` and read transposed (column stride `m`), `b`
/// is one `[k, n]` matrix broadcast over the batch (batch stride 0); the
/// grid covers `c` with `tile x tile` blocks. The tuner's timing problem
/// is this at a few hundred per side; the library's demo at a few dozen.
pub(crate) fn matmul_strided_workload(block: Dim3, tile: u32, size: [u32; 4], seed: u64) -> Demo {
    let [batch, m, k, n] = size;
    let a = rng_f32(seed, (batch * k * m) as usize);
    let b = rng_f32(seed + 7, (k * n) as usize);
    let mut expected = vec![0f64; (batch * m * n) as usize];
    let mut tolerance = vec![0f64; (batch * m * n) as usize];
    for z in 0..batch as usize {
        let az = &a[z * (k * m) as usize..(z + 1) * (k * m) as usize];
        for r in 0..m as usize {
            for c in 0..n as usize {
                let (mut s, mut abs) = (0f64, 0f64);
                for q in 0..k as usize {
                    let p = az[q * m as usize + r] as f64 * b[q * n as usize + c] as f64;
                    s += p;
                    abs += p.abs();
                }
                let o = (z * m as usize + r) * n as usize + c;
                expected[o] = s;
                tolerance[o] = (k as f64 + 1.0) * EPS * abs;
            }
        }
    }
    let tile = tile.max(1);
    Demo {
        launch: LaunchConfig {
            grid: Dim3::new(n.div_ceil(tile), m.div_ceil(tile), batch),
            block,
        },
        args: vec![
            f32buf(&a),
            f32buf(&b),
            f32buf(&vec![0.0; (batch * m * n) as usize]),
            Arg::Buffer(Buffer::from_u32(&[batch])),
            Arg::Buffer(Buffer::from_i32(&[(k * m) as i32])),
            Arg::Buffer(Buffer::from_i32(&[0])),
            u(1),
            u(m),
            u(n),
            u(k),
            i(1),
            i(m as i32),
            i(n as i32),
            i(1),
            i(0),
            i(0),
        ],
        output: 2,
        expected,
        tolerance,
        summary: format!(
            "{batch} batches of a^T b ({m}x{k} by {k}x{n}), a read transposed, b broadcast"
        ),
    }
}

/// `reduce_strided`'s first pass over `x[d0, d1, d2]` summed over dims 0
/// and 2, as the wgpu backend runs it: `d1` outputs of `d0 * d2` strided
/// terms each, cut into chunks of at most [`super::REDUCE_CHUNK`] terms,
/// one thread (and one partial sum in `out`, `[d1, chunks]`) per chunk.
/// The tuner's timing problem is this over millions of terms; the
/// library's demo over 60.
pub(crate) fn reduce_strided_workload(block: Dim3, shape: [u32; 3], seed: u64) -> Demo {
    let [d0, d1, d2] = shape;
    let bt = block.count() as u32;
    let n_reduced = d0 * d2;
    let chunk = super::REDUCE_CHUNK;
    let n_chunks = n_reduced.div_ceil(chunk).max(1);
    let n_out = d1 * n_chunks;
    let x = rng_f32(seed, (d0 * d1 * d2) as usize);
    let mut expected = vec![0f64; n_out as usize];
    let mut abs = vec![0f64; n_out as usize];
    for a in 0..d0 as usize {
        for b in 0..d1 as usize {
            for c in 0..d2 as usize {
                let v = x[(a * d1 as usize + b) * d2 as usize + c] as f64;
                // The term's index among its output's reduced terms, as
                // the kernel walks them (dim 2 fastest).
                let j = (a * d2 as usize + c) as u32;
                let o = b * n_chunks as usize + (j / chunk) as usize;
                expected[o] += v;
                abs[o] += v.abs();
            }
        }
    }
    // A blocked sum: at most 63 additions into a block of 64 terms, then
    // one per block carried up, and the last.
    let terms = n_reduced.min(chunk);
    let depth = (terms.min(64) + terms.div_ceil(64) + 1) as f64;
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(n_out.div_ceil(bt.max(1))),
            block,
        },
        args: vec![
            f32buf(&x),
            f32buf(&vec![0.0; n_out as usize]),
            Arg::Buffer(Buffer::from_u32(&[d0, d1, d2])),
            Arg::Buffer(Buffer::from_i32(&[(d1 * d2) as i32, d2 as i32, 1])),
            Arg::Buffer(Buffer::from_u32(&[1, 0, 1])),
            u(3),
            u(d1),
            u(n_reduced),
            u(n_chunks),
            u(chunk),
            i(0),
            Arg::Scalar(crate::ir::Value::Bool(false)),
            u(n_reduced),
        ],
        output: 1,
        tolerance: abs.iter().map(|a| depth * EPS * a).collect(),
        expected,
        summary: if n_chunks > 1 {
            format!(
                "sum of a [{d0},{d1},{d2}] tensor over dims 0 and 2, in {n_out} partials of up to {chunk} terms"
            )
        } else {
            format!("sum of a [{d0},{d1},{d2}] tensor over dims 0 and 2")
        },
    }
}
