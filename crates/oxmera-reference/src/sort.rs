//! The sorting permutation along a dim: a stable comparison sort of each
//! slice under one total order, which defines what every backend's `sort`
//! must return.

use std::cmp::Ordering;

use oxmera_core::{DType, Result};
use oxmera_tensor::{Storage, Tensor};

use crate::read;

/// The stable sorting permutation of every slice of `x` along `dim` (see
/// `Backend::sort`): `i64` compared exactly (above 2^53 `f64` would tie
/// neighbours), every other dtype through `f64` (exact for each), NaN
/// above every number, `-0` equal to `0`.
pub(crate) fn sort(x: &Tensor, dim: usize, descending: bool) -> Result<Storage> {
    let keys = if x.dtype() == DType::I64 {
        Keys::Integers(read::i64s(x)?)
    } else {
        Keys::Numbers(read::f64s(x)?)
    };
    let dims = x.dims();
    let n = dims[dim];
    let inner: usize = dims[dim + 1..].iter().product();
    let outer: usize = dims[..dim].iter().product();
    let mut out = vec![0i64; x.numel()];
    let mut slice: Vec<usize> = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| (o * n + j) * inner + i;
            slice.clear();
            slice.extend(0..n);
            // `sort_by` is stable: equal elements keep their order in both
            // directions (descending reverses the comparison, not the
            // result).
            slice.sort_by(|&a, &b| {
                let order = keys.cmp(at(a), at(b));
                if descending { order.reverse() } else { order }
            });
            for (j, &from) in slice.iter().enumerate() {
                out[at(j)] = from as i64;
            }
        }
    }
    Ok(read::store_i64(DType::I64, out))
}

/// The elements in logical order, under the total order.
enum Keys {
    Integers(Vec<i64>),
    Numbers(Vec<f64>),
}

impl Keys {
    fn cmp(&self, a: usize, b: usize) -> Ordering {
        match self {
            Keys::Integers(v) => v[a].cmp(&v[b]),
            Keys::Numbers(v) => {
                let (x, y) = (v[a], v[b]);
                match (x.is_nan(), y.is_nan()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    // -0.0 and 0.0 are equal, as in PyTorch's comparison.
                    (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
                }
            }
        }
    }
}
