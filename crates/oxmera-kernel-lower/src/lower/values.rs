//! Two things a CUDA programmer writes on every other line, lowered to
//! what the IR already has:
//!
//! - **`if` as a value** — CUDA's `c ? a : b` — in `let x = if c { a }
//!   else { b };` and on the right of `x = ..` or `buf[i] = ..` (a `match`
//!   too, see [`super::matches`]). It becomes
//!   an `if` statement assigning one local in every branch, so the IR, the
//!   analysis, the simulator and every emitter see nothing new. Only those
//!   places take it: elsewhere (inside `a && ..`, a loop condition, an
//!   index) lifting the `if` out of the expression would evaluate it when
//!   the original would not — a load the guard was there to prevent — so it
//!   is refused with the rewrite as the hint. Every branch, `else if`s
//!   included, ends in a value of one type, and the `else` is required.
//! - **`const` items** inside the kernel (`const TILE: u32 = 16;`): a name
//!   for a literal, usable wherever the literal is, shared-array lengths
//!   included. A `const` outside the function is invisible to the
//!   attribute (a macro sees one function), so the hint says to move it in.

use oxmera_kernel_ir::ir::*;

use super::statements::strip_paren;
use super::types::{lit, scalar_type};
use super::{Binding, Lowering};
use crate::span::err;

/// A value `if`, lowered but not yet assigned: each branch's statements and
/// the value it ends with, or a nested condition.
pub(super) enum ValueIf {
    /// A branch's statements and final value.
    Value { stmts: Vec<Stmt>, value: Expr },
    /// `stmts; if cond { then } else { otherwise }`.
    Branch {
        stmts: Vec<Stmt>,
        cond: Expr,
        then: Box<ValueIf>,
        otherwise: Box<ValueIf>,
        span: SpanId,
    },
}

impl ValueIf {
    /// The type every branch's value has.
    pub(super) fn ty(&self) -> Scalar {
        match self {
            ValueIf::Value { value, .. } => value.ty,
            ValueIf::Branch { then, .. } => then.ty(),
        }
    }

    /// The same value with `before` run first.
    pub(super) fn after(self, mut before: Vec<Stmt>) -> ValueIf {
        match self {
            ValueIf::Value { stmts, value } => {
                before.extend(stmts);
                ValueIf::Value {
                    stmts: before,
                    value,
                }
            }
            ValueIf::Branch {
                stmts,
                cond,
                then,
                otherwise,
                span,
            } => {
                before.extend(stmts);
                ValueIf::Branch {
                    stmts: before,
                    cond,
                    then,
                    otherwise,
                    span,
                }
            }
        }
    }

    /// The statements that compute the value into `local`.
    pub(super) fn assign_to(self, local: LocalId) -> Vec<Stmt> {
        match self {
            ValueIf::Value { mut stmts, value } => {
                let span = value.span;
                stmts.push(Stmt {
                    kind: StmtKind::Assign { local, value },
                    span,
                });
                stmts
            }
            ValueIf::Branch {
                mut stmts,
                cond,
                then,
                otherwise,
                span,
            } => {
                stmts.push(Stmt {
                    kind: StmtKind::If {
                        cond,
                        then: then.assign_to(local),
                        otherwise: otherwise.assign_to(local),
                    },
                    span,
                });
                stmts
            }
        }
    }
}

/// An expression that picks its value by branching: an `if` or a `match`.
#[derive(Clone, Copy)]
pub(super) enum Branching<'a> {
    /// `if c { a } else { b }`.
    If(&'a syn::ExprIf),
    /// `match x { 0 => a, _ => b }`.
    Match(&'a syn::ExprMatch),
}

/// `e` without parentheses, if it is an `if` or a `match`.
pub(super) fn as_branching(e: &syn::Expr) -> Option<Branching<'_>> {
    match strip_paren(e) {
        syn::Expr::If(i) => Some(Branching::If(i)),
        syn::Expr::Match(m) => Some(Branching::Match(m)),
        _ => None,
    }
}

impl Lowering {
    /// A value `if` or `match`.
    pub(super) fn branching_value(
        &mut self,
        b: Branching<'_>,
        hint: Option<Scalar>,
    ) -> syn::Result<ValueIf> {
        match b {
            Branching::If(i) => self.if_value(i, hint),
            Branching::Match(m) => self.match_value(m, hint),
        }
    }

    /// A value `if`; `hint` types untyped literals in the first branch, the
    /// first branch's type the rest.
    pub(super) fn if_value(
        &mut self,
        i: &syn::ExprIf,
        hint: Option<Scalar>,
    ) -> syn::Result<ValueIf> {
        if let syn::Expr::Let(lt) = &*i.cond {
            return Err(err(
                lt,
                "`if let` is not supported",
                "use a boolean condition",
            ));
        }
        let span = self.span(i);
        // Calls in the condition run before it, inside this branch of an
        // enclosing `if` (an `else if`'s condition is not evaluated when an
        // earlier one holds).
        let (before, cond) = self.capture(|l| l.expect(&i.cond, Scalar::Bool))?;
        let then = self.value_block(&i.then_branch, hint)?;
        let ty = then.ty();
        let otherwise = match &i.else_branch {
            None => {
                return Err(err(
                    i,
                    "an `if` used as a value needs an `else`",
                    "add `else { .. }` with a value of the same type",
                ));
            }
            Some((_, e)) => match &**e {
                syn::Expr::Block(b) => self.value_block(&b.block, Some(ty))?,
                syn::Expr::If(inner) => self.if_value(inner, Some(ty))?,
                other => return Err(err(other, "unsupported else branch", "write `else { .. }`")),
            },
        };
        if otherwise.ty() != ty {
            return Err(err(
                i,
                &format!(
                    "the branches have different types: {ty} and {}",
                    otherwise.ty()
                ),
                "convert one branch's value with `as`",
            ));
        }
        Ok(ValueIf::Branch {
            stmts: before,
            cond,
            then: Box::new(then),
            otherwise: Box::new(otherwise),
            span,
        })
    }

    /// A branch of a value `if`: its statements, then its value (the last
    /// expression, with no semicolon), in a scope of its own.
    pub(super) fn value_block(
        &mut self,
        b: &syn::Block,
        hint: Option<Scalar>,
    ) -> syn::Result<ValueIf> {
        let hint_text = "end the branch with its value, without a semicolon: `{ .. ; v }`";
        let Some((syn::Stmt::Expr(tail, None), rest)) = b.stmts.split_last() else {
            return Err(err(b, "this branch has no value", hint_text));
        };
        self.scoped(|l| {
            let mut stmts = Vec::new();
            for s in rest {
                l.stmt(s, &mut stmts)?;
            }
            if let Some(inner) = as_branching(tail) {
                return Ok(l.branching_value(inner, hint)?.after(stmts));
            }
            let (hoisted, value) = l.capture(|l| l.expr(tail, hint))?;
            stmts.extend(hoisted);
            if let Some(h) = hint.filter(|h| *h != value.ty) {
                return Err(err(
                    tail,
                    &format!("expected {h}, found {}", value.ty),
                    &format!("convert with `as {h}`"),
                ));
            }
            Ok(ValueIf::Value { stmts, value })
        })
    }

    /// A hidden local that holds a value `if` computed for a store or a
    /// compound assignment; returns its id after the statements computing it.
    pub(super) fn if_into_temporary(
        &mut self,
        b: Branching<'_>,
        ty: Scalar,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<LocalId> {
        let value = self.branching_value(b, Some(ty))?;
        let node: &dyn quote::ToTokens = match b {
            Branching::If(i) => i,
            Branching::Match(m) => m,
        };
        if value.ty() != ty {
            return Err(err(
                node,
                &format!("expected {ty}, found {}", value.ty()),
                &format!("convert with `as {ty}`"),
            ));
        }
        let span = self.span(&node);
        // Unbound right after: the name is for the printer and the emitters, never looked up, so it shadows nothing.
        let id = self.new_local("if_value".into(), ty, false, span);
        self.scopes.last_mut().expect("scope").remove("if_value");
        out.extend(value.assign_to(id));
        Ok(id)
    }

    /// `const NAME: T = literal;` inside the kernel.
    pub(super) fn const_item(&mut self, c: &syn::ItemConst) -> syn::Result<()> {
        let hint = "write `const TILE: u32 = 16;` with a literal value";
        let ty = scalar_type(&c.ty)
            .ok_or_else(|| err(&c.ty, "a constant has a scalar type (f32, f64, f16, bf16, i32, i64, u32, u64, u8, u16, bool)", hint))?;
        let value = match strip_paren(&c.expr) {
            syn::Expr::Lit(l) => lit(&l.lit, Some(ty))?,
            syn::Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Neg(_),
                expr,
                ..
            }) => match strip_paren(expr) {
                syn::Expr::Lit(l) if ty.is_signed() => {
                    let v = lit(&l.lit, Some(ty))?;
                    oxmera_kernel_ir::eval::unary(UnOp::Neg, v)
                        .map_err(|_| err(&c.expr, "a constant's value is a literal", hint))?
                }
                _ => return Err(err(&c.expr, "a constant's value is a literal", hint)),
            },
            other => return Err(err(other, "a constant's value is a literal", hint)),
        };
        if value.ty() != ty {
            return Err(err(
                &c.expr,
                &format!("expected {ty}, found {}", value.ty()),
                "write a literal of the constant's type",
            ));
        }
        self.bind(c.ident.to_string(), Binding::Const(value));
        Ok(())
    }
}
