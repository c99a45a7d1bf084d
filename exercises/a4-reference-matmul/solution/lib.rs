//! # A4 — the reference matmul (the author's solution)
//!
//! Delegates to `Tensor::matmul` on the reference device: the spec is
//! checked against the product oxmera itself computes.

use oxmera::{Device, Error, Tensor};

/// A dense, row-major array of `f64`.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The extents, outermost first.
    pub dims: Vec<usize>,
    /// The elements in row-major order.
    pub data: Vec<f64>,
}

impl Array {
    /// An array from its dims and data.
    ///
    /// # Panics
    /// If `data` does not fill `dims`.
    pub fn new(dims: &[usize], data: Vec<f64>) -> Array {
        assert_eq!(
            dims.iter().product::<usize>(),
            data.len(),
            "Array::new: data for {dims:?}"
        );
        Array {
            dims: dims.to_vec(),
            data,
        }
    }
}

/// Why two arrays cannot be multiplied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatmulError {
    /// An operand has fewer than two dims.
    RankTooSmall {
        /// The left dims.
        lhs: Vec<usize>,
        /// The right dims.
        rhs: Vec<usize>,
    },
    /// `[…, m, k] @ […, k', n]` with `k != k'`.
    InnerMismatch {
        /// The left dims.
        lhs: Vec<usize>,
        /// The right dims.
        rhs: Vec<usize>,
        /// The left inner extent.
        k_lhs: usize,
        /// The right inner extent.
        k_rhs: usize,
    },
    /// The batch dims do not broadcast.
    BatchMismatch {
        /// The left dims.
        lhs: Vec<usize>,
        /// The right dims.
        rhs: Vec<usize>,
    },
}

/// The batched matrix product `a @ b`.
pub fn matmul(a: &Array, b: &Array) -> Result<Array, MatmulError> {
    let (lhs, rhs) = (a.dims.clone(), b.dims.clone());
    // oxmera's matmul also takes vectors (numpy's rules); this rung does not.
    if lhs.len() < 2 || rhs.len() < 2 {
        return Err(MatmulError::RankTooSmall { lhs, rhs });
    }
    let tensor = |x: &Array| {
        Tensor::from_vec(x.data.clone(), x.dims.clone(), Device::Reference)
            .expect("an Array always fills its dims")
    };
    match tensor(a).matmul(&tensor(b)) {
        Ok(t) => Ok(Array {
            dims: t.dims().to_vec(),
            data: t.to_vec::<f64>().expect("the reference reads back f64"),
        }),
        Err(Error::MatmulInner { k_lhs, k_rhs, .. }) => Err(MatmulError::InnerMismatch {
            lhs,
            rhs,
            k_lhs,
            k_rhs,
        }),
        Err(Error::BroadcastIncompatible { .. }) => Err(MatmulError::BatchMismatch { lhs, rhs }),
        Err(other) => panic!("matmul of {lhs:?} and {rhs:?} failed: {other}"),
    }
}
