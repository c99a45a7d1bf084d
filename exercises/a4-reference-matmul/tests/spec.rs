//! The spec of A4. Entries are small integers, so every product and sum
//! is exact in `f64` and the laws can be checked with `==`.

use a4::{Array, MatmulError, matmul};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xA4),
        ..ProptestConfig::default()
    }
}

/// An array of the given dims with integer entries in -4..=4.
fn array(dims: Vec<usize>) -> impl Strategy<Value = Array> {
    let n: usize = dims.iter().product();
    prop::collection::vec(-4i32..=4, n)
        .prop_map(move |v| Array::new(&dims, v.into_iter().map(f64::from).collect()))
}

fn eye(n: usize) -> Array {
    let mut data = vec![0.0; n * n];
    for i in 0..n {
        data[i * n + i] = 1.0;
    }
    Array::new(&[n, n], data)
}

/// The last two dims swapped (a copy; transposing is not multiplying).
fn transpose(x: &Array) -> Array {
    let r = x.dims.len();
    let (m, n) = (x.dims[r - 2], x.dims[r - 1]);
    let batches = x.data.len().checked_div(m * n).unwrap_or(0);
    let mut data = Vec::with_capacity(x.data.len());
    for b in 0..batches {
        for j in 0..n {
            for i in 0..m {
                data.push(x.data[b * m * n + i * n + j]);
            }
        }
    }
    let mut dims = x.dims.clone();
    dims.swap(r - 2, r - 1);
    Array::new(&dims, data)
}

fn add(x: &Array, y: &Array) -> Array {
    assert_eq!(x.dims, y.dims, "dims of the two arrays added");
    Array::new(
        &x.dims,
        x.data.iter().zip(&y.data).map(|(a, b)| a + b).collect(),
    )
}

/// Batch `i` of a rank-3 array, as a matrix.
fn batch(x: &Array, i: usize) -> Array {
    let (m, n) = (x.dims[1], x.dims[2]);
    Array::new(&[m, n], x.data[i * m * n..(i + 1) * m * n].to_vec())
}

#[test]
fn two_by_two_by_hand() {
    let a = Array::new(&[2, 2], vec![1.0, 2.0, 3.0, 4.0]);
    let b = Array::new(&[2, 2], vec![5.0, 6.0, 7.0, 8.0]);
    // [1*5 + 2*7, 1*6 + 2*8; 3*5 + 4*7, 3*6 + 4*8]
    assert_eq!(
        matmul(&a, &b),
        Ok(Array::new(&[2, 2], vec![19.0, 22.0, 43.0, 50.0])),
        "matmul(a, b)"
    );
}

#[test]
fn a_matrix_times_a_column_by_hand() {
    let a = Array::new(&[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let c = Array::new(&[3, 1], vec![1.0, 0.0, -1.0]);
    assert_eq!(
        matmul(&a, &c),
        Ok(Array::new(&[2, 1], vec![-2.0, -2.0])),
        "[[1, 2, 3], [4, 5, 6]] @ [[1], [0], [-1]]"
    );
}

#[test]
fn empty_extents() {
    let a = Array::new(&[2, 0], vec![]);
    let b = Array::new(&[0, 3], vec![]);
    assert_eq!(
        matmul(&a, &b),
        Ok(Array::new(&[2, 3], vec![0.0; 6])),
        "k = 0 sums nothing"
    );
    let e = Array::new(&[0, 3], vec![]);
    let f = Array::new(&[3, 2], vec![1.0; 6]);
    assert_eq!(
        matmul(&e, &f),
        Ok(Array::new(&[0, 2], vec![])),
        "a [0, 3] array @ a [3, 2] one"
    );
}

#[test]
fn batch_dims_broadcast_by_hand() {
    // Two left matrices (I and 2I) against one right matrix: [2, 2, 2] @ [2, 2].
    let a = Array::new(&[2, 2, 2], vec![1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 2.0]);
    let b = Array::new(&[2, 2], vec![1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        matmul(&a, &b),
        Ok(Array::new(
            &[2, 2, 2],
            vec![1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0]
        )),
        "matmul(a, b)"
    );
    // [2, 1, 1, 1] @ [3, 1, 1] is [2, 3, 1, 1]: every pairing of a and b.
    let a = Array::new(&[2, 1, 1, 1], vec![1.0, 10.0]);
    let b = Array::new(&[3, 1, 1], vec![1.0, 2.0, 3.0]);
    assert_eq!(
        matmul(&a, &b),
        Ok(Array::new(
            &[2, 3, 1, 1],
            vec![1.0, 2.0, 3.0, 10.0, 20.0, 30.0]
        )),
        "matmul(a, b)"
    );
}

#[test]
fn errors_name_the_shapes() {
    let v = Array::new(&[3], vec![1.0; 3]);
    let m = Array::new(&[3, 3], vec![1.0; 9]);
    assert_eq!(
        matmul(&v, &m),
        Err(MatmulError::RankTooSmall {
            lhs: vec![3],
            rhs: vec![3, 3]
        }),
        "matmul(v, m)"
    );
    let a = Array::new(&[2, 3], vec![0.0; 6]);
    let b = Array::new(&[4, 5], vec![0.0; 20]);
    assert_eq!(
        matmul(&a, &b),
        Err(MatmulError::InnerMismatch {
            lhs: vec![2, 3],
            rhs: vec![4, 5],
            k_lhs: 3,
            k_rhs: 4
        }),
        "matmul(a, b)"
    );
    let a = Array::new(&[2, 1, 1], vec![0.0; 2]);
    let b = Array::new(&[3, 1, 1], vec![0.0; 3]);
    assert_eq!(
        matmul(&a, &b),
        Err(MatmulError::BatchMismatch {
            lhs: vec![2, 1, 1],
            rhs: vec![3, 1, 1]
        }),
        "matmul(a, b)"
    );
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_identity_is_neutral(a in (1usize..5, 1usize..5).prop_flat_map(|(m, k)| array(vec![m, k]))) {
        let (m, k) = (a.dims[0], a.dims[1]);
        prop_assert_eq!(matmul(&a, &eye(k)), Ok(a.clone()), "a @ eye({}), a = {:?}", k, a);
        prop_assert_eq!(matmul(&eye(m), &a), Ok(a.clone()), "eye({}) @ a, a = {:?}", m, a);
    }

    #[test]
    fn transposing_reverses_the_product(
        (a, b) in (1usize..4, 1usize..4, 1usize..4)
            .prop_flat_map(|(m, k, n)| (array(vec![m, k]), array(vec![k, n])))
    ) {
        let ab = matmul(&a, &b).unwrap();
        prop_assert_eq!(Ok(transpose(&ab)), matmul(&transpose(&b), &transpose(&a)), "(a @ b)ᵀ against bᵀ @ aᵀ, a = {:?}, b = {:?}", a, b);
    }

    #[test]
    fn the_product_is_associative(
        (a, b, c) in (1usize..4, 1usize..4, 1usize..4, 1usize..4)
            .prop_flat_map(|(m, k, l, n)| (array(vec![m, k]), array(vec![k, l]), array(vec![l, n])))
    ) {
        let left = matmul(&matmul(&a, &b).unwrap(), &c);
        let right = matmul(&a, &matmul(&b, &c).unwrap());
        prop_assert_eq!(left, right, "(a @ b) @ c against a @ (b @ c), a = {:?}, b = {:?}, c = {:?}", a, b, c);
    }

    #[test]
    fn the_product_distributes_over_addition(
        (a, b, c) in (1usize..4, 1usize..4, 1usize..4)
            .prop_flat_map(|(m, k, n)| (array(vec![m, k]), array(vec![k, n]), array(vec![k, n])))
    ) {
        let left = matmul(&a, &add(&b, &c)).unwrap();
        let right = add(&matmul(&a, &b).unwrap(), &matmul(&a, &c).unwrap());
        prop_assert_eq!(left, right, "a @ (b + c) against a @ b + a @ c, a = {:?}, b = {:?}, c = {:?}", a, b, c);
    }

    #[test]
    fn a_batch_is_its_matrices_multiplied_one_by_one(
        (a, b) in (1usize..4, 1usize..4, 1usize..4, 1usize..4)
            .prop_flat_map(|(batch, m, k, n)| (array(vec![batch, m, k]), array(vec![batch, k, n])))
    ) {
        let ab = matmul(&a, &b).unwrap();
        prop_assert_eq!(&ab.dims, &vec![a.dims[0], a.dims[1], b.dims[2]], "dims of {:?} @ {:?}", a.dims, b.dims);
        for i in 0..a.dims[0] {
            prop_assert_eq!(Ok(batch(&ab, i)), matmul(&batch(&a, i), &batch(&b, i)), "batch {}", i);
        }
    }

    #[test]
    fn a_broadcast_batch_reuses_the_single_matrix(
        (a, b) in (1usize..4, 1usize..4, 1usize..4, 1usize..4)
            .prop_flat_map(|(batch, m, k, n)| (array(vec![batch, m, k]), array(vec![k, n])))
    ) {
        let ab = matmul(&a, &b).unwrap();
        for i in 0..a.dims[0] {
            prop_assert_eq!(Ok(batch(&ab, i)), matmul(&batch(&a, i), &b), "batch {}", i);
        }
    }
}
