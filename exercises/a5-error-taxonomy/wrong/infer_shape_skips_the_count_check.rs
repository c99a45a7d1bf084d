//! Forgets the count check: a full reshape target that does not hold numel is accepted.
//!
//! A named wrong solution of A5, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with `infer_shape` without its element-count check.

use std::fmt;

use oxmera::{DType, Device, Error, Shape, Tensor};

/// Everything that can go wrong on user input in this rung.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpError {
    /// A dim outside `-rank..rank`.
    DimOutOfRange {
        /// The operation.
        op: &'static str,
        /// The dim as given.
        dim: isize,
        /// The rank.
        rank: usize,
    },
    /// Two shapes that must be equal are not.
    ShapeMismatch {
        /// The operation.
        op: &'static str,
        /// The first shape.
        lhs: Vec<usize>,
        /// The second shape.
        rhs: Vec<usize>,
    },
    /// Data that does not fill a shape.
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
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        name: &'static str,
        /// What was wrong.
        message: String,
    },
}

impl OpError {
    /// The same error in oxmera's taxonomy.
    fn to_core(&self) -> Error {
        match self.clone() {
            OpError::DimOutOfRange { op, dim, rank } => Error::DimOutOfRange { op, dim, rank },
            OpError::ShapeMismatch { op, lhs, rhs } => Error::ShapeMismatch {
                op,
                lhs: Shape::from(lhs),
                rhs: Shape::from(rhs),
            },
            OpError::ElementCount {
                op,
                shape,
                expected,
                got,
            } => Error::ElementCount {
                op,
                shape: Shape::from(shape),
                expected,
                got,
            },
            OpError::InvalidArgument { op, name, message } => {
                Error::InvalidArgument { op, name, message }
            }
        }
    }
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_core())
    }
}

impl std::error::Error for OpError {}

/// A dim index checked against a rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim {
    index: usize,
    rank: usize,
}

impl Dim {
    /// Resolves `dim` against `rank`.
    pub fn new(op: &'static str, dim: isize, rank: usize) -> Result<Dim, OpError> {
        oxmera::core::normalize_dim(op, dim, rank)
            .map(|index| Dim { index, rank })
            .map_err(|_| OpError::DimOutOfRange { op, dim, rank })
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
    /// Pairs `data` with `dims`.
    pub fn new(op: &'static str, dims: &[usize], data: Vec<f64>) -> Result<Shaped, OpError> {
        match Tensor::from_vec(data.clone(), dims.to_vec(), Device::Reference) {
            Ok(_) => Ok(Shaped {
                dims: dims.to_vec(),
                data,
            }),
            Err(Error::ElementCount {
                shape,
                expected,
                got,
                ..
            }) => Err(OpError::ElementCount {
                op,
                shape: shape.into_vec(),
                expected,
                got,
            }),
            Err(other) => panic!("from_vec failed on {dims:?}: {other}"),
        }
    }

    /// The dims.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The data, row-major.
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// Elementwise sum of two arrays of the same shape.
    pub fn add(&self, other: &Shaped) -> Result<Shaped, OpError> {
        if self.dims != other.dims {
            return Err(OpError::ShapeMismatch {
                op: "add",
                lhs: self.dims.clone(),
                rhs: other.dims.clone(),
            });
        }
        let t = |s: &Shaped| {
            Tensor::from_vec(s.data.clone(), s.dims.clone(), Device::Reference)
                .expect("a Shaped fills its dims")
        };
        let sum = t(self).add(&t(other)).expect("same shapes add");
        Ok(Shaped {
            dims: self.dims.clone(),
            data: sum.to_vec::<f64>().expect("f64 reads back"),
        })
    }
}

/// Resolves a reshape target with at most one `-1` against `numel`.
pub fn infer_shape(op: &'static str, numel: usize, dims: &[isize]) -> Result<Vec<usize>, OpError> {
    let probe = Tensor::zeros([numel], DType::U8, Device::Reference).expect("a small probe");
    let shape = probe.infer_shape(dims).map_err(|e| match e {
        Error::InvalidArgument { name, message, .. } => {
            OpError::InvalidArgument { op, name, message }
        }
        other => panic!("infer_shape of {dims:?} failed: {other}"),
    })?;
    // oxmera leaves the count check to reshape itself; this rung asks for it here.
    if shape.numel() != numel && dims.contains(&-1) {
        return Err(OpError::ElementCount {
            op,
            shape: shape.dims().to_vec(),
            expected: shape.numel(),
            got: numel,
        });
    }
    Ok(shape.into_vec())
}
