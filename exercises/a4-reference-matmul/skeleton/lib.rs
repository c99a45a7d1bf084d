//! # A4 — the reference matmul
//!
//! The reference backend is the definition of correct, so its matmul is
//! written to be read, not to be fast: a loop over the batch, a loop over
//! rows, a loop over columns, and a sum. The interesting part is the
//! *batch*: every dim before the last two is a batch dim, and batch dims
//! broadcast (A2's rule) — `[2, 1, m, k] @ [3, k, n]` is `[2, 3, m, n]`.

/// A dense, row-major array of `f64`.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// The extents, outermost first.
    pub dims: Vec<usize>,
    /// The elements in row-major order; `data.len()` is the product of `dims`.
    pub data: Vec<f64>,
}

impl Array {
    /// An array from its dims and data.
    ///
    /// # Panics
    /// If `data` does not fill `dims` (a bug in the caller).
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
///
/// Both operands have rank ≥ 2. The last two dims are the matrices
/// (`[m, k]` and `[k, n]`); the dims before them are batch dims, which
/// broadcast against each other. The result is `[batch…, m, n]`. An inner
/// extent of 0 gives zeros. Check the inner extents before the batch dims.
pub fn matmul(a: &Array, b: &Array) -> Result<Array, MatmulError> {
    // TODO(A4): validate (ranks, inner extents, batch broadcast), then for
    // every batch index, every row i and column j: Σ_p a[.., i, p] * b[.., p, j].
    todo!("A4: matmul {:?} @ {:?}", a.dims, b.dims)
}
