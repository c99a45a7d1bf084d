//! # A2 — broadcasting
//!
//! Two tensors of different shapes can meet in an elementwise op when
//! their shapes *broadcast*: align them at their right ends; each pair of
//! extents must be equal, or one of them must be 1 (it is stretched); a
//! missing leading dim counts as 1. Your job is to make that rule a *total*
//! function — every pair of shapes gives a shape or a typed error, never a
//! panic — and to make its error say exactly what clashed.

use std::fmt;

/// Why two shapes do not broadcast. The fields are the whole story; the
/// message (see `Display`) is made from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BroadcastError {
    /// The left shape, as given.
    pub lhs: Vec<usize>,
    /// The right shape, as given.
    pub rhs: Vec<usize>,
    /// The clashing dim, counted from the left of the *result* (after
    /// padding the shorter shape with leading 1s).
    pub dim: usize,
    /// The left extent at that dim (1 if it was padding).
    pub lhs_size: usize,
    /// The right extent at that dim (1 if it was padding).
    pub rhs_size: usize,
}

impl fmt::Display for BroadcastError {
    /// The message names the op (`broadcast`), both shapes, the dim and
    /// the two extents, e.g.
    /// `broadcast: shapes cannot be broadcast: [2, 3] and [4] (dim 1: 3 vs 4)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // TODO(A2): write the message from the fields with `write!(f, ...)`
        // (and delete the next line, which only silences "unused `f`").
        let _ = f;
        todo!("A2: Display for {self:?}")
    }
}

impl std::error::Error for BroadcastError {}

/// The shape that `lhs` and `rhs` broadcast to.
///
/// Extents pair up from the right. Equal extents stay; a 1 stretches to
/// the other extent (so 1 against 0 gives 0); anything else is an error
/// naming the first clashing dim from the left.
pub fn broadcast(lhs: &[usize], rhs: &[usize]) -> Result<Vec<usize>, BroadcastError> {
    // TODO(A2): pad the shorter shape with 1s on the left, then compare.
    todo!("A2: broadcast({lhs:?}, {rhs:?})")
}

/// Broadcasts any number of shapes together, left to right. No shapes at
/// all broadcast to the scalar shape `[]`.
pub fn broadcast_all(shapes: &[&[usize]]) -> Result<Vec<usize>, BroadcastError> {
    // TODO(A2): a fold over `broadcast`.
    todo!("A2: broadcast_all({shapes:?})")
}
