//! The `Dataset` trait: numbered samples of features and a target.

use std::fmt;

use crate::DataError;

/// What a sample is asked to predict.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A class label in `0..num_classes` (batched as an `i64` tensor `[B]`).
    Class(i64),
    /// Real values (batched as an `f32` tensor `[B, k]`, `k` the length).
    Values(Vec<f32>),
}

/// The kind of target every sample of a data set has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// Class labels in `0..num_classes`.
    Classes {
        /// The number of classes.
        num_classes: usize,
    },
    /// `width` real values per sample (regression).
    Values {
        /// Values per sample.
        width: usize,
    },
}

impl fmt::Display for TargetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetKind::Classes { num_classes } => write!(f, "a class in 0..{num_classes}"),
            TargetKind::Values { width } => write!(f, "{width} real values"),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Class(c) => write!(f, "class {c}"),
            Target::Values(v) => write!(f, "{} real values", v.len()),
        }
    }
}

/// One example: feature values in row-major order (filling the data
/// set's [`Dataset::feature_shape`]) and its target.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The features, row-major, `f32`.
    pub features: Vec<f32>,
    /// What to predict.
    pub target: Target,
}

/// A finite, indexable collection of samples that all share one feature
/// shape and one target kind.
///
/// Implementations may hold everything in memory ([`crate::TensorDataset`])
/// or read lazily; `get` is fallible for the latter. The loader checks every
/// sample against `feature_shape` and `target_kind`, so a buggy
/// implementation gives a typed error, not a malformed batch.
pub trait Dataset {
    /// The number of samples.
    fn len(&self) -> usize;

    /// Whether there are no samples.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shape of one sample's features (a batch is `[B, ..shape]`).
    fn feature_shape(&self) -> &[usize];

    /// The kind of target every sample has.
    fn target_kind(&self) -> TargetKind;

    /// Sample `index` (`DataError::IndexOutOfRange` past the end).
    fn get(&self, index: usize) -> Result<Sample, DataError>;
}

impl<D: Dataset + ?Sized> Dataset for &D {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn feature_shape(&self) -> &[usize] {
        (**self).feature_shape()
    }
    fn target_kind(&self) -> TargetKind {
        (**self).target_kind()
    }
    fn get(&self, index: usize) -> Result<Sample, DataError> {
        (**self).get(index)
    }
}

/// The samples of another data set at chosen indices, in the order given
/// (a train or test part of a [`crate::split`], say). Indices may repeat.
#[derive(Debug, Clone)]
pub struct Subset<D> {
    dataset: D,
    indices: Vec<usize>,
}

impl<D: Dataset> Subset<D> {
    /// The samples of `dataset` at `indices`; every index must be in range.
    pub fn new(dataset: D, indices: Vec<usize>) -> Result<Self, DataError> {
        let len = dataset.len();
        if let Some(&index) = indices.iter().find(|&&i| i >= len) {
            return Err(DataError::IndexOutOfRange {
                op: "Subset::new",
                index,
                len,
            });
        }
        Ok(Subset { dataset, indices })
    }

    /// The indices into the underlying data set.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// The underlying data set.
    pub fn inner(&self) -> &D {
        &self.dataset
    }
}

impl<D: Dataset> Dataset for Subset<D> {
    fn len(&self) -> usize {
        self.indices.len()
    }
    fn feature_shape(&self) -> &[usize] {
        self.dataset.feature_shape()
    }
    fn target_kind(&self) -> TargetKind {
        self.dataset.target_kind()
    }
    fn get(&self, index: usize) -> Result<Sample, DataError> {
        let &inner = self.indices.get(index).ok_or(DataError::IndexOutOfRange {
            op: "Subset::get",
            index,
            len: self.indices.len(),
        })?;
        self.dataset.get(inner)
    }
}
