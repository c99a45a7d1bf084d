//! The `#[kernel]` attribute of oxmera.
//!
//! The attribute parses an ordinary-looking Rust function written in the
//! kernel subset, rejects anything outside it with a span and a hint, lowers
//! it to the kernel IR and replaces the function by one of the same name that
//! returns the IR (`fn flip() -> &'static Kernel`).
//!
//! When the attribute declares a launch space (`#[kernel(block = [32, 64])]`)
//! the macro runs the convergence analysis of `oxmera-kernel-ir` for each
//! configuration at compile time and turns every confirmed finding into a
//! `compile_error!` at the offending span, so `cargo check` is the gate.
//!
//! The options:
//!
//! - `block = [..]`: the block sizes to check (and the launch contract);
//! - `grid = [..]`: the grid sizes; **when absent the gate checks a grid of
//!   one block**. That is a choice, not an accident: with one block
//!   `block_idx_*()` is 0, so guards built from the global thread id are
//!   known exactly per thread and their findings are confirmed; with several
//!   blocks they depend on the block and the analysis can only say "maybe",
//!   which the gate does not fail on. Declare a grid to check what only
//!   several blocks show (blocks writing the same global elements);
//! - `target = "lavapipe"`: the target to check for (any name
//!   [`Target`]'s `FromStr` takes: `generic`, `cuda:sm_80`, `lavapipe`,
//!   `wave64`, `wave32`, `apple`, with an optional `/warpN`); its warp width
//!   decides which guards are warp-uniform and its limits bound the block
//!   and the shared memory. Default: the generic target (warps of 32, the
//!   48 KiB static shared cap);
//! - `cc = 80` (or `cc = "8.0"`): shorthand for `target = "cuda:sm_80"`, so a
//!   kernel meant for a part with opt-in shared memory is checked against
//!   that part's limit instead of 48 KiB.
//!
//! This crate knows syntax and the IR crate; it must never know about the
//! simulator, the kernel library or any backend.

mod emit;
mod lower;

use oxmera_kernel_ir::analysis::{CheckOptions, check};
use oxmera_kernel_ir::diag::render_compact;
use oxmera_kernel_ir::ir::{Dim3, LaunchSpace};
use oxmera_kernel_ir::launch::LaunchConfig;
use oxmera_kernel_ir::target::Target;
use proc_macro::TokenStream;
use syn::punctuated::Punctuated;

/// Marks a function as a kernel; see the crate documentation and
/// docs/kernels.md for the language.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr.into(), item.into()) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn dims(e: &syn::Expr) -> syn::Result<Vec<Dim3>> {
    let hint = "write `block = [32, 64]` or `block = [[16, 16], [32, 8]]`";
    let syn::Expr::Array(a) = e else {
        return Err(syn::Error::new_spanned(
            e,
            format!("expected a list of sizes; hint: {hint}"),
        ));
    };
    a.elems
        .iter()
        .map(|x| {
            let ints = match x {
                syn::Expr::Array(inner) => inner
                    .elems
                    .iter()
                    .map(int)
                    .collect::<syn::Result<Vec<u32>>>()?,
                other => vec![int(other)?],
            };
            match ints.as_slice() {
                [x] => Ok(Dim3::x(*x)),
                [x, y] => Ok(Dim3::new(*x, *y, 1)),
                [x, y, z] => Ok(Dim3::new(*x, *y, *z)),
                _ => Err(syn::Error::new_spanned(
                    x,
                    format!("a size has 1 to 3 extents; hint: {hint}"),
                )),
            }
        })
        .collect()
}

fn int(e: &syn::Expr) -> syn::Result<u32> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse(),
        _ => Err(syn::Error::new_spanned(
            e,
            "expected an integer literal; hint: write e.g. `64`",
        )),
    }
}

/// `target = "name"` as a target.
fn target_name(e: &syn::Expr) -> syn::Result<Target> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s
            .value()
            .parse::<Target>()
            .map_err(|err| syn::Error::new_spanned(e, err.to_string())),
        _ => Err(syn::Error::new_spanned(
            e,
            "expected a target name; hint: write e.g. `target = \"lavapipe\"` or `target = \"cuda:sm_80\"`",
        )),
    }
}

/// `cc = 80` or `cc = "8.0"` as a CUDA target.
fn cc_target(e: &syn::Expr) -> syn::Result<Target> {
    let name = match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => format!("cuda:sm_{}", i.base10_digits()),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => format!("cuda:{}", s.value()),
        _ => {
            return Err(syn::Error::new_spanned(
                e,
                "expected a compute capability; hint: write e.g. `cc = 80` or `cc = \"8.0\"`",
            ));
        }
    };
    name.parse::<Target>()
        .map_err(|err| syn::Error::new_spanned(e, err.to_string()))
}

fn parse_attr(attr: proc_macro2::TokenStream) -> syn::Result<LaunchSpace> {
    let mut space = LaunchSpace::default();
    let mut target: Option<Target> = None;
    if attr.is_empty() {
        return Ok(space);
    }
    let parser = Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated;
    let items = syn::parse::Parser::parse2(parser, attr)?;
    for nv in items {
        if nv.path.is_ident("block") {
            space.blocks = dims(&nv.value)?;
        } else if nv.path.is_ident("grid") {
            space.grids = dims(&nv.value)?;
        } else if nv.path.is_ident("target") || nv.path.is_ident("cc") {
            if target.is_some() {
                return Err(syn::Error::new_spanned(
                    &nv.path,
                    "the target is named twice; hint: give one of `target = ..` and `cc = ..`",
                ));
            }
            target = Some(if nv.path.is_ident("cc") {
                cc_target(&nv.value)?
            } else {
                target_name(&nv.value)?
            });
        } else {
            return Err(syn::Error::new_spanned(
                &nv.path,
                "unknown kernel option; hint: options are `block = [..]`, `grid = [..]`, `target = \"..\"` and `cc = ..`",
            ));
        }
    }
    space.target = target;
    Ok(space)
}

fn expand(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> syn::Result<proc_macro2::TokenStream> {
    let space = parse_attr(attr)?;
    let f: syn::ItemFn = syn::parse2(item)?;
    let lowered = lower::lower(&f, space.clone())?;
    oxmera_kernel_ir::validate::validate(&lowered.kernel)
        .map_err(|e| syn::Error::new_spanned(&f.sig.ident, format!("internal: invalid IR: {e}")))?;
    gate(&lowered, &space)?;
    let body_span = f.block.brace_token.span.join();
    let attrs: Vec<syn::Attribute> = f.attrs.clone();
    Ok(emit::kernel_fn(
        &lowered.kernel,
        &lowered.spans,
        &f.vis,
        &attrs,
        body_span,
        body_span.source_text(),
    ))
}

/// Runs the analysis for every declared configuration on the declared
/// target (default: generic); confirmed findings become compile errors at
/// their spans.
fn gate(l: &lower::Lowered, space: &LaunchSpace) -> syn::Result<()> {
    let target = space.target.unwrap_or_default();
    // No declared grid: one block (see the crate docs for why).
    let grids = if space.grids.is_empty() {
        vec![Dim3::x(1)]
    } else {
        space.grids.clone()
    };
    let mut errors: Option<syn::Error> = None;
    for &block in &space.blocks {
        for &grid in &grids {
            let opts = CheckOptions::new(LaunchConfig { grid, block }).on(target);
            let findings = match check(&l.kernel, &opts) {
                Ok(f) => f,
                Err(e) => {
                    let sp = l.spans[0].first;
                    let e = syn::Error::new(sp, format!("declared launch cannot be checked: {e}"));
                    errors = Some(match errors.take() {
                        Some(mut x) => {
                            x.combine(e);
                            x
                        }
                        None => e,
                    });
                    continue;
                }
            };
            for f in findings.iter().filter(|f| f.confirmed) {
                let sp = l
                    .spans
                    .get(f.span as usize)
                    .map(|s| s.first)
                    .unwrap_or_else(proc_macro2::Span::call_site);
                let e = syn::Error::new(sp, render_compact(&l.kernel, f));
                errors = Some(match errors.take() {
                    Some(mut x) => {
                        x.combine(e);
                        x
                    }
                    None => e,
                });
            }
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
