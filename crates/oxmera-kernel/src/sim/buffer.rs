//! Kernel arguments: buffers of 32-bit words and scalars.

use crate::ir::{Kernel, ParamKind, Scalar, Value};

/// A global buffer: elements stored as their 32-bit patterns.
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    /// Element type.
    pub elem: Scalar,
    /// Element bit patterns.
    pub data: Vec<u32>,
}

impl Buffer {
    /// A buffer of `f32`.
    pub fn from_f32(v: &[f32]) -> Self {
        Buffer {
            elem: Scalar::F32,
            data: v.iter().map(|x| x.to_bits()).collect(),
        }
    }
    /// A buffer of `u32`.
    pub fn from_u32(v: &[u32]) -> Self {
        Buffer {
            elem: Scalar::U32,
            data: v.to_vec(),
        }
    }
    /// A buffer of `i32`.
    pub fn from_i32(v: &[i32]) -> Self {
        Buffer {
            elem: Scalar::I32,
            data: v.iter().map(|x| *x as u32).collect(),
        }
    }
    /// `n` zeros of type `elem`.
    pub fn zeros(elem: Scalar, n: usize) -> Self {
        Buffer {
            elem,
            data: vec![0; n],
        }
    }
    /// The elements as `f32` (bit reinterpretation for other types).
    pub fn to_f32(&self) -> Vec<f32> {
        self.data.iter().map(|b| f32::from_bits(*b)).collect()
    }
    /// The elements as `u32`.
    pub fn to_u32(&self) -> Vec<u32> {
        self.data.clone()
    }
    /// The elements as `i32`.
    pub fn to_i32(&self) -> Vec<i32> {
        self.data.iter().map(|b| *b as i32).collect()
    }
}

/// One kernel argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A buffer, for a `&[T]` or `&mut [T]` parameter.
    Buffer(Buffer),
    /// A scalar, for a scalar parameter.
    Scalar(Value),
}

impl Arg {
    /// The buffer inside, if this is one.
    pub fn buffer(&self) -> Option<&Buffer> {
        match self {
            Arg::Buffer(b) => Some(b),
            Arg::Scalar(_) => None,
        }
    }
}

/// Arguments that do not fit the kernel's parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    /// Wrong number of arguments.
    #[error("kernel `{kernel}` takes {expected} arguments, {given} were given")]
    Count {
        /// Kernel name.
        kernel: String,
        /// Parameters declared.
        expected: usize,
        /// Arguments given.
        given: usize,
    },
    /// An argument of the wrong kind or type.
    #[error("kernel `{kernel}`: argument `{param}` expects {expected}, got {given}")]
    Type {
        /// Kernel name.
        kernel: String,
        /// Parameter name.
        param: String,
        /// What the parameter is.
        expected: String,
        /// What was passed.
        given: String,
    },
}

/// Checks `args` against `k`'s parameters: their count, and for each a
/// scalar of its type or a buffer of its element type. Every runner of a
/// kernel (the simulator, a GPU backend) checks this first.
pub fn check_args(k: &Kernel, args: &[Arg]) -> Result<(), ArgError> {
    if args.len() != k.params.len() {
        return Err(ArgError::Count {
            kernel: k.name.clone(),
            expected: k.params.len(),
            given: args.len(),
        });
    }
    for (p, a) in k.params.iter().zip(args) {
        let ok = match (p.kind, a) {
            (ParamKind::Scalar(t), Arg::Scalar(v)) => v.ty() == t,
            (ParamKind::Buffer { elem, .. }, Arg::Buffer(b)) => b.elem == elem,
            _ => false,
        };
        if !ok {
            let expected = match p.kind {
                ParamKind::Scalar(t) => format!("a {t} scalar"),
                ParamKind::Buffer { elem, .. } => format!("a buffer of {elem}"),
            };
            let given = match a {
                Arg::Scalar(v) => format!("a {} scalar", v.ty()),
                Arg::Buffer(b) => format!("a buffer of {}", b.elem),
            };
            return Err(ArgError::Type {
                kernel: k.name.clone(),
                param: p.name.clone(),
                expected,
                given,
            });
        }
    }
    Ok(())
}
