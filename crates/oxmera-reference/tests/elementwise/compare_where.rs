//! Comparisons, `where_` and `masked_fill`.

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::Tensor;

use crate::common::{t, variants};
use crate::{assert_bools, assert_float, assert_ints};

type Cmp = fn(&Tensor, &Tensor) -> Result<Tensor>;

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

const T: bool = true;
const F: bool = false;

#[test]
fn float_comparisons_follow_ieee() {
    let a = [1.0, NAN, -0.0, 2.0, -INF, 3.0];
    let b = [1.0, NAN, 0.0, 1.0, -INF, INF];
    let cases: [(&str, Cmp, [bool; 6]); 6] = [
        ("eq", |a, b| a.eq(b), [T, F, T, F, T, F]),
        ("ne", |a, b| a.ne(b), [F, T, F, T, F, T]),
        ("lt", |a, b| a.lt(b), [F, F, F, F, F, T]),
        ("le", |a, b| a.le(b), [T, F, T, F, T, T]),
        ("gt", |a, b| a.gt(b), [F, F, F, T, F, F]),
        ("ge", |a, b| a.ge(b), [T, F, T, T, T, F]),
    ];
    for dtype in DType::FLOATS {
        let bs = variants(&b, &[2, 3], dtype);
        for ((la, x), (lb, y)) in variants(&a, &[2, 3], dtype).iter().zip(&bs) {
            for (name, op, expected) in cases {
                assert_bools(
                    &op(x, y).unwrap(),
                    &expected,
                    &[2, 3],
                    &format!("{name} [{dtype}] ({la} x {lb})"),
                );
            }
        }
    }
}

#[test]
fn integer_and_bool_comparisons() {
    let a = [1.0, -2.0, 3.0];
    let b = [1.0, 2.0, -3.0];
    for dtype in [DType::I32, DType::I64] {
        for (l, x) in variants(&a, &[3], dtype) {
            let y = t(&b, &[3], dtype);
            assert_bools(&x.eq(&y).unwrap(), &[T, F, F], &[3], &format!("eq {l}"));
            assert_bools(&x.lt(&y).unwrap(), &[F, T, F], &[3], &format!("lt {l}"));
            assert_bools(&x.ge(&y).unwrap(), &[T, F, T], &[3], &format!("ge {l}"));
        }
    }
    // i64 compares exactly, beyond f64's 53 bits.
    let dev = Device::Reference;
    let x = Tensor::from_vec(vec![(1i64 << 62) + 1, i64::MAX], [2], dev).unwrap();
    let y = Tensor::from_vec(vec![1i64 << 62, i64::MAX - 1], [2], dev).unwrap();
    assert_bools(&x.eq(&y).unwrap(), &[F, F], &[2], "i64 eq");
    assert_bools(&x.gt(&y).unwrap(), &[T, T], &[2], "i64 gt");
    // u8 and bool order as numbers: false < true.
    let u = t(&[0.0, 255.0], &[2], DType::U8);
    assert_bools(&u.gt_scalar(100.0).unwrap(), &[F, T], &[2], "u8 gt");
    let p = t(&[0.0, 0.0, 1.0, 1.0], &[4], DType::Bool);
    let q = t(&[0.0, 1.0, 0.0, 1.0], &[4], DType::Bool);
    assert_bools(&p.lt(&q).unwrap(), &[F, T, F, F], &[4], "bool lt");
    assert_bools(&p.eq(&q).unwrap(), &[T, F, F, T], &[4], "bool eq");
}

#[test]
fn scalar_and_broadcast_comparisons() {
    let x = t(&[-1.0, 0.0, 2.0, NAN], &[4], DType::F32);
    assert_bools(&x.eq_scalar(0.0).unwrap(), &[F, T, F, F], &[4], "eq_scalar");
    assert_bools(&x.ne_scalar(0.0).unwrap(), &[T, F, T, T], &[4], "ne_scalar");
    assert_bools(&x.lt_scalar(0.0).unwrap(), &[T, F, F, F], &[4], "lt_scalar");
    assert_bools(&x.le_scalar(0.0).unwrap(), &[T, T, F, F], &[4], "le_scalar");
    assert_bools(&x.gt_scalar(0.0).unwrap(), &[F, F, T, F], &[4], "gt_scalar");
    assert_bools(&x.ge_scalar(0.0).unwrap(), &[F, T, T, F], &[4], "ge_scalar");
    assert_bools(&x.eq_scalar(NAN).unwrap(), &[F; 4], &[4], "eq NaN");
    assert_bools(&x.ne_scalar(NAN).unwrap(), &[T; 4], &[4], "ne NaN");

    let col = t(&[1.0, 2.0], &[2, 1], DType::I64);
    let row = t(&[0.0, 1.0, 2.0], &[3], DType::I64);
    assert_bools(
        &col.le(&row).unwrap(),
        &[F, T, T, F, F, T],
        &[2, 3],
        "broadcast le",
    );
    let empty = Tensor::zeros([0, 3], DType::F32, Device::Reference).unwrap();
    let y = empty.lt(&t(&[1.0, 2.0, 3.0], &[3], DType::F32)).unwrap();
    assert_eq!((y.dims(), y.dtype()), (&[0usize, 3][..], DType::Bool));
}

#[test]
fn where_on_every_layout() {
    let c = [1.0, 0.0, 1.0, 0.0];
    let a = [1.0, 2.0, 3.0, 4.0];
    let b = [10.0, 20.0, NAN, 40.0];
    for dtype in DType::FLOATS {
        let cs = variants(&c, &[2, 2], DType::Bool);
        let bs = variants(&b, &[2, 2], dtype);
        for (((lc, cond), (la, x)), (lb, y)) in cs.iter().zip(variants(&a, &[2, 2], dtype)).zip(&bs)
        {
            let z = Tensor::where_(cond, &x, y).unwrap();
            assert_eq!(z.dtype(), dtype);
            // A NaN not selected does not leak into the result.
            assert_float(
                &z,
                &[1.0, 20.0, 3.0, 40.0],
                &[2, 2],
                &format!("where ({lc}, {la}, {lb})"),
            );
        }
    }
    for dtype in [DType::I32, DType::U8, DType::Bool] {
        let cond = t(&c, &[4], DType::Bool);
        let x = t(&[1.0, 1.0, 0.0, 0.0], &[4], dtype);
        let y = t(&[0.0, 1.0, 1.0, 0.0], &[4], dtype);
        let z = Tensor::where_(&cond, &x, &y).unwrap();
        assert_eq!(z.dtype(), dtype);
        assert_ints(&z, &[1, 1, 0, 0], &[4], "where on integers and bool");
    }
    // i64 values pass through exactly.
    let dev = Device::Reference;
    let cond = Tensor::from_vec(vec![true, false], [2], dev).unwrap();
    let x = Tensor::from_vec(vec![i64::MAX, 0], [2], dev).unwrap();
    let y = Tensor::from_vec(vec![0, i64::MIN + 1], [2], dev).unwrap();
    assert_eq!(
        Tensor::where_(&cond, &x, &y)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![i64::MAX, i64::MIN + 1]
    );
}

#[test]
fn where_broadcasts_three_ways() {
    let cond = t(&[1.0, 0.0], &[2, 1], DType::Bool);
    let a = t(&[1.0, 2.0, 3.0], &[3], DType::F32);
    let b = Tensor::scalar(0.0f32, Device::Reference).unwrap();
    let z = Tensor::where_(&cond, &a, &b).unwrap();
    assert_float(
        &z,
        &[1.0, 2.0, 3.0, 0.0, 0.0, 0.0],
        &[2, 3],
        "where broadcast",
    );
    // The shape grows from any operand, the condition included.
    let cond = t(&[1.0, 0.0, 1.0], &[3, 1, 1], DType::Bool);
    let z = Tensor::where_(&cond, &b, &a).unwrap();
    assert_eq!(z.dims(), &[3, 1, 3]);
    assert_float(
        &z,
        &[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0],
        &[3, 1, 3],
        "where grows",
    );
    // Zero-size and rank 0.
    let empty = Tensor::zeros([0], DType::Bool, Device::Reference).unwrap();
    assert_eq!(
        Tensor::where_(&empty, &a.narrow(0, 0, 0).unwrap(), &b)
            .unwrap()
            .dims(),
        &[0]
    );
    let yes = Tensor::scalar(true, Device::Reference).unwrap();
    let z = Tensor::where_(
        &yes,
        &b,
        &Tensor::scalar(5.0f32, Device::Reference).unwrap(),
    )
    .unwrap();
    assert_eq!((z.rank(), z.item().unwrap()), (0, 0.0));
}

#[test]
fn masked_fill_cases() {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let mask = [1.0, 0.0, 0.0, 0.0, 1.0, 1.0];
    for (lx, v) in variants(&x, &[2, 3], DType::F16) {
        for (lm, m) in variants(&mask, &[2, 3], DType::Bool) {
            let y = v.masked_fill(&m, f64::NEG_INFINITY).unwrap();
            assert_eq!(y.dtype(), DType::F16);
            assert_float(
                &y,
                &[-INF, 2.0, 3.0, 4.0, -INF, -INF],
                &[2, 3],
                &format!("masked_fill ({lx}, {lm})"),
            );
        }
    }
    // A mask that broadcasts along rows, and one along columns.
    let v = t(&x, &[2, 3], DType::I32);
    let row = t(&[0.0, 1.0, 0.0], &[3], DType::Bool);
    assert_ints(
        &v.masked_fill(&row, -1.0).unwrap(),
        &[1, -1, 3, 4, -1, 6],
        &[2, 3],
        "row mask",
    );
    let col = t(&[0.0, 1.0], &[2, 1], DType::Bool);
    assert_ints(
        &v.masked_fill(&col, 0.0).unwrap(),
        &[1, 2, 3, 0, 0, 0],
        &[2, 3],
        "column mask",
    );
    let all = Tensor::scalar(true, Device::Reference).unwrap();
    assert_ints(
        &v.masked_fill(&all, 7.0).unwrap(),
        &[7; 6],
        &[2, 3],
        "scalar mask",
    );
    // Zero-size.
    let e = Tensor::zeros([0, 3], DType::F32, Device::Reference).unwrap();
    assert_eq!(e.masked_fill(&row, 1.0).unwrap().dims(), &[0, 3]);
}
