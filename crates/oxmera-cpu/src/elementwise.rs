//! Elementwise operations: unary, binary, comparisons and `where`.
//!
//! Operands arrive broadcast to one shape as (possibly stride-0) views;
//! `strided::map*` walks them in runs. The per-element functions below
//! follow the reference's definitions (its module docs are the
//! specification): the cheap, exactly rounded ones (`+ - * /`, `sqrt`,
//! `abs`, `relu`, …) run in the operand's own precision, which for these
//! gives bit-identical results; `exp` runs through the vectorized `f32`
//! polynomial, and exact GELU on `f32` through it and a short rational
//! erfc (within the conformance bound, see [`gelu_erf_f32`]); the other
//! transcendental functions are evaluated in `f64` and rounded once.

use half::{bf16, f16};
use oxmera_core::{DType, Result};
use oxmera_reference::Reference;
use oxmera_reference::scalar::{
    clamp, elu, erf, gelu_erf, gelu_tanh, hardsigmoid, hardswish, logsigmoid, mish, rem, selu,
    sigmoid, silu, softplus,
};
use oxmera_tensor::{Backend, BinaryOp, CmpOp, Element, Storage, Tensor, UnaryOp};

use crate::strided::{map1, map1_runs, map2, map3};
use crate::{delegated, host, isa, simd};

pub(crate) fn unary(op: UnaryOp, x: &Tensor) -> Result<Storage> {
    let native = match x.dtype() {
        DType::F32 => unary_f32(op, x)?.map(host::store),
        DType::F64 => unary_f64(op, x)?.map(host::store),
        _ => None,
    };
    match native {
        Some(s) => Ok(s),
        None => delegated(Reference.unary(op, x)),
    }
}

/// Generates the unary ops that are exact in the operand's precision,
/// for one float type.
macro_rules! exact_unary {
    ($t:ty, $op:expr, $buf:expr, $l:expr) => {{
        use UnaryOp::*;
        let (buf, l) = ($buf, $l);
        Some(match $op {
            Neg => map1(buf, l, |v: $t| -v),
            Abs => map1(buf, l, |v: $t| v.abs()),
            Square => map1(buf, l, |v: $t| v * v),
            Sqrt => map1(buf, l, |v: $t| v.sqrt()),
            Recip => map1(buf, l, |v: $t| 1.0 / v),
            Relu => map1(buf, l, |v: $t| if v > 0.0 || v.is_nan() { v } else { 0.0 }),
            Floor => map1(buf, l, |v: $t| v.floor()),
            Ceil => map1(buf, l, |v: $t| v.ceil()),
            Round => map1(buf, l, |v: $t| v.round_ties_even()),
            Trunc => map1(buf, l, |v: $t| v.trunc()),
            Sign => map1(buf, l, |v: $t| {
                if v > 0.0 {
                    1.0
                } else if v < 0.0 {
                    -1.0
                } else if v.is_nan() {
                    v
                } else {
                    0.0
                }
            }),
            LeakyRelu(slope) => map1(
                buf,
                l,
                move |v: $t| {
                    if v > 0.0 { v } else { (slope * v as f64) as $t }
                },
            ),
            Clamp { min, max } => map1(buf, l, move |v: $t| clamp(v as f64, min, max) as $t),
            Hardtanh { min, max } => map1(buf, l, move |v: $t| {
                clamp(v as f64, Some(min), Some(max)) as $t
            }),
            _ => return Ok(None),
        })
    }};
}

fn unary_f32(op: UnaryOp, x: &Tensor) -> Result<Option<Vec<f32>>> {
    let (buf, l) = (host::buffer::<f32>(x)?, x.layout());
    if op == UnaryOp::Exp {
        let isa = isa();
        return Ok(Some(map1_runs(buf, l, |s, d| simd::exp_slice(isa, s, d))));
    }
    if op == UnaryOp::GeluErf {
        let isa = isa();
        return Ok(Some(map1_runs(buf, l, |s, d| gelu_erf_f32(isa, s, d))));
    }
    if let Some(f) = transcendental(op) {
        return Ok(Some(map1(buf, l, |v: f32| f(v as f64) as f32)));
    }
    if let Some(e) = powf_op(op) {
        return Ok(Some(map1(buf, l, |v: f32| (v as f64).powf(e) as f32)));
    }
    if let UnaryOp::Elu(alpha) = op {
        return Ok(Some(map1(buf, l, |v: f32| elu(v as f64, alpha) as f32)));
    }
    Ok(exact_unary!(f32, op, buf, l))
}

fn unary_f64(op: UnaryOp, x: &Tensor) -> Result<Option<Vec<f64>>> {
    let (buf, l) = (host::buffer::<f64>(x)?, x.layout());
    if op == UnaryOp::Exp {
        return Ok(Some(map1(buf, l, f64::exp)));
    }
    if let Some(f) = transcendental(op) {
        return Ok(Some(map1(buf, l, f)));
    }
    if let Some(e) = powf_op(op) {
        return Ok(Some(map1(buf, l, |v: f64| v.powf(e))));
    }
    if let UnaryOp::Elu(alpha) = op {
        return Ok(Some(map1(buf, l, |v: f64| elu(v, alpha))));
    }
    Ok(exact_unary!(f64, op, buf, l))
}

/// The `f64` function of a transcendental unary op, or `None` for the ops
/// handled elsewhere (exact ones, `exp`).
fn transcendental(op: UnaryOp) -> Option<fn(f64) -> f64> {
    use UnaryOp::*;
    Some(match op {
        Log => f64::ln,
        Log1p => f64::ln_1p,
        Rsqrt => |v| 1.0 / v.sqrt(),
        Sin => f64::sin,
        Cos => f64::cos,
        Tanh => f64::tanh,
        Sigmoid => sigmoid,
        Silu => silu,
        GeluTanh => gelu_tanh,
        GeluErf => gelu_erf,
        Erf => erf,
        Softplus => softplus,
        Expm1 => f64::exp_m1,
        Log2 => f64::log2,
        Log10 => f64::log10,
        Exp2 => f64::exp2,
        Tan => f64::tan,
        Atan => f64::atan,
        Asin => f64::asin,
        Acos => f64::acos,
        Sinh => f64::sinh,
        Cosh => f64::cosh,
        Selu => selu,
        Mish => mish,
        Hardsigmoid => hardsigmoid,
        Hardswish => hardswish,
        Logsigmoid => logsigmoid,
        _ => return None,
    })
}

/// Exact (erf) GELU of an `f32` run, `x·Φ(x)` with `2Φ(x) = erfc(-x/√2)`,
/// taken as `erfc(|x|/√2)` for `x < 0` and `2 - erfc(|x|/√2)` otherwise,
/// so neither tail cancels. `e^(-a²)` comes from the vectorized `f32`
/// exp, the rest in `f64`. The error is at most about
/// `0.5·|x|·(1.5e-7 + 2e-7)`: within the conformance bound for GELU,
/// `ε·|want| + 4ε·(|want| + |x|)` with `ε = 2^-23`, which scales with
/// `|x|` because every evaluation of `x·(1 + g(x))` cancels. (The `Erf`
/// op itself keeps the reference's function: its bound is relative to
/// `|erf(x)|`, which a `1.5e-7` absolute error near 0 would break.)
/// It costs one pass instead of an `f64` `erfc` and `exp` per element,
/// a tenth of a transformer's training step before.
fn gelu_erf_f32(isa: crate::Isa, xs: &[f32], out: &mut [f32]) {
    // One branch-free loop (`vmath::gelu_run`), vectorized in `f64` lanes.
    simd::gelu_run(isa, xs, out);
}

/// `Powf` carries its exponent, so it cannot be a plain `fn`.
fn powf_op(op: UnaryOp) -> Option<f64> {
    match op {
        UnaryOp::Powf(e) => Some(e),
        _ => None,
    }
}

pub(crate) fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
    let native = match a.dtype() {
        DType::F32 => binary_float::<f32>(op, a, b)?.map(host::store),
        DType::F64 => binary_float::<f64>(op, a, b)?.map(host::store),
        _ => None,
    };
    match native {
        Some(s) => Ok(s),
        None => delegated(Reference.binary(op, a, b)),
    }
}

/// The float types with native elementwise kernels (and the one-pass
/// optimizer step, which repeats their arithmetic).
pub(crate) trait Float:
    Element
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    /// The correctly rounded square root (the `Sqrt` op's kernel).
    fn sqrt(self) -> Self;
    const NAN: Self;
}

impl Float for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn is_sign_negative(self) -> bool {
        f32::is_sign_negative(self)
    }
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    const NAN: f32 = f32::NAN;
}

impl Float for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn is_sign_negative(self) -> bool {
        f64::is_sign_negative(self)
    }
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    const NAN: f64 = f64::NAN;
}

fn binary_float<T: Float>(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Option<Vec<T>>> {
    use BinaryOp::*;
    let a = (host::buffer::<T>(a)?, a.layout());
    let b = (host::buffer::<T>(b)?, b.layout());
    Ok(Some(match op {
        Add => map2(a, b, |x: T, y: T| x + y),
        Sub => map2(a, b, |x: T, y: T| x - y),
        Mul => map2(a, b, |x: T, y: T| x * y),
        Div => map2(a, b, |x: T, y: T| x / y),
        Maximum => map2(a, b, |x: T, y: T| {
            if x.is_nan() || y.is_nan() {
                T::NAN
            } else if x == y {
                // Equal values differ at most in the sign of zero: +0 wins.
                if x.is_sign_negative() { y } else { x }
            } else if x > y {
                x
            } else {
                y
            }
        }),
        Minimum => map2(a, b, |x: T, y: T| {
            if x.is_nan() || y.is_nan() {
                T::NAN
            } else if x == y {
                if x.is_sign_negative() { x } else { y }
            } else if x < y {
                x
            } else {
                y
            }
        }),
        Pow => map2(a, b, |x: T, y: T| T::from_f64(x.to_f64().powf(y.to_f64()))),
        Rem => map2(a, b, |x: T, y: T| T::from_f64(rem(x.to_f64(), y.to_f64()))),
        // fmod is exact, so computing it in f64 and rounding back is too.
        Fmod => map2(a, b, |x: T, y: T| T::from_f64(x.to_f64() % y.to_f64())),
        Atan2 => map2(a, b, |x: T, y: T| T::from_f64(x.to_f64().atan2(y.to_f64()))),
        Hypot => map2(a, b, |x: T, y: T| T::from_f64(x.to_f64().hypot(y.to_f64()))),
        And | Or | Xor => return Ok(None),
    }))
}

pub(crate) fn compare(op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
    macro_rules! native {
        ($t:ty) => {
            host::store(compare_as::<$t>(op, a, b)?)
        };
    }
    Ok(match a.dtype() {
        DType::F32 => native!(f32),
        DType::F64 => native!(f64),
        DType::I32 => native!(i32),
        DType::I64 => native!(i64),
        DType::U8 => native!(u8),
        DType::Bool => native!(bool),
        DType::F16 => native!(f16),
        DType::BF16 => native!(bf16),
    })
}

/// Comparisons are exact in every dtype: IEEE for floats (NaN unordered,
/// `-0 == +0`), `false < true` for bool.
fn compare_as<T: Element>(op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Vec<bool>> {
    let a = (host::buffer::<T>(a)?, a.layout());
    let b = (host::buffer::<T>(b)?, b.layout());
    Ok(match op {
        CmpOp::Eq => map2(a, b, |x: T, y: T| x == y),
        CmpOp::Ne => map2(a, b, |x: T, y: T| x != y),
        CmpOp::Lt => map2(a, b, |x: T, y: T| x < y),
        CmpOp::Le => map2(a, b, |x: T, y: T| x <= y),
        CmpOp::Gt => map2(a, b, |x: T, y: T| x > y),
        CmpOp::Ge => map2(a, b, |x: T, y: T| x >= y),
    })
}

pub(crate) fn where_cond(cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Storage> {
    let c = (host::buffer::<bool>(cond)?, cond.layout());
    macro_rules! native {
        ($t:ty) => {{
            let x = (host::buffer::<$t>(a)?, a.layout());
            let y = (host::buffer::<$t>(b)?, b.layout());
            host::store(map3(c, x, y, |k: bool, x: $t, y: $t| if k { x } else { y }))
        }};
    }
    Ok(match a.dtype() {
        DType::F32 => native!(f32),
        DType::F64 => native!(f64),
        DType::I32 => native!(i32),
        DType::I64 => native!(i64),
        DType::U8 => native!(u8),
        DType::Bool => native!(bool),
        DType::F16 => native!(f16),
        DType::BF16 => native!(bf16),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast GELU against the reference's `f64` one on a dense sweep,
    /// both tails, zeros and the special values, within the conformance
    /// bound `ε·|want| + 4ε·(|want| + |x|)`; the worst ratio must also be
    /// well inside it (measured: 0.175 here), so a coefficient typo cannot
    /// hide.
    #[test]
    fn fast_gelu_is_within_the_conformance_bound_everywhere() {
        let mut xs: Vec<f32> = (-400_000..=400_000).map(|i| i as f32 * 1e-4).collect();
        // Subnormals, odd multiples of the smallest (x/2 a halfway case).
        xs.extend((1..2000).map(|i| f32::from_bits(2 * i + 1)));
        xs.extend((1..2000).map(|i| -f32::from_bits(2 * i + 1)));
        xs.extend([
            0.0,
            -0.0,
            1e-30,
            -1e-30,
            -9.0,
            -12.0,
            -20.0,
            -38.0,
            -80.0,
            30.0,
            1e30,
            -1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ]);
        let mut got = vec![0f32; xs.len()];
        gelu_erf_f32(crate::isa(), &xs, &mut got);
        let eps = f64::from(f32::EPSILON);
        let mut worst = 0f64;
        for (&x, &g) in xs.iter().zip(&got) {
            let want = gelu_erf(f64::from(x)) as f32;
            if want.is_nan() || !want.is_finite() {
                assert!(
                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                    "{x}: {g} vs {want}"
                );
                continue;
            }
            let (w, x64) = (f64::from(want), f64::from(x));
            let bound =
                eps * w.abs().max(f64::from(f32::MIN_POSITIVE)) + 4.0 * eps * (w.abs() + x64.abs());
            let ratio = (f64::from(g) - w).abs() / bound;
            assert!(
                ratio <= 1.0,
                "gelu({x}) = {g}, reference {want}: {ratio} of the bound"
            );
            worst = worst.max(ratio);
        }
        assert!(worst < 0.35, "worst {worst} of the bound");
    }
}
