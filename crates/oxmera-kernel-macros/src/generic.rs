//! The Rust API of a generic kernel.
//!
//! For `#[kernel(dtypes(T = [f32, i32]))] pub fn axpy<T: Number>(..)` the
//! macro generates
//!
//! - `axpy::<f32>() -> &'static Kernel`: generic over a hidden trait that
//!   only the declared dtypes implement, so `axpy::<u8>()` is a compile
//!   error that lists the instances (the scalars Rust lacks are named by
//!   the markers of `oxmera_kernel::dtype`, e.g. `axpy::<dtype::f16>()`).
//!   With several type parameters the trait is implemented by the tuples of
//!   scalars: `pair::<f32, i32>()`;
//! - `axpy_instances() -> &'static [fn() -> &'static Kernel]`: every
//!   instance, in the lowering's order, for callers that list them (the
//!   registry, tests);
//! - `axpy_instance(&[Scalar]) -> Option<&'static Kernel>`: the instance
//!   for scalars known only at run time (a backend's tensor dtype).

use oxmera_kernel_lower::span::SpanInfo;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

use crate::emit;

/// One lowered instance with what its builder needs.
pub struct InstanceCode<'a> {
    /// The instance's IR.
    pub kernel: &'a oxmera_kernel_ir::ir::Kernel,
    /// Its span table.
    pub spans: &'a [SpanInfo],
}

/// The generated items of a generic kernel named `name` with the type
/// parameters `params` (see the module docs).
pub fn generic_fns(
    name: &syn::Ident,
    params: &[syn::Ident],
    instances: &[InstanceCode<'_>],
    vis: &syn::Visibility,
    attrs: &[syn::Attribute],
    body_span: Span,
    body_text: Option<&str>,
) -> TokenStream {
    let ir = emit::ir_path();
    let tr = format_ident!("__oxmera_dtypes_of_{}", name);
    let instances_fn = format_ident!("{}_instances", name);
    let instance_fn = format_ident!("{}_instance", name);
    let names: Vec<&str> = instances.iter().map(|i| i.kernel.name.as_str()).collect();
    // The type that selects an instance: the scalar, or a tuple of them.
    let selector = |k: &oxmera_kernel_ir::ir::Kernel| {
        let tys: Vec<TokenStream> = k
            .type_args
            .iter()
            .map(|(_, s)| emit::scalar_type(*s))
            .collect();
        match tys.as_slice() {
            [one] => one.clone(),
            several => quote!((#(#several),*)),
        }
    };
    let impls = instances.iter().map(|i| {
        let ty = selector(i.kernel);
        let once = emit::kernel_once(i.kernel, i.spans, body_span, body_text);
        quote! {
            impl #tr for #ty {
                #[allow(clippy::all)]
                fn kernel() -> &'static #ir::Kernel #once
            }
        }
    });
    let selectors: Vec<TokenStream> = instances.iter().map(|i| selector(i.kernel)).collect();
    let (generics, bound, chosen) = match params {
        [one] => (quote!(<#one: #tr>), quote!(), quote!(#one)),
        several => (
            quote!(<#(#several),*>),
            quote!(where (#(#several),*): #tr),
            quote!((#(#several),*)),
        ),
    };
    let message = format!("the kernel `{name}` has no instance for `{{Self}}`");
    let note = format!("its instances: {}", names.join(", "));
    let doc = if attrs.iter().any(|a| a.path().is_ident("doc")) {
        quote!()
    } else {
        let d = format!("Builds the IR of an instance of the kernel `{name}`.");
        quote!(#[doc = #d])
    };
    let list_doc = format!(
        "Every instance of the kernel `{name}`: {}.",
        names.join(", ")
    );
    let find_doc = format!(
        "The instance of the kernel `{name}` whose type arguments are `dtypes` (one scalar per type parameter), if it has one."
    );
    quote! {
        /// Implemented by the dtypes a generic kernel has an instance for.
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[diagnostic::on_unimplemented(message = #message, note = #note)]
        #vis trait #tr {
            /// The instance's IR.
            fn kernel() -> &'static #ir::Kernel;
        }
        #(#impls)*

        #(#attrs)*
        #doc
        #vis fn #name #generics () -> &'static #ir::Kernel #bound {
            <#chosen as #tr>::kernel()
        }

        #[doc = #list_doc]
        #vis fn #instances_fn() -> &'static [fn() -> &'static #ir::Kernel] {
            const INSTANCES: &[fn() -> &'static #ir::Kernel] =
                &[#(<#selectors as #tr>::kernel),*];
            INSTANCES
        }

        #[doc = #find_doc]
        #vis fn #instance_fn(dtypes: &[#ir::Scalar]) -> ::core::option::Option<&'static #ir::Kernel> {
            #instances_fn()
                .iter()
                .map(|build| build())
                .find(|k| k.type_args.iter().map(|(_, s)| *s).eq(dtypes.iter().copied()))
        }
    }
}
