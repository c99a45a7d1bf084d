//! Reductions and softmax: hand-computed cases on every layout variant,
//! broadcast, zero-size, size-1 and rank-0 inputs; every error by variant;
//! and the laws (linearity of sum, sums over dims compose, softmax sums
//! to 1, log_softmax is log of softmax).

mod common;
use common::*;

use std::sync::Arc;

use oxmera_core::{DType, Device, Error, Layout};
use oxmera_tensor::{HostBuffer, Storage, Tensor};
use proptest::prelude::*;

const FLOATS: [DType; 4] = [DType::F16, DType::BF16, DType::F32, DType::F64];

/// `[[1, 2, 3], [4, 5, 6]]`
const M23: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];

/// The values `0..24` as a `[2, 3, 4]` tensor: element `[i][j][k]` is
/// `12i + 4j + k`, which makes sums over any dims easy to work out.
fn iota24() -> Vec<f64> {
    (0..24).map(f64::from).collect()
}

fn i64s(x: &Tensor) -> Vec<i64> {
    x.to_vec::<i64>().unwrap()
}

fn bools(x: &Tensor) -> Vec<bool> {
    x.to_vec::<bool>().unwrap()
}

#[test]
fn sum_over_each_set_of_dims_on_every_layout() {
    for dtype in [DType::F32, DType::F64, DType::I32, DType::U8] {
        let out_dtype = if dtype.is_float() { dtype } else { DType::I64 };
        for (name, x) in variants(&M23, &[2, 3], dtype) {
            let ctx = format!("{name} {dtype}");
            let s = x.sum(&[0], false).unwrap();
            assert_eq!(s.dtype(), out_dtype, "{ctx}");
            assert_close(&s, &[5.0, 7.0, 9.0], &[3], 0.0);
            assert_close(&x.sum(&[1], false).unwrap(), &[6.0, 15.0], &[2], 0.0);
            assert_close(&x.sum(&[-1], true).unwrap(), &[6.0, 15.0], &[2, 1], 0.0);
            assert_close(&x.sum(&[1, 0], false).unwrap(), &[21.0], &[], 0.0);
            assert_close(&x.sum(&[0, 1], true).unwrap(), &[21.0], &[1, 1], 0.0);
            assert_close(&x.sum_all().unwrap(), &[21.0], &[], 0.0);
        }
        // [i][j][k] = 12i + 4j + k. Over i and k: Σ_i 48i + 8·4j + 2·Σ_k k = 48 + 32j + 12.
        for (name, x) in variants(&iota24(), &[2, 3, 4], dtype) {
            let s = x.sum(&[0, 2], false).unwrap();
            assert_close(&s, &[60.0, 92.0, 124.0], &[3], 0.0);
            assert_eq!(s.dtype(), out_dtype, "{name}");
            // Over j: 3·12i + 4·(0+1+2) + 3k = 36i + 12 + 3k.
            let s = x.sum(&[1], true).unwrap();
            let want: Vec<f64> = (0..2)
                .flat_map(|i| (0..4).map(move |k| f64::from(36 * i + 12 + 3 * k)))
                .collect();
            assert_close(&s, &want, &[2, 1, 4], 0.0);
            assert_close(&x.sum_all().unwrap(), &[276.0], &[], 0.0);
        }
    }
}

#[test]
fn mean_prod_max_min_on_every_layout() {
    for dtype in FLOATS {
        for (name, x) in variants(&M23, &[2, 3], dtype) {
            let ctx = format!("{name} {dtype}");
            let m = x.mean(&[1], false).unwrap();
            assert_eq!(m.dtype(), dtype, "{ctx}");
            assert_close(&m, &[2.0, 5.0], &[2], 0.0);
            assert_close(&x.mean(&[0], true).unwrap(), &[2.5, 3.5, 4.5], &[1, 3], 0.0);
            assert_close(&x.mean_all().unwrap(), &[3.5], &[], 0.0);
            assert_close(&x.prod(&[0], false).unwrap(), &[4.0, 10.0, 18.0], &[3], 0.0);
            assert_close(&x.prod_all().unwrap(), &[720.0], &[], 0.0);
            assert_close(&x.max(&[1], false).unwrap(), &[3.0, 6.0], &[2], 0.0);
            assert_close(&x.min(&[0], false).unwrap(), &[1.0, 2.0, 3.0], &[3], 0.0);
            assert_close(&x.max_all().unwrap(), &[6.0], &[], 0.0);
            assert_close(&x.min_all().unwrap(), &[1.0], &[], 0.0);
        }
    }
    for dtype in [DType::I32, DType::U8, DType::I64] {
        for (name, x) in variants(&M23, &[2, 3], dtype) {
            let p = x.prod(&[1], false).unwrap();
            assert_eq!(p.dtype(), DType::I64, "{name}");
            assert_eq!(i64s(&p), vec![6, 120]);
            let m = x.max(&[0], true).unwrap();
            assert_eq!(m.dtype(), dtype, "{name}: max keeps the dtype");
            assert_close(&m, &[4.0, 5.0, 6.0], &[1, 3], 0.0);
            assert_close(&x.min(&[1], false).unwrap(), &[1.0, 4.0], &[2], 0.0);
        }
    }
    for (name, x) in variants(&iota24(), &[2, 3, 4], DType::F32) {
        // max over j and k of 12i + 4j + k is 12i + 11; min over i, j is k.
        assert_close(&x.max(&[1, 2], false).unwrap(), &[11.0, 23.0], &[2], 0.0);
        assert_close(
            &x.min(&[0, 1], false).unwrap(),
            &[0.0, 1.0, 2.0, 3.0],
            &[4],
            0.0,
        );
        // Mean over i and k of 12i + 4j + k: 6 + 4j + 1.5.
        let m = x.mean(&[2, 0], false).unwrap();
        assert_close(&m, &[7.5, 11.5, 15.5], &[3], 0.0);
        assert_eq!(m.dims(), &[3], "{name}");
    }
}

#[test]
fn argmax_argmin_first_index_on_every_layout() {
    // [[3, 7, 7],
    //  [1, 0, 1]]
    let v = [3.0, 7.0, 7.0, 1.0, 0.0, 1.0];
    for dtype in [DType::F32, DType::F64, DType::I32, DType::U8, DType::BF16] {
        for (name, x) in variants(&v, &[2, 3], dtype) {
            let ctx = format!("{name} {dtype}");
            let a = x.argmax(1, false).unwrap();
            assert_eq!(a.dtype(), DType::I64, "{ctx}");
            assert_eq!(i64s(&a), vec![1, 0], "{ctx}: ties go to the first index");
            assert_eq!(i64s(&x.argmin(1, false).unwrap()), vec![0, 1], "{ctx}");
            assert_eq!(i64s(&x.argmax(0, false).unwrap()), vec![0, 0, 0], "{ctx}");
            let am = x.argmin(-2, true).unwrap();
            assert_eq!(am.dims(), &[1, 3]);
            assert_eq!(i64s(&am), vec![1, 1, 1], "{ctx}");
            // Flattened: 7 first appears at 1, 0 at 4.
            let all = x.argmax_all().unwrap();
            assert_eq!(all.dims(), &[] as &[usize]);
            assert_eq!(i64s(&all), vec![1], "{ctx}");
            assert_eq!(i64s(&x.argmin_all().unwrap()), vec![4], "{ctx}");
        }
    }
    // Flattened index over a 3-D tensor with its maximum in the last place.
    for (name, x) in variants(&iota24(), &[2, 3, 4], DType::F32) {
        assert_eq!(i64s(&x.argmax_all().unwrap()), vec![23], "{name}");
        assert_eq!(i64s(&x.argmin_all().unwrap()), vec![0], "{name}");
        assert_eq!(i64s(&x.argmax(1, false).unwrap()), vec![2; 8], "{name}");
    }
    // Bool: the first true.
    let b = Tensor::from_vec(vec![false, true, true, false], [4], Device::Reference).unwrap();
    assert_eq!(i64s(&b.argmax(0, false).unwrap()), vec![1]);
    assert_eq!(i64s(&b.argmin(0, false).unwrap()), vec![0]);
}

#[test]
fn var_std_with_corrections_on_every_layout() {
    for dtype in [DType::F32, DType::F64] {
        for (name, x) in variants(&M23, &[2, 3], dtype) {
            let ctx = format!("{name} {dtype}");
            // Rows 1,2,3 and 4,5,6: squared deviations 1 + 0 + 1 = 2.
            assert_close(&x.var(&[1], 1.0, false).unwrap(), &[1.0, 1.0], &[2], 0.0);
            let pop = x.var(&[1], 0.0, true).unwrap();
            assert_close(&pop, &[2.0 / 3.0; 2], &[2, 1], 1e-7);
            assert_close(&x.std(&[1], 1.0, false).unwrap(), &[1.0, 1.0], &[2], 0.0);
            // Columns (1, 4): deviations ±1.5, squares 4.5.
            assert_close(&x.var(&[0], 1.0, false).unwrap(), &[4.5; 3], &[3], 0.0);
            assert_close(&x.std(&[0], 0.0, false).unwrap(), &[1.5; 3], &[3], 0.0);
            // All six: mean 3.5, squares 6.25+2.25+0.25 twice = 17.5.
            assert_close(&x.var_all(1.0).unwrap(), &[3.5], &[], 0.0);
            assert_close(
                &x.std_all(1.5).unwrap(),
                &[(17.5f64 / 4.5).sqrt()],
                &[],
                1e-6,
            );
            assert_eq!(x.var_all(1.0).unwrap().dtype(), dtype, "{ctx}");
        }
    }
}

#[test]
fn var_when_correction_reaches_the_count() {
    let x = f32t(&[1.0, 3.0], &[2]);
    // Divisor max(0, 2 - 2) = 0 with nonzero squares: +inf.
    assert_close(
        &x.var(&[0], 2.0, false).unwrap(),
        &[f64::INFINITY],
        &[],
        0.0,
    );
    assert_close(
        &x.std(&[0], 3.0, false).unwrap(),
        &[f64::INFINITY],
        &[],
        0.0,
    );
    // One element with correction 1: 0/0.
    let one = f32t(&[4.0], &[1]);
    assert_close(&one.var_all(1.0).unwrap(), &[f64::NAN], &[], 0.0);
    // Zero deviations and a correction beyond the count: 0/0 again.
    let same = f32t(&[5.0, 5.0], &[2]);
    assert_close(&same.std_all(7.0).unwrap(), &[f64::NAN], &[], 0.0);
    // A negative correction is allowed: divisor 2 + 2.
    assert_close(&x.var_all(-2.0).unwrap(), &[0.5], &[], 0.0);
}

#[test]
fn logsumexp_is_stable_and_handles_infinities() {
    for dtype in [DType::F32, DType::F64] {
        for (name, x) in variants(&M23, &[2, 3], dtype) {
            let want = |a: f64| a + 2.0 + (1.0 + (-1.0f64).exp() + (-2.0f64).exp()).ln();
            let l = x.logsumexp(&[1], false).unwrap();
            assert_close(&l, &[want(1.0), want(4.0)], &[2], 1e-6);
            assert_eq!(l.dtype(), dtype, "{name}");
        }
    }
    let inf = f64::INFINITY;
    // Naively exp(1000) overflows to inf; shifted it is 1000 + ln 2.
    let big = t(&[1000.0, 1000.0], &[2], DType::F64);
    assert_close(
        &big.logsumexp_all().unwrap(),
        &[1000.0 + 2f64.ln()],
        &[],
        1e-12,
    );
    let rows = t(
        &[-inf, -inf, 0.0, -inf, inf, 1.0, f64::NAN, 1.0],
        &[4, 2],
        DType::F64,
    );
    assert_close(
        &rows.logsumexp(&[1], false).unwrap(),
        &[-inf, 0.0, inf, f64::NAN],
        &[4],
        0.0,
    );
}

#[test]
fn all_any_on_every_dtype_and_layout() {
    // [[1, 0, 2],
    //  [3, 4, 5]]
    let v = [1.0, 0.0, 2.0, 3.0, 4.0, 5.0];
    for dtype in [
        DType::F32,
        DType::F64,
        DType::I32,
        DType::U8,
        DType::Bool,
        DType::F16,
    ] {
        for (name, x) in variants(&v, &[2, 3], dtype) {
            let ctx = format!("{name} {dtype}");
            let a = x.all(&[1], false).unwrap();
            assert_eq!(a.dtype(), DType::Bool, "{ctx}");
            assert_eq!(bools(&a), vec![false, true], "{ctx}");
            assert_eq!(bools(&x.any(&[0], false).unwrap()), vec![true; 3], "{ctx}");
            assert_eq!(
                bools(&x.all(&[0], true).unwrap()),
                vec![true, false, true],
                "{ctx}"
            );
            assert_eq!(bools(&x.all_all().unwrap()), vec![false], "{ctx}");
            assert_eq!(bools(&x.any_all().unwrap()), vec![true], "{ctx}");
        }
    }
    // Fractions are nonzero (not truncated to 0), and NaN is nonzero.
    let f = t(&[0.5, f64::NAN, 0.0], &[3], DType::F32);
    assert_eq!(bools(&f.all(&[0], false).unwrap()), vec![false]);
    assert_eq!(
        bools(&f.narrow(0, 0, 2).unwrap().all_all().unwrap()),
        vec![true]
    );
    assert_eq!(
        bools(&f.narrow(0, 2, 1).unwrap().any_all().unwrap()),
        vec![false]
    );
}

#[test]
fn dtype_rules_of_sum_and_prod() {
    // bool counts.
    let b = Tensor::from_vec(vec![true, true, false, true], [4], Device::Reference).unwrap();
    let s = b.sum_all().unwrap();
    assert_eq!(s.dtype(), DType::I64);
    assert_eq!(i64s(&s), vec![3]);
    // u8 would overflow at 255; the i64 result does not.
    let u = t(&[200.0, 100.0, 255.0], &[3], DType::U8);
    assert_eq!(i64s(&u.sum_all().unwrap()), vec![555]);
    // i64 itself wraps.
    let big = Tensor::from_vec(vec![i64::MAX, 1], [2], Device::Reference).unwrap();
    assert_eq!(i64s(&big.sum_all().unwrap()), vec![i64::MIN]);
    assert_eq!(i64s(&big.prod_all().unwrap()), vec![i64::MAX]);
    let two = Tensor::from_vec(vec![i64::MAX, 2], [2], Device::Reference).unwrap();
    assert_eq!(i64s(&two.prod_all().unwrap()), vec![-2]);
    // f16 keeps its dtype and is accumulated in f64, rounded once: adding
    // 1 to 2048 one step at a time in f16 would round back to 2048 each
    // time (the spacing there is 2), giving 2048 instead of 2050.
    let h = t(&[2048.0, 1.0, 1.0], &[3], DType::F16);
    let hs = h.sum_all().unwrap();
    assert_eq!(hs.dtype(), DType::F16);
    assert_eq!(hs.item().unwrap(), 2050.0);
    // max and min keep every dtype, bool included.
    let bm = b.max_all().unwrap();
    assert_eq!(bm.dtype(), DType::Bool);
    assert_eq!(bools(&bm), vec![true]);
    assert_eq!(bools(&b.min_all().unwrap()), vec![false]);
}

#[test]
fn nan_propagates_through_max_min_and_wins_argmax_argmin() {
    let nan = f64::NAN;
    // [[1, NaN, 3, NaN],
    //  [4,  2,  8,  1]]
    let v = [1.0, nan, 3.0, nan, 4.0, 2.0, 8.0, 1.0];
    for dtype in [DType::F32, DType::F64, DType::F16] {
        for (name, x) in variants(&v, &[2, 4], dtype) {
            let ctx = format!("{name} {dtype}");
            assert_close(&x.max(&[1], false).unwrap(), &[nan, 8.0], &[2], 0.0);
            assert_close(&x.min(&[1], false).unwrap(), &[nan, 1.0], &[2], 0.0);
            assert_close(
                &x.max(&[0], false).unwrap(),
                &[4.0, nan, 8.0, nan],
                &[4],
                0.0,
            );
            assert!(x.max_all().unwrap().item().unwrap().is_nan(), "{ctx}");
            assert_eq!(i64s(&x.argmax(1, false).unwrap()), vec![1, 2], "{ctx}");
            assert_eq!(i64s(&x.argmin(1, false).unwrap()), vec![1, 3], "{ctx}");
            assert_eq!(
                i64s(&x.argmax(0, false).unwrap()),
                vec![1, 0, 1, 0],
                "{ctx}"
            );
            assert_eq!(i64s(&x.argmin_all().unwrap()), vec![1], "{ctx}");
            assert_close(&x.sum(&[1], false).unwrap(), &[nan, 15.0], &[2], 0.0);
        }
    }
    // A NaN in the first place also wins.
    let first = t(&[nan, 9.0, -9.0], &[3], DType::F32);
    assert_eq!(i64s(&first.argmax_all().unwrap()), vec![0]);
    assert_eq!(i64s(&first.argmin_all().unwrap()), vec![0]);
}

#[test]
fn empty_extents_give_identities_or_errors() {
    // Shape [2, 0]: each row is empty.
    let x = f32t(&[], &[2, 0]);
    assert_close(&x.sum(&[1], false).unwrap(), &[0.0, 0.0], &[2], 0.0);
    assert_close(&x.prod(&[1], true).unwrap(), &[1.0, 1.0], &[2, 1], 0.0);
    assert_close(&x.mean(&[1], false).unwrap(), &[f64::NAN; 2], &[2], 0.0);
    assert_close(&x.var(&[1], 0.0, false).unwrap(), &[f64::NAN; 2], &[2], 0.0);
    assert_close(&x.std(&[1], 1.0, false).unwrap(), &[f64::NAN; 2], &[2], 0.0);
    assert_close(
        &x.logsumexp(&[1], false).unwrap(),
        &[f64::NEG_INFINITY; 2],
        &[2],
        0.0,
    );
    assert_eq!(bools(&x.all(&[1], false).unwrap()), vec![true, true]);
    assert_eq!(bools(&x.any(&[1], false).unwrap()), vec![false, false]);
    assert_close(&x.sum_all().unwrap(), &[0.0], &[], 0.0);
    let e = x.max(&[1], false).unwrap_err();
    assert_eq!(
        e,
        Error::EmptyReduction {
            op: "max",
            shape: [2, 0].into(),
            dims: vec![1]
        }
    );
    assert_eq!(
        e.to_string(),
        "max: cannot reduce over an empty dimension: shape [2, 0], dims [1]"
    );
    for r in [
        x.min(&[1], true),
        x.argmax(1, false),
        x.argmin(-1, true),
        x.max_all(),
        x.argmax_all(),
        x.min(&[0, 1], false),
    ] {
        assert!(matches!(r, Err(Error::EmptyReduction { .. })), "{r:?}");
    }
    // Reducing the non-empty dim of [2, 0] leaves an empty result, no error.
    let m = x.max(&[0], false).unwrap();
    assert_eq!(m.dims(), &[0]);
    assert_eq!(i64s(&x.argmax(0, true).unwrap()), Vec::<i64>::new());
    // Integer empty sums are i64 zeros.
    let xi = t(&[], &[3, 0], DType::I32);
    assert_eq!(i64s(&xi.sum(&[1], false).unwrap()), vec![0; 3]);
    assert_eq!(i64s(&xi.prod(&[1], false).unwrap()), vec![1; 3]);
}

#[test]
fn empty_dims_slice_reduces_over_nothing() {
    for (name, x) in variants(&M23, &[2, 3], DType::F32) {
        for keepdim in [false, true] {
            assert_close(&x.sum(&[], keepdim).unwrap(), &M23, &[2, 3], 0.0);
            assert_close(&x.max(&[], keepdim).unwrap(), &M23, &[2, 3], 0.0);
            assert_close(&x.mean(&[], keepdim).unwrap(), &M23, &[2, 3], 0.0);
        }
        // Each output is the variance of one element.
        assert_close(&x.var(&[], 0.0, false).unwrap(), &[0.0; 6], &[2, 3], 0.0);
        assert_close(
            &x.var(&[], 1.0, false).unwrap(),
            &[f64::NAN; 6],
            &[2, 3],
            0.0,
        );
        assert_eq!(bools(&x.any(&[], false).unwrap()), vec![true; 6], "{name}");
    }
    // Integers still change dtype under sum.
    let i = t(&M23, &[2, 3], DType::I32);
    let s = i.sum(&[], false).unwrap();
    assert_eq!(s.dtype(), DType::I64);
    assert_eq!(i64s(&s), vec![1, 2, 3, 4, 5, 6]);
    // No extent is reduced, so max of an empty tensor over no dims is fine.
    assert_eq!(f32t(&[], &[0, 2]).max(&[], false).unwrap().dims(), &[0, 2]);
}

#[test]
fn rank0_and_size1_dims() {
    let s = t(&[2.5], &[], DType::F64);
    assert_close(&s.sum_all().unwrap(), &[2.5], &[], 0.0);
    assert_close(&s.sum(&[], true).unwrap(), &[2.5], &[], 0.0);
    assert_close(&s.max_all().unwrap(), &[2.5], &[], 0.0);
    assert_close(&s.logsumexp_all().unwrap(), &[2.5], &[], 0.0);
    assert_eq!(i64s(&s.argmax_all().unwrap()), vec![0]);
    assert_close(&s.var_all(0.0).unwrap(), &[0.0], &[], 0.0);
    assert_eq!(bools(&s.all_all().unwrap()), vec![true]);
    assert!(matches!(
        s.sum(&[0], false),
        Err(Error::DimOutOfRange {
            dim: 0,
            rank: 0,
            ..
        })
    ));
    assert!(matches!(
        s.argmax(-1, false),
        Err(Error::DimOutOfRange { .. })
    ));
    assert!(matches!(s.softmax(0), Err(Error::DimOutOfRange { .. })));

    // Reducing a size-1 dim changes nothing but the shape.
    for (name, x) in variants(&[1.0, 2.0, 3.0], &[1, 3], DType::F32) {
        assert_close(&x.sum(&[0], false).unwrap(), &[1.0, 2.0, 3.0], &[3], 0.0);
        assert_close(&x.max(&[0], true).unwrap(), &[1.0, 2.0, 3.0], &[1, 3], 0.0);
        assert_eq!(i64s(&x.argmin(0, false).unwrap()), vec![0; 3], "{name}");
        assert_close(&x.sum(&[1], false).unwrap(), &[6.0], &[1], 0.0);
        assert_close(&x.softmax(0).unwrap(), &[1.0; 3], &[1, 3], 0.0);
        assert_close(&x.log_softmax(0).unwrap(), &[0.0; 3], &[1, 3], 0.0);
    }
}

#[test]
fn broadcast_inputs_repeat_their_values() {
    // A row of 3 broadcast to 4 rows with stride 0.
    let row = f32t(&[1.0, 5.0, 3.0], &[3]);
    let x = row.broadcast_to([4, 3]).unwrap();
    assert_eq!(x.strides()[0], 0);
    assert_close(&x.sum(&[0], false).unwrap(), &[4.0, 20.0, 12.0], &[3], 0.0);
    assert_close(&x.sum(&[1], false).unwrap(), &[9.0; 4], &[4], 0.0);
    assert_close(&x.var(&[0], 1.0, false).unwrap(), &[0.0; 3], &[3], 0.0);
    assert_close(&x.prod_all().unwrap(), &[15f64.powi(4)], &[], 0.0);
    // All rows equal: ties go to row 0; argmax along the row is column 1.
    assert_eq!(i64s(&x.argmax(0, false).unwrap()), vec![0; 3]);
    assert_eq!(i64s(&x.argmax(1, false).unwrap()), vec![1; 4]);
    assert_eq!(i64s(&x.argmax_all().unwrap()), vec![1]);
    let p = x.softmax(0).unwrap();
    assert_close(&p, &[0.25; 12], &[4, 3], 0.0);
    // A scalar broadcast to a matrix.
    let c = t(&[2.0], &[], DType::I32).broadcast_to([2, 3]).unwrap();
    assert_eq!(i64s(&c.sum(&[0, 1], false).unwrap()), vec![12]);
    assert_eq!(i64s(&c.prod(&[1], false).unwrap()), vec![8, 8]);
}

#[test]
fn softmax_and_log_softmax_by_hand() {
    let ln3 = 3f64.ln();
    // [[0, ln 3],     softmax along dim 1: [[1/4, 3/4],
    //  [ln 3, ln 3]]                        [1/2, 1/2]]
    let v = [0.0, ln3, ln3, ln3];
    for dtype in [DType::F32, DType::F64] {
        let tol = if dtype == DType::F32 { 1e-7 } else { 1e-15 };
        for (name, x) in variants(&v, &[2, 2], dtype) {
            let p = x.softmax(1).unwrap();
            assert_eq!(p.dtype(), dtype, "{name}");
            assert_close(&p, &[0.25, 0.75, 0.5, 0.5], &[2, 2], tol);
            let l = x.log_softmax(-1).unwrap();
            assert_close(
                &l,
                &[0.25f64.ln(), 0.75f64.ln(), 0.5f64.ln(), 0.5f64.ln()],
                &[2, 2],
                tol,
            );
            // Along dim 0: columns (0, ln 3) and (ln 3, ln 3).
            assert_close(
                &x.softmax(0).unwrap(),
                &[0.25, 0.5, 0.75, 0.5],
                &[2, 2],
                tol,
            );
        }
    }
    // Half precision rounds once: 1/4 and 3/4 are exact in f16 and bf16.
    for dtype in [DType::F16, DType::BF16] {
        let x = t(&[0.0, 3f64.ln()], &[2], dtype);
        // ln 3 itself was rounded on the way in; the result is within the
        // dtype's rounding of 1/4 and 3/4.
        let eps = if dtype == DType::F16 {
            2f64.powi(-10)
        } else {
            2f64.powi(-7)
        };
        assert_close(&x.softmax(0).unwrap(), &[0.25, 0.75], &[2], 2.0 * eps);
    }
}

#[test]
fn softmax_is_stable_and_follows_pytorch_on_infinities() {
    let inf = f64::INFINITY;
    // Large values: exp(1000) overflows unshifted.
    let big = t(&[1000.0, 1000.0, -1000.0], &[3], DType::F64);
    let p = big.softmax(0).unwrap();
    assert_close(&p, &[0.5, 0.5, 0.0], &[3], 1e-15);
    assert_close(
        &big.log_softmax(0).unwrap(),
        &[-(2f64.ln()), -(2f64.ln()), -2000.0 - 2f64.ln()],
        &[3],
        1e-12,
    );
    // Row 0 all -inf: NaN. Row 1 one -inf: probability 0 there. Row 2 +inf: NaN.
    let x = t(&[-inf, -inf, -inf, 0.0, inf, 0.0], &[3, 2], DType::F32);
    let nan = f64::NAN;
    assert_close(
        &x.softmax(1).unwrap(),
        &[nan, nan, 0.0, 1.0, nan, nan],
        &[3, 2],
        0.0,
    );
    assert_close(
        &x.log_softmax(1).unwrap(),
        &[nan, nan, -inf, 0.0, nan, nan],
        &[3, 2],
        0.0,
    );
    // Zero-size dims: empty results, no error.
    assert_eq!(f32t(&[], &[0, 3]).softmax(1).unwrap().dims(), &[0, 3]);
    assert_eq!(f32t(&[], &[2, 0]).log_softmax(1).unwrap().dims(), &[2, 0]);
}

#[test]
fn layer_norm_by_hand() {
    // Row [1, 2, 3, 6]: mean 3, deviations [-2, -1, 0, 3], variance
    // (4 + 1 + 0 + 9) / 4 = 3.5. With eps = 0.5 the divisor is sqrt(4) = 2.
    let x = Tensor::from_vec(
        vec![1.0f64, 2.0, 3.0, 6.0, 7.0, 7.0, 7.0, 7.0],
        [2, 4],
        Device::Reference,
    )
    .unwrap();
    let y = x.layer_norm(1, 0.5).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(y[..4], [-1.0, -0.5, 0.0, 1.5]);
    // A constant row is 0 with eps > 0 and 0 / 0 = NaN without.
    assert_eq!(y[4..], [0.0; 4]);
    let y = x.layer_norm(1, 0.0).unwrap().to_vec::<f64>().unwrap();
    assert!(y[4..].iter().all(|v| v.is_nan()));
    // Over both dims of a [2, 2] block: values [1, 3, 5, 7], mean 4,
    // variance (9 + 1 + 1 + 9) / 4 = 5, eps 4 gives a divisor of 3.
    let x = Tensor::from_vec(vec![1.0f64, 3.0, 5.0, 7.0], [1, 2, 2], Device::Reference).unwrap();
    let y = x.layer_norm(2, 4.0).unwrap();
    assert_eq!(y.dims(), &[1, 2, 2]);
    assert_eq!(
        y.to_vec::<f64>().unwrap(),
        [-1.0, -1.0 / 3.0, 1.0 / 3.0, 1.0]
    );
    // A strided view normalizes its logical slices: the transpose of
    // [[1, 3], [5, 7]] has rows [1, 5] and [3, 7], each giving [-1, 1].
    let t = x.reshape([2, 2]).unwrap().transpose(0, 1).unwrap();
    assert_eq!(
        t.layer_norm(1, 0.0).unwrap().to_vec::<f64>().unwrap(),
        [-1.0, 1.0, -1.0, 1.0]
    );
    // Zero-size slices give an empty result.
    assert_eq!(
        f32t(&[], &[0, 3]).layer_norm(1, 1e-5).unwrap().dims(),
        &[0, 3]
    );
}

#[test]
fn layer_norm_rejects_bad_arguments() {
    let x = f32t(&M23, &[2, 3]);
    for dims in [0, 3] {
        match x.layer_norm(dims, 1e-5) {
            Err(Error::InvalidArgument {
                op: "layer_norm",
                name: "normalized_dims",
                ..
            }) => {}
            other => panic!("dims {dims}: {other:?}"),
        }
    }
    for eps in [-1.0, f64::NAN, f64::INFINITY] {
        match x.layer_norm(1, eps) {
            Err(Error::InvalidArgument {
                op: "layer_norm",
                name: "eps",
                ..
            }) => {}
            other => panic!("eps {eps}: {other:?}"),
        }
    }
    let i = t(&M23, &[2, 3], DType::I32);
    assert!(matches!(
        i.layer_norm(1, 1e-5),
        Err(Error::UnsupportedDType {
            op: "layer_norm",
            ..
        })
    ));
    assert_eq!(
        x.layer_norm(0, 1e-5).unwrap_err().to_string(),
        "layer_norm: invalid normalized_dims: counts the trailing dims normalized over: 1 to 2 for shape [2, 3], got 0"
    );
}

#[test]
fn every_error_is_typed() {
    let x = f32t(&M23, &[2, 3]);
    let i = t(&M23, &[2, 3], DType::I32);
    let b = t(&[1.0, 0.0], &[2], DType::Bool);
    assert!(matches!(
        x.sum(&[2], false),
        Err(Error::DimOutOfRange {
            op: "sum",
            dim: 2,
            rank: 2
        })
    ));
    assert!(matches!(
        x.argmax(-3, false),
        Err(Error::DimOutOfRange { op: "argmax", .. })
    ));
    assert!(matches!(
        x.softmax(2),
        Err(Error::DimOutOfRange { op: "softmax", .. })
    ));
    let dup = x.mean(&[1, -1], false).unwrap_err();
    assert!(
        matches!(
            dup,
            Error::DuplicateDim {
                op: "mean",
                dim: 1,
                ..
            }
        ),
        "{dup:?}"
    );
    for (r, op) in [
        (i.mean(&[0], false), "mean"),
        (i.var(&[0], 1.0, false), "var"),
        (i.std_all(1.0), "std"),
        (i.logsumexp(&[1], true), "logsumexp"),
        (i.softmax(0), "softmax"),
        (b.log_softmax(0), "log_softmax"),
        (b.mean_all(), "mean"),
    ] {
        match r {
            Err(Error::UnsupportedDType { op: o, .. }) => assert_eq!(o, op),
            other => panic!("{op}: {other:?}"),
        }
    }
    assert_eq!(
        i.mean_all().unwrap_err().to_string(),
        "mean: not defined for dtype i32 (cast to a float dtype first)"
    );
    let bad = x.var(&[0], f64::NAN, false).unwrap_err();
    assert!(matches!(
        bad,
        Error::InvalidArgument {
            op: "var",
            name: "correction",
            ..
        }
    ));
    assert!(matches!(
        x.std_all(f64::INFINITY),
        Err(Error::InvalidArgument { op: "std", .. })
    ));
    assert!(matches!(
        f32t(&[], &[0]).argmin_all(),
        Err(Error::EmptyReduction { op: "argmin", .. })
    ));
    // A tensor on a device no backend serves in this test program: it is
    // validated like any other, then dispatch fails.
    let on_cpu = Tensor::from_parts(
        Arc::new(Storage::host(Device::Cpu, HostBuffer::F32(vec![1.0; 4]))),
        Layout::contiguous([2, 2]),
    );
    assert!(matches!(
        on_cpu.sum(&[2], false),
        Err(Error::DimOutOfRange { .. })
    ));
    assert!(matches!(
        on_cpu.sum(&[0], false),
        Err(Error::BackendUnavailable {
            device: Device::Cpu,
            ..
        })
    ));
    assert!(matches!(
        on_cpu.softmax(0),
        Err(Error::BackendUnavailable { .. })
    ));
}

/// Random `f32`-representable values in `[-8, 8)`.
fn f32_values(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-8.0f32..8.0, n).prop_map(|v| v.into_iter().map(f64::from).collect())
}

fn shape_2_to_4() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..5, 2..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// sum(a·x + b·y) ≈ a·sum(x) + b·sum(y) for f32 tensors.
    ///
    /// Tolerance, with u = 2⁻²⁴ (f32 unit roundoff) and S = Σᵢ(|a·xᵢ| + |b·yᵢ|):
    /// - z = a·x + b·y is formed in f64 and rounded to f32 element by
    ///   element: each zᵢ is off by at most u·|a·xᵢ + b·yᵢ|, so Σz by u·S;
    /// - the reference sums in f64 (error ≲ n·2⁻⁵³·S, far below u·S for
    ///   n ≤ 64) and rounds once to f32: another u·|Σz| ≤ u·S·(1 + u);
    /// - sum(x) and sum(y) round once each: |a|·u·Σ|xᵢ| + |b|·u·Σ|yᵢ| = u·S.
    ///
    /// Total below 3·u·S + n·2⁻⁵³·S; we allow 4·u·S.
    ///
    /// The same law with z built by tensor ops, `x·a + y·b` in f32: each
    /// of the two scalings rounds once (u·|a·xᵢ|, u·|b·yᵢ|) and the add
    /// once more (u·(|a·xᵢ| + |b·yᵢ|)·(1 + u)), so z is off by 2·u·S; the
    /// rest is as above: below 4·u·S + O(u²)·S; we allow 5·u·S.
    #[test]
    fn sum_is_linear(
        (shape, x, y) in shape_2_to_4().prop_flat_map(|s| {
            let n: usize = s.iter().product();
            (Just(s), f32_values(n), f32_values(n))
        }),
        a in -4.0f32..4.0,
        b in -4.0f32..4.0,
        dim in 0usize..4,
    ) {
        let (a, b) = (f64::from(a), f64::from(b));
        let dim = (dim % shape.len()) as isize;
        let z: Vec<f64> = x.iter().zip(&y).map(|(xi, yi)| a * xi + b * yi).collect();
        let (tx, ty, tz) = (f32t(&x, &shape), f32t(&y, &shape), f32t(&z, &shape));
        // Over all dims.
        let u = 2f64.powi(-24);
        let s: f64 = x.iter().zip(&y).map(|(xi, yi)| (a * xi).abs() + (b * yi).abs()).sum();
        let lhs = tz.sum_all().unwrap().item().unwrap();
        let rhs = a * tx.sum_all().unwrap().item().unwrap() + b * ty.sum_all().unwrap().item().unwrap();
        prop_assert!((lhs - rhs).abs() <= 4.0 * u * s, "{lhs} vs {rhs} (S = {s})");
        let tz_ops = tx.mul_scalar(a).unwrap().add(&ty.mul_scalar(b).unwrap()).unwrap();
        let lhs_ops = tz_ops.sum_all().unwrap().item().unwrap();
        prop_assert!((lhs_ops - rhs).abs() <= 5.0 * u * s, "{lhs_ops} vs {rhs} (S = {s})");
        // Over one dim, element by element (each with its own, smaller S;
        // the whole-tensor S bounds them all).
        let lz = tz.sum(&[dim], false).unwrap().to_f64_vec().unwrap();
        let lx = tx.sum(&[dim], false).unwrap().to_f64_vec().unwrap();
        let ly = ty.sum(&[dim], false).unwrap().to_f64_vec().unwrap();
        for i in 0..lz.len() {
            let r = a * lx[i] + b * ly[i];
            prop_assert!((lz[i] - r).abs() <= 4.0 * u * s, "{i}: {} vs {r}", lz[i]);
        }
    }

    /// Summing dim 0, then dim 0 of the result, is summing dims [0, 1]
    /// (exactly: small integers in f64 add without rounding), and keepdim
    /// composes the same way on a permuted view.
    #[test]
    fn sums_over_dims_compose(
        (shape, v) in shape_2_to_4().prop_flat_map(|s| {
            let n: usize = s.iter().product();
            (Just(s), prop::collection::vec(-100i32..100, n))
        })
    ) {
        let v: Vec<f64> = v.into_iter().map(f64::from).collect();
        for (name, x) in variants(&v, &shape, DType::F64) {
            let both = x.sum(&[0, 1], false).unwrap();
            let stepwise = x.sum(&[0], false).unwrap().sum(&[0], false).unwrap();
            prop_assert_eq!(both.dims(), stepwise.dims());
            prop_assert_eq!(both.to_f64_vec().unwrap(), stepwise.to_f64_vec().unwrap(), "{}", name);
            let kept = x.sum(&[0], true).unwrap().sum(&[1], true).unwrap();
            prop_assert_eq!(kept.to_f64_vec().unwrap(), both.to_f64_vec().unwrap());
            prop_assert_eq!(kept.rank(), shape.len());
        }
    }

    /// Each softmax slice sums to 1. With u = 2⁻²⁴, each f32 output pᵢ is
    /// the f64 value Pᵢ rounded once, |pᵢ - Pᵢ| ≤ u·Pᵢ, so |Σpᵢ - ΣPᵢ| ≤ u.
    /// The f64 computation of each Pᵢ (a subtraction, an exp, a sum of n
    /// terms, a division) is within about (n + 4)·2⁻⁵³ relative, and the
    /// test's own f64 sum adds n·2⁻⁵³: all under 2·u for n ≤ 64.
    #[test]
    fn softmax_slices_sum_to_one(
        (shape, v) in shape_2_to_4().prop_flat_map(|s| {
            let n: usize = s.iter().product();
            (Just(s), f32_values(n))
        }),
        dim in 0usize..4,
    ) {
        let dim = dim % shape.len();
        let u = 2f64.powi(-24);
        let x = f32t(&v, &shape);
        let p = x.softmax(dim as isize).unwrap();
        let sums = p.to_dtype(DType::F64).unwrap().sum(&[dim as isize], false).unwrap();
        for s in sums.to_f64_vec().unwrap() {
            prop_assert!((s - 1.0).abs() <= 2.0 * u, "{s}");
        }
    }

    /// log_softmax(x) = log(softmax(x)). With u = 2⁻²⁴ and L = log P, the
    /// f32 output lᵢ is within u·|Lᵢ| of Lᵢ; the f32 pᵢ is within u·Pᵢ of
    /// Pᵢ, so log pᵢ is within -log(1 - u) ≤ 1.01·u of Lᵢ. Inputs in
    /// [-8, 8) with n ≤ 4 keep Pᵢ ≥ e⁻¹⁶/4, far from f32 underflow. With a
    /// margin for the f64 work, |lᵢ - log pᵢ| ≤ u·(|Lᵢ| + 2). Taking the
    /// log with the tensor op instead rounds log pᵢ to f32 once more,
    /// adding u·|Lᵢ|(1 + 2u): we allow u·(2·|Lᵢ| + 3) there.
    #[test]
    fn log_softmax_is_log_of_softmax(
        (shape, v) in shape_2_to_4().prop_flat_map(|s| {
            let n: usize = s.iter().product();
            (Just(s), f32_values(n))
        }),
        dim in 0usize..4,
    ) {
        let dim = (dim % shape.len()) as isize;
        let u = 2f64.powi(-24);
        let x = f32t(&v, &shape);
        let l = x.log_softmax(dim).unwrap().to_f64_vec().unwrap();
        let p = x.softmax(dim).unwrap().to_f64_vec().unwrap();
        let log_p = x.softmax(dim).unwrap().log().unwrap().to_f64_vec().unwrap();
        for (li, lp) in l.iter().zip(&log_p) {
            prop_assert!((li - lp).abs() <= u * (2.0 * li.abs() + 3.0), "{li} vs {lp}");
        }
        for (li, pi) in l.iter().zip(&p) {
            prop_assert!((li - pi.ln()).abs() <= u * (li.abs() + 2.0), "{li} vs ln {pi}");
        }
    }
}
