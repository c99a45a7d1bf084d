//! Expressions: operators with their typing rules, names, constants,
//! casts, indexing and parentheses. Both sides of a binary operator have one
//! type (no implicit widening, as in Rust) except shifts, whose amount may be
//! any integer; comparisons and `&&`/`||` give `bool`.

use oxmera_kernel_ir::ir::*;
use quote::ToTokens;

use super::calls::math_named;
use super::types::{lit, scalar_type, type_constant, untyped};
use super::{Binding, Lowering};
use crate::span::err;

impl Lowering {
    pub(super) fn expect(&mut self, e: &syn::Expr, ty: Scalar) -> syn::Result<Expr> {
        let x = self.expr(e, Some(ty))?;
        if x.ty != ty {
            return Err(err(
                e,
                &format!("expected {ty}, found {}", x.ty),
                &format!("convert with `as {ty}`"),
            ));
        }
        Ok(x)
    }

    pub(super) fn expr(&mut self, e: &syn::Expr, hint: Option<Scalar>) -> syn::Result<Expr> {
        let span = self.span(e);
        let mk = |kind, ty| Ok(Expr { kind, ty, span });
        match e {
            syn::Expr::Lit(l) => mk(ExprKind::Lit(lit(&l.lit, hint)?), lit(&l.lit, hint)?.ty()),
            syn::Expr::Paren(p) => self.expr(&p.expr, hint),
            syn::Expr::Group(g) => self.expr(&g.expr, hint),
            syn::Expr::Path(p) => self.path(p, span),
            syn::Expr::Unary(u) => {
                let arg = self.expr(&u.expr, hint)?;
                let op = match u.op {
                    syn::UnOp::Neg(_) if arg.ty.is_signed() => UnOp::Neg,
                    syn::UnOp::Not(_) if !arg.ty.is_float() => UnOp::Not,
                    syn::UnOp::Deref(_) => {
                        return Err(err(
                            u,
                            "no pointers in kernels",
                            "index buffers with `buf[i]`",
                        ));
                    }
                    _ => {
                        return Err(err(
                            u,
                            &format!("this operator does not apply to {}", arg.ty),
                            "negate floats, i32 or i64; `!` on bool or integers",
                        ));
                    }
                };
                let ty = arg.ty;
                mk(
                    ExprKind::Unary {
                        op,
                        arg: Box::new(arg),
                    },
                    ty,
                )
            }
            syn::Expr::Binary(b) => {
                let op = binop(&b.op).ok_or_else(|| {
                    err(
                        b,
                        "compound assignment is a statement",
                        "write `x += y;` on its own line",
                    )
                })?;
                let (lhs, rhs) = if matches!(op, BinOp::And | BinOp::Or) {
                    (
                        self.expect(&b.left, Scalar::Bool)?,
                        self.unhoistable(
                            "the right side of `&&`/`||` is evaluated only when the left \
                             does not decide",
                            |l| l.expect(&b.right, Scalar::Bool),
                        )?,
                    )
                } else if matches!(op, BinOp::Shl | BinOp::Shr) {
                    let lhs = self.expr(&b.left, hint)?;
                    let rhs = self.expr(&b.right, Some(Scalar::U32))?;
                    (lhs, rhs)
                } else {
                    let h = if op.is_comparison() { None } else { hint };
                    if untyped(&b.left) && !untyped(&b.right) {
                        let rhs = self.expr(&b.right, h)?;
                        (self.expr(&b.left, Some(rhs.ty))?, rhs)
                    } else {
                        let lhs = self.expr(&b.left, h)?;
                        let rhs = self.expr(&b.right, Some(lhs.ty))?;
                        (lhs, rhs)
                    }
                };
                self.binary_typed(op, lhs, rhs, span, e)
            }
            syn::Expr::Cast(c) => {
                let to = scalar_type(&c.ty).ok_or_else(|| {
                    err(
                        &c.ty,
                        "casts go to a scalar type (f32, f64, f16, bf16, i32, i64, u32, u64, u8, u16, bool)",
                        "write `x as f32`",
                    )
                })?;
                let arg = self.expr(&c.expr, None)?;
                if to == Scalar::Bool && arg.ty != Scalar::Bool {
                    return Err(err(
                        c,
                        "casting to bool is not allowed",
                        "compare instead: `x != 0`",
                    ));
                }
                mk(ExprKind::Cast(Box::new(arg)), to)
            }
            syn::Expr::Index(ix) => {
                let (mem, elem, index) = self.place(ix, false)?;
                mk(
                    ExprKind::Load {
                        mem,
                        index: Box::new(index),
                    },
                    elem,
                )
            }
            syn::Expr::Call(c) => self.call(c, hint, span),
            syn::Expr::MethodCall(m) if m.method == "to_bits" => {
                if !m.args.is_empty() {
                    return Err(err(
                        m,
                        "`to_bits` takes no arguments",
                        "write `x.to_bits()`",
                    ));
                }
                let arg = self.expr(&m.receiver, None)?;
                let Some(bits) = arg.ty.bits_type() else {
                    return Err(err(
                        m,
                        &format!("`to_bits` applies to floats, not {}", arg.ty),
                        "call it on an f32, f64, f16 or bf16",
                    ));
                };
                mk(ExprKind::BitCast(Box::new(arg)), bits)
            }
            syn::Expr::MethodCall(m) => {
                let f = math_named(&m.method.to_string())
                    .filter(|f| !matches!(f, MathFn::Rsqrt))
                    .ok_or_else(|| err(&m.method, "unsupported method", "math methods: exp, exp2, ln, log2, sqrt, mul_add, abs, min, max, tanh, sin, cos, floor, ceil, powf, erf; bits: to_bits, count_ones, leading_zeros, trailing_zeros"))?;
                let recv = self.expr(&m.receiver, hint)?;
                let mut args = vec![recv];
                for a in &m.args {
                    let ty = args[0].ty;
                    args.push(self.expect(a, ty)?);
                }
                self.math(f, args, span, e)
            }
            syn::Expr::If(_) => Err(err(
                e,
                "an `if` value is taken only as a `let`'s value or an assignment's right side",
                "bind it first: `let v = if c { a } else { b };` (here it could run when the original would not)",
            )),
            syn::Expr::Macro(m) => Err(err(
                m,
                "macros are not part of the kernel language",
                "write the computation with the builtins",
            )),
            syn::Expr::Reference(r) => Err(err(
                r,
                "no references in kernels",
                "pass buffers by name to atomics: `atomic_add(buf, i, v)`",
            )),
            syn::Expr::Closure(c) => Err(err(
                c,
                "closures are not part of the kernel language",
                "write the code inline",
            )),
            syn::Expr::Tuple(t) => Err(err(
                t,
                "tuples are not part of the kernel language",
                "use separate locals",
            )),
            syn::Expr::Array(a) => Err(err(
                a,
                "local arrays are not part of the kernel language",
                "use a `shared::<T>(N)` array or separate locals",
            )),
            syn::Expr::Struct(s) => Err(err(
                s,
                "structs are not part of the kernel language",
                "use scalars and buffers",
            )),
            syn::Expr::Field(f) => Err(err(
                f,
                "fields are not part of the kernel language",
                "use scalars and buffers",
            )),
            syn::Expr::Match(m) => Err(err(
                m,
                "a `match` value is taken only as a `let`'s value or an assignment's right side",
                "bind it first: `let v = match x { 0 => a, _ => b };`",
            )),
            _ => Err(err(
                e,
                "this expression is not part of the kernel language",
                "see docs/kernels.md for the subset",
            )),
        }
    }

    pub(super) fn binary_typed<T: ToTokens>(
        &mut self,
        op: BinOp,
        lhs: Expr,
        rhs: Expr,
        span: SpanId,
        node: T,
    ) -> syn::Result<Expr> {
        let shift = matches!(op, BinOp::Shl | BinOp::Shr);
        if !shift && lhs.ty != rhs.ty {
            return Err(err(
                node,
                &format!("mismatched types: {} {} {}", lhs.ty, op.symbol(), rhs.ty),
                "convert one side with `as`",
            ));
        }
        if shift && !(lhs.ty.is_int() && rhs.ty.is_int()) {
            return Err(err(node, "shifts need integers", "shift integer values"));
        }
        let ty = if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
            Scalar::Bool
        } else {
            lhs.ty
        };
        let probe = oxmera_kernel_ir::eval::binary(
            op,
            Value::from_bits(lhs.ty, 1),
            Value::from_bits(rhs.ty, 1),
        );
        if probe == Err(oxmera_kernel_ir::eval::EvalError::Types)
            && !matches!(op, BinOp::And | BinOp::Or)
        {
            return Err(err(
                node,
                &format!("`{}` does not apply to {}", op.symbol(), lhs.ty),
                "bit operators need integers or bools; arithmetic needs numbers",
            ));
        }
        Ok(Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            ty,
            span,
        })
    }

    pub(super) fn path(&mut self, p: &syn::ExprPath, span: SpanId) -> syn::Result<Expr> {
        if p.path.segments.len() == 2 {
            let t = p.path.segments[0].ident.to_string();
            let c = p.path.segments[1].ident.to_string();
            let Some(v) = Scalar::from_name(&t).and_then(|ty| type_constant(ty, &c)) else {
                return Err(err(
                    p,
                    "unknown constant",
                    "available: MIN and MAX of every integer and float type (e.g. u8::MAX, \
                     i64::MIN, f64::MAX), and INFINITY, NEG_INFINITY, EPSILON, MIN_POSITIVE \
                     of the floats",
                ));
            };
            return Ok(Expr {
                kind: ExprKind::Lit(v),
                ty: v.ty(),
                span,
            });
        }
        let Some(id) = p.path.get_ident() else {
            return Err(err(
                p,
                "unknown name",
                "use locals, parameters and const generics",
            ));
        };
        let name = id.to_string();
        match self.lookup(&name) {
            Some(Binding::Local(l)) => Ok(Expr {
                kind: ExprKind::Local(l),
                ty: self.kernel.locals[l as usize].ty,
                span,
            }),
            Some(Binding::Param(pid, ParamKind::Scalar(t))) => Ok(Expr {
                kind: ExprKind::Param(pid),
                ty: t,
                span,
            }),
            Some(Binding::Spec(s)) => Ok(Expr {
                kind: ExprKind::Spec(s),
                ty: self.kernel.specs[s as usize].ty,
                span,
            }),
            Some(Binding::Const(v)) => Ok(Expr {
                kind: ExprKind::Lit(v),
                ty: v.ty(),
                span,
            }),
            Some(Binding::Param(..)) | Some(Binding::Shared(..)) => Err(err(
                p,
                &format!("`{name}` is a buffer"),
                &format!("read an element with `{name}[i]`"),
            )),
            Some(Binding::Array(..)) => Err(err(
                p,
                &format!("`{name}` is an array: arrays are not values (no copies, no arguments)"),
                &format!("read an element with `{name}[i]`, and copy elementwise in a loop"),
            )),
            None => Err(err(
                p,
                &format!("unknown name `{name}`"),
                "declare it with `let` before use",
            )),
        }
    }
}

pub(super) fn binop(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as S;
    Some(match op {
        S::Add(_) => BinOp::Add,
        S::Sub(_) => BinOp::Sub,
        S::Mul(_) => BinOp::Mul,
        S::Div(_) => BinOp::Div,
        S::Rem(_) => BinOp::Rem,
        S::And(_) => BinOp::And,
        S::Or(_) => BinOp::Or,
        S::BitXor(_) => BinOp::BitXor,
        S::BitAnd(_) => BinOp::BitAnd,
        S::BitOr(_) => BinOp::BitOr,
        S::Shl(_) => BinOp::Shl,
        S::Shr(_) => BinOp::Shr,
        S::Eq(_) => BinOp::Eq,
        S::Lt(_) => BinOp::Lt,
        S::Le(_) => BinOp::Le,
        S::Ne(_) => BinOp::Ne,
        S::Ge(_) => BinOp::Ge,
        S::Gt(_) => BinOp::Gt,
        _ => return None,
    })
}
