//! The error taxonomy.
//!
//! One enum for the whole framework, so that callers match on one type and
//! every message reads the same way: the operation first, then what was
//! wrong, then the offending values. Each variant carries structured data
//! (shapes, dtypes, devices, dims, indices) rather than a preformatted
//! string, so tests and tools can inspect it.

use crate::{DType, Device, Shape};

/// The result type of every fallible oxmera function.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong on user input.
///
/// `op` is always the public name of the operation that failed (`"matmul"`,
/// `"reshape"`, …). Panics are reserved for broken internal invariants.
///
/// # Limits
///
/// Each limit is a typed error where it is met, never an abort:
///
/// - **Elements**: a tensor holds at most [`crate::MAX_NUMEL`] elements
///   (`isize::MAX / 16`, so every byte extent and stride fits in `isize`
///   for the widest dtype); more is [`Error::ShapeOverflow`].
/// - **Memory**: a result of 64 MiB or more is reserved before its op runs
///   ([`crate::memory`]); a refusal is [`Error::OutOfMemory`]. Under
///   Linux's default overcommit that promise covers requests beyond memory
///   and swap together; one that fits that bound but not what is free may
///   still be killed when its pages are touched.
/// - Outside this type: a checkpoint header longer than
///   `oxmera_checkpoint::MAX_HEADER_LEN` (32 MiB, chosen so a hostile
///   header costs under 400 MB to parse) is `CheckpointError::HeaderTooLarge`,
///   and an IDX file declaring more than `oxmera_data::MAX_IDX_BYTES` is
///   `DataError::IdxTooLarge` (4 GiB) before anything is read or decompressed.
///
/// docs/LIMITATIONS.md gives the reason for each.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two shapes cannot be broadcast against each other.
    #[error(
        "{op}: shapes cannot be broadcast: {lhs} and {rhs} (dim {dim}: {lhs_size} vs {rhs_size})"
    )]
    BroadcastIncompatible {
        /// The operation.
        op: &'static str,
        /// The left shape.
        lhs: Shape,
        /// The right shape.
        rhs: Shape,
        /// The dimension (counted from the right-aligned result) that clashed.
        dim: usize,
        /// The left extent there.
        lhs_size: usize,
        /// The right extent there.
        rhs_size: usize,
    },

    /// `broadcast_to`/`expand`: a shape cannot be expanded to the target.
    #[error("{op}: cannot expand {from} to {to}")]
    ExpandIncompatible {
        /// The operation.
        op: &'static str,
        /// The source shape.
        from: Shape,
        /// The requested shape.
        to: Shape,
    },

    /// Matrix multiplication with mismatched inner dimensions.
    #[error("{op}: inner dimensions differ: {lhs} @ {rhs} ({k_lhs} != {k_rhs})")]
    MatmulInner {
        /// The operation.
        op: &'static str,
        /// The left shape.
        lhs: Shape,
        /// The right shape.
        rhs: Shape,
        /// The left inner extent.
        k_lhs: usize,
        /// The right inner extent.
        k_rhs: usize,
    },

    /// Two shapes that must be equal are not.
    #[error("{op}: shapes differ: {lhs} and {rhs}")]
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// The first shape.
        lhs: Shape,
        /// The second shape.
        rhs: Shape,
    },

    /// A shape no tensor may have: its element count, with a zero dim
    /// counted as one, passes [`crate::shape::MAX_NUMEL`], where the product
    /// would overflow or no allocation could hold it.
    #[error(
        "{op}: shape {shape} is too large: a tensor holds at most {max} elements (zero dims counted as 1)"
    )]
    ShapeOverflow {
        /// The operation.
        op: &'static str,
        /// The shape asked for.
        shape: Shape,
        /// The most elements a tensor may hold.
        max: usize,
    },

    /// The memory a result needs could not be had: the allocator refused
    /// `bytes` for `op`'s result on `device`, checked before any work
    /// started. On Linux, whose default overcommit lets an allocation
    /// beyond what is free succeed and the process be killed when the
    /// pages are first touched, this is a promise only for requests the
    /// kernel refuses outright (more than memory and swap together);
    /// see docs/LIMITATIONS.md.
    #[error(
        "{op}: out of memory: the result needs {bytes} bytes on {device}, and they could not be allocated"
    )]
    OutOfMemory {
        /// The operation.
        op: &'static str,
        /// The bytes the result needs.
        bytes: u64,
        /// Where they were to be allocated.
        device: Device,
    },

    /// The number of elements supplied does not fit the shape.
    #[error("{op}: {got} elements do not fill shape {shape} ({expected} elements)")]
    ElementCount {
        /// The operation.
        op: &'static str,
        /// The requested shape.
        shape: Shape,
        /// Its element count.
        expected: usize,
        /// How many elements were supplied.
        got: usize,
    },

    /// A tensor of the wrong rank.
    #[error("{op}: expected a tensor of rank {expected}, got shape {shape}")]
    RankMismatch {
        /// The operation.
        op: &'static str,
        /// The rank (or minimum rank, as the message of the op says) needed.
        expected: usize,
        /// The shape that was given.
        shape: Shape,
    },

    /// A dimension index outside `-rank..rank`.
    #[error("{op}: dim {dim} is out of range for a tensor of rank {rank}")]
    DimOutOfRange {
        /// The operation.
        op: &'static str,
        /// The dim as given (negative counts from the end).
        dim: isize,
        /// The tensor's rank.
        rank: usize,
    },

    /// The same dimension named twice where each must appear once.
    #[error("{op}: dim {dim} appears more than once in {dims:?}")]
    DuplicateDim {
        /// The operation.
        op: &'static str,
        /// The repeated dim (normalized).
        dim: usize,
        /// The dims as given.
        dims: Vec<isize>,
    },

    /// A permutation that is not a permutation of `0..rank`.
    #[error("{op}: {perm:?} is not a permutation of the {rank} dims")]
    InvalidPermutation {
        /// The operation.
        op: &'static str,
        /// The permutation given.
        perm: Vec<isize>,
        /// The tensor's rank.
        rank: usize,
    },

    /// An element index outside a dimension's extent.
    #[error("{op}: index {index} is out of bounds for dim {dim} of size {size}")]
    IndexOutOfBounds {
        /// The operation.
        op: &'static str,
        /// The index as given.
        index: i64,
        /// The dimension it indexes.
        dim: usize,
        /// That dimension's extent.
        size: usize,
    },

    /// A multi-index whose length differs from the rank.
    #[error("{op}: index {index:?} has {} coordinates, tensor has rank {rank}", index.len())]
    IndexRank {
        /// The operation.
        op: &'static str,
        /// The index given.
        index: Vec<usize>,
        /// The tensor's rank.
        rank: usize,
    },

    /// A range `start..start+len` (or a sliced range) outside a dimension.
    #[error("{op}: range {start}..{end} is out of bounds for dim {dim} of size {size}")]
    RangeOutOfBounds {
        /// The operation.
        op: &'static str,
        /// The dimension.
        dim: usize,
        /// First index of the range.
        start: usize,
        /// One past the last index of the range.
        end: usize,
        /// The dimension's extent.
        size: usize,
    },

    /// A view was requested whose strides the source layout cannot express.
    #[error(
        "{op}: a view of shape {shape} with strides {strides:?} cannot be reshaped to {target} without a copy (use reshape, which copies when needed)"
    )]
    NotAView {
        /// The operation.
        op: &'static str,
        /// The source shape.
        shape: Shape,
        /// The source strides.
        strides: Vec<usize>,
        /// The requested shape.
        target: Shape,
    },

    /// Squeezing a dimension whose extent is not 1.
    #[error("{op}: dim {dim} has size {size}, only size-1 dims can be squeezed")]
    NotSqueezable {
        /// The operation.
        op: &'static str,
        /// The dimension.
        dim: usize,
        /// Its extent.
        size: usize,
    },

    /// Operands of different dtypes where one dtype is required.
    #[error("{op}: dtypes differ: {lhs} and {rhs}")]
    DTypeMismatch {
        /// The operation.
        op: &'static str,
        /// The first dtype.
        lhs: DType,
        /// The second dtype.
        rhs: DType,
    },

    /// An operation that has no meaning for a dtype.
    #[error("{op}: not defined for dtype {dtype}{}", if hint.is_empty() { String::new() } else { format!(" ({hint})") })]
    UnsupportedDType {
        /// The operation.
        op: &'static str,
        /// The dtype given.
        dtype: DType,
        /// What to do instead (may be empty).
        hint: &'static str,
    },

    /// Operands on different devices.
    #[error("{op}: tensors are on different devices: {lhs} and {rhs}")]
    DeviceMismatch {
        /// The operation.
        op: &'static str,
        /// The first device.
        lhs: Device,
        /// The second device.
        rhs: Device,
    },

    /// No backend computes for a device: none is linked for it, or its
    /// provider could not open it (no driver, no adapter), with the reason.
    #[error("{op}: no backend is available for device {device}{}", if reason.is_empty() { String::new() } else { format!(": {reason}") })]
    BackendUnavailable {
        /// The operation.
        op: &'static str,
        /// The device.
        device: Device,
        /// Why (may be empty).
        reason: String,
    },

    /// A device cannot hold or compute a dtype (`f64` on a WGSL device, as
    /// PyTorch's MPS refuses `float64`): refused when a tensor of it would
    /// be created or cast to, naming the op, the dtype and the device.
    #[error("{op}: device {device} does not support dtype {dtype}{}", if hint.is_empty() { String::new() } else { format!(" ({hint})") })]
    UnsupportedOnDevice {
        /// The operation.
        op: &'static str,
        /// The dtype refused.
        dtype: DType,
        /// The device.
        device: Device,
        /// What to do instead (may be empty).
        hint: &'static str,
    },

    /// Work a device had queued failed after the call that queued it had
    /// returned (out of memory, a lost device, an index found out of
    /// range on the device). It surfaces at the next synchronization or
    /// read-back on that device, naming the op that caused it.
    #[error("{op}: failed on device {device} (reported at the next synchronization): {reason}")]
    DeviceFault {
        /// The operation whose queued work failed.
        op: &'static str,
        /// The device.
        device: Device,
        /// What went wrong, as the device reported it.
        reason: String,
    },

    /// A backend does not implement an operation.
    #[error("{op}: not implemented by backend {backend}")]
    NotImplemented {
        /// The operation.
        op: &'static str,
        /// The backend's name.
        backend: String,
    },

    /// A reduction with no identity over an empty extent (max, min, argmax…).
    #[error("{op}: cannot reduce over an empty dimension: shape {shape}, dims {dims:?}")]
    EmptyReduction {
        /// The operation.
        op: &'static str,
        /// The input shape.
        shape: Shape,
        /// The reduced dims.
        dims: Vec<usize>,
    },

    /// A convolution whose input channels do not match what its weight
    /// expects (`weight.dims[1] * groups`).
    #[error(
        "{op}: input {input} has {channels} channels, but weight {weight} with groups {groups} expects {expected}"
    )]
    ChannelMismatch {
        /// The operation.
        op: &'static str,
        /// The input shape (NCHW).
        input: Shape,
        /// The weight shape (OIHW).
        weight: Shape,
        /// The number of channel groups.
        groups: usize,
        /// The input's channel count.
        channels: usize,
        /// The channel count the weight expects.
        expected: usize,
    },

    /// A sliding window (convolution or pooling) that does not fit even
    /// once into its padded input.
    #[error(
        "{op}: a window spanning {window} does not fit along {axis}: input extent {input} with padding {padding} on each side"
    )]
    WindowTooLarge {
        /// The operation.
        op: &'static str,
        /// The spatial axis (`"height"`, `"width"`, or `"length"` for 1-D).
        axis: &'static str,
        /// The input's extent along that axis.
        input: usize,
        /// The padding on each side.
        padding: usize,
        /// The window's span, dilation included.
        window: usize,
    },

    /// A scalar argument outside its domain (a zero step, a negative count…).
    #[error("{op}: invalid {name}: {message}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        name: &'static str,
        /// What was wrong with it, with its value.
        message: String,
    },

    /// A device string that does not parse.
    #[error(
        "unknown device {given:?} (expected one of: reference, cpu, cuda[:N], wgpu[:N], or NAME[:N] of a custom device a linked backend provides)"
    )]
    UnknownDevice {
        /// The text given.
        given: String,
    },

    /// A dtype name that does not parse.
    #[error("unknown dtype {given:?} (expected one of: f16, bf16, f32, f64, i32, i64, u8, bool)")]
    UnknownDType {
        /// The text given.
        given: String,
    },

    /// A gradient could not be computed.
    #[error("{op}: {message}")]
    Autograd {
        /// The operation.
        op: &'static str,
        /// What went wrong.
        message: String,
    },

    /// A state dict (named tensors) that does not fit what loads it.
    #[error("{op}: tensor {name:?}: {problem}")]
    StateDict {
        /// The operation.
        op: &'static str,
        /// The tensor's dotted name (`"0.weight"`, `"bn.running_mean"`).
        name: String,
        /// What is wrong with it.
        problem: StateDictProblem,
    },

    /// A trainable parameter received a gradient but no module listed it
    /// and no optimizer holds it, so no step would ever update it: the
    /// silent mistake of a hand-written `ModuleState::visit_params` that forgets
    /// a child. Found by an optimizer's first `step()`.
    #[error(
        "{op}: a parameter of shape {shape} ({dtype}) created at {created_at} received a \
         gradient, but no module's named_parameters() lists it and no optimizer holds it, \
         so it would never be trained (did a hand-written visit_params forget a field? \
         #[derive(Module)] lists every field)"
    )]
    UnregisteredParameter {
        /// The operation.
        op: &'static str,
        /// The parameter's shape.
        shape: Shape,
        /// The parameter's dtype.
        dtype: DType,
        /// Where the parameter was made (`file:line:column` of the layer
        /// constructor's caller).
        created_at: String,
    },
}

/// What is wrong with one entry of a state dict, for [`Error::StateDict`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StateDictProblem {
    /// The loader expects this name, and the state dict lacks it.
    #[error("missing from the state dict")]
    Missing,
    /// The state dict holds a name the loader does not know.
    #[error("unexpected: no parameter or buffer has this name")]
    Unexpected,
    /// The shapes differ.
    #[error("expected shape {expected}, got {got}")]
    Shape {
        /// The shape the loader holds.
        expected: Shape,
        /// The shape in the state dict.
        got: Shape,
    },
    /// The dtypes differ.
    #[error("expected dtype {expected}, got {got}")]
    DType {
        /// The dtype the loader holds.
        expected: DType,
        /// The dtype in the state dict.
        got: DType,
    },
}

impl Error {
    /// The name of the operation that failed, where the variant has one.
    pub fn op(&self) -> Option<&'static str> {
        use Error::*;
        match self {
            BroadcastIncompatible { op, .. }
            | ExpandIncompatible { op, .. }
            | MatmulInner { op, .. }
            | ShapeMismatch { op, .. }
            | ShapeOverflow { op, .. }
            | OutOfMemory { op, .. }
            | ElementCount { op, .. }
            | RankMismatch { op, .. }
            | DimOutOfRange { op, .. }
            | DuplicateDim { op, .. }
            | InvalidPermutation { op, .. }
            | IndexOutOfBounds { op, .. }
            | IndexRank { op, .. }
            | RangeOutOfBounds { op, .. }
            | NotAView { op, .. }
            | NotSqueezable { op, .. }
            | DTypeMismatch { op, .. }
            | UnsupportedDType { op, .. }
            | DeviceMismatch { op, .. }
            | BackendUnavailable { op, .. }
            | UnsupportedOnDevice { op, .. }
            | DeviceFault { op, .. }
            | NotImplemented { op, .. }
            | EmptyReduction { op, .. }
            | ChannelMismatch { op, .. }
            | WindowTooLarge { op, .. }
            | InvalidArgument { op, .. }
            | Autograd { op, .. }
            | StateDict { op, .. }
            | UnregisteredParameter { op, .. } => Some(op),
            UnknownDevice { .. } | UnknownDType { .. } => None,
        }
    }

    /// The variant's name (`"MatmulInner"`, `"DimOutOfRange"`, …): a stable
    /// key for tools and tests that group errors without matching on
    /// fields. Every name is listed in [`Error::KINDS`].
    ///
    /// ```
    /// use oxmera_core::{Error, Shape};
    ///
    /// let e = Error::invalid("linspace", "steps", "must be at least 1");
    /// assert_eq!(e.kind(), "InvalidArgument");
    /// assert!(Error::KINDS.contains(&e.kind()));
    /// ```
    pub fn kind(&self) -> &'static str {
        use Error::*;
        match self {
            BroadcastIncompatible { .. } => "BroadcastIncompatible",
            ExpandIncompatible { .. } => "ExpandIncompatible",
            MatmulInner { .. } => "MatmulInner",
            ShapeMismatch { .. } => "ShapeMismatch",
            ShapeOverflow { .. } => "ShapeOverflow",
            OutOfMemory { .. } => "OutOfMemory",
            ElementCount { .. } => "ElementCount",
            RankMismatch { .. } => "RankMismatch",
            DimOutOfRange { .. } => "DimOutOfRange",
            DuplicateDim { .. } => "DuplicateDim",
            InvalidPermutation { .. } => "InvalidPermutation",
            IndexOutOfBounds { .. } => "IndexOutOfBounds",
            IndexRank { .. } => "IndexRank",
            RangeOutOfBounds { .. } => "RangeOutOfBounds",
            NotAView { .. } => "NotAView",
            NotSqueezable { .. } => "NotSqueezable",
            DTypeMismatch { .. } => "DTypeMismatch",
            UnsupportedDType { .. } => "UnsupportedDType",
            DeviceMismatch { .. } => "DeviceMismatch",
            BackendUnavailable { .. } => "BackendUnavailable",
            UnsupportedOnDevice { .. } => "UnsupportedOnDevice",
            DeviceFault { .. } => "DeviceFault",
            NotImplemented { .. } => "NotImplemented",
            EmptyReduction { .. } => "EmptyReduction",
            ChannelMismatch { .. } => "ChannelMismatch",
            WindowTooLarge { .. } => "WindowTooLarge",
            InvalidArgument { .. } => "InvalidArgument",
            UnknownDevice { .. } => "UnknownDevice",
            UnknownDType { .. } => "UnknownDType",
            Autograd { .. } => "Autograd",
            StateDict { .. } => "StateDict",
            UnregisteredParameter { .. } => "UnregisteredParameter",
        }
    }

    /// The name of every variant, in declaration order, as
    /// [`Error::kind`] returns them; a test elsewhere produces each one
    /// through the public API.
    pub const KINDS: &'static [&'static str] = &[
        "BroadcastIncompatible",
        "ExpandIncompatible",
        "MatmulInner",
        "ShapeMismatch",
        "ShapeOverflow",
        "OutOfMemory",
        "ElementCount",
        "RankMismatch",
        "DimOutOfRange",
        "DuplicateDim",
        "InvalidPermutation",
        "IndexOutOfBounds",
        "IndexRank",
        "RangeOutOfBounds",
        "NotAView",
        "NotSqueezable",
        "DTypeMismatch",
        "UnsupportedDType",
        "DeviceMismatch",
        "BackendUnavailable",
        "UnsupportedOnDevice",
        "DeviceFault",
        "NotImplemented",
        "EmptyReduction",
        "ChannelMismatch",
        "WindowTooLarge",
        "InvalidArgument",
        "UnknownDevice",
        "UnknownDType",
        "Autograd",
        "StateDict",
        "UnregisteredParameter",
    ];

    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(op: &'static str, name: &'static str, message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            op,
            name,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_message_names_op_shapes_and_extents() {
        let e = Error::MatmulInner {
            op: "matmul",
            lhs: Shape::from([2, 3]),
            rhs: Shape::from([4, 5]),
            k_lhs: 3,
            k_rhs: 4,
        };
        assert_eq!(
            e.to_string(),
            "matmul: inner dimensions differ: [2, 3] @ [4, 5] (3 != 4)"
        );
        assert_eq!(e.op(), Some("matmul"));
    }

    #[test]
    fn state_dict_message_names_the_tensor() {
        let e = Error::StateDict {
            op: "load_state_dict",
            name: "0.weight".into(),
            problem: StateDictProblem::Shape {
                expected: Shape::from([4, 3]),
                got: Shape::from([3, 4]),
            },
        };
        assert_eq!(
            e.to_string(),
            "load_state_dict: tensor \"0.weight\": expected shape [4, 3], got [3, 4]"
        );
    }

    #[test]
    fn dtype_message_carries_hint() {
        let e = Error::UnsupportedDType {
            op: "exp",
            dtype: DType::I32,
            hint: "cast to a float dtype first",
        };
        assert_eq!(
            e.to_string(),
            "exp: not defined for dtype i32 (cast to a float dtype first)"
        );
    }
}
