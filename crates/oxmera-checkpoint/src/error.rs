//! The errors of saving and loading checkpoints.

use std::path::PathBuf;

use oxmera_core::{DType, Shape};

/// Everything that can go wrong saving or loading a checkpoint. Where the
/// trouble is with one tensor, the variant names it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// An I/O error, with the path it happened on.
    #[error("{path:?}: {source}")]
    Io {
        /// The file (or directory, for the final fsync).
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A path with no file name to write to.
    #[error("{path:?}: not a file path")]
    NotAFilePath {
        /// The path.
        path: PathBuf,
    },

    /// Fewer than the 8 bytes that hold the header length.
    #[error("checkpoint of {len} bytes is too short to hold the 8-byte header length")]
    TooShort {
        /// The byte count.
        len: u64,
    },

    /// A header length that runs past the end of the file.
    #[error("header claims {claimed} bytes but only {available} follow the length field")]
    HeaderPastEnd {
        /// The claimed header length.
        claimed: u64,
        /// The bytes after the 8-byte length field.
        available: u64,
    },

    /// A header longer than [`crate::MAX_HEADER_LEN`]: in a file being
    /// loaded (refused before it is read), or in one being saved (refused
    /// before it is written, since it could not be loaded).
    #[error("header claims {claimed} bytes, more than the limit of {limit}")]
    HeaderTooLarge {
        /// The claimed header length.
        claimed: u64,
        /// The limit.
        limit: u64,
    },

    /// More metadata keys than [`crate::MAX_METADATA_KEYS`]: in a file being
    /// loaded, or in metadata being saved (which could not be loaded).
    #[error("{count} metadata keys, more than the limit of {limit}")]
    TooManyMetadataKeys {
        /// How many keys there are.
        count: usize,
        /// The limit.
        limit: usize,
    },

    /// A tensor name (or a metadata key, as `__metadata__.KEY`) that appears
    /// twice in the header: JSON allows it, but which value is meant is
    /// anyone's guess.
    #[error("header names {name:?} twice")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },

    /// A header that is not UTF-8 JSON of the safetensors shape.
    #[error("header is not valid: {detail}")]
    BadHeader {
        /// What was wrong.
        detail: String,
    },

    /// A tensor entry of the header that is malformed.
    #[error("tensor {name:?}: bad header entry: {detail}")]
    BadEntry {
        /// The tensor.
        name: String,
        /// What was wrong.
        detail: String,
    },

    /// A dtype that oxmera has no counterpart for (or does not know).
    #[error("tensor {name:?}: unsupported dtype {dtype}")]
    UnsupportedDType {
        /// The tensor.
        name: String,
        /// The dtype as the file spells it.
        dtype: String,
    },

    /// A shape whose byte size does not fit in 64 bits.
    #[error("tensor {name:?}: shape {shape:?} overflows")]
    ShapeOverflow {
        /// The tensor.
        name: String,
        /// The shape.
        shape: Vec<u64>,
    },

    /// Data offsets whose byte count disagrees with the dtype and shape.
    #[error("tensor {name:?}: {dtype} {shape:?} needs {expected} bytes, its offsets span {got}")]
    ByteSizeMismatch {
        /// The tensor.
        name: String,
        /// Its dtype.
        dtype: DType,
        /// Its shape.
        shape: Vec<usize>,
        /// Bytes the dtype and shape need.
        expected: u64,
        /// Bytes between the offsets.
        got: u64,
    },

    /// Data offsets that run backwards or past the end of the data.
    #[error("tensor {name:?}: offsets {start}..{end} are outside the {data_len} bytes of data")]
    OffsetOutOfRange {
        /// The tensor.
        name: String,
        /// The start offset.
        start: u64,
        /// The end offset.
        end: u64,
        /// The length of the data section.
        data_len: u64,
    },

    /// Two tensors whose bytes overlap.
    #[error(
        "tensor {name:?} (bytes {start}..{end}) overlaps tensor {other:?}, which ends at {other_end}"
    )]
    OverlappingData {
        /// The later tensor.
        name: String,
        /// Its start offset.
        start: u64,
        /// Its end offset.
        end: u64,
        /// The tensor it overlaps.
        other: String,
        /// Where that one ends.
        other_end: u64,
    },

    /// Bytes of the data section that belong to no tensor.
    #[error("data bytes {start}..{end} belong to no tensor")]
    UncoveredData {
        /// The first such byte.
        start: u64,
        /// One past the last.
        end: u64,
    },

    /// A `BOOL` element that is neither 0 nor 1.
    #[error("tensor {name:?}: element {index} is byte {byte}, not a bool (0 or 1)")]
    InvalidBool {
        /// The tensor.
        name: String,
        /// The element.
        index: usize,
        /// Its byte.
        byte: u8,
    },

    /// A tensor name the format reserves.
    #[error("tensor name {name:?} is reserved by the safetensors format")]
    ReservedName {
        /// The name.
        name: String,
    },

    /// A tensor the caller expected that the checkpoint lacks.
    #[error("tensor {name:?} is not in the checkpoint")]
    MissingTensor {
        /// The tensor.
        name: String,
    },

    /// A tensor of another shape than expected.
    #[error("tensor {name:?}: expected shape {expected}, found {found}")]
    ShapeMismatch {
        /// The tensor.
        name: String,
        /// The expected shape.
        expected: Shape,
        /// The shape in the checkpoint.
        found: Shape,
    },

    /// A tensor of another dtype than expected.
    #[error("tensor {name:?}: expected dtype {expected}, found {found}")]
    DTypeMismatch {
        /// The tensor.
        name: String,
        /// The expected dtype.
        expected: DType,
        /// The dtype in the checkpoint.
        found: DType,
    },

    /// A metadata key the caller expected that the checkpoint lacks.
    #[error("metadata key {key:?} is not in the checkpoint")]
    MissingMetadata {
        /// The key.
        key: String,
    },

    /// A metadata value that does not parse as the type expected.
    #[error("metadata {key:?} = {value:?}: {detail}")]
    BadMetadata {
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// Why it does not parse.
        detail: String,
    },

    /// A tensor operation failed (reading a tensor to the host, or
    /// building one on a device).
    #[error("tensor {name:?}: {source}")]
    Tensor {
        /// The tensor.
        name: String,
        /// The underlying error.
        #[source]
        source: oxmera_core::Error,
    },

    /// The safetensors crate refused the data.
    #[error("safetensors: {0}")]
    Format(#[from] safetensors::SafeTensorError),
}
