//! Broadcasting: when two shapes can meet in an elementwise op.
//!
//! The rule (NumPy's, PyTorch's): align the shapes at their right ends;
//! each pair of extents must be equal, or one of them must be 1 (which is
//! stretched). A missing leading dim counts as 1. The result takes the
//! larger extent, except that 1 against 0 gives 0: a zero-size dim
//! broadcasts like any other extent.

use crate::{Error, Result, Shape};

/// The shape that `lhs` and `rhs` broadcast to, or a typed error naming the
/// clashing dim. Total: every pair of shapes gives `Ok` or `Err`.
///
/// ```
/// use oxmera_core::{broadcast_shapes, Shape};
/// let s = broadcast_shapes("add", &Shape::from([3, 1]), &Shape::from([4]))?;
/// assert_eq!(s, Shape::from([3, 4]));
/// assert!(broadcast_shapes("add", &Shape::from([3]), &Shape::from([4])).is_err());
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn broadcast_shapes(op: &'static str, lhs: &Shape, rhs: &Shape) -> Result<Shape> {
    let rank = lhs.rank().max(rhs.rank());
    let mut out = vec![0; rank];
    for (i, o) in out.iter_mut().enumerate() {
        // i counts from the left of the result; pad missing dims with 1.
        let l = padded(lhs, rank, i);
        let r = padded(rhs, rank, i);
        *o = match (l, r) {
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => {
                return Err(Error::BroadcastIncompatible {
                    op,
                    lhs: lhs.clone(),
                    rhs: rhs.clone(),
                    dim: i,
                    lhs_size: l,
                    rhs_size: r,
                });
            }
        };
    }
    let out = Shape::from(out);
    // [2^40, 1] against [1, 2^40] is compatible and too large to exist.
    out.valid_numel(op)?;
    Ok(out)
}

/// Broadcasts any number of shapes together (`where_` has three operands).
/// The empty list broadcasts to the scalar shape.
pub fn broadcast_shapes_all(op: &'static str, shapes: &[&Shape]) -> Result<Shape> {
    shapes
        .iter()
        .try_fold(Shape::scalar(), |acc, s| broadcast_shapes(op, &acc, s))
}

fn padded(s: &Shape, rank: usize, i: usize) -> usize {
    let lead = rank - s.rank();
    if i < lead { 1 } else { s.dim(i - lead) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn b(l: &[usize], r: &[usize]) -> Result<Vec<usize>> {
        broadcast_shapes("t", &Shape::from(l), &Shape::from(r)).map(Shape::into_vec)
    }

    #[test]
    fn hand_computed() {
        assert_eq!(b(&[2, 3], &[2, 3]).unwrap(), vec![2, 3]);
        assert_eq!(b(&[2, 1], &[1, 3]).unwrap(), vec![2, 3]);
        assert_eq!(b(&[5, 1, 4], &[3, 1]).unwrap(), vec![5, 3, 4]);
        assert_eq!(b(&[], &[2, 2]).unwrap(), vec![2, 2]);
        assert_eq!(b(&[0], &[1]).unwrap(), vec![0]);
        assert_eq!(b(&[2, 0], &[2, 1]).unwrap(), vec![2, 0]);
        let err = b(&[2, 3], &[4]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t: shapes cannot be broadcast: [2, 3] and [4] (dim 1: 3 vs 4)"
        );
        assert!(b(&[0], &[2]).is_err());
    }

    fn small_shape() -> impl Strategy<Value = Vec<usize>> {
        prop::collection::vec(prop_oneof![Just(0usize), Just(1), Just(2), Just(3)], 0..4)
    }

    proptest! {
        #[test]
        fn symmetric(l in small_shape(), r in small_shape()) {
            prop_assert_eq!(b(&l, &r).ok(), b(&r, &l).ok());
        }

        #[test]
        fn idempotent(l in small_shape(), r in small_shape()) {
            if let Ok(s) = b(&l, &r) {
                prop_assert_eq!(b(&s, &r).unwrap(), s.clone());
                prop_assert_eq!(b(&s, &s).unwrap(), s.clone());
                prop_assert_eq!(b(&l, &s).unwrap(), s);
            }
        }

        #[test]
        fn total_and_typed(l in small_shape(), r in small_shape()) {
            match b(&l, &r) {
                Ok(s) => prop_assert_eq!(s.len(), l.len().max(r.len())),
                Err(e) => { let is_typed = matches!(e, Error::BroadcastIncompatible { .. }); prop_assert!(is_typed) }
            }
        }
    }
}
