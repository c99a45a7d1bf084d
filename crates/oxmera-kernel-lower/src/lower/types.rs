//! Rust type names and literals in the kernel subset: which types a
//! parameter, local or shared array may have, and what value a literal
//! denotes once its type is known.

use oxmera_kernel_ir::ir::*;

use crate::span::err;

pub(super) fn scalar_type(t: &syn::Type) -> Option<Scalar> {
    let syn::Type::Path(p) = t else { return None };
    if p.qself.is_some() {
        return None;
    }
    // `f16` and `bf16` are names like any other here: a `#[kernel]`
    // function is replaced by its IR and never compiled as Rust.
    Scalar::from_name(&p.path.get_ident()?.to_string())
}

pub(super) fn param_kind(t: &syn::Type) -> Option<ParamKind> {
    if let Some(s) = scalar_type(t) {
        return Some(ParamKind::Scalar(s));
    }
    let syn::Type::Reference(r) = t else {
        return None;
    };
    if r.lifetime.is_some() {
        return None;
    }
    let syn::Type::Slice(s) = &*r.elem else {
        return None;
    };
    Some(ParamKind::Buffer {
        elem: scalar_type(&s.elem)?,
        writable: r.mutability.is_some(),
    })
}

pub(super) fn const_int(e: &syn::Expr) -> Option<i64> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => const_int(expr).map(|v| -v),
        syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            syn::Stmt::Expr(e, None) => const_int(e),
            _ => None,
        },
        _ => None,
    }
}

/// An unsuffixed integer literal, which takes its type from context.
pub(super) fn untyped(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.suffix().is_empty(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => untyped(expr),
        syn::Expr::Paren(p) => untyped(&p.expr),
        _ => false,
    }
}

/// The value of `T::NAME` for a scalar type `T`: `MIN` and `MAX` of every
/// number type; `INFINITY`, `NEG_INFINITY`, `EPSILON` (the distance from
/// 1.0 to the next value) and `MIN_POSITIVE` (the smallest normal) of the
/// floats.
pub(super) fn type_constant(ty: Scalar, name: &str) -> Option<Value> {
    use oxmera_kernel_ir::half::{bf16_from_f32, f16_from_f32};
    let v = match (ty, name) {
        (Scalar::I32, "MAX") => Value::I32(i32::MAX),
        (Scalar::I32, "MIN") => Value::I32(i32::MIN),
        (Scalar::U32, "MAX") => Value::U32(u32::MAX),
        (Scalar::U32, "MIN") => Value::U32(0),
        (Scalar::I64, "MAX") => Value::I64(i64::MAX),
        (Scalar::I64, "MIN") => Value::I64(i64::MIN),
        (Scalar::U64, "MAX") => Value::U64(u64::MAX),
        (Scalar::U64, "MIN") => Value::U64(0),
        (Scalar::U8, "MAX") => Value::U8(u8::MAX),
        (Scalar::U8, "MIN") => Value::U8(0),
        (Scalar::U16, "MAX") => Value::U16(u16::MAX),
        (Scalar::U16, "MIN") => Value::U16(0),
        (Scalar::F32, "MAX") => Value::F32(f32::MAX),
        (Scalar::F32, "MIN") => Value::F32(f32::MIN),
        (Scalar::F32, "INFINITY") => Value::F32(f32::INFINITY),
        (Scalar::F32, "NEG_INFINITY") => Value::F32(f32::NEG_INFINITY),
        (Scalar::F32, "EPSILON") => Value::F32(f32::EPSILON),
        (Scalar::F32, "MIN_POSITIVE") => Value::F32(f32::MIN_POSITIVE),
        (Scalar::F64, "MAX") => Value::F64(f64::MAX),
        (Scalar::F64, "MIN") => Value::F64(f64::MIN),
        (Scalar::F64, "INFINITY") => Value::F64(f64::INFINITY),
        (Scalar::F64, "NEG_INFINITY") => Value::F64(f64::NEG_INFINITY),
        (Scalar::F64, "EPSILON") => Value::F64(f64::EPSILON),
        (Scalar::F64, "MIN_POSITIVE") => Value::F64(f64::MIN_POSITIVE),
        // f16: 65504 = 0x7bff, ulp of 1.0 = 2^-10 (0x1400), smallest
        // normal 2^-14 (0x0400).
        (Scalar::F16, "MAX") => Value::F16(0x7bff),
        (Scalar::F16, "MIN") => Value::F16(0xfbff),
        (Scalar::F16, "EPSILON") => Value::F16(0x1400),
        (Scalar::F16, "MIN_POSITIVE") => Value::F16(0x0400),
        // bf16: (2 − 2^-7)·2^127 = 0x7f7f, ulp of 1.0 = 2^-7 (0x3c00),
        // smallest normal 2^-126 (0x0080).
        (Scalar::BF16, "MAX") => Value::BF16(0x7f7f),
        (Scalar::BF16, "MIN") => Value::BF16(0xff7f),
        (Scalar::BF16, "EPSILON") => Value::BF16(0x3c00),
        (Scalar::BF16, "MIN_POSITIVE") => Value::BF16(0x0080),
        (Scalar::F16, "INFINITY") => Value::F16(f16_from_f32(f32::INFINITY)),
        (Scalar::F16, "NEG_INFINITY") => Value::F16(f16_from_f32(f32::NEG_INFINITY)),
        (Scalar::BF16, "INFINITY") => Value::BF16(bf16_from_f32(f32::INFINITY)),
        (Scalar::BF16, "NEG_INFINITY") => Value::BF16(bf16_from_f32(f32::NEG_INFINITY)),
        _ => return None,
    };
    Some(v)
}

/// An integer literal's value as type `ty` (an integer type), or why not.
/// `-MIN` arrives as the negation of `MAX + 1`, which is therefore read as
/// `MIN` (its negation wraps back to `MIN`).
fn int_value(i: &syn::LitInt, ty: Scalar, v: u128) -> syn::Result<Value> {
    let out = || {
        err(
            i,
            &format!("literal out of range for {ty}"),
            "use a smaller value",
        )
    };
    let unsigned = |max: u128| if v <= max { Ok(v as u64) } else { Err(out()) };
    let signed = |bits: u32| {
        let min_magnitude = 1u128 << (bits - 1);
        if v < min_magnitude {
            Ok(v as i64)
        } else if v == min_magnitude {
            Ok(-(min_magnitude as i128) as i64)
        } else {
            Err(out())
        }
    };
    Ok(match ty {
        Scalar::U8 => Value::U8(unsigned(u8::MAX as u128)? as u8),
        Scalar::U16 => Value::U16(unsigned(u16::MAX as u128)? as u16),
        Scalar::U32 => Value::U32(unsigned(u32::MAX as u128)? as u32),
        Scalar::U64 => Value::U64(unsigned(u64::MAX as u128)?),
        Scalar::I32 => Value::I32(signed(32)? as i32),
        _ => Value::I64(signed(64)?),
    })
}

/// A float literal's value as float type `ty`. A half literal is read as
/// `f32` and rounded to the half, as `1.5f32 as f16` would be.
fn float_value(f: &syn::LitFloat, ty: Scalar) -> syn::Result<Value> {
    let bad = || err(f, "bad float literal", "write e.g. `1.5`");
    Ok(match ty {
        Scalar::F64 => Value::F64(f.base10_parse::<f64>().map_err(|_| bad())?),
        _ => {
            let x = f.base10_parse::<f32>().map_err(|_| bad())?;
            oxmera_kernel_ir::eval::cast(Value::F32(x), ty)
        }
    })
}

pub(super) fn lit(l: &syn::Lit, hint: Option<Scalar>) -> syn::Result<Value> {
    match l {
        syn::Lit::Bool(b) => Ok(Value::Bool(b.value)),
        syn::Lit::Int(i) => {
            let ty = match i.suffix() {
                "" => match hint {
                    Some(t) if t.is_float() => {
                        return Err(err(
                            i,
                            &format!("an integer literal where {t} is expected"),
                            "write a float literal like `1.0`",
                        ));
                    }
                    Some(t) if t.is_int() => t,
                    _ => Scalar::I32,
                },
                s => match Scalar::from_name(s).filter(|t| t.is_int()) {
                    Some(t) => t,
                    None => {
                        return Err(err(
                            i,
                            &format!("`{s}` literals are not supported"),
                            "use an integer suffix: u8, u16, u32, u64, i32 or i64",
                        ));
                    }
                },
            };
            let v: u128 = i
                .base10_parse()
                .map_err(|_| err(i, "integer literal out of range", "use a smaller value"))?;
            int_value(i, ty, v)
        }
        syn::Lit::Float(f) => {
            let ty = match f.suffix() {
                // An unsuffixed float takes a float type from context:
                // `let h: f16 = 1.5;` (Rust has no stable `f16` suffix).
                "" => hint.filter(|t| t.is_float()).unwrap_or(Scalar::F32),
                "f32" => Scalar::F32,
                "f64" => Scalar::F64,
                _ => {
                    return Err(err(
                        f,
                        "only f32 and f64 float suffixes exist",
                        "write `1.0`, `1.0f32` or `1.0f64`; for a half, `let h: f16 = 1.0;`",
                    ));
                }
            };
            float_value(f, ty)
        }
        _ => Err(err(l, "unsupported literal", "use numbers and booleans")),
    }
}
