//! [`Scalar`]: a number written in a program, before it meets a tensor.
//!
//! `x * 2`, `x.add_scalar(1)`, `x.pow_scalar(2)` and `x * 0.5` should all
//! just work, whatever the literal's Rust type. Every integer and float
//! type (and `bool`) converts into a `Scalar` without loss; the op then
//! converts the `Scalar` to the tensor's dtype by one rule:
//!
//! - into a **float** dtype the value is rounded to nearest (`x * 0.1` on
//!   an `f16` tensor multiplies by the `f16` nearest 0.1);
//! - into an **integer or bool** dtype it must be exactly a value of that
//!   dtype (an integer in range; 0 or 1 for bool), else the op returns
//!   [`Error::InvalidArgument`]: `u8_tensor + 300` and `i32_tensor + 0.5`
//!   are refused, never wrapped, saturated or truncated.
//!
//! Scalars reach a backend as an `f64`, which holds every integer up to
//! 2^53 exactly. An integer scalar beyond that (`i64::MAX`, say) would be
//! rounded on its way, so [`Scalar::to_f64`] refuses it rather than let an
//! `i64` tensor see a different number than the program wrote.
//!
//! ```
//! use oxmera_core::Scalar;
//! assert_eq!(Scalar::from(2).to_f64("mul")?, 2.0);
//! assert_eq!(Scalar::from(0.5f32).to_f64("mul")?, 0.5);
//! assert_eq!(Scalar::from(true).to_f64("mul")?, 1.0);
//! assert!(Scalar::from(i64::MAX).to_f64("add").is_err());
//! # Ok::<(), oxmera_core::Error>(())
//! ```

use crate::Error;

/// A number from a program: an integer (any Rust integer type, held
/// exactly), a float, or a bool. See the module docs for how it meets a
/// tensor's dtype.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// An integer, held exactly (every `i64` and `u64` fits an `i128`).
    Int(i128),
    /// A floating-point value.
    Float(f64),
    /// A boolean (1 or 0 in arithmetic).
    Bool(bool),
}

/// The largest magnitude below which every integer is exactly an `f64`.
const F64_EXACT_INT: i128 = 1 << 53;

impl Scalar {
    /// The value as the `f64` a backend takes: exact for floats, bools and
    /// integers of magnitude up to 2^53 (and larger ones that happen to be
    /// exactly an `f64`); any other integer is refused with
    /// [`Error::InvalidArgument`] naming `op`, because rounding it would
    /// silently change the number.
    pub fn to_f64(self, op: &'static str) -> crate::Result<f64> {
        match self {
            Scalar::Float(v) => Ok(v),
            Scalar::Bool(b) => Ok(if b { 1.0 } else { 0.0 }),
            Scalar::Int(v) if v.abs() <= F64_EXACT_INT || (v as f64) as i128 == v => Ok(v as f64),
            Scalar::Int(v) => Err(Error::invalid(
                op,
                "scalar",
                format!(
                    "the integer {v} is not exactly an f64 (beyond 2^53), and scalars reach \
                     backends as f64: it would be rounded; use a tensor operand instead"
                ),
            )),
        }
    }
}

macro_rules! scalar_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Scalar {
                Scalar::Int(v as i128)
            }
        }
    )*};
}
scalar_from_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl From<f64> for Scalar {
    fn from(v: f64) -> Scalar {
        Scalar::Float(v)
    }
}

impl From<f32> for Scalar {
    fn from(v: f32) -> Scalar {
        Scalar::Float(v as f64)
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Scalar {
        Scalar::Bool(v)
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v}"),
            Scalar::Bool(v) => write!(f, "{v}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_integer_type_converts_exactly() {
        assert_eq!(Scalar::from(-3i8), Scalar::Int(-3));
        assert_eq!(Scalar::from(u64::MAX), Scalar::Int(u64::MAX as i128));
        assert_eq!(Scalar::from(7usize).to_f64("t").unwrap(), 7.0);
        assert_eq!(
            Scalar::from(-(1i64 << 53)).to_f64("t").unwrap(),
            -(2f64.powi(53))
        );
    }

    #[test]
    fn integers_an_f64_cannot_hold_are_refused_not_rounded() {
        // 2^53 + 1 rounds to 2^53 as an f64.
        let err = Scalar::from((1i64 << 53) + 1).to_f64("add").unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { op: "add", .. }),
            "{err}"
        );
        // 2^62 is a power of two: exactly an f64, so it passes.
        assert_eq!(
            Scalar::from(1i64 << 62).to_f64("add").unwrap(),
            2f64.powi(62)
        );
    }

    #[test]
    fn floats_and_bools_pass_through() {
        assert!(Scalar::from(f64::NAN).to_f64("t").unwrap().is_nan());
        assert_eq!(Scalar::from(0.1f32).to_f64("t").unwrap(), 0.1f32 as f64);
        assert_eq!(Scalar::from(false).to_f64("t").unwrap(), 0.0);
        assert_eq!(Scalar::from(2).to_string(), "2");
    }
}
