//! Arithmetic and logical binary operations, scalar forms and operators.

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::Tensor;

use crate::common::{t, variants};
use crate::{assert_float, assert_ints};

type Op = fn(&Tensor, &Tensor) -> Result<Tensor>;

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

const A: [f64; 6] = [-2.0, -0.5, 0.0, 0.25, 1.0, 3.0];
const B: [f64; 6] = [0.5, 2.0, -1.0, 4.0, -3.0, 2.0];

fn float_cases() -> Vec<(&'static str, Op, [f64; 6])> {
    vec![
        ("add", |a, b| a.add(b), [-1.5, 1.5, -1.0, 4.25, -2.0, 5.0]),
        ("sub", |a, b| a.sub(b), [-2.5, -2.5, 1.0, -3.75, 4.0, 1.0]),
        ("mul", |a, b| a.mul(b), [-1.0, -1.0, -0.0, 1.0, -3.0, 6.0]),
        (
            "div",
            |a, b| a.div(b),
            [-4.0, -0.25, -0.0, 0.0625, -0.3333333333333333, 1.5],
        ),
        // (-2)^0.5 is NaN; 0^-1 is inf.
        (
            "pow",
            |a, b| a.pow(b),
            [NAN, 0.25, INF, 0.00390625, 1.0, 9.0],
        ),
        (
            "maximum",
            |a, b| a.maximum(b),
            [0.5, 2.0, 0.0, 4.0, 1.0, 3.0],
        ),
        (
            "minimum",
            |a, b| a.minimum(b),
            [-2.0, -0.5, -1.0, 0.25, -3.0, 2.0],
        ),
        // The sign of the divisor: -0.5 rem 2 = 1.5, 1 rem -3 = -2, and a
        // zero remainder takes the divisor's sign (0 rem -1 = -0.0).
        ("rem", |a, b| a.rem(b), [0.0, 1.5, -0.0, 0.25, -2.0, 1.0]),
    ]
}

#[test]
fn float_ops_on_every_float_dtype_and_layout() {
    for dtype in DType::FLOATS {
        let a_variants = variants(&A, &[2, 3], dtype);
        let b_variants = variants(&B, &[2, 3], dtype);
        // Each layout of `a` against the same layout of `b`, and against a
        // contiguous `b`.
        for ((la, a), (lb, b)) in a_variants.iter().zip(&b_variants) {
            for (name, op, expected) in float_cases() {
                for (b, lb) in [(b, *lb), (&b_variants[0].1, "contiguous")] {
                    let y = op(a, b).unwrap();
                    assert_eq!(y.dtype(), dtype);
                    assert_float(&y, &expected, &[2, 3], &format!("{name} ({la} x {lb})"));
                }
            }
        }
    }
}

#[test]
fn float_special_values() {
    let a = [1.0, -1.0, 0.0, 1.0, INF, NAN, 1.0, -0.0, 0.0];
    let b = [0.0, 0.0, 0.0, -0.0, -INF, 1.0, NAN, 0.0, -0.0];
    let cases: [(&str, Op, [f64; 9]); 6] = [
        (
            "add",
            |a, b| a.add(b),
            [1.0, -1.0, 0.0, 1.0, NAN, NAN, NAN, 0.0, 0.0],
        ),
        (
            "div",
            |a, b| a.div(b),
            [INF, -INF, NAN, -INF, NAN, NAN, NAN, NAN, NAN],
        ),
        (
            "maximum",
            |a, b| a.maximum(b),
            [1.0, 0.0, 0.0, 1.0, INF, NAN, NAN, 0.0, 0.0],
        ),
        (
            "minimum",
            |a, b| a.minimum(b),
            [0.0, -1.0, 0.0, -0.0, -INF, NAN, NAN, -0.0, -0.0],
        ),
        // IEEE pow: x^±0 = 1 for any x, NaN^0 = 1 and 1^NaN = 1.
        (
            "pow",
            |a, b| a.pow(b),
            [1.0, 1.0, 1.0, 1.0, 0.0, NAN, 1.0, 1.0, 1.0],
        ),
        // Every float remainder by a zero, and of an infinity, is NaN.
        ("rem", |a, b| a.rem(b), [NAN; 9]),
    ];
    for dtype in DType::FLOATS {
        let x = t(&a, &[9], dtype);
        let y = t(&b, &[9], dtype);
        for (name, op, expected) in cases {
            assert_float(&op(&x, &y).unwrap(), &expected, &[9], name);
        }
    }
    // The remainder against infinite divisors, and of an infinite dividend.
    let x = t(&[5.0, -5.0, -5.0, 5.0, INF], &[5], DType::F64);
    let y = t(&[INF, INF, -INF, -INF, 2.0], &[5], DType::F64);
    assert_float(
        &x.rem(&y).unwrap(),
        &[5.0, INF, -5.0, -INF, NAN],
        &[5],
        "rem by inf",
    );
    // pow of a negative base needs an integral exponent.
    let x = t(&[-8.0, -8.0], &[2], DType::F64);
    let y = t(&[1.0 / 3.0, 3.0], &[2], DType::F64);
    assert_float(
        &x.pow(&y).unwrap(),
        &[NAN, -512.0],
        &[2],
        "pow of a negative base",
    );
}

#[test]
fn signed_integer_ops() {
    let a = [7.0, -7.0, 7.0, -7.0, 5.0, 0.0];
    let b = [2.0, 2.0, -2.0, -2.0, 0.0, 3.0];
    let cases: [(&str, Op, [i64; 6]); 8] = [
        ("add", |a, b| a.add(b), [9, -5, 5, -9, 5, 3]),
        ("sub", |a, b| a.sub(b), [5, -9, 9, -5, 5, -3]),
        ("mul", |a, b| a.mul(b), [14, -14, -14, 14, 0, 0]),
        // Floor division; x div 0 = 0.
        ("div", |a, b| a.div(b), [3, -4, -4, 3, 0, 0]),
        // Sign of the divisor; x rem 0 = x.
        ("rem", |a, b| a.rem(b), [1, 1, -1, -1, 5, 0]),
        ("maximum", |a, b| a.maximum(b), [7, 2, 7, -2, 5, 3]),
        ("minimum", |a, b| a.minimum(b), [2, -7, -2, -7, 0, 0]),
        // A negative exponent truncates toward zero: 7^-2 = 0.
        ("pow", |a, b| a.pow(b), [49, 49, 0, 0, 1, 0]),
    ];
    for dtype in [DType::I32, DType::I64] {
        let bs = variants(&b, &[3, 2], dtype);
        for ((la, x), (lb, y)) in variants(&a, &[3, 2], dtype).iter().zip(&bs) {
            for (name, op, expected) in cases {
                let z = op(x, y).unwrap();
                assert_eq!(z.dtype(), dtype);
                assert_ints(&z, &expected, &[3, 2], &format!("{name} ({la} x {lb})"));
            }
        }
    }
}

#[test]
fn integer_overflow_wraps() {
    let dev = Device::Reference;
    let a = Tensor::from_vec(vec![i32::MAX, i32::MIN, i32::MIN, i32::MAX, 2], [5], dev).unwrap();
    let b = Tensor::from_vec(vec![1i32, 1, -1, 2, 31], [5], dev).unwrap();
    let v = |r: Result<Tensor>| r.unwrap().to_vec::<i32>().unwrap();
    assert_eq!(
        v(a.add(&b)),
        vec![i32::MIN, i32::MIN + 1, i32::MAX, i32::MIN + 1, 33]
    );
    assert_eq!(
        v(a.sub(&b)),
        vec![i32::MAX - 1, i32::MAX, i32::MIN + 1, i32::MAX - 2, -29]
    );
    assert_eq!(v(a.mul(&b)), vec![i32::MAX, i32::MIN, i32::MIN, -2, 62]);
    assert_eq!(
        v(a.div(&b)),
        vec![i32::MAX, i32::MIN, i32::MIN, i32::MAX / 2, 0]
    );
    assert_eq!(v(a.rem(&b)), vec![0, 0, 0, 1, 2]);
    // 2^31 wraps to i32::MIN.
    assert_eq!(v(a.pow(&b))[4], i32::MIN);

    let a = Tensor::from_vec(vec![i64::MIN, i64::MAX, -1, 1, 0], [5], dev).unwrap();
    let b = Tensor::from_vec(vec![-1i64, 1, -3, -5, -1], [5], dev).unwrap();
    let v = |r: Result<Tensor>| r.unwrap().to_vec::<i64>().unwrap();
    assert_eq!(v(a.div(&b))[0], i64::MIN);
    assert_eq!(v(a.add(&b))[1], i64::MIN);
    // (-1)^-3 = -1, 1^-5 = 1, 0^-1 = 0 (as division by zero).
    assert_eq!(&v(a.pow(&b))[2..], &[-1, 1, 0]);
}

#[test]
fn unsigned_ops() {
    let a = [7.0, 200.0, 5.0, 0.0];
    let b = [2.0, 100.0, 0.0, 3.0];
    let cases: [(&str, Op, [i64; 4]); 8] = [
        ("add", |a, b| a.add(b), [9, 44, 5, 3]),
        ("sub", |a, b| a.sub(b), [5, 100, 5, 253]),
        ("mul", |a, b| a.mul(b), [14, 32, 0, 0]),
        ("div", |a, b| a.div(b), [3, 2, 0, 0]),
        ("rem", |a, b| a.rem(b), [1, 0, 5, 0]),
        ("maximum", |a, b| a.maximum(b), [7, 200, 5, 3]),
        ("minimum", |a, b| a.minimum(b), [2, 100, 0, 0]),
        // 200^100 = 0 (mod 256): 200 = 8 * 25 and 8^100 is a multiple of 256.
        ("pow", |a, b| a.pow(b), [49, 0, 1, 0]),
    ];
    let bs = variants(&b, &[2, 2], DType::U8);
    for ((la, x), (lb, y)) in variants(&a, &[2, 2], DType::U8).iter().zip(&bs) {
        for (name, op, expected) in cases {
            assert_ints(
                &op(x, y).unwrap(),
                &expected,
                &[2, 2],
                &format!("{name} ({la} x {lb})"),
            );
        }
    }
}

#[test]
fn logical_ops() {
    let a = [0.0, 0.0, 1.0, 1.0];
    let b = [0.0, 1.0, 0.0, 1.0];
    let cases: [(&str, Op, [i64; 4]); 3] = [
        ("and", |a, b| a.logical_and(b), [0, 0, 0, 1]),
        ("or", |a, b| a.logical_or(b), [0, 1, 1, 1]),
        ("xor", |a, b| a.logical_xor(b), [0, 1, 1, 0]),
    ];
    let bs = variants(&b, &[2, 2], DType::Bool);
    for ((la, x), (lb, y)) in variants(&a, &[2, 2], DType::Bool).iter().zip(&bs) {
        for (name, op, expected) in cases {
            let z = op(x, y).unwrap();
            assert_eq!(z.dtype(), DType::Bool);
            assert_ints(&z, &expected, &[2, 2], &format!("{name} ({la} x {lb})"));
        }
    }
}

#[test]
fn broadcasting() {
    let col = [10.0, 20.0];
    let row = [1.0, 2.0, 3.0];
    for (lc, c) in variants(&col, &[2, 1], DType::F32) {
        for (lr, r) in variants(&row, &[3], DType::F32) {
            let what = format!("{lc} + {lr}");
            let sum = c.add(&r).unwrap();
            assert_float(&sum, &[11.0, 12.0, 13.0, 21.0, 22.0, 23.0], &[2, 3], &what);
            // Broadcasting works from either side.
            let diff = r.sub(&c).unwrap();
            assert_float(
                &diff,
                &[-9.0, -8.0, -7.0, -19.0, -18.0, -17.0],
                &[2, 3],
                &what,
            );
        }
    }
    // Explicit stride-0 inputs on both sides.
    let a = t(&row, &[3], DType::I32).broadcast_to([2, 3]).unwrap();
    let b = t(&col, &[2, 1], DType::I32).broadcast_to([2, 3]).unwrap();
    assert_eq!(
        (a.strides(), b.strides()),
        (&[0usize, 1][..], &[1usize, 0][..])
    );
    assert_ints(
        &a.mul(&b).unwrap(),
        &[10, 20, 30, 20, 40, 60],
        &[2, 3],
        "stride-0 mul",
    );

    // Rank 0 against rank 2, both ways, and rank 0 against rank 0.
    let s = Tensor::scalar(2.0f64, Device::Reference).unwrap();
    let m = t(&[1.0, 2.0, 3.0, 4.0], &[2, 2], DType::F64);
    assert_float(
        &m.pow(&s).unwrap(),
        &[1.0, 4.0, 9.0, 16.0],
        &[2, 2],
        "m ^ scalar",
    );
    assert_float(
        &s.pow(&m).unwrap(),
        &[2.0, 4.0, 8.0, 16.0],
        &[2, 2],
        "scalar ^ m",
    );
    assert_float(&s.mul(&s).unwrap(), &[4.0], &[], "scalar * scalar");

    // Zero-size dims broadcast like any other extent (1 against 0 gives 0).
    for (l, r, out) in [
        (&[0, 3][..], &[1, 3][..], &[0, 3][..]),
        (&[2, 0][..], &[2, 1][..], &[2, 0][..]),
        (&[0][..], &[][..], &[0][..]),
        (&[3, 1, 0][..], &[4, 1][..], &[3, 4, 0][..]),
    ] {
        let a = Tensor::zeros(l, DType::F32, Device::Reference).unwrap();
        let b = Tensor::ones(r, DType::F32, Device::Reference).unwrap();
        let y = a.add(&b).unwrap();
        assert_eq!(y.dims(), out, "{l:?} + {r:?}");
        assert_eq!(y.numel(), 0);
    }
    // Size-1 dims.
    let a = t(&[5.0], &[1, 1], DType::F32);
    let b = t(&[2.0], &[1], DType::F32);
    assert_float(&a.div(&b).unwrap(), &[2.5], &[1, 1], "size-1");
}

#[test]
fn scalar_forms() {
    let x = t(&[1.0, 2.0, 4.0], &[3], DType::F32);
    let cases: [(&str, Result<Tensor>, [f64; 3]); 10] = [
        ("add_scalar", x.add_scalar(1.5), [2.5, 3.5, 5.5]),
        ("sub_scalar", x.sub_scalar(1.0), [0.0, 1.0, 3.0]),
        ("rsub_scalar", x.rsub_scalar(1.0), [0.0, -1.0, -3.0]),
        ("mul_scalar", x.mul_scalar(-2.0), [-2.0, -4.0, -8.0]),
        ("div_scalar", x.div_scalar(4.0), [0.25, 0.5, 1.0]),
        ("rdiv_scalar", x.rdiv_scalar(1.0), [1.0, 0.5, 0.25]),
        ("pow_scalar", x.pow_scalar(2.0), [1.0, 4.0, 16.0]),
        ("rem_scalar", x.rem_scalar(3.0), [1.0, 2.0, 1.0]),
        ("maximum_scalar", x.maximum_scalar(2.0), [2.0, 2.0, 4.0]),
        ("minimum_scalar", x.minimum_scalar(2.0), [1.0, 2.0, 2.0]),
    ];
    for (name, y, expected) in cases {
        assert_float(&y.unwrap(), &expected, &[3], name);
    }
    // Into a float dtype the scalar is rounded to nearest: 0.1 in f16 is
    // 0.0999755859375, so 0.1 * 1024 reads back as that times 1024.
    let h = t(&[1024.0], &[1], DType::F16);
    assert_eq!(h.mul_scalar(0.1).unwrap().item().unwrap(), 102.375);

    let i = Tensor::from_vec(vec![7i32, -7], [2], Device::Reference).unwrap();
    let v = |r: Result<Tensor>| r.unwrap().to_vec::<i32>().unwrap();
    assert_eq!(v(i.add_scalar(3.0)), vec![10, -4]);
    assert_eq!(v(i.div_scalar(-2.0)), vec![-4, 3]);
    assert_eq!(v(i.rem_scalar(-2.0)), vec![-1, -1]);
    assert_eq!(v(i.pow_scalar(3.0)), vec![343, -343]);
    assert_eq!(v(i.pow_scalar(-1.0)), vec![0, 0]);
    assert_eq!(v(i.rdiv_scalar(100.0)), vec![14, -15]);
    assert_eq!(v(i.rsub_scalar(0.0)), vec![-7, 7]);
    let big = Tensor::from_vec(vec![1i64], [1], Device::Reference).unwrap();
    assert_eq!(
        big.add_scalar(-9_223_372_036_854_775_808.0)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![i64::MIN + 1],
        "-2^63 is representable in i64"
    );
    let u = Tensor::from_vec(vec![10u8], [1], Device::Reference).unwrap();
    assert_eq!(
        u.add_scalar(255.0).unwrap().to_vec::<u8>().unwrap(),
        vec![9]
    );
}

#[test]
fn operators() {
    let a = t(&[1.0, 2.0], &[2], DType::F64);
    let b = t(&[10.0, 20.0], &[2], DType::F64);
    let check =
        |y: Result<Tensor>, e: [f64; 2], what: &str| assert_float(&y.unwrap(), &e, &[2], what);
    check(&a + &b, [11.0, 22.0], "&a + &b");
    check(a.clone() + b.clone(), [11.0, 22.0], "a + b");
    check(&a + b.clone(), [11.0, 22.0], "&a + b");
    check(a.clone() + &b, [11.0, 22.0], "a + &b");
    check(&b - &a, [9.0, 18.0], "&b - &a");
    check(&a * &b, [10.0, 40.0], "&a * &b");
    check(&b / &a, [10.0, 10.0], "&b / &a");
    check(&a + 1.0, [2.0, 3.0], "&a + 1");
    check(1.0 + &a, [2.0, 3.0], "1 + &a");
    check(&a - 1.0, [0.0, 1.0], "&a - 1");
    check(1.0 - &a, [0.0, -1.0], "1 - &a");
    check(a.clone() - 1.0, [0.0, 1.0], "a - 1");
    check(1.0 - a.clone(), [0.0, -1.0], "1 - a");
    check(&a * 3.0, [3.0, 6.0], "&a * 3");
    check(3.0 * &a, [3.0, 6.0], "3 * &a");
    check(&a / 2.0, [0.5, 1.0], "&a / 2");
    check(2.0 / &a, [2.0, 1.0], "2 / &a");
    check(2.0 / a.clone(), [2.0, 1.0], "2 / a");
    check(-&a, [-1.0, -2.0], "-&a");
    check(-a.clone(), [-1.0, -2.0], "-a");
    // Chaining through `?` in a function returning Result.
    let chained = || -> Result<Tensor> { (&((&a * 2.0)? + &b)? - 1.0)? / 2.0 };
    check(chained(), [5.5, 11.5], "chain");
    // Errors come back as values.
    let f = t(&[1.0], &[1], DType::F32);
    assert!((&a + &f).is_err());
}
