//! The `#[kernel(..)]` options: the launch space a kernel declares.
//!
//! - `block = [..]`: the block sizes to check (and the launch contract);
//! - `grid = [..]`: the grid sizes; **when absent the declared launches use
//!   a grid of one block**. That is a choice, not an accident: with one
//!   block `block_idx_*()` is 0, so guards built from the global thread id
//!   are known exactly per thread and their findings are confirmed; with
//!   several blocks they depend on the block and the analysis can only say
//!   "maybe". Declare a grid to check what only several blocks show (blocks
//!   writing the same global elements);
//! - `target = "lavapipe"`: the target to check for (any name
//!   [`Target`]'s `FromStr` takes); its warp width decides which guards are
//!   warp-uniform and its limits bound the block and the shared memory.
//!   Default: the generic target (warps of 32, the 48 KiB static shared cap);
//! - `cc = 80` (or `cc = "8.0"`): shorthand for `target = "cuda:sm_80"`;
//! - `search(..)`: a search space for the tuner, apart from the contract
//!   above and never gated at compile time (see [`crate::search`] for its
//!   grammar and `oxmera_kernel_ir::space` for what it means);
//! - `dtypes(T = [f32, f64], I = [i32])`: the scalars each type parameter
//!   of a generic kernel takes (see [`crate::generics`]); a parameter it
//!   does not name takes every scalar its bound admits;
//! - `crate = "kernels"`: the name `oxmera-kernel` has where it is renamed
//!   in the user's `Cargo.toml` (`kernels = { package = "oxmera-kernel" }`),
//!   for the generated code's paths. A macro cannot see the manifest, so a
//!   renamed crate is named here, as serde's `crate = ".."` does.
//!
//! The attribute and a kernel file read by the CLI parse the options here,
//! so both front doors accept exactly the same attribute.

use oxmera_kernel_ir::ir::{Dim3, LaunchSpace};
use oxmera_kernel_ir::launch::LaunchConfig;
use oxmera_kernel_ir::target::Target;
use syn::punctuated::Punctuated;

/// The position of the attribute among `attrs` whose path ends in `name`
/// (`#[kernel]`, `#[oxmera_kernel::kernel(..)]`, `#[helper]`): how both
/// front doors recognise a kernel or a helper.
pub fn attribute_position(attrs: &[syn::Attribute], name: &str) -> Option<usize> {
    attrs
        .iter()
        .position(|a| a.path().segments.last().is_some_and(|s| s.ident == name))
}

/// The option tokens of a `#[kernel]` attribute: empty for `#[kernel]`,
/// the list's tokens for `#[kernel(..)]`.
pub fn attribute_tokens(attr: &syn::Attribute) -> syn::Result<proc_macro2::TokenStream> {
    match &attr.meta {
        syn::Meta::Path(_) => Ok(proc_macro2::TokenStream::new()),
        syn::Meta::List(list) => Ok(list.tokens.clone()),
        syn::Meta::NameValue(nv) => Err(syn::Error::new_spanned(
            nv,
            "write `#[kernel]` or `#[kernel(block = [..])]`",
        )),
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

/// What `#[kernel(..)]` says.
#[derive(Debug, Clone, Default)]
pub struct KernelOptions {
    /// The declared launch space and target.
    pub launch: LaunchSpace,
    /// `crate = "name"`: the name the kernel crate has in the user's
    /// `Cargo.toml` when it is renamed there (generated code names
    /// `::oxmera_kernel` otherwise). Only the attribute uses it; a file read
    /// by the CLI is never compiled.
    pub crate_name: Option<syn::LitStr>,
    /// The `search(..)` items as written; [`KernelOptions::resolve_search`]
    /// names their constants once the kernel is lowered.
    pub search: Vec<crate::search::SearchDecl>,
    /// The `dtypes(..)` entries, one per type parameter named there.
    pub dtypes: Vec<DtypesDecl>,
}

/// One entry of `dtypes(..)`: a type parameter and the scalars it takes,
/// each as written (for "not admitted by the bound").
#[derive(Debug, Clone)]
pub struct DtypesDecl {
    /// The type parameter's name.
    pub param: syn::Ident,
    /// The scalars listed, in order.
    pub scalars: Vec<(oxmera_kernel_ir::ir::Scalar, syn::Ident)>,
}

/// `dtypes(T = [f32, f64], ..)` as its entries.
fn parse_dtypes(list: &syn::MetaList) -> syn::Result<Vec<DtypesDecl>> {
    let hint = "write `dtypes(T = [f32, f64])`, one `NAME = [..]` per type parameter";
    let parser = Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated;
    let entries = list.parse_args_with(parser)?;
    let mut out: Vec<DtypesDecl> = Vec::new();
    for nv in entries {
        let param = nv.path.get_ident().cloned().ok_or_else(|| {
            syn::Error::new_spanned(
                &nv.path,
                format!("expected a type parameter's name; hint: {hint}"),
            )
        })?;
        if out.iter().any(|d| d.param == param) {
            return Err(syn::Error::new_spanned(
                &param,
                format!("`{param}` is given dtypes twice; hint: {hint}"),
            ));
        }
        let syn::Expr::Array(a) = &nv.value else {
            return Err(syn::Error::new_spanned(
                &nv.value,
                format!("expected a list of scalar types; hint: {hint}"),
            ));
        };
        if a.elems.is_empty() {
            return Err(syn::Error::new_spanned(
                a,
                format!("a type parameter needs at least one dtype; hint: {hint}"),
            ));
        }
        let scalars = a
            .elems
            .iter()
            .map(|e| {
                let named = match e {
                    syn::Expr::Path(p) => p.path.get_ident(),
                    _ => None,
                };
                let known: Vec<&str> = oxmera_kernel_ir::ir::Scalar::ALL
                    .iter()
                    .map(|s| s.name())
                    .collect();
                named
                    .and_then(|id| {
                        Some((crate::generics::scalar_named(&id.to_string())?, id.clone()))
                    })
                    .ok_or_else(|| {
                        syn::Error::new_spanned(
                            e,
                            format!(
                                "unknown scalar type; hint: the scalars are {}",
                                known.join(", ")
                            ),
                        )
                    })
            })
            .collect::<syn::Result<_>>()?;
        out.push(DtypesDecl { param, scalars });
    }
    Ok(out)
}

impl KernelOptions {
    /// The search spaces with their constants resolved against the lowered
    /// kernel's `const` generics: an error at the name's span when the
    /// kernel has no such constant.
    pub fn resolve_search(
        &self,
        k: &oxmera_kernel_ir::ir::Kernel,
    ) -> syn::Result<Vec<oxmera_kernel_ir::space::SearchSpace>> {
        self.search.iter().map(|d| d.resolve(k)).collect()
    }
}

/// Parses the tokens inside `#[kernel(..)]` (empty for a bare `#[kernel]`).
pub fn parse_attr(attr: proc_macro2::TokenStream) -> syn::Result<KernelOptions> {
    let mut options = KernelOptions::default();
    let mut target: Option<Target> = None;
    if attr.is_empty() {
        return Ok(options);
    }
    let parser = Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated;
    let items = syn::parse::Parser::parse2(parser, attr)?;
    for meta in items {
        let nv = match meta {
            syn::Meta::NameValue(nv) => nv,
            syn::Meta::List(list) if list.path.is_ident("search") => {
                options.search.push(crate::search::parse_search(&list)?);
                continue;
            }
            syn::Meta::List(list) if list.path.is_ident("dtypes") => {
                if !options.dtypes.is_empty() {
                    return Err(syn::Error::new_spanned(
                        &list.path,
                        "`dtypes` is given twice; hint: name every type parameter in one `dtypes(T = [..], U = [..])`",
                    ));
                }
                options.dtypes = parse_dtypes(&list)?;
                continue;
            }
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "expected `name = value` or `search(..)`; hint: write e.g. `block = [64]` or `search(block = [32, 64])`",
                ));
            }
        };
        if nv.path.is_ident("block") {
            options.launch.blocks = dims(&nv.value)?;
        } else if nv.path.is_ident("grid") {
            options.launch.grids = dims(&nv.value)?;
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
        } else if nv.path.is_ident("crate") {
            options.crate_name = Some(match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) if syn::parse_str::<syn::Ident>(&s.value()).is_ok() => s.clone(),
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "expected the kernel crate's name as a string; hint: write e.g. `crate = \"kernels\"` (the name in your Cargo.toml)",
                    ));
                }
            });
        } else {
            return Err(syn::Error::new_spanned(
                &nv.path,
                "unknown kernel option; hint: options are `block = [..]`, `grid = [..]`, `target = \"..\"`, `cc = ..`, `crate = \"..\"`, `search(..)` and `dtypes(..)`",
            ));
        }
    }
    options.launch.target = target;
    Ok(options)
}

/// Every launch the declared space names: each block with each grid, and a
/// grid of one block when none is declared (see the module docs for why).
pub fn declared_launches(space: &LaunchSpace) -> Vec<LaunchConfig> {
    let grids = if space.grids.is_empty() {
        vec![Dim3::x(1)]
    } else {
        space.grids.clone()
    };
    space
        .blocks
        .iter()
        .flat_map(|&block| grids.iter().map(move |&grid| LaunchConfig { grid, block }))
        .collect()
}
