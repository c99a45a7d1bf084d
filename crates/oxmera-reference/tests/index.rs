//! Joining, indexing, padding and reordering on the reference backend:
//! hand-computed cases on every layout variant, stride-0 broadcasts,
//! zero-size and size-1 dims, every error path, and the laws as
//! property tests.

mod common;
use common::*;

use oxmera_core::{DType, Device, Error};
use oxmera_tensor::Tensor;
use proptest::prelude::*;

fn i64t(values: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape, Device::Reference).unwrap()
}

fn i32t(values: &[i32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape, Device::Reference).unwrap()
}

/// 0, 1, 2, … as a tensor of `shape`.
fn iota(shape: &[usize], dtype: DType) -> Vec<(&'static str, Tensor)> {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| i as f64).collect();
    variants(&v, shape, dtype)
}

// ---------------------------------------------------------------- cat

#[test]
fn cat_along_each_dim_on_every_layout() {
    // a = [[0, 1, 2], [3, 4, 5]], b = [[10, 11, 12]]
    let b = f32t(&[10.0, 11.0, 12.0], &[1, 3]);
    for (name, a) in iota(&[2, 3], DType::F32) {
        let c = Tensor::cat(&[&a, &b], 0).unwrap();
        assert_close(&c, &[0., 1., 2., 3., 4., 5., 10., 11., 12.], &[3, 3], 0.0);
        let c = Tensor::cat(&[&b, &a], -2).unwrap();
        assert_close(&c, &[10., 11., 12., 0., 1., 2., 3., 4., 5.], &[3, 3], 0.0);
        // Along dim 1 the members interleave row by row.
        let c = Tensor::cat(&[&a, &a], 1).unwrap();
        assert_close(
            &c,
            &[0., 1., 2., 0., 1., 2., 3., 4., 5., 3., 4., 5.],
            &[2, 6],
            0.0,
        );
        assert!(!c.shares_storage(&a), "{name}");
    }
}

#[test]
fn cat_of_variants_with_each_other() {
    let v: Vec<f64> = (0..6).map(f64::from).collect();
    let all: Vec<Tensor> = variants(&v, &[3, 2], DType::I32)
        .into_iter()
        .map(|(_, x)| x)
        .collect();
    let c = Tensor::cat(&all, 1).unwrap();
    assert_eq!(c.dims(), &[3, 8]);
    let row0: Vec<f64> = c.narrow(0, 0, 1).unwrap().to_f64_vec().unwrap();
    assert_eq!(row0, vec![0., 1., 0., 1., 0., 1., 0., 1.]);
}

#[test]
fn cat_reads_stride_0_broadcasts() {
    let row = f32t(&[1.0, 2.0], &[1, 2]).broadcast_to([3, 2]).unwrap();
    assert_eq!(row.strides()[0], 0);
    let other = f32t(&[9.0, 8.0], &[1, 2]);
    let c = Tensor::cat(&[&row, &other], 0).unwrap();
    assert_close(&c, &[1., 2., 1., 2., 1., 2., 9., 8.], &[4, 2], 0.0);
}

#[test]
fn cat_with_zero_size_members_and_size_1_dims() {
    let a = f32t(&[1.0, 2.0], &[1, 2]);
    let empty = f32t(&[], &[0, 2]);
    let c = Tensor::cat(&[&empty, &a, &empty], 0).unwrap();
    assert_close(&c, &[1., 2.], &[1, 2], 0.0);
    let c = Tensor::cat(&[&empty, &empty], 0).unwrap();
    assert_close(&c, &[], &[0, 2], 0.0);
    // Zero extent in a dim that is not joined: the result is empty too.
    let z = f32t(&[], &[0, 3]);
    let c = Tensor::cat(&[&z, &f32t(&[], &[0, 1])], 1).unwrap();
    assert_eq!(c.dims(), &[0, 4]);
    // A single member is a copy.
    let c = Tensor::cat(&[&a], 1).unwrap();
    assert_close(&c, &[1., 2.], &[1, 2], 0.0);
}

#[test]
fn cat_keeps_integers_and_bools_exact() {
    let big = (1i64 << 53) + 1;
    let a = i64t(&[big, -big], &[2]);
    let c = Tensor::cat(&[&a, &i64t(&[i64::MAX], &[1])], 0).unwrap();
    assert_eq!(c.to_vec::<i64>().unwrap(), vec![big, -big, i64::MAX]);
    let p = Tensor::from_vec(vec![true, false], [2], Device::Reference).unwrap();
    let c = Tensor::cat(&[&p, &p], 0).unwrap();
    assert_eq!(c.to_vec::<bool>().unwrap(), vec![true, false, true, false]);
    let h = t(&[0.1, -0.0], &[2], DType::F16);
    let c = Tensor::cat(&[&h, &h], 0).unwrap();
    assert_eq!(c.dtype(), DType::F16);
    assert_eq!(c.to_f64_vec().unwrap(), h.to_f64_vec().unwrap().repeat(2));
    assert!(c.get(&[1]).unwrap().is_sign_negative());
}

#[test]
fn cat_errors_are_typed() {
    let a = f32t(&[1.0, 2.0], &[1, 2]);
    let none: [&Tensor; 0] = [];
    let e = Tensor::cat(&none, 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cat: invalid tensors: expected at least one tensor to concatenate, got none"
    );
    let e = Tensor::cat(&[&a, &f32t(&[1.0, 2.0, 3.0], &[1, 3])], 0).unwrap_err();
    assert_eq!(e.to_string(), "cat: shapes differ: [1, 2] and [1, 3]");
    let e = Tensor::cat(&[&a, &f32t(&[1.0, 2.0], &[2])], 0).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "cat", .. }), "{e}");
    let e = Tensor::cat(&[&a, &i64t(&[1, 2], &[1, 2])], 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DTypeMismatch {
                op: "cat",
                lhs: DType::F32,
                rhs: DType::I64
            }
        ),
        "{e}"
    );
    let e = Tensor::cat(&[&a, &a], 2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DimOutOfRange {
                dim: 2,
                rank: 2,
                ..
            }
        ),
        "{e}"
    );
    let s = f32t(&[1.0], &[]);
    let e = Tensor::cat(&[&s, &s], 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "cat",
                expected: 1,
                ..
            }
        ),
        "{e}"
    );
}

// -------------------------------------------------------------- stack

#[test]
fn stack_inserts_a_new_dim_on_every_layout() {
    let b = f32t(&[10.0, 11.0, 12.0, 13.0, 14.0, 15.0], &[2, 3]);
    for (name, a) in iota(&[2, 3], DType::F32) {
        let s = Tensor::stack(&[&a, &b], 0).unwrap();
        assert_close(
            &s,
            &[0., 1., 2., 3., 4., 5., 10., 11., 12., 13., 14., 15.],
            &[2, 2, 3],
            0.0,
        );
        let s = Tensor::stack(&[&a, &b], 2).unwrap();
        assert_close(
            &s,
            &[0., 10., 1., 11., 2., 12., 3., 13., 4., 14., 5., 15.],
            &[2, 3, 2],
            0.0,
        );
        let s = Tensor::stack(&[&a], -1).unwrap();
        assert_eq!(s.dims(), &[2, 3, 1], "{name}");
    }
}

#[test]
fn stack_of_scalars_and_of_empties() {
    let a = f32t(&[1.0], &[]);
    let b = f32t(&[2.0], &[]);
    assert_close(&Tensor::stack(&[&a, &b], 0).unwrap(), &[1., 2.], &[2], 0.0);
    let e = f32t(&[], &[0]);
    assert_eq!(Tensor::stack(&[&e, &e, &e], 1).unwrap().dims(), &[0, 3]);
}

#[test]
fn stack_errors_are_typed() {
    let a = f32t(&[1.0, 2.0], &[2]);
    let none: Vec<Tensor> = vec![];
    let e = Tensor::stack(&none, 0).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { op: "stack", .. }),
        "{e}"
    );
    let e = Tensor::stack(&[&a, &f32t(&[1.0], &[1])], 0).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "stack", .. }), "{e}");
    let e = Tensor::stack(&[&a, &a], 2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DimOutOfRange {
                op: "stack",
                dim: 2,
                rank: 2
            }
        ),
        "{e}"
    );
    let e = Tensor::stack(&[&a, &t(&[1.0, 2.0], &[2], DType::F64)], 0).unwrap_err();
    assert!(matches!(e, Error::DTypeMismatch { op: "stack", .. }), "{e}");
}

// ------------------------------------------------ split, chunk, narrow

#[test]
fn split_and_chunk_uneven_pieces_are_views() {
    for (name, x) in iota(&[5, 2], DType::F32) {
        let parts = x.split(2, 0).unwrap();
        let dims: Vec<_> = parts.iter().map(|p| p.dims()[0]).collect();
        assert_eq!(dims, vec![2, 2, 1], "{name}");
        assert!(parts.iter().all(|p| p.shares_storage(&x)), "{name}");
        assert_close(&parts[2], &[8., 9.], &[1, 2], 0.0);
        // 5 rows in 3 chunks: ceil(5/3) = 2 rows each, the last short.
        let chunks = x.chunk(3, 0).unwrap();
        let dims: Vec<_> = chunks.iter().map(|p| p.dims()[0]).collect();
        assert_eq!(dims, vec![2, 2, 1], "{name}");
        // More chunks than rows gives one row each, as in PyTorch.
        assert_eq!(x.chunk(9, 0).unwrap().len(), 5, "{name}");
        let cols = x.chunk(2, -1).unwrap();
        assert_close(&cols[1], &[1., 3., 5., 7., 9.], &[5, 1], 0.0);
    }
    // PyTorch's chunk gives fewer pieces than asked when sizes round up.
    let x = f32t(&[0.0; 6], &[6]);
    assert_eq!(x.chunk(4, 0).unwrap().len(), 3);
}

#[test]
fn split_and_chunk_of_zero_size_dims() {
    let x = f32t(&[], &[0, 3]);
    assert!(x.split(2, 0).unwrap().is_empty());
    assert!(x.chunk(2, 0).unwrap().is_empty());
    let parts = x.split(2, 1).unwrap();
    let dims: Vec<_> = parts.iter().map(|p| p.dims().to_vec()).collect();
    assert_eq!(dims, vec![vec![0, 2], vec![0, 1]]);
}

#[test]
fn narrow_selects_a_range_without_copying() {
    for (name, x) in iota(&[3, 4], DType::I64) {
        let n = x.narrow(1, 1, 2).unwrap();
        assert!(n.shares_storage(&x), "{name}");
        assert_close(&n, &[1., 2., 5., 6., 9., 10.], &[3, 2], 0.0);
        assert_eq!(x.narrow(0, 3, 0).unwrap().dims(), &[0, 4], "{name}");
    }
}

#[test]
fn split_chunk_narrow_errors_are_typed() {
    let x = f32t(&[0.0; 6], &[2, 3]);
    assert!(matches!(
        x.split(0, 0),
        Err(Error::InvalidArgument { op: "split", .. })
    ));
    assert!(matches!(
        x.chunk(0, 0),
        Err(Error::InvalidArgument { op: "chunk", .. })
    ));
    assert!(matches!(
        x.split(1, 2),
        Err(Error::DimOutOfRange { op: "split", .. })
    ));
    assert!(matches!(
        x.chunk(1, -3),
        Err(Error::DimOutOfRange { op: "chunk", .. })
    ));
    let e = x.narrow(1, 2, 2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::RangeOutOfBounds {
                op: "narrow",
                dim: 1,
                start: 2,
                end: 4,
                size: 3
            }
        ),
        "{e}"
    );
}

// ------------------------------------------------------- index_select

#[test]
fn index_select_on_every_layout() {
    // x = [[0, 1, 2], [3, 4, 5]]
    for (name, x) in iota(&[2, 3], DType::F32) {
        let i = i64t(&[2, 0, 2], &[3]);
        let y = x.index_select(1, &i).unwrap();
        assert_close(&y, &[2., 0., 2., 5., 3., 5.], &[2, 3], 0.0);
        let y = x.index_select(-2, &i32t(&[1], &[1])).unwrap();
        assert_close(&y, &[3., 4., 5.], &[1, 3], 0.0);
        let y = x.index_select(0, &i64t(&[], &[0])).unwrap();
        assert_eq!(y.dims(), &[0, 3], "{name}");
    }
}

#[test]
fn index_select_with_strided_and_broadcast_indices() {
    let x = i64t(&[10, 20, 30], &[3]);
    // Indices read through a stepped view: [2, 1] from [2, 9, 1, 9].
    let i = i64t(&[2, 9, 1, 9], &[4]).slice(0, 0, 4, 2).unwrap();
    assert_eq!(
        x.index_select(0, &i).unwrap().to_vec::<i64>().unwrap(),
        vec![30, 20]
    );
    // A stride-0 index repeats one pick.
    let i = i64t(&[1], &[1]).broadcast_to([4]).unwrap();
    assert_eq!(
        x.index_select(0, &i).unwrap().to_vec::<i64>().unwrap(),
        vec![20, 20, 20, 20]
    );
    // A stride-0 input.
    let xb = i64t(&[7, 8], &[1, 2]).broadcast_to([3, 2]).unwrap();
    let y = xb.index_select(1, &i64t(&[1, 0], &[2])).unwrap();
    assert_eq!(y.to_vec::<i64>().unwrap(), vec![8, 7, 8, 7, 8, 7]);
}

#[test]
fn index_select_errors_are_typed() {
    let x = f32t(&[0.0; 6], &[2, 3]);
    let e = x.index_select(1, &i64t(&[0, 3], &[2])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "index_select: index 3 is out of bounds for dim 1 of size 3"
    );
    let e = x.index_select(1, &i64t(&[-1], &[1])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                op: "index_select",
                index: -1,
                dim: 1,
                size: 3
            }
        ),
        "{e}"
    );
    let e = x.index_select(0, &i64t(&[0, 1], &[1, 2])).unwrap_err();
    assert!(matches!(e, Error::RankMismatch { expected: 1, .. }), "{e}");
    let e = x.index_select(0, &f32t(&[0.0], &[1])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDType {
                op: "index_select",
                dtype: DType::F32,
                ..
            }
        ),
        "{e}"
    );
    let e = x.index_select(2, &i64t(&[0], &[1])).unwrap_err();
    assert!(matches!(e, Error::DimOutOfRange { .. }), "{e}");
    // Any index into an empty dim is out of bounds.
    let e = f32t(&[], &[0])
        .index_select(0, &i64t(&[0], &[1]))
        .unwrap_err();
    assert!(matches!(e, Error::IndexOutOfBounds { size: 0, .. }), "{e}");
    let e = f32t(&[1.0], &[])
        .index_select(0, &i64t(&[0], &[1]))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "index_select",
                ..
            }
        ),
        "{e}"
    );
}

// ------------------------------------------------------------- gather

#[test]
fn gather_on_every_layout() {
    // x = [[0, 1, 2], [3, 4, 5]]
    for (_, x) in iota(&[2, 3], DType::F64) {
        // Along dim 1: out[i][j] = x[i][index[i][j]].
        let i = i64t(&[2, 2, 0, 1], &[2, 2]);
        assert_close(&x.gather(1, &i).unwrap(), &[2., 2., 3., 4.], &[2, 2], 0.0);
        // Along dim 0: out[i][j] = x[index[i][j]][j]; index may be taller.
        let i = i64t(&[1, 0, 1, 0, 0, 0], &[3, 2]);
        assert_close(
            &x.gather(0, &i).unwrap(),
            &[3., 1., 3., 1., 0., 1.],
            &[3, 2],
            0.0,
        );
    }
    for (_, i) in variants(&[1.0, 0.0, 0.0, 2.0], &[2, 2], DType::I32) {
        let x = i64t(&[5, 6, 7, 8, 9, 10], &[2, 3]);
        assert_eq!(
            x.gather(1, &i).unwrap().to_vec::<i64>().unwrap(),
            vec![6, 5, 8, 10]
        );
    }
}

#[test]
fn gather_with_broadcast_index_and_zero_size() {
    let x = f32t(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let i = i64t(&[1, 0], &[1, 2]).broadcast_to([2, 2]).unwrap();
    assert_close(&x.gather(1, &i).unwrap(), &[2., 1., 4., 3.], &[2, 2], 0.0);
    let y = x.gather(0, &i64t(&[], &[0, 2])).unwrap();
    assert_eq!(y.dims(), &[0, 2]);
}

#[test]
fn gather_errors_are_typed() {
    let x = f32t(&[0.0; 6], &[2, 3]);
    let e = x.gather(1, &i64t(&[3], &[1, 1])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                op: "gather",
                index: 3,
                dim: 1,
                size: 3
            }
        ),
        "{e}"
    );
    let e = x.gather(1, &i64t(&[0, 1], &[2])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "gather",
                expected: 2,
                ..
            }
        ),
        "{e}"
    );
    let e = x.gather(1, &i64t(&[0; 3], &[3, 1])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "gather: invalid index: index shape [3, 1] exceeds input shape [2, 3] at dim 0 (only dim 1 may be larger)"
    );
    let e = f32t(&[1.0], &[]).gather(0, &i64t(&[0], &[])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "gather",
                expected: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = x.gather(0, &t(&[0.0], &[1, 1], DType::U8)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDType {
                dtype: DType::U8,
                ..
            }
        ),
        "{e}"
    );
}

// ------------------------------------------------ scatter, scatter_add

#[test]
fn scatter_on_every_layout() {
    // src = [[0, 1, 2], [3, 4, 5]] into a 3x3 of -1 along dim 0.
    let base = f32t(&[-1.0; 9], &[3, 3]);
    let i = i64t(&[2, 0, 1, 0, 2, 2], &[2, 3]);
    for (_, src) in iota(&[2, 3], DType::F32) {
        let y = base.scatter(0, &i, &src).unwrap();
        assert_close(&y, &[3., 1., -1., -1., -1., 2., 0., 4., 5.], &[3, 3], 0.0);
        let y = base.scatter_add(0, &i, &src).unwrap();
        assert_close(&y, &[2., 0., -1., -1., -1., 1., -1., 3., 4.], &[3, 3], 0.0);
    }
    for (_, x) in variants(&[-1.0; 9], &[3, 3], DType::F32) {
        let src = f32t(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
        let y = x.scatter(0, &i, &src).unwrap();
        assert_close(&y, &[3., 1., -1., -1., -1., 2., 0., 4., 5.], &[3, 3], 0.0);
    }
}

#[test]
fn scatter_collisions_last_write_wins_and_add_accumulates() {
    let x = i64t(&[100, 100, 100], &[3]);
    let i = i64t(&[1, 1, 2, 1], &[4]);
    let src = i64t(&[5, 6, 7, 8], &[4]);
    assert_eq!(
        x.scatter(0, &i, &src).unwrap().to_vec::<i64>().unwrap(),
        vec![100, 8, 7]
    );
    assert_eq!(
        x.scatter_add(0, &i, &src).unwrap().to_vec::<i64>().unwrap(),
        vec![100, 119, 107]
    );
    // Integer accumulation wraps.
    let x = t(&[250.0], &[1], DType::U8);
    let i = i64t(&[0, 0], &[2]);
    let y = x
        .scatter_add(0, &i, &t(&[3.0, 4.0], &[2], DType::U8))
        .unwrap();
    assert_eq!(y.to_vec::<u8>().unwrap(), vec![1]);
}

#[test]
fn scatter_reads_only_the_index_shaped_corner_of_src() {
    let x = f32t(&[0.0; 4], &[2, 2]);
    let src = f32t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let i = i64t(&[1], &[1, 1]);
    assert_close(
        &x.scatter(1, &i, &src).unwrap(),
        &[0., 1., 0., 0.],
        &[2, 2],
        0.0,
    );
    // A stride-0 src and a broadcast index.
    let src = f32t(&[2.5], &[1, 1]).broadcast_to([2, 2]).unwrap();
    let i = i64t(&[0, 0], &[1, 2]).broadcast_to([2, 2]).unwrap();
    assert_close(
        &x.scatter_add(0, &i, &src).unwrap(),
        &[5., 5., 0., 0.],
        &[2, 2],
        0.0,
    );
    let empty = i64t(&[], &[0, 2]);
    assert_close(&x.scatter(0, &empty, &src).unwrap(), &[0.; 4], &[2, 2], 0.0);
}

#[test]
fn scatter_errors_are_typed() {
    let x = f32t(&[0.0; 4], &[2, 2]);
    let i = i64t(&[0, 1], &[1, 2]);
    let src = f32t(&[1.0, 2.0], &[1, 2]);
    let e = x.scatter(0, &i64t(&[2, 0], &[1, 2]), &src).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                op: "scatter",
                index: 2,
                dim: 0,
                size: 2
            }
        ),
        "{e}"
    );
    let e = x
        .scatter_add(0, &i, &t(&[1.0, 2.0], &[1, 2], DType::F64))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::DTypeMismatch {
                op: "scatter_add",
                ..
            }
        ),
        "{e}"
    );
    let e = x.scatter(0, &i, &f32t(&[1.0], &[1, 1])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                op: "scatter",
                name: "src",
                ..
            }
        ),
        "{e}"
    );
    let e = x.scatter(0, &i, &f32t(&[1.0, 2.0], &[2])).unwrap_err();
    assert!(
        matches!(e, Error::RankMismatch { op: "scatter", .. }),
        "{e}"
    );
    let e = x
        .scatter(1, &i64t(&[0; 3], &[3, 1]), &f32t(&[0.0; 3], &[3, 1]))
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "index", .. }),
        "{e}"
    );
    let s = f32t(&[1.0], &[]);
    let e = s.scatter(0, &i64t(&[0], &[]), &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "scatter",
                expected: 1,
                ..
            }
        ),
        "{e}"
    );
    let flags = Tensor::from_vec(vec![false; 2], [2], Device::Reference).unwrap();
    let e = flags.scatter_add(0, &i64t(&[0], &[1]), &flags).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDType {
                op: "scatter_add",
                dtype: DType::Bool,
                ..
            }
        ),
        "{e}"
    );
    // Replacement is fine on bool.
    let one = Tensor::from_vec(vec![true], [1], Device::Reference).unwrap();
    let y = flags.scatter(0, &i64t(&[1], &[1]), &one).unwrap();
    assert_eq!(y.to_vec::<bool>().unwrap(), vec![false, true]);
}

// ---------------------------------------------------------------- pad

#[test]
fn pad_each_dim_on_every_layout() {
    // x = [[0, 1, 2], [3, 4, 5]] padded (1, 0) rows, (0, 2) columns with 9.
    for (_, x) in iota(&[2, 3], DType::F32) {
        let y = x.pad(&[(1, 0), (0, 2)], 9.0).unwrap();
        #[rustfmt::skip]
        let expected = [
            9., 9., 9., 9., 9.,
            0., 1., 2., 9., 9.,
            3., 4., 5., 9., 9.,
        ];
        assert_close(&y, &expected, &[3, 5], 0.0);
        let y = x.pad(&[(0, 0), (0, 0)], 9.0).unwrap();
        assert_close(&y, &[0., 1., 2., 3., 4., 5.], &[2, 3], 0.0);
    }
}

#[test]
fn pad_zero_size_scalar_and_broadcast_inputs() {
    let y = f32t(&[], &[0, 2]).pad(&[(1, 1), (0, 0)], -1.0).unwrap();
    assert_close(&y, &[-1.; 4], &[2, 2], 0.0);
    let y = f32t(&[], &[2, 0]).pad(&[(0, 0), (0, 1)], 3.0).unwrap();
    assert_close(&y, &[3., 3.], &[2, 1], 0.0);
    let y = f32t(&[5.0], &[]).pad(&[], 0.0).unwrap();
    assert_close(&y, &[5.], &[], 0.0);
    let b = f32t(&[1.0, 2.0], &[2]).broadcast_to([2, 2]).unwrap();
    let y = b.pad(&[(0, 0), (1, 0)], 0.0).unwrap();
    assert_close(&y, &[0., 1., 2., 0., 1., 2.], &[2, 3], 0.0);
}

#[test]
fn pad_value_is_converted_to_the_dtype() {
    let x = t(&[1.0], &[1], DType::U8);
    assert_eq!(
        x.pad(&[(1, 1)], 300.0).unwrap().to_vec::<u8>().unwrap(),
        vec![255, 1, 255]
    );
    let x = i64t(&[1], &[1]);
    assert_eq!(
        x.pad(&[(0, 1)], -2.7).unwrap().to_vec::<i64>().unwrap(),
        vec![1, -2]
    );
    let x = Tensor::from_vec(vec![false], [1], Device::Reference).unwrap();
    assert_eq!(
        x.pad(&[(1, 0)], 1.0).unwrap().to_vec::<bool>().unwrap(),
        vec![true, false]
    );
    let y = f32t(&[1.0], &[1])
        .pad(&[(1, 0)], f64::NEG_INFINITY)
        .unwrap();
    assert_close(&y, &[f64::NEG_INFINITY, 1.0], &[2], 0.0);
}

#[test]
fn pad_errors_are_typed() {
    let x = f32t(&[0.0; 6], &[2, 3]);
    let e = x.pad(&[(1, 1)], 0.0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "pad: invalid pads: expected one (before, after) pair per dim of [2, 3] (2 pairs), got 1"
    );
    let e = x.pad(&[(0, 0), (usize::MAX, 1)], 0.0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                op: "pad",
                name: "pads",
                ..
            }
        ),
        "{e}"
    );
}

// --------------------------------------------------------------- flip

#[test]
fn flip_on_every_layout() {
    // x = [[[0, 1], [2, 3], [4, 5]], [[6, 7], [8, 9], [10, 11]]]
    for (_, x) in iota(&[2, 3, 2], DType::I32) {
        let y = x.flip(&[1]).unwrap();
        assert_close(
            &y,
            &[4., 5., 2., 3., 0., 1., 10., 11., 8., 9., 6., 7.],
            &[2, 3, 2],
            0.0,
        );
        let y = x.flip(&[-1, 0]).unwrap();
        assert_close(
            &y,
            &[7., 6., 9., 8., 11., 10., 1., 0., 3., 2., 5., 4.],
            &[2, 3, 2],
            0.0,
        );
        let y = x.flip(&[]).unwrap();
        assert_close(
            &y,
            &(0..12).map(f64::from).collect::<Vec<_>>(),
            &[2, 3, 2],
            0.0,
        );
        assert!(!y.shares_storage(&x));
    }
}

#[test]
fn flip_of_broadcast_zero_size_and_scalar() {
    let b = f32t(&[1.0, 2.0], &[2]).broadcast_to([3, 2]).unwrap();
    assert_close(
        &b.flip(&[1]).unwrap(),
        &[2., 1., 2., 1., 2., 1.],
        &[3, 2],
        0.0,
    );
    assert_close(
        &b.flip(&[0]).unwrap(),
        &[1., 2., 1., 2., 1., 2.],
        &[3, 2],
        0.0,
    );
    assert_eq!(f32t(&[], &[2, 0]).flip(&[0, 1]).unwrap().dims(), &[2, 0]);
    assert_close(&f32t(&[4.0], &[]).flip(&[]).unwrap(), &[4.], &[], 0.0);
    assert_close(&f32t(&[4.0], &[1]).flip(&[0]).unwrap(), &[4.], &[1], 0.0);
}

#[test]
fn flip_errors_are_typed() {
    let x = f32t(&[0.0; 6], &[2, 3]);
    let e = x.flip(&[1, -1]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DuplicateDim {
                op: "flip",
                dim: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = x.flip(&[2]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DimOutOfRange {
                op: "flip",
                dim: 2,
                rank: 2
            }
        ),
        "{e}"
    );
}

// ---------------------------------------------------------- tril/triu

#[test]
fn tril_triu_with_offsets_on_every_layout() {
    // x = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] (3x4, not square)
    for (_, x) in iota(&[3, 4], DType::F32) {
        #[rustfmt::skip]
        let cases: [(bool, i64, [f64; 12]); 6] = [
            (false, 0, [0., 0., 0., 0., 4., 5., 0., 0., 8., 9., 10., 0.]),
            (false, 1, [0., 1., 0., 0., 4., 5., 6., 0., 8., 9., 10., 11.]),
            (false, -2, [0., 0., 0., 0., 0., 0., 0., 0., 8., 0., 0., 0.]),
            (true, 0, [0., 1., 2., 3., 0., 5., 6., 7., 0., 0., 10., 11.]),
            (true, 2, [0., 0., 2., 3., 0., 0., 0., 7., 0., 0., 0., 0.]),
            (true, -1, [0., 1., 2., 3., 4., 5., 6., 7., 0., 9., 10., 11.]),
        ];
        for (upper, k, expected) in cases {
            let y = if upper { x.triu(k) } else { x.tril(k) }.unwrap();
            assert_close(&y, &expected, &[3, 4], 0.0);
        }
        // Offsets past the matrix keep everything or nothing.
        assert_close(&x.tril(99).unwrap(), &x.to_f64_vec().unwrap(), &[3, 4], 0.0);
        assert_close(
            &x.triu(i64::MIN).unwrap(),
            &x.to_f64_vec().unwrap(),
            &[3, 4],
            0.0,
        );
        assert_close(&x.triu(4).unwrap(), &[0.; 12], &[3, 4], 0.0);
    }
}

#[test]
fn tril_is_batched_over_leading_dims() {
    for (_, x) in variants(&[1.0; 8], &[2, 2, 2], DType::I64) {
        let y = x.tril(0).unwrap();
        assert_close(&y, &[1., 0., 1., 1., 1., 0., 1., 1.], &[2, 2, 2], 0.0);
    }
    let b = f32t(&[1.0, 2.0], &[2]).broadcast_to([2, 2]).unwrap();
    assert_close(&b.triu(0).unwrap(), &[1., 2., 0., 2.], &[2, 2], 0.0);
    assert_eq!(f32t(&[], &[0, 3, 3]).tril(0).unwrap().dims(), &[0, 3, 3]);
    let flags = Tensor::from_vec(vec![true; 4], [2, 2], Device::Reference).unwrap();
    assert_eq!(
        flags.triu(1).unwrap().to_vec::<bool>().unwrap(),
        vec![false, true, false, false]
    );
}

#[test]
fn tril_triu_need_rank_2() {
    let e = f32t(&[1.0, 2.0], &[2]).tril(0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tril: expected a tensor of rank 2, got shape [2]"
    );
    let e = f32t(&[1.0], &[]).triu(0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankMismatch {
                op: "triu",
                expected: 2,
                ..
            }
        ),
        "{e}"
    );
}

// ------------------------------------------------------------ one_hot

#[test]
fn one_hot_on_every_layout_and_dtype() {
    for dtype in [DType::I64, DType::I32, DType::U8] {
        for (name, y) in variants(&[2.0, 0.0, 1.0, 2.0], &[2, 2], dtype) {
            let h = y.one_hot(3).unwrap();
            assert_eq!(h.dtype(), DType::I64, "{name}");
            #[rustfmt::skip]
            let expected = [
                0., 0., 1.,  1., 0., 0.,
                0., 1., 0.,  0., 0., 1.,
            ];
            assert_close(&h, &expected, &[2, 2, 3], 0.0);
        }
    }
}

#[test]
fn one_hot_of_scalars_broadcasts_and_empties() {
    let h = i64t(&[1], &[]).one_hot(2).unwrap();
    assert_close(&h, &[0., 1.], &[2], 0.0);
    let b = i64t(&[0], &[1]).broadcast_to([3]).unwrap();
    assert_close(&b.one_hot(1).unwrap(), &[1., 1., 1.], &[3, 1], 0.0);
    assert_eq!(i64t(&[], &[0]).one_hot(0).unwrap().dims(), &[0, 0]);
}

#[test]
fn one_hot_errors_are_typed() {
    let e = i64t(&[0, 3], &[2]).one_hot(3).unwrap_err();
    assert_eq!(
        e.to_string(),
        "one_hot: index 3 is out of bounds for dim 1 of size 3"
    );
    let e = i64t(&[-1], &[1]).one_hot(3).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                op: "one_hot",
                index: -1,
                ..
            }
        ),
        "{e}"
    );
    let e = f32t(&[0.0], &[1]).one_hot(3).unwrap_err();
    assert!(
        matches!(e, Error::UnsupportedDType { op: "one_hot", .. }),
        "{e}"
    );
    let e = i64t(&[0], &[1]).one_hot(0).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfBounds { size: 0, .. }), "{e}");
}

// ---------------------------------------------------------- the laws

/// A small shape (rank 1..=3, extents 0..=3) and values to fill it.
fn shape_and_values() -> impl Strategy<Value = (Vec<usize>, Vec<f64>)> {
    prop::collection::vec(0usize..=3, 1..=3).prop_flat_map(|shape| {
        let n = shape.iter().product::<usize>();
        let values = prop::collection::vec((-50i32..50).prop_map(f64::from), n);
        (Just(shape), values)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn cat_then_split_round_trips(
        (shape, values) in shape_and_values(),
        pieces in 1usize..4,
        dim_pick in 0usize..3,
    ) {
        let dim = dim_pick % shape.len();
        let x = f32t(&values, &shape);
        let copies: Vec<Tensor> = (0..pieces).map(|_| x.clone()).collect();
        let joined = Tensor::cat(&copies, dim as isize).unwrap();
        let mut expected = shape.clone();
        expected[dim] *= pieces;
        prop_assert_eq!(joined.dims(), expected.as_slice());
        if shape[dim] > 0 {
            let parts = joined.split(shape[dim], dim as isize).unwrap();
            prop_assert_eq!(parts.len(), pieces);
            for p in parts {
                prop_assert_eq!(p.dims(), x.dims());
                prop_assert_eq!(p.to_f64_vec().unwrap(), values.clone());
            }
        }
    }

    #[test]
    fn flip_twice_is_identity(
        (shape, values) in shape_and_values(),
        mask in 0u8..8,
    ) {
        let dims: Vec<isize> = (0..shape.len()).filter(|d| mask >> d & 1 == 1).map(|d| d as isize).collect();
        for (name, x) in variants(&values, &shape, DType::I32) {
            let back = x.flip(&dims).unwrap().flip(&dims).unwrap();
            prop_assert_eq!(back.to_f64_vec().unwrap(), values.clone(), "{}", name);
        }
    }

    #[test]
    fn gather_with_an_arange_index_is_the_identity(
        (shape, values) in shape_and_values(),
        dim_pick in 0usize..3,
    ) {
        let dim = dim_pick % shape.len();
        // index[..., j, ...] = j along `dim`: arange broadcast to the shape.
        let mut line = vec![1usize; shape.len()];
        line[dim] = shape[dim];
        let index = Tensor::arange(0.0, shape[dim] as f64, 1.0, DType::I64, Device::Reference)
            .unwrap()
            .reshape(line)
            .unwrap()
            .broadcast_to(shape.as_slice())
            .unwrap();
        for (name, x) in variants(&values, &shape, DType::F32) {
            let y = x.gather(dim as isize, &index).unwrap();
            prop_assert_eq!(y.to_f64_vec().unwrap(), values.clone(), "{}", name);
        }
    }

    #[test]
    fn scatter_add_of_ones_counts_occurrences(
        picks in prop::collection::vec(0i64..5, 0..20),
        bins in 5usize..8,
    ) {
        let n = picks.len();
        let index = i64t(&picks, &[n]);
        let ones = Tensor::ones([n], DType::I64, Device::Reference).unwrap();
        let zeros = Tensor::zeros([bins], DType::I64, Device::Reference).unwrap();
        let counts = zeros.scatter_add(0, &index, &ones).unwrap().to_vec::<i64>().unwrap();
        let expected: Vec<i64> = (0..bins as i64)
            .map(|b| picks.iter().filter(|&&p| p == b).count() as i64)
            .collect();
        prop_assert_eq!(counts, expected);
    }

    #[test]
    fn index_select_matches_narrow(
        (shape, values) in shape_and_values(),
        dim_pick in 0usize..3,
        pick in 0usize..3,
    ) {
        let dim = dim_pick % shape.len();
        prop_assume!(shape[dim] > 0);
        let p = pick % shape[dim];
        let x = f32t(&values, &shape);
        let y = x.index_select(dim as isize, &i64t(&[p as i64], &[1])).unwrap();
        let z = x.narrow(dim as isize, p, 1).unwrap();
        prop_assert_eq!(y.dims(), z.dims());
        prop_assert_eq!(y.to_f64_vec().unwrap(), z.to_f64_vec().unwrap());
    }
}
