//! Front end: matrix multiplication with `numpy.matmul` semantics.
//!
//! The public [`Tensor::matmul`] turns every case into one shape —
//! `[..., m, k] @ [..., k, n]` with identical batch dims — by promoting
//! vectors to matrices and broadcasting the batch dims as stride-0 views;
//! the private chokepoint `batched_matmul` then calls the backend, and the
//! promoted dims are removed again by a free view.

use oxmera_core::{Error, Result, Shape, broadcast_shapes};

use crate::Tensor;

const OP: &str = "matmul";

impl Tensor {
    /// The matrix product `self @ other`, following `numpy.matmul`:
    ///
    /// - 1-D @ 1-D is the dot product, a rank-0 tensor;
    /// - 1-D @ N-D treats the vector as a `[1, k]` row, then drops that 1;
    /// - N-D @ 1-D treats the vector as a `[k, 1]` column, then drops it;
    /// - otherwise the last two dims are the matrices and the dims before
    ///   them are batch dims, broadcast against each other (without copying).
    ///
    /// Both operands must share a dtype and device. Floats accumulate in
    /// `f64` in the reference and round once; integers wrap (`i64`
    /// accumulation, then wrapped into the dtype). Bool is
    /// [`Error::UnsupportedDType`]. An inner extent of 0 gives zeros.
    ///
    /// Errors: [`Error::RankMismatch`] for a rank-0 operand,
    /// [`Error::MatmulInner`] when the inner extents differ,
    /// [`Error::BroadcastIncompatible`] when batch dims do not broadcast,
    /// [`Error::DTypeMismatch`], [`Error::DeviceMismatch`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], Device::Reference)?;
    /// let v = Tensor::from_vec(vec![1.0f32, 0.0, -1.0], [3], Device::Reference)?;
    /// let av = a.matmul(&v)?;
    /// assert_eq!(av.dims(), &[2]);
    /// assert_eq!(av.to_vec::<f32>()?, vec![-2.0, -2.0]);
    /// let bad = Tensor::from_vec(vec![0.0f32; 20], [4, 5], Device::Reference)?;
    /// assert_eq!(
    ///     a.matmul(&bad).unwrap_err().to_string(),
    ///     "matmul: inner dimensions differ: [2, 3] @ [4, 5] (3 != 4)"
    /// );
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        if self.device() != other.device() {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: self.device(),
                rhs: other.device(),
            });
        }
        if self.dtype() != other.dtype() {
            return Err(Error::DTypeMismatch {
                op: OP,
                lhs: self.dtype(),
                rhs: other.dtype(),
            });
        }
        if self.dtype().is_bool() {
            return Err(Error::UnsupportedDType {
                op: OP,
                dtype: self.dtype(),
                hint: "cast to an integer or float dtype first",
            });
        }
        for x in [self, other] {
            if x.rank() == 0 {
                return Err(Error::RankMismatch {
                    op: OP,
                    expected: 1,
                    shape: x.shape().clone(),
                });
            }
        }
        // Promote vectors to matrices: a row on the left, a column on the right.
        let lhs_vector = self.rank() == 1;
        let rhs_vector = other.rank() == 1;
        let a = if lhs_vector {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        let b = if rhs_vector {
            other.unsqueeze(1)?
        } else {
            other.clone()
        };
        let (ar, br) = (a.rank(), b.rank());
        let (m, k) = (a.dims()[ar - 2], a.dims()[ar - 1]);
        let (k_rhs, n) = (b.dims()[br - 2], b.dims()[br - 1]);
        if k != k_rhs {
            return Err(Error::MatmulInner {
                op: OP,
                lhs: self.shape().clone(),
                rhs: other.shape().clone(),
                k_lhs: k,
                k_rhs,
            });
        }
        let batch = broadcast_shapes(
            OP,
            &Shape::from(&a.dims()[..ar - 2]),
            &Shape::from(&b.dims()[..br - 2]),
        )?;
        let with = |tail: [usize; 2]| {
            let mut d = batch.dims().to_vec();
            d.extend_from_slice(&tail);
            Shape::from(d)
        };
        // [2^40, 0] @ [0, 2^40] is well formed and has 2^80 outputs.
        crate::tensor::probe_result(OP, &with([m, n]), a.dtype(), a.device())?;
        // A stack of matrices times one matrix (every Linear layer on a
        // batch of sequences) is one matrix product with the stack's rows
        // folded together: [.., m, k] → [(..)·m, k]. Broadcasting the
        // right operand instead would run one small product per batch
        // entry, and its gradient would be a product per entry summed back
        // over the batch — many times the work of one large product.
        //
        // Only where the fold is a view: a broadcast (stride-0) stack would
        // be copied whole, where the kernel reads it in place.
        let rows = batch.numel() * m;
        if br == 2 && ar > 2 && a.layout().reshape(OP, &Shape::from([rows, k])).is_ok() {
            let out = batched_matmul(&a.reshape([rows, k])?, &b)?.reshape(with([m, n]))?;
            // A vector on the right was promoted to a [k, 1] column.
            return if rhs_vector { out.squeeze(-1) } else { Ok(out) };
        }
        let a = a.broadcast_to(with([m, k]))?;
        let b = b.broadcast_to(with([k, n]))?;
        let mut out = batched_matmul(&a, &b)?;
        if rhs_vector {
            out = out.squeeze(-1)?;
        }
        if lhs_vector {
            // The row dim is last-but-one, or last once the column is gone.
            out = out.squeeze(if rhs_vector { -1 } else { -2 })?;
        }
        Ok(out)
    }
}

/// The chokepoint: `[..., m, k] @ [..., k, n]` with identical batch dims.
fn batched_matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let rank = a.rank();
    let mut out_dims = a.dims()[..rank - 1].to_vec();
    out_dims.push(b.dims()[rank - 1]);
    let storage = a.backend()?.matmul(a, b)?;
    let out = Tensor::from_storage(storage, out_dims);
    Ok(crate::autograd::rules::matmul(a, b, out))
}
