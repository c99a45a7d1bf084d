//! Elementwise operations: unary, binary, comparisons and `where`.
//!
//! Each op reads its operands in logical order (the front end has already
//! broadcast them to one shape as stride-0 views), applies a scalar
//! function to each element — in `f64` for float dtypes, in `i64` for
//! integer and bool dtypes — and stores the result once. The scalar
//! functions below *are* the definition of each op's semantics; the front
//! end's doc comments describe them.
//!
//! The front end never sends a dtype an op is not defined for; should a
//! caller of the backend do so anyway, the answer is a typed
//! [`Error::UnsupportedDType`], not a panic.

pub(crate) mod erf;

use oxmera_core::{DType, Error, Result};
use oxmera_tensor::{BinaryOp, CmpOp, SELU_ALPHA, SELU_SCALE, Storage, Tensor, UnaryOp};

use crate::read;

pub(crate) fn unary(op: UnaryOp, x: &Tensor) -> Result<Storage> {
    let dtype = x.dtype();
    if dtype.is_float() {
        let f = float_unary(op).ok_or_else(|| unsupported(op.name(), dtype))?;
        let values = read::f64s(x)?.into_iter().map(f).collect();
        Ok(read::store_f64(dtype, values))
    } else {
        let f = int_unary(op, dtype).ok_or_else(|| unsupported(op.name(), dtype))?;
        let values = read::i64s(x)?.into_iter().map(f).collect();
        Ok(read::store_i64(dtype, values))
    }
}

pub(crate) fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
    debug_assert_eq!(a.dims(), b.dims(), "{}: operands not broadcast", op.name());
    let dtype = a.dtype();
    if dtype.is_float() {
        let f = float_binary(op).ok_or_else(|| unsupported(op.name(), dtype))?;
        let values = zip_with(read::f64s(a)?, read::f64s(b)?, f);
        Ok(read::store_f64(dtype, values))
    } else {
        let f = int_binary(op, dtype).ok_or_else(|| unsupported(op.name(), dtype))?;
        let values = zip_with(read::i64s(a)?, read::i64s(b)?, f);
        Ok(read::store_i64(dtype, values))
    }
}

pub(crate) fn compare(op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
    debug_assert_eq!(a.dims(), b.dims(), "{}: operands not broadcast", op.name());
    // Widening to f64 is exact for every float dtype, and i64 holds every
    // integer and bool exactly, so comparing the widened values is exact.
    let truth: Vec<bool> = if a.dtype().is_float() {
        zip_with(read::f64s(a)?, read::f64s(b)?, |x, y| holds(op, x, y))
    } else {
        zip_with(read::i64s(a)?, read::i64s(b)?, |x, y| holds(op, x, y))
    };
    Ok(read::store_i64(
        DType::Bool,
        truth.into_iter().map(i64::from).collect(),
    ))
}

pub(crate) fn where_cond(cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Storage> {
    debug_assert!(cond.dims() == a.dims() && a.dims() == b.dims());
    let take_a = read::bools(cond)?;
    if a.dtype().is_float() {
        let values = select(take_a, read::f64s(a)?, read::f64s(b)?);
        Ok(read::store_f64(a.dtype(), values))
    } else {
        let values = select(take_a, read::i64s(a)?, read::i64s(b)?);
        Ok(read::store_i64(a.dtype(), values))
    }
}

/// `a[i]` where `take_a[i]`, else `b[i]`.
fn select<T>(take_a: Vec<bool>, a: Vec<T>, b: Vec<T>) -> Vec<T> {
    let pairs = a.into_iter().zip(b);
    take_a
        .into_iter()
        .zip(pairs)
        .map(|(c, (x, y))| if c { x } else { y })
        .collect()
}

fn unsupported(op: &'static str, dtype: DType) -> Error {
    Error::UnsupportedDType {
        op,
        dtype,
        hint: "",
    }
}

fn zip_with<T, U>(a: Vec<T>, b: Vec<T>, f: impl Fn(T, T) -> U) -> Vec<U> {
    a.into_iter().zip(b).map(|(x, y)| f(x, y)).collect()
}

fn holds<T: PartialOrd>(op: CmpOp, x: T, y: T) -> bool {
    match op {
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
    }
}

// ---------------------------------------------------------------------------
// Floats, computed in f64.

/// The `f64` function of a unary op, or `None` where it has no float form.
fn float_unary(op: UnaryOp) -> Option<Box<dyn Fn(f64) -> f64>> {
    use UnaryOp::*;
    Some(match op {
        Neg => Box::new(|x: f64| -x),
        Abs => Box::new(f64::abs),
        Sign => Box::new(sign),
        Exp => Box::new(f64::exp),
        Log => Box::new(f64::ln),
        Log1p => Box::new(f64::ln_1p),
        Sqrt => Box::new(f64::sqrt),
        Rsqrt => Box::new(|x: f64| 1.0 / x.sqrt()),
        Recip => Box::new(|x: f64| 1.0 / x),
        Square => Box::new(|x: f64| x * x),
        Sin => Box::new(f64::sin),
        Cos => Box::new(f64::cos),
        Tanh => Box::new(f64::tanh),
        Sigmoid => Box::new(sigmoid),
        Relu => Box::new(relu),
        LeakyRelu(slope) => Box::new(move |x: f64| if x > 0.0 { x } else { slope * x }),
        GeluErf => Box::new(gelu_erf),
        GeluTanh => Box::new(gelu_tanh),
        Silu => Box::new(silu),
        Softplus => Box::new(softplus),
        Erf => Box::new(erf::erf),
        Floor => Box::new(f64::floor),
        Ceil => Box::new(f64::ceil),
        Round => Box::new(f64::round_ties_even),
        Clamp { min, max } => Box::new(move |x| clamp_f64(x, min, max)),
        Powf(exponent) => Box::new(move |x: f64| x.powf(exponent)),
        Not => return None,
        Expm1 => Box::new(f64::exp_m1),
        Log2 => Box::new(f64::log2),
        Log10 => Box::new(f64::log10),
        Exp2 => Box::new(f64::exp2),
        Tan => Box::new(f64::tan),
        Atan => Box::new(f64::atan),
        Asin => Box::new(f64::asin),
        Acos => Box::new(f64::acos),
        Sinh => Box::new(f64::sinh),
        Cosh => Box::new(f64::cosh),
        Trunc => Box::new(f64::trunc),
        Elu(alpha) => Box::new(move |x| elu(x, alpha)),
        Selu => Box::new(selu),
        Mish => Box::new(mish),
        Hardtanh { min, max } => Box::new(move |x| clamp_f64(x, Some(min), Some(max))),
        Hardsigmoid => Box::new(hardsigmoid),
        Hardswish => Box::new(hardswish),
        Logsigmoid => Box::new(logsigmoid),
    })
}

/// `x` for `x > 0`, else `alpha · (e^x - 1)` through `expm1` (exact near
/// 0; `-alpha` at `-inf`).
pub fn elu(x: f64, alpha: f64) -> f64 {
    if x > 0.0 { x } else { alpha * x.exp_m1() }
}

/// `SCALE · elu(x, ALPHA)`.
pub fn selu(x: f64) -> f64 {
    SELU_SCALE * elu(x, SELU_ALPHA)
}

/// `x · tanh(softplus(x))`, with the limit 0 at `x = -inf`.
pub fn mish(x: f64) -> f64 {
    times_gate(x, softplus(x).tanh())
}

/// 0 at and below -3, 1 at and above 3, `x/6 + 1/2` between; NaN kept.
pub fn hardsigmoid(x: f64) -> f64 {
    if x <= -3.0 {
        0.0
    } else if x >= 3.0 {
        1.0
    } else {
        x / 6.0 + 0.5
    }
}

/// 0 at and below -3 (the limit at `-inf` too, where PyTorch's
/// `x · relu6(x + 3) / 6` gives `-inf · 0 = NaN`), `x` at and above 3,
/// `x (x + 3) / 6` between; NaN kept.
pub fn hardswish(x: f64) -> f64 {
    if x <= -3.0 {
        0.0
    } else if x >= 3.0 {
        x
    } else {
        x * (x + 3.0) / 6.0
    }
}

/// `ln σ(x) = -softplus(-x)`: no overflow, and the tail `-e^-x` kept for
/// large `x`.
pub fn logsigmoid(x: f64) -> f64 {
    -softplus(-x)
}

/// -1, 0 or 1; both zeros give +0 and NaN gives NaN.
fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else if x.is_nan() {
        x
    } else {
        0.0
    }
}

/// `max(x, 0)` that keeps NaN and maps -0 to +0.
fn relu(x: f64) -> f64 {
    if x > 0.0 || x.is_nan() { x } else { 0.0 }
}

/// `1 / (1 + e^-x)`, never forming `e^t` for a large positive `t`.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `x · sigmoid(x)`, with the limit 0 at `x = -inf`.
pub fn silu(x: f64) -> f64 {
    times_gate(x, sigmoid(x))
}

/// `x * gate` for a gate in [0, 1] that tends to 0 as `x` tends to -inf:
/// the product's limit there is 0, where `-inf * 0` would be NaN.
fn times_gate(x: f64, gate: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        -0.0
    } else {
        x * gate
    }
}

/// `x Φ(x)`, with `Φ(x) = erfc(-x/√2) / 2` (accurate where Φ is tiny).
///
/// erfc's relative sensitivity to its argument grows like `2t²`, so the
/// rounding of `t = -x/√2` alone would cost up to ~1e-13 relative in the
/// far tail. `t` is therefore carried in two parts, `t + t_lo`, and
/// `erfc(t + t_lo) ≈ erfc(t) - t_lo · 2/√π · e^(-t²)`; the measured
/// relative error is then below 7e-16 on `[-37, 3]`.
pub fn gelu_erf(x: f64) -> f64 {
    use std::f64::consts::{FRAC_1_SQRT_2, FRAC_2_SQRT_PI};
    // 1/√2 - FRAC_1_SQRT_2, the part of 1/√2 that f64 cannot hold.
    const FRAC_1_SQRT_2_LO: f64 = -4.833_646_656_726_457e-17;
    if !x.is_finite() {
        return times_gate(x, if x > 0.0 { 1.0 } else { 0.0 });
    }
    let t = -x * FRAC_1_SQRT_2;
    let mut erfc = erf::erfc(t);
    // Beyond |t| = 27, erfc is 0 or 2 to f64 precision; no correction.
    if t.abs() < 27.0 {
        let t_lo = (-x).mul_add(FRAC_1_SQRT_2, -t) + -x * FRAC_1_SQRT_2_LO;
        erfc -= t_lo * FRAC_2_SQRT_PI * erf::exp_neg_square(t);
    }
    times_gate(x, 0.5 * erfc)
}

/// `x/2 (1 + tanh(z))` with `z = √(2/π)(x + 0.044715 x³)`, evaluated as
/// `x · sigmoid(2z)` — the same function, without the cancellation in
/// `1 + tanh(z)` for negative `z`.
pub fn gelu_tanh(x: f64) -> f64 {
    const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
    let z = SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x);
    times_gate(x, sigmoid(2.0 * z))
}

/// `ln(1 + e^x)` as `max(x, 0) + ln(1 + e^-|x|)`, which cannot overflow.
pub fn softplus(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// `min(max(x, min), max)` with NaN kept (so `min > max` gives `max`).
pub fn clamp_f64(x: f64, min: Option<f64>, max: Option<f64>) -> f64 {
    let mut y = x;
    if let Some(lo) = min {
        if y < lo {
            y = lo;
        }
    }
    if let Some(hi) = max {
        if y > hi {
            y = hi;
        }
    }
    y
}

/// The `f64` function of a binary op, or `None` where it has no float form.
fn float_binary(op: BinaryOp) -> Option<fn(f64, f64) -> f64> {
    use BinaryOp::*;
    Some(match op {
        Add => |a, b| a + b,
        Sub => |a, b| a - b,
        Mul => |a, b| a * b,
        Div => |a, b| a / b,
        Pow => f64::powf,
        Maximum => maximum_f64,
        Minimum => minimum_f64,
        Rem => rem_f64,
        // Rust's `%` on floats is C's fmod: exact, the dividend's sign.
        Fmod => |a, b| a % b,
        Atan2 => f64::atan2,
        Hypot => f64::hypot,
        And | Or | Xor => return None,
    })
}

/// IEEE 754-2019 `maximum`: NaN wins, and +0 is above -0.
fn maximum_f64(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        // Equal values differ at most in the sign of zero.
        if a.is_sign_negative() { b } else { a }
    } else if a > b {
        a
    } else {
        b
    }
}

/// IEEE 754-2019 `minimum`: NaN wins, and -0 is below +0.
fn minimum_f64(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        if a.is_sign_negative() { a } else { b }
    } else if a < b {
        a
    } else {
        b
    }
}

/// The remainder with the divisor's sign (Python's `%`): the exact `fmod`
/// (Rust's `%`), moved into the divisor's half-line when the signs differ.
pub fn rem_f64(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r == 0.0 {
        0.0f64.copysign(b)
    } else if (r < 0.0) != (b < 0.0) {
        r + b
    } else {
        r
    }
}

// ---------------------------------------------------------------------------
// Integers (and bool), computed in i64 and wrapped into the dtype on store.

/// The inclusive range of an integer or bool dtype, as `i64`.
fn int_range(dtype: DType) -> (i64, i64) {
    match dtype {
        DType::I32 => (i32::MIN.into(), i32::MAX.into()),
        DType::U8 => (0, 255),
        DType::Bool => (0, 1),
        _ => (i64::MIN, i64::MAX),
    }
}

/// The `i64` function of a unary op on an integer or bool dtype, or `None`
/// where it has no meaning there.
fn int_unary(op: UnaryOp, dtype: DType) -> Option<Box<dyn Fn(i64) -> i64>> {
    use UnaryOp::*;
    if dtype.is_bool() {
        return match op {
            Not => Some(Box::new(|x| 1 - x)),
            _ => None,
        };
    }
    Some(match op {
        Neg if dtype.is_signed() => Box::new(i64::wrapping_neg),
        Abs => Box::new(i64::wrapping_abs),
        Sign => Box::new(i64::signum),
        Square => Box::new(|x: i64| x.wrapping_mul(x)),
        Relu => Box::new(|x: i64| x.max(0)),
        Floor | Ceil | Round | Trunc => Box::new(|x| x),
        Clamp { min, max } => {
            let (lo, hi) = int_bounds(dtype, min, max);
            Box::new(move |x: i64| x.max(lo).min(hi))
        }
        _ => return None,
    })
}

/// Clamp bounds narrowed to the integers they admit and saturated to the
/// dtype's range: the result of the clamp is then always representable.
fn int_bounds(dtype: DType, min: Option<f64>, max: Option<f64>) -> (i64, i64) {
    let (lo, hi) = int_range(dtype);
    let saturate = |v: f64| {
        if v <= lo as f64 {
            lo
        } else if v >= hi as f64 {
            hi
        } else {
            v as i64
        }
    };
    (
        min.map_or(lo, |m| saturate(m.ceil())),
        max.map_or(hi, |m| saturate(m.floor())),
    )
}

/// The `i64` function of a binary op on an integer or bool dtype, or
/// `None` where it has no meaning there.
fn int_binary(op: BinaryOp, dtype: DType) -> Option<fn(i64, i64) -> i64> {
    use BinaryOp::*;
    if dtype.is_bool() {
        return match op {
            And => Some(|a, b| a & b),
            Or => Some(|a, b| a | b),
            Xor => Some(|a, b| a ^ b),
            _ => None,
        };
    }
    Some(match op {
        Add => i64::wrapping_add,
        Sub => i64::wrapping_sub,
        Mul => i64::wrapping_mul,
        Div => floor_div,
        Pow => int_pow,
        Maximum => |a, b| a.max(b),
        Minimum => |a, b| a.min(b),
        Rem => floor_rem,
        Fmod => trunc_rem,
        And | Or | Xor | Atan2 | Hypot => return None,
    })
}

/// Division rounding toward -inf; `a div 0 == 0`; wraps at `MIN div -1`.
fn floor_div(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let q = a.wrapping_div(b);
    let inexact = a.wrapping_rem(b) != 0;
    if inexact && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// The remainder with the divisor's sign; `a rem 0 == a`, so that
/// `a == b * floor_div(a, b) + floor_rem(a, b)` for every pair.
fn floor_rem(a: i64, b: i64) -> i64 {
    if b == 0 {
        return a;
    }
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

/// The remainder with the dividend's sign (C's `%`); `a fmod 0 == a` as
/// for [`floor_rem`], and `MIN fmod -1 == 0` (wrapping).
fn trunc_rem(a: i64, b: i64) -> i64 {
    if b == 0 { a } else { a.wrapping_rem(b) }
}

/// `base^exp`, wrapping; a negative exponent gives the exact value
/// truncated toward zero (0 unless the base is ±1; 0 for base 0).
fn int_pow(base: i64, exp: i64) -> i64 {
    if exp < 0 {
        return match base {
            1 => 1,
            -1 if exp % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        };
    }
    // Square and multiply; wrapping products are exact modulo 2^64.
    let (mut result, mut square, mut e) = (1i64, base, exp as u64);
    while e > 0 {
        if e & 1 == 1 {
            result = result.wrapping_mul(square);
        }
        square = square.wrapping_mul(square);
        e >>= 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_div_and_rem_agree_with_python() {
        // (a, b, a // b, a % b) as Python computes them.
        for (a, b, q, r) in [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -4, -1),
            (-7, -2, 3, -1),
            (6, 3, 2, 0),
            (-6, 3, -2, 0),
            (0, 5, 0, 0),
        ] {
            assert_eq!(floor_div(a, b), q, "{a} // {b}");
            assert_eq!(floor_rem(a, b), r, "{a} % {b}");
        }
        assert_eq!(floor_div(5, 0), 0);
        assert_eq!(floor_rem(5, 0), 5);
        assert_eq!(floor_div(i64::MIN, -1), i64::MIN);
        assert_eq!(floor_rem(i64::MIN, -1), 0);
    }

    #[test]
    fn int_pow_cases() {
        assert_eq!(int_pow(3, 4), 81);
        assert_eq!(int_pow(-2, 3), -8);
        assert_eq!(int_pow(0, 0), 1);
        assert_eq!(int_pow(2, 64), 0); // wraps
        assert_eq!(int_pow(3, 40), 3i64.wrapping_pow(40));
        assert_eq!(int_pow(2, -1), 0);
        assert_eq!(int_pow(0, -1), 0);
        assert_eq!(int_pow(1, -5), 1);
        assert_eq!(int_pow(-1, -3), -1);
        assert_eq!(int_pow(-1, -4), 1);
        // Huge exponents take 63 squarings, not 2^63 multiplications.
        assert_eq!(int_pow(-1, i64::MAX), -1);
        assert_eq!(int_pow(7, i64::MAX) % 2, 1, "an odd base stays odd");
    }

    #[test]
    fn float_rem_follows_the_divisor() {
        assert_eq!(rem_f64(7.5, 2.0), 1.5);
        assert_eq!(rem_f64(-7.5, 2.0), 0.5);
        assert_eq!(rem_f64(7.5, -2.0), -0.5);
        assert_eq!(rem_f64(-7.5, -2.0), -1.5);
        assert!(rem_f64(4.0, -2.0).is_sign_negative());
        assert!(rem_f64(-4.0, 2.0).is_sign_positive());
        assert!(rem_f64(1.0, 0.0).is_nan());
        assert!(rem_f64(f64::INFINITY, 2.0).is_nan());
        assert_eq!(rem_f64(5.0, f64::INFINITY), 5.0);
        assert_eq!(rem_f64(-5.0, f64::INFINITY), f64::INFINITY);
    }
}
