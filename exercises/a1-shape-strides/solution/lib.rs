//! # A1 — shape and strides (the author's solution)
//!
//! Delegates to `oxmera_core`, so the spec is checked against the code the
//! framework itself runs.

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
    Layout::new(dims, strides.to_vec(), offset)
        .offset_of("offset_of", index)
        .ok()
}

/// The multi-index of the `linear`-th element in row-major order.
pub fn index_of(dims: &[usize], linear: usize) -> Vec<usize> {
    Shape::from(dims).unravel(linear)
}

/// Whether the layout is row-major with no gaps.
pub fn is_contiguous(dims: &[usize], strides: &[usize]) -> bool {
    Layout::new(dims, strides.to_vec(), 0).is_contiguous()
}
