//! `#[derive(Module)]`: the state half of an oxmera module, written from
//! its fields.
//!
//! This crate owns one derive and nothing else. It reads a struct's fields
//! and writes `impl ModuleState` — `visit_params` (every field under its
//! own name, so a `Linear` field `fc1` gives `fc1.weight`), and
//! `set_training` / `is_training` passed on to every field. What each
//! field contributes is decided by the field's *type*, through the
//! `ModuleField` trait in `oxmera-nn` (a `Param` lists itself, a module
//! its parameters, a `Vec` of them `name.0`, `name.1`, …, plain numbers
//! and flags nothing), so a field the derive cannot account for is a
//! compile error, never a silently untrained weight. `#[module(skip)]`
//! leaves a field out.
//!
//! It must never know about tensors or layers: everything it emits is a
//! call into `oxmera-nn`, found at `::oxmera::nn` (the facade, what most
//! programs depend on) or at the path given by
//! `#[module(crate = "oxmera_nn")]` on the struct.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Index, LitStr, Member, Path, parse_macro_input};

/// Derives `ModuleState` (parameters by field name, training mode passed
/// to every field) for a struct. See the crate docs and `oxmera_nn`'s
/// `Module` for the rules.
#[proc_macro_derive(Module, attributes(module))]
pub fn derive_module(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// What `#[module(...)]` on the struct says.
struct StructOptions {
    /// Where `oxmera-nn` is.
    krate: Path,
}

fn struct_options(input: &DeriveInput) -> syn::Result<StructOptions> {
    let mut krate: Path = syn::parse_quote!(::oxmera::nn);
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("module")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let lit: LitStr = meta.value()?.parse()?;
                krate = lit.parse()?;
                Ok(())
            } else {
                Err(meta.error(
                    "unknown #[module] option on a struct: the one option here is \
                     `crate = \"path::to::oxmera_nn\"`",
                ))
            }
        })?;
    }
    Ok(StructOptions { krate })
}

/// Whether a field carries `#[module(skip)]` (and nothing unknown).
fn skipped(field: &syn::Field) -> syn::Result<bool> {
    let mut skip = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("module")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                skip = true;
                Ok(())
            } else {
                Err(meta
                    .error("unknown #[module] option on a field: the one option here is `skip`"))
            }
        })?;
    }
    Ok(skip)
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let options = struct_options(input)?;
    let krate = &options.krate;
    let fields = match &input.data {
        Data::Struct(s) => &s.fields,
        Data::Enum(e) => {
            return Err(syn::Error::new(
                e.enum_token.span,
                "#[derive(Module)] needs a struct: an enum's parameters would change with \
                 its variant; write ModuleState by hand, naming each variant's parameters",
            ));
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "#[derive(Module)] needs a struct, not a union",
            ));
        }
    };
    // (member, name, type) of every field the derive visits.
    let mut visited = Vec::new();
    let members: Vec<(Member, String, &syn::Type, &syn::Field)> = match fields {
        Fields::Named(named) => named
            .named
            .iter()
            .map(|f| {
                let ident = f.ident.clone().expect("named field");
                let name = ident.to_string();
                let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
                (Member::Named(ident), name, &f.ty, f)
            })
            .collect(),
        Fields::Unnamed(unnamed) => unnamed
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let index = Index {
                    index: i as u32,
                    span: Span::call_site(),
                };
                (Member::Unnamed(index), i.to_string(), &f.ty, f)
            })
            .collect(),
        Fields::Unit => Vec::new(),
    };
    for (member, name, ty, field) in members {
        if !skipped(field)? {
            visited.push((member, name, ty));
        }
    }

    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    // A generic struct needs its field types bounded (`M: Module` may not
    // be written on the struct); a concrete one does not, and leaving the
    // bounds out lets an unfit field be reported at the field itself.
    let mut where_clause = where_clause.cloned();
    if !input.generics.params.is_empty() {
        let clause = where_clause.get_or_insert_with(|| syn::parse_quote!(where));
        for (_, _, ty) in &visited {
            clause
                .predicates
                .push(syn::parse_quote!(#ty: #krate::ModuleField));
        }
    }
    let visit = visited.iter().map(|(member, name, ty)| {
        // Spanned at the field's type, so that a type that is not a
        // parameter, a module or configuration is reported there.
        quote_spanned! {ty.span()=>
            <#ty as #krate::ModuleField>::visit_params(
                &self.#member,
                &#krate::join_name(prefix, #name),
                out,
            );
        }
    });
    let set = visited.iter().map(|(member, _, ty)| {
        quote_spanned! {ty.span()=>
            <#ty as #krate::ModuleField>::set_training(&mut self.#member, training);
        }
    });
    let modes = visited.iter().map(|(member, _, ty)| {
        quote_spanned! {ty.span()=> <#ty as #krate::ModuleField>::training(&self.#member) }
    });
    let count = visited.len();
    Ok(quote! {
        impl #impl_generics #krate::ModuleState for #ident #ty_generics #where_clause {
            fn visit_params(
                &self,
                prefix: &str,
                out: &mut ::std::vec::Vec<(::std::string::String, #krate::Param)>,
            ) {
                let _ = (&prefix, &out);
                #(#visit)*
            }

            fn set_training(&mut self, training: bool) {
                let _ = training;
                #(#set)*
            }

            fn is_training(&self) -> bool {
                // In evaluation mode when any field is: fields without a
                // mode (stateless layers) always answer `true`, so only a
                // field with a mode can say `false`; a struct without one
                // stays in training mode, as a fresh module is.
                let modes: [::std::option::Option<bool>; #count] = [#(#modes),*];
                !modes.into_iter().flatten().any(|training| !training)
            }
        }
    })
}
