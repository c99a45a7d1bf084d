//! The demos of the math kernels ([`super::math`]): one function each
//! through a strided view, against `f64` on the host. The functions'
//! accuracy over their whole domains is measured in `tests/math.rs`.

use crate::ir::{Dim3, Value};
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, EPS, rng_f32};
use super::math::{binary_math_code, math_code};

/// The demo of `unary_math_strided` (sinh of a transposed view of
/// `[7, 5, 3]`, values in `[-3, 3)`), `binary_math_strided` (atan2 of a
/// `[3, 1, 7]` row broadcast against a `[5, 7]` one) or
/// `logcumsumexp_strided` (along the rows of a transposed `[6, 5]`).
pub(super) fn demo(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    let bt = block.count() as u32;
    let launch = LaunchConfig {
        grid: Dim3::x(105u32.div_ceil(bt)),
        block,
    };
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    let i = |v: i32| Arg::Scalar(Value::I32(v));
    match name {
        "unary_math_strided" => {
            let x: Vec<f32> = rng_f32(seed, 105).iter().map(|v| 3.0 * v).collect();
            let strides = [1i32, 3, 15];
            let mut expected = Vec::new();
            for a in 0..3i32 {
                for b in 0..5i32 {
                    for c in 0..7i32 {
                        let k = a * strides[0] + b * strides[1] + c * strides[2];
                        expected.push(f64::from(x[k as usize]).sinh());
                    }
                }
            }
            // Within 3.5 ulp (the kernel's analysis): 4 ε relative.
            let tolerance = expected.iter().map(|e| 4.0 * EPS * e.abs()).collect();
            Some(Demo {
                launch,
                args: vec![
                    Arg::Buffer(Buffer::from_f32(&x)),
                    Arg::Buffer(Buffer::from_f32(&[0.0; 105])),
                    Arg::Buffer(Buffer::from_u32(&[3, 5, 7])),
                    Arg::Buffer(Buffer::from_i32(&strides)),
                    u(3),
                    u(105),
                    i(0),
                    u(math_code::SINH),
                    Arg::Scalar(Value::F32(0.0)),
                    Arg::Scalar(Value::F32(0.0)),
                ],
                output: 1,
                expected,
                tolerance,
                summary: "sinh over a transposed [7,5,3] view".into(),
            })
        }
        "binary_math_strided" => {
            let a = rng_f32(seed, 21);
            let b = rng_f32(seed + 3, 35);
            let (sa, sb) = ([7i32, 0, 1], [0i32, 7, 1]);
            let mut expected = Vec::new();
            for x in 0..3i32 {
                for y in 0..5i32 {
                    for z in 0..7i32 {
                        let av = f64::from(a[(x * sa[0] + y * sa[1] + z * sa[2]) as usize]);
                        let bv = f64::from(b[(x * sb[0] + y * sb[1] + z * sb[2]) as usize]);
                        expected.push(av.atan2(bv));
                    }
                }
            }
            // Within 2 ulp, and π's rounding: 3 ε relative.
            let tolerance = expected.iter().map(|e| 3.0 * EPS * e.abs()).collect();
            Some(Demo {
                launch,
                args: vec![
                    Arg::Buffer(Buffer::from_f32(&a)),
                    Arg::Buffer(Buffer::from_f32(&b)),
                    Arg::Buffer(Buffer::from_f32(&[0.0; 105])),
                    Arg::Buffer(Buffer::from_u32(&[3, 5, 7])),
                    Arg::Buffer(Buffer::from_i32(&sa)),
                    Arg::Buffer(Buffer::from_i32(&sb)),
                    u(3),
                    u(105),
                    i(0),
                    i(0),
                    u(binary_math_code::ATAN2),
                ],
                output: 2,
                expected,
                tolerance,
                summary: "atan2(a[3,1,7], b[5,7]) broadcast to [3,5,7]".into(),
            })
        }
        "logcumsumexp_strided" => Some(logcumsumexp(block, seed)),
        _ => None,
    }
}

/// `log(e^a + e^b)` as the reference's scan step computes it, in f64.
pub(super) fn log_add_exp(a: f64, b: f64) -> f64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if lo == hi && lo.is_infinite() {
        return a;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// The running log-sum-exp along dim 1 of a `[5, 6]` view of a stored
/// `[6, 5]` (transposed), values in `[-60, 20)` so that early elements
/// lie far below each row's later maximum, a `-∞` in one row.
fn logcumsumexp(block: Dim3, seed: u64) -> Demo {
    let mut x: Vec<f32> = rng_f32(seed, 30).iter().map(|v| 40.0 * v - 20.0).collect();
    x[7] = f32::NEG_INFINITY;
    let mut expected = Vec::new();
    let mut tolerance = Vec::new();
    for r in 0..5usize {
        let row: Vec<f64> = (0..6).map(|c| f64::from(x[c * 5 + r])).collect();
        let big = row
            .iter()
            .filter(|v| v.is_finite())
            .fold(0f64, |m, v| m.max(v.abs()));
        let mut acc = f64::NEG_INFINITY;
        for &v in &row {
            acc = log_add_exp(acc, v);
            expected.push(acc);
            // The conformance bound: n·ε·(6 + |want| + max|x|).
            tolerance.push(6.0 * EPS * (6.0 + acc.abs() + big));
        }
    }
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(5u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&[0.0; 30])),
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
        summary: "running log-sum-exp along the rows of a transposed [5,6] view".into(),
    }
}
