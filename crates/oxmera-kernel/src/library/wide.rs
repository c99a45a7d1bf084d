//! The f64 siblings of the core strided kernels: elementwise binary and
//! unary ops, comparisons, sums and means, and matmul, for adapters with
//! f64 (wgpu's SHADER_F64). They read an f64's bits as a u64 to see a NaN
//! (a GPU compiler may assume `x != x` is false), so they also need u64
//! (SHADER_INT64); the wgpu backend runs them only where the adapter has
//! both.
//!
//! They are siblings, not instances of generic kernels, so that the f32
//! kernels' text (and the accuracy arguments made for it) stays as it is.
//! Each follows its f32 kernel's parameter order and op codes, so the
//! backend launches them with the same code; what differs is only the
//! element type and, for `unary_strided_f64`, which codes exist: the ones
//! exact or correctly rounded at f64 with WGSL's f64 builtins (Vulkan has
//! no f64 `exp` or `log`).

use crate::kernel;

/// Elementwise binary op over two strided, broadcast f64 inputs: the f64
/// sibling of [`super::binary_strided`], with its parameters and its
/// [`super::binary_code`] values (0 add, 1 sub, 2 mul, 3 div, 4 maximum,
/// 5 minimum; IEEE 754-2019 maximum and minimum: NaN wins, -0 < +0).
#[kernel(block = [64, 256])]
pub fn binary_strided_f64(
    a: &[f64],
    b: &[f64],
    out: &mut [f64],
    shape: &[u32],
    astride: &[i32],
    bstride: &[i32],
    ndim: u32,
    n: u32,
    aoff: i32,
    boff: i32,
    op: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut ai = aoff;
        let mut bi = boff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            ai += c as i32 * astride[d];
            bi += c as i32 * bstride[d];
        }
        let x = a[ai];
        let y = b[bi];
        let mut r = x + y;
        if op == 1 {
            r = x - y;
        } else if op == 2 {
            r = x * y;
        } else if op == 3 {
            r = x / y;
        } else if op == 4 || op == 5 {
            let x_nan = (x.to_bits() & 0x7fff_ffff_ffff_ffffu64) > 0x7ff0_0000_0000_0000u64;
            let y_nan = (y.to_bits() & 0x7fff_ffff_ffff_ffffu64) > 0x7ff0_0000_0000_0000u64;
            let x_neg = (x.to_bits() >> 63u32) == 1u64;
            if x_nan || y_nan {
                r = f64::from_bits(0x7ff8_0000_0000_0000u64);
            } else if x == y {
                if x_neg == (op == 4) {
                    r = y;
                } else {
                    r = x;
                }
            } else if (x > y) == (op == 4) {
                r = x;
            } else {
                r = y;
            }
        }
        out[i] = r;
    }
}

/// Elementwise unary op over a strided f64 input, with
/// [`super::unary_code`] values: the ones WGSL computes exactly or
/// correctly rounded at f64 — NEG, RELU (NaN kept, -0 to +0), SQRT, ABS, COPY, RECIP,
/// SQUARE, FLOOR, CEIL. Any other code writes NaN (the backend sends none).
#[kernel(block = [64, 256])]
pub fn unary_strided_f64(
    x: &[f64],
    out: &mut [f64],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    op: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            xi += c as i32 * xstride[d];
        }
        let v = x[xi];
        let mut r = f64::from_bits(0x7ff8_0000_0000_0000u64);
        if op == 0 {
            r = -v;
        } else if op == 3 {
            // NaN stays NaN (by its bits) and -0 becomes +0.
            if (v.to_bits() & 0x7fff_ffff_ffff_ffffu64) > 0x7ff0_0000_0000_0000u64 {
                r = v;
            } else if v > 0.0 {
                r = v;
            } else {
                r = 0.0;
            }
        } else if op == 4 {
            r = v.sqrt();
        } else if op == 5 {
            r = v.abs();
        } else if op == 6 {
            r = v;
        } else if op == 9 {
            r = 1.0 / v;
        } else if op == 10 {
            r = v * v;
        } else if op == 12 {
            r = v.floor();
        } else if op == 13 {
            r = v.ceil();
        }
        out[i] = r;
    }
}

/// Elementwise comparison of two strided f64 inputs (or of `a` with the
/// scalar `s` when `with_scalar`), as byte bools four to a word: the f64
/// sibling of [`super::compare_packed`], with its [`super::compare_code`]
/// values. NaN compares unequal to everything, tested on the bits.
#[kernel(block = [64, 256])]
pub fn compare_packed_f64(
    a: &[f64],
    b: &[f64],
    out: &mut [u32],
    shape: &[u32],
    astride: &[i32],
    bstride: &[i32],
    ndim: u32,
    n: u32,
    aoff: i32,
    boff: i32,
    op: u32,
    with_scalar: bool,
    s: f64,
) {
    let w = block_idx_x() * block_dim_x() + thread_idx_x();
    if w * 4 < n {
        let mut word = 0u32;
        for e in 0..4u32 {
            let i = w * 4 + e;
            if i < n {
                let mut rem = i;
                let mut ai = aoff;
                let mut bi = boff;
                for k in 0..ndim {
                    let d = ndim - 1 - k;
                    let c = rem % shape[d];
                    rem = rem / shape[d];
                    ai += c as i32 * astride[d];
                    bi += c as i32 * bstride[d];
                }
                let x = a[ai];
                let mut y = s;
                if !with_scalar {
                    y = b[bi];
                }
                let nan = (x.to_bits() & 0x7fff_ffff_ffff_ffffu64) > 0x7ff0_0000_0000_0000u64
                    || (y.to_bits() & 0x7fff_ffff_ffff_ffffu64) > 0x7ff0_0000_0000_0000u64;
                let mut r = false;
                if nan {
                    r = op == 1;
                } else if op == 0 {
                    r = x == y;
                } else if op == 1 {
                    r = x != y;
                } else if op == 2 {
                    r = x < y;
                } else if op == 3 {
                    r = x <= y;
                } else if op == 4 {
                    r = x > y;
                } else {
                    r = x >= y;
                }
                if r {
                    word = word | (1u32 << (8 * e));
                }
            }
        }
        out[w] = word;
    }
}

/// One pass of a sum or mean of a strided f64 input over the dims marked
/// in `reduced`: the f64 sibling of [`super::reduce_strided`], with its
/// parameters, chunks and passes, and its blocked summation (64 terms into
/// a level-1 partial, 64 of those into the chunk's), which keeps a term's
/// roundings within the conformance contract as it does at f32.
#[kernel(block = [64, 256])]
pub fn reduce_strided_f64(
    x: &[f64],
    out: &mut [f64],
    shape: &[u32],
    xstride: &[i32],
    reduced: &[u32],
    ndim: u32,
    n_out: u32,
    n_reduced: u32,
    n_chunks: u32,
    chunk: u32,
    xoff: i32,
    mean: bool,
    count: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n_out * n_chunks {
        let o = i / n_chunks;
        let first = (i % n_chunks) * chunk;
        let last = (first + chunk).min(n_reduced);
        let mut rem = o;
        let mut base = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            if reduced[d] == 0 {
                let c = rem % shape[d];
                rem = rem / shape[d];
                base += c as i32 * xstride[d];
            }
        }
        let mut s1 = 0.0f64;
        let mut s2 = 0.0f64;
        for j in first..last {
            let mut r = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = r % shape[d];
                    r = r / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            s1 += x[off];
            if (j + 1 - first) % 64 == 0 {
                s2 += s1;
                s1 = 0.0;
            }
        }
        let mut acc = s2 + s1;
        if mean {
            acc = acc / count as f64;
        }
        out[i] = acc;
    }
}

/// Batched tiled matmul over strided f64 operands: the f64 sibling of
/// [`super::matmul_strided`] at its contract tile of 16 (no search: the
/// tuner times f32), with its parameters. Each output is a sequential sum
/// of `k` products, within `(k + 1)` roundings of each.
#[kernel(block = [[16, 16]])]
pub fn matmul_strided_f64<const TILE: u32 = 16>(
    a: &[f64],
    b: &[f64],
    c: &mut [f64],
    batch_shape: &[u32],
    a_batch_stride: &[i32],
    b_batch_stride: &[i32],
    nbatch: u32,
    m: u32,
    n: u32,
    k: u32,
    a_row: i32,
    a_col: i32,
    b_row: i32,
    b_col: i32,
    a_off: i32,
    b_off: i32,
) {
    let a_tile = shared::<f64>(TILE * TILE);
    let b_tile = shared::<f64>(TILE * TILE);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let z = block_idx_z();
    let mut rem = z;
    let mut a_base = a_off;
    let mut b_base = b_off;
    for q in 0..nbatch {
        let d = nbatch - 1 - q;
        let coord = rem % batch_shape[d];
        rem = rem / batch_shape[d];
        a_base += coord as i32 * a_batch_stride[d];
        b_base += coord as i32 * b_batch_stride[d];
    }
    let row = block_idx_y() * TILE + ty;
    let col = block_idx_x() * TILE + tx;
    let mut acc = 0.0f64;
    let tiles = (k + TILE - 1) / TILE;
    for t in 0..tiles {
        let ac = t * TILE + tx;
        let br = t * TILE + ty;
        let mut av = 0.0f64;
        if row < m && ac < k {
            av = a[a_base + row as i32 * a_row + ac as i32 * a_col];
        }
        let mut bv = 0.0f64;
        if br < k && col < n {
            bv = b[b_base + br as i32 * b_row + col as i32 * b_col];
        }
        a_tile[ty * TILE + tx] = av;
        b_tile[ty * TILE + tx] = bv;
        sync_threads();
        for q in 0..TILE {
            acc += a_tile[ty * TILE + q] * b_tile[q * TILE + tx];
        }
        sync_threads();
    }
    if row < m && col < n {
        c[(z * m + row) * n + col] = acc;
    }
}

use crate::ir::{Dim3, Value};
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, rng_f32};

/// Seeded f64 values in about `[-1, 1)` that f32 cannot hold (each has
/// bits below f32's 24), so a kernel that rounds through f32 fails.
fn rng_f64(seed: u64, n: usize) -> Vec<f64> {
    rng_f32(seed, n)
        .into_iter()
        .map(|x| x as f64 * (1.0 + 1e-9))
        .collect()
}

fn f64buf(v: &[f64]) -> Arg {
    Arg::Buffer(Buffer::from_f64(v))
}
fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}
fn i(v: i32) -> Arg {
    Arg::Scalar(Value::I32(v))
}
fn u32s(v: &[u32]) -> Arg {
    Arg::Buffer(Buffer::from_u32(v))
}
fn i32s(v: &[i32]) -> Arg {
    Arg::Buffer(Buffer::from_i32(v))
}

const EPS64: f64 = f64::EPSILON;

/// The demo of an f64 sibling, or `None` for another kernel.
pub(super) fn demo(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    let bt = block.count() as u32;
    let linear = |threads: u32| LaunchConfig {
        grid: Dim3::x(threads.div_ceil(bt)),
        block,
    };
    Some(match name {
        "binary_strided_f64" => {
            // out[3,5,7] = a[3,1,7] op b[5,7], both broadcast; seed 1
            // divides, seed 2 takes the IEEE maximum (NaN and signed zeros:
            // the unit test below, as a demo's output may hold no NaN).
            let a = rng_f64(seed, 21);
            let b = rng_f64(seed + 3, 35);
            let (sa, sb) = ([7i32, 0, 1], [0i32, 7, 1]);
            let max = seed % 2 == 0;
            let mut expected = Vec::new();
            for x in 0..3i32 {
                for y in 0..5i32 {
                    for z in 0..7i32 {
                        let av = a[(x * sa[0] + y * sa[1] + z * sa[2]) as usize];
                        let bv = b[(x * sb[0] + y * sb[1] + z * sb[2]) as usize];
                        expected.push(if max { av.max(bv) } else { av / bv });
                    }
                }
            }
            Demo {
                launch: linear(105),
                args: vec![
                    f64buf(&a),
                    f64buf(&b),
                    f64buf(&[0.0; 105]),
                    u32s(&[3, 5, 7]),
                    i32s(&sa),
                    i32s(&sb),
                    u(3),
                    u(105),
                    i(0),
                    i(0),
                    u(if max { 4 } else { 3 }),
                ],
                output: 2,
                // One rounding: exact in the simulator (Rust's f64); an
                // ulp of room for a driver whose f64 division is not
                // correctly rounded (Vulkan allows it).
                tolerance: expected.iter().map(|e: &f64| EPS64 * e.abs()).collect(),
                expected,
                summary: format!(
                    "a[3,1,7] {} b[5,7] in f64, broadcast to [3,5,7]",
                    if max { "maximum" } else { "/" }
                ),
            }
        }
        "unary_strided_f64" => {
            // sqrt (seed 1) or relu (seed 2) through a transposed view.
            let sqrt = seed % 2 == 1;
            let x: Vec<f64> = rng_f64(seed, 105)
                .into_iter()
                .map(|v| if sqrt { v.abs() } else { v })
                .collect();
            let strides = [1i32, 3, 15];
            let mut expected = Vec::new();
            for a in 0..3i32 {
                for b in 0..5i32 {
                    for c in 0..7i32 {
                        let v = x[(a * strides[0] + b * strides[1] + c * strides[2]) as usize];
                        expected.push(if sqrt { v.sqrt() } else { v.max(0.0) });
                    }
                }
            }
            Demo {
                launch: linear(105),
                args: vec![
                    f64buf(&x),
                    f64buf(&[0.0; 105]),
                    u32s(&[3, 5, 7]),
                    i32s(&strides),
                    u(3),
                    u(105),
                    i(0),
                    u(if sqrt { 4 } else { 3 }),
                ],
                output: 1,
                // relu is exact; sqrt correctly rounded in Rust, within
                // an ulp on a driver that does not round it correctly.
                tolerance: expected.iter().map(|e: &f64| EPS64 * e.abs()).collect(),
                expected,
                summary: format!(
                    "{} of a transposed [7,5,3] f64 view",
                    if sqrt { "sqrt" } else { "relu" }
                ),
            }
        }
        "compare_packed_f64" => {
            // a[3,5] > b[5] (broadcast): 15 byte bools in 4 words, with a
            // NaN and a pair that differs only below f32's precision.
            let mut a = rng_f64(seed, 15);
            let b = rng_f64(seed + 1, 5);
            a[4] = f64::NAN;
            a[7] = b[2] + b[2].abs() * 1e-12;
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
                launch: linear(4),
                args: vec![
                    f64buf(&a),
                    f64buf(&b),
                    u32s(&[0; 4]),
                    u32s(&[3, 5]),
                    i32s(&[5, 1]),
                    i32s(&[0, 1]),
                    u(2),
                    u(15),
                    i(0),
                    i(0),
                    u(super::compare_code::GT),
                    Arg::Scalar(Value::Bool(false)),
                    Arg::Scalar(Value::F64(0.0)),
                ],
                output: 2,
                expected,
                tolerance: vec![0.0; 4],
                summary: "a[3,5] > b[5] in f64 as 15 byte bools, NaN false".into(),
            }
        }
        "reduce_strided_f64" => {
            // The mean over dims 0 and 2 of x[3,70,5] (70 outputs of 15
            // terms), or of x[70,3,2] (3 outputs of 140: three blocks of 64).
            let [d0, d1, d2] = if seed % 2 == 1 {
                [3u32, 70, 5]
            } else {
                [70, 3, 2]
            };
            let reduced = [1u32, 0, 1];
            let n_reduced = d0 * d2;
            let x = rng_f64(seed, (d0 * d1 * d2) as usize);
            let mut expected = vec![0f64; d1 as usize];
            let mut abs = vec![0f64; d1 as usize];
            for a in 0..d0 as usize {
                for b in 0..d1 as usize {
                    for c in 0..d2 as usize {
                        let v = x[(a * d1 as usize + b) * d2 as usize + c];
                        expected[b] += v / n_reduced as f64;
                        abs[b] += v.abs() / n_reduced as f64;
                    }
                }
            }
            // A blocked sum's roundings, as reduce_strided's demo, plus
            // the mean's division and the reference's own order.
            let depth = (n_reduced.min(64) + n_reduced.div_ceil(64) + 3) as f64;
            Demo {
                launch: linear(d1),
                args: vec![
                    f64buf(&x),
                    f64buf(&vec![0.0; d1 as usize]),
                    u32s(&[d0, d1, d2]),
                    i32s(&[(d1 * d2) as i32, d2 as i32, 1]),
                    u32s(&reduced),
                    u(3),
                    u(d1),
                    u(n_reduced),
                    u(1),
                    u(super::REDUCE_CHUNK),
                    i(0),
                    Arg::Scalar(Value::Bool(true)),
                    u(n_reduced),
                ],
                output: 1,
                tolerance: abs.iter().map(|a| depth * EPS64 * a).collect(),
                expected,
                summary: format!("mean of an f64 [{d0},{d1},{d2}] tensor over dims 0 and 2"),
            }
        }
        "matmul_strided_f64" => {
            // 2 batches of a^T b (19x23 by 23x17): a read transposed, b
            // broadcast over the batch.
            let (batch, m, k, n) = (2u32, 19u32, 23u32, 17u32);
            let a = rng_f64(seed, (batch * k * m) as usize);
            let b = rng_f64(seed + 7, (k * n) as usize);
            let mut expected = vec![0f64; (batch * m * n) as usize];
            let mut tolerance = vec![0f64; (batch * m * n) as usize];
            for z in 0..batch as usize {
                let az = &a[z * (k * m) as usize..];
                for r in 0..m as usize {
                    for c in 0..n as usize {
                        let (mut s, mut abs) = (0f64, 0f64);
                        for q in 0..k as usize {
                            let p = az[q * m as usize + r] * b[q * n as usize + c];
                            s += p;
                            abs += p.abs();
                        }
                        let o = (z * m as usize + r) * n as usize + c;
                        expected[o] = s;
                        tolerance[o] = (k as f64 + 1.0) * EPS64 * abs;
                    }
                }
            }
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::new(n.div_ceil(16), m.div_ceil(16), batch),
                    block,
                },
                args: vec![
                    f64buf(&a),
                    f64buf(&b),
                    f64buf(&vec![0.0; (batch * m * n) as usize]),
                    u32s(&[batch]),
                    i32s(&[(k * m) as i32]),
                    i32s(&[0]),
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
                summary: "2 batches of a^T b in f64 (19x23 by 23x17), b broadcast".into(),
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{self, SimOptions};

    /// IEEE maximum and minimum at f64: a NaN on either side wins, and
    /// -0 < +0 in either order.
    #[test]
    fn f64_maximum_and_minimum_follow_ieee() {
        let a = [f64::NAN, 1.0, -0.0, 0.0, 2.0];
        let b = [1.0, f64::NAN, 0.0, -0.0, 1.0 + 1e-12];
        for (op, want) in [
            (4u32, [f64::NAN, f64::NAN, 0.0, 0.0, 2.0]),
            (5u32, [f64::NAN, f64::NAN, -0.0, -0.0, 1.0 + 1e-12]),
        ] {
            let mut args = vec![
                f64buf(&a),
                f64buf(&b),
                f64buf(&[7.0; 5]),
                u32s(&[5]),
                i32s(&[1]),
                i32s(&[1]),
                u(1),
                u(5),
                i(0),
                i(0),
                u(op),
            ];
            let launch = LaunchConfig::linear(1, 64);
            sim::run(
                binary_strided_f64(),
                launch,
                &mut args,
                &SimOptions::default(),
            )
            .unwrap();
            let got = args[2].buffer().unwrap().to_f64();
            for (g, w) in got.iter().zip(want) {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{op}: {got:?}"
                );
            }
        }
    }

    /// RELU keeps a NaN and takes -0 to +0.
    #[test]
    fn f64_relu_keeps_nan_and_zeroes_negative_zero() {
        let mut args = vec![
            f64buf(&[f64::NAN, -0.0, -3.0, 0.5]),
            f64buf(&[7.0; 4]),
            u32s(&[4]),
            i32s(&[1]),
            u(1),
            u(4),
            i(0),
            u(3),
        ];
        sim::run(
            unary_strided_f64(),
            LaunchConfig::linear(1, 64),
            &mut args,
            &SimOptions::default(),
        )
        .unwrap();
        let got = args[1].buffer().unwrap().to_f64();
        assert!(got[0].is_nan());
        assert_eq!(got[1].to_bits(), 0.0f64.to_bits());
        assert_eq!(&got[2..], [0.0, 0.5]);
    }
}
