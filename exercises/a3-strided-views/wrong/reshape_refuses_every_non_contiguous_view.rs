//! Refuses to reshape any non-contiguous view, even a merge whose strides line up.
//!
//! A named wrong solution of A3, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with `reshape` answering `NotAView` whenever the view is not contiguous.

use std::sync::Arc;

use oxmera_core::{Error, Layout, Shape};

/// Why a view could not be made.
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
    layout: Layout,
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
            layout: Layout::contiguous(dims),
        })
    }

    /// The extents.
    pub fn dims(&self) -> &[usize] {
        self.layout.dims()
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[usize] {
        self.layout.strides().as_slice()
    }

    /// Where element `[0, 0, …]` sits in storage.
    pub fn offset(&self) -> usize {
        self.layout.offset()
    }

    /// Whether two views look at the very same storage.
    pub fn shares_storage(&self, other: &View<T>) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    fn with(&self, layout: Layout) -> View<T> {
        View {
            storage: Arc::clone(&self.storage),
            layout,
        }
    }

    /// Reorders the dims.
    pub fn permute(&self, perm: &[usize]) -> Result<View<T>, ViewError> {
        let signed: Vec<isize> = perm.iter().map(|&p| p as isize).collect();
        match self.layout.permute("permute", &signed) {
            Ok(l) => Ok(self.with(l)),
            Err(_) => Err(ViewError::InvalidPermutation {
                perm: perm.to_vec(),
                rank: self.layout.rank(),
            }),
        }
    }

    /// Keeps `len` elements of `dim`, starting at `start`.
    pub fn narrow(&self, dim: usize, start: usize, len: usize) -> Result<View<T>, ViewError> {
        match self.layout.narrow("narrow", dim as isize, start, len) {
            Ok(l) => Ok(self.with(l)),
            Err(Error::DimOutOfRange { rank, .. }) => Err(ViewError::DimOutOfRange { dim, rank }),
            Err(Error::RangeOutOfBounds {
                dim, start, size, ..
            }) => Err(ViewError::RangeOutOfBounds {
                dim,
                start,
                len,
                size,
            }),
            Err(other) => unreachable!("narrow fails only on dim or range, got {other}"),
        }
    }

    /// The same elements under new dims, without copying.
    pub fn reshape(&self, dims: &[usize]) -> Result<View<T>, ViewError> {
        let count_matches = dims.iter().product::<usize>() == self.dims().iter().product::<usize>();
        if count_matches && !self.is_contiguous() {
            return Err(ViewError::NotAView {
                dims: self.dims().to_vec(),
                strides: self.strides().to_vec(),
                target: dims.to_vec(),
            });
        }
        match self.layout.reshape("view", &Shape::from(dims)) {
            Ok(l) => Ok(self.with(l)),
            Err(Error::ElementCount { .. }) => Err(ViewError::ReshapeCount {
                from: self.dims().to_vec(),
                to: dims.to_vec(),
            }),
            Err(Error::NotAView { .. }) => Err(ViewError::NotAView {
                dims: self.dims().to_vec(),
                strides: self.strides().to_vec(),
                target: dims.to_vec(),
            }),
            Err(other) => unreachable!("reshape fails only on count or strides, got {other}"),
        }
    }

    /// Whether the view is row-major with no gaps.
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// The elements in logical order.
    pub fn to_vec(&self) -> Vec<T> {
        self.layout
            .offsets()
            .map(|o| self.storage[o].clone())
            .collect()
    }

    /// A contiguous view of the same elements, copying only when needed.
    pub fn contiguous(&self) -> View<T> {
        if self.is_contiguous() {
            self.clone()
        } else {
            View::from_vec(self.to_vec(), self.dims()).expect("to_vec fills its own dims")
        }
    }
}
