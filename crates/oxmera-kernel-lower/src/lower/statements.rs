//! Statements: blocks and scopes, `let` (locals; arrays are [`super::arrays`]'s),
//! assignments and stores (plain and compound), `if`/`else`, `for` over a
//! range, `while`, `loop`, `break`, `continue`, `return` and the barrier.
//!
//! A `for` loop's variable takes its type from whichever end of the range
//! is typed (`for i in 0..n` with `n: u32` counts in `u32`), and a compound
//! assignment `out[i] += x` is lowered to a load, the operation and a store
//! of the same element, which is exactly what the race analysis must see.

use oxmera_kernel_ir::ir::*;

use super::types::{scalar_type, untyped};
use super::values::as_branching;
use super::{Binding, Lowering};
use crate::span::err;

impl Lowering {
    pub(super) fn block(&mut self, stmts: &[syn::Stmt]) -> syn::Result<Vec<Stmt>> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out)?;
        }
        Ok(out)
    }

    pub(super) fn body(&mut self, b: &syn::Block) -> syn::Result<Vec<Stmt>> {
        self.scoped(|l| l.block(&b.stmts))
    }

    pub(super) fn stmt(&mut self, s: &syn::Stmt, out: &mut Vec<Stmt>) -> syn::Result<()> {
        match s {
            syn::Stmt::Local(local) => self.flushing(out, |l, out| l.let_stmt(local, out)),
            syn::Stmt::Item(syn::Item::Const(c)) => self.const_item(c),
            syn::Stmt::Item(i) => Err(err(
                i,
                "items other than `const` are not allowed inside a kernel",
                "write `const N: u32 = 16;` for a constant, or a `const N: u32 = 16` generic of the kernel for one a launch may change",
            )),
            syn::Stmt::Macro(m) => Err(err(
                m,
                "macros are not part of the kernel language",
                "write the computation with the builtins",
            )),
            syn::Stmt::Expr(e, _) => self.expr_stmt(e, out),
        }
    }

    pub(super) fn let_stmt(&mut self, local: &syn::Local, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let (pat, ann) = match &local.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        if let (syn::Pat::Tuple(t), Some(init)) = (pat, &local.init) {
            if ann.is_none() && init.diverge.is_none() {
                return self.let_tuple(t, &init.expr, out);
            }
        }
        let syn::Pat::Ident(pi) = pat else {
            return Err(err(
                pat,
                "bindings are plain names",
                "write `let x = ..;` (tuples only from a helper returning one)",
            ));
        };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            return Err(err(pat, "bindings are plain names", "remove `ref`/`@`"));
        }
        let Some(init) = &local.init else {
            return Err(err(
                local,
                "a `let` needs an initial value",
                "write `let mut x = 0u32;`",
            ));
        };
        if let Some((_, d)) = &init.diverge {
            return Err(err(
                d,
                "`let ... else` is not supported",
                "use `if` and `return`",
            ));
        }
        let name = pi.ident.to_string();
        if self.local_array_decl(local, &name, pi.mutability.is_some(), ann, &init.expr, out)? {
            return Ok(());
        }
        if let Some(sh) = self.shared_decl(&init.expr, &name)? {
            if let Some(h) = self.inlining.last() {
                return Err(err(
                    &init.expr,
                    &format!("a shared array declared inside the helper `{h}`"),
                    "declare it in the kernel and pass it to the helper as `&mut [T]`",
                ));
            }
            self.bind(name, Binding::Shared(sh, true));
            return Ok(());
        }
        let hint = match ann {
            Some(t) => Some(scalar_type(t).ok_or_else(|| {
                err(
                    t,
                    "locals are scalars or arrays of them",
                    "use a scalar type (f32, f64, f16, bf16, i32, i64, u32, u64, u8, u16, bool), or an array `let mut a = [0.0f32; 4];`",
                )
            })?),
            None => None,
        };
        let span = self.span(local);
        if let Some(i) = as_branching(&init.expr) {
            // `let x = if c { a } else { b };`: the branches assign `x`,
            // which is named only after them (as in Rust, where `x` in a
            // branch is an outer `x`).
            let value = self.branching_value(i, hint)?;
            if let Some(h) = hint.filter(|h| *h != value.ty()) {
                return Err(err(
                    &init.expr,
                    &format!("expected {h}, found {}", value.ty()),
                    &format!("convert with `as {h}`"),
                ));
            }
            let id = self.new_local(name, value.ty(), pi.mutability.is_some(), span);
            out.extend(value.assign_to(id));
            return Ok(());
        }
        self.at_statement(&init.expr);
        let value = self.expr(&init.expr, hint)?;
        if let Some(h) = hint {
            if h != value.ty {
                return Err(err(
                    &init.expr,
                    &format!("expected {h}, found {}", value.ty),
                    &format!("convert with `as {h}`"),
                ));
            }
        }
        let id = self.new_local(name, value.ty, pi.mutability.is_some(), span);
        out.push(Stmt {
            kind: StmtKind::Assign { local: id, value },
            span,
        });
        Ok(())
    }

    pub(super) fn const_expr(&mut self, e: &syn::Expr) -> syn::Result<ConstExpr> {
        let hint = "a length is built from integer literals, const generics and + - * /";
        Ok(match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => ConstExpr::Lit(i.base10_parse().map_err(|_| err(i, "bad length", hint))?),
            syn::Expr::Paren(p) => self.const_expr(&p.expr)?,
            syn::Expr::Path(p) => {
                match p.path.get_ident().and_then(|i| self.lookup(&i.to_string())) {
                    Some(Binding::Spec(s)) => ConstExpr::Spec(s),
                    Some(Binding::Const(Value::U32(v))) => ConstExpr::Lit(u64::from(v)),
                    Some(Binding::Const(Value::I32(v))) if v >= 0 => ConstExpr::Lit(v as u64),
                    _ => return Err(err(p, "not a compile-time constant", hint)),
                }
            }
            syn::Expr::Binary(b) => {
                let (x, y) = (
                    Box::new(self.const_expr(&b.left)?),
                    Box::new(self.const_expr(&b.right)?),
                );
                match b.op {
                    syn::BinOp::Add(_) => ConstExpr::Add(x, y),
                    syn::BinOp::Sub(_) => ConstExpr::Sub(x, y),
                    syn::BinOp::Mul(_) => ConstExpr::Mul(x, y),
                    syn::BinOp::Div(_) => ConstExpr::Div(x, y),
                    _ => return Err(err(b, "unsupported operator in a length", hint)),
                }
            }
            _ => return Err(err(e, "not a compile-time constant", hint)),
        })
    }

    /// An expression statement, with the helper calls its expressions make
    /// placed before it.
    pub(super) fn expr_stmt(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) -> syn::Result<()> {
        self.flushing(out, |l, out| l.expr_stmt_here(e, out))
    }

    fn expr_stmt_here(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let span = self.span(e);
        let kind = match e {
            syn::Expr::Assign(a) if as_branching(&a.right).is_some() => {
                self.assign_if(&a.left, None, &a.right, out)?
            }
            syn::Expr::Binary(b)
                if compound(&b.op).is_some() && as_branching(&b.right).is_some() =>
            {
                self.assign_if(&b.left, compound(&b.op), &b.right, out)?
            }
            syn::Expr::Assign(a) => self.assign(&a.left, None, &a.right)?,
            syn::Expr::Binary(b) if compound(&b.op).is_some() => {
                self.assign(&b.left, compound(&b.op), &b.right)?
            }
            syn::Expr::If(i) => self.if_stmt(i)?,
            syn::Expr::Match(m) => return self.match_stmt(m, out),
            syn::Expr::ForLoop(f) => self.for_stmt(f)?,
            syn::Expr::While(w) => {
                if let Some(l) = &w.label {
                    return Err(err(
                        l,
                        "loop labels are not supported",
                        "restructure with a flag variable",
                    ));
                }
                if let syn::Expr::Let(lt) = &*w.cond {
                    return Err(err(
                        lt,
                        "`while let` is not supported",
                        "use `while cond { .. }`",
                    ));
                }
                let cond = self.unhoistable(
                    "a `while` condition is evaluated before every iteration",
                    |l| l.expect(&w.cond, Scalar::Bool),
                )?;
                self.loops += 1;
                let body = self.body(&w.body);
                self.loops -= 1;
                StmtKind::While { cond, body: body? }
            }
            syn::Expr::Loop(lp) => {
                if let Some(l) = &lp.label {
                    return Err(err(
                        l,
                        "loop labels are not supported",
                        "restructure with a flag variable",
                    ));
                }
                let cond = Expr {
                    kind: ExprKind::Lit(Value::Bool(true)),
                    ty: Scalar::Bool,
                    span,
                };
                self.loops += 1;
                let body = self.body(&lp.body);
                self.loops -= 1;
                StmtKind::While { cond, body: body? }
            }
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    return Err(err(b, "`break` takes no label or value", "write `break;`"));
                }
                if self.loops == 0 {
                    return Err(err(
                        b,
                        "`break` outside a loop",
                        "put it inside `for`/`while`/`loop`",
                    ));
                }
                StmtKind::Break
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    return Err(err(c, "`continue` takes no label", "write `continue;`"));
                }
                if self.loops == 0 {
                    return Err(err(
                        c,
                        "`continue` outside a loop",
                        "put it inside `for`/`while`/`loop`",
                    ));
                }
                StmtKind::Continue
            }
            syn::Expr::Return(r) => {
                if let Some(h) = self.inlining.last() {
                    return Err(err(
                        r,
                        &format!("`return` inside the helper `{h}` is not supported yet"),
                        "end the helper with its value (an `if` as a value can choose it)",
                    ));
                }
                if let Some(v) = &r.expr {
                    return Err(err(
                        v,
                        "kernels return no value",
                        "write results into a buffer, then `return;`",
                    ));
                }
                StmtKind::Return
            }
            syn::Expr::Block(b) => {
                if b.label.is_some() {
                    return Err(err(b, "block labels are not supported", "remove the label"));
                }
                let inner = self.body(&b.block)?;
                out.extend(inner);
                return Ok(());
            }
            syn::Expr::Call(c) if is_call_to(c, "sync_threads") => {
                if !c.args.is_empty() {
                    return Err(err(
                        c,
                        "`sync_threads` takes no arguments",
                        "write `sync_threads();`",
                    ));
                }
                StmtKind::Barrier
            }
            syn::Expr::Call(c) if is_call_to(c, "sync_warp") => {
                if c.args.len() != 1 {
                    return Err(err(
                        c,
                        "`sync_warp` takes one argument, the mask of the lanes taking part",
                        "write `sync_warp(0xffff_ffff);` for the whole warp",
                    ));
                }
                StmtKind::WarpSync {
                    mask: self.expect(&c.args[0], Scalar::U32)?,
                }
            }
            syn::Expr::Call(c) if is_call_to(c, "thread_fence") => {
                if !c.args.is_empty() {
                    return Err(err(
                        c,
                        "`thread_fence` takes no arguments",
                        "write `thread_fence();`",
                    ));
                }
                StmtKind::Fence
            }
            syn::Expr::Call(c) if self.helper(&super::calls::call_name(c)).is_some() => {
                // A helper called for its effect: its statements are the
                // statement, and a value it returns is dropped.
                self.at_statement(e);
                let f = self.helper(&super::calls::call_name(c)).expect("checked");
                self.inline_call(c, &f, span)?;
                return Ok(());
            }
            syn::Expr::Call(_) | syn::Expr::MethodCall(_) => StmtKind::Eval(self.expr(e, None)?),
            syn::Expr::Paren(p) => return self.expr_stmt(&p.expr, out),
            _ => {
                // A specific complaint about the expression beats a generic one.
                self.expr(e, None)?;
                return Err(err(
                    e,
                    "this expression does nothing as a statement",
                    "assign its value with `let` or `=`",
                ));
            }
        };
        out.push(Stmt { kind, span });
        Ok(())
    }

    pub(super) fn assign(
        &mut self,
        left: &syn::Expr,
        op: Option<BinOp>,
        right: &syn::Expr,
    ) -> syn::Result<StmtKind> {
        self.assign_from(left, op, right, None)
    }

    /// An assignment whose right side is `right`, or, when `computed` is
    /// given, the local that already holds its value (a value `if`).
    fn assign_from(
        &mut self,
        left: &syn::Expr,
        op: Option<BinOp>,
        right: &syn::Expr,
        computed: Option<LocalId>,
    ) -> syn::Result<StmtKind> {
        let rhs_of = |l: &mut Self, ty: Scalar, span: SpanId| match computed {
            Some(local) => Ok(Expr {
                kind: ExprKind::Local(local),
                ty,
                span,
            }),
            None => {
                l.at_statement(right);
                l.expect(right, ty)
            }
        };
        match left {
            syn::Expr::Path(p) => {
                let name = p
                    .path
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                if let Some(Binding::Array(..)) = self.lookup(&name) {
                    return Err(err(
                        p,
                        &format!("`{name}` is an array: it is not assigned as a whole"),
                        &format!("store its elements, `{name}[i] = ..`, in a loop"),
                    ));
                }
                let Some(Binding::Local(id)) = self.lookup(&name) else {
                    return Err(err(
                        p,
                        "only locals can be assigned",
                        "declare a local with `let mut`, or store into a `&mut [T]` buffer",
                    ));
                };
                let l = &self.kernel.locals[id as usize];
                if !l.mutable {
                    return Err(err(
                        p,
                        &format!("`{name}` is not mutable"),
                        &format!("declare it with `let mut {name}`"),
                    ));
                }
                let ty = l.ty;
                let rspan = self.span(right);
                let rhs = rhs_of(self, ty, rspan)?;
                let value = match op {
                    None => rhs,
                    Some(op) => {
                        let cur = Expr {
                            kind: ExprKind::Local(id),
                            ty,
                            span: rspan,
                        };
                        self.binary_typed(op, cur, rhs, rspan, right)?
                    }
                };
                Ok(StmtKind::Assign { local: id, value })
            }
            syn::Expr::Index(ix) => {
                let (mem, elem, index) = self.place(ix, true)?;
                let rspan = self.span(right);
                let rhs = rhs_of(self, elem, rspan)?;
                let value = match op {
                    None => rhs,
                    Some(op) => {
                        let cur = Expr {
                            kind: ExprKind::Load {
                                mem,
                                index: Box::new(index.clone()),
                            },
                            ty: elem,
                            span: rspan,
                        };
                        self.binary_typed(op, cur, rhs, rspan, right)?
                    }
                };
                Ok(StmtKind::Store { mem, index, value })
            }
            _ => Err(err(
                left,
                "cannot assign to this",
                "assign to a `let mut` local or to `buf[i]`",
            )),
        }
    }

    /// `target = if ..` and `target op= if ..`: the value `if` computed
    /// first (into the local itself for a plain assignment to a local, else
    /// into a hidden one), then the assignment of it.
    pub(super) fn assign_if(
        &mut self,
        left: &syn::Expr,
        op: Option<BinOp>,
        right: &syn::Expr,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<StmtKind> {
        let i = as_branching(right).expect("checked by the caller");
        let target = match left {
            syn::Expr::Path(p) => match p.path.get_ident().map(|id| id.to_string()) {
                Some(name) => match self.lookup(&name) {
                    Some(Binding::Local(id)) => Some((id, name)),
                    _ => None,
                },
                None => None,
            },
            _ => None,
        };
        if let (Some((id, name)), None) = (&target, op) {
            let local = &self.kernel.locals[*id as usize];
            if !local.mutable {
                return Err(err(
                    left,
                    &format!("`{name}` is not mutable"),
                    &format!("declare it with `let mut {name}`"),
                ));
            }
            let ty = local.ty;
            let value = self.branching_value(i, Some(ty))?;
            let mut stmts = value.assign_to(*id);
            // The last statement is the assignment's own; the rest go first.
            let last = stmts.pop().expect("an if statement");
            out.extend(stmts);
            return Ok(last.kind);
        }
        let ty = match left {
            syn::Expr::Index(ix) => self.place(ix, true)?.1,
            _ => match &target {
                Some((id, _)) => self.kernel.locals[*id as usize].ty,
                None => {
                    return Err(err(
                        left,
                        "cannot assign to this",
                        "assign to a `let mut` local or to `buf[i]`",
                    ));
                }
            },
        };
        let temp = self.if_into_temporary(i, ty, out)?;
        self.assign_from(left, op, right, Some(temp))
    }

    pub(super) fn memory(&mut self, e: &syn::Expr, write: bool) -> syn::Result<(Mem, Scalar)> {
        let hint = "index a buffer parameter, a `shared::<T>(N)` array or a local array by name";
        let syn::Expr::Path(p) = e else {
            return Err(err(e, "only named buffers can be indexed", hint));
        };
        let name = p
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match self.lookup(&name) {
            Some(Binding::Param(id, ParamKind::Buffer { elem, writable })) => {
                if write && !writable {
                    return Err(err(
                        p,
                        &format!("`{name}` is a read-only buffer"),
                        &format!("declare it as `{name}: &mut [{elem}]`"),
                    ));
                }
                Ok((Mem::Global(id), elem))
            }
            Some(Binding::Shared(id, writable)) => {
                if write && !writable {
                    return Err(err(
                        p,
                        &format!("`{name}` is a read-only shared array here"),
                        &format!("declare the helper's parameter as `{name}: &mut [..]`"),
                    ));
                }
                Ok((Mem::Shared(id), self.kernel.shared[id as usize].elem))
            }
            Some(Binding::Array(id, mutable)) => {
                if write && !mutable {
                    return Err(err(
                        p,
                        &format!("`{name}` is not mutable"),
                        &format!("declare it with `let mut {name}`"),
                    ));
                }
                Ok((Mem::Local(id), self.kernel.arrays[id as usize].elem))
            }
            _ => Err(err(p, &format!("`{name}` is not a buffer"), hint)),
        }
    }

    pub(super) fn index(&mut self, e: &syn::Expr) -> syn::Result<Expr> {
        let i = self.expr(e, Some(Scalar::U32))?;
        if !matches!(i.ty, Scalar::U32 | Scalar::I32) {
            return Err(err(
                e,
                &format!("an index must be u32 or i32, found {}", i.ty),
                "convert with `as u32`",
            ));
        }
        Ok(i)
    }

    pub(super) fn if_stmt(&mut self, i: &syn::ExprIf) -> syn::Result<StmtKind> {
        if let syn::Expr::Let(lt) = &*i.cond {
            return Err(err(
                lt,
                "`if let` is not supported",
                "use a boolean condition",
            ));
        }
        let cond = self.expect(&i.cond, Scalar::Bool)?;
        let then = self.body(&i.then_branch)?;
        let otherwise = match &i.else_branch {
            None => Vec::new(),
            Some((_, e)) => match &**e {
                syn::Expr::Block(b) => self.body(&b.block)?,
                syn::Expr::If(inner) => {
                    // Calls in the `else if` condition stay in the `else`.
                    let span = self.span(inner);
                    let (mut stmts, kind) = self.capture(|l| l.if_stmt(inner))?;
                    stmts.push(Stmt { kind, span });
                    stmts
                }
                other => return Err(err(other, "unsupported else branch", "write `else { .. }`")),
            },
        };
        Ok(StmtKind::If {
            cond,
            then,
            otherwise,
        })
    }

    pub(super) fn for_stmt(&mut self, f: &syn::ExprForLoop) -> syn::Result<StmtKind> {
        let hint = "write `for i in a..b` or `for i in (a..b).step_by(s)`";
        if let Some(l) = &f.label {
            return Err(err(
                l,
                "loop labels are not supported",
                "restructure with a flag variable",
            ));
        }
        let syn::Pat::Ident(pi) = &*f.pat else {
            return Err(err(&f.pat, "the loop variable is a plain name", hint));
        };
        let (range, step) = match &*f.expr {
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (strip_paren(&m.receiver), Some(&m.args[0]))
            }
            e => (strip_paren(e), None),
        };
        let syn::Expr::Range(r) = range else {
            return Err(err(&f.expr, "a `for` loop runs over a range", hint));
        };
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        let (Some(a), Some(b)) = (&r.start, &r.end) else {
            return Err(err(r, "the range needs both ends", hint));
        };
        // The loop variable's type comes from whichever end is typed.
        let (start, end) = if untyped(a) && !untyped(b) {
            let end = self.expr(b, None)?;
            (self.expect(a, end.ty)?, end)
        } else {
            let start = self.expr(a, if untyped(a) { Some(Scalar::U32) } else { None })?;
            let end = self.expect(b, start.ty)?;
            (start, end)
        };
        if !matches!(start.ty, Scalar::U32 | Scalar::I32) {
            return Err(err(a, "a `for` loop counts in u32 or i32", hint));
        }
        let ty = start.ty;
        let sspan = self.span(&f.expr);
        let step = match step {
            Some(s) => {
                let e = self.expect(s, ty)?;
                // A step is a count (Rust's `step_by` takes a `usize`, and
                // panics on 0): a literal one that is 0 or negative can only
                // be a mistake. One computed at run time is the simulator's
                // to check (0 stops it; a negative i32 reads as its u32 bits,
                // a step past any bound, as `s as usize` would).
                match literal_value(&e) {
                    Some(0) => {
                        return Err(err(
                            s,
                            "`step_by(0)` never advances (Rust panics on a zero step)",
                            "step by 1 or more",
                        ));
                    }
                    Some(v) if v < 0 => {
                        return Err(err(
                            s,
                            "a `step_by` step is a count and cannot be negative",
                            "to count down, loop over `(0..n)` and use `n - 1 - i`",
                        ));
                    }
                    _ => {}
                }
                e
            }
            None => Expr {
                kind: ExprKind::Lit(if ty == Scalar::U32 {
                    Value::U32(1)
                } else {
                    Value::I32(1)
                }),
                ty,
                span: sspan,
            },
        };
        let vspan = self.span(&f.pat);
        let (var, body) = self.scoped(|l| {
            let var = l.new_local(pi.ident.to_string(), ty, false, vspan);
            l.loops += 1;
            let body = l.block(&f.body.stmts);
            l.loops -= 1;
            Ok((var, body?))
        })?;
        Ok(StmtKind::For {
            var,
            start,
            end,
            inclusive,
            step,
            body,
        })
    }
}

/// The value of an integer literal, or of a negated one.
fn literal_value(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Lit(Value::I32(v)) => Some(i64::from(*v)),
        ExprKind::Lit(Value::U32(v)) => Some(i64::from(*v)),
        ExprKind::Unary { op: UnOp::Neg, arg } => literal_value(arg).map(|v| -v),
        _ => None,
    }
}

pub(super) fn strip_paren(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_paren(&p.expr),
        e => e,
    }
}

pub(super) fn is_call_to(c: &syn::ExprCall, name: &str) -> bool {
    matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident(name))
}

pub(super) fn compound(op: &syn::BinOp) -> Option<BinOp> {
    use syn::BinOp as S;
    Some(match op {
        S::AddAssign(_) => BinOp::Add,
        S::SubAssign(_) => BinOp::Sub,
        S::MulAssign(_) => BinOp::Mul,
        S::DivAssign(_) => BinOp::Div,
        S::RemAssign(_) => BinOp::Rem,
        S::BitXorAssign(_) => BinOp::BitXor,
        S::BitAndAssign(_) => BinOp::BitAnd,
        S::BitOrAssign(_) => BinOp::BitOr,
        S::ShlAssign(_) => BinOp::Shl,
        S::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}
