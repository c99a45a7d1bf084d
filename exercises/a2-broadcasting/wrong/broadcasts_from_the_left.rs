//! Aligns shapes from the left: a missing dim is padded at the end, not the front.
//!
//! A named wrong solution of A2, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with `broadcast` written by hand, padding the shorter shape on the right.

use std::fmt;

use oxmera_core::{Error, Shape, broadcast_shapes, broadcast_shapes_all};

/// Why two shapes do not broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BroadcastError {
    /// The left shape, as given.
    pub lhs: Vec<usize>,
    /// The right shape, as given.
    pub rhs: Vec<usize>,
    /// The clashing dim, counted from the left of the result.
    pub dim: usize,
    /// The left extent at that dim.
    pub lhs_size: usize,
    /// The right extent at that dim.
    pub rhs_size: usize,
}

impl fmt::Display for BroadcastError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = Error::BroadcastIncompatible {
            op: "broadcast",
            lhs: Shape::from(self.lhs.as_slice()),
            rhs: Shape::from(self.rhs.as_slice()),
            dim: self.dim,
            lhs_size: self.lhs_size,
            rhs_size: self.rhs_size,
        };
        write!(f, "{e}")
    }
}

impl std::error::Error for BroadcastError {}

fn from_core(e: Error) -> BroadcastError {
    match e {
        Error::BroadcastIncompatible {
            lhs,
            rhs,
            dim,
            lhs_size,
            rhs_size,
            ..
        } => BroadcastError {
            lhs: lhs.into_vec(),
            rhs: rhs.into_vec(),
            dim,
            lhs_size,
            rhs_size,
        },
        other => unreachable!("broadcasting fails only by incompatibility, got {other}"),
    }
}

/// The shape that `lhs` and `rhs` broadcast to.
pub fn broadcast(lhs: &[usize], rhs: &[usize]) -> Result<Vec<usize>, BroadcastError> {
    let rank = lhs.len().max(rhs.len());
    // Missing trailing dims count as 1.
    let at = |s: &[usize], i: usize| s.get(i).copied().unwrap_or(1);
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let (l, r) = (at(lhs, i), at(rhs, i));
        if l != r && l != 1 && r != 1 {
            return Err(BroadcastError {
                lhs: lhs.to_vec(),
                rhs: rhs.to_vec(),
                dim: i,
                lhs_size: l,
                rhs_size: r,
            });
        }
        out.push(if l == 1 { r } else { l });
    }
    Ok(out)
}

/// Broadcasts any number of shapes together, left to right.
pub fn broadcast_all(shapes: &[&[usize]]) -> Result<Vec<usize>, BroadcastError> {
    let mut acc = Vec::new();
    for s in shapes {
        acc = broadcast(&acc, s)?;
    }
    Ok(acc)
}
