//! The shape composites PyTorch users reach for (issue 23) on the
//! reference backend: `roll`, `repeat`, `tile`, `diagonal`, `diag`,
//! `trace`, `outer` — hand-computed values in every layout variant, the
//! typed errors, gradients by hand and by finite differences.

mod common;
use common::*;

use oxmera_core::{DType, Device, Error};
use oxmera_tensor::Tensor;
use oxmera_tensor::autograd::{DEFAULT_STEP, gradcheck};

/// 0..n as f64.
fn iota(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64).collect()
}

/// `f` of every layout variant of `values` (shape `shape`) equals `want`
/// with shape `dims`.
fn each_layout(
    values: &[f64],
    shape: &[usize],
    f: impl Fn(&Tensor) -> oxmera_core::Result<Tensor>,
    want: &[f64],
    dims: &[usize],
) {
    for (layout, x) in variants(values, shape, DType::F64) {
        let y = f(&x).unwrap();
        assert_eq!(y.dims(), dims, "{layout}");
        assert_eq!(y.to_f64_vec().unwrap(), want, "{layout}");
    }
}

#[test]
fn roll_by_hand() {
    // [[0, 1, 2],
    //  [3, 4, 5]]
    let v = iota(6);
    each_layout(
        &v,
        &[2, 3],
        |x| x.roll(&[1], &[1]),
        &[2.0, 0.0, 1.0, 5.0, 3.0, 4.0],
        &[2, 3],
    );
    each_layout(
        &v,
        &[2, 3],
        |x| x.roll(&[1, -1], &[0, 1]),
        &[4.0, 5.0, 3.0, 1.0, 2.0, 0.0],
        &[2, 3],
    );
    // Flattened: a shift of 8 on 6 elements is a shift of 2.
    each_layout(
        &v,
        &[2, 3],
        |x| x.roll(&[8], &[]),
        &[4.0, 5.0, 0.0, 1.0, 2.0, 3.0],
        &[2, 3],
    );
    each_layout(&v, &[2, 3], |x| x.roll(&[0, 3], &[0, 1]), &v, &[2, 3]);
}

#[test]
fn repeat_and_tile_by_hand() {
    let v = [1.0, 2.0, 3.0, 4.0];
    // [[1, 2], [3, 4]] repeated (1, 2): [[1, 2, 1, 2], [3, 4, 3, 4]].
    each_layout(
        &v,
        &[2, 2],
        |x| x.repeat(&[1, 2]),
        &[1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0],
        &[2, 4],
    );
    each_layout(
        &v,
        &[2, 2],
        |x| x.repeat(&[2, 1]),
        &[1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0],
        &[4, 2],
    );
    each_layout(
        &v,
        &[2, 2],
        |x| x.repeat(&[2, 1, 1]),
        &[1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0],
        &[2, 2, 2],
    );
    each_layout(
        &v,
        &[2, 2],
        |x| x.tile(&[2]),
        &[1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0],
        &[2, 4],
    );
    each_layout(&v, &[2, 2], |x| x.repeat(&[0, 3]), &[], &[0, 6]);
    let s = Tensor::scalar(7i64, Device::Reference).unwrap();
    assert_eq!(
        s.repeat(&[3]).unwrap().to_vec::<i64>().unwrap(),
        vec![7, 7, 7]
    );
    assert_eq!(s.repeat(&[]).unwrap().dims(), &[] as &[usize]);
}

#[test]
fn diagonal_diag_trace_outer_by_hand() {
    // [[0, 1, 2, 3],
    //  [4, 5, 6, 7],
    //  [8, 9, 10, 11]]
    let v = iota(12);
    each_layout(
        &v,
        &[3, 4],
        |x| x.diagonal(0, 0, 1),
        &[0.0, 5.0, 10.0],
        &[3],
    );
    each_layout(
        &v,
        &[3, 4],
        |x| x.diagonal(1, 0, 1),
        &[1.0, 6.0, 11.0],
        &[3],
    );
    each_layout(&v, &[3, 4], |x| x.diagonal(-1, -2, -1), &[4.0, 9.0], &[2]);
    each_layout(&v, &[3, 4], |x| x.diagonal(2, 1, 0), &[8.0], &[1]);
    each_layout(&v, &[3, 4], |x| x.diagonal(-3, 0, 1), &[], &[0]);
    // A batch: [2, 2, 2] over dims 1 and 2 keeps dim 0 first.
    each_layout(
        &iota(8),
        &[2, 2, 2],
        |x| x.diagonal(0, 1, 2),
        &[0.0, 3.0, 4.0, 7.0],
        &[2, 2],
    );
    // ... and over dims 0 and 2 keeps dim 1: out[j, i] = x[i, j, i] =
    // 4i + 2j + i.
    each_layout(
        &iota(8),
        &[2, 2, 2],
        |x| x.diagonal(0, 0, 2),
        &[0.0, 5.0, 2.0, 7.0],
        &[2, 2],
    );
    each_layout(&v, &[3, 4], |x| x.diag(1), &[1.0, 6.0, 11.0], &[3]);
    each_layout(&v, &[3, 4], |x| x.trace(), &[15.0], &[]);
    // diag of a vector below the main diagonal: [[0, 0], [7, 0]] for k = -1.
    each_layout(&[7.0], &[1], |x| x.diag(-1), &[0.0, 0.0, 7.0, 0.0], &[2, 2]);
    each_layout(
        &[1.0, 2.0],
        &[2],
        |x| x.diag(0),
        &[1.0, 0.0, 0.0, 2.0],
        &[2, 2],
    );
    let ints = Tensor::from_vec(vec![1u8, 2, 3, 4], [2, 2], Device::Reference).unwrap();
    let tr = ints.trace().unwrap();
    assert_eq!(
        (tr.dtype(), tr.to_vec::<i64>().unwrap()),
        (DType::I64, vec![5])
    );
    each_layout(
        &[1.0, -2.0],
        &[2],
        |x| x.outer(&t(&[3.0, 0.5, 10.0], &[3], DType::F64)),
        &[3.0, 0.5, 10.0, -6.0, -1.0, -20.0],
        &[2, 3],
    );
}

#[test]
fn shape_errors_are_typed() {
    let x = t(&iota(6), &[2, 3], DType::F32);
    assert!(matches!(
        x.roll(&[1, 2], &[0]),
        Err(Error::InvalidArgument { op: "roll", .. })
    ));
    assert!(matches!(
        x.roll(&[1, 2], &[]),
        Err(Error::InvalidArgument { op: "roll", .. })
    ));
    assert!(matches!(
        x.roll(&[1], &[2]),
        Err(Error::DimOutOfRange { op: "roll", .. })
    ));
    assert!(matches!(
        x.repeat(&[2]),
        Err(Error::InvalidArgument { op: "repeat", .. })
    ));
    assert!(matches!(
        x.diagonal(0, 1, -1),
        Err(Error::DuplicateDim { op: "diagonal", .. })
    ));
    assert!(matches!(
        x.diagonal(0, 0, 2),
        Err(Error::DimOutOfRange { op: "diagonal", .. })
    ));
    let cube = t(&iota(8), &[2, 2, 2], DType::F32);
    assert!(matches!(
        cube.diag(0),
        Err(Error::RankMismatch { op: "diag", .. })
    ));
    assert!(matches!(
        cube.trace(),
        Err(Error::RankMismatch { op: "trace", .. })
    ));
    assert!(matches!(
        x.outer(&x),
        Err(Error::RankMismatch { op: "outer", .. })
    ));
    let v = t(&[1.0], &[1], DType::F32);
    let w = t(&[1.0], &[1], DType::F64);
    assert!(matches!(v.outer(&w), Err(Error::DTypeMismatch { .. })));
}

#[test]
fn shape_gradients_by_hand() {
    let leaf = |v: &[f64], s: &[usize]| t(v, s, DType::F64).with_requires_grad(true).unwrap();
    let grad = |x: &Tensor| x.grad().unwrap().to_f64_vec().unwrap();
    // Each element of a repeat by (2, 3) is used six times.
    let x = leaf(&[1.0, 2.0], &[1, 2]);
    x.repeat(&[2, 3])
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x), vec![6.0, 6.0]);
    // trace: 1 on the diagonal, 0 elsewhere.
    let x = leaf(&iota(6), &[2, 3]);
    x.trace().unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    // roll's gradient rolls back: weight the output by its position.
    let x = leaf(&[0.0, 0.0, 0.0], &[3]);
    let w = t(&[10.0, 20.0, 30.0], &[3], DType::F64);
    x.roll(&[1], &[0])
        .unwrap()
        .mul(&w)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x), vec![20.0, 30.0, 10.0]);
    // diag of a vector: each element lands once.
    let x = leaf(&[1.0, 2.0], &[2]);
    x.diag(1).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![1.0, 1.0]);
    // outer: d/da_i Σ_j a_i b_j = Σ_j b_j.
    let (a, b) = (leaf(&[1.0, 2.0], &[2]), leaf(&[3.0, 4.0, 5.0], &[3]));
    a.outer(&b).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&a), vec![12.0, 12.0]);
    assert_eq!(grad(&b), vec![3.0, 3.0, 3.0]);
}

#[test]
fn gradcheck_shape_composites() {
    let v: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin()).collect();
    let run =
        |name: &str, f: &dyn Fn(&[Tensor]) -> oxmera_core::Result<Tensor>, shape: &[usize]| {
            for (layout, x) in variants(&v, shape, DType::F64) {
                let report = gradcheck(f, &[x], DEFAULT_STEP).unwrap();
                assert!(
                    report.checked > 0 && report.passed(),
                    "{name} ({layout}): {report}"
                );
            }
        };
    run("roll", &|x| x[0].roll(&[1, -2], &[0, 1]), &[3, 4]);
    run("repeat", &|x| x[0].repeat(&[2, 1, 2]), &[3, 4]);
    run("tile", &|x| x[0].tile(&[3]), &[3, 4]);
    run("diagonal", &|x| x[0].diagonal(1, 1, 0), &[3, 4]);
    run("diagonal batched", &|x| x[0].diagonal(0, 0, 2), &[2, 3, 2]);
    run("diag", &|x| x[0].diag(-1), &[12]);
    run("trace", &|x| x[0].trace(), &[4, 3]);
    run("outer", &|x| x[0].outer(&x[0].sin()?), &[12]);
}
