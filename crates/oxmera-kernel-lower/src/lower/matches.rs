//! `match` on integers and bools, lowered to an `if` chain.
//!
//! `match op { 0 => a, 1 | 2 => b, 3..=9 if x > 0 => c, _ => d }` is what
//! a kernel dispatching on an op code looks like. The scrutinee is computed
//! once, into a hidden local; each arm becomes a condition on it —
//! equality for a literal, `lo <= v && v <= hi` for a range, `||` for
//! alternatives, `&&` with the guard — and the arms an `if`/`else if`
//! chain in order, so the first arm that matches runs, as in Rust. A `_`
//! (or a plain name, bound to the value) ends the chain. As a statement a
//! `match` may leave values unmatched; as a value (`let v = match ..`) it
//! needs the catch-all arm, as Rust's exhaustiveness check would ask of an
//! integer.

use oxmera_kernel_ir::ir::*;

use super::types::lit;
use super::values::ValueIf;
use super::{Binding, Lowering};
use crate::span::err;

const HINT: &str = "arms match literals (`3`), ranges (`0..=7`), alternatives (`1 | 2`) or `_`";

/// One arm, lowered up to its body: its condition (`None`: always), and
/// the name a catch-all binds.
struct ArmTest {
    cond: Option<Expr>,
    binds: Option<String>,
}

impl Lowering {
    /// The scrutinee into a hidden local: its statement and id.
    fn scrutinee(&mut self, m: &syn::ExprMatch) -> syn::Result<(Stmt, LocalId)> {
        let value = self.expr(&m.expr, None)?;
        if !(value.ty.is_int() || value.ty == Scalar::Bool) {
            return Err(err(
                &m.expr,
                &format!("`match` takes an integer or a bool, not {}", value.ty),
                "compare floats with `if`",
            ));
        }
        let span = self.span(&m.expr);
        let id = self.new_local("match_value".into(), value.ty, false, span);
        self.scopes.last_mut().expect("scope").remove("match_value");
        let stmt = Stmt {
            kind: StmtKind::Assign { local: id, value },
            span,
        };
        Ok((stmt, id))
    }

    /// `value == pattern` for one pattern.
    fn pattern_test(&mut self, p: &syn::Pat, local: LocalId) -> syn::Result<Option<Expr>> {
        let ty = self.kernel.locals[local as usize].ty;
        let span = self.span(p);
        let value = Expr {
            kind: ExprKind::Local(local),
            ty,
            span,
        };
        let literal = |l: &mut Self, e: &syn::Expr| -> syn::Result<Expr> {
            let v = match e {
                syn::Expr::Lit(x) => lit(&x.lit, Some(ty))?,
                syn::Expr::Unary(syn::ExprUnary {
                    op: syn::UnOp::Neg(_),
                    expr,
                    ..
                }) if ty == Scalar::I32 => match &**expr {
                    syn::Expr::Lit(x) => match lit(&x.lit, Some(ty))? {
                        Value::I32(v) => Value::I32(v.wrapping_neg()),
                        _ => return Err(err(e, "a pattern is a literal", HINT)),
                    },
                    _ => return Err(err(e, "a pattern is a literal", HINT)),
                },
                _ => return Err(err(e, "a pattern is a literal", HINT)),
            };
            if v.ty() != ty {
                return Err(err(
                    e,
                    &format!("expected a {ty} pattern, found {}", v.ty()),
                    "write the literal in the scrutinee's type",
                ));
            }
            let span = l.span(e);
            Ok(Expr {
                kind: ExprKind::Lit(v),
                ty,
                span,
            })
        };
        let compare = |op, lhs: Expr, rhs: Expr, span| Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            ty: Scalar::Bool,
            span,
        };
        Ok(Some(match p {
            syn::Pat::Wild(_) => return Ok(None),
            syn::Pat::Lit(l) => {
                let e = syn::Expr::Lit(l.clone());
                let rhs = literal(self, &e)?;
                compare(BinOp::Eq, value, rhs, span)
            }
            syn::Pat::Range(r) => {
                let (Some(lo), Some(hi)) = (&r.start, &r.end) else {
                    return Err(err(r, "a range pattern needs both ends", HINT));
                };
                let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
                let (lo, hi) = (literal(self, lo)?, literal(self, hi)?);
                let above = compare(BinOp::Ge, value.clone(), lo, span);
                let below = compare(
                    if inclusive { BinOp::Le } else { BinOp::Lt },
                    value,
                    hi,
                    span,
                );
                compare(BinOp::And, above, below, span)
            }
            syn::Pat::Or(o) => {
                let mut any: Option<Expr> = None;
                for case in &o.cases {
                    let Some(t) = self.pattern_test(case, local)? else {
                        return Ok(None);
                    };
                    any = Some(match any {
                        None => t,
                        Some(a) => compare(BinOp::Or, a, t, span),
                    });
                }
                any.ok_or_else(|| err(o, "an empty pattern", HINT))?
            }
            syn::Pat::Paren(p) => return self.pattern_test(&p.pat, local),
            other => return Err(err(other, "unsupported pattern", HINT)),
        }))
    }

    /// An arm's test: its pattern (or catch-all binding) and guard.
    fn arm_test(&mut self, arm: &syn::Arm, local: LocalId) -> syn::Result<ArmTest> {
        let (pattern, binds) = match &arm.pat {
            syn::Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                (None, Some(pi.ident.to_string()))
            }
            p => (self.pattern_test(p, local)?, None),
        };
        let guard = match &arm.guard {
            None => None,
            Some((_, g)) => Some(self.scoped(|l| {
                if let Some(name) = &binds {
                    l.bind(name.clone(), Binding::Local(local));
                }
                l.unhoistable(
                    "a `match` guard is evaluated only when its pattern matches",
                    |l| l.expect(g, Scalar::Bool),
                )
            })?),
        };
        let cond = match (pattern, guard) {
            (None, None) => None,
            (Some(c), None) | (None, Some(c)) => Some(c),
            (Some(p), Some(g)) => {
                let span = g.span;
                Some(Expr {
                    kind: ExprKind::Binary {
                        op: BinOp::And,
                        lhs: Box::new(p),
                        rhs: Box::new(g),
                    },
                    ty: Scalar::Bool,
                    span,
                })
            }
        };
        Ok(ArmTest { cond, binds })
    }

    /// A `match` statement: the scrutinee's assignment, then the `if`
    /// chain, into `out`.
    pub(super) fn match_stmt(
        &mut self,
        m: &syn::ExprMatch,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<()> {
        let (first, local) = self.scrutinee(m)?;
        out.push(first);
        let mut arms = Vec::new();
        for arm in &m.arms {
            let test = self.arm_test(arm, local)?;
            let body = self.scoped(|l| {
                if let Some(name) = &test.binds {
                    l.bind(name.clone(), Binding::Local(local));
                }
                let mut body = Vec::new();
                match &*arm.body {
                    syn::Expr::Block(b) if b.label.is_none() => {
                        body = l.body(&b.block)?;
                    }
                    e => l.expr_stmt(e, &mut body)?,
                }
                Ok(body)
            })?;
            let always = test.cond.is_none();
            arms.push((test.cond, body, self.span(arm)));
            if always {
                break;
            }
        }
        // The chain from the last arm back: each arm's `else` is the rest.
        let mut otherwise: Vec<Stmt> = Vec::new();
        for (cond, body, span) in arms.into_iter().rev() {
            otherwise = match cond {
                None => body,
                Some(cond) => vec![Stmt {
                    kind: StmtKind::If {
                        cond,
                        then: body,
                        otherwise,
                    },
                    span,
                }],
            };
        }
        out.extend(otherwise);
        Ok(())
    }

    /// A `match` as a value: every arm a value of one type, a catch-all last.
    pub(super) fn match_value(
        &mut self,
        m: &syn::ExprMatch,
        hint: Option<Scalar>,
    ) -> syn::Result<ValueIf> {
        let (first, local) = self.scrutinee(m)?;
        let mut ty = hint;
        let mut arms = Vec::new();
        let mut complete = false;
        for arm in &m.arms {
            let test = self.arm_test(arm, local)?;
            let value = self.scoped(|l| {
                if let Some(name) = &test.binds {
                    l.bind(name.clone(), Binding::Local(local));
                }
                match &*arm.body {
                    syn::Expr::Block(b) if b.label.is_none() => l.value_block(&b.block, ty),
                    e => {
                        // Calls in the arm's value run only in this arm.
                        let (stmts, value) = l.capture(|l| l.expr(e, ty))?;
                        Ok(ValueIf::Value { stmts, value })
                    }
                }
            })?;
            if let Some(t) = ty.filter(|t| *t != value.ty()) {
                return Err(err(
                    &arm.body,
                    &format!("expected {t}, found {}", value.ty()),
                    "every arm's value has the first arm's type",
                ));
            }
            ty = Some(value.ty());
            complete = test.cond.is_none();
            arms.push((test.cond, value, self.span(arm)));
            if complete {
                break;
            }
        }
        if !complete {
            return Err(err(
                m,
                "a `match` used as a value needs a catch-all arm",
                "end it with `_ => ..`",
            ));
        }
        let (_, mut chain, _) = arms.pop().expect("a catch-all arm");
        for (cond, value, span) in arms.into_iter().rev() {
            chain = ValueIf::Branch {
                stmts: Vec::new(),
                cond: cond.expect("only the last arm is a catch-all"),
                then: Box::new(value),
                otherwise: Box::new(chain),
                span,
            };
        }
        Ok(chain.after(vec![first]))
    }
}
