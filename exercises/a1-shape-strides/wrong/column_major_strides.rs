//! Row/column swap: the first index runs fastest (column-major strides).
//!
//! A named wrong solution of A1, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with strides built from the first dim outwards instead of the last.

use oxmera_core::{Layout, Shape};

/// The row-major (C-order) strides of a fresh tensor of shape `dims`.
pub fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut acc = 1;
    for (s, &d) in strides.iter_mut().zip(dims) {
        *s = acc;
        acc *= d.max(1);
    }
    strides
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
