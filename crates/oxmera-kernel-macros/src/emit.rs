//! Emission: Rust code that rebuilds the lowered IR at run time.
//!
//! The IR is rebuilt rather than serialized so that the generated code is
//! plain, inspectable Rust and needs no parser at run time. Source locations
//! come from `line!()`/`column!()` spanned at the user's tokens, which works
//! on every supported compiler.

use std::cell::RefCell;

use oxmera_kernel_ir::ir::*;
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use oxmera_kernel_lower::span::SpanInfo;

thread_local! {
    /// The kernel crate's path in generated code: `::oxmera_kernel`, or
    /// `::NAME` under `#[kernel(crate = "NAME")]`. [`kernel_fn`] sets it for
    /// its expansion; a thread-local because every emitting function needs
    /// it and one expansion runs on one thread.
    static CRATE_PATH: RefCell<TokenStream> = RefCell::new(quote!(::oxmera_kernel));
}

/// The kernel crate in generated code.
fn krate() -> TokenStream {
    CRATE_PATH.with(|c| c.borrow().clone())
}

/// Path prefix of the IR types in generated code.
fn ir() -> TokenStream {
    let k = krate();
    quote!(#k::ir)
}

fn s(v: &str) -> TokenStream {
    let l = Literal::string(v);
    quote!(::std::string::String::from(#l))
}

fn ident_of<T: std::fmt::Debug>(v: T) -> TokenStream {
    let id = format_ident!("{}", format!("{v:?}"));
    quote!(#id)
}

fn scalar(t: Scalar) -> TokenStream {
    let ir = ir();
    let v = ident_of(t);
    quote!(#ir::Scalar::#v)
}

fn value(v: Value) -> TokenStream {
    let ir = ir();
    match v {
        Value::F32(x) => {
            let b = Literal::u32_suffixed(x.to_bits());
            quote!(#ir::Value::F32(f32::from_bits(#b)))
        }
        Value::I32(x) => {
            let b = Literal::i32_suffixed(x);
            quote!(#ir::Value::I32(#b))
        }
        Value::U32(x) => {
            let b = Literal::u32_suffixed(x);
            quote!(#ir::Value::U32(#b))
        }
        Value::Bool(x) => quote!(#ir::Value::Bool(#x)),
        // The wider and narrower types by their bit pattern: one form for
        // all, exact for every float (NaN payloads and -0.0 included).
        other => {
            let ty = scalar(other.ty());
            let b = Literal::u64_suffixed(other.to_bits());
            quote!(#ir::Value::from_bits(#ty, #b))
        }
    }
}

fn u32l(v: u32) -> Literal {
    Literal::u32_suffixed(v)
}

fn mem(m: Mem) -> TokenStream {
    let ir = ir();
    match m {
        Mem::Global(p) => {
            let p = u32l(p);
            quote!(#ir::Mem::Global(#p))
        }
        Mem::Shared(p) => {
            let p = u32l(p);
            quote!(#ir::Mem::Shared(#p))
        }
        Mem::Local(p) => {
            let p = u32l(p);
            quote!(#ir::Mem::Local(#p))
        }
    }
}

fn builtin(b: Builtin) -> TokenStream {
    let ir = ir();
    let ax = |a: Axis| {
        let v = ident_of(a);
        quote!(#ir::Axis::#v)
    };
    match b {
        Builtin::ThreadIdx(a) => {
            let a = ax(a);
            quote!(#ir::Builtin::ThreadIdx(#a))
        }
        Builtin::BlockIdx(a) => {
            let a = ax(a);
            quote!(#ir::Builtin::BlockIdx(#a))
        }
        Builtin::BlockDim(a) => {
            let a = ax(a);
            quote!(#ir::Builtin::BlockDim(#a))
        }
        Builtin::GridDim(a) => {
            let a = ax(a);
            quote!(#ir::Builtin::GridDim(#a))
        }
        Builtin::LaneId => quote!(#ir::Builtin::LaneId),
        Builtin::WarpId => quote!(#ir::Builtin::WarpId),
        Builtin::WarpSize => quote!(#ir::Builtin::WarpSize),
    }
}

fn bx(e: &Expr) -> TokenStream {
    let e = expr(e);
    quote!(::std::boxed::Box::new(#e))
}

fn expr(e: &Expr) -> TokenStream {
    let ir = ir();
    let ty = scalar(e.ty);
    let span = u32l(e.span);
    let kind = match &e.kind {
        ExprKind::Lit(v) => {
            let v = value(*v);
            quote!(#ir::ExprKind::Lit(#v))
        }
        ExprKind::Local(l) => {
            let l = u32l(*l);
            quote!(#ir::ExprKind::Local(#l))
        }
        ExprKind::Param(l) => {
            let l = u32l(*l);
            quote!(#ir::ExprKind::Param(#l))
        }
        ExprKind::Spec(l) => {
            let l = u32l(*l);
            quote!(#ir::ExprKind::Spec(#l))
        }
        ExprKind::Builtin(b) => {
            let b = builtin(*b);
            quote!(#ir::ExprKind::Builtin(#b))
        }
        ExprKind::Load { mem: m, index } => {
            let (m, i) = (mem(*m), bx(index));
            quote!(#ir::ExprKind::Load { mem: #m, index: #i })
        }
        ExprKind::Unary { op, arg } => {
            let (op, a) = (ident_of(*op), bx(arg));
            quote!(#ir::ExprKind::Unary { op: #ir::UnOp::#op, arg: #a })
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (op, a, b) = (ident_of(*op), bx(lhs), bx(rhs));
            quote!(#ir::ExprKind::Binary { op: #ir::BinOp::#op, lhs: #a, rhs: #b })
        }
        ExprKind::Cast(a) => {
            let a = bx(a);
            quote!(#ir::ExprKind::Cast(#a))
        }
        ExprKind::BitCast(a) => {
            let a = bx(a);
            quote!(#ir::ExprKind::BitCast(#a))
        }
        ExprKind::Math { func, args } => {
            let f = ident_of(*func);
            let a = args.iter().map(expr);
            quote!(#ir::ExprKind::Math { func: #ir::MathFn::#f, args: ::std::vec![#(#a),*] })
        }
        ExprKind::Shuffle {
            kind,
            mask,
            value,
            arg,
        } => {
            let (k, m, v, a) = (ident_of(*kind), bx(mask), bx(value), bx(arg));
            quote!(#ir::ExprKind::Shuffle { kind: #ir::ShuffleKind::#k, mask: #m, value: #v, arg: #a })
        }
        ExprKind::Vote { kind, mask, pred } => {
            let (k, m, p) = (ident_of(*kind), bx(mask), bx(pred));
            quote!(#ir::ExprKind::Vote { kind: #ir::VoteKind::#k, mask: #m, pred: #p })
        }
        ExprKind::Atomic {
            op,
            mem: m,
            index,
            value,
            compare,
        } => {
            let (o, m, i, v) = (ident_of(*op), mem(*m), bx(index), bx(value));
            let c = match compare {
                Some(c) => {
                    let c = bx(c);
                    quote!(::std::option::Option::Some(#c))
                }
                None => quote!(::std::option::Option::None),
            };
            quote!(#ir::ExprKind::Atomic { op: #ir::AtomicOp::#o, mem: #m, index: #i, value: #v, compare: #c })
        }
    };
    quote!(#ir::Expr { kind: #kind, ty: #ty, span: #span })
}

/// A block as a vector filled one statement at a time, and every compound
/// statement built by a function of its own. The IR of a large kernel is
/// thousands of nodes; written as one nested expression it became one
/// function in which every partly built node was a live temporary with its
/// own unwinding path, and LLVM's time grew much faster than the kernel
/// (minutes at `opt-level = 1` for a kernel of 18 inlined math functions).
/// Pushed statement by statement, only the vector is live between them;
/// split at the compound statements, no function is larger than one
/// statement's own expressions.
fn block(b: &[Stmt]) -> TokenStream {
    if b.is_empty() {
        return quote!(::std::vec::Vec::new());
    }
    let n = b.len();
    let items = b.iter().map(|st| {
        let built = stmt(st);
        match st.kind {
            StmtKind::If { .. } | StmtKind::For { .. } | StmtKind::While { .. } => {
                let ir = ir();
                quote!({
                    #[inline(never)]
                    fn part() -> #ir::Stmt {
                        #built
                    }
                    part()
                })
            }
            _ => built,
        }
    });
    quote!({
        let mut stmts = ::std::vec::Vec::with_capacity(#n);
        #(stmts.push(#items);)*
        stmts
    })
}

fn stmt(st: &Stmt) -> TokenStream {
    let ir = ir();
    let span = u32l(st.span);
    let kind = match &st.kind {
        StmtKind::Assign { local, value } => {
            let (l, v) = (u32l(*local), expr(value));
            quote!(#ir::StmtKind::Assign { local: #l, value: #v })
        }
        StmtKind::Store {
            mem: m,
            index,
            value,
        } => {
            let (m, i, v) = (mem(*m), expr(index), expr(value));
            quote!(#ir::StmtKind::Store { mem: #m, index: #i, value: #v })
        }
        StmtKind::Eval(e) => {
            let e = expr(e);
            quote!(#ir::StmtKind::Eval(#e))
        }
        StmtKind::If {
            cond,
            then,
            otherwise,
        } => {
            let (c, t, o) = (expr(cond), block(then), block(otherwise));
            quote!(#ir::StmtKind::If { cond: #c, then: #t, otherwise: #o })
        }
        StmtKind::For {
            var,
            start,
            end,
            inclusive,
            step,
            body,
        } => {
            let (v, a, b, s, bd) = (u32l(*var), expr(start), expr(end), expr(step), block(body));
            quote!(#ir::StmtKind::For { var: #v, start: #a, end: #b, inclusive: #inclusive, step: #s, body: #bd })
        }
        StmtKind::While { cond, body } => {
            let (c, b) = (expr(cond), block(body));
            quote!(#ir::StmtKind::While { cond: #c, body: #b })
        }
        StmtKind::Break => quote!(#ir::StmtKind::Break),
        StmtKind::Continue => quote!(#ir::StmtKind::Continue),
        StmtKind::Return => quote!(#ir::StmtKind::Return),
        StmtKind::Barrier => quote!(#ir::StmtKind::Barrier),
        StmtKind::WarpSync { mask } => {
            let m = expr(mask);
            quote!(#ir::StmtKind::WarpSync { mask: #m })
        }
        StmtKind::Fence => quote!(#ir::StmtKind::Fence),
    };
    quote!(#ir::Stmt { kind: #kind, span: #span })
}

fn const_expr(c: &ConstExpr) -> TokenStream {
    let ir = ir();
    let b = |c: &ConstExpr| {
        let e = const_expr(c);
        quote!(::std::boxed::Box::new(#e))
    };
    match c {
        ConstExpr::Lit(v) => {
            let v = Literal::u64_suffixed(*v);
            quote!(#ir::ConstExpr::Lit(#v))
        }
        ConstExpr::Spec(v) => {
            let v = u32l(*v);
            quote!(#ir::ConstExpr::Spec(#v))
        }
        ConstExpr::Add(x, y) => {
            let (x, y) = (b(x), b(y));
            quote!(#ir::ConstExpr::Add(#x, #y))
        }
        ConstExpr::Sub(x, y) => {
            let (x, y) = (b(x), b(y));
            quote!(#ir::ConstExpr::Sub(#x, #y))
        }
        ConstExpr::Mul(x, y) => {
            let (x, y) = (b(x), b(y));
            quote!(#ir::ConstExpr::Mul(#x, #y))
        }
        ConstExpr::Div(x, y) => {
            let (x, y) = (b(x), b(y));
            quote!(#ir::ConstExpr::Div(#x, #y))
        }
    }
}

fn dim(d: Dim3) -> TokenStream {
    let ir = ir();
    let (x, y, z) = (u32l(d.x), u32l(d.y), u32l(d.z));
    quote!(#ir::Dim3::new(#x, #y, #z))
}

/// The search spaces, rebuilt as written (the tuner reads them at run time).
fn search_spaces(spaces: &[oxmera_kernel_ir::space::SearchSpace]) -> TokenStream {
    use oxmera_kernel_ir::space::Operand;
    let k = krate();
    let operand = |o: Operand| match o {
        Operand::Lit(v) => {
            let v = u32l(v);
            quote!(#k::space::Operand::Lit(#v))
        }
        Operand::Spec(v) => {
            let v = u32l(v);
            quote!(#k::space::Operand::Spec(#v))
        }
        Operand::Block(a) => {
            let a = ident_of(a);
            quote!(#k::space::Operand::Block(#k::ir::Axis::#a))
        }
    };
    let items = spaces.iter().map(|sp| {
        let warp = match sp.warp {
            Some(w) => {
                let w = u32l(w);
                quote!(::core::option::Option::Some(#w))
            }
            None => quote!(::core::option::Option::None),
        };
        let blocks = sp.blocks.iter().map(|b| {
            let (x, y, z) = (operand(b[0]), operand(b[1]), operand(b[2]));
            quote!([#x, #y, #z])
        });
        let values = sp.values.iter().map(|(id, vals)| {
            let id = u32l(*id);
            let vals = vals.iter().map(|v| Literal::i64_suffixed(*v));
            quote!((#id, ::std::vec![#(#vals),*]))
        });
        let require = sp.require.iter().map(|r| {
            let (a, b) = (operand(r.dividend), operand(r.divisor));
            quote!(#k::space::Divisible { dividend: #a, divisor: #b })
        });
        quote!(#k::space::SearchSpace {
            warp: #warp,
            blocks: ::std::vec![#(#blocks),*],
            values: ::std::vec![#(#values),*],
            require: ::std::vec![#(#require),*],
        })
    });
    quote!(::std::vec![#(#items),*])
}

fn span_info(si: &SpanInfo) -> TokenStream {
    let ir = ir();
    let (f, l) = (si.first, si.last);
    let len = u32l(si.last_len);
    let line = quote_spanned!(f=> line!());
    let col = quote_spanned!(f=> column!());
    let eline = quote_spanned!(l=> line!());
    let ecol = quote_spanned!(l=> column!());
    quote!(#ir::SourceSpan { line: #line, column: #col, end_line: #eline, end_column: #ecol + #len })
}

/// Sets the kernel crate's path for the expansion under way: `::oxmera_kernel`,
/// or `::NAME` under `#[kernel(crate = "NAME")]`, spanned at the option so
/// a wrong name is reported there.
pub fn set_crate_path(crate_name: Option<&syn::LitStr>) {
    let path = match crate_name {
        Some(n) => {
            let id = syn::Ident::new(&n.value(), n.span());
            quote!(::#id)
        }
        None => quote!(::oxmera_kernel),
    };
    CRATE_PATH.with(|c| *c.borrow_mut() = path);
}

/// A block expression that builds the kernel once and returns it as
/// `&'static Kernel`: the body of every generated kernel function.
pub fn kernel_once(
    k: &Kernel,
    spans: &[SpanInfo],
    body_span: Span,
    body_text: Option<&str>,
) -> TokenStream {
    let krate = krate();
    let ir = ir();
    let kname = s(&k.name);
    let params = k.params.iter().map(|p| {
        let n = s(&p.name);
        let sp = u32l(p.span);
        let kind = match p.kind {
            ParamKind::Scalar(t) => {
                let t = scalar(t);
                quote!(#ir::ParamKind::Scalar(#t))
            }
            ParamKind::Buffer { elem, writable } => {
                let t = scalar(elem);
                quote!(#ir::ParamKind::Buffer { elem: #t, writable: #writable })
            }
        };
        quote!(#ir::Param { name: #n, kind: #kind, span: #sp })
    });
    let specs = k.specs.iter().map(|c| {
        let (n, t, d) = (s(&c.name), scalar(c.ty), Literal::i64_suffixed(c.default));
        quote!(#ir::SpecConst { name: #n, ty: #t, default: #d })
    });
    // The long lists (a kernel with inlined helpers has thousands of
    // locals and snippets) are tables of literals turned into owned values
    // by one loop: written as one `vec!` of `String::from` calls, each
    // string was a live temporary until the vector was whole (see
    // [`block`]).
    let locals = k.locals.iter().map(|l| {
        let (n, t, m, sp) = (
            Literal::string(&l.name),
            scalar(l.ty),
            l.mutable,
            u32l(l.span),
        );
        quote!((#n, #t, #m, #sp))
    });
    let row_len = |r: &Option<ConstExpr>| match r {
        Some(c) => {
            let c = const_expr(c);
            quote!(::core::option::Option::Some(#c))
        }
        None => quote!(::core::option::Option::None),
    };
    let shared = k.shared.iter().map(|a| {
        let (n, t, len, sp) = (s(&a.name), scalar(a.elem), const_expr(&a.len), u32l(a.span));
        let (rows, dynamic) = (row_len(&a.row_len), a.dynamic);
        quote!(#ir::SharedArray { name: #n, elem: #t, len: #len, row_len: #rows, dynamic: #dynamic, span: #sp })
    });
    let arrays = k.arrays.iter().map(|a| {
        let (n, t, len, sp) = (s(&a.name), scalar(a.elem), const_expr(&a.len), u32l(a.span));
        let rows = row_len(&a.row_len);
        quote!(#ir::LocalArray { name: #n, elem: #t, len: #len, row_len: #rows, span: #sp })
    });
    let blocks = k.launch.blocks.iter().map(|d| dim(*d));
    let grids = k.launch.grids.iter().map(|d| dim(*d));
    // The declared target travels by name (named targets print and parse
    // back exactly; the attribute only takes names).
    let target = match k.launch.target {
        Some(t) => {
            let name = Literal::string(&t.to_string());
            quote!(::core::option::Option::Some(
                <#krate::target::Target as ::core::str::FromStr>::from_str(#name)
                    .expect("a target name the macro parsed")
            ))
        }
        None => quote!(::core::option::Option::None),
    };
    let search = search_spaces(&k.launch.search);
    let body = block(&k.body);
    let span_items = spans.iter().map(span_info);
    let snippets = k.snippets.iter().map(|x| Literal::string(x));
    let inlined = k.inlined.iter().map(|c| {
        let (h, call) = (Literal::string(&c.helper), u32l(c.call));
        let (a, b) = (u32l(c.spans.start), u32l(c.spans.end));
        quote!((#h, #call, #a, #b))
    });
    let type_args = k.type_args.iter().map(|(n, t)| {
        let (n, t) = (s(n), scalar(*t));
        quote!((#n, #t))
    });
    let text = s(body_text.unwrap_or(""));
    let bline = quote_spanned!(body_span=> line!());
    let bcol = quote_spanned!(body_span=> column!());
    quote! {{
        static KERNEL: ::std::sync::OnceLock<#ir::Kernel> = ::std::sync::OnceLock::new();
        KERNEL.get_or_init(|| {
            let mut k = #ir::Kernel {
                name: #kname,
                params: ::std::vec![#(#params),*],
                specs: ::std::vec![#(#specs),*],
                locals: [#(#locals),*]
                    .into_iter()
                    .map(|(name, ty, mutable, span): (&str, #ir::Scalar, bool, u32)| #ir::Local {
                        name: ::std::string::String::from(name),
                        ty,
                        mutable,
                        span,
                    })
                    .collect(),
                shared: ::std::vec![#(#shared),*],
                arrays: ::std::vec![#(#arrays),*],
                body: #body,
                launch: #ir::LaunchSpace {
                    blocks: ::std::vec![#(#blocks),*],
                    grids: ::std::vec![#(#grids),*],
                    target: #target,
                    search: #search,
                },
                spans: ::std::vec![#(#span_items),*],
                snippets: [#(#snippets),*]
                    .into_iter()
                    .map(|x: &str| ::std::string::String::from(x))
                    .collect(),
                source: #ir::SourceText {
                    file: ::std::string::String::from(file!()),
                    first_line: #bline,
                    first_column: #bcol,
                    text: #text,
                },
                inlined: [#(#inlined),*]
                    .into_iter()
                    .map(|(helper, call, start, end): (&str, u32, u32, u32)| #ir::InlinedCall {
                        helper: ::std::string::String::from(helper),
                        call,
                        spans: start..end,
                    })
                    .collect(),
                type_args: ::std::vec![#(#type_args),*],
            };
            k.refresh_snippets();
            k
        })
    }}
}

/// The generated function that builds (once) and returns a kernel with no
/// type parameters: `fn flip() -> &'static Kernel`.
pub fn kernel_fn(
    k: &Kernel,
    spans: &[SpanInfo],
    vis: &syn::Visibility,
    attrs: &[syn::Attribute],
    body_span: Span,
    body_text: Option<&str>,
) -> TokenStream {
    let ir = ir();
    let name = format_ident!("{}", k.name);
    let once = kernel_once(k, spans, body_span, body_text);
    let doc = if attrs.iter().any(|a| a.path().is_ident("doc")) {
        quote!()
    } else {
        let d = format!("Builds the IR of the kernel `{}`.", k.name);
        quote!(#[doc = #d])
    };
    quote! {
        #(#attrs)*
        #doc
        // Spanned `line!()` literals confuse lints that read the source text.
        #[allow(clippy::all)]
        #vis fn #name() -> &'static #ir::Kernel #once
    }
}

/// The scalar's name as a type in generated code: through the kernel
/// crate's `dtype` module, which names every scalar (the primitives and
/// markers for those Rust lacks).
pub fn scalar_type(t: Scalar) -> TokenStream {
    let k = krate();
    let id = format_ident!("{}", t.name());
    quote!(#k::dtype::#id)
}

/// The IR's path in generated code.
pub fn ir_path() -> TokenStream {
    ir()
}
