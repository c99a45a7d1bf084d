//! # A5 — the error taxonomy
//!
//! Three habits that make a framework pleasant to be wrong in:
//!
//! 1. **Invalid states are unrepresentable.** A [`Dim`] can only be made by
//!    [`Dim::new`], which checks it; code holding a `Dim` never re-checks.
//!    Likewise a [`Shaped`] always has exactly as many elements as its dims.
//! 2. **Every failure is typed.** Functions return `Result<_, OpError>`,
//!    never panic on user input, and each variant carries the values that
//!    were wrong, so a caller (or a test) can match on them.
//! 3. **Messages name the op and the shapes.** The `Display` of an error
//!    starts with the op's name and shows the offending shapes as `[2, 3]`.

use std::fmt;

/// Everything that can go wrong on user input in this rung.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpError {
    /// A dim outside `-rank..rank`.
    /// Message: `{op}: dim {dim} is out of range for a tensor of rank {rank}`.
    DimOutOfRange {
        /// The operation.
        op: &'static str,
        /// The dim as given (negative counts from the end).
        dim: isize,
        /// The rank.
        rank: usize,
    },
    /// Two shapes that must be equal are not.
    /// Message: `{op}: shapes differ: {lhs} and {rhs}` (shapes as `[2, 3]`).
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// The first shape.
        lhs: Vec<usize>,
        /// The second shape.
        rhs: Vec<usize>,
    },
    /// Data that does not fill a shape.
    /// Message: `{op}: {got} elements do not fill shape {shape} ({expected} elements)`.
    ElementCount {
        /// The operation.
        op: &'static str,
        /// The shape.
        shape: Vec<usize>,
        /// How many elements it holds.
        expected: usize,
        /// How many were given.
        got: usize,
    },
    /// An argument outside its domain.
    /// Message: `{op}: invalid {name}: {message}`.
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        name: &'static str,
        /// What was wrong, with the value.
        message: String,
    },
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // TODO(A5): one message per variant, exactly as documented above.
        // (Delete the next line, which only silences "unused `f`".)
        let _ = f;
        todo!("A5: Display for {self:?}")
    }
}

impl std::error::Error for OpError {}

/// A dim index that has been checked against a rank: `index() < rank()`
/// always holds, because `new` is the only way to make one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim {
    index: usize,
    rank: usize,
}

impl Dim {
    /// Resolves `dim` against `rank`: `0..rank` as is, `-rank..0` counting
    /// from the end (`-1` is the last); anything else is
    /// [`OpError::DimOutOfRange`] for `op`.
    pub fn new(op: &'static str, dim: isize, rank: usize) -> Result<Dim, OpError> {
        // TODO(A5): normalize, check, construct.
        todo!("A5: Dim::new({op:?}, {dim}, {rank})")
    }

    /// The dim, in `0..rank`.
    pub fn index(self) -> usize {
        self.index
    }

    /// The rank it was checked against.
    pub fn rank(self) -> usize {
        self.rank
    }
}

/// Data with a shape it exactly fills.
#[derive(Debug, Clone, PartialEq)]
pub struct Shaped {
    dims: Vec<usize>,
    data: Vec<f64>,
}

impl Shaped {
    /// Pairs `data` with `dims`, or [`OpError::ElementCount`] for `op`
    /// when the lengths disagree.
    pub fn new(op: &'static str, dims: &[usize], data: Vec<f64>) -> Result<Shaped, OpError> {
        // TODO(A5): check the count.
        todo!("A5: Shaped::new({op:?}, {dims:?}, {} elements)", data.len())
    }

    /// The dims.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The data, row-major.
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// Elementwise sum of two arrays of the *same* shape (no broadcasting
    /// here), or [`OpError::ShapeMismatch`] for `"add"`.
    pub fn add(&self, other: &Shaped) -> Result<Shaped, OpError> {
        // TODO(A5): check the shapes, then add.
        todo!("A5: add {:?} and {:?}", self.dims, other.dims)
    }
}

/// Resolves a reshape target with at most one `-1` (inferred) against
/// `numel` elements.
///
/// Errors, all for `op`: more than one `-1`, or an entry below `-1`, is
/// [`OpError::InvalidArgument`] named `"shape"`; a `-1` that cannot be
/// inferred (the other dims do not divide `numel`, or multiply to 0) is
/// `InvalidArgument` too; dims that do not hold `numel` elements are
/// [`OpError::ElementCount`].
pub fn infer_shape(op: &'static str, numel: usize, dims: &[isize]) -> Result<Vec<usize>, OpError> {
    // TODO(A5): find the -1 (if any), check the others, infer, check the count.
    todo!("A5: infer_shape({op:?}, {numel}, {dims:?})")
}
