//! The demos of the integer kernels (`ints.rs`): each checks one launch
//! against a host model written from the reference backend's definitions
//! (computed in `i64`, wrapped into the dtype), exactly. Odd seeds run the
//! `i32` form, even seeds the byte form.

use crate::ir::{Dim3, Value};
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, rng_f32};
use super::ints::{int_code, int_kind, int_out, int_reduce_code};

/// The reference's floor division of `i64` (`a / 0 == 0`).
pub(crate) fn floor_div(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let q = a.wrapping_div(b);
    if a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// `op` (one of [`int_code`]) as the reference computes it, in `i64`,
/// before the wrap into the dtype.
pub(crate) fn host_op(op: u32, x: i64, y: i64, lo: i64, hi: i64) -> i64 {
    match op {
        int_code::ADD => x.wrapping_add(y),
        int_code::SUB => x.wrapping_sub(y),
        int_code::MUL => x.wrapping_mul(y),
        int_code::DIV => floor_div(x, y),
        int_code::REM if y == 0 => x,
        int_code::REM => {
            let r = x.wrapping_rem(y);
            if r != 0 && ((r < 0) != (y < 0)) {
                r + y
            } else {
                r
            }
        }
        int_code::FMOD if y == 0 => x,
        int_code::FMOD => x.wrapping_rem(y),
        int_code::POW if y < 0 => match x {
            1 => 1,
            -1 if y % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        },
        int_code::POW => {
            let (mut r, mut sq, mut e) = (1i64, x, y as u64);
            while e > 0 {
                if e & 1 == 1 {
                    r = r.wrapping_mul(sq);
                }
                sq = sq.wrapping_mul(sq);
                e >>= 1;
            }
            r
        }
        int_code::MAX => x.max(y),
        int_code::MIN => x.min(y),
        int_code::NEG => x.wrapping_neg(),
        int_code::ABS => x.wrapping_abs(),
        int_code::SIGN => x.signum(),
        int_code::SQUARE => x.wrapping_mul(x),
        int_code::RELU => x.max(0),
        int_code::CLAMP => x.max(lo).min(hi),
        int_code::EQ => i64::from(x == y),
        int_code::NE => i64::from(x != y),
        int_code::LT => i64::from(x < y),
        int_code::LE => i64::from(x <= y),
        int_code::GT => i64::from(x > y),
        int_code::GE => i64::from(x >= y),
        _ => x,
    }
}

/// Bytes as the words a kernel writes them in, as `f64`s.
fn byte_words(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            f64::from(u32::from_le_bytes(w))
        })
        .collect()
}

/// Bytes packed into words for an input buffer.
fn pack(bytes: &[u8]) -> Buffer {
    let words: Vec<u32> = byte_words(bytes).iter().map(|&w| w as u32).collect();
    Buffer::from_u32(&words)
}

/// `n` seeded integers in `[-range, range)`.
fn ints(seed: u64, n: usize, range: f64) -> Vec<i64> {
    rng_f32(seed, n)
        .iter()
        .map(|&v| (f64::from(v) * range).floor() as i64)
        .collect()
}

fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}

fn i(v: i32) -> Arg {
    Arg::Scalar(Value::I32(v))
}

fn launch(threads: u32, block: Dim3) -> LaunchConfig {
    LaunchConfig {
        grid: Dim3::x(threads.div_ceil(block.count() as u32).max(1)),
        block,
    }
}

/// The demo of an integer kernel, or `None` for another name.
pub(super) fn demo(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    let bytes = seed % 2 == 0;
    Some(match name {
        "int_elementwise" if !bytes => elementwise_i32(block, seed),
        "int_elementwise" => elementwise_u8(block, seed),
        "int_reduce_strided" if !bytes => sum_i32(block, seed),
        "int_reduce_strided" => max_u8(block, seed),
        "int_matmul_strided" => matmul(block, seed, bytes),
        "i64_elementwise" => elementwise_i64(block, seed, bytes),
        "i64_reduce_strided" => reduce_i64(block, seed, bytes),
        "i64_matmul_strided" => matmul_i64(block, seed),
        _ => return None,
    })
}

/// Floor division of a [3, 5] i32 tensor by a broadcast row holding the
/// divisors that branch (0, -1, negatives), `MIN` among the dividends.
fn elementwise_i32(block: Dim3, seed: u64) -> Demo {
    let mut a = ints(seed, 15, 1000.0);
    a[0] = i64::from(i32::MIN);
    a[7] = i64::from(i32::MAX);
    let bs = [0i64, -1, 7, -3, 2];
    let expected: Vec<f64> = (0..15)
        .map(|k| host_op(int_code::DIV, a[k], bs[k % 5], 0, 0) as i32 as u32 as f64)
        .collect();
    let words =
        |v: &[i64]| Buffer::from_u32(&v.iter().map(|&x| x as i32 as u32).collect::<Vec<_>>());
    Demo {
        launch: launch(15, block),
        args: vec![
            Arg::Buffer(words(&a)),
            Arg::Buffer(words(&bs)),
            Arg::Buffer(Buffer::from_u32(&[0; 15])),
            Arg::Buffer(Buffer::from_u32(&[3, 5])),
            Arg::Buffer(Buffer::from_i32(&[5, 1])),
            Arg::Buffer(Buffer::from_i32(&[0, 1])),
            u(2),
            u(15),
            i(0),
            i(0),
            u(int_code::DIV),
            u(int_kind::I32),
            Arg::Scalar(Value::Bool(false)),
            u(0),
            i(0),
            i(0),
            i(0),
        ],
        output: 2,
        expected,
        tolerance: vec![0.0; 15],
        summary: "floor division of [3,5] i32 by a broadcast row with 0 and -1, MIN included"
            .into(),
    }
}

/// `a - b` of u8 bytes (wrapping below zero), `b` read at an offset.
fn elementwise_u8(block: Dim3, seed: u64) -> Demo {
    let a: Vec<u8> = ints(seed, 9, 128.0)
        .iter()
        .map(|&v| (v + 128) as u8)
        .collect();
    let b: Vec<u8> = ints(seed + 1, 10, 128.0)
        .iter()
        .map(|&v| (v + 128) as u8)
        .collect();
    let out: Vec<u8> = (0..9)
        .map(|k| host_op(int_code::SUB, a[k].into(), b[k + 1].into(), 0, 0) as u8)
        .collect();
    Demo {
        launch: launch(3, block),
        args: vec![
            Arg::Buffer(pack(&a)),
            Arg::Buffer(pack(&b)),
            Arg::Buffer(Buffer::from_u32(&[0; 3])),
            Arg::Buffer(Buffer::from_u32(&[9])),
            Arg::Buffer(Buffer::from_i32(&[1])),
            Arg::Buffer(Buffer::from_i32(&[1])),
            u(1),
            u(9),
            i(0),
            i(1),
            u(int_code::SUB),
            u(int_kind::U8),
            Arg::Scalar(Value::Bool(true)),
            u(0),
            i(0),
            i(0),
            i(0),
        ],
        output: 2,
        expected: byte_words(&out),
        tolerance: vec![0.0; 3],
        summary: "u8 a - b over 9 bytes, wrapping, b at an offset".into(),
    }
}

/// The i64 sums of the rows of a [4, 6] i32 tensor of values near the
/// ends of the range, so the high word carries and borrows.
fn sum_i32(block: Dim3, seed: u64) -> Demo {
    let big = i64::from(i32::MAX);
    let a: Vec<i64> = ints(seed, 24, 4.0)
        .iter()
        .map(|&v| if v < 0 { -big - 1 + v.abs() } else { big - v })
        .collect();
    let mut expected = Vec::new();
    for r in 0..4 {
        let s: i64 = a[r * 6..r * 6 + 6].iter().sum();
        expected.push(f64::from(s as u64 as u32));
        expected.push(f64::from((s as u64 >> 32) as u32));
    }
    let words: Vec<u32> = a.iter().map(|&x| x as i32 as u32).collect();
    Demo {
        launch: launch(4, block),
        args: vec![
            Arg::Buffer(Buffer::from_u32(&words)),
            Arg::Buffer(Buffer::from_u32(&[0; 8])),
            Arg::Buffer(Buffer::from_u32(&[4, 6])),
            Arg::Buffer(Buffer::from_i32(&[6, 1])),
            Arg::Buffer(Buffer::from_u32(&[0, 1])),
            u(2),
            u(4),
            u(6),
            i(0),
            u(int_reduce_code::SUM),
            u(int_kind::I32),
            u(int_out::PAIR),
        ],
        output: 1,
        expected,
        tolerance: vec![0.0; 8],
        summary: "i64 row sums of a [4,6] i32 tensor near the range's ends".into(),
    }
}

/// The maximum over dim 0 of a [3, 7] u8 tensor, as bytes.
fn max_u8(block: Dim3, seed: u64) -> Demo {
    let a: Vec<u8> = ints(seed, 21, 128.0)
        .iter()
        .map(|&v| (v + 128) as u8)
        .collect();
    let out: Vec<u8> = (0..7)
        .map(|c| (0..3).map(|r| a[r * 7 + c]).max().unwrap_or(0))
        .collect();
    Demo {
        launch: launch(2, block),
        args: vec![
            Arg::Buffer(pack(&a)),
            Arg::Buffer(Buffer::from_u32(&[0; 2])),
            Arg::Buffer(Buffer::from_u32(&[3, 7])),
            Arg::Buffer(Buffer::from_i32(&[7, 1])),
            Arg::Buffer(Buffer::from_u32(&[1, 0])),
            u(2),
            u(7),
            u(3),
            i(0),
            u(int_reduce_code::MAX),
            u(int_kind::U8),
            u(int_out::BYTES),
        ],
        output: 1,
        expected: byte_words(&out),
        tolerance: vec![0.0; 2],
        summary: "u8 maximum over dim 0 of [3,7], as bytes".into(),
    }
}

/// `a @ b` for a [2, 3, 4] `a` read transposed (stored [2, 4, 3]) and a
/// [4, 5] `b` broadcast over the batch: i32 values large enough to wrap,
/// or u8 bytes whose sums wrap past 255.
fn matmul(block: Dim3, seed: u64, bytes: bool) -> Demo {
    let (batch, m, k, n) = (2usize, 3usize, 4usize, 5usize);
    let range = if bytes { 128.0 } else { 60000.0 };
    let shift = if bytes { 128 } else { 0 };
    let a: Vec<i64> = ints(seed, batch * k * m, range)
        .iter()
        .map(|v| v + shift)
        .collect();
    let b: Vec<i64> = ints(seed + 1, k * n, range)
        .iter()
        .map(|v| v + shift)
        .collect();
    let mut c = Vec::new();
    for bi in 0..batch {
        for r in 0..m {
            for col in 0..n {
                let acc = (0..k).fold(0i64, |acc, p| {
                    acc.wrapping_add(a[bi * k * m + p * m + r].wrapping_mul(b[p * n + col]))
                });
                c.push(acc);
            }
        }
    }
    let count = (batch * m * n) as u32;
    let (input, expected, out_words, kind) = if bytes {
        let to = |v: &[i64]| pack(&v.iter().map(|&x| x as u8).collect::<Vec<_>>());
        let out: Vec<u8> = c.iter().map(|&x| x as u8).collect();
        (
            (to(&a), to(&b)),
            byte_words(&out),
            count.div_ceil(4),
            int_kind::U8,
        )
    } else {
        let to =
            |v: &[i64]| Buffer::from_u32(&v.iter().map(|&x| x as i32 as u32).collect::<Vec<_>>());
        let out = c.iter().map(|&x| f64::from(x as i32 as u32)).collect();
        ((to(&a), to(&b)), out, count, int_kind::I32)
    };
    Demo {
        launch: launch(out_words, block),
        args: vec![
            Arg::Buffer(input.0),
            Arg::Buffer(input.1),
            Arg::Buffer(Buffer::from_u32(&vec![0; out_words as usize])),
            Arg::Buffer(Buffer::from_u32(&[batch as u32])),
            Arg::Buffer(Buffer::from_i32(&[(k * m) as i32])),
            Arg::Buffer(Buffer::from_i32(&[0])),
            u(1),
            u(count),
            u(m as u32),
            u(n as u32),
            u(k as u32),
            i(1),
            i(m as i32),
            i(n as i32),
            i(1),
            i(0),
            i(0),
            u(kind),
        ],
        output: 2,
        expected,
        tolerance: vec![0.0; out_words as usize],
        summary: format!(
            "{} [2,3,4] (transposed view) @ [4,5] broadcast, wrapping",
            if bytes { "u8" } else { "i32" }
        ),
    }
}

/// `i64` values as the word pairs the kernels read (low word first).
fn pairs(v: &[i64]) -> Buffer {
    Buffer::from_u32(
        &v.iter()
            .flat_map(|&x| [x as u64 as u32, (x as u64 >> 32) as u32])
            .collect::<Vec<_>>(),
    )
}

/// `i64` results as the words the kernels write, as `f64`s.
fn pair_words(v: &[i64]) -> Vec<f64> {
    v.iter()
        .flat_map(|&x| {
            [
                f64::from(x as u64 as u32),
                f64::from((x as u64 >> 32) as u32),
            ]
        })
        .collect()
}

/// Seeded `i64` values spread over the whole range (a product of two
/// draws shifted by a third), with `MIN` and `MAX` first.
fn wide_ints(seed: u64, n: usize) -> Vec<i64> {
    let d = ints(seed, 3 * n, 65536.0);
    let mut v: Vec<i64> = (0..n)
        .map(|k| (d[3 * k] * 65536 + d[3 * k + 1]) << (d[3 * k + 2].rem_euclid(31)))
        .collect();
    v[0] = i64::MIN;
    v[1.min(n - 1)] = i64::MAX;
    v
}

/// Floor division (odd seeds) or the wrapping product (even seeds) of a
/// [3, 5] i64 tensor and a broadcast row with 0, -1, a divisor past one
/// word and negatives; `MIN` and `MAX` among the dividends.
fn elementwise_i64(block: Dim3, seed: u64, product: bool) -> Demo {
    let a = wide_ints(seed, 15);
    let bs = [0i64, -1, 7, -(3 << 40), 1 << 33];
    let op = if product {
        int_code::MUL
    } else {
        int_code::DIV
    };
    let c: Vec<i64> = (0..15)
        .map(|k| host_op(op, a[k], bs[k % 5], 0, 0))
        .collect();
    let w = |v: u32| u(v);
    Demo {
        launch: launch(15, block),
        args: vec![
            Arg::Buffer(pairs(&a)),
            Arg::Buffer(pairs(&bs)),
            Arg::Buffer(Buffer::from_u32(&[0; 30])),
            Arg::Buffer(Buffer::from_u32(&[3, 5])),
            Arg::Buffer(Buffer::from_i32(&[5, 1])),
            Arg::Buffer(Buffer::from_i32(&[0, 1])),
            u(2),
            u(15),
            i(0),
            i(0),
            u(op),
            u(0),
            w(0),
            w(0),
            w(0),
            w(0),
            w(0),
            w(0),
        ],
        output: 2,
        expected: pair_words(&c),
        tolerance: vec![0.0; 30],
        summary: format!(
            "{} of [3,5] i64 by a broadcast row with 0, -1 and 2^33, MIN and MAX included",
            if product {
                "wrapping product"
            } else {
                "floor division"
            }
        ),
    }
}

/// Row sums of a [4, 6] i64 tensor over the whole range (wrapping; odd
/// seeds) or the first position of each column's maximum (even seeds).
fn reduce_i64(block: Dim3, seed: u64, argmax: bool) -> Demo {
    let a = wide_ints(seed, 24);
    let (op, marks, n_out, n_red, c): (u32, [u32; 2], u32, u32, Vec<i64>) = if argmax {
        let c = (0..6)
            .map(|col| {
                let mut best = 0;
                for r in 1..4 {
                    if a[r * 6 + col] > a[best * 6 + col] {
                        best = r;
                    }
                }
                best as i64
            })
            .collect();
        (int_reduce_code::ARGMAX, [1, 0], 6, 4, c)
    } else {
        let c = (0..4)
            .map(|r| {
                a[r * 6..r * 6 + 6]
                    .iter()
                    .fold(0i64, |s, &x| s.wrapping_add(x))
            })
            .collect();
        (int_reduce_code::SUM, [0, 1], 4, 6, c)
    };
    Demo {
        launch: launch(n_out, block),
        args: vec![
            Arg::Buffer(pairs(&a)),
            Arg::Buffer(Buffer::from_u32(&vec![0; 2 * n_out as usize])),
            Arg::Buffer(Buffer::from_u32(&[4, 6])),
            Arg::Buffer(Buffer::from_i32(&[6, 1])),
            Arg::Buffer(Buffer::from_u32(&marks)),
            u(2),
            u(n_out),
            u(n_red),
            i(0),
            u(op),
        ],
        output: 1,
        expected: pair_words(&c),
        tolerance: vec![0.0; 2 * n_out as usize],
        summary: if argmax {
            "first position of each column's maximum of [4,6] i64".into()
        } else {
            "wrapping row sums of [4,6] i64 over the whole range".into()
        },
    }
}

/// `a @ b` for a [3, 4] i64 `a` read transposed (stored [4, 3]) and a
/// [4, 5] `b`, values over the whole range so every product wraps.
fn matmul_i64(block: Dim3, seed: u64) -> Demo {
    let (m, k, n) = (3usize, 4usize, 5usize);
    let a = wide_ints(seed, k * m);
    let b = wide_ints(seed + 1, k * n);
    let c: Vec<i64> = (0..m * n)
        .map(|o| {
            (0..k).fold(0i64, |acc, p| {
                acc.wrapping_add(a[p * m + o / n].wrapping_mul(b[p * n + o % n]))
            })
        })
        .collect();
    Demo {
        launch: launch((m * n) as u32, block),
        args: vec![
            Arg::Buffer(pairs(&a)),
            Arg::Buffer(pairs(&b)),
            Arg::Buffer(Buffer::from_u32(&[0; 30])),
            Arg::Buffer(Buffer::from_u32(&[1])),
            Arg::Buffer(Buffer::from_i32(&[0])),
            Arg::Buffer(Buffer::from_i32(&[0])),
            u(0),
            u((m * n) as u32),
            u(m as u32),
            u(n as u32),
            u(k as u32),
            i(1),
            i(m as i32),
            i(n as i32),
            i(1),
            i(0),
            i(0),
        ],
        output: 2,
        expected: pair_words(&c),
        tolerance: vec![0.0; 30],
        summary: "i64 [3,4] (transposed view) @ [4,5], every product wrapping".into(),
    }
}
