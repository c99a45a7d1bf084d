//! Kernels generic over their element type, monomorphised per dtype.
//!
//! `fn axpy<T: Float>(a: T, x: &[T], y: &mut [T])` is one source for every
//! float the IR knows. The lowering makes one kernel per *instance* — one
//! scalar for each type parameter, the product over several parameters —
//! by **substituting the scalar for the parameter in the syntax tree and
//! lowering the result as an ordinary kernel**. Nothing downstream (the IR,
//! the analysis, the simulator, the emitters) learns what a type parameter
//! is, and every rule of the language holds in every instance exactly as
//! it holds for a kernel written with that scalar: an unsuffixed literal
//! takes `T` from the other operand, `T::MAX` is the scalar's constant,
//! `as T` is a cast. The substituted name keeps the span of the `T` it
//! replaces, so errors and findings point at the source as written; an
//! error found in one instance is prefixed with the instance's name
//! (`axpy<i32>: ..`), since the same line may be fine in another.
//!
//! Which instances: `#[kernel(dtypes(T = [f32, f64]))]` lists them; a
//! parameter with no `dtypes` entry gets every scalar its bound admits
//! ([`Bound::admitted`], the one place that decides) — so a new scalar type
//! in the IR adds instances to such kernels by itself.
//!
//! Refused, each with a hint: a type parameter without a bound or with
//! another bound than `Float`, `Int` or `Number`, a default type
//! (`T = f32`: there is no "default instance"), a `dtypes` entry that names
//! no type parameter, lists a scalar twice or one its bound does not admit,
//! and `T` used as a value. Helpers stay non-generic (they are inlined into
//! each instance, so a kernel's `T` reaches a helper only as a concrete
//! scalar).

use oxmera_kernel_ir::dtype::{Bound, instance_name};
use oxmera_kernel_ir::ir::Scalar;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;

use crate::lower::{Helpers, Lowered, lower_with};
use crate::options::DtypesDecl;
use crate::span::err;

/// Lowers every instance of `f` (one for a kernel with no type
/// parameters), each named after its scalars and carrying them in
/// [`Kernel::type_args`]; an error inside an instance is prefixed with its
/// name.
///
/// [`Kernel::type_args`]: oxmera_kernel_ir::ir::Kernel::type_args
pub fn lower_instances(
    f: &syn::ItemFn,
    launch: &oxmera_kernel_ir::ir::LaunchSpace,
    helpers: &Helpers,
    dtypes: &[DtypesDecl],
) -> syn::Result<Vec<Lowered>> {
    let params = type_params(f, dtypes)?;
    instances(f, &params)?
        .into_iter()
        .map(|inst| {
            if inst.args.is_empty() {
                return lower_with(&inst.function, launch.clone(), helpers);
            }
            let mut lowered = lower_with(&inst.function, launch.clone(), helpers)
                .map_err(|e| in_instance(&inst.name, e))?;
            lowered.kernel.name = inst.name;
            lowered.kernel.type_args = inst.args;
            Ok(lowered)
        })
        .collect()
}

/// One type parameter of a kernel and the scalars it takes.
#[derive(Debug, Clone)]
pub struct TypeParam {
    /// Its name, as written (`T`).
    pub name: syn::Ident,
    /// Its bound.
    pub bound: Bound,
    /// The scalars it takes: the `dtypes(..)` list, or all its bound admits.
    pub scalars: Vec<Scalar>,
}

/// One instance of a generic kernel: the function with every type
/// parameter replaced by its scalar.
pub struct Instance {
    /// `axpy<f32>`.
    pub name: String,
    /// Each type parameter's name and scalar, in declaration order.
    pub args: Vec<(String, Scalar)>,
    /// The function as a kernel with no type parameters.
    pub function: syn::ItemFn,
}

/// The scalar a Rust type name spells (`f32`), among [`Scalar::ALL`].
pub fn scalar_named(name: &str) -> Option<Scalar> {
    Scalar::ALL.into_iter().find(|s| s.name() == name)
}

/// The type parameters of `f` with the scalars each takes, checked against
/// the attribute's `dtypes(..)` entries.
pub fn type_params(f: &syn::ItemFn, dtypes: &[DtypesDecl]) -> syn::Result<Vec<TypeParam>> {
    let bounds_hint = "bound it by `Float`, `Int` or `Number`, e.g. `T: Float`";
    let mut params = Vec::new();
    for g in &f.sig.generics.params {
        let syn::GenericParam::Type(t) = g else {
            continue;
        };
        if let Some(d) = &t.default {
            return Err(err(
                d,
                "a type parameter has no default",
                "remove `= ..`; list its scalars in `#[kernel(dtypes(T = [f32]))]`",
            ));
        }
        let mut bounds = t.bounds.iter();
        let bound = match (bounds.next(), bounds.next()) {
            (Some(syn::TypeParamBound::Trait(tb)), None) => {
                let name = tb.path.get_ident().map(|i| i.to_string());
                name.as_deref()
                    .and_then(Bound::from_name)
                    .ok_or_else(|| err(&tb.path, "unknown bound", bounds_hint))?
            }
            (None, _) => {
                return Err(err(t, "a type parameter needs a bound", bounds_hint));
            }
            _ => return Err(err(&t.bounds, "one bound per type parameter", bounds_hint)),
        };
        params.push(TypeParam {
            name: t.ident.clone(),
            bound,
            scalars: bound.admitted(),
        });
    }
    for d in dtypes {
        let Some(p) = params.iter_mut().find(|p| p.name == d.param) else {
            return Err(err(
                &d.param,
                &format!(
                    "`dtypes` names `{}`, which is no type parameter of `{}`",
                    d.param, f.sig.ident
                ),
                "name a type parameter of the kernel, e.g. `dtypes(T = [f32])` for `fn k<T: Float>`",
            ));
        };
        let mut chosen = Vec::new();
        for (s, at) in &d.scalars {
            if !p.bound.admits(*s) {
                let admitted: Vec<&str> = p.bound.admitted().iter().map(|s| s.name()).collect();
                return Err(err(
                    at,
                    &format!("`{s}` is not admitted by `{}: {}`", p.name, p.bound.name()),
                    &format!("`{}` admits {}", p.bound.name(), admitted.join(", ")),
                ));
            }
            if chosen.contains(s) {
                return Err(err(
                    at,
                    &format!("`{s}` is listed twice"),
                    "list each dtype once",
                ));
            }
            chosen.push(*s);
        }
        p.scalars = chosen;
    }
    Ok(params)
}

/// Every instance of `f`: the product of its type parameters' scalars, the
/// first parameter varying slowest. A function with no type parameters is
/// its own single instance, under its own name.
pub fn instances(f: &syn::ItemFn, params: &[TypeParam]) -> syn::Result<Vec<Instance>> {
    if params.is_empty() {
        return Ok(vec![Instance {
            name: f.sig.ident.to_string(),
            args: Vec::new(),
            function: f.clone(),
        }]);
    }
    let mut values = ValueUses {
        params,
        found: None,
    };
    values.visit_block(&f.block);
    for input in &f.sig.inputs {
        values.visit_fn_arg(input);
    }
    if let Some(e) = values.found {
        return Err(e);
    }
    let mut choices: Vec<Vec<Scalar>> = vec![Vec::new()];
    for p in params {
        choices = choices
            .into_iter()
            .flat_map(|prefix| {
                p.scalars.iter().map(move |&s| {
                    let mut next = prefix.clone();
                    next.push(s);
                    next
                })
            })
            .collect();
    }
    Ok(choices
        .into_iter()
        .map(|scalars| {
            let mut function = f.clone();
            function.sig.generics.params = function
                .sig
                .generics
                .params
                .into_iter()
                .filter(|g| !matches!(g, syn::GenericParam::Type(_)))
                .collect();
            let args: Vec<(String, Scalar)> = params
                .iter()
                .zip(&scalars)
                .map(|(p, &s)| (p.name.to_string(), s))
                .collect();
            Substitute { args: &args }.visit_item_fn_mut(&mut function);
            Instance {
                name: instance_name(&f.sig.ident.to_string(), &scalars),
                args,
                function,
            }
        })
        .collect())
}

/// Prefixes every message of `e` with the instance's name, keeping spans.
pub fn in_instance(name: &str, e: syn::Error) -> syn::Error {
    e.into_iter()
        .map(|one| syn::Error::new(one.span(), format!("{name}: {one}")))
        .reduce(|mut all, one| {
            all.combine(one);
            all
        })
        .expect("an error holds at least one message")
}

/// Finds a type parameter used as a value (`let n = T;`).
struct ValueUses<'a> {
    params: &'a [TypeParam],
    found: Option<syn::Error>,
}

impl<'ast> Visit<'ast> for ValueUses<'_> {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if let Some(id) = p.path.get_ident() {
            if self.found.is_none() && self.params.iter().any(|t| t.name == *id) {
                self.found = Some(err(
                    p,
                    &format!("`{id}` is a type parameter, not a value"),
                    &format!(
                        "use it as a type (`as {id}`, `let x: {id}`) or for a constant (`{id}::MAX`)"
                    ),
                ));
            }
        }
        syn::visit::visit_expr_path(self, p);
    }
}

/// Replaces each type parameter by its scalar's name, at the parameter's
/// span, wherever a path starts with it: types (`&[T]`, `as T`,
/// `shared::<T>`) and constants (`T::MAX`).
struct Substitute<'a> {
    args: &'a [(String, Scalar)],
}

impl VisitMut for Substitute<'_> {
    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        if p.leading_colon.is_none() {
            if let Some(first) = p.segments.first_mut() {
                let named = self.args.iter().find(|(n, _)| first.ident == n);
                if let (Some((_, s)), syn::PathArguments::None) = (named, &first.arguments) {
                    first.ident = syn::Ident::new(s.name(), first.ident.span());
                }
            }
        }
        syn::visit_mut::visit_path_mut(self, p);
    }
}

#[cfg(test)]
mod tests {
    use oxmera_kernel_ir::ir::{ExprKind, ParamKind, Scalar, StmtKind, Value};

    use crate::file::lower_source;

    /// The error `lower_source` gives for `text`, as printed.
    fn error_of(text: &str) -> String {
        lower_source("g.rs", text).unwrap_err().to_string()
    }

    #[test]
    fn one_kernel_per_dtype_named_after_it() {
        let f = lower_source(
            "axpy.rs",
            "#[kernel(block = [64])]
fn axpy<T: Number>(a: T, x: &[T], y: &mut [T], n: u32) {
    let i = thread_idx_x();
    if i < n {
        let big: T = T::MAX;
        y[i] = min(a * x[i] + y[i], big) + (1 as T);
    }
}
",
        )
        .unwrap();
        // No `dtypes(..)`: every scalar `Number` admits, in Scalar::ALL's order.
        assert_eq!(
            f.names(),
            [
                "axpy<f32>",
                "axpy<i32>",
                "axpy<u32>",
                "axpy<f64>",
                "axpy<i64>",
                "axpy<u64>",
                "axpy<u8>",
                "axpy<u16>",
                "axpy<f16>",
                "axpy<bf16>"
            ]
        );
        for (k, s) in f
            .kernels
            .iter()
            .zip([Scalar::F32, Scalar::I32, Scalar::U32])
        {
            assert_eq!(k.type_args, [("T".to_string(), s)]);
            assert_eq!(k.base_name(), "axpy");
            assert_eq!(k.entry_symbol(), format!("axpy_{s}"));
            assert_eq!(k.params[0].kind, ParamKind::Scalar(s));
            assert_eq!(
                k.params[2].kind,
                ParamKind::Buffer {
                    elem: s,
                    writable: true
                }
            );
            // `big: T` is the instance's scalar, and `T::MAX` its maximum.
            assert_eq!(k.locals[1].ty, s);
            let StmtKind::If { then, .. } = &k.body[1].kind else {
                panic!("{:?}", k.body[1]);
            };
            let StmtKind::Assign { value, .. } = &then[0].kind else {
                panic!("{:?}", then[0]);
            };
            let want = match s {
                Scalar::F32 => Value::F32(f32::MAX),
                Scalar::I32 => Value::I32(i32::MAX),
                _ => Value::U32(u32::MAX),
            };
            assert_eq!(value.kind, ExprKind::Lit(want));
        }
        // The kernel is picked by its instance's name, with or without spaces.
        assert_eq!(f.pick(Some("axpy<i32>")).unwrap().name, "axpy<i32>");
        assert_eq!(f.instances("axpy").len(), 10);
        let e = f.pick(Some("axpy")).unwrap_err();
        assert!(
            e.contains(
                "`axpy` is generic; choose an instance (axpy<f32>, axpy<i32>, axpy<u32>, \
                 axpy<f64>, axpy<i64>, axpy<u64>, axpy<u8>, axpy<u16>, axpy<f16>, axpy<bf16>)"
            ),
            "{e}"
        );
    }

    #[test]
    fn dtypes_choose_the_instances_and_several_parameters_multiply() {
        let f = lower_source(
            "pair.rs",
            "#[kernel(dtypes(T = [f32], I = [u32, i32]))]
fn pair<T: Float, I: Int>(x: &[T], idx: &[I], out: &mut [T]) {
    let i = thread_idx_x();
    let s = shared::<T>(64);
    s[i] = x[idx[i] as u32] * 2.0;
    out[i] = s[i] + (idx[i] as T);
}
",
        )
        .unwrap();
        // The first parameter varies slowest; `I` in the order `dtypes` lists.
        assert_eq!(f.names(), ["pair<f32, u32>", "pair<f32, i32>"]);
        let k = f.get("pair<f32,i32>").unwrap();
        assert_eq!(k.shared[0].elem, Scalar::F32);
        assert_eq!(
            k.params[1].kind,
            ParamKind::Buffer {
                elem: Scalar::I32,
                writable: false
            }
        );
        assert_eq!(k.entry_symbol(), "pair_f32_i32");
    }

    #[test]
    fn a_kernel_without_type_parameters_keeps_its_name() {
        let f = lower_source(
            "k.rs",
            "#[kernel]\nfn k<const N: u32 = 4>(x: &mut [f32]) { x[N] = 1.0; }\n",
        )
        .unwrap();
        assert_eq!(f.names(), ["k"]);
        assert!(f.kernels[0].type_args.is_empty());
        assert_eq!(f.kernels[0].entry_symbol(), "k");
    }

    #[test]
    fn errors_in_an_instance_name_it_and_point_at_the_source() {
        // `2.0` is fine for f32 and wrong for i32: the error says which.
        let m = error_of(
            "#[kernel]
fn scale<T: Number>(x: &mut [T]) {
    x[0] = x[0] * 2.0;
}
",
        );
        assert!(m.contains("error: scale<i32>: "), "{m}");
        assert!(m.contains("--> g.rs:3:"), "{m}");
        assert!(!m.contains("scale<f32>"), "{m}");
    }

    #[test]
    fn bad_bounds_dtypes_and_values_are_refused_with_a_hint() {
        let m = error_of("#[kernel]\nfn k<T: Real>(x: &mut [T]) {}\n");
        assert!(
            m.contains("unknown bound; hint: bound it by `Float`, `Int` or `Number`"),
            "{m}"
        );
        assert!(m.contains("--> g.rs:2:9"), "{m}");
        let m = error_of("#[kernel]\nfn k<T>(x: &mut [T]) {}\n");
        assert!(m.contains("a type parameter needs a bound"), "{m}");
        let m = error_of("#[kernel(dtypes(T = [f32, i32]))]\nfn k<T: Float>(x: &mut [T]) {}\n");
        assert!(
            m.contains("`i32` is not admitted by `T: Float`; hint: `Float` admits f32"),
            "{m}"
        );
        assert!(m.contains("--> g.rs:1:27"), "{m}");
        let m = error_of("#[kernel(dtypes(U = [f32]))]\nfn k<T: Float>(x: &mut [T]) {}\n");
        assert!(
            m.contains("`dtypes` names `U`, which is no type parameter of `k`"),
            "{m}"
        );
        let m = error_of("#[kernel(dtypes(T = [f128]))]\nfn k<T: Float>(x: &mut [T]) {}\n");
        assert!(
            m.contains("unknown scalar type; hint: the scalars are f32, i32, u32, bool"),
            "{m}"
        );
        let m = error_of("#[kernel(dtypes(T = [f32, f32]))]\nfn k<T: Float>(x: &mut [T]) {}\n");
        assert!(m.contains("`f32` is listed twice"), "{m}");
        let m = error_of("#[kernel]\nfn k<T: Float = f32>(x: &mut [T]) {}\n");
        assert!(m.contains("a type parameter has no default"), "{m}");
        let m = error_of("#[kernel]\nfn k<T: Int>(x: &mut [T]) { x[0] = T; }\n");
        assert!(m.contains("`T` is a type parameter, not a value"), "{m}");
        assert!(m.contains("--> g.rs:2:36"), "{m}");
    }

    #[test]
    fn every_admitted_scalar_is_a_type_the_lowering_reads() {
        // The substitution writes a scalar's name where `T` stood; each
        // scalar a bound admits must read back as itself.
        for s in oxmera_kernel_ir::dtype::Bound::Number.admitted() {
            let text = format!("#[kernel]\nfn k(x: &mut [{s}], v: {s}) {{ x[0] = v; }}\n");
            let f = lower_source("s.rs", &text).unwrap();
            assert_eq!(f.kernels[0].params[1].kind, ParamKind::Scalar(s));
        }
    }
}
