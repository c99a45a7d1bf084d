//! Helper functions, inlined where they are called.
//!
//! A CUDA programmer factors a kernel into `__device__` functions: the
//! offset of a strided element, a warp's sum, one step of a scan. Here a
//! helper is an ordinary function marked `#[helper]`, beside the kernels
//! that call it (in one `#[kernels] mod`, or one file for the command
//! line), and a call `strided_offset(i, ..)` is **inlined**: the helper's
//! body is lowered again at every call, with its parameters bound to the
//! arguments, so the IR, the analysis, the simulator and every emitter see
//! one flat kernel and nothing new. GPU compilers inline device functions
//! almost always anyway, and WGSL cannot take a storage buffer as a
//! function argument, so an inlined copy is also what runs.
//!
//! The rules, each with the mistake it prevents:
//!
//! - **A call is evaluated where it stands, once.** Its statements are
//!   placed before the statement that holds the call (the arguments first,
//!   in order, as Rust evaluates them), and the call's value is a hidden
//!   local. Where an expression is evaluated conditionally or repeatedly —
//!   the right side of `&&`/`||`, a `while` condition, a `match` guard —
//!   placing it before would run it when the source would not (a load the
//!   guard was there to prevent), so a call there is refused with the
//!   rewrite as the hint. The branches of a value `if`/`match` keep their
//!   calls inside the branch.
//! - **A helper that writes memory or waits at a barrier is a statement.**
//!   It may stand as a statement of its own or as the whole right side of a
//!   `let`, an assignment or a store; inside a larger expression its writes
//!   would move ahead of reads written before it. A helper that only reads
//!   and computes may be called in any expression.
//! - **An atomic before a call in one statement is refused**: the call
//!   would run first. An atomic inside the call's arguments is fine (Rust
//!   evaluates them before the call too).
//! - **A helper sees only its parameters.** Its body is lowered in a scope
//!   of its own: the caller's locals, const generics and loops are not
//!   visible (as in Rust), so `break` inside a helper cannot leave the
//!   caller's loop. Scalars are passed by value (a `mut` parameter is the
//!   helper's own copy); buffers and shared arrays by name, `&[T]` or
//!   `&mut [T]` as the caller may grant.
//! - **Findings name both places.** Every span lowered from a helper's body
//!   is recorded under its call ([`InlinedCall`]), so a barrier inside a
//!   helper called under a divergent branch is reported at the call, with
//!   the barrier's own line beside it.
//! - Not (yet) in a helper: `return` (end with the value instead),
//!   recursion (a GPU has no call stack to grow), shared-array declarations
//!   (declare them in the kernel and pass them in), generics.
//!
//! [`InlinedCall`]: oxmera_kernel_ir::ir::InlinedCall

use std::collections::HashMap;
use std::rc::Rc;

use oxmera_kernel_ir::ir::*;

use super::calls::{builtin_named, math_named};
use super::types::{param_kind, scalar_type};
use super::values::as_branching;
use super::{Binding, Lowering};
use crate::span::err;

/// The helper functions a kernel may call, by name.
#[derive(Clone, Default)]
pub struct Helpers {
    fns: HashMap<String, Rc<syn::ItemFn>>,
}

impl Helpers {
    /// No helpers.
    pub fn new() -> Self {
        Helpers::default()
    }

    /// Adds a `#[helper]` function; refuses a second one of the same name
    /// and a name a builtin already has (the builtin would win every call).
    pub fn add(&mut self, f: &syn::ItemFn) -> syn::Result<()> {
        let name = f.sig.ident.to_string();
        let builtin = builtin_named(&name).is_some()
            || math_named(&name).is_some()
            || RESERVED.contains(&name.as_str())
            || AtomicOp::ALL.iter().any(|op| op.name() == name);
        if builtin {
            return Err(err(
                &f.sig.ident,
                &format!("`{name}` is the name of a builtin"),
                "rename the helper",
            ));
        }
        if self.fns.contains_key(&name) {
            return Err(err(
                &f.sig.ident,
                &format!("a second helper named `{name}`"),
                "rename one of them",
            ));
        }
        self.fns.insert(name, Rc::new(f.clone()));
        Ok(())
    }

    fn get(&self, name: &str) -> Option<Rc<syn::ItemFn>> {
        self.fns.get(name).cloned()
    }
}

/// Builtin names that are not in the builtin tables.
const RESERVED: [&str; 12] = [
    "sync_threads",
    "sync_warp",
    "thread_fence",
    "shared",
    "from_bits",
    "shfl_xor_sync",
    "shfl_down_sync",
    "shfl_up_sync",
    "shfl_sync",
    "ballot_sync",
    "any_sync",
    "all_sync",
];

/// A parameter of the helper, resolved against the call's argument.
enum Bound {
    /// A scalar: a fresh local holding the argument's value.
    Scalar(String, Expr, bool, SpanId),
    /// A buffer or shared array, bound by name.
    Memory(String, Binding),
}

impl Lowering {
    /// The helper `name`, if the kernel's scope has one.
    pub(super) fn helper(&self, name: &str) -> Option<Rc<syn::ItemFn>> {
        self.helpers.get(name)
    }

    /// Runs `f` with a fresh buffer for hoisted statements and returns the
    /// statements it hoisted: for a place whose calls must stay inside
    /// (a branch's value, an `else if` condition).
    pub(super) fn capture<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> syn::Result<T>,
    ) -> syn::Result<(Vec<Stmt>, T)> {
        let saved = std::mem::take(&mut self.pending);
        // Atomics lowered from here on are evaluated before a later call in
        // the same place, which must then not be placed before them.
        let before = std::mem::replace(&mut self.atomics_before, self.atomics);
        let r = f(self);
        self.atomics_before = before;
        let hoisted = std::mem::replace(&mut self.pending, saved);
        Ok((hoisted, r?))
    }

    /// Runs `f` where a call cannot be placed before the statement, for
    /// the reason given.
    pub(super) fn unhoistable<T>(
        &mut self,
        why: &'static str,
        f: impl FnOnce(&mut Self) -> syn::Result<T>,
    ) -> syn::Result<T> {
        let saved = self.no_hoist.replace(why);
        let r = f(self);
        self.no_hoist = saved;
        r
    }

    /// Lowers one statement-level construct into `out`, with the calls its
    /// expressions hoisted placed first.
    pub(super) fn flushing(
        &mut self,
        out: &mut Vec<Stmt>,
        f: impl FnOnce(&mut Self, &mut Vec<Stmt>) -> syn::Result<()>,
    ) -> syn::Result<()> {
        let mut own = Vec::new();
        let (hoisted, ()) = self.capture(|l| f(l, &mut own))?;
        out.extend(hoisted);
        out.extend(own);
        Ok(())
    }

    /// Marks `e` as standing in statement position (a statement of its own,
    /// or the whole right side of a `let` or an assignment), where a helper
    /// with effects may be called.
    pub(super) fn at_statement(&mut self, e: &syn::Expr) {
        // The node's address names it: the syntax tree outlives the walk,
        // and a helper's body, lowered again at every call, puts the same
        // node in the same position each time.
        self.statement_call = match super::statements::strip_paren(e) {
            syn::Expr::Call(c) => c as *const syn::ExprCall as usize,
            _ => 0,
        };
    }

    /// Inlines a call of the helper `f`: its statements go to the pending
    /// buffer, and the result is the local holding its value (`None` for a
    /// helper that returns nothing).
    pub(super) fn inline_call(
        &mut self,
        c: &syn::ExprCall,
        f: &syn::ItemFn,
        span: SpanId,
    ) -> syn::Result<Option<Expr>> {
        let name = f.sig.ident.to_string();
        let mut values = self.inline_values(c, f, span)?;
        match values.len() {
            0 | 1 => Ok(values.pop()),
            n => Err(err(
                c,
                &format!("the helper `{name}` returns {n} values"),
                &format!("bind them with `let (a, b, ..) = {name}(..);`"),
            )),
        }
    }

    /// Inlines a call as [`Lowering::inline_call`] does and returns every
    /// value it returns (none, one, or a tuple's).
    pub(super) fn inline_values(
        &mut self,
        c: &syn::ExprCall,
        f: &syn::ItemFn,
        span: SpanId,
    ) -> syn::Result<Vec<Expr>> {
        let name = f.sig.ident.to_string();
        if let Some(why) = self.no_hoist {
            return Err(err(
                c,
                &format!("a call of the helper `{name}` cannot stand here: {why}"),
                "compute it with `let` before, or use `if` inside the loop",
            ));
        }
        if self.atomics > self.atomics_before {
            return Err(err(
                c,
                &format!(
                    "the helper `{name}` is called after an atomic in the same statement, but a \
                     call runs before its statement"
                ),
                "bind the atomic's result with `let` on a line of its own first",
            ));
        }
        if self.inlining.contains(&name) {
            return Err(err(
                c,
                &format!(
                    "the helper `{name}` calls itself (through {})",
                    self.inlining.join(" -> ")
                ),
                "a GPU thread has no call stack to recurse on: write a loop",
            ));
        }
        let in_statement = self.statement_call == c as *const syn::ExprCall as usize;
        self.statement_call = 0;
        let sig = &f.sig;
        check_signature(sig)?;
        if c.args.len() != sig.inputs.len() {
            return Err(err(
                c,
                &format!(
                    "the helper `{name}` takes {} arguments, {} given",
                    sig.inputs.len(),
                    c.args.len()
                ),
                "check the call against the helper's signature",
            ));
        }
        let returns = return_types(&sig.output)?;
        // The arguments, in the caller's scope, in order.
        let mut bound = Vec::new();
        for (input, arg) in sig.inputs.iter().zip(&c.args) {
            bound.push(self.bind_argument(input, arg, &name)?);
        }
        let first = self.spans.len() as SpanId;
        // The body, in a scope of its own.
        let scopes = std::mem::replace(&mut self.scopes, vec![HashMap::new()]);
        let loops = std::mem::replace(&mut self.loops, 0);
        self.inlining.push(name.clone());
        let body = self.capture(|l| l.helper_body(f, bound, returns));
        self.inlining.pop();
        self.loops = loops;
        self.scopes = scopes;
        let (hoisted, (mut stmts, value)) = body?;
        debug_assert!(hoisted.is_empty(), "the body flushes its own statements");
        if !in_statement && has_effects(&stmts) {
            return Err(err(
                c,
                &format!(
                    "this call of `{name}` writes memory or waits at a barrier (in the helper or \
                     its arguments), so it is called as a statement"
                ),
                &format!("write `{name}(..);` or `let v = {name}(..);` on its own line"),
            ));
        }
        let end = self.spans.len() as SpanId;
        self.kernel.inlined.push(InlinedCall {
            helper: name.clone(),
            call: span,
            spans: first..end,
        });
        let mut results = Vec::new();
        for v in value {
            let ty = v.ty;
            // Unbound: the name is for the printer and the emitters.
            let id = self.new_local(format!("{name}_value"), ty, false, span);
            self.scopes
                .last_mut()
                .expect("scope")
                .remove(&format!("{name}_value"));
            stmts.push(Stmt {
                kind: StmtKind::Assign {
                    local: id,
                    value: v,
                },
                span,
            });
            results.push(Expr {
                kind: ExprKind::Local(id),
                ty,
                span,
            });
        }
        self.pending.extend(stmts);
        Ok(results)
    }

    /// `let (a, b) = helper(..);`: a helper's tuple, one new local per
    /// name (`_` drops a value); anything else in a tuple pattern is
    /// refused.
    pub(super) fn let_tuple(
        &mut self,
        pat: &syn::PatTuple,
        init: &syn::Expr,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<()> {
        let hint = "a tuple pattern takes the values of a helper returning a tuple: \
                    `let (lo, hi) = minmax(a, b);`";
        let syn::Expr::Call(c) = super::statements::strip_paren(init) else {
            return Err(err(init, "only a helper's tuple can be destructured", hint));
        };
        let Some(f) = self.helper(&super::calls::call_name(c)) else {
            return Err(err(init, "only a helper's tuple can be destructured", hint));
        };
        self.at_statement(init);
        let span = self.span(c);
        let values = self.inline_values(c, &f, span)?;
        if values.len() != pat.elems.len() || values.len() < 2 {
            return Err(err(
                pat,
                &format!(
                    "`{}` returns {} values, the pattern names {}",
                    f.sig.ident,
                    values.len(),
                    pat.elems.len()
                ),
                hint,
            ));
        }
        for (p, v) in pat.elems.iter().zip(values) {
            let (name, mutable) = match p {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    (pi.ident.to_string(), pi.mutability.is_some())
                }
                syn::Pat::Wild(_) => continue,
                other => return Err(err(other, "tuple elements are plain names", hint)),
            };
            let span = self.span(p);
            let id = self.new_local(name, v.ty, mutable, span);
            out.push(Stmt {
                kind: StmtKind::Assign {
                    local: id,
                    value: v,
                },
                span,
            });
        }
        Ok(())
    }

    /// Lowers one argument against the helper parameter `input`.
    fn bind_argument(
        &mut self,
        input: &syn::FnArg,
        arg: &syn::Expr,
        helper: &str,
    ) -> syn::Result<Bound> {
        let syn::FnArg::Typed(pt) = input else {
            return Err(err(input, "helpers are free functions", "remove `self`"));
        };
        let syn::Pat::Ident(pi) = &*pt.pat else {
            return Err(err(
                &pt.pat,
                "parameters are plain names",
                "write `name: type`",
            ));
        };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            return Err(err(
                &pt.pat,
                "parameters are plain names",
                "remove `ref`/`@`",
            ));
        }
        let pname = pi.ident.to_string();
        let kind = param_kind(&pt.ty).ok_or_else(|| {
            err(
                &pt.ty,
                "unsupported helper parameter type",
                "use a scalar type (f32, f64, f16, bf16, i32, i64, u32, u64, u8, u16, bool), `&[T]` or `&mut [T]` (arrays `[T; N]` are not passed: pass elements as scalars)",
            )
        })?;
        match kind {
            ParamKind::Scalar(ty) => {
                let value = self.expect(arg, ty)?;
                let span = self.span(pt);
                Ok(Bound::Scalar(pname, value, pi.mutability.is_some(), span))
            }
            ParamKind::Buffer { elem, writable } => {
                let (mem, actual) = self.memory(arg, writable).map_err(|_| {
                    err(
                        arg,
                        &format!(
                            "`{pname}` of `{helper}` is a buffer: pass a buffer parameter or \
                             shared array by name"
                        ),
                        &format!("write `{helper}(.., name, ..)`"),
                    )
                })?;
                if let Mem::Local(_) = mem {
                    return Err(err(
                        arg,
                        &format!("the local array passed as `{pname}` of `{helper}`"),
                        "arrays are not passed to helpers: pass its elements as scalars, or do the work in the kernel",
                    ));
                }
                if self.row_len_of(mem).is_some() {
                    return Err(err(
                        arg,
                        &format!("the 2-D shared array passed as `{pname}` of `{helper}`"),
                        "helpers take 1-D arrays: index the 2-D one in the kernel",
                    ));
                }
                if actual != elem {
                    return Err(err(
                        arg,
                        &format!("expected a [{elem}] buffer, found [{actual}]"),
                        "pass a buffer of the parameter's element type",
                    ));
                }
                let binding = match mem {
                    Mem::Global(id) => Binding::Param(id, ParamKind::Buffer { elem, writable }),
                    Mem::Shared(id) => Binding::Shared(id, writable),
                    Mem::Local(_) => unreachable!("refused above"),
                };
                Ok(Bound::Memory(pname, binding))
            }
        }
    }

    /// The helper's body with its parameters bound: its statements and its
    /// value.
    fn helper_body(
        &mut self,
        f: &syn::ItemFn,
        bound: Vec<Bound>,
        returns: Vec<Scalar>,
    ) -> syn::Result<(Vec<Stmt>, Vec<Expr>)> {
        let mut stmts = Vec::new();
        for b in bound {
            match b {
                Bound::Scalar(name, value, mutable, span) => {
                    let id = self.new_local(name, value.ty, mutable, span);
                    stmts.push(Stmt {
                        kind: StmtKind::Assign { local: id, value },
                        span,
                    });
                }
                Bound::Memory(name, binding) => self.bind(name, binding),
            }
        }
        if returns.is_empty() {
            stmts.extend(self.block(&f.block.stmts)?);
            return Ok((stmts, Vec::new()));
        }
        let hint = "end the helper with its value, without a semicolon: `{ .. ; v }`";
        let Some((syn::Stmt::Expr(tail, None), rest)) = f.block.stmts.split_last() else {
            return Err(err(
                &f.block,
                "this helper returns a value but ends without one",
                hint,
            ));
        };
        stmts.extend(self.block(rest)?);
        if returns.len() > 1 {
            let syn::Expr::Tuple(t) = super::statements::strip_paren(tail) else {
                return Err(err(
                    tail,
                    "this helper returns a tuple: end it with one",
                    "end with `(a, b)`",
                ));
            };
            if t.elems.len() != returns.len() {
                return Err(err(
                    t,
                    &format!("expected {} values, found {}", returns.len(), t.elems.len()),
                    "return as many values as the signature names",
                ));
            }
            let mut values = Vec::new();
            for (e, ty) in t.elems.iter().zip(returns) {
                values.push(self.returned(e, ty, &mut stmts)?);
            }
            return Ok((stmts, values));
        }
        let value = self.returned(tail, returns[0], &mut stmts)?;
        Ok((stmts, vec![value]))
    }

    /// One returned value of type `ty`, an `if`/`match` value included, its
    /// statements added to `stmts`.
    fn returned(
        &mut self,
        tail: &syn::Expr,
        ty: Scalar,
        stmts: &mut Vec<Stmt>,
    ) -> syn::Result<Expr> {
        let value = if let Some(b) = as_branching(tail) {
            let value = self.branching_value(b, Some(ty))?;
            let span = self.span(tail);
            let id = self.new_local("helper_value".into(), value.ty(), false, span);
            self.scopes
                .last_mut()
                .expect("scope")
                .remove("helper_value");
            stmts.extend(value.assign_to(id));
            Expr {
                kind: ExprKind::Local(id),
                ty: self.kernel.locals[id as usize].ty,
                span,
            }
        } else {
            let (hoisted, value) = self.capture(|l| l.expr(tail, Some(ty)))?;
            stmts.extend(hoisted);
            value
        };
        if value.ty != ty {
            return Err(err(
                tail,
                &format!("expected {ty}, found {}", value.ty),
                &format!("convert with `as {ty}`"),
            ));
        }
        Ok(value)
    }
}

/// The scalars a helper returns: none, one, or a tuple's.
fn return_types(output: &syn::ReturnType) -> syn::Result<Vec<Scalar>> {
    let hint = "return a scalar (f32, f64, f16, bf16, i32, i64, u32, u64, u8, u16, bool) or a tuple of them; write other results into a buffer";
    let syn::ReturnType::Type(_, t) = output else {
        return Ok(Vec::new());
    };
    if let syn::Type::Tuple(tt) = &**t {
        return tt
            .elems
            .iter()
            .map(|e| scalar_type(e).ok_or_else(|| err(e, "a tuple of scalars", hint)))
            .collect();
    }
    Ok(vec![scalar_type(t).ok_or_else(|| {
        err(t, "a helper returns scalars or nothing", hint)
    })?])
}

/// Refuses what a helper's signature may not have.
fn check_signature(sig: &syn::Signature) -> syn::Result<()> {
    if let Some(a) = &sig.asyncness {
        return Err(err(a, "helpers cannot be async", "remove `async`"));
    }
    if let Some(u) = &sig.unsafety {
        return Err(err(u, "helpers are not `unsafe`", "remove `unsafe`"));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(err(
            &sig.generics,
            "helpers take no generics yet",
            "pass sizes as `u32` parameters",
        ));
    }
    Ok(())
}

/// Whether lowered statements write memory, use an atomic or wait at a
/// barrier: what makes a call's position matter.
fn has_effects(stmts: &[Stmt]) -> bool {
    fn expr(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Atomic { .. } => true,
            ExprKind::Lit(_)
            | ExprKind::Local(_)
            | ExprKind::Param(_)
            | ExprKind::Spec(_)
            | ExprKind::Builtin(_) => false,
            ExprKind::Load { index, .. } => expr(index),
            ExprKind::Unary { arg, .. } => expr(arg),
            ExprKind::Binary { lhs, rhs, .. } => expr(lhs) || expr(rhs),
            ExprKind::Cast(a) | ExprKind::BitCast(a) => expr(a),
            ExprKind::Math { args, .. } => args.iter().any(expr),
            ExprKind::Shuffle {
                mask, value, arg, ..
            } => expr(mask) || expr(value) || expr(arg),
            ExprKind::Vote { mask, pred, .. } => expr(mask) || expr(pred),
        }
    }
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Store { .. }
        | StmtKind::Barrier
        | StmtKind::WarpSync { .. }
        | StmtKind::Fence => true,
        StmtKind::Assign { value, .. } => expr(value),
        StmtKind::Eval(e) => expr(e),
        StmtKind::If {
            cond,
            then,
            otherwise,
        } => expr(cond) || has_effects(then) || has_effects(otherwise),
        StmtKind::For {
            start,
            end,
            step,
            body,
            ..
        } => expr(start) || expr(end) || expr(step) || has_effects(body),
        StmtKind::While { cond, body } => expr(cond) || has_effects(body),
        StmtKind::Break | StmtKind::Continue | StmtKind::Return => false,
    })
}
