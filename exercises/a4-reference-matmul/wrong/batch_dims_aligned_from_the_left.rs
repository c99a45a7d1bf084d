//! Broadcasts batch dims from the left: a missing batch dim is padded at the end.
//!
//! A named wrong solution of A4, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with `matmul` written by hand, padding the shorter batch on the right.

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
    if lhs.len() < 2 || rhs.len() < 2 {
        return Err(MatmulError::RankTooSmall { lhs, rhs });
    }
    let (m, k) = (lhs[lhs.len() - 2], lhs[lhs.len() - 1]);
    let (k_rhs, n) = (rhs[rhs.len() - 2], rhs[rhs.len() - 1]);
    if k != k_rhs {
        return Err(MatmulError::InnerMismatch {
            lhs,
            rhs,
            k_lhs: k,
            k_rhs,
        });
    }
    let (ba, bb) = (&lhs[..lhs.len() - 2], &rhs[..rhs.len() - 2]);
    let rank = ba.len().max(bb.len());
    // Missing trailing batch dims count as 1.
    let at = |s: &[usize], i: usize| s.get(i).copied().unwrap_or(1);
    let mut batch = Vec::with_capacity(rank + 2);
    for i in 0..rank {
        let (x, y) = (at(ba, i), at(bb, i));
        if x != y && x != 1 && y != 1 {
            return Err(MatmulError::BatchMismatch { lhs, rhs });
        }
        batch.push(if x == 1 { y } else { x });
    }
    let count: usize = batch.iter().product();
    let mut data = Vec::with_capacity(count * m * n);
    for flat in 0..count {
        // Where each operand's matrix for this batch index starts.
        let (mut rest, mut oa, mut ob, mut sa, mut sb) = (flat, 0, 0, m * k, k * n);
        for i in (0..rank).rev() {
            let x = rest % batch[i];
            rest /= batch[i];
            let (ea, eb) = (at(ba, i), at(bb, i));
            if ea != 1 {
                oa += x * sa;
            }
            if eb != 1 {
                ob += x * sb;
            }
            sa *= ea;
            sb *= eb;
        }
        for r in 0..m {
            for c in 0..n {
                let mut acc = 0.0;
                for p in 0..k {
                    acc += a.data[oa + r * k + p] * b.data[ob + p * n + c];
                }
                data.push(acc);
            }
        }
    }
    batch.extend([m, n]);
    Ok(Array { dims: batch, data })
}
