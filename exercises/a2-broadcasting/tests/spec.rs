//! The spec of A2: hand-computed cases, the error's fields and message,
//! and the algebra broadcasting obeys.

use a2::{BroadcastError, broadcast, broadcast_all};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xA2),
        ..ProptestConfig::default()
    }
}

/// Shapes of rank 0 to 4 whose extents are drawn from {0, 1, 2, 3}, so
/// that both compatible and clashing pairs are common.
fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..5)
}

#[test]
fn equal_shapes_broadcast_to_themselves() {
    assert_eq!(
        broadcast(&[2, 3], &[2, 3]),
        Ok(vec![2, 3]),
        "broadcast([2, 3], [2, 3])"
    );
}

#[test]
fn ones_stretch_on_either_side() {
    assert_eq!(
        broadcast(&[2, 1], &[1, 3]),
        Ok(vec![2, 3]),
        "broadcast([2, 1], [1, 3])"
    );
    assert_eq!(
        broadcast(&[5, 1, 4], &[3, 1]),
        Ok(vec![5, 3, 4]),
        "broadcast([5, 1, 4], [3, 1])"
    );
}

#[test]
fn missing_leading_dims_count_as_one() {
    assert_eq!(
        broadcast(&[4], &[3, 1]),
        Ok(vec![3, 4]),
        "broadcast([4], [3, 1])"
    );
    assert_eq!(
        broadcast(&[], &[2, 2]),
        Ok(vec![2, 2]),
        "broadcast([], [2, 2])"
    );
    assert_eq!(broadcast(&[], &[]), Ok(vec![]), "broadcast([], [])");
}

#[test]
fn one_against_zero_gives_zero() {
    assert_eq!(broadcast(&[0], &[1]), Ok(vec![0]), "broadcast([0], [1])");
    assert_eq!(
        broadcast(&[2, 0], &[2, 1]),
        Ok(vec![2, 0]),
        "broadcast([2, 0], [2, 1])"
    );
}

#[test]
fn a_clash_is_a_typed_error_naming_the_dim() {
    assert_eq!(
        broadcast(&[2, 3], &[4]),
        Err(BroadcastError {
            lhs: vec![2, 3],
            rhs: vec![4],
            dim: 1,
            lhs_size: 3,
            rhs_size: 4,
        }),
        "broadcast([2, 3], [4])"
    );
    // The dim is counted in the padded result, and the first clash wins.
    let e = broadcast(&[3], &[2, 2]).unwrap_err();
    assert_eq!(
        (e.dim, e.lhs_size, e.rhs_size),
        (1, 3, 2),
        "(dim, lhs_size, rhs_size) of broadcast([3], [2, 2])"
    );
    let e = broadcast(&[2, 3], &[3, 2]).unwrap_err();
    assert_eq!(
        (e.dim, e.lhs_size, e.rhs_size),
        (0, 2, 3),
        "(dim, lhs_size, rhs_size) of broadcast([2, 3], [3, 2])"
    );
    // Zero does not stretch.
    let e = broadcast(&[0], &[2]).unwrap_err();
    assert_eq!(
        (e.dim, e.lhs_size, e.rhs_size),
        (0, 0, 2),
        "(dim, lhs_size, rhs_size) of broadcast([0], [2])"
    );
}

#[test]
fn the_message_names_the_op_the_shapes_and_the_clash() {
    let e = broadcast(&[2, 3], &[4]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "broadcast: shapes cannot be broadcast: [2, 3] and [4] (dim 1: 3 vs 4)",
        "the message of broadcast([2, 3], [4])"
    );
}

#[test]
fn broadcast_all_folds_left_to_right() {
    assert_eq!(broadcast_all(&[]), Ok(vec![]), "broadcast_all([])");
    assert_eq!(broadcast_all(&[&[3]]), Ok(vec![3]), "broadcast_all([[3]])");
    assert_eq!(
        broadcast_all(&[&[2, 1, 1], &[3, 1], &[4]]),
        Ok(vec![2, 3, 4]),
        "broadcast_all([[2, 1, 1], [3, 1], [4]])"
    );
    let e = broadcast_all(&[&[2, 1], &[3], &[4]]).unwrap_err();
    // [2, 1] and [3] give [2, 3]; the clash is then between [2, 3] and [4].
    assert_eq!(
        (e.lhs, e.rhs, e.dim),
        (vec![2, 3], vec![4], 1),
        "(lhs, rhs, dim) of broadcast_all([[2, 1], [3], [4]])"
    );
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn it_is_total_and_commutative(a in shape(), b in shape()) {
        let ab = broadcast(&a, &b);
        let ba = broadcast(&b, &a);
        prop_assert_eq!(ab.is_ok(), ba.is_ok(), "{:?} and {:?}", a, b);
        if let (Ok(x), Ok(y)) = (&ab, &ba) {
            prop_assert_eq!(x, y, "broadcast({:?}, {:?}) against its swap", a, b);
        }
        if let (Err(x), Err(y)) = (&ab, &ba) {
            prop_assert_eq!(
                (x.dim, x.lhs_size, x.rhs_size),
                (y.dim, y.rhs_size, y.lhs_size),
                "(dim, lhs_size, rhs_size) of broadcast({:?}, {:?}) against its swap's (dim, rhs_size, lhs_size)",
                a,
                b
            );
        }
    }

    #[test]
    fn the_scalar_is_neutral_and_every_shape_is_idempotent(a in shape()) {
        prop_assert_eq!(broadcast(&a, &[]), Ok(a.clone()), "broadcast({:?}, [])", a);
        prop_assert_eq!(broadcast(&a, &a), Ok(a.clone()), "broadcast({:?}, itself)", a);
    }

    #[test]
    fn the_result_has_the_larger_rank_and_absorbs_both(a in shape(), b in shape()) {
        if let Ok(r) = broadcast(&a, &b) {
            prop_assert_eq!(r.len(), a.len().max(b.len()), "rank of broadcast({:?}, {:?}) = {:?}", a, b, r);
            prop_assert_eq!(broadcast(&a, &r), Ok(r.clone()), "{:?} into {:?}", a, r);
            prop_assert_eq!(broadcast(&b, &r), Ok(r.clone()), "{:?} into {:?}", b, r);
        }
    }

    #[test]
    fn it_is_associative(a in shape(), b in shape(), c in shape()) {
        let left = broadcast(&a, &b).and_then(|ab| broadcast(&ab, &c));
        let right = broadcast(&b, &c).and_then(|bc| broadcast(&a, &bc));
        prop_assert_eq!(left.is_ok(), right.is_ok(), "{:?} {:?} {:?}", a, b, c);
        if let (Ok(l), Ok(r)) = (left, right) {
            prop_assert_eq!(l, r, "(a, b) then c, against a then (b, c), for {:?} {:?} {:?}", a, b, c);
        }
    }

    #[test]
    fn an_error_points_at_a_real_clash(a in shape(), b in shape()) {
        if let Err(e) = broadcast(&a, &b) {
            let rank = a.len().max(b.len());
            prop_assert!(e.dim < rank, "dim {} of broadcast({:?}, {:?}) is past rank {}", e.dim, a, b, rank);
            prop_assert!(e.lhs_size != e.rhs_size && e.lhs_size != 1 && e.rhs_size != 1, "{:?}", e);
            prop_assert_eq!((&e.lhs, &e.rhs), (&a, &b), "(lhs, rhs) of the error, against the inputs");
            let pad = |s: &[usize], i: usize| if i + s.len() < rank { 1 } else { s[i + s.len() - rank] };
            prop_assert_eq!(
                (pad(&a, e.dim), pad(&b, e.dim)),
                (e.lhs_size, e.rhs_size),
                "(lhs, rhs) extents at dim {} of broadcast({:?}, {:?}), against the error's (lhs_size, rhs_size)",
                e.dim,
                a,
                b
            );
        }
    }
}
