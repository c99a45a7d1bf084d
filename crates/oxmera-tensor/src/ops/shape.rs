//! Front end: the shape ops PyTorch users reach for — `roll`, `repeat`,
//! `tile`, `diagonal`, `diag`, `trace` and `outer`.
//!
//! All seven are **composites**: built in this layer from views
//! (`narrow`, `permute`, `reshape`, `expand`, `slice`) and existing ops
//! (`cat`, `pad`, `sum`, `mul`), so every backend runs them with the
//! kernels it already has, and their gradients come from those ops' rules
//! (a gradient of `repeat` is summed over the copies, one of `roll` is
//! rolled back, and so on).
//!
//! One difference from PyTorch: `diagonal` (and so `diag` of a matrix)
//! returns a view only where the input is contiguous in the two dims'
//! order; otherwise a copy. Storage is immutable in oxmera, so the
//! difference is never visible in values, only in `shares_storage`.

use oxmera_core::{Error, Result, normalize_dim};

use crate::Tensor;

impl Tensor {
    /// Rolls the elements along each of `dims` by the matching entry of
    /// `shifts` (positive shifts move elements towards higher indices; those
    /// that fall off the end come back at the start), as PyTorch's
    /// `torch.roll(x, shifts, dims)`. With `dims` empty the tensor is rolled
    /// as if flattened, and `shifts` must have one entry. Shifts may be
    /// negative or exceed the extent (they are taken modulo it).
    ///
    /// Errors: `shifts` and `dims` of different lengths (or several shifts
    /// with no dims) are [`Error::InvalidArgument`]; a dim out of range is
    /// [`Error::DimOutOfRange`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // [[1, 2, 3],
    /// //  [4, 5, 6]]
    /// let x = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6], [2, 3], Device::Reference)?;
    /// assert_eq!(x.roll(&[1], &[1])?.to_vec::<i64>()?, vec![3, 1, 2, 6, 4, 5]);
    /// assert_eq!(x.roll(&[-1], &[0])?.to_vec::<i64>()?, vec![4, 5, 6, 1, 2, 3]);
    /// assert_eq!(x.roll(&[2], &[])?.to_vec::<i64>()?, vec![5, 6, 1, 2, 3, 4]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn roll(&self, shifts: &[isize], dims: &[isize]) -> Result<Tensor> {
        if dims.is_empty() {
            if shifts.len() != 1 {
                return Err(Error::invalid(
                    "roll",
                    "shifts",
                    format!(
                        "without dims, one shift rolls the flattened tensor; got {} shifts",
                        shifts.len()
                    ),
                ));
            }
            let flat = self.reshape([self.numel()])?;
            return flat.roll(shifts, &[0])?.reshape(self.shape().clone());
        }
        if shifts.len() != dims.len() {
            return Err(Error::invalid(
                "roll",
                "shifts",
                format!(
                    "one shift per dim: {} shifts for {} dims",
                    shifts.len(),
                    dims.len()
                ),
            ));
        }
        let mut out = self.clone();
        for (&shift, &dim) in shifts.iter().zip(dims) {
            let d = normalize_dim("roll", dim, self.rank())?;
            let n = self.dims()[d];
            if n == 0 {
                continue;
            }
            let s = shift.rem_euclid(n as isize) as usize;
            if s == 0 {
                continue;
            }
            let d = d as isize;
            let tail = out.narrow(d, n - s, s)?;
            let head = out.narrow(d, 0, n - s)?;
            out = Tensor::cat(&[tail, head], d)?;
        }
        Ok(out)
    }

    /// Repeats the tensor `repeats[i]` times along dim `i`, as PyTorch's
    /// `x.repeat(*repeats)`: `repeats` has at least as many entries as the
    /// rank, and extra leading entries add new leading dims. The result's
    /// dim `i` is the input's times `repeats[i]`. Fewer entries than the
    /// rank is [`Error::InvalidArgument`] (use [`Tensor::tile`], which pads
    /// them). The gradient sums over the copies.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2], [2], Device::Reference)?;
    /// let r = x.repeat(&[2, 3])?;
    /// assert_eq!(r.dims(), &[2, 6]);
    /// assert_eq!(r.to_vec::<i32>()?, vec![1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn repeat(&self, repeats: &[usize]) -> Result<Tensor> {
        let rank = self.rank();
        if repeats.len() < rank {
            return Err(Error::invalid(
                "repeat",
                "repeats",
                format!(
                    "needs at least one entry per dim: {} entries for shape {}",
                    repeats.len(),
                    self.shape()
                ),
            ));
        }
        // The input's dims, with leading 1s for the new dims.
        let lead = repeats.len() - rank;
        let dims: Vec<usize> = std::iter::repeat_n(1, lead)
            .chain(self.dims().iter().copied())
            .collect();
        // Interleave a size-1 dim before each, stretch it to the repeat
        // count (a stride-0 view), and merge each pair: [r0·d0, r1·d1, ..].
        let mut split = Vec::with_capacity(2 * dims.len());
        let mut stretched = Vec::with_capacity(2 * dims.len());
        let mut merged = Vec::with_capacity(dims.len());
        for (&d, &r) in dims.iter().zip(repeats) {
            split.extend([1, d]);
            stretched.extend([r, d]);
            merged.push(checked_mul("repeat", d, r)?);
        }
        self.reshape(split)?.expand(stretched)?.reshape(merged)
    }

    /// Repeats the tensor `reps[i]` times along dim `i`, as PyTorch's
    /// `torch.tile(x, reps)`: like [`Tensor::repeat`], except that fewer
    /// entries than the rank are padded with leading 1s (`tile(&[2])` of a
    /// matrix repeats its columns).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3, 4], [2, 2], Device::Reference)?;
    /// assert_eq!(x.tile(&[2])?.to_vec::<i32>()?, vec![1, 2, 1, 2, 3, 4, 3, 4]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn tile(&self, reps: &[usize]) -> Result<Tensor> {
        let rank = self.rank();
        if reps.len() >= rank {
            return self.repeat(reps);
        }
        let padded: Vec<usize> = std::iter::repeat_n(1, rank - reps.len())
            .chain(reps.iter().copied())
            .collect();
        self.repeat(&padded)
    }

    /// The diagonal of offset `offset` over dims `dim1` and `dim2`, as
    /// PyTorch's `torch.diagonal(x, offset, dim1, dim2)`: the two dims are
    /// removed and the diagonal becomes the last dim. `offset > 0` is above
    /// the main diagonal (`x[i, i + offset]`), `offset < 0` below; an offset
    /// past the matrix gives an empty last dim. Equal dims are
    /// [`Error::DuplicateDim`], a dim out of range [`Error::DimOutOfRange`].
    /// A view where the input allows it, else a copy (see the module docs).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // [[0, 1, 2],
    /// //  [3, 4, 5]]
    /// let x = Tensor::from_vec(vec![0i64, 1, 2, 3, 4, 5], [2, 3], Device::Reference)?;
    /// assert_eq!(x.diagonal(0, 0, 1)?.to_vec::<i64>()?, vec![0, 4]);
    /// assert_eq!(x.diagonal(1, 0, 1)?.to_vec::<i64>()?, vec![1, 5]);
    /// assert_eq!(x.diagonal(-1, 0, 1)?.to_vec::<i64>()?, vec![3]);
    /// assert_eq!(x.diagonal(0, 1, 0)?.to_vec::<i64>()?, vec![0, 4]);
    /// assert_eq!(x.diagonal(3, 0, 1)?.dims(), &[0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn diagonal(&self, offset: i64, dim1: isize, dim2: isize) -> Result<Tensor> {
        let rank = self.rank();
        let d1 = normalize_dim("diagonal", dim1, rank)?;
        let d2 = normalize_dim("diagonal", dim2, rank)?;
        if d1 == d2 {
            return Err(Error::DuplicateDim {
                op: "diagonal",
                dim: d1,
                dims: vec![dim1, dim2],
            });
        }
        let (n1, n2) = (self.dims()[d1], self.dims()[d2]);
        // Move the two dims last (dim1, then dim2) and flatten them: the
        // diagonal is then every (n2 + 1)-th element from its first.
        let mut perm: Vec<isize> = (0..rank)
            .filter(|&d| d != d1 && d != d2)
            .map(|d| d as isize)
            .collect();
        perm.extend([d1 as isize, d2 as isize]);
        let mut flat_dims: Vec<usize> = perm[..rank - 2]
            .iter()
            .map(|&d| self.dims()[d as usize])
            .collect();
        flat_dims.push(n1 * n2);
        let flat = self.permute(&perm)?.reshape(flat_dims)?;
        let k = offset.unsigned_abs() as usize;
        let (first, len) = if offset >= 0 {
            (k, n1.min(n2.saturating_sub(k)))
        } else {
            (k.saturating_mul(n2), n1.saturating_sub(k).min(n2))
        };
        if len == 0 {
            return flat.narrow(-1, 0, 0);
        }
        flat.slice(-1, first, first + (len - 1) * (n2 + 1) + 1, n2 + 1)
    }

    /// PyTorch's `torch.diag(x, diagonal)`: of a vector, the square matrix
    /// with the vector on diagonal `diagonal` (above the main one when
    /// positive) and zeros elsewhere; of a matrix, its diagonal
    /// (`x.diagonal(diagonal, 0, 1)`). Other ranks are
    /// [`Error::RankMismatch`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let v = Tensor::from_vec(vec![1.0f32, 2.0], [2], Device::Reference)?;
    /// assert_eq!(v.diag(0)?.to_vec::<f32>()?, vec![1.0, 0.0, 0.0, 2.0]);
    /// // [[0, 1, 0],
    /// //  [0, 0, 2],
    /// //  [0, 0, 0]]
    /// let up = v.diag(1)?;
    /// assert_eq!(up.dims(), &[3, 3]);
    /// assert_eq!(up.to_vec::<f32>()?, vec![0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0]);
    /// assert_eq!(up.diag(1)?.to_vec::<f32>()?, vec![1.0, 2.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn diag(&self, diagonal: i64) -> Result<Tensor> {
        match self.rank() {
            1 => self.diag_embed(diagonal),
            2 => self.diagonal(diagonal, 0, 1),
            _ => Err(Error::RankMismatch {
                op: "diag",
                expected: 1,
                shape: self.shape().clone(),
            }),
        }
    }

    /// The square matrix with this vector on diagonal `k`: the vector as a
    /// column padded to `n + 1` columns, flattened, cut to `n·n` and read
    /// as `n × n` puts element `i` at `(i, i)`; padding `|k|` rows and
    /// columns moves it to diagonal `k`.
    fn diag_embed(&self, k: i64) -> Result<Tensor> {
        let n = self.numel();
        let column = self.reshape([n, 1])?.pad(&[(0, 0), (0, n)], 0)?;
        let square = column.reshape([n * (n + 1)])?.narrow(0, 0, n * n)?;
        let square = square.reshape([n, n])?;
        let s = k.unsigned_abs() as usize;
        let pads = if k >= 0 {
            [(0, s), (s, 0)]
        } else {
            [(s, 0), (0, s)]
        };
        if s == 0 {
            return Ok(square);
        }
        square.pad(&pads, 0)
    }

    /// The sum of the main diagonal of a matrix, as PyTorch's
    /// `torch.trace`: rank 2 only ([`Error::RankMismatch`] otherwise), any
    /// shape (the diagonal of a non-square matrix is its shorter side). The
    /// dtype follows [`Tensor::sum`]: floats keep theirs, integers and bool
    /// give `i64`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], Device::Reference)?;
    /// assert_eq!(x.trace()?.item()?, 1.0 + 5.0);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn trace(&self) -> Result<Tensor> {
        if self.rank() != 2 {
            return Err(Error::RankMismatch {
                op: "trace",
                expected: 2,
                shape: self.shape().clone(),
            });
        }
        self.diagonal(0, 0, 1)?.sum_all()
    }

    /// The outer product of two vectors, as PyTorch's `torch.outer`:
    /// `out[i, j] = self[i] · other[j]`, shape `[n, m]`. Both must be rank
    /// 1 ([`Error::RankMismatch`]) of one dtype (integers wrap, as `mul`).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let a = Tensor::from_vec(vec![1i32, 2], [2], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![3i32, 4, 5], [3], Device::Reference)?;
    /// assert_eq!(a.outer(&b)?.to_vec::<i32>()?, vec![3, 4, 5, 6, 8, 10]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn outer(&self, other: &Tensor) -> Result<Tensor> {
        for x in [self, other] {
            if x.rank() != 1 {
                return Err(Error::RankMismatch {
                    op: "outer",
                    expected: 1,
                    shape: x.shape().clone(),
                });
            }
        }
        self.unsqueeze(1)?.mul(&other.unsqueeze(0)?)
    }
}

/// `a · b`, or [`Error::InvalidArgument`] when it would not fit a `usize`.
fn checked_mul(op: &'static str, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b)
        .ok_or_else(|| Error::invalid(op, "repeats", format!("{a} × {b} elements overflow")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_mul_refuses_overflow() {
        assert_eq!(checked_mul("repeat", 3, 4).unwrap(), 12);
        assert!(checked_mul("repeat", usize::MAX, 2).is_err());
    }
}
