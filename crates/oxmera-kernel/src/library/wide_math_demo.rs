//! The demos of the f64 math kernels ([`super::wide_math`]), against
//! Rust's f64 functions on the host. Each function's accuracy over its
//! whole domain is measured in `tests/wide_math.rs`.

use crate::ir::{Dim3, Value};
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, rng_f32};
use super::math_demo::log_add_exp;
use super::norm::moment_code;
use super::wide_math::{MOMENT_LOGSUMEXP, wide_math_code};

/// The demo: `e^x` (odd seeds) or `tanh x` (even seeds) of a transposed
/// `[7, 5, 3]` f64 view, values in `[-30, 30)` with bits f32 cannot hold,
/// within 2 ulp of Rust's.
pub(super) fn demo(block: Dim3, seed: u64) -> Demo {
    let tanh = seed % 2 == 0;
    let x: Vec<f64> = rng_f32(seed, 105)
        .into_iter()
        .map(|v| f64::from(v) * 30.0 * (1.0 + 1e-9))
        .collect();
    let strides = [1i32, 3, 15];
    let mut expected = Vec::new();
    for a in 0..3i32 {
        for b in 0..5i32 {
            for c in 0..7i32 {
                let v = x[(a * strides[0] + b * strides[1] + c * strides[2]) as usize];
                expected.push(if tanh { v.tanh() } else { v.exp() });
            }
        }
    }
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(105u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f64(&x)),
            Arg::Buffer(Buffer::from_f64(&[0.0; 105])),
            Arg::Buffer(Buffer::from_u32(&[3, 5, 7])),
            Arg::Buffer(Buffer::from_i32(&strides)),
            u(3),
            u(105),
            Arg::Scalar(Value::I32(0)),
            u(if tanh {
                wide_math_code::TANH
            } else {
                wide_math_code::EXP
            }),
            Arg::Scalar(Value::F64(0.0)),
            Arg::Scalar(Value::F64(0.0)),
        ],
        output: 1,
        tolerance: expected
            .iter()
            .map(|e: &f64| 2.0 * f64::EPSILON * e.abs())
            .collect(),
        expected,
        summary: format!(
            "{} of a transposed [7,5,3] f64 view",
            if tanh { "tanh" } else { "exp" }
        ),
    }
}

/// The demo of `binary_math_f64`: `pow` (odd seeds) of positive bases in
/// `[0.5, 30)` to exponents in `[-8, 8)`, or `hypot` (even seeds) of
/// values up to `1e300` (whose squares overflow), `b` a broadcast row;
/// within the ops' bounds (pow's `ε·(1 + 4·(1 + |b·ln a|))`, hypot's
/// 1.25 ulp, taken as 2).
pub(super) fn binary_demo(block: Dim3, seed: u64) -> Demo {
    let pow = seed % 2 == 1;
    let r = rng_f32(seed, 20);
    let a: Vec<f64> = r[..15]
        .iter()
        .map(|&v| {
            let v = f64::from(v);
            if pow { 15.25 + 14.75 * v } else { v * 1e300 }
        })
        .collect();
    let b: Vec<f64> = r[15..]
        .iter()
        .map(|&v| {
            if pow {
                f64::from(v) * 8.0
            } else {
                f64::from(v) * 3e299
            }
        })
        .collect();
    let mut expected = Vec::new();
    let mut tolerance = Vec::new();
    for k in 0..15 {
        let (x, y) = (a[k], b[k % 5]);
        let want = if pow { x.powf(y) } else { x.hypot(y) };
        let growth = if pow {
            1.0 + 4.0 * (1.0 + (y * x.ln()).abs())
        } else {
            2.0
        };
        expected.push(want);
        tolerance.push(growth * f64::EPSILON * want.abs());
    }
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(15u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f64(&a)),
            Arg::Buffer(Buffer::from_f64(&b)),
            Arg::Buffer(Buffer::from_f64(&[0.0; 15])),
            Arg::Buffer(Buffer::from_u32(&[3, 5])),
            Arg::Buffer(Buffer::from_i32(&[5, 1])),
            Arg::Buffer(Buffer::from_i32(&[0, 1])),
            u(2),
            u(15),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::I32(0)),
            u(if pow {
                super::binary_math_code::POW
            } else {
                super::binary_math_code::HYPOT
            }),
        ],
        output: 2,
        expected,
        tolerance,
        summary: format!(
            "{} of a [3,5] f64 tensor and a broadcast row",
            if pow { "pow" } else { "hypot" }
        ),
    }
}

/// The demo of `logcumsumexp_f64`: along the rows of a transposed
/// `[5, 6]` f64 view, values in `[-300, 100)` so that early elements lie
/// far below each row's later maximum, within the scan's conformance
/// bound `n·ε·(6 + |want| + max|x|)`.
pub(super) fn scan_demo(block: Dim3, seed: u64) -> Demo {
    let x: Vec<f64> = rng_f32(seed, 30)
        .into_iter()
        .map(|v| f64::from(v) * 200.0 - 100.0 + 1e-9)
        .collect();
    let mut expected = Vec::new();
    let mut tolerance = Vec::new();
    for r in 0..5usize {
        let row: Vec<f64> = (0..6).map(|c| x[c * 5 + r]).collect();
        let big = row.iter().fold(0f64, |m, v| m.max(v.abs()));
        let mut acc = f64::NEG_INFINITY;
        for &v in &row {
            acc = log_add_exp(acc, v);
            expected.push(acc);
            tolerance.push(6.0 * f64::EPSILON * (6.0 + acc.abs() + big));
        }
    }
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(5u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f64(&x)),
            Arg::Buffer(Buffer::from_f64(&[0.0; 30])),
            Arg::Buffer(Buffer::from_u32(&[5, 6])),
            Arg::Buffer(Buffer::from_i32(&[1, 5])),
            Arg::Scalar(Value::U32(2)),
            Arg::Scalar(Value::U32(5)),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::U32(1)),
        ],
        output: 1,
        expected,
        tolerance,
        summary: "running f64 log-sum-exp along the rows of a transposed [5,6] view".into(),
    }
}

/// The demos of the f64 walks over dim 0 of a `[6, 4]` view:
/// `moments_f64`'s variance with Bessel's correction (odd
/// seeds) or log-sum-exp (even seeds), and `argbest_f64`'s argmax (odd)
/// or argmin (even), a NaN in column 2 winning its column.
pub(super) fn walk_demo(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    let mut x: Vec<f64> = rng_f32(seed, 24)
        .into_iter()
        .map(|v| f64::from(v) * 50.0 + 1e-9)
        .collect();
    // A demo's output holds no NaN: the NaN goes to the positions only.
    if name == "argbest_f64" {
        x[4 * 3 + 2] = f64::NAN;
    }
    let xs = &x;
    let column = move |c: usize| (0..6).map(move |r| xs[r * 4 + c]);
    let odd = seed % 2 == 1;
    let (op, expected, tolerance): (u32, Vec<f64>, Vec<f64>) = match name {
        "moments_f64" if odd => {
            let v: Vec<f64> = (0..4)
                .map(|c| {
                    let m = column(c).sum::<f64>() / 6.0;
                    column(c).map(|x| (x - m) * (x - m)).sum::<f64>() / 5.0
                })
                .collect();
            let t = v.iter().map(|v| 4.0 * f64::EPSILON * v.abs()).collect();
            (moment_code::VAR, v, t)
        }
        "moments_f64" => {
            let v: Vec<f64> = (0..4)
                .map(|c| {
                    let m = column(c).fold(f64::NEG_INFINITY, f64::max);
                    m + column(c).map(|x| (x - m).exp()).sum::<f64>().ln()
                })
                .collect();
            let t = v.iter().map(|v| 8.0 * f64::EPSILON * v.abs()).collect();
            (MOMENT_LOGSUMEXP, v, t)
        }
        "argbest_f64" => {
            let v: Vec<f64> = (0..4)
                .flat_map(|c| {
                    let mut best = 0;
                    for r in 1..6 {
                        let (b, v) = (x[best * 4 + c], x[r * 4 + c]);
                        let better = if odd { v > b } else { v < b };
                        if !b.is_nan() && (v.is_nan() || better) {
                            best = r;
                        }
                    }
                    [best as f64, 0.0]
                })
                .collect();
            let t = vec![0.0; 8];
            (u32::from(!odd), v, t)
        }
        _ => return None,
    };
    let out = if name == "argbest_f64" {
        Buffer::from_u32(&[0; 8])
    } else {
        Buffer::from_f64(&[0.0; 4])
    };
    let mut args = vec![
        Arg::Buffer(Buffer::from_f64(&x)),
        Arg::Buffer(out),
        Arg::Buffer(Buffer::from_u32(&[6, 4])),
        Arg::Buffer(Buffer::from_i32(&[4, 1])),
        Arg::Buffer(Buffer::from_u32(&[1, 0])),
        Arg::Scalar(Value::U32(2)),
        Arg::Scalar(Value::U32(4)),
        Arg::Scalar(Value::U32(6)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
    ];
    if name == "moments_f64" {
        args.push(Arg::Scalar(Value::F64(1.0)));
    }
    Some(Demo {
        launch: LaunchConfig {
            grid: Dim3::x(4u32.div_ceil(block.count() as u32)),
            block,
        },
        args,
        output: 1,
        expected,
        tolerance,
        summary: format!("{name} over dim 0 of [6,4] f64"),
    })
}

/// The demo of `softmax_f64`: softmax (odd seeds) or log-softmax (even)
/// along the rows of a transposed `[5, 6]` f64 view, values in
/// `[-300, 300)`, within a few ulps of the reference's passes.
pub(super) fn softmax_demo(block: Dim3, seed: u64) -> Demo {
    let log = seed % 2 == 0;
    let x: Vec<f64> = rng_f32(seed, 30)
        .into_iter()
        .map(|v| f64::from(v) * 300.0 + 1e-9)
        .collect();
    let mut expected = Vec::new();
    for r in 0..5usize {
        let row: Vec<f64> = (0..6).map(|c| x[c * 5 + r]).collect();
        let m = row.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let s: f64 = row.iter().map(|v| (v - m).exp()).sum();
        expected.extend(row.iter().map(|v| {
            if log {
                (v - m) - s.ln()
            } else {
                (v - m).exp() / s
            }
        }));
    }
    let tolerance = expected
        .iter()
        .map(|e: &f64| 8.0 * f64::EPSILON * e.abs().max(1.0))
        .collect();
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(5u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f64(&x)),
            Arg::Buffer(Buffer::from_f64(&[0.0; 30])),
            Arg::Buffer(Buffer::from_u32(&[5, 6])),
            Arg::Buffer(Buffer::from_i32(&[1, 5])),
            Arg::Scalar(Value::U32(2)),
            Arg::Scalar(Value::U32(1)),
            Arg::Scalar(Value::U32(5)),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::Bool(log)),
        ],
        output: 1,
        expected,
        tolerance,
        summary: format!(
            "{} along the rows of a transposed [5,6] f64 view",
            if log { "log-softmax" } else { "softmax" }
        ),
    }
}
