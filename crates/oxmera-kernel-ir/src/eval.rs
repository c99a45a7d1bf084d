//! Scalar semantics of the language: the one definition of what each operator
//! computes. The analysis folds launch-determined values with it and the
//! simulator's vectorized operations are tested against it.

use crate::half;
use crate::ir::{BinOp, MathFn, Scalar, UnOp, Value};

/// Why a scalar operation has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalError {
    /// Integer division or remainder by zero.
    DivByZero,
    /// Operand types the operator does not accept (a validator bug if seen).
    Types,
}

/// An `f32` result rounded to the half type `ty` (which is `F16` or
/// `BF16`); every half operation ends here (see [`crate::half`]).
fn half(ty: Scalar, x: f32) -> Value {
    match ty {
        Scalar::F16 => Value::F16(half::f16_from_f32(x)),
        _ => Value::BF16(half::bf16_from_f32(x)),
    }
}

/// Applies a unary operator.
pub fn unary(op: UnOp, a: Value) -> Result<Value, EvalError> {
    use Value::*;
    Ok(match (op, a) {
        (UnOp::Neg, F32(v)) => F32(-v),
        (UnOp::Neg, F64(v)) => F64(-v),
        // Negating a half flips its sign bit: exact, no rounding.
        (UnOp::Neg, F16(b)) => F16(b ^ 0x8000),
        (UnOp::Neg, BF16(b)) => BF16(b ^ 0x8000),
        (UnOp::Neg, I32(v)) => I32(v.wrapping_neg()),
        (UnOp::Neg, I64(v)) => I64(v.wrapping_neg()),
        (UnOp::Not, Bool(v)) => Bool(!v),
        (UnOp::Not, I32(v)) => I32(!v),
        (UnOp::Not, U32(v)) => U32(!v),
        (UnOp::Not, I64(v)) => I64(!v),
        (UnOp::Not, U64(v)) => U64(!v),
        (UnOp::Not, U8(v)) => U8(!v),
        (UnOp::Not, U16(v)) => U16(!v),
        _ => return Err(EvalError::Types),
    })
}

/// Integer arithmetic on one Rust integer type: wrapping, with division
/// and remainder by zero reported, and `MIN / -1` wrapping to `MIN` (its
/// remainder 0) as `wrapping_div`/`wrapping_rem` define.
macro_rules! int_binary {
    ($op:expr, $x:expr, $y:expr, $ctor:path) => {{
        let (x, y) = ($x, $y);
        $ctor(match $op {
            Add => x.wrapping_add(y),
            Sub => x.wrapping_sub(y),
            Mul => x.wrapping_mul(y),
            Div | Rem if y == 0 => return Err(EvalError::DivByZero),
            Div => x.wrapping_div(y),
            Rem => x.wrapping_rem(y),
            BitAnd => x & y,
            BitOr => x | y,
            BitXor => x ^ y,
            _ => return Err(EvalError::Types),
        })
    }};
}

/// Float arithmetic on one Rust float type.
macro_rules! float_binary {
    ($op:expr, $x:expr, $y:expr) => {{
        let (x, y) = ($x, $y);
        match $op {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div => x / y,
            Rem => x % y,
            _ => return Err(EvalError::Types),
        }
    }};
}

/// `x << n` or `x >> n` on an integer value, the amount taken modulo the
/// width as Rust's `wrapping_shl`/`wrapping_shr` do; `>>` is arithmetic on
/// signed types.
fn shift(op: BinOp, x: Value, n: u32) -> Result<Value, EvalError> {
    use Value::*;
    let left = op == BinOp::Shl;
    macro_rules! sh {
        ($v:expr, $ctor:path) => {
            $ctor(if left {
                $v.wrapping_shl(n)
            } else {
                $v.wrapping_shr(n)
            })
        };
    }
    Ok(match x {
        I32(v) => sh!(v, I32),
        U32(v) => sh!(v, U32),
        I64(v) => sh!(v, I64),
        U64(v) => sh!(v, U64),
        U8(v) => sh!(v, U8),
        U16(v) => sh!(v, U16),
        _ => return Err(EvalError::Types),
    })
}

/// Applies a binary operator (`&&`/`||` here are the non-short-circuit
/// combination of two already-evaluated booleans).
pub fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, EvalError> {
    use BinOp::*;
    use Value::*;
    if matches!(op, Shl | Shr) {
        // The amount may be of any integer type; only its value counts.
        let n = match b {
            I32(v) => v as u32,
            U32(v) => v,
            I64(v) => v as u32,
            U64(v) => v as u32,
            U8(v) => v as u32,
            U16(v) => v as u32,
            _ => return Err(EvalError::Types),
        };
        return shift(op, a, n);
    }
    if op.is_comparison() {
        let r = match (a, b) {
            (I32(x), I32(y)) => cmp(op, Some(x.cmp(&y))),
            (U32(x), U32(y)) => cmp(op, Some(x.cmp(&y))),
            (I64(x), I64(y)) => cmp(op, Some(x.cmp(&y))),
            (U64(x), U64(y)) => cmp(op, Some(x.cmp(&y))),
            (U8(x), U8(y)) => cmp(op, Some(x.cmp(&y))),
            (U16(x), U16(y)) => cmp(op, Some(x.cmp(&y))),
            (Bool(x), Bool(y)) => cmp(op, Some(x.cmp(&y))),
            (F64(x), F64(y)) => cmp(op, x.partial_cmp(&y)),
            (x, y) if x.ty() == y.ty() && x.ty().is_float() => {
                // f32 and the halves, which widen to f32 exactly.
                let (x, y) = (x.as_f32().unwrap_or(0.0), y.as_f32().unwrap_or(0.0));
                cmp(op, x.partial_cmp(&y))
            }
            _ => return Err(EvalError::Types),
        };
        return Ok(Bool(r));
    }
    Ok(match (a, b) {
        (F32(x), F32(y)) => F32(float_binary!(op, x, y)),
        (F64(x), F64(y)) => F64(float_binary!(op, x, y)),
        (F16(_), F16(_)) | (BF16(_), BF16(_)) => {
            let (x, y) = (a.as_f32().unwrap_or(0.0), b.as_f32().unwrap_or(0.0));
            half(a.ty(), float_binary!(op, x, y))
        }
        (I32(x), I32(y)) => int_binary!(op, x, y, I32),
        (U32(x), U32(y)) => int_binary!(op, x, y, U32),
        (I64(x), I64(y)) => int_binary!(op, x, y, I64),
        (U64(x), U64(y)) => int_binary!(op, x, y, U64),
        (U8(x), U8(y)) => int_binary!(op, x, y, U8),
        (U16(x), U16(y)) => int_binary!(op, x, y, U16),
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

/// Converts with Rust `as` semantics: integers truncate or extend (sign-
/// extending signed sources), float to integer saturates (NaN to 0),
/// integer to float rounds to nearest, `bool` gives 0 or 1. A conversion
/// to `f16`/`bf16` goes through `f32`: `x as f16` is `(x as f32) as f16`,
/// one rounding for every source whose `f32` conversion is exact, two for
/// `f64` and large integers, which may then differ from a direct rounding
/// by an ulp at a tie (every target converts the same way). A half
/// widens to `f32` exactly, so `h as T` is `(h as f32) as T`.
pub fn cast(a: Value, to: Scalar) -> Value {
    use Value::*;
    if to == Scalar::Bool {
        return Bool(a.to_bits() != 0);
    }
    if to.is_half() {
        let x = match a {
            F32(v) => v,
            F64(v) => v as f32,
            F16(_) | BF16(_) => a.as_f32().unwrap_or(0.0),
            _ => match cast(a, Scalar::F32) {
                F32(v) => v,
                _ => 0.0,
            },
        };
        return half(to, x);
    }
    // Every other source is read as i128 (integers, exactly), f64 (floats,
    // exactly: a half or an f32 widens without loss) and converted from there.
    let wide_int: Option<i128> = match a {
        I32(v) => Some(v as i128),
        U32(v) => Some(v as i128),
        I64(v) => Some(v as i128),
        U64(v) => Some(v as i128),
        U8(v) => Some(v as i128),
        U16(v) => Some(v as i128),
        Bool(v) => Some(v as i128),
        _ => None,
    };
    if let Some(i) = wide_int {
        return match to {
            Scalar::I32 => I32(i as i32),
            Scalar::U32 => U32(i as u32),
            Scalar::I64 => I64(i as i64),
            Scalar::U64 => U64(i as u64),
            Scalar::U8 => U8(i as u8),
            Scalar::U16 => U16(i as u16),
            // Rust rounds an integer to a float once, to nearest: through
            // the source's own type, never through another float.
            Scalar::F32 => F32(match a {
                I64(v) => v as f32,
                U64(v) => v as f32,
                _ => i as i64 as f32,
            }),
            _ => F64(match a {
                I64(v) => v as f64,
                U64(v) => v as f64,
                _ => i as i64 as f64,
            }),
        };
    }
    let x = match a {
        F32(v) => v as f64,
        F64(v) => v,
        _ => a.as_f32().unwrap_or(0.0) as f64,
    };
    match (a, to) {
        // f32 → f32 and f64 → f32 round once, as Rust does.
        (F64(v), Scalar::F32) => F32(v as f32),
        (_, Scalar::F32) => F32(x as f32),
        (_, Scalar::F64) => F64(x),
        // Float to integer saturates in Rust; from f64 that equals the
        // conversion of the narrower float exactly.
        (_, Scalar::I32) => I32(x as i32),
        (_, Scalar::U32) => U32(x as u32),
        (_, Scalar::I64) => I64(x as i64),
        (_, Scalar::U64) => U64(x as u64),
        (_, Scalar::U8) => U8(x as u8),
        (_, Scalar::U16) => U16(x as u16),
        _ => a,
    }
}

/// Reads `a`'s bits as a value of type `to` of the same width
/// (`f32::to_bits`, `f64::from_bits`, ...).
pub fn bitcast(a: Value, to: Scalar) -> Value {
    Value::from_bits(to, a.to_bits())
}

/// A float math function on `f32`, `f64` or a half (computed in `f32`,
/// rounded once).
fn float_math(f: MathFn, args: &[Value]) -> Result<Value, EvalError> {
    use Value::*;
    macro_rules! on {
        ($x:expr) => {{
            let x = $x;
            match f {
                MathFn::Exp => x.exp(),
                MathFn::Log => x.ln(),
                MathFn::Sqrt => x.sqrt(),
                MathFn::Rsqrt => 1.0 / x.sqrt(),
                MathFn::Tanh => x.tanh(),
                MathFn::Floor => x.floor(),
                MathFn::Ceil => x.ceil(),
                MathFn::Sin => x.sin(),
                MathFn::Cos => x.cos(),
                MathFn::Exp2 => x.exp2(),
                MathFn::Log2 => x.log2(),
                MathFn::Abs => x.abs(),
                _ => return Err(EvalError::Types),
            }
        }};
    }
    let ty = args[0].ty();
    if args.iter().any(|a| a.ty() != ty) {
        return Err(EvalError::Types);
    }
    match (f, args) {
        (MathFn::Fma, [F64(a), F64(b), F64(c)]) => return Ok(F64(a.mul_add(*b, *c))),
        (MathFn::Pow, [F64(x), F64(y)]) => return Ok(F64(x.powf(*y))),
        // No f64 erf yet (`math_type` refuses it).
        (MathFn::Erf, [F64(_)]) => return Err(EvalError::Types),
        (MathFn::Min, [F64(a), F64(b)]) => return Ok(F64(a.min(*b))),
        (MathFn::Max, [F64(a), F64(b)]) => return Ok(F64(a.max(*b))),
        (_, [F64(x)]) => return Ok(F64(on!(*x))),
        _ => {}
    }
    let x: Vec<f32> = args.iter().map(|a| a.as_f32().unwrap_or(0.0)).collect();
    let r = match (f, x.as_slice()) {
        (MathFn::Fma, [a, b, c]) => a.mul_add(*b, *c),
        (MathFn::Min, [a, b]) => a.min(*b),
        (MathFn::Max, [a, b]) => a.max(*b),
        (MathFn::Pow, [x, y]) => x.powf(*y),
        (MathFn::Erf, [x]) => crate::erf::erf_f32(*x),
        (_, [x]) => on!(*x),
        _ => return Err(EvalError::Types),
    };
    Ok(match ty {
        Scalar::F32 => F32(r),
        _ => half(ty, r),
    })
}

/// Applies a math intrinsic.
pub fn math(f: MathFn, args: &[Value]) -> Result<Value, EvalError> {
    use Value::*;
    if args.first().is_some_and(|a| a.ty().is_float()) {
        return float_math(f, args);
    }
    macro_rules! bits {
        ($x:expr) => {
            U32(match f {
                MathFn::CountOnes => $x.count_ones(),
                MathFn::LeadingZeros => $x.leading_zeros(),
                _ => $x.trailing_zeros(),
            })
        };
    }
    macro_rules! minmax {
        ($a:expr, $b:expr, $ctor:path) => {
            $ctor(if f == MathFn::Min {
                *$a.min($b)
            } else {
                *$a.max($b)
            })
        };
    }
    Ok(match (f, args) {
        (MathFn::CountOnes | MathFn::LeadingZeros | MathFn::TrailingZeros, [x]) => match x {
            I32(x) => bits!(x),
            U32(x) => bits!(x),
            I64(x) => bits!(x),
            U64(x) => bits!(x),
            U8(x) => bits!(x),
            U16(x) => bits!(x),
            _ => return Err(EvalError::Types),
        },
        (MathFn::Abs, [I32(x)]) => I32(x.wrapping_abs()),
        (MathFn::Abs, [I64(x)]) => I64(x.wrapping_abs()),
        (MathFn::Min | MathFn::Max, [a, b]) => match (a, b) {
            (I32(a), I32(b)) => minmax!(a, b, I32),
            (U32(a), U32(b)) => minmax!(a, b, U32),
            (I64(a), I64(b)) => minmax!(a, b, I64),
            (U64(a), U64(b)) => minmax!(a, b, U64),
            (U8(a), U8(b)) => minmax!(a, b, U8),
            (U16(a), U16(b)) => minmax!(a, b, U16),
            _ => return Err(EvalError::Types),
        },
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
        MathFn::Abs => arg.is_signed().then_some(arg),
        MathFn::Min | MathFn::Max => arg.is_numeric().then_some(arg),
        // erf is computed from f32 (`crate::erf`): f32 and the halves.
        MathFn::Erf => (arg.is_float() && arg != Scalar::F64).then_some(arg),
        _ => arg.is_float().then_some(arg),
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
