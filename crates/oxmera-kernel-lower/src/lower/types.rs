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
    let id = p.path.get_ident()?.to_string();
    Some(match id.as_str() {
        "f32" => Scalar::F32,
        "i32" => Scalar::I32,
        "u32" => Scalar::U32,
        "bool" => Scalar::Bool,
        _ => return None,
    })
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

pub(super) fn lit(l: &syn::Lit, hint: Option<Scalar>) -> syn::Result<Value> {
    match l {
        syn::Lit::Bool(b) => Ok(Value::Bool(b.value)),
        syn::Lit::Int(i) => {
            let ty = match i.suffix() {
                "" => match hint {
                    Some(Scalar::F32) => {
                        return Err(err(
                            i,
                            "an integer literal where f32 is expected",
                            "write a float literal like `1.0`",
                        ));
                    }
                    Some(Scalar::U32) => Scalar::U32,
                    _ => Scalar::I32,
                },
                "u32" => Scalar::U32,
                "i32" => Scalar::I32,
                s => {
                    return Err(err(
                        i,
                        &format!("`{s}` literals are not supported"),
                        "use u32 or i32",
                    ));
                }
            };
            let v: u64 = i
                .base10_parse()
                .map_err(|_| err(i, "integer literal out of range", "use a smaller value"))?;
            match ty {
                Scalar::U32 => u32::try_from(v)
                    .map(Value::U32)
                    .map_err(|_| err(i, "literal out of range for u32", "use a smaller value")),
                _ => {
                    // `-2147483648` arrives as a negation of 2147483648.
                    if v == 1 << 31 {
                        Ok(Value::I32(i32::MIN))
                    } else {
                        i32::try_from(v).map(Value::I32).map_err(|_| {
                            err(i, "literal out of range for i32", "use a smaller value")
                        })
                    }
                }
            }
        }
        syn::Lit::Float(f) => match f.suffix() {
            "" | "f32" => f
                .base10_parse::<f32>()
                .map(Value::F32)
                .map_err(|_| err(f, "bad float literal", "write e.g. `1.5`")),
            _ => Err(err(
                f,
                "only f32 floats are supported",
                "write `1.0` or `1.0f32`",
            )),
        },
        _ => Err(err(l, "unsupported literal", "use numbers and booleans")),
    }
}
