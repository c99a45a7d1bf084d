//! Generic kernels: the bounds a type parameter may carry, the scalars each
//! bound admits, and the names an instance goes by.
//!
//! A kernel written once over its element type — `fn axpy<T: Float>(a: T,
//! x: &[T], y: &mut [T])` — is **monomorphised** by the lowering: one
//! [`Kernel`] per choice of scalars (an *instance*), each fully typed, so the
//! analysis, the simulator and both emitters never see a type parameter.
//! This module holds what the lowering, the `#[kernel]` macro and the
//! command line must agree on:
//!
//! - [`Bound::admitted`], the one place that says which scalars a bound
//!   admits. It reads [`Scalar::ALL`] through the predicates on [`Scalar`],
//!   so a scalar type added to the IR joins every bound that admits it —
//!   and every generic kernel that names no `dtypes(..)` gains an instance —
//!   with no change here;
//! - [`instance_name`]: `axpy<f32>`, `pair<f32, i32>`, the name an
//!   instance has in the IR, the registry and the CLI;
//! - [`Kernel::entry_symbol`]: the identifier an instance's entry point has
//!   in WGSL and PTX (`axpy_f32`), where `<` is not allowed;
//! - the Rust types a generated `axpy::<T>()` accepts: the primitive types
//!   under their own names and marker types for the scalars Rust lacks
//!   ([`f16`], [`bf16`]); generated code names every one through this module.

#![allow(non_camel_case_types)]

use crate::ir::{Kernel, Scalar};

/// A bound on a kernel's type parameter: which scalars it may stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `T: Float`: the floating-point scalars.
    Float,
    /// `T: Int`: the integer scalars, signed and unsigned.
    Int,
    /// `T: Number`: every float and every integer (not `bool`).
    Number,
}

impl Bound {
    /// Every bound, for messages that list them.
    pub const ALL: [Bound; 3] = [Bound::Float, Bound::Int, Bound::Number];

    /// The bound a name spells (`Float`, `Int`, `Number`).
    pub fn from_name(name: &str) -> Option<Bound> {
        Bound::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The bound's name as written in a kernel.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Float => "Float",
            Bound::Int => "Int",
            Bound::Number => "Number",
        }
    }

    /// Whether the bound admits `s`.
    pub fn admits(self, s: Scalar) -> bool {
        match self {
            Bound::Float => s.is_float(),
            Bound::Int => s.is_int(),
            Bound::Number => s.is_float() || s.is_int(),
        }
    }

    /// The scalars the bound admits, in [`Scalar::ALL`]'s order: the
    /// instances a type parameter gets when `dtypes(..)` names none.
    pub fn admitted(self) -> Vec<Scalar> {
        Scalar::ALL
            .into_iter()
            .filter(|&s| self.admits(s))
            .collect()
    }
}

/// The name of the instance of the generic kernel `base` at `args` (one
/// scalar per type parameter, in order): `axpy<f32>`, `pair<f32, i32>`.
pub fn instance_name(base: &str, args: &[Scalar]) -> String {
    let args: Vec<&str> = args.iter().map(|s| s.name()).collect();
    format!("{base}<{}>", args.join(", "))
}

impl Kernel {
    /// The name the kernel was written with: `axpy` for the instance
    /// `axpy<f32>`, the whole name for a kernel with no type parameters.
    pub fn base_name(&self) -> &str {
        match self.name.find('<') {
            Some(i) if !self.type_args.is_empty() => &self.name[..i],
            _ => &self.name,
        }
    }

    /// The scalars of an instance, in type-parameter order (empty for a
    /// kernel with no type parameters).
    pub fn type_arg_scalars(&self) -> Vec<Scalar> {
        self.type_args.iter().map(|(_, s)| *s).collect()
    }

    /// The identifier of the kernel's entry point in generated code: the
    /// name, or for an instance the base name and each scalar joined by
    /// `_` (`axpy<f32>` is `axpy_f32`), since `<` is no identifier
    /// character in WGSL or PTX.
    pub fn entry_symbol(&self) -> String {
        let mut out = self.base_name().to_string();
        for (_, s) in &self.type_args {
            out.push('_');
            out.push_str(s.name());
        }
        out
    }
}

/// `f32`, under the name generated code uses for every scalar.
pub type f32 = ::core::primitive::f32;
/// `i32`, under the name generated code uses for every scalar.
pub type i32 = ::core::primitive::i32;
/// `u32`, under the name generated code uses for every scalar.
pub type u32 = ::core::primitive::u32;
/// `f64`, under the name generated code uses for every scalar.
pub type f64 = ::core::primitive::f64;
/// `i64`, under the name generated code uses for every scalar.
pub type i64 = ::core::primitive::i64;
/// `u64`, under the name generated code uses for every scalar.
pub type u64 = ::core::primitive::u64;
/// `u8`, under the name generated code uses for every scalar.
pub type u8 = ::core::primitive::u8;
/// `u16`, under the name generated code uses for every scalar.
pub type u16 = ::core::primitive::u16;

/// The IEEE half-precision float, which Rust lacks: a marker type that
/// selects a kernel's `f16` instance (`axpy::<f16>()`); it holds no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum f16 {}

/// The bfloat16 float (an f32's exponent, 7 fraction bits), which Rust
/// lacks: a marker type that selects a kernel's `bf16` instance; it holds
/// no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum bf16 {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_admit_by_kind_and_never_bool() {
        assert_eq!(
            Bound::Float.admitted(),
            [Scalar::F32, Scalar::F64, Scalar::F16, Scalar::BF16]
        );
        assert_eq!(
            Bound::Int.admitted(),
            [
                Scalar::I32,
                Scalar::U32,
                Scalar::I64,
                Scalar::U64,
                Scalar::U8,
                Scalar::U16
            ]
        );
        assert_eq!(Bound::Number.admitted().len(), 10);
        for b in Bound::ALL {
            assert!(!b.admits(Scalar::Bool), "{b:?}");
            assert_eq!(Bound::from_name(b.name()), Some(b));
        }
        assert_eq!(Bound::from_name("Real"), None);
    }

    #[test]
    fn an_instance_is_named_after_its_scalars() {
        assert_eq!(instance_name("axpy", &[Scalar::F32]), "axpy<f32>");
        assert_eq!(
            instance_name("pair", &[Scalar::F32, Scalar::I32]),
            "pair<f32, i32>"
        );
    }
}
