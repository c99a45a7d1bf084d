//! Off-by-one bounds: an index equal to its extent is accepted.
//!
//! A named wrong solution of A1, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with `offset_of` checking `i <= extent` by hand.

use oxmera_core::{Layout, Shape};

/// The row-major (C-order) strides of a fresh tensor of shape `dims`.
pub fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    Shape::from(dims).contiguous_strides()
}

/// The memory position of the element at `index`, or `None`.
pub fn offset_of(
    dims: &[usize],
    strides: &[usize],
    offset: usize,
    index: &[usize],
) -> Option<usize> {
    if index.len() != dims.len() || strides.len() != dims.len() {
        return None;
    }
    let mut at = offset;
    for ((&i, &d), &s) in index.iter().zip(dims).zip(strides) {
        if i > d {
            return None;
        }
        at += i * s;
    }
    Some(at)
}

/// The multi-index of the `linear`-th element in row-major order.
pub fn index_of(dims: &[usize], linear: usize) -> Vec<usize> {
    Shape::from(dims).unravel(linear)
}

/// Whether the layout is row-major with no gaps.
pub fn is_contiguous(dims: &[usize], strides: &[usize]) -> bool {
    Layout::new(dims, strides.to_vec(), 0).is_contiguous()
}
