//! The lowering: the accepted subset of Rust syntax to the kernel IR.
//!
//! One walk over the function's syntax tree builds the IR directly. Three
//! rules shape it:
//!
//! - **Everything outside the subset is refused here**, at the construct,
//!   with a one-line hint of what to write instead: `match` gets "use
//!   if/else", a `&mut` scalar parameter gets "copy it into a `let mut`
//!   local". A learner meets the language's edges as compiler errors, never
//!   as a wrong result later.
//! - **Types are settled while lowering**, so the IR that leaves is fully
//!   typed and nothing downstream infers. An unsuffixed literal takes its
//!   type from where it stands: in `i < n + 1` with `n: u32` the `1` is a
//!   `u32`; in `let c = 3;` with nothing to go by it is an `i32`, as in Rust.
//! - **Names resolve through a stack of scopes** ([`Binding`]), so
//!   `let x = x + 1;` makes a new local, as shadowing does in Rust, and a
//!   loop's variable dies with its loop.
//!
//! The walk is split by what it reads: [`statements`] (blocks, `let`,
//! assignments and stores, `if`, loops, shared-array declarations),
//! [`expressions`] (operators, names, casts, indexing), [`arrays`] (local
//! and shared arrays, 1-D and 2-D, and the places indexing them), [`calls`] (the
//! builtins: thread indices, math, shuffles, votes, atomics), [`values`]
//! (`if` as a value and `const` items, lowered to statements and literals),
//! [`helpers`] (calls of `#[helper]` functions, inlined),
//! [`matches`] (`match` on integers, lowered to `if` chains) and [`types`]
//! (Rust type names and literals). Every construct records a span
//! ([`crate::span`]) so analysis findings and simulator witnesses point back
//! at the source.

mod arrays;
mod calls;
mod expressions;
mod helpers;
mod matches;
mod statements;
mod types;
mod values;

use std::collections::HashMap;

use oxmera_kernel_ir::ir::*;
use proc_macro2::Span;
use quote::ToTokens;

use crate::span::{SpanInfo, err, first_last, token_text};
use types::{const_int, param_kind, scalar_type};

pub use helpers::Helpers;

/// The result of lowering.
pub struct Lowered {
    /// The kernel, with zeroed source spans (filled by the emitted code).
    pub kernel: Kernel,
    /// Span table of the user's tokens, parallel to `kernel.snippets`.
    pub spans: Vec<SpanInfo>,
}

/// What a name in scope stands for.
#[derive(Clone, Copy)]
enum Binding {
    /// A `let` local or a loop variable.
    Local(LocalId),
    /// A kernel parameter: a scalar or a buffer.
    Param(ParamId, ParamKind),
    /// A const generic (specialization constant).
    Spec(SpecId),
    /// A `shared::<T>(N)` array, writable or (passed to a helper as
    /// `&[T]`) read-only.
    Shared(SharedId, bool),
    /// A `const` item inside the kernel: a name for a literal.
    Const(Value),
    /// A thread's own array (`let mut a = [0.0; 4];`), mutable or not.
    Array(ArrayId, bool),
}

/// The state of one walk: the kernel being built, its span table, the
/// scopes of names and how many loops enclose the current statement (so a
/// `break` outside any is refused).
struct Lowering {
    kernel: Kernel,
    spans: Vec<SpanInfo>,
    scopes: Vec<HashMap<String, Binding>>,
    loops: usize,
    /// The helpers this kernel may call.
    helpers: Helpers,
    /// Statements of inlined helper calls, waiting to be placed before the
    /// statement whose expressions called them.
    pending: Vec<Stmt>,
    /// Why a call cannot be placed before the current statement, while
    /// lowering a place evaluated conditionally or repeatedly.
    no_hoist: Option<&'static str>,
    /// The helpers being inlined, outermost first (to refuse recursion).
    inlining: Vec<String>,
    /// The address of the call standing in statement position, if any
    /// (see [`Lowering::at_statement`]).
    statement_call: usize,
    /// Atomics lowered so far, and how many had been when the current
    /// statement (or branch) began: a call placed before its statement
    /// must not pass an atomic the source evaluates first.
    atomics: usize,
    atomics_before: usize,
}

/// Lowers one function of the kernel subset, with the launch space its
/// attribute declared.
pub fn lower(f: &syn::ItemFn, launch: LaunchSpace) -> syn::Result<Lowered> {
    lower_with(f, launch, &Helpers::new())
}

/// Lowers one kernel that may call the given helper functions (see
/// [`helpers`]).
pub fn lower_with(f: &syn::ItemFn, launch: LaunchSpace, helpers: &Helpers) -> syn::Result<Lowered> {
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
            "bound a type parameter where it is declared (`T: Float`)",
        ));
    }
    let mut l = Lowering {
        kernel: Kernel {
            name: sig.ident.to_string(),
            params: Vec::new(),
            specs: Vec::new(),
            locals: Vec::new(),
            shared: Vec::new(),
            arrays: Vec::new(),
            body: Vec::new(),
            launch,
            spans: Vec::new(),
            snippets: Vec::new(),
            source: SourceText::default(),
            inlined: Vec::new(),
            type_args: Vec::new(),
        },
        spans: Vec::new(),
        scopes: vec![HashMap::new()],
        loops: 0,
        helpers: helpers.clone(),
        pending: Vec::new(),
        no_hoist: None,
        inlining: Vec::new(),
        statement_call: 0,
        atomics: 0,
        atomics_before: 0,
    };
    // Span 0 is the kernel's name: kernel-level findings point at it.
    l.span(&sig.ident);
    for g in &sig.generics.params {
        let c = match g {
            syn::GenericParam::Const(c) => c,
            // The front doors substitute type parameters before lowering
            // (crate::generics); one reaching here came another way.
            syn::GenericParam::Type(_) => {
                return Err(err(
                    g,
                    "a type parameter must be substituted before lowering",
                    "lower generic kernels with `generics::lower_instances`",
                ));
            }
            syn::GenericParam::Lifetime(_) => {
                return Err(err(
                    g,
                    "kernels take no lifetime parameters",
                    "declare a specialization constant as `const TILE: u32 = 16` or an element type as `T: Float`",
                ));
            }
        };
        let ty = scalar_type(&c.ty)
            .filter(|t| matches!(t, Scalar::U32 | Scalar::I32))
            .ok_or_else(|| {
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
        let id = l.kernel.specs.len() as SpecId;
        l.kernel.specs.push(SpecConst {
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
            if let syn::Type::Array(_) = &*pt.ty {
                return err(&pt.ty, "arrays are not kernel parameters", "pass a buffer `&[T]` and copy what each thread needs into a local array `let mut a = [0.0f32; N];`");
            }
            err(&pt.ty, "unsupported parameter type", "use a scalar (f32, f64, f16, bf16, i32, i64, u32, u64, u8, u16, bool), `&[T]` (read-only buffer) or `&mut [T]` (writable buffer)")
        })?;
        let id = l.kernel.params.len() as ParamId;
        let span = l.span(pt);
        l.kernel.params.push(Param {
            name: pi.ident.to_string(),
            kind,
            span,
        });
        l.bind(pi.ident.to_string(), Binding::Param(id, kind));
    }
    l.kernel.body = l.block(&f.block.stmts)?;
    Ok(Lowered {
        kernel: l.kernel,
        spans: l.spans,
    })
}

impl Lowering {
    fn span<T: ToTokens>(&mut self, node: &T) -> SpanId {
        let ts = node.to_token_stream();
        let (first, last, last_len) =
            first_last(ts.clone()).unwrap_or((Span::call_site(), Span::call_site(), 0));
        self.spans.push(SpanInfo {
            first,
            last,
            last_len,
        });
        self.kernel.snippets.push(token_text(ts));
        (self.spans.len() - 1) as SpanId
    }

    fn bind(&mut self, name: String, b: Binding) {
        self.scopes.last_mut().expect("scope").insert(name, b);
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn new_local(&mut self, name: String, ty: Scalar, mutable: bool, span: SpanId) -> LocalId {
        let id = self.kernel.locals.len() as LocalId;
        self.kernel.locals.push(Local {
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

    #[test]
    fn value_ifs_and_consts_are_refused_where_they_would_change_meaning() {
        let msg = |f: syn::ItemFn| lowered(f).err().map(|e| e.to_string()).unwrap_or_default();
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [f32], n: u32) { let v = if n > 0 { 1.0 }; out[0] = v; }
        });
        assert!(m.contains("needs an `else`"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(x: &[f32], out: &mut [u32], n: u32) {
                let i = thread_idx_x();
                let ok = i < n && (if x[i] > 0.0 { true } else { false });
                out[i] = ok as u32;
            }
        });
        assert!(m.contains("only as a `let`'s value"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [f32], n: u32) { let v = if n > 0 { 1u32 } else { 2.0 }; }
        });
        assert!(m.contains("expected u32, found f32"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [f32], n: u32) { let v = if n > 0 { 1.0; } else { 2.0 }; }
        });
        assert!(m.contains("this branch has no value"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [f32], n: u32) { const C: u32 = n; out[0] = 1.0; }
        });
        assert!(m.contains("a constant's value is a literal"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [f32]) { const C: u32 = 1; C = 2; }
        });
        assert!(m.contains("only locals can be assigned"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [f32]) { fn helper() {} }
        });
        assert!(m.contains("items other than `const`"), "{m}");
    }

    #[test]
    fn a_value_if_names_its_local_after_the_branches() {
        // In the branches `x` is the outer one, as in Rust.
        let k = lowered(syn::parse_quote! {
            fn k(out: &mut [u32], n: u32) {
                let x = 1u32;
                let x = if n > 0 { x + 1 } else { x };
                out[0] = x;
            }
        })
        .unwrap();
        assert_eq!(k.locals.len(), 2);
        oxmera_kernel_ir::validate::validate(&k).unwrap();
    }

    #[test]
    fn a_match_value_needs_a_catch_all_and_one_type() {
        let msg = |f: syn::ItemFn| lowered(f).err().map(|e| e.to_string()).unwrap_or_default();
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [u32], n: u32) { let v = match n { 0 => 1u32, 1 => 2 }; out[0] = v; }
        });
        assert!(m.contains("needs a catch-all arm"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [u32], n: u32) { let v = match n { 0 => 1u32, _ => 2.0 }; }
        });
        assert!(m.contains("expected u32, found f32"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [u32], n: u32) { match n { 0..=2 => {}, (a, b) => {} } }
        });
        assert!(m.contains("unsupported pattern"), "{m}");
        let m = msg(syn::parse_quote! {
            fn k(out: &mut [u32], n: i32) { match n { 1u32 => {}, _ => {} } }
        });
        assert!(m.contains("expected a i32 pattern, found u32"), "{m}");
        // A statement `match` may leave values unmatched.
        lowered(syn::parse_quote! {
            fn k(out: &mut [u32], n: u32) { match n { 0 => out[0] = 1, 1 => {} } }
        })
        .unwrap();
    }
}
