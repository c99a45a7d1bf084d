//! The spec of A1. Each test names the law or case it checks; the
//! `proptest!` ones try many shapes and report the smallest that fails.

use a1::{index_of, is_contiguous, offset_of, row_major_strides};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xA1),
        ..ProptestConfig::default()
    }
}

/// Shapes of rank 0 to 4 with extents 0 to 4.
fn dims() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..5, 0..5)
}

#[test]
fn strides_of_2x3x4_are_12_4_1() {
    assert_eq!(
        row_major_strides(&[2, 3, 4]),
        vec![12, 4, 1],
        "row_major_strides([2, 3, 4])"
    );
}

#[test]
fn strides_of_a_vector_and_a_scalar() {
    assert_eq!(row_major_strides(&[5]), vec![1], "row_major_strides([5])");
    assert_eq!(
        row_major_strides(&[]),
        Vec::<usize>::new(),
        "row_major_strides([])"
    );
}

#[test]
fn a_zero_extent_counts_as_one_in_strides() {
    assert_eq!(
        row_major_strides(&[3, 0, 2]),
        vec![2, 2, 1],
        "row_major_strides([3, 0, 2])"
    );
}

#[test]
fn offset_of_hand_computed_cases() {
    // [[0, 1, 2], [3, 4, 5]]: element [1, 2] is at 1*3 + 2*1 = 5.
    assert_eq!(
        offset_of(&[2, 3], &[3, 1], 0, &[1, 2]),
        Some(5),
        "offset_of([2, 3], [3, 1], 0, [1, 2])"
    );
    // The transpose of that matrix: shape [3, 2], strides [1, 3].
    // Its element [2, 1] is the original [1, 2], still at 5.
    assert_eq!(
        offset_of(&[3, 2], &[1, 3], 0, &[2, 1]),
        Some(5),
        "offset_of([3, 2], [1, 3], 0, [2, 1])"
    );
    // A view that starts 7 places in.
    assert_eq!(
        offset_of(&[2, 2], &[2, 1], 7, &[0, 0]),
        Some(7),
        "offset_of([2, 2], [2, 1], 7, [0, 0])"
    );
    assert_eq!(
        offset_of(&[2, 2], &[2, 1], 7, &[1, 1]),
        Some(10),
        "offset_of([2, 2], [2, 1], 7, [1, 1])"
    );
    // A broadcast row: stride 0 repeats one element along dim 0.
    assert_eq!(
        offset_of(&[4, 3], &[0, 1], 0, &[3, 2]),
        Some(2),
        "offset_of([4, 3], [0, 1], 0, [3, 2])"
    );
    // A scalar has one element, at the offset.
    assert_eq!(
        offset_of(&[], &[], 3, &[]),
        Some(3),
        "offset_of([], [], 3, [])"
    );
}

#[test]
fn offset_of_rejects_out_of_bounds_and_wrong_rank() {
    assert_eq!(offset_of(&[2, 3], &[3, 1], 0, &[2, 0]), None, "row 2 of 2");
    assert_eq!(
        offset_of(&[2, 3], &[3, 1], 0, &[0, 3]),
        None,
        "column 3 of 3"
    );
    assert_eq!(
        offset_of(&[2, 3], &[3, 1], 0, &[1]),
        None,
        "rank 1 index, rank 2 shape"
    );
    assert_eq!(
        offset_of(&[2, 3], &[3, 1], 0, &[0, 0, 0]),
        None,
        "rank 3 index"
    );
    assert_eq!(
        offset_of(&[0], &[1], 0, &[0]),
        None,
        "offset_of([0], [1], 0, [0]): an empty dim has no index"
    );
}

#[test]
fn index_of_counts_with_the_last_index_fastest() {
    assert_eq!(index_of(&[2, 3], 4), vec![1, 1], "index_of([2, 3], 4)");
    let order: Vec<Vec<usize>> = (0..4).map(|i| index_of(&[2, 2], i)).collect();
    assert_eq!(
        order,
        vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]],
        "index_of([2, 2], i) for i in 0..4"
    );
    assert_eq!(index_of(&[], 0), Vec::<usize>::new(), "index_of([], 0)");
}

#[test]
fn contiguity_hand_computed_cases() {
    assert!(
        is_contiguous(&[2, 3], &[3, 1]),
        "is_contiguous([2, 3], [3, 1]): fresh"
    );
    assert!(
        !is_contiguous(&[3, 2], &[1, 3]),
        "is_contiguous([3, 2], [1, 3]): transposed"
    );
    assert!(
        !is_contiguous(&[2, 3], &[4, 1]),
        "is_contiguous([2, 3], [4, 1]): rows with a gap (a narrowed view)"
    );
    assert!(
        !is_contiguous(&[3], &[2]),
        "is_contiguous([3], [2]): every other element"
    );
    assert!(
        !is_contiguous(&[4, 3], &[0, 1]),
        "is_contiguous([4, 3], [0, 1]): broadcast"
    );
    assert!(
        is_contiguous(&[1, 3], &[99, 1]),
        "is_contiguous([1, 3], [99, 1]): a size-1 dim's stride never matters"
    );
    assert!(
        is_contiguous(&[0, 5], &[7, 7]),
        "is_contiguous([0, 5], [7, 7]): no elements"
    );
    assert!(is_contiguous(&[], &[]), "is_contiguous([], []): a scalar");
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn each_stride_is_the_product_of_the_extents_inside_it(dims in dims()) {
        let s = row_major_strides(&dims);
        prop_assert_eq!(s.len(), dims.len(), "rank of row_major_strides({:?})", dims);
        for i in 0..dims.len() {
            let inside: usize = dims[i + 1..].iter().map(|&d| d.max(1)).product();
            prop_assert_eq!(s[i], inside, "stride of dim {} of {:?}", i, dims);
        }
    }

    #[test]
    fn row_major_offsets_are_a_bijection_onto_0_to_numel(dims in dims()) {
        let strides = row_major_strides(&dims);
        let numel: usize = dims.iter().product();
        // The i-th index in row-major order lands on position i: every
        // position is hit exactly once.
        for i in 0..numel {
            let index = index_of(&dims, i);
            let off = offset_of(&dims, &strides, 0, &index);
            prop_assert_eq!(off, Some(i), "index {:?} of {:?}", index, dims);
        }
    }

    #[test]
    fn index_of_stays_in_bounds(dims in dims()) {
        let numel: usize = dims.iter().product();
        for i in 0..numel {
            let index = index_of(&dims, i);
            prop_assert_eq!(index.len(), dims.len(), "rank of index_of({:?}, {})", dims, i);
            prop_assert!(index.iter().zip(&dims).all(|(&i, &d)| i < d), "{:?} in {:?}", index, dims);
        }
    }

    #[test]
    fn row_major_strides_are_contiguous(dims in dims()) {
        prop_assert!(is_contiguous(&dims, &row_major_strides(&dims)), "{:?}", dims);
    }

    #[test]
    fn swapping_two_real_dims_breaks_contiguity(
        dims in prop::collection::vec(2usize..5, 2..5),
        a in 0usize..4,
        b in 0usize..4,
    ) {
        let (a, b) = (a % dims.len(), b % dims.len());
        prop_assume!(a != b);
        let mut d = dims.clone();
        let mut s = row_major_strides(&dims);
        d.swap(a, b);
        s.swap(a, b);
        prop_assert!(!is_contiguous(&d, &s), "dims {:?} strides {:?}", d, s);
    }
}
