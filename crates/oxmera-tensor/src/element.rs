//! The Rust types that can be tensor elements, and the casts between them.

use half::{bf16, f16};
use oxmera_core::DType;

use crate::HostBuffer;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that stores one dtype's elements.
///
/// Conversions go through `f64` (for floats) or `i64` (for integers), which
/// hold every value of every dtype except the largest `i64`s. The rules:
///
/// - into `f16`/`bf16`/`f32`: round to nearest, ties to even (one rounding
///   from the `f64` value);
/// - float into an integer: truncate toward zero, **saturate** at the
///   integer's range, NaN becomes 0 (Rust's `as`; PyTorch leaves this
///   undefined);
/// - anything into `bool`: `v != 0` (so NaN is `true`, as in PyTorch);
/// - `bool` into anything: 0 or 1.
pub trait Element:
    Copy + Send + Sync + PartialEq + PartialOrd + std::fmt::Debug + sealed::Sealed + 'static
{
    /// The dtype tag of this type.
    const DTYPE: DType;
    /// The value as an `f64` (exact for every dtype but `i64` beyond 2^53).
    fn to_f64(self) -> f64;
    /// The nearest value of this type (see the trait docs for the rules).
    fn from_f64(v: f64) -> Self;
    /// The value as an `i64` (floats truncate and saturate, NaN gives 0).
    fn to_i64(self) -> i64;
    /// Converts from `i64`: integers wrap (two's complement), floats round.
    fn from_i64(v: i64) -> Self;
    /// Wraps a vector as a host buffer.
    fn into_buffer(v: Vec<Self>) -> HostBuffer;
    /// Borrows a host buffer's elements if it holds this type.
    fn slice(buf: &HostBuffer) -> Option<&[Self]>;
    /// Unwraps a host buffer's vector if it holds this type (gives the
    /// buffer back otherwise).
    fn from_buffer(buf: HostBuffer) -> Result<Vec<Self>, HostBuffer>;
}

macro_rules! float_element {
    ($t:ty, $dt:ident, $to:expr, $from:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            fn to_f64(self) -> f64 {
                ($to)(self)
            }
            fn from_f64(v: f64) -> Self {
                ($from)(v)
            }
            fn to_i64(self) -> i64 {
                ($to)(self) as i64
            }
            fn from_i64(v: i64) -> Self {
                ($from)(v as f64)
            }
            fn into_buffer(v: Vec<Self>) -> HostBuffer {
                HostBuffer::$dt(v)
            }
            fn slice(buf: &HostBuffer) -> Option<&[Self]> {
                match buf {
                    HostBuffer::$dt(v) => Some(v),
                    _ => None,
                }
            }
            fn from_buffer(buf: HostBuffer) -> Result<Vec<Self>, HostBuffer> {
                match buf {
                    HostBuffer::$dt(v) => Ok(v),
                    other => Err(other),
                }
            }
        }
    };
}

macro_rules! int_element {
    ($t:ty, $dt:ident) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn into_buffer(v: Vec<Self>) -> HostBuffer {
                HostBuffer::$dt(v)
            }
            fn slice(buf: &HostBuffer) -> Option<&[Self]> {
                match buf {
                    HostBuffer::$dt(v) => Some(v),
                    _ => None,
                }
            }
            fn from_buffer(buf: HostBuffer) -> Result<Vec<Self>, HostBuffer> {
                match buf {
                    HostBuffer::$dt(v) => Ok(v),
                    other => Err(other),
                }
            }
        }
    };
}

float_element!(f16, F16, |x: f16| x.to_f64(), f16::from_f64);
float_element!(bf16, BF16, |x: bf16| x.to_f64(), bf16::from_f64);
float_element!(f32, F32, |x: f32| x as f64, |v: f64| v as f32);
float_element!(f64, F64, |x: f64| x, |v: f64| v);
int_element!(i32, I32);
int_element!(i64, I64);
int_element!(u8, U8);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn into_buffer(v: Vec<Self>) -> HostBuffer {
        HostBuffer::Bool(v)
    }
    fn slice(buf: &HostBuffer) -> Option<&[Self]> {
        match buf {
            HostBuffer::Bool(v) => Some(v),
            _ => None,
        }
    }
    fn from_buffer(buf: HostBuffer) -> Result<Vec<Self>, HostBuffer> {
        match buf {
            HostBuffer::Bool(v) => Ok(v),
            other => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_follow_the_documented_rules() {
        // 1 + 2^-11 is halfway between two f16 values; ties go to even (1.0).
        assert_eq!(f16::from_f64(1.0 + 2f64.powi(-11)), f16::from_f64(1.0));
        assert_eq!(
            f16::from_f64(1.0 + 3.0 * 2f64.powi(-11)).to_f64(),
            1.0 + 2.0 * 2f64.powi(-10)
        );
        assert_eq!(bf16::from_f64(1.0 + 2f64.powi(-8)).to_f64(), 1.0);
        assert_eq!(i32::from_f64(3.9), 3);
        assert_eq!(i32::from_f64(-3.9), -3);
        assert_eq!(u8::from_f64(300.0), 255);
        assert_eq!(u8::from_f64(-5.0), 0);
        assert_eq!(i64::from_f64(f64::NAN), 0);
        assert!(bool::from_f64(f64::NAN));
        assert!(!bool::from_f64(-0.0));
        assert_eq!(u8::from_i64(257), 1);
        assert_eq!(true.to_f64(), 1.0);
    }
}
