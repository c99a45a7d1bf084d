//! The spec of A3. Storage is filled with 0, 1, 2, … so that every element
//! says where it came from: in a fresh `[2, 3]` view, element `[i, j]` is
//! `3 * i + j`.

use a3::{View, ViewError};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xA3),
        ..ProptestConfig::default()
    }
}

fn iota(dims: &[usize]) -> View<usize> {
    let n = dims.iter().product();
    View::from_vec((0..n).collect(), dims).unwrap()
}

/// Shapes of rank 1 to 4 with extents 1 to 3, and a permutation of their dims.
fn dims_and_perm() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop::collection::vec(1usize..4, 1..5).prop_flat_map(|d| {
        let rank = d.len();
        (Just(d), Just((0..rank).collect::<Vec<_>>()).prop_shuffle())
    })
}

/// Whether merging the first `k` dims of a view into one can be a view
/// (the law, not a reshape): it can when no element has a neighbour
/// (one element or none), or when, dims of extent 1 aside (any stride
/// serves them), each merged dim steps exactly over the whole of the
/// next merged one: `strides[a] == strides[b] * dims[b]`.
fn merge_is_a_view(dims: &[usize], strides: &[usize], k: usize) -> bool {
    if dims.iter().product::<usize>() <= 1 {
        return true;
    }
    let merged: Vec<usize> = (0..k).filter(|&d| dims[d] != 1).collect();
    merged
        .windows(2)
        .all(|w| strides[w[0]] == strides[w[1]] * dims[w[1]])
}

/// The row-major multi-index of element number `i`.
fn unravel(dims: &[usize], mut i: usize) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for (x, &d) in index.iter_mut().zip(dims).rev() {
        *x = i % d;
        i /= d;
    }
    index
}

#[test]
fn a_fresh_view_reads_back_its_data() {
    let v = iota(&[2, 3]);
    assert!(v.is_contiguous(), "iota [2, 3] is contiguous");
    assert_eq!(v.to_vec(), vec![0, 1, 2, 3, 4, 5], "iota [2, 3] read back");
}

#[test]
fn transpose_is_a_view_read_in_logical_order() {
    let v = iota(&[2, 3]);
    let t = v.permute(&[1, 0]).unwrap();
    assert_eq!(t.dims(), &[3, 2], "dims of iota [2, 3] permuted by [1, 0]");
    assert_eq!(
        t.strides(),
        &[1, 3],
        "strides of iota [2, 3] permuted by [1, 0]"
    );
    assert!(t.shares_storage(&v), "permute must not copy");
    assert!(
        !t.is_contiguous(),
        "iota [2, 3] permuted by [1, 0] is not contiguous"
    );
    // [[0, 3], [1, 4], [2, 5]]
    assert_eq!(
        t.to_vec(),
        vec![0, 3, 1, 4, 2, 5],
        "iota [2, 3] permuted by [1, 0], read in logical order"
    );
}

#[test]
fn narrow_moves_the_offset_and_keeps_the_strides() {
    let v = iota(&[2, 3]);
    let cols = v.narrow(1, 1, 2).unwrap();
    assert_eq!(
        (cols.dims(), cols.strides(), cols.offset()),
        (&[2, 2][..], &[3, 1][..], 1),
        "(dims, strides, offset) of narrow(1, 1, 2) of iota [2, 3]"
    );
    assert!(
        cols.shares_storage(&v),
        "narrow(1, 1, 2) of iota [2, 3] must not copy"
    );
    assert!(!cols.is_contiguous(), "rows now have a gap");
    assert_eq!(
        cols.to_vec(),
        vec![1, 2, 4, 5],
        "narrow(1, 1, 2) of iota [2, 3]"
    );
    let row = v.narrow(0, 1, 1).unwrap();
    assert!(row.is_contiguous(), "one whole row is contiguous");
    assert_eq!(
        row.to_vec(),
        vec![3, 4, 5],
        "narrow(0, 1, 1) of iota [2, 3]"
    );
    let none = v.narrow(1, 3, 0).unwrap();
    assert_eq!(
        none.dims(),
        &[2, 0],
        "dims of narrow(1, 3, 0) of iota [2, 3]"
    );
    assert_eq!(
        none.to_vec(),
        Vec::<usize>::new(),
        "narrow(1, 3, 0) of iota [2, 3]"
    );
}

#[test]
fn narrow_and_permute_errors_carry_the_values() {
    let v = iota(&[2, 3]);
    assert_eq!(
        v.narrow(2, 0, 1).unwrap_err(),
        ViewError::DimOutOfRange { dim: 2, rank: 2 },
        "narrow(2, 0, 1) of iota [2, 3]"
    );
    assert_eq!(
        v.narrow(1, 2, 2).unwrap_err(),
        ViewError::RangeOutOfBounds {
            dim: 1,
            start: 2,
            len: 2,
            size: 3
        },
        "narrow(1, 2, 2) of iota [2, 3]"
    );
    for bad in [&[0][..], &[0, 0], &[0, 2], &[1, 0, 2]] {
        assert_eq!(
            v.permute(bad).unwrap_err(),
            ViewError::InvalidPermutation {
                perm: bad.to_vec(),
                rank: 2
            },
            "perm {bad:?}"
        );
    }
}

#[test]
fn reshape_is_a_view_when_the_strides_allow() {
    let v = iota(&[2, 3, 4]);
    let r = v.reshape(&[6, 4]).unwrap();
    assert!(
        r.shares_storage(&v),
        "reshape of iota [2, 3, 4] to [6, 4] must not copy"
    );
    assert_eq!(r.to_vec(), v.to_vec(), "iota [2, 3, 4] reshaped to [6, 4]");
    let t = iota(&[2, 3]).permute(&[1, 0]).unwrap();
    // Splitting a dim of a transpose is fine…
    let split = t.reshape(&[3, 2, 1]).unwrap();
    assert!(
        split.shares_storage(&t),
        "reshape of the transpose of iota [2, 3] to [3, 2, 1] must not copy"
    );
    assert_eq!(
        split.to_vec(),
        vec![0, 3, 1, 4, 2, 5],
        "the transpose of iota [2, 3] reshaped to [3, 2, 1]"
    );
    // …flattening it is not: the elements are not in storage order.
    assert_eq!(
        t.reshape(&[6]).unwrap_err(),
        ViewError::NotAView {
            dims: vec![3, 2],
            strides: vec![1, 3],
            target: vec![6]
        },
        "t.reshape([6]).unwrap_err()"
    );
    assert_eq!(
        v.reshape(&[5]).unwrap_err(),
        ViewError::ReshapeCount {
            from: vec![2, 3, 4],
            to: vec![5]
        },
        "v.reshape([5]).unwrap_err()"
    );
    // A narrowed block whose rows are still adjacent can be merged.
    let rows = iota(&[4, 3]).narrow(0, 1, 2).unwrap();
    assert_eq!(
        rows.reshape(&[6]).unwrap().to_vec(),
        vec![3, 4, 5, 6, 7, 8],
        "narrow(0, 1, 2) of iota [4, 3] reshaped to [6]"
    );
    // Rows with gaps between them merge too, when the outer dims' strides
    // still line up: [2, 3, 4] narrowed to [2, 3, 2] has strides [12, 4, 1],
    // and 12 == 4 * 3, so [6, 2] is a view with strides [4, 1].
    let gaps = iota(&[2, 3, 4]).narrow(2, 0, 2).unwrap();
    let merged = gaps
        .reshape(&[6, 2])
        .expect("[2, 3, 4] narrowed to [2, 3, 2], reshaped to [6, 2], is a view");
    assert!(
        merged.shares_storage(&gaps),
        "[2, 3, 4] narrowed to [2, 3, 2], reshaped to [6, 2], must not copy"
    );
    assert_eq!(
        merged.strides(),
        &[4, 1],
        "strides of [2, 3, 2] merged to [6, 2]"
    );
    assert_eq!(
        merged.to_vec(),
        vec![0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21],
        "[2, 3, 4] narrowed to [2, 3, 2], reshaped to [6, 2]"
    );
    // Flattening it is not: the rows have gaps.
    assert!(
        matches!(gaps.reshape(&[12]), Err(ViewError::NotAView { .. })),
        "[2, 3, 4] narrowed to [2, 3, 2] flattened to [12] should be NotAView"
    );
}

#[test]
fn contiguous_copies_only_when_it_must() {
    let v = iota(&[2, 3]);
    let same = v.contiguous();
    assert!(same.shares_storage(&v), "already contiguous: no copy");
    let t = v.permute(&[1, 0]).unwrap();
    let c = t.contiguous();
    assert!(!c.shares_storage(&t), "a transpose must be copied");
    assert!(
        c.is_contiguous(),
        "contiguous() of the transpose of iota [2, 3]"
    );
    assert_eq!(
        c.strides(),
        &[2, 1],
        "strides of contiguous() of the transpose of iota [2, 3]"
    );
    assert_eq!(
        c.to_vec(),
        t.to_vec(),
        "contiguous() of the transpose of iota [2, 3], read back"
    );
    assert_eq!(
        c.reshape(&[6]).unwrap().to_vec(),
        vec![0, 3, 1, 4, 2, 5],
        "contiguous() of the transpose of iota [2, 3], flattened"
    );
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_permuted_element_is_the_original_at_the_permuted_index((dims, perm) in dims_and_perm()) {
        let v = iota(&dims);
        let p = v.permute(&perm).unwrap();
        prop_assert!(p.shares_storage(&v), "{:?} permuted by {:?} copied", dims, perm);
        let got = p.to_vec();
        let pdims: Vec<usize> = perm.iter().map(|&i| dims[i]).collect();
        prop_assert_eq!(p.dims(), &pdims[..], "dims of {:?} permuted by {:?}", dims, perm);
        for (i, &value) in got.iter().enumerate() {
            let index = unravel(&pdims, i);
            // p[index] = v[orig] where orig[perm[k]] = index[k].
            let mut orig = vec![0; dims.len()];
            for (k, &pk) in perm.iter().enumerate() {
                orig[pk] = index[k];
            }
            let expected = orig.iter().zip(&dims).fold(0, |acc, (&x, &d)| acc * d + x);
            prop_assert_eq!(value, expected, "element {:?} of {:?} permuted by {:?}", index, dims, perm);
        }
    }

    #[test]
    fn permuting_back_restores_the_view((dims, perm) in dims_and_perm()) {
        let mut inverse = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i;
        }
        let v = iota(&dims);
        let back = v.permute(&perm).unwrap().permute(&inverse).unwrap();
        prop_assert_eq!(back.dims(), v.dims(), "{:?} permuted by {:?} and back", dims, perm);
        prop_assert_eq!(back.to_vec(), v.to_vec(), "{:?} permuted by {:?} and back", dims, perm);
        prop_assert!(back.is_contiguous(), "{:?} permuted by {:?} and back", dims, perm);
    }

    #[test]
    fn narrow_keeps_exactly_the_chosen_slab(
        (dims, perm) in dims_and_perm(),
        dim in 0usize..4,
        start in 0usize..3,
        len in 0usize..3,
    ) {
        let v = iota(&dims).permute(&perm).unwrap();
        let dim = dim % dims.len();
        let size = v.dims()[dim];
        prop_assume!(start + len <= size);
        let n = v.narrow(dim, start, len).unwrap();
        prop_assert!(n.shares_storage(&v), "narrow({}, {}, {}) of {:?} copied", dim, start, len, v.dims());
        let all = v.to_vec();
        let expected: Vec<usize> = (0..all.len())
            .filter(|&i| {
                let x = unravel(v.dims(), i)[dim];
                x >= start && x < start + len
            })
            .map(|i| all[i])
            .collect();
        prop_assert_eq!(n.to_vec(), expected, "narrow({}, {}, {}) of {:?}", dim, start, len, v.dims());
    }

    #[test]
    fn contiguous_preserves_logical_order((dims, perm) in dims_and_perm()) {
        let v = iota(&dims).permute(&perm).unwrap();
        let c = v.contiguous();
        prop_assert!(c.is_contiguous(), "contiguous() of {:?} permuted by {:?}", dims, perm);
        prop_assert_eq!(c.dims(), v.dims(), "contiguous() of {:?} permuted by {:?}", dims, perm);
        prop_assert_eq!(c.to_vec(), v.to_vec(), "contiguous() of {:?} permuted by {:?}", dims, perm);
        prop_assert_eq!(
            c.shares_storage(&v),
            v.is_contiguous(),
            "contiguous() of {:?} permuted by {:?} shares storage exactly when no copy is needed",
            dims,
            perm
        );
    }

    #[test]
    fn a_granted_reshape_keeps_the_logical_order(
        (dims, perm) in dims_and_perm(),
        keep in 1usize..4,
        split in 0usize..4,
    ) {
        // A permuted iota with its last axis narrowed: rows with gaps
        // between them, which can still merge when their strides line up.
        let p = iota(&dims).permute(&perm).unwrap();
        let last = p.dims().len() - 1;
        let v = p.narrow(last, 0, keep.min(p.dims()[last])).unwrap();
        // Merge the first `k` dims into one.
        let k = split % (dims.len() + 1);
        let mut target = vec![v.dims()[..k].iter().product()];
        target.extend_from_slice(&v.dims()[k..]);
        let expressible = merge_is_a_view(v.dims(), v.strides(), k);
        match v.reshape(&target) {
            Ok(r) => {
                prop_assert!(r.shares_storage(&v), "reshape of {:?} to {:?} copied", v.dims(), target);
                prop_assert_eq!(r.to_vec(), v.to_vec(), "reshape of {:?} to {:?}", v.dims(), target);
            }
            // Refusing is right only when no strides could present it.
            Err(ViewError::NotAView { .. }) => prop_assert!(
                !expressible,
                "reshape of {:?} (strides {:?}) to {:?} refused, but it is a view",
                v.dims(),
                v.strides(),
                target
            ),
            Err(e) => prop_assert!(false, "unexpected {:?}", e),
        }
        // A contiguous view can always be flattened.
        let flat = v.contiguous().reshape(&[v.to_vec().len()]).unwrap();
        prop_assert_eq!(flat.to_vec(), v.to_vec(), "flattening contiguous() of {:?}", v.dims());
    }
}
