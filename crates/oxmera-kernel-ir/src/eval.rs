//! Scalar semantics of the language: the one definition of what each operator
//! computes. The analysis folds launch-determined values with it and the
//! simulator's vectorized operations are tested against it.

use crate::ir::{BinOp, MathFn, Scalar, UnOp, Value};

/// Why a scalar operation has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalError {
    /// Integer division or remainder by zero.
    DivByZero,
    /// Operand types the operator does not accept (a validator bug if seen).
    Types,
}

/// Applies a unary operator.
pub fn unary(op: UnOp, a: Value) -> Result<Value, EvalError> {
    Ok(match (op, a) {
        (UnOp::Neg, Value::F32(v)) => Value::F32(-v),
        (UnOp::Neg, Value::I32(v)) => Value::I32(v.wrapping_neg()),
        (UnOp::Not, Value::Bool(v)) => Value::Bool(!v),
        (UnOp::Not, Value::I32(v)) => Value::I32(!v),
        (UnOp::Not, Value::U32(v)) => Value::U32(!v),
        _ => return Err(EvalError::Types),
    })
}

/// Applies a binary operator (`&&`/`||` here are the non-short-circuit
/// combination of two already-evaluated booleans).
pub fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, EvalError> {
    use BinOp::*;
    use Value::*;
    if op.is_comparison() {
        let r = match (a, b) {
            (F32(x), F32(y)) => cmp(op, x.partial_cmp(&y)),
            (I32(x), I32(y)) => cmp(op, Some(x.cmp(&y))),
            (U32(x), U32(y)) => cmp(op, Some(x.cmp(&y))),
            (Bool(x), Bool(y)) => cmp(op, Some(x.cmp(&y))),
            _ => return Err(EvalError::Types),
        };
        return Ok(Bool(r));
    }
    Ok(match (a, b) {
        (F32(x), F32(y)) => F32(match op {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div => x / y,
            Rem => x % y,
            _ => return Err(EvalError::Types),
        }),
        (I32(x), I32(y)) => I32(match op {
            Add => x.wrapping_add(y),
            Sub => x.wrapping_sub(y),
            Mul => x.wrapping_mul(y),
            Div => {
                if y == 0 {
                    return Err(EvalError::DivByZero);
                }
                x.wrapping_div(y)
            }
            Rem => {
                if y == 0 {
                    return Err(EvalError::DivByZero);
                }
                x.wrapping_rem(y)
            }
            BitAnd => x & y,
            BitOr => x | y,
            BitXor => x ^ y,
            Shl => x.wrapping_shl(y as u32),
            Shr => x.wrapping_shr(y as u32),
            _ => return Err(EvalError::Types),
        }),
        (U32(x), U32(y)) => U32(match op {
            Add => x.wrapping_add(y),
            Sub => x.wrapping_sub(y),
            Mul => x.wrapping_mul(y),
            Div => x.checked_div(y).ok_or(EvalError::DivByZero)?,
            Rem => x.checked_rem(y).ok_or(EvalError::DivByZero)?,
            BitAnd => x & y,
            BitOr => x | y,
            BitXor => x ^ y,
            Shl => x.wrapping_shl(y),
            Shr => x.wrapping_shr(y),
            _ => return Err(EvalError::Types),
        }),
        // Shift amounts may be of the other integer type.
        (I32(x), U32(y)) if matches!(op, Shl | Shr) => I32(if op == Shl {
            x.wrapping_shl(y)
        } else {
            x.wrapping_shr(y)
        }),
        (U32(x), I32(y)) if matches!(op, Shl | Shr) => U32(if op == Shl {
            x.wrapping_shl(y as u32)
        } else {
            x.wrapping_shr(y as u32)
        }),
        (Bool(x), Bool(y)) => Bool(match op {
            And | BitAnd => x && y,
            Or | BitOr => x || y,
            BitXor => x ^ y,
            _ => return Err(EvalError::Types),
        }),
        _ => return Err(EvalError::Types),
    })
}

fn cmp(op: BinOp, o: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::*;
    match (op, o) {
        (BinOp::Ne, None) => true,
        (_, None) => false,
        (BinOp::Eq, Some(o)) => o == Equal,
        (BinOp::Ne, Some(o)) => o != Equal,
        (BinOp::Lt, Some(o)) => o == Less,
        (BinOp::Le, Some(o)) => o != Greater,
        (BinOp::Gt, Some(o)) => o == Greater,
        (BinOp::Ge, Some(o)) => o != Less,
        _ => false,
    }
}

/// Converts with Rust `as` semantics (float to int saturates, NaN to 0).
pub fn cast(a: Value, to: Scalar) -> Value {
    match (a, to) {
        (Value::F32(v), Scalar::F32) => Value::F32(v),
        (Value::F32(v), Scalar::I32) => Value::I32(v as i32),
        (Value::F32(v), Scalar::U32) => Value::U32(v as u32),
        (Value::I32(v), Scalar::F32) => Value::F32(v as f32),
        (Value::I32(v), Scalar::I32) => Value::I32(v),
        (Value::I32(v), Scalar::U32) => Value::U32(v as u32),
        (Value::U32(v), Scalar::F32) => Value::F32(v as f32),
        (Value::U32(v), Scalar::I32) => Value::I32(v as i32),
        (Value::U32(v), Scalar::U32) => Value::U32(v),
        (Value::Bool(v), Scalar::F32) => Value::F32(v as u32 as f32),
        (Value::Bool(v), Scalar::I32) => Value::I32(v as i32),
        (Value::Bool(v), Scalar::U32) => Value::U32(v as u32),
        (v, Scalar::Bool) => Value::Bool(v.to_bits() != 0),
    }
}

/// Reads `a`'s 32 bits as a value of type `to` (`f32::to_bits`,
/// `f32::from_bits`).
pub fn bitcast(a: Value, to: Scalar) -> Value {
    Value::from_bits(to, a.to_bits())
}

/// Applies a math intrinsic.
pub fn math(f: MathFn, args: &[Value]) -> Result<Value, EvalError> {
    use Value::*;
    Ok(match (f, args) {
        (MathFn::Exp, [F32(x)]) => F32(x.exp()),
        (MathFn::Log, [F32(x)]) => F32(x.ln()),
        (MathFn::Sqrt, [F32(x)]) => F32(x.sqrt()),
        (MathFn::Rsqrt, [F32(x)]) => F32(1.0 / x.sqrt()),
        (MathFn::Tanh, [F32(x)]) => F32(x.tanh()),
        (MathFn::Floor, [F32(x)]) => F32(x.floor()),
        (MathFn::Ceil, [F32(x)]) => F32(x.ceil()),
        (MathFn::Sin, [F32(x)]) => F32(x.sin()),
        (MathFn::Cos, [F32(x)]) => F32(x.cos()),
        (MathFn::Exp2, [F32(x)]) => F32(x.exp2()),
        (MathFn::Log2, [F32(x)]) => F32(x.log2()),
        (MathFn::Pow, [F32(x), F32(y)]) => F32(x.powf(*y)),
        (MathFn::Erf, [F32(x)]) => F32(crate::erf::erf_f32(*x)),
        (MathFn::CountOnes, [I32(x)]) => U32(x.count_ones()),
        (MathFn::CountOnes, [U32(x)]) => U32(x.count_ones()),
        (MathFn::LeadingZeros, [I32(x)]) => U32(x.leading_zeros()),
        (MathFn::LeadingZeros, [U32(x)]) => U32(x.leading_zeros()),
        (MathFn::TrailingZeros, [I32(x)]) => U32(x.trailing_zeros()),
        (MathFn::TrailingZeros, [U32(x)]) => U32(x.trailing_zeros()),
        (MathFn::Abs, [F32(x)]) => F32(x.abs()),
        (MathFn::Abs, [I32(x)]) => I32(x.wrapping_abs()),
        (MathFn::Fma, [F32(a), F32(b), F32(c)]) => F32(a.mul_add(*b, *c)),
        (MathFn::Min, [F32(a), F32(b)]) => F32(a.min(*b)),
        (MathFn::Max, [F32(a), F32(b)]) => F32(a.max(*b)),
        (MathFn::Min, [I32(a), I32(b)]) => I32(*a.min(b)),
        (MathFn::Max, [I32(a), I32(b)]) => I32(*a.max(b)),
        (MathFn::Min, [U32(a), U32(b)]) => U32(*a.min(b)),
        (MathFn::Max, [U32(a), U32(b)]) => U32(*a.max(b)),
        _ => return Err(EvalError::Types),
    })
}

/// The result type of a math intrinsic on arguments of type `arg`, if allowed.
pub fn math_type(f: MathFn, arg: Scalar) -> Option<Scalar> {
    match f {
        // Rust's bit counts are u32 whatever the integer.
        MathFn::CountOnes | MathFn::LeadingZeros | MathFn::TrailingZeros => {
            arg.is_int().then_some(Scalar::U32)
        }
        MathFn::Abs if matches!(arg, Scalar::F32 | Scalar::I32) => Some(arg),
        MathFn::Min | MathFn::Max if arg.is_numeric() => Some(arg),
        MathFn::Abs | MathFn::Min | MathFn::Max => None,
        _ if arg == Scalar::F32 => Some(Scalar::F32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps() {
        assert_eq!(
            binary(BinOp::Add, Value::U32(u32::MAX), Value::U32(2)),
            Ok(Value::U32(1))
        );
        assert_eq!(
            binary(BinOp::Sub, Value::I32(i32::MIN), Value::I32(1)),
            Ok(Value::I32(i32::MAX))
        );
    }

    #[test]
    fn division_by_zero_is_reported() {
        assert_eq!(
            binary(BinOp::Div, Value::U32(1), Value::U32(0)),
            Err(EvalError::DivByZero)
        );
        assert_eq!(
            binary(BinOp::Div, Value::F32(1.0), Value::F32(0.0)),
            Ok(Value::F32(f32::INFINITY))
        );
    }

    #[test]
    fn nan_compares_unequal() {
        let n = Value::F32(f32::NAN);
        assert_eq!(binary(BinOp::Eq, n, n), Ok(Value::Bool(false)));
        assert_eq!(binary(BinOp::Ne, n, n), Ok(Value::Bool(true)));
    }

    #[test]
    fn bit_counts_are_u32_and_count_32_for_zero() {
        use MathFn::*;
        let m = |f, v| math(f, &[v]).unwrap();
        assert_eq!(m(CountOnes, Value::I32(-1)), Value::U32(32));
        assert_eq!(m(LeadingZeros, Value::U32(0)), Value::U32(32));
        assert_eq!(m(LeadingZeros, Value::I32(1)), Value::U32(31));
        assert_eq!(m(TrailingZeros, Value::U32(0)), Value::U32(32));
        assert_eq!(m(TrailingZeros, Value::U32(8)), Value::U32(3));
        assert_eq!(math_type(CountOnes, Scalar::I32), Some(Scalar::U32));
        assert_eq!(math_type(CountOnes, Scalar::F32), None);
        assert_eq!(math_type(Sin, Scalar::U32), None);
    }

    #[test]
    fn pow_has_rusts_special_cases() {
        let p = |x: f32, y: f32| match math(MathFn::Pow, &[Value::F32(x), Value::F32(y)]) {
            Ok(Value::F32(r)) => r,
            other => panic!("pow gave {other:?}"),
        };
        assert_eq!(p(2.0, 10.0), 1024.0);
        assert_eq!(p(9.0, 0.5), 3.0);
        assert_eq!(p(-2.0, 3.0), -8.0);
        assert_eq!(p(0.0, 0.0), 1.0);
        assert_eq!(p(f32::NAN, 0.0), 1.0);
        assert_eq!(p(1.0, f32::NAN), 1.0);
        assert!(p(-8.0, 1.0 / 3.0).is_nan());
        assert_eq!(p(0.0, -1.0), f32::INFINITY);
        assert_eq!(p(-0.0, -1.0), f32::NEG_INFINITY);
        assert_eq!(math_type(MathFn::Pow, Scalar::F32), Some(Scalar::F32));
        assert_eq!(math_type(MathFn::Pow, Scalar::I32), None);
        assert_eq!(math_type(MathFn::Erf, Scalar::U32), None);
    }

    #[test]
    fn casts_follow_rust() {
        assert_eq!(cast(Value::F32(-1.5), Scalar::U32), Value::U32(0));
        assert_eq!(cast(Value::F32(3.9), Scalar::I32), Value::I32(3));
        assert_eq!(cast(Value::I32(-1), Scalar::U32), Value::U32(u32::MAX));
    }
}
