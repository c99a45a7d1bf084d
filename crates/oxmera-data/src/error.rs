//! The errors of data loading.

use std::path::PathBuf;

/// Everything that can go wrong when building, reading or batching a data
/// set. Variants carry the offending values (paths, indices, byte counts)
/// so a caller or a test can inspect them, not just print them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// A sample index at or past the end of a data set.
    #[error("{op}: index {index} is out of range for a data set of {len} samples")]
    IndexOutOfRange {
        /// The operation.
        op: &'static str,
        /// The index asked for.
        index: usize,
        /// The number of samples.
        len: usize,
    },

    /// A sample whose features do not fill the data set's feature shape.
    #[error(
        "{op}: sample {index} has {got} feature values, the feature shape {shape:?} needs {expected}"
    )]
    FeatureLength {
        /// The operation.
        op: &'static str,
        /// The sample index.
        index: usize,
        /// The feature shape.
        shape: Vec<usize>,
        /// Its element count.
        expected: usize,
        /// What the sample had.
        got: usize,
    },

    /// A sample whose target does not match the data set's target kind.
    #[error("{op}: sample {index} has target {got}, the data set declares {expected}")]
    TargetMismatch {
        /// The operation.
        op: &'static str,
        /// The sample index.
        index: usize,
        /// The declared target kind.
        expected: String,
        /// What the sample had.
        got: String,
    },

    /// A class label outside `0..num_classes`.
    #[error("{op}: sample {index} has label {label}, outside 0..{num_classes}")]
    LabelOutOfRange {
        /// The operation.
        op: &'static str,
        /// The sample index.
        index: usize,
        /// The label.
        label: i64,
        /// The number of classes.
        num_classes: usize,
    },

    /// Features and targets that disagree on the number of samples.
    #[error("{op}: {features} feature rows but {targets} targets")]
    CountMismatch {
        /// The operation.
        op: &'static str,
        /// Samples according to the features.
        features: usize,
        /// Samples according to the targets.
        targets: usize,
    },

    /// A configuration value out of its domain (batch size 0, a fraction
    /// outside [0, 1], a negative noise level…).
    #[error("{op}: invalid {what}: {detail}")]
    InvalidConfig {
        /// The operation.
        op: &'static str,
        /// The parameter.
        what: &'static str,
        /// Why it is invalid, with its value.
        detail: String,
    },

    /// An IDX file whose magic number is not the one expected.
    #[error("{path:?}: not an IDX {what} file: magic 0x{found:08x}, expected 0x{expected:08x}")]
    WrongMagic {
        /// The file.
        path: PathBuf,
        /// What was expected ("images", "labels").
        what: &'static str,
        /// The expected magic number.
        expected: u32,
        /// The magic number found.
        found: u32,
    },

    /// A file shorter than its header says it must be.
    #[error("{path:?}: truncated: expected {expected} bytes, found {actual}")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The byte count the header implies (header included).
        expected: u64,
        /// The byte count actually present (after decompression).
        actual: u64,
    },

    /// A file longer than its header says it is.
    #[error("{path:?}: {extra} unexpected bytes after the {expected} bytes the header describes")]
    TrailingBytes {
        /// The file.
        path: PathBuf,
        /// The byte count the header implies.
        expected: u64,
        /// How many bytes follow (of a compressed file: how many were
        /// decompressed before reading stopped, at most 1 MiB; more may
        /// follow).
        extra: u64,
    },

    /// A header declaring more data than an IDX file may hold
    /// ([`crate::MAX_IDX_BYTES`]); refused before anything is read.
    #[error(
        "{path:?}: header dimensions {dims:?} declare more than the {max} bytes an IDX file may hold"
    )]
    IdxTooLarge {
        /// The file.
        path: PathBuf,
        /// The dimensions.
        dims: Vec<u32>,
        /// The limit.
        max: u64,
    },

    /// A header whose dimensions multiply past what memory can address.
    #[error("{path:?}: header dimensions {dims:?} overflow")]
    DimsOverflow {
        /// The file.
        path: PathBuf,
        /// The dimensions.
        dims: Vec<u32>,
    },

    /// An image file and a label file with different sample counts.
    #[error("{images_path:?} has {images} images but {labels_path:?} has {labels} labels")]
    IdxCountMismatch {
        /// The image file.
        images_path: PathBuf,
        /// Its sample count.
        images: usize,
        /// The label file.
        labels_path: PathBuf,
        /// Its sample count.
        labels: usize,
    },

    /// A file that is not where any of the usual names would put it.
    #[error("{what}: no file found; tried {tried:?}")]
    MissingFile {
        /// What was looked for.
        what: &'static str,
        /// Every path tried.
        tried: Vec<PathBuf>,
    },

    /// A line of a text data file that does not parse.
    #[error("{source_name} line {line}: {detail}")]
    Parse {
        /// The file or embedded resource.
        source_name: String,
        /// The 1-based line number.
        line: usize,
        /// What was wrong.
        detail: String,
    },

    /// An I/O error, with the path it happened on.
    #[error("{path:?}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A tensor operation failed (building a batch on a device, say).
    #[error(transparent)]
    Tensor(#[from] oxmera_core::Error),
}

impl DataError {
    pub(crate) fn config(op: &'static str, what: &'static str, detail: impl Into<String>) -> Self {
        DataError::InvalidConfig {
            op,
            what,
            detail: detail.into(),
        }
    }
}
