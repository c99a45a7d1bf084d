//! Kernel arguments: buffers of typed elements and scalars.

use crate::eval;
use crate::half;
use crate::ir::{Kernel, ParamKind, Scalar, Value};

/// A global buffer: its elements stored at their real width, little-endian
/// — one byte per `u8`, two per `u16`/`f16`/`bf16`, four per 32-bit type
/// (and per `bool`, a 0/1 word), eight per 64-bit type — exactly as a GPU
/// holds them, so the bytes go to a device as they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    /// Element type.
    pub elem: Scalar,
    /// The elements' bytes (`len() * elem.size_bytes()` of them).
    bytes: Vec<u8>,
}

/// Builds a constructor from a slice of one Rust type.
macro_rules! from_slice {
    ($(#[$doc:meta])* $name:ident, $t:ty, $scalar:expr) => {
        $(#[$doc])*
        pub fn $name(v: &[$t]) -> Self {
            Buffer {
                elem: $scalar,
                bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            }
        }
    };
}

impl Buffer {
    from_slice!(
        /// A buffer of `f32`.
        from_f32, f32, Scalar::F32
    );
    from_slice!(
        /// A buffer of `u32`.
        from_u32, u32, Scalar::U32
    );
    from_slice!(
        /// A buffer of `i32`.
        from_i32, i32, Scalar::I32
    );
    from_slice!(
        /// A buffer of `f64`.
        from_f64, f64, Scalar::F64
    );
    from_slice!(
        /// A buffer of `i64`.
        from_i64, i64, Scalar::I64
    );
    from_slice!(
        /// A buffer of `u64`.
        from_u64, u64, Scalar::U64
    );
    from_slice!(
        /// A buffer of `u8`.
        from_u8, u8, Scalar::U8
    );
    from_slice!(
        /// A buffer of `u16`.
        from_u16, u16, Scalar::U16
    );
    from_slice!(
        /// A buffer of `f16` given by their bit patterns.
        from_f16_bits, u16, Scalar::F16
    );
    from_slice!(
        /// A buffer of `bf16` given by their bit patterns.
        from_bf16_bits, u16, Scalar::BF16
    );

    /// A buffer of `f16`, each `f32` rounded to nearest, ties to even.
    pub fn from_f32_as_f16(v: &[f32]) -> Self {
        let bits: Vec<u16> = v.iter().map(|x| half::f16_from_f32(*x)).collect();
        Self::from_f16_bits(&bits)
    }

    /// A buffer of `bf16`, each `f32` rounded to nearest, ties to even.
    pub fn from_f32_as_bf16(v: &[f32]) -> Self {
        let bits: Vec<u16> = v.iter().map(|x| half::bf16_from_f32(*x)).collect();
        Self::from_bf16_bits(&bits)
    }

    /// A buffer of `values`' type holding them.
    ///
    /// # Panics
    /// If the values do not all have the type `elem`.
    pub fn from_values(elem: Scalar, values: &[Value]) -> Self {
        let mut b = Buffer::zeros(elem, values.len());
        for (i, v) in values.iter().enumerate() {
            assert_eq!(v.ty(), elem, "a buffer holds one type");
            b.set(i, *v);
        }
        b
    }

    /// A buffer of `elem` from its bytes, little-endian.
    ///
    /// # Panics
    /// If the byte count is not a whole number of elements.
    pub fn from_bytes(elem: Scalar, bytes: Vec<u8>) -> Self {
        assert_eq!(
            bytes.len() as u64 % elem.size_bytes(),
            0,
            "a whole number of {elem} elements"
        );
        Buffer { elem, bytes }
    }

    /// `n` zeros of type `elem`.
    pub fn zeros(elem: Scalar, n: usize) -> Self {
        Buffer {
            elem,
            bytes: vec![0; n * elem.size_bytes() as usize],
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.elem.size_bytes() as usize
    }

    /// True for a buffer of no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The elements' bytes, little-endian, as a device holds them.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The elements' bytes, to be overwritten in place (by a device's
    /// results).
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// Element `i`'s bit pattern, zero-extended.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline]
    pub fn bits(&self, i: usize) -> u64 {
        let b = &self.bytes;
        match self.elem.size_bytes() {
            4 => u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().expect("4 bytes")) as u64,
            8 => u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes")),
            2 => u16::from_le_bytes(b[i * 2..i * 2 + 2].try_into().expect("2 bytes")) as u64,
            _ => b[i] as u64,
        }
    }

    /// Sets element `i` to the low bits of `bits`.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline]
    pub fn set_bits(&mut self, i: usize, bits: u64) {
        let n = self.elem.size_bytes() as usize;
        self.bytes[i * n..i * n + n].copy_from_slice(&bits.to_le_bytes()[..n]);
    }

    /// Element `i` as a value of the buffer's type.
    pub fn get(&self, i: usize) -> Value {
        Value::from_bits(self.elem, self.bits(i))
    }

    /// Sets element `i` to `v` (of the buffer's type).
    pub fn set(&mut self, i: usize, v: Value) {
        debug_assert_eq!(v.ty(), self.elem);
        self.set_bits(i, v.to_bits());
    }

    /// Every element as a value.
    pub fn to_values(&self) -> Vec<Value> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    /// The elements as `f32`: a 4-byte element by its bits (so an `i32`
    /// or `u32` buffer reads as its bit patterns, as always), a half
    /// widened exactly, any other type converted with `as f32`.
    pub fn to_f32(&self) -> Vec<f32> {
        (0..self.len())
            .map(|i| match self.elem.size_bytes() {
                4 => f32::from_bits(self.bits(i) as u32),
                _ => match eval::cast(self.get(i), Scalar::F32) {
                    Value::F32(x) => x,
                    _ => unreachable!("a cast to f32 is an f32"),
                },
            })
            .collect()
    }

    /// The elements' bit patterns as `u32` (zero-extended from narrower
    /// types, the low half of 64-bit ones).
    pub fn to_u32(&self) -> Vec<u32> {
        (0..self.len()).map(|i| self.bits(i) as u32).collect()
    }

    /// The elements' bit patterns as `i32` (as [`Buffer::to_u32`]).
    pub fn to_i32(&self) -> Vec<i32> {
        (0..self.len())
            .map(|i| self.bits(i) as u32 as i32)
            .collect()
    }

    /// The elements' values as `f64`: exact for every type but the 64-bit
    /// integers beyond 2^53 (rounded); a `bool` is 0 or 1.
    pub fn to_f64(&self) -> Vec<f64> {
        (0..self.len())
            .map(|i| match self.get(i) {
                Value::Bool(b) => b as u32 as f64,
                v => match eval::cast(v, Scalar::F64) {
                    Value::F64(x) => x,
                    _ => unreachable!("a cast to f64 is an f64"),
                },
            })
            .collect()
    }

    /// The elements' bit patterns as `u64` (zero-extended).
    pub fn to_u64(&self) -> Vec<u64> {
        (0..self.len()).map(|i| self.bits(i)).collect()
    }

    /// The elements' bit patterns as `i64` (as [`Buffer::to_u64`]).
    pub fn to_i64(&self) -> Vec<i64> {
        (0..self.len()).map(|i| self.bits(i) as i64).collect()
    }

    /// The elements' bit patterns as `u16` (the low 16 bits): a `u16`,
    /// `f16` or `bf16` buffer's elements.
    pub fn to_u16(&self) -> Vec<u16> {
        (0..self.len()).map(|i| self.bits(i) as u16).collect()
    }

    /// The elements' bit patterns as `u8` (the low 8 bits).
    pub fn to_u8(&self) -> Vec<u8> {
        (0..self.len()).map(|i| self.bits(i) as u8).collect()
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
