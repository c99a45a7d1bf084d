//! # A1 — shape and strides
//!
//! A tensor's elements sit in one flat run of memory. A *shape* says how
//! many elements each dimension has; *strides* say how many places in
//! memory you step to move one along each dimension; an *offset* says where
//! element `[0, 0, …]` is. Everything else in this ladder stands on these
//! four functions. Read the README first; the spec is `tests/spec.rs`.

/// The row-major (C-order) strides of a fresh tensor of shape `dims`.
///
/// The last dimension has stride 1; each stride is the next one times the
/// next extent. A zero extent counts as 1 here, so strides stay meaningful
/// for empty tensors. `[2, 3, 4]` gives `[12, 4, 1]`.
pub fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    // TODO(A1): walk the dims from the innermost outwards.
    todo!("A1: row_major_strides({dims:?})")
}

/// The memory position of the element at `index`, for a layout with these
/// `dims`, `strides` and `offset`: `offset + Σ index[i] * strides[i]`.
///
/// `None` when `index` has the wrong number of entries or any entry is out
/// of bounds (`index[i] >= dims[i]`). `strides` has one entry per dim.
pub fn offset_of(
    dims: &[usize],
    strides: &[usize],
    offset: usize,
    index: &[usize],
) -> Option<usize> {
    // TODO(A1): check the index first, then sum.
    todo!("A1: offset_of({dims:?}, {strides:?}, {offset}, {index:?})")
}

/// The multi-index of the `linear`-th element in row-major order (the last
/// index moves fastest). `linear` is below the number of elements.
/// `index_of(&[2, 3], 4)` is `[1, 1]`.
pub fn index_of(dims: &[usize], linear: usize) -> Vec<usize> {
    // TODO(A1): peel off the innermost index with `%`, then divide.
    todo!("A1: index_of({dims:?}, {linear})")
}

/// Whether a layout with these `dims` and `strides` visits memory in
/// row-major order with no gaps.
///
/// A dimension of extent 1 never moves, so its stride does not matter; a
/// tensor with no elements is contiguous.
pub fn is_contiguous(dims: &[usize], strides: &[usize]) -> bool {
    // TODO(A1): compare with the strides a fresh tensor would have,
    // skipping what cannot matter.
    todo!("A1: is_contiguous({dims:?}, {strides:?})")
}
