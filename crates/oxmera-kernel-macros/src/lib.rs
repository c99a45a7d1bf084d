//! The `#[kernel]` attribute of oxmera.
//!
//! The attribute lowers an ordinary-looking Rust function written in the
//! kernel subset to the kernel IR — with the lowering of
//! `oxmera-kernel-lower`, the same one the command line uses on kernel
//! files — and replaces the function by one of the same name that returns
//! the IR (`fn flip() -> &'static Kernel`). Anything outside the subset is
//! a compile error at its span, with a hint.
//!
//! When the attribute declares a launch space (`#[kernel(block = [32, 64])]`)
//! the macro runs the convergence analysis of `oxmera-kernel-ir` for each
//! declared launch at compile time and turns every confirmed finding into a
//! `compile_error!` at the offending span, so `cargo check` is the gate.
//! The options (`block`, `grid`, `target`, `cc`, `crate`, `search(..)`) are
//! documented in `oxmera_kernel_lower::options`; `search(..)` names
//! configurations for the tuner and is deliberately *not* gated (it may list
//! what is unsafe on some target — the tuner refuses those with the finding); with no `grid` the gate checks a grid of
//! one block, where findings built from the global thread id are exact.
//!
//! A kernel generic over its element type (`fn axpy<T: Float>`, with
//! `dtypes(T = [..])` in the attribute) is lowered once per dtype and each
//! instance is gated; the generated API is described in the `generic` module.
//!
//! This crate knows the lowering and the IR; it must never know about the
//! simulator, the kernel library or any backend.

mod emit;
mod generic;

use oxmera_kernel_ir::analysis::{CheckOptions, check};
use oxmera_kernel_ir::diag::render_compact;
use oxmera_kernel_ir::ir::LaunchSpace;
use oxmera_kernel_lower::generics::{in_instance, lower_instances};
use oxmera_kernel_lower::lower::{Helpers, Lowered};
use oxmera_kernel_lower::options::{
    attribute_position, attribute_tokens, declared_launches, parse_attr,
};
use proc_macro::TokenStream;

/// Marks a function as a kernel; see the crate documentation and
/// docs/kernels.md for the language.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let f = match syn::parse2::<syn::ItemFn>(item.into()) {
        Ok(f) => f,
        Err(e) => return e.to_compile_error().into(),
    };
    match expand(attr.into(), f, &Helpers::new(), None) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Marks a helper function that kernels call; it is seen only by the
/// kernels of the same `#[kernels] mod`, which inlines it at every call.
/// Used anywhere else it is an error that says so.
#[proc_macro_attribute]
pub fn helper(_attr: TokenStream, item: TokenStream) -> TokenStream {
    let span = syn::parse::<syn::ItemFn>(item)
        .map(|f| f.sig.ident.span())
        .unwrap_or_else(|_| proc_macro2::Span::call_site());
    syn::Error::new(
        span,
        "a `#[helper]` is seen only by the kernels of its module; put it and the kernels that \
         call it in one `#[kernels] mod name { .. }`",
    )
    .to_compile_error()
    .into()
}

/// Marks an inline module whose `#[kernel]` functions may call its
/// `#[helper]` functions. Each kernel is lowered with every helper of the
/// module (inlined at its calls); the helpers themselves leave no item
/// behind, and the module's other items pass through unchanged. The
/// diagnostics' source text is the module's, so a finding inside a helper
/// shows the helper's lines.
#[proc_macro_attribute]
pub fn kernels(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand_module(attr.into(), item.into()) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand_module(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> syn::Result<proc_macro2::TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new_spanned(
            attr,
            "`#[kernels]` takes no options; give them to each `#[kernel(..)]`",
        ));
    }
    let mut m: syn::ItemMod = syn::parse2(item)?;
    let Some((brace, items)) = m.content.take() else {
        return Err(syn::Error::new_spanned(
            &m,
            "`#[kernels]` needs an inline module: `#[kernels] mod name { .. }`",
        ));
    };
    let marked = |f: &syn::ItemFn, name: &str| attribute_position(&f.attrs, name);
    let mut helpers = Helpers::new();
    for item in &items {
        if let syn::Item::Fn(f) = item {
            if marked(f, "helper").is_some() {
                helpers.add(f)?;
            }
        }
    }
    let module_span = brace.span.join();
    let mut out = Vec::new();
    for item in items {
        match item {
            syn::Item::Fn(mut f) if marked(&f, "kernel").is_some() => {
                let at = marked(&f, "kernel").expect("matched");
                let options = attribute_tokens(&f.attrs.remove(at))?;
                let kernel = expand(options, f, &helpers, Some(module_span))?;
                out.push(syn::Item::Verbatim(kernel));
            }
            // The helpers live on inside the kernels that call them.
            syn::Item::Fn(f) if marked(&f, "helper").is_some() => {}
            other => out.push(other),
        }
    }
    m.content = Some((brace, out));
    Ok(quote::quote!(#m))
}

/// Lowers, validates and gates one kernel — every instance of a generic
/// one; `source` is the span whose text the diagnostics show (the
/// module's, for a kernel among helpers).
fn expand(
    attr: proc_macro2::TokenStream,
    f: syn::ItemFn,
    helpers: &Helpers,
    source: Option<proc_macro2::Span>,
) -> syn::Result<proc_macro2::TokenStream> {
    let options = parse_attr(attr)?;
    let space = options.launch.clone();
    let mut instances = lower_instances(&f, &space, helpers, &options.dtypes)?;
    let generic = instances.iter().any(|l| !l.kernel.type_args.is_empty());
    let mut errors: Option<syn::Error> = None;
    for lowered in &mut instances {
        // The search spaces ride along for the tuner; the gate below checks the
        // contract only (a search space may hold what is unsafe somewhere).
        lowered.kernel.launch.search = options.resolve_search(&lowered.kernel)?;
        oxmera_kernel_ir::validate::validate(&lowered.kernel).map_err(|e| {
            syn::Error::new_spanned(&f.sig.ident, format!("internal: invalid IR: {e}"))
        })?;
        // Each instance is gated: a launch may be fine for f32 and not for
        // another dtype (shared memory scales with the element's size).
        if let Err(e) = gate(lowered, &space) {
            let e = if generic {
                in_instance(&lowered.kernel.name, e)
            } else {
                e
            };
            match &mut errors {
                Some(all) => all.combine(e),
                None => errors = Some(e),
            }
        }
    }
    if let Some(e) = errors {
        return Err(e);
    }
    let body_span = source.unwrap_or_else(|| f.block.brace_token.span.join());
    let body_text = body_span.source_text();
    emit::set_crate_path(options.crate_name.as_ref());
    if !generic {
        let lowered = &instances[0];
        return Ok(emit::kernel_fn(
            &lowered.kernel,
            &lowered.spans,
            &f.vis,
            &f.attrs,
            body_span,
            body_text.as_deref(),
        ));
    }
    let params: Vec<syn::Ident> = f
        .sig
        .generics
        .params
        .iter()
        .filter_map(|g| match g {
            syn::GenericParam::Type(t) => Some(t.ident.clone()),
            _ => None,
        })
        .collect();
    let code: Vec<generic::InstanceCode<'_>> = instances
        .iter()
        .map(|l| generic::InstanceCode {
            kernel: &l.kernel,
            spans: &l.spans,
        })
        .collect();
    Ok(generic::generic_fns(
        &f.sig.ident,
        &params,
        &code,
        &f.vis,
        &f.attrs,
        body_span,
        body_text.as_deref(),
    ))
}

/// Runs the analysis for every declared launch on the declared target
/// (default: generic); confirmed findings become compile errors at their
/// spans.
fn gate(l: &Lowered, space: &LaunchSpace) -> syn::Result<()> {
    let target = space.target.unwrap_or_default();
    let mut errors: Option<syn::Error> = None;
    let mut add = |e: syn::Error| {
        errors = Some(match errors.take() {
            Some(mut x) => {
                x.combine(e);
                x
            }
            None => e,
        });
    };
    for launch in declared_launches(space) {
        let opts = CheckOptions::new(launch).on(target);
        let findings = match check(&l.kernel, &opts) {
            Ok(f) => f,
            Err(e) => {
                let sp = l.spans[0].first;
                add(syn::Error::new(
                    sp,
                    format!("declared launch cannot be checked: {e}"),
                ));
                continue;
            }
        };
        let at = |id: u32| {
            l.spans
                .get(id as usize)
                .map(|s| s.first)
                .unwrap_or_else(proc_macro2::Span::call_site)
        };
        for f in findings.iter().filter(|f| f.confirmed) {
            // Inside a helper: reported at the kernel's call, and again at
            // the construct inside the helper.
            match l.kernel.outermost_call(f.span) {
                Some(call) => {
                    add(syn::Error::new(at(call.call), render_compact(&l.kernel, f)));
                    add(syn::Error::new(
                        at(f.span),
                        format!("[{}] ... here, inside the helper", f.rule.code()),
                    ));
                }
                None => add(syn::Error::new(at(f.span), render_compact(&l.kernel, f))),
            }
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
