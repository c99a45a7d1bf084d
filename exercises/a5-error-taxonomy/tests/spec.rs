//! The spec of A5: every failure is a typed value carrying what was wrong,
//! every message starts with the op and shows the shapes, and the checked
//! types keep their promise.

use a5::{Dim, OpError, Shaped, infer_shape};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xA5),
        ..ProptestConfig::default()
    }
}

#[test]
fn dims_resolve_from_either_end() {
    assert_eq!(
        Dim::new("sum", 0, 3).map(Dim::index),
        Ok(0),
        "Dim::new(\"sum\", 0, 3).map(Dim::index)"
    );
    assert_eq!(
        Dim::new("sum", 2, 3).map(Dim::index),
        Ok(2),
        "Dim::new(\"sum\", 2, 3).map(Dim::index)"
    );
    assert_eq!(
        Dim::new("sum", -1, 3).map(Dim::index),
        Ok(2),
        "Dim::new(\"sum\", -1, 3).map(Dim::index)"
    );
    assert_eq!(
        Dim::new("sum", -3, 3).map(Dim::index),
        Ok(0),
        "Dim::new(\"sum\", -3, 3).map(Dim::index)"
    );
    assert_eq!(
        Dim::new("sum", -1, 3).map(Dim::rank),
        Ok(3),
        "Dim::new(\"sum\", -1, 3).map(Dim::rank)"
    );
}

#[test]
fn a_dim_out_of_range_is_typed_and_says_so() {
    let e = Dim::new("sum", 3, 3).unwrap_err();
    assert_eq!(
        e,
        OpError::DimOutOfRange {
            op: "sum",
            dim: 3,
            rank: 3
        },
        "Dim::new(\"sum\", 3, 3)"
    );
    assert_eq!(
        e.to_string(),
        "sum: dim 3 is out of range for a tensor of rank 3",
        "the message of Dim::new(\"sum\", 3, 3)"
    );
    assert!(
        Dim::new("sum", -4, 3).is_err(),
        "Dim::new(\"sum\", -4, 3).is_err()"
    );
    assert!(Dim::new("squeeze", 0, 0).is_err(), "a scalar has no dims");
}

#[test]
fn shaped_data_must_fill_its_shape() {
    let ok = Shaped::new("from_vec", &[2, 3], vec![0.0; 6]).unwrap();
    assert_eq!(
        ok.dims(),
        &[2, 3],
        "dims of Shaped::new(\"from_vec\", [2, 3], 6 zeros)"
    );
    assert_eq!(
        ok.data(),
        &[0.0; 6],
        "data of Shaped::new(\"from_vec\", [2, 3], 6 zeros)"
    );
    let e = Shaped::new("from_vec", &[2, 3], vec![0.0; 5]).unwrap_err();
    assert_eq!(
        e,
        OpError::ElementCount {
            op: "from_vec",
            shape: vec![2, 3],
            expected: 6,
            got: 5
        },
        "Shaped::new(\"from_vec\", [2, 3], 5 zeros)"
    );
    assert_eq!(
        e.to_string(),
        "from_vec: 5 elements do not fill shape [2, 3] (6 elements)",
        "the message of Shaped::new(\"from_vec\", [2, 3], 5 zeros)"
    );
    assert!(
        Shaped::new("from_vec", &[], vec![1.0]).is_ok(),
        "a scalar holds one element"
    );
}

#[test]
fn add_needs_equal_shapes() {
    let a = Shaped::new("t", &[2], vec![1.0, 2.0]).unwrap();
    let b = Shaped::new("t", &[2], vec![10.0, 20.0]).unwrap();
    assert_eq!(
        a.add(&b).unwrap().data(),
        &[11.0, 22.0],
        "a.add(b).unwrap().data()"
    );
    let c = Shaped::new("t", &[1, 2], vec![1.0, 2.0]).unwrap();
    let e = a.add(&c).unwrap_err();
    assert_eq!(
        e,
        OpError::ShapeMismatch {
            op: "add",
            lhs: vec![2],
            rhs: vec![1, 2]
        },
        "a [2] array added to a [1, 2] one"
    );
    assert_eq!(
        e.to_string(),
        "add: shapes differ: [2] and [1, 2]",
        "the message of a [2] array added to a [1, 2] one"
    );
}

#[test]
fn infer_shape_fills_in_one_minus_one() {
    assert_eq!(
        infer_shape("reshape", 6, &[2, -1]),
        Ok(vec![2, 3]),
        "infer_shape(\"reshape\", 6, [2, -1])"
    );
    assert_eq!(
        infer_shape("reshape", 6, &[-1]),
        Ok(vec![6]),
        "infer_shape(\"reshape\", 6, [-1])"
    );
    assert_eq!(
        infer_shape("reshape", 6, &[3, 2]),
        Ok(vec![3, 2]),
        "infer_shape(\"reshape\", 6, [3, 2])"
    );
    assert_eq!(
        infer_shape("reshape", 0, &[-1, 4]),
        Ok(vec![0, 4]),
        "infer_shape(\"reshape\", 0, [-1, 4])"
    );
}

#[test]
fn infer_shape_errors_are_typed() {
    for bad in [&[-1, -1][..], &[2, -2], &[4, -1], &[0, -1]] {
        match infer_shape("reshape", 6, bad) {
            Err(OpError::InvalidArgument { op, name, message }) => {
                assert_eq!((op, name), ("reshape", "shape"), "{bad:?}");
                assert!(
                    message.contains(&format!("{bad:?}")),
                    "{message:?} should show {bad:?}"
                );
            }
            other => panic!("{bad:?}: expected InvalidArgument, got {other:?}"),
        }
    }
    assert_eq!(
        infer_shape("view", 6, &[4, 2]),
        Err(OpError::ElementCount {
            op: "view",
            shape: vec![4, 2],
            expected: 8,
            got: 6
        }),
        "infer_shape(\"view\", 6, [4, 2])"
    );
    let e = infer_shape("view", 6, &[-1, -1]).unwrap_err();
    assert!(e.to_string().starts_with("view: invalid shape: "), "{e}");
}

#[test]
fn errors_are_std_errors() {
    fn source_chain(e: &dyn std::error::Error) -> String {
        e.to_string()
    }
    let e = Dim::new("mean", 5, 2).unwrap_err();
    assert_eq!(
        source_chain(&e),
        "mean: dim 5 is out of range for a tensor of rank 2",
        "Dim::new(\"mean\", 5, 2) as a std::error::Error"
    );
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_dim_is_valid_exactly_when_it_is_in_range(dim in -6isize..6, rank in 0usize..5) {
        let r = rank as isize;
        match Dim::new("op", dim, rank) {
            Ok(d) => {
                prop_assert!(-r <= dim && dim < r, "Dim::new(\"op\", {}, {}) accepted", dim, rank);
                prop_assert!(d.index() < d.rank(), "index of Dim::new(\"op\", {}, {})", dim, rank);
                prop_assert_eq!(d.index() as isize, if dim < 0 { dim + r } else { dim }, "index of Dim::new(\"op\", {}, {})", dim, rank);
            }
            Err(e) => {
                prop_assert!(dim < -r || dim >= r, "Dim::new(\"op\", {}, {}) refused: {:?}", dim, rank, e);
                prop_assert_eq!(e, OpError::DimOutOfRange { op: "op", dim, rank }, "Dim::new(\"op\", {}, {})", dim, rank);
            }
        }
    }

    #[test]
    fn every_message_starts_with_the_op_and_shows_the_shapes(
        lhs in prop::collection::vec(0usize..5, 0..4),
        rhs in prop::collection::vec(0usize..5, 0..4),
    ) {
        prop_assume!(lhs != rhs);
        let n: usize = lhs.iter().product();
        let a = Shaped::new("t", &lhs, vec![1.0; n]).unwrap();
        let b = Shaped::new("t", &rhs, vec![1.0; rhs.iter().product()]).unwrap();
        let e = a.add(&b).unwrap_err();
        let text = e.to_string();
        prop_assert!(text.starts_with("add: "), "{}", text);
        prop_assert!(text.contains(&format!("{:?}", lhs)) && text.contains(&format!("{:?}", rhs)), "{}", text);
        let short = Shaped::new("from_vec", &lhs, vec![0.0; n + 1]).unwrap_err();
        prop_assert!(short.to_string().starts_with("from_vec: "), "{}", short);
        let shows_shape = short.to_string().contains(&format!("{:?}", lhs));
        prop_assert!(shows_shape, "{}", short);
    }

    #[test]
    fn an_inferred_shape_always_holds_numel(numel in 0usize..30, known in prop::collection::vec(1usize..4, 0..3), at in 0usize..3) {
        let mut dims: Vec<isize> = known.iter().map(|&d| d as isize).collect();
        dims.insert(at.min(dims.len()), -1);
        match infer_shape("reshape", numel, &dims) {
            Ok(shape) => {
                prop_assert_eq!(shape.iter().product::<usize>(), numel, "infer_shape({}, {:?}) = {:?}", numel, dims, shape);
                prop_assert_eq!(shape.len(), dims.len(), "infer_shape({}, {:?}) = {:?}", numel, dims, shape);
            }
            Err(e) => {
                let known: usize = known.iter().product();
                prop_assert!(numel % known != 0, "{:?} for {} gave {:?}", dims, numel, e);
                let is_invalid = matches!(e, OpError::InvalidArgument { .. });
                prop_assert!(is_invalid, "infer_shape({}, {:?}) gave {:?}, not InvalidArgument", numel, dims, e);
            }
        }
    }
}
