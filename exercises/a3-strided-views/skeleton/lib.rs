//! # A3 — strided views
//!
//! A [`View`] is shared storage plus a layout (dims, strides, offset).
//! Permuting, narrowing and reshaping make a *new layout over the same
//! storage* — nothing is copied, and the spec checks that by pointer
//! identity ([`View::shares_storage`]). Only [`View::contiguous`] may copy,
//! and only when it has to.

use std::sync::Arc;

/// Why a view could not be made. Each variant carries the values that
/// were wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewError {
    /// `from_vec`: the data does not fill the shape.
    ElementCount {
        /// The shape asked for.
        dims: Vec<usize>,
        /// How many elements were given.
        len: usize,
    },
    /// A dim index `>= rank`.
    DimOutOfRange {
        /// The dim given.
        dim: usize,
        /// The view's rank.
        rank: usize,
    },
    /// `permute`: not a permutation of `0..rank`.
    InvalidPermutation {
        /// The permutation given.
        perm: Vec<usize>,
        /// The view's rank.
        rank: usize,
    },
    /// `narrow`: `start + len` runs past the end of the dim.
    RangeOutOfBounds {
        /// The dim.
        dim: usize,
        /// The first element kept.
        start: usize,
        /// How many were asked for.
        len: usize,
        /// The dim's extent.
        size: usize,
    },
    /// `reshape`: the new shape has a different number of elements.
    ReshapeCount {
        /// The view's dims.
        from: Vec<usize>,
        /// The dims asked for.
        to: Vec<usize>,
    },
    /// `reshape`: the strides do not allow this shape without a copy.
    NotAView {
        /// The view's dims.
        dims: Vec<usize>,
        /// The view's strides.
        strides: Vec<usize>,
        /// The dims asked for.
        target: Vec<usize>,
    },
}

/// A strided view of shared, immutable storage.
#[derive(Debug, Clone)]
pub struct View<T> {
    storage: Arc<Vec<T>>,
    dims: Vec<usize>,
    strides: Vec<usize>,
    offset: usize,
}

/// Row-major strides (your A1).
fn row_major(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut acc = 1;
    for (s, &d) in strides.iter_mut().zip(dims).rev() {
        *s = acc;
        acc *= d.max(1);
    }
    strides
}

impl<T: Clone> View<T> {
    /// A fresh, contiguous view owning `data` in row-major order.
    pub fn from_vec(data: Vec<T>, dims: &[usize]) -> Result<View<T>, ViewError> {
        if data.len() != dims.iter().product::<usize>() {
            return Err(ViewError::ElementCount {
                dims: dims.to_vec(),
                len: data.len(),
            });
        }
        Ok(View {
            storage: Arc::new(data),
            dims: dims.to_vec(),
            strides: row_major(dims),
            offset: 0,
        })
    }

    /// The extents.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Where element `[0, 0, …]` sits in storage.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Whether two views look at the very same storage (pointer identity).
    pub fn shares_storage(&self, other: &View<T>) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// Reorders the dims: dim `i` of the result is dim `perm[i]` of `self`.
    /// A view: no copy.
    pub fn permute(&self, perm: &[usize]) -> Result<View<T>, ViewError> {
        // TODO(A3): check that perm is a permutation, then reorder dims
        // and strides together.
        todo!("A3: permute {:?} by {perm:?}", self.dims)
    }

    /// Keeps `len` elements of `dim`, starting at `start`. A view: the
    /// offset moves, the strides stay.
    pub fn narrow(&self, dim: usize, start: usize, len: usize) -> Result<View<T>, ViewError> {
        // TODO(A3): check dim and range, then move the offset.
        todo!(
            "A3: narrow {:?} at dim {dim} from {start} for {len}",
            self.dims
        )
    }

    /// The same elements, in the same logical order, under new dims —
    /// without copying. When the strides make that impossible (flattening
    /// a transpose, say), [`ViewError::NotAView`].
    pub fn reshape(&self, dims: &[usize]) -> Result<View<T>, ViewError> {
        // TODO(A3): the hard one. Group the old dims into runs that are
        // contiguous with each other; each run must be split or merged
        // exactly by the new dims. See the hints.
        todo!(
            "A3: reshape {:?} (strides {:?}) to {dims:?}",
            self.dims,
            self.strides
        )
    }

    /// Whether the view visits storage in row-major order with no gaps
    /// (ignoring dims of extent 1; a view with no elements is contiguous).
    pub fn is_contiguous(&self) -> bool {
        // TODO(A3): your A1 `is_contiguous`, on this view's fields.
        todo!(
            "A3: is_contiguous of {:?} with strides {:?}",
            self.dims,
            self.strides
        )
    }

    /// The elements in logical (row-major) order, whatever the strides.
    pub fn to_vec(&self) -> Vec<T> {
        // TODO(A3): an odometer over the multi-index, reading
        // storage[offset + Σ index[i] * strides[i]].
        todo!(
            "A3: to_vec of {:?} with strides {:?}",
            self.dims,
            self.strides
        )
    }

    /// A contiguous view of the same elements: `self` again (sharing
    /// storage) when it already is contiguous, a fresh copy otherwise.
    pub fn contiguous(&self) -> View<T> {
        // TODO(A3): copy only when you must.
        todo!(
            "A3: contiguous of {:?} with strides {:?}",
            self.dims,
            self.strides
        )
    }
}
