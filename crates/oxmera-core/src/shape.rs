//! Shapes and dimension arithmetic.

use std::fmt;

use crate::{Error, Result};

/// The most elements one tensor may have, counting a zero dim as 1:
/// `isize::MAX / 16` (2^59 on a 64-bit machine). So a tensor's bytes in any
/// dtype, and every contiguous stride times its extent, fit in `isize` —
/// the most any allocation or pointer offset may span — with room to spare
/// for an index computed in a wider element. `arange`'s count has the same
/// bound.
pub const MAX_NUMEL: usize = isize::MAX as usize / 16;

/// The extent of each dimension of a tensor, outermost first.
///
/// A shape of rank 0 (`[]`) describes a scalar with one element; any
/// extent may be zero, in which case the tensor has no elements.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape(Vec<usize>);

impl Shape {
    /// A shape from its dims.
    pub fn new(dims: Vec<usize>) -> Self {
        Shape(dims)
    }

    /// The rank-0 shape of a scalar.
    pub fn scalar() -> Self {
        Shape(Vec::new())
    }

    /// The dims, outermost first.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// The number of dims.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The number of elements: the product of the dims (1 for a scalar).
    ///
    /// Every shape a tensor holds has passed [`Shape::checked_numel`], so
    /// this product cannot overflow for one; on a shape from elsewhere, use
    /// that instead.
    pub fn numel(&self) -> usize {
        self.0.iter().product()
    }

    /// The number of elements, if a tensor may have this shape: its
    /// *extent* — the product of the dims, a zero dim counted as 1 (what
    /// its contiguous strides span) — is at most [`MAX_NUMEL`]. `None` for a
    /// shape no tensor may have, where the plain product would overflow or
    /// no allocation could hold it.
    ///
    /// ```
    /// use oxmera_core::Shape;
    /// assert_eq!(Shape::from([3, 4]).checked_numel(), Some(12));
    /// assert_eq!(Shape::from([0, 5]).checked_numel(), Some(0));
    /// assert_eq!(Shape::from([1 << 32, 1 << 32]).checked_numel(), None);
    /// ```
    pub fn checked_numel(&self) -> Option<usize> {
        let mut extent = 1usize;
        for &d in &self.0 {
            extent = extent.checked_mul(d.max(1)).filter(|e| *e <= MAX_NUMEL)?;
        }
        Some(if self.0.contains(&0) { 0 } else { extent })
    }

    /// [`Shape::checked_numel`] as a typed error: `Error::ShapeOverflow`
    /// naming `op` when no tensor may have this shape.
    pub fn valid_numel(&self, op: &'static str) -> Result<usize> {
        self.checked_numel().ok_or_else(|| Error::ShapeOverflow {
            op,
            shape: self.clone(),
            max: MAX_NUMEL,
        })
    }

    /// The extent of one dim (panics if out of range; use
    /// [`normalize_dim`] on user input first).
    pub fn dim(&self, d: usize) -> usize {
        self.0[d]
    }

    /// Row-major (C-order) strides for this shape, in elements.
    ///
    /// The innermost dim has stride 1 and each outer stride is the product
    /// of the extents inside it. Zero-size dims still get well-defined
    /// strides (as if their extent were 1), which keeps them harmless.
    pub fn contiguous_strides(&self) -> Vec<usize> {
        let mut strides = vec![0; self.rank()];
        let mut acc = 1usize;
        for (s, &d) in strides.iter_mut().zip(&self.0).rev() {
            *s = acc;
            acc = acc.saturating_mul(d.max(1));
        }
        strides
    }

    /// The dims as an owned vector.
    pub fn into_vec(self) -> Vec<usize> {
        self.0
    }

    /// Converts a linear, row-major element number into a multi-index.
    pub fn unravel(&self, mut linear: usize) -> Vec<usize> {
        let mut index = vec![0; self.rank()];
        for (i, &d) in index.iter_mut().zip(&self.0).rev() {
            if d > 0 {
                *i = linear % d;
                linear /= d;
            }
        }
        index
    }

    /// Converts a multi-index into its row-major element number.
    pub fn ravel(&self, index: &[usize]) -> usize {
        index
            .iter()
            .zip(&self.0)
            .fold(0, |acc, (&i, &d)| acc * d + i)
    }
}

/// Resolves a possibly negative dim (`-1` is the last) against a rank.
pub fn normalize_dim(op: &'static str, dim: isize, rank: usize) -> Result<usize> {
    let r = rank as isize;
    let d = if dim < 0 { dim + r } else { dim };
    if (0..r).contains(&d) {
        Ok(d as usize)
    } else {
        Err(Error::DimOutOfRange { op, dim, rank })
    }
}

/// Resolves a set of dims, rejecting duplicates; the result is sorted.
pub fn normalize_dims(op: &'static str, dims: &[isize], rank: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let n = normalize_dim(op, d, rank)?;
        if out.contains(&n) {
            return Err(Error::DuplicateDim {
                op,
                dim: n,
                dims: dims.to_vec(),
            });
        }
        out.push(n);
    }
    out.sort_unstable();
    Ok(out)
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

impl From<Vec<usize>> for Shape {
    fn from(v: Vec<usize>) -> Self {
        Shape(v)
    }
}

impl From<&[usize]> for Shape {
    fn from(v: &[usize]) -> Self {
        Shape(v.to_vec())
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(v: [usize; N]) -> Self {
        Shape(v.to_vec())
    }
}

impl From<&Shape> for Shape {
    fn from(s: &Shape) -> Self {
        s.clone()
    }
}

impl From<()> for Shape {
    fn from(_: ()) -> Self {
        Shape::scalar()
    }
}

impl From<usize> for Shape {
    fn from(n: usize) -> Self {
        Shape(vec![n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hand_computed_strides() {
        assert_eq!(Shape::from([2, 3, 4]).contiguous_strides(), vec![12, 4, 1]);
        assert_eq!(Shape::scalar().contiguous_strides(), Vec::<usize>::new());
        assert_eq!(Shape::from([2, 0, 4]).contiguous_strides(), vec![4, 4, 1]);
        assert_eq!(Shape::from([2, 0, 4]).numel(), 0);
        assert_eq!(Shape::scalar().numel(), 1);
    }

    #[test]
    fn negative_dims() {
        assert_eq!(normalize_dim("t", -1, 3).unwrap(), 2);
        assert_eq!(normalize_dim("t", 0, 3).unwrap(), 0);
        assert_eq!(
            normalize_dim("sum", 3, 3),
            Err(Error::DimOutOfRange {
                op: "sum",
                dim: 3,
                rank: 3
            })
        );
        assert!(normalize_dim("sum", -4, 3).is_err());
        assert!(normalize_dim("sum", 0, 0).is_err());
        assert!(matches!(
            normalize_dims("sum", &[0, -3], 3),
            Err(Error::DuplicateDim { dim: 0, .. })
        ));
        assert_eq!(normalize_dims("sum", &[2, 0], 3).unwrap(), vec![0, 2]);
    }

    #[test]
    fn display() {
        assert_eq!(Shape::from([2, 3]).to_string(), "[2, 3]");
        assert_eq!(Shape::scalar().to_string(), "[]");
    }

    proptest! {
        #[test]
        fn ravel_unravel_bijection(dims in prop::collection::vec(1usize..5, 0..5), seed in any::<usize>()) {
            let s = Shape::from(dims);
            let i = seed % s.numel();
            prop_assert_eq!(s.ravel(&s.unravel(i)), i);
        }
    }
}
