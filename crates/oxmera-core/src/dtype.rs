//! Element types.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// The element type of a tensor, carried as a runtime tag.
///
/// oxmera has one `Tensor` type for every dtype; the tag decides how its
/// storage is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// IEEE 754 binary16.
    F16,
    /// bfloat16: f32's exponent range with an 8-bit significand.
    BF16,
    /// IEEE 754 binary32.
    F32,
    /// IEEE 754 binary64.
    F64,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Boolean, stored as one byte.
    Bool,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 8] = [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::Bool,
    ];

    /// The float dtypes.
    pub const FLOATS: [DType; 4] = [DType::F16, DType::BF16, DType::F32, DType::F64];

    /// Size of one element in bytes.
    pub const fn size_in_bytes(self) -> usize {
        match self {
            DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::F64 | DType::I64 => 8,
            DType::U8 | DType::Bool => 1,
        }
    }

    /// The short name used in messages and parsing (`"f32"`, `"bool"`, …).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::Bool => "bool",
        }
    }

    /// Whether this is a floating-point dtype.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// The machine epsilon of a float dtype — the gap between 1 and the
    /// next number it holds (`torch.finfo(dtype).eps`); `None` for the
    /// integer dtypes and bool.
    ///
    /// ```
    /// use oxmera_core::DType;
    /// assert_eq!(DType::F32.machine_epsilon(), Some(f32::EPSILON as f64));
    /// assert_eq!(DType::BF16.machine_epsilon(), Some(2f64.powi(-7)));
    /// assert_eq!(DType::I64.machine_epsilon(), None);
    /// ```
    pub fn machine_epsilon(self) -> Option<f64> {
        match self {
            DType::F16 => Some(2f64.powi(-10)),
            DType::BF16 => Some(2f64.powi(-7)),
            DType::F32 => Some(2f64.powi(-23)),
            DType::F64 => Some(2f64.powi(-52)),
            _ => None,
        }
    }

    /// Whether this is an integer dtype (bool is not an integer).
    pub const fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64 | DType::U8)
    }

    /// Whether values of this dtype can be negative.
    pub const fn is_signed(self) -> bool {
        !matches!(self, DType::U8 | DType::Bool)
    }

    /// Whether this is the boolean dtype.
    pub const fn is_bool(self) -> bool {
        matches!(self, DType::Bool)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| Error::UnknownDType {
                given: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(d.name().parse::<DType>().unwrap(), d);
        }
        assert!(matches!(
            "float".parse::<DType>(),
            Err(Error::UnknownDType { .. })
        ));
    }

    #[test]
    fn predicates_partition() {
        for d in DType::ALL {
            let kinds = [d.is_float(), d.is_int(), d.is_bool()];
            assert_eq!(kinds.iter().filter(|k| **k).count(), 1, "{d}");
        }
        assert_eq!(DType::BF16.size_in_bytes(), 2);
        assert_eq!(DType::I64.size_in_bytes(), 8);
        assert!(!DType::U8.is_signed());
    }
}
