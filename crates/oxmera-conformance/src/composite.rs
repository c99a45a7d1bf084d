//! The composite ops a case can name: ops built from other ops in the
//! tensor layer, with no [`oxmera_tensor::Backend`] method of their own.
//!
//! A backend runs a composite with the kernels it already has, so a case
//! of one checks that those kernels compose into PyTorch's semantics on
//! every layout class and dtype — and that the composite's gradient,
//! assembled by autograd from its parts, agrees with the reference's.

use oxmera_core::Result;
use oxmera_tensor::Tensor;

use crate::ops::Params;

/// One composite op, with its parameters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Composite {
    /// `x.isnan()` (bool).
    IsNan,
    /// `x.isinf()` (bool).
    IsInf,
    /// `x.isfinite()` (bool).
    IsFinite,
    /// `x.nan_to_num(nan, posinf, neginf)`.
    NanToNum {
        /// NaN's replacement.
        nan: f64,
        /// `+inf`'s replacement; `None` is the dtype's largest value.
        posinf: Option<f64>,
        /// `-inf`'s replacement; `None` is the dtype's lowest value.
        neginf: Option<f64>,
    },
}

impl Composite {
    /// The names of every composite, as cases spell them (for coverage).
    pub fn names() -> Vec<&'static str> {
        vec!["isnan", "isinf", "isfinite", "nan_to_num"]
    }

    /// The composite called `name`, taking the parameters it uses from
    /// `p`; `None` when no composite has that name.
    pub(crate) fn parse(name: &str, p: &mut Params) -> Option<Composite> {
        Some(match name {
            "isnan" => Composite::IsNan,
            "isinf" => Composite::IsInf,
            "isfinite" => Composite::IsFinite,
            // PyTorch's defaults: nan 0, the infinities the dtype's extremes.
            "nan_to_num" => Composite::NanToNum {
                nan: p.nan.take().unwrap_or(0.0),
                posinf: p.posinf.take(),
                neginf: p.neginf.take(),
            },
            _ => return None,
        })
    }

    /// The name cases and the report use.
    pub fn name(&self) -> &'static str {
        match self {
            Composite::IsNan => "isnan",
            Composite::IsInf => "isinf",
            Composite::IsFinite => "isfinite",
            Composite::NanToNum { .. } => "nan_to_num",
        }
    }

    /// How many inputs it takes: `(least, most)`.
    pub(crate) fn arity(&self) -> (usize, usize) {
        (1, 1)
    }

    /// Whether autograd records it (for float outputs): not the masks,
    /// whose outputs are bool.
    pub fn differentiable(&self) -> bool {
        matches!(self, Composite::NanToNum { .. })
    }

    /// Applies it through the tensor front end.
    pub(crate) fn apply(&self, x: &[Tensor]) -> Result<Tensor> {
        match self {
            Composite::IsNan => x[0].isnan(),
            Composite::IsInf => x[0].isinf(),
            Composite::IsFinite => x[0].isfinite(),
            Composite::NanToNum {
                nan,
                posinf,
                neginf,
            } => x[0].nan_to_num(*nan, *posinf, *neginf),
        }
    }
}
