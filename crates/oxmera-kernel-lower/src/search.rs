//! The grammar of `search(..)`, the search space inside `#[kernel(..)]`.
//!
//! ```text
//! #[kernel(
//!     block = [[16, 16]],                 // the contract: proven at compile time
//!     search(                             // a search space: checked at tune time
//!         TILE = [8, 16, 32],             // values of `const TILE: u32`
//!         block = [[TILE, TILE]],         // block shapes; an extent may name a constant
//!         warp = 8,                       // optional: only on targets with warps of 8
//!         require = [TILE % block_x == 0] // optional: what a tile needs of the block
//!     ),
//!     search(warp = 8, block = [8, 16]),  // another space, for another warp width
//! )]
//! ```
//!
//! - an UPPER-CASE name is one of the kernel's `const` generics, with the
//!   values to try (integer literals, negative for an `i32` constant; a
//!   value outside the constant's type is an error at its span); a
//!   constant not named keeps its default;
//! - `block` lists shapes as the contract does (`[32, 64]`,
//!   `[[16, 16], [32, 8]]`), and an extent may be a constant's name; no
//!   `block`: the contract's blocks;
//! - `warp = N` limits the space to targets with warps of `N` lanes; a
//!   target uses the spaces naming its width, else those naming none;
//! - `require = [A % B == 0, ..]` states a divisibility the kernel needs,
//!   where `A` and `B` are literals, constants or `block_x`, `block_y`,
//!   `block_z`; a configuration breaking one is refused before analysis.
//!
//! Parsing keeps names as written; [`SearchDecl::resolve`] turns them into
//! the IR's [`SearchSpace`] once the kernel's constants are known, so an
//! unknown name is an error at its own span.

use oxmera_kernel_ir::ir::{Axis, Kernel, Scalar};
use oxmera_kernel_ir::space::{Divisible, Operand, SearchSpace};
use syn::punctuated::Punctuated;

/// A number as written in `search(..)`: a literal or a name.
#[derive(Debug, Clone)]
pub enum RawOperand {
    /// An integer literal.
    Lit(u32),
    /// A constant's name or `block_x`/`block_y`/`block_z`.
    Name(syn::Ident),
}

/// One `search(..)` as written, before its names are resolved.
#[derive(Debug, Clone)]
pub struct SearchDecl {
    /// `warp = N`.
    pub warp: Option<u32>,
    /// `block = [..]`, each shape's extents (1 to 3, padded with 1).
    pub blocks: Vec<[RawOperand; 3]>,
    /// `NAME = [values]`, in the order written, each value with the
    /// expression it was written as (for an error at its span).
    pub values: Vec<(syn::Ident, Vec<(syn::Expr, i64)>)>,
    /// `require = [A % B == 0, ..]`.
    pub require: Vec<(RawOperand, RawOperand)>,
}

const HINT: &str = "hint: write e.g. `search(TILE = [8, 16, 32], block = [[TILE, TILE]])`";

fn error(at: impl quote::ToTokens, what: &str) -> syn::Error {
    syn::Error::new_spanned(at, format!("{what}; {HINT}"))
}

/// Parses one `search(..)` list.
pub fn parse_search(list: &syn::MetaList) -> syn::Result<SearchDecl> {
    let parser = Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated;
    let items = list.parse_args_with(parser)?;
    let mut decl = SearchDecl {
        warp: None,
        blocks: Vec::new(),
        values: Vec::new(),
        require: Vec::new(),
    };
    for nv in items {
        let Some(name) = nv.path.get_ident() else {
            return Err(error(&nv.path, "expected a name"));
        };
        let key = name.to_string();
        match key.as_str() {
            "block" => decl.blocks = shapes(&nv.value)?,
            "warp" => decl.warp = Some(literal(&nv.value)?),
            "require" => decl.require = requirements(&nv.value)?,
            _ if key.chars().next().is_some_and(|c| c.is_ascii_uppercase()) => {
                if decl.values.iter().any(|(n, _)| n == name) {
                    return Err(error(name, "this constant is given values twice"));
                }
                let syn::Expr::Array(a) = &nv.value else {
                    return Err(error(&nv.value, "expected a list of values"));
                };
                let values = a
                    .elems
                    .iter()
                    .map(|e| Ok((e.clone(), signed(e)?)))
                    .collect::<syn::Result<Vec<_>>>()?;
                if values.is_empty() {
                    return Err(error(&nv.value, "a constant needs at least one value"));
                }
                decl.values.push((name.clone(), values));
            }
            _ => {
                return Err(error(
                    name,
                    "unknown search option: options are `block`, `warp`, `require` and a constant's UPPER-CASE name",
                ));
            }
        }
    }
    Ok(decl)
}

fn literal(e: &syn::Expr) -> syn::Result<u32> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse(),
        _ => Err(error(e, "expected an integer literal")),
    }
}

fn signed(e: &syn::Expr) -> syn::Result<i64> {
    match e {
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => Ok(-i64::from(literal(expr)?)),
        other => Ok(i64::from(literal(other)?)),
    }
}

fn operand(e: &syn::Expr) -> syn::Result<RawOperand> {
    match e {
        syn::Expr::Path(p) if p.path.get_ident().is_some() => Ok(RawOperand::Name(
            p.path.get_ident().expect("checked").clone(),
        )),
        other => Ok(RawOperand::Lit(literal(other)?)),
    }
}

fn shapes(e: &syn::Expr) -> syn::Result<Vec<[RawOperand; 3]>> {
    let syn::Expr::Array(a) = e else {
        return Err(error(e, "expected a list of block shapes"));
    };
    a.elems
        .iter()
        .map(|shape| {
            let extents = match shape {
                syn::Expr::Array(inner) => inner
                    .elems
                    .iter()
                    .map(operand)
                    .collect::<syn::Result<Vec<_>>>()?,
                other => vec![operand(other)?],
            };
            let one = || RawOperand::Lit(1);
            let mut it = extents.into_iter();
            let shape3 = [
                it.next()
                    .ok_or_else(|| error(shape, "a shape needs an extent"))?,
                it.next().unwrap_or_else(one),
                it.next().unwrap_or_else(one),
            ];
            if it.next().is_some() {
                return Err(error(shape, "a block shape has 1 to 3 extents"));
            }
            Ok(shape3)
        })
        .collect()
}

fn requirements(e: &syn::Expr) -> syn::Result<Vec<(RawOperand, RawOperand)>> {
    let syn::Expr::Array(a) = e else {
        return Err(error(e, "expected `require = [A % B == 0]`"));
    };
    a.elems
        .iter()
        .map(|r| {
            let shape = "a requirement reads `A % B == 0`";
            let syn::Expr::Binary(eq) = r else {
                return Err(error(r, shape));
            };
            let is_zero = matches!(literal(&eq.right), Ok(0));
            let syn::Expr::Binary(rem) = &*eq.left else {
                return Err(error(r, shape));
            };
            if !matches!(eq.op, syn::BinOp::Eq(_))
                || !is_zero
                || !matches!(rem.op, syn::BinOp::Rem(_))
            {
                return Err(error(r, shape));
            }
            Ok((operand(&rem.left)?, operand(&rem.right)?))
        })
        .collect()
}

impl SearchDecl {
    /// The IR's search space, each name resolved against `k`'s constants
    /// (and, inside `require`, the block's extents).
    pub fn resolve(&self, k: &Kernel) -> syn::Result<SearchSpace> {
        let spec = |name: &syn::Ident| -> syn::Result<u32> {
            k.specs
                .iter()
                .position(|s| *name == s.name)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    let names: Vec<&str> = k.specs.iter().map(|s| s.name.as_str()).collect();
                    let known = if names.is_empty() {
                        "it has none (declare `const TILE: u32 = 16`)".to_string()
                    } else {
                        format!("its constants: {}", names.join(", "))
                    };
                    syn::Error::new_spanned(
                        name,
                        format!("`{}` has no constant `{name}`; {known}", k.name),
                    )
                })
        };
        let extent = |o: &RawOperand| -> syn::Result<Operand> {
            match o {
                RawOperand::Lit(v) => Ok(Operand::Lit(*v)),
                RawOperand::Name(n) => spec(n).map(Operand::Spec),
            }
        };
        let term = |o: &RawOperand| -> syn::Result<Operand> {
            match o {
                RawOperand::Name(n) if n == "block_x" => Ok(Operand::Block(Axis::X)),
                RawOperand::Name(n) if n == "block_y" => Ok(Operand::Block(Axis::Y)),
                RawOperand::Name(n) if n == "block_z" => Ok(Operand::Block(Axis::Z)),
                other => extent(other),
            }
        };
        Ok(SearchSpace {
            warp: self.warp,
            blocks: self
                .blocks
                .iter()
                .map(|b| Ok([extent(&b[0])?, extent(&b[1])?, extent(&b[2])?]))
                .collect::<syn::Result<_>>()?,
            values: self
                .values
                .iter()
                .map(|(n, v)| {
                    let i = spec(n)?;
                    let c = &k.specs[i as usize];
                    // The constant's type bounds its values: a `u32` takes
                    // no negative value, an `i32` none past `i32::MAX`.
                    let (lo, hi) = match c.ty {
                        Scalar::I32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
                        _ => (0, i64::from(u32::MAX)),
                    };
                    for (e, value) in v {
                        if !(lo..=hi).contains(value) {
                            return Err(syn::Error::new_spanned(
                                e,
                                format!(
                                    "{value} is out of range for `const {}: {}` ({lo} to {hi})",
                                    c.name,
                                    if c.ty == Scalar::I32 { "i32" } else { "u32" },
                                ),
                            ));
                        }
                    }
                    Ok((i, v.iter().map(|(_, value)| *value).collect()))
                })
                .collect::<syn::Result<_>>()?,
            require: self
                .require
                .iter()
                .map(|(a, b)| {
                    Ok(Divisible {
                        dividend: term(a)?,
                        divisor: term(b)?,
                    })
                })
                .collect::<syn::Result<_>>()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::file::lower_source;
    use oxmera_kernel_ir::ir::Dim3;
    use oxmera_kernel_ir::space::configurations;
    use oxmera_kernel_ir::target::Target;

    #[test]
    fn a_search_space_is_read_and_kept_apart_from_the_contract() {
        let file = lower_source(
            "t.rs",
            "#[kernel(block = [[16, 16]], search(TILE = [8, 16], block = [[TILE, TILE]], \
             require = [TILE % block_x == 0]), search(warp = 8, block = [[8, 8]]))] \
             fn t<const TILE: u32 = 16>(x: &mut [f32]) { x[thread_idx_x()] = 1.0; }",
        )
        .unwrap();
        let k = &file.kernels[0];
        assert_eq!(k.launch.blocks, vec![Dim3::new(16, 16, 1)]);
        assert_eq!(k.launch.search.len(), 2);
        let blocks: Vec<Dim3> = configurations(k, &Target::generic())
            .into_iter()
            .map(|(c, _)| c.block)
            .collect();
        assert_eq!(blocks, [Dim3::new(8, 8, 1), Dim3::new(16, 16, 1)]);
        assert_eq!(configurations(k, &Target::lavapipe()).len(), 1);
    }

    #[test]
    fn mistakes_in_a_search_space_are_named() {
        let e = |src: &str| match lower_source("t.rs", src) {
            Ok(_) => panic!("accepted: {src}"),
            Err(e) => e.to_string(),
        };
        let body = "(x: &mut [f32]) { x[thread_idx_x()] = 1.0; }";
        let msg = e(&format!(
            "#[kernel(search(TILE = [8]))] fn t<const T: u32 = 1>{body}"
        ));
        assert!(msg.contains("no constant `TILE`"), "{msg}");
        let msg = e(&format!(
            "#[kernel(search(require = [TILE < 4]))] fn t<const TILE: u32 = 1>{body}"
        ));
        assert!(msg.contains("A % B == 0"), "{msg}");
        let msg = e(&format!("#[kernel(search(tile = [8]))] fn t{body}"));
        assert!(msg.contains("unknown search option"), "{msg}");
    }

    /// A value outside its constant's type is an error at the value: `-1`
    /// for a `u32`, anything past `i32::MAX` for an `i32`.
    #[test]
    fn a_value_outside_its_constants_type_is_an_error_at_its_span() {
        let body = "(x: &mut [f32]) { x[thread_idx_x()] = 1.0; }";
        let at = |src: &str| match lower_source("t.rs", src) {
            Ok(_) => panic!("accepted: {src}"),
            Err(e) => (e.to_string(), format!("{e:?}")),
        };
        let src = format!("#[kernel(search(TILE = [8, -1]))] fn t<const TILE: u32 = 8>{body}");
        let (msg, _) = at(&src);
        assert!(
            msg.contains("-1 is out of range for `const TILE: u32` (0 to 4294967295)"),
            "{msg}"
        );
        let col = src.find("-1").unwrap() + 1;
        assert!(
            msg.contains(&format!(":1:{col}")),
            "the value's column {col}: {msg}"
        );
        let src = format!(
            "#[kernel(search(S = [-2147483648, 2147483648]))] fn t<const S: i32 = 0>{body}"
        );
        let (msg, _) = at(&src);
        assert!(
            msg.contains(
                "2147483648 is out of range for `const S: i32` (-2147483648 to 2147483647)"
            ),
            "{msg}"
        );
        let col = src.find(", 2147483648").unwrap() + 3;
        assert!(
            msg.contains(&format!(":1:{col}")),
            "the value's column {col}: {msg}"
        );
        // In range at both ends: accepted.
        for ok in [
            "#[kernel(search(S = [-2147483648, 2147483647]))] fn t<const S: i32 = 0>",
            "#[kernel(search(TILE = [0, 4294967295]))] fn t<const TILE: u32 = 8>",
        ] {
            lower_source("t.rs", &format!("{ok}{body}")).unwrap();
        }
    }
}
