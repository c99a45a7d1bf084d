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
//! The options (`block`, `grid`, `target`, `cc`, `crate`) are documented in
//! `oxmera_kernel_lower::options`; with no `grid` the gate checks a grid of
//! one block, where findings built from the global thread id are exact.
//!
//! This crate knows the lowering and the IR; it must never know about the
//! simulator, the kernel library or any backend.

mod emit;

use oxmera_kernel_ir::analysis::{CheckOptions, check};
use oxmera_kernel_ir::diag::render_compact;
use oxmera_kernel_ir::ir::LaunchSpace;
use oxmera_kernel_lower::lower::{Lowered, lower};
use oxmera_kernel_lower::options::{declared_launches, parse_attr};
use proc_macro::TokenStream;

/// Marks a function as a kernel; see the crate documentation and
/// docs/kernels.md for the language.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr.into(), item.into()) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> syn::Result<proc_macro2::TokenStream> {
    let options = parse_attr(attr)?;
    let space = options.launch;
    let f: syn::ItemFn = syn::parse2(item)?;
    let lowered = lower(&f, space.clone())?;
    oxmera_kernel_ir::validate::validate(&lowered.kernel)
        .map_err(|e| syn::Error::new_spanned(&f.sig.ident, format!("internal: invalid IR: {e}")))?;
    gate(&lowered, &space)?;
    let body_span = f.block.brace_token.span.join();
    let attrs: Vec<syn::Attribute> = f.attrs.clone();
    Ok(emit::kernel_fn(
        options.crate_name.as_ref(),
        &lowered.kernel,
        &lowered.spans,
        &f.vis,
        &attrs,
        body_span,
        body_span.source_text(),
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
        for f in findings.iter().filter(|f| f.confirmed) {
            let sp = l
                .spans
                .get(f.span as usize)
                .map(|s| s.first)
                .unwrap_or_else(proc_macro2::Span::call_site);
            add(syn::Error::new(sp, render_compact(&l.kernel, f)));
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
