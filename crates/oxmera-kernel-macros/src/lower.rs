//! Lowering: the accepted subset of Rust syntax to the kernel IR.
//!
//! Everything outside the subset is rejected here with a span on the
//! construct and a one-line hint. Types are resolved while lowering, so the
//! IR that leaves this module is fully typed.

use std::collections::HashMap;

use oxmera_kernel_ir::ir::*;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;

/// Where a span id points in the user's source.
pub struct SpanInfo {
    /// First token.
    pub first: Span,
    /// Last token.
    pub last: Span,
    /// Length in characters of the last token.
    pub last_len: u32,
}

/// The result of lowering.
pub struct Lowered {
    /// The kernel, with zeroed source spans (filled by the emitted code).
    pub kernel: Kernel,
    /// Span table of the user's tokens, parallel to `kernel.snippets`.
    pub spans: Vec<SpanInfo>,
}

fn err<T: ToTokens>(node: T, msg: &str, hint: &str) -> syn::Error {
    syn::Error::new_spanned(node, format!("{msg}; hint: {hint}"))
}

#[derive(Clone, Copy)]
enum Binding {
    Local(LocalId),
    Param(ParamId, ParamKind),
    Spec(SpecId),
    Shared(SharedId),
}

struct Lower {
    k: Kernel,
    spans: Vec<SpanInfo>,
    scopes: Vec<HashMap<String, Binding>>,
    loops: usize,
}

fn first_last(ts: TokenStream) -> Option<(Span, Span, u32)> {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    let first = toks.first()?.span();
    let (last, len) = match toks.last()? {
        // A one-line group is measured whole; a multi-line one by its closer.
        TokenTree::Group(g) => match g.span().source_text() {
            Some(t) if !t.contains('\n') => (g.span(), t.chars().count() as u32),
            _ => (g.span_close(), 1),
        },
        t => (t.span(), t.to_string().chars().count() as u32),
    };
    Some((first, last, len))
}

/// A readable snippet from tokens (exact text is restored at run time).
fn token_text(ts: TokenStream) -> String {
    let s = ts.to_string();
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = out.chars().last().unwrap_or(' ');
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            let glue_next = matches!(next, '(' | '[' | ')' | ']' | '.' | ',' | ';' | ':')
                && (prev.is_alphanumeric()
                    || prev == '_'
                    || matches!(prev, ')' | ']' | '>' | '(' | '['));
            let glue_prev =
                matches!(prev, '(' | '[' | '.' | '!' | ':') || (prev == '-' && out.len() == 1);
            if glue_next && next != ':' || glue_prev && prev != ':' {
                continue;
            }
            if next == ':' && chars.get(i + 2) == Some(&':') || prev == ':' && out.ends_with("::") {
                continue;
            }
        }
        out.push(c);
    }
    out
}

pub fn lower(f: &syn::ItemFn, launch: LaunchSpace) -> syn::Result<Lowered> {
    let sig = &f.sig;
    if let Some(a) = &sig.asyncness {
        return Err(err(a, "kernels cannot be async", "remove `async`"));
    }
    if let Some(u) = &sig.unsafety {
        return Err(err(
            u,
            "kernels are not `unsafe` functions",
            "remove `unsafe`; the simulator checks every access",
        ));
    }
    if let Some(a) = &sig.abi {
        return Err(err(
            a,
            "kernels have no ABI",
            "remove the `extern` qualifier",
        ));
    }
    if let syn::ReturnType::Type(_, t) = &sig.output {
        return Err(err(
            t,
            "kernels return nothing",
            "write results into a `&mut [T]` buffer parameter",
        ));
    }
    if let Some(w) = &sig.generics.where_clause {
        return Err(err(
            w,
            "kernels have no where clause",
            "use `const N: u32 = default` generics only",
        ));
    }
    let mut l = Lower {
        k: Kernel {
            name: sig.ident.to_string(),
            params: Vec::new(),
            specs: Vec::new(),
            locals: Vec::new(),
            shared: Vec::new(),
            body: Vec::new(),
            launch,
            spans: Vec::new(),
            snippets: Vec::new(),
            source: SourceText::default(),
        },
        spans: Vec::new(),
        scopes: vec![HashMap::new()],
        loops: 0,
    };
    // Span 0 is the kernel's name: kernel-level findings point at it.
    l.span(&sig.ident);
    for g in &sig.generics.params {
        let syn::GenericParam::Const(c) = g else {
            return Err(err(
                g,
                "kernels take only const generics",
                "declare a specialization constant as `const TILE: u32 = 16`",
            ));
        };
        let ty = scalar_type(&c.ty).filter(|t| t.is_int()).ok_or_else(|| {
            err(
                &c.ty,
                "specialization constants are u32 or i32",
                "write `const TILE: u32 = 16`",
            )
        })?;
        let Some(d) = &c.default else {
            return Err(err(
                c,
                "a specialization constant needs a default",
                "write `const TILE: u32 = 16`",
            ));
        };
        let default = const_int(d).ok_or_else(|| {
            err(
                d,
                "the default must be an integer literal",
                "write e.g. `= 16`",
            )
        })?;
        let id = l.k.specs.len() as SpecId;
        l.k.specs.push(SpecConst {
            name: c.ident.to_string(),
            ty,
            default,
        });
        l.bind(c.ident.to_string(), Binding::Spec(id));
    }
    for a in &sig.inputs {
        let syn::FnArg::Typed(pt) = a else {
            return Err(err(a, "kernels are free functions", "remove `self`"));
        };
        let syn::Pat::Ident(pi) = &*pt.pat else {
            return Err(err(
                &pt.pat,
                "parameters are plain names",
                "write `name: type`",
            ));
        };
        if pi.by_ref.is_some() || pi.mutability.is_some() || pi.subpat.is_some() {
            return Err(err(
                &pt.pat,
                "parameters are plain names",
                "remove `mut`/`ref`; copy a scalar into a `let mut` local to change it",
            ));
        }
        let kind = param_kind(&pt.ty).ok_or_else(|| {
            err(&pt.ty, "unsupported parameter type", "use f32, i32, u32, bool, `&[T]` (read-only buffer) or `&mut [T]` (writable buffer)")
        })?;
        let id = l.k.params.len() as ParamId;
        let span = l.span(pt);
        l.k.params.push(Param {
            name: pi.ident.to_string(),
            kind,
            span,
        });
        l.bind(pi.ident.to_string(), Binding::Param(id, kind));
    }
    l.k.body = l.block(&f.block.stmts)?;
    Ok(Lowered {
        kernel: l.k,
        spans: l.spans,
    })
}

fn scalar_type(t: &syn::Type) -> Option<Scalar> {
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

fn param_kind(t: &syn::Type) -> Option<ParamKind> {
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

fn const_int(e: &syn::Expr) -> Option<i64> {
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
fn untyped(e: &syn::Expr) -> bool {
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

type AxisBuiltin = fn(Axis) -> Builtin;

const AXIS_BUILTINS: [(&str, AxisBuiltin); 4] = [
    ("thread_idx_", Builtin::ThreadIdx),
    ("block_idx_", Builtin::BlockIdx),
    ("block_dim_", Builtin::BlockDim),
    ("grid_dim_", Builtin::GridDim),
];

fn builtin_named(name: &str) -> Option<Builtin> {
    match name {
        "lane_id" => return Some(Builtin::LaneId),
        "warp_id" => return Some(Builtin::WarpId),
        "warp_size" => return Some(Builtin::WarpSize),
        _ => {}
    }
    for (prefix, f) in AXIS_BUILTINS {
        if let Some(rest) = name.strip_prefix(prefix) {
            return match rest {
                "x" => Some(f(Axis::X)),
                "y" => Some(f(Axis::Y)),
                "z" => Some(f(Axis::Z)),
                _ => None,
            };
        }
    }
    None
}

fn math_named(name: &str) -> Option<MathFn> {
    Some(match name {
        "exp" => MathFn::Exp,
        "log" | "ln" => MathFn::Log,
        "sqrt" => MathFn::Sqrt,
        "rsqrt" => MathFn::Rsqrt,
        "fma" | "mul_add" => MathFn::Fma,
        "abs" => MathFn::Abs,
        "min" => MathFn::Min,
        "max" => MathFn::Max,
        "tanh" => MathFn::Tanh,
        "floor" => MathFn::Floor,
        "ceil" => MathFn::Ceil,
        _ => return None,
    })
}

impl Lower {
    fn span<T: ToTokens>(&mut self, node: &T) -> SpanId {
        let ts = node.to_token_stream();
        let (first, last, last_len) =
            first_last(ts.clone()).unwrap_or((Span::call_site(), Span::call_site(), 0));
        self.spans.push(SpanInfo {
            first,
            last,
            last_len,
        });
        self.k.snippets.push(token_text(ts));
        (self.spans.len() - 1) as SpanId
    }

    fn bind(&mut self, name: String, b: Binding) {
        self.scopes.last_mut().expect("scope").insert(name, b);
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn new_local(&mut self, name: String, ty: Scalar, mutable: bool, span: SpanId) -> LocalId {
        let id = self.k.locals.len() as LocalId;
        self.k.locals.push(Local {
            name: name.clone(),
            ty,
            mutable,
            span,
        });
        self.bind(name, Binding::Local(id));
        id
    }

    fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> syn::Result<T>) -> syn::Result<T> {
        self.scopes.push(HashMap::new());
        let r = f(self);
        self.scopes.pop();
        r
    }

    fn block(&mut self, stmts: &[syn::Stmt]) -> syn::Result<Vec<Stmt>> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out)?;
        }
        Ok(out)
    }

    fn body(&mut self, b: &syn::Block) -> syn::Result<Vec<Stmt>> {
        self.scoped(|l| l.block(&b.stmts))
    }

    fn stmt(&mut self, s: &syn::Stmt, out: &mut Vec<Stmt>) -> syn::Result<()> {
        match s {
            syn::Stmt::Local(local) => self.let_stmt(local, out),
            syn::Stmt::Item(i) => Err(err(
                i,
                "items are not allowed inside a kernel",
                "declare constants as `const N: u32 = ..` generics of the kernel",
            )),
            syn::Stmt::Macro(m) => Err(err(
                m,
                "macros are not part of the kernel language",
                "write the computation with the builtins",
            )),
            syn::Stmt::Expr(e, _) => self.expr_stmt(e, out),
        }
    }

    fn let_stmt(&mut self, local: &syn::Local, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let (pat, ann) = match &local.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        let syn::Pat::Ident(pi) = pat else {
            return Err(err(
                pat,
                "bindings are plain names",
                "write `let x = ..;` (no tuples or patterns)",
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
        if let Some(sh) = self.shared_decl(&init.expr, &name)? {
            self.bind(name, Binding::Shared(sh));
            return Ok(());
        }
        let hint = match ann {
            Some(t) => Some(
                scalar_type(t)
                    .ok_or_else(|| err(t, "locals are scalars", "use f32, i32, u32 or bool"))?,
            ),
            None => None,
        };
        let span = self.span(local);
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

    fn shared_decl(&mut self, e: &syn::Expr, name: &str) -> syn::Result<Option<SharedId>> {
        let syn::Expr::Call(c) = e else {
            return Ok(None);
        };
        let syn::Expr::Path(p) = &*c.func else {
            return Ok(None);
        };
        let Some(seg) = p.path.segments.last() else {
            return Ok(None);
        };
        if seg.ident != "shared" || p.path.segments.len() != 1 {
            return Ok(None);
        }
        let hint =
            "write `let s = shared::<f32>(LEN);` with LEN built from literals and const generics";
        let syn::PathArguments::AngleBracketed(ab) = &seg.arguments else {
            return Err(err(c, "a shared array needs its element type", hint));
        };
        let elem = match ab.args.first() {
            Some(syn::GenericArgument::Type(t)) if ab.args.len() == 1 => scalar_type(t),
            _ => None,
        }
        .ok_or_else(|| err(ab, "shared arrays hold f32, i32, u32 or bool", hint))?;
        if c.args.len() != 1 {
            return Err(err(c, "`shared` takes one length", hint));
        }
        let len = self.const_expr(&c.args[0])?;
        let span = self.span(e);
        let id = self.k.shared.len() as SharedId;
        self.k.shared.push(SharedArray {
            name: name.to_string(),
            elem,
            len,
            span,
        });
        Ok(Some(id))
    }

    fn const_expr(&mut self, e: &syn::Expr) -> syn::Result<ConstExpr> {
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

    fn expr_stmt(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let span = self.span(e);
        let kind = match e {
            syn::Expr::Assign(a) => self.assign(&a.left, None, &a.right)?,
            syn::Expr::Binary(b) if compound(&b.op).is_some() => {
                self.assign(&b.left, compound(&b.op), &b.right)?
            }
            syn::Expr::If(i) => self.if_stmt(i)?,
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
                let cond = self.expect(&w.cond, Scalar::Bool)?;
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

    fn assign(
        &mut self,
        left: &syn::Expr,
        op: Option<BinOp>,
        right: &syn::Expr,
    ) -> syn::Result<StmtKind> {
        match left {
            syn::Expr::Path(p) => {
                let name = p
                    .path
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                let Some(Binding::Local(id)) = self.lookup(&name) else {
                    return Err(err(
                        p,
                        "only locals can be assigned",
                        "declare a local with `let mut`, or store into a `&mut [T]` buffer",
                    ));
                };
                let l = &self.k.locals[id as usize];
                if !l.mutable {
                    return Err(err(
                        p,
                        &format!("`{name}` is not mutable"),
                        &format!("declare it with `let mut {name}`"),
                    ));
                }
                let ty = l.ty;
                let rspan = self.span(right);
                let rhs = self.expect(right, ty)?;
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
                let (mem, elem) = self.memory(&ix.expr, true)?;
                let index = self.index(&ix.index)?;
                let rspan = self.span(right);
                let rhs = self.expect(right, elem)?;
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

    fn memory(&mut self, e: &syn::Expr, write: bool) -> syn::Result<(Mem, Scalar)> {
        let hint = "index a buffer parameter or a `shared::<T>(N)` array by name";
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
            Some(Binding::Shared(id)) => Ok((Mem::Shared(id), self.k.shared[id as usize].elem)),
            _ => Err(err(p, &format!("`{name}` is not a buffer"), hint)),
        }
    }

    fn index(&mut self, e: &syn::Expr) -> syn::Result<Expr> {
        let i = self.expr(e, Some(Scalar::U32))?;
        if !i.ty.is_int() {
            return Err(err(
                e,
                &format!("an index must be u32 or i32, found {}", i.ty),
                "convert with `as u32`",
            ));
        }
        Ok(i)
    }

    fn if_stmt(&mut self, i: &syn::ExprIf) -> syn::Result<StmtKind> {
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
                    let span = self.span(inner);
                    let kind = self.if_stmt(inner)?;
                    vec![Stmt { kind, span }]
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

    fn for_stmt(&mut self, f: &syn::ExprForLoop) -> syn::Result<StmtKind> {
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
        if let syn::RangeLimits::Closed(c) = r.limits {
            return Err(err(
                c,
                "inclusive ranges are not supported",
                "write `a..b + 1`",
            ));
        }
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
        if !start.ty.is_int() {
            return Err(err(a, "a `for` loop counts in u32 or i32", hint));
        }
        let ty = start.ty;
        let sspan = self.span(&f.expr);
        let step = match step {
            Some(s) => self.expect(s, ty)?,
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
            step,
            body,
        })
    }

    fn expect(&mut self, e: &syn::Expr, ty: Scalar) -> syn::Result<Expr> {
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

    fn expr(&mut self, e: &syn::Expr, hint: Option<Scalar>) -> syn::Result<Expr> {
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
                    syn::UnOp::Neg(_) if matches!(arg.ty, Scalar::F32 | Scalar::I32) => UnOp::Neg,
                    syn::UnOp::Not(_) if arg.ty != Scalar::F32 => UnOp::Not,
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
                            "negate f32/i32; `!` on bool or integers",
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
                        self.expect(&b.right, Scalar::Bool)?,
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
                        "casts go to f32, i32, u32 or bool",
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
                let (mem, elem) = self.memory(&ix.expr, false)?;
                let index = self.index(&ix.index)?;
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
                let arg = self.expect(&m.receiver, Scalar::F32)?;
                mk(ExprKind::BitCast(Box::new(arg)), Scalar::U32)
            }
            syn::Expr::MethodCall(m) => {
                let f = math_named(&m.method.to_string())
                    .filter(|f| !matches!(f, MathFn::Rsqrt))
                    .ok_or_else(|| err(&m.method, "unsupported method", "math methods: exp, ln, sqrt, mul_add, abs, min, max, tanh, floor, ceil; bits: to_bits"))?;
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
                "`if` is a statement in kernels",
                "assign a `let mut` local in both branches",
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
                "`match` is not part of the kernel language",
                "use if/else",
            )),
            _ => Err(err(
                e,
                "this expression is not part of the kernel language",
                "see docs/kernels.md for the subset",
            )),
        }
    }

    fn binary_typed<T: ToTokens>(
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
            return Err(err(node, "shifts need integers", "shift u32 or i32 values"));
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

    fn math<T: ToTokens>(
        &mut self,
        f: MathFn,
        args: Vec<Expr>,
        span: SpanId,
        node: T,
    ) -> syn::Result<Expr> {
        if args.len() != f.arity() {
            return Err(err(
                node,
                &format!("`{}` takes {} arguments", f.name(), f.arity()),
                "check the call",
            ));
        }
        if args.iter().any(|a| a.ty != args[0].ty) {
            return Err(err(
                node,
                "math arguments must have one type",
                "convert with `as`",
            ));
        }
        let ty = oxmera_kernel_ir::eval::math_type(f, args[0].ty).ok_or_else(|| {
            err(
                &node,
                &format!("`{}` does not take {}", f.name(), args[0].ty),
                "most math intrinsics take f32",
            )
        })?;
        Ok(Expr {
            kind: ExprKind::Math { func: f, args },
            ty,
            span,
        })
    }

    fn path(&mut self, p: &syn::ExprPath, span: SpanId) -> syn::Result<Expr> {
        if p.path.segments.len() == 2 {
            let t = p.path.segments[0].ident.to_string();
            let c = p.path.segments[1].ident.to_string();
            let v = match (t.as_str(), c.as_str()) {
                ("u32", "MAX") => Value::U32(u32::MAX),
                ("u32", "MIN") => Value::U32(0),
                ("i32", "MAX") => Value::I32(i32::MAX),
                ("i32", "MIN") => Value::I32(i32::MIN),
                ("f32", "MAX") => Value::F32(f32::MAX),
                ("f32", "MIN") => Value::F32(f32::MIN),
                ("f32", "INFINITY") => Value::F32(f32::INFINITY),
                ("f32", "NEG_INFINITY") => Value::F32(f32::NEG_INFINITY),
                _ => {
                    return Err(err(
                        p,
                        "unknown constant",
                        "available: u32::MAX, i32::MIN/MAX, f32::MAX/MIN/INFINITY/NEG_INFINITY",
                    ));
                }
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
                ty: self.k.locals[l as usize].ty,
                span,
            }),
            Some(Binding::Param(pid, ParamKind::Scalar(t))) => Ok(Expr {
                kind: ExprKind::Param(pid),
                ty: t,
                span,
            }),
            Some(Binding::Spec(s)) => Ok(Expr {
                kind: ExprKind::Spec(s),
                ty: self.k.specs[s as usize].ty,
                span,
            }),
            Some(Binding::Param(..)) | Some(Binding::Shared(_)) => Err(err(
                p,
                &format!("`{name}` is a buffer"),
                &format!("read an element with `{name}[i]`"),
            )),
            None => Err(err(
                p,
                &format!("unknown name `{name}`"),
                "declare it with `let` before use",
            )),
        }
    }

    fn call(&mut self, c: &syn::ExprCall, hint: Option<Scalar>, span: SpanId) -> syn::Result<Expr> {
        let syn::Expr::Path(p) = &*c.func else {
            return Err(err(
                &c.func,
                "only builtins can be called",
                "see docs/kernels.md for the builtins",
            ));
        };
        let name = p
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_else(|| {
                p.path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default()
            });
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let arity = |n: usize| -> syn::Result<()> {
            if args.len() != n {
                return Err(err(
                    c,
                    &format!("`{name}` takes {n} arguments"),
                    "check the call",
                ));
            }
            Ok(())
        };
        if let Some(b) = builtin_named(&name) {
            arity(0)?;
            return Ok(Expr {
                kind: ExprKind::Builtin(b),
                ty: Scalar::U32,
                span,
            });
        }
        if name == "from_bits" {
            arity(1)?;
            let bits = self.expect(args[0], Scalar::U32)?;
            return Ok(Expr {
                kind: ExprKind::BitCast(Box::new(bits)),
                ty: Scalar::F32,
                span,
            });
        }
        if let Some(f) = math_named(&name) {
            arity(f.arity())?;
            let first = self.expr(args[0], hint.filter(|h| *h != Scalar::Bool))?;
            let mut v = vec![first];
            for a in &args[1..] {
                let ty = v[0].ty;
                v.push(self.expect(a, ty)?);
            }
            return self.math(f, v, span, c);
        }
        let shuffle = match name.as_str() {
            "shfl_xor_sync" => Some(ShuffleKind::Xor),
            "shfl_down_sync" => Some(ShuffleKind::Down),
            "shfl_up_sync" => Some(ShuffleKind::Up),
            "shfl_sync" => Some(ShuffleKind::Idx),
            _ => None,
        };
        if let Some(kind) = shuffle {
            arity(3)?;
            let mask = self.expect(args[0], Scalar::U32)?;
            let value = self.expr(args[1], hint)?;
            if value.ty == Scalar::Bool {
                return Err(err(
                    args[1],
                    "shuffles move numbers",
                    "shuffle `x as u32` and compare",
                ));
            }
            let arg = self.expect(args[2], Scalar::U32)?;
            let ty = value.ty;
            return Ok(Expr {
                kind: ExprKind::Shuffle {
                    kind,
                    mask: Box::new(mask),
                    value: Box::new(value),
                    arg: Box::new(arg),
                },
                ty,
                span,
            });
        }
        let vote = match name.as_str() {
            "ballot_sync" => Some((VoteKind::Ballot, Scalar::U32)),
            "any_sync" => Some((VoteKind::Any, Scalar::Bool)),
            "all_sync" => Some((VoteKind::All, Scalar::Bool)),
            _ => None,
        };
        if let Some((kind, ty)) = vote {
            arity(2)?;
            let mask = self.expect(args[0], Scalar::U32)?;
            let pred = self.expect(args[1], Scalar::Bool)?;
            return Ok(Expr {
                kind: ExprKind::Vote {
                    kind,
                    mask: Box::new(mask),
                    pred: Box::new(pred),
                },
                ty,
                span,
            });
        }
        let atomic = match name.as_str() {
            "atomic_add" => Some(AtomicOp::Add),
            "atomic_min" => Some(AtomicOp::Min),
            "atomic_max" => Some(AtomicOp::Max),
            "atomic_exch" => Some(AtomicOp::Exch),
            "atomic_cas" => Some(AtomicOp::Cas),
            _ => None,
        };
        if let Some(op) = atomic {
            arity(if op == AtomicOp::Cas { 4 } else { 3 })?;
            let (mem, elem) = self.memory(args[0], true)?;
            if elem == Scalar::Bool
                || (elem == Scalar::F32 && matches!(op, AtomicOp::Min | AtomicOp::Max))
            {
                return Err(err(
                    c,
                    &format!("`{name}` does not take {elem}"),
                    "atomic_min/max take i32 or u32; atomic_add takes f32, i32, u32",
                ));
            }
            let index = self.index(args[1])?;
            let compare = if op == AtomicOp::Cas {
                Some(Box::new(self.expect(args[2], elem)?))
            } else {
                None
            };
            let value = self.expect(args[args.len() - 1], elem)?;
            return Ok(Expr {
                kind: ExprKind::Atomic {
                    op,
                    mem,
                    index: Box::new(index),
                    value: Box::new(value),
                    compare,
                },
                ty: elem,
                span,
            });
        }
        match name.as_str() {
            "sync_threads" => Err(err(
                c,
                "`sync_threads()` is a statement",
                "call it on its own line",
            )),
            "shared" => Err(err(
                c,
                "shared arrays are declared with `let`",
                "write `let s = shared::<f32>(N);`",
            )),
            _ => Err(err(
                c,
                &format!("unknown function `{name}`"),
                "kernels call builtins only; see docs/kernels.md",
            )),
        }
    }
}

fn strip_paren(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_paren(&p.expr),
        e => e,
    }
}

fn is_call_to(c: &syn::ExprCall, name: &str) -> bool {
    matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident(name))
}

fn lit(l: &syn::Lit, hint: Option<Scalar>) -> syn::Result<Value> {
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

fn binop(op: &syn::BinOp) -> Option<BinOp> {
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

fn compound(op: &syn::BinOp) -> Option<BinOp> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(f: syn::ItemFn) -> syn::Result<Kernel> {
        lower(&f, LaunchSpace::default()).map(|l| l.kernel)
    }

    #[test]
    fn untyped_literals_take_the_type_of_their_context() {
        let k = lowered(syn::parse_quote! {
            fn k(out: &mut [f32], n: u32) {
                let a = n + 1;
                let b: i32 = 2;
                let c = 3;
                let d = 1.5;
                out[a] = d;
            }
        })
        .unwrap();
        let tys: Vec<Scalar> = k.locals.iter().map(|l| l.ty).collect();
        assert_eq!(
            tys,
            vec![Scalar::U32, Scalar::I32, Scalar::I32, Scalar::F32]
        );
        oxmera_kernel_ir::validate::validate(&k).unwrap();
    }

    #[test]
    fn shadowing_makes_a_new_local_and_loops_scope_their_variable() {
        let k = lowered(syn::parse_quote! {
            fn k(out: &mut [u32]) {
                let x = 1u32;
                let x = x + 1;
                for i in 0..x { out[i] = x; }
            }
        })
        .unwrap();
        assert_eq!(k.locals.len(), 3);
        assert_eq!(k.locals[2].name, "i");
    }

    #[test]
    fn errors_carry_a_hint() {
        let e = lowered(syn::parse_quote! {
            fn k(out: &mut [f32]) { let x = 1.0; x = 2.0; }
        })
        .err()
        .unwrap();
        assert!(
            e.to_string()
                .contains("not mutable; hint: declare it with `let mut x`"),
            "{e}"
        );
        let e = lowered(syn::parse_quote! {
            fn k(x: &[f32]) { x[0] = 1.0; }
        })
        .err()
        .unwrap();
        assert!(e.to_string().contains("read-only buffer; hint"), "{e}");
        let e = lowered(syn::parse_quote! {
            fn k(x: &[f32], n: u32) { let y = x[0] + n; }
        })
        .err()
        .unwrap();
        assert!(
            e.to_string().contains("mismatched types") || e.to_string().contains("expected"),
            "{e}"
        );
    }

    #[test]
    fn spec_constants_size_shared_arrays() {
        let k = lowered(syn::parse_quote! {
            fn k<const T: u32 = 8>(out: &mut [f32]) {
                let s = shared::<f32>(T * (T + 1));
                s[thread_idx_x()] = 1.0;
                out[0] = s[0];
            }
        })
        .unwrap();
        assert_eq!(k.shared_bytes(&k.default_specs()), Some(8 * 9 * 4));
    }
}
