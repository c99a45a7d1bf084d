//! Front end: elementwise operations of one operand.
//!
//! Every method here goes through [`Tensor::unary_op`], which checks the
//! dtype against the op's rule, validates the op's scalar parameters and
//! asks the backend for a result of the input's shape and dtype.
//!
//! Dtype rules, in one place (each is tested):
//!
//! - **Float-only** (`exp`, `log`, `log1p`, `sqrt`, `rsqrt`, `recip`, `sin`,
//!   `cos`, `tanh`, `sigmoid`, `leaky_relu`, `gelu`, `gelu_tanh`, `silu`,
//!   `softplus`, `erf`, `powf`, and the math and activation ops of
//!   `math.rs` and `activation.rs`): integer and bool inputs are
//!   [`Error::UnsupportedDType`] with the hint "cast to a float dtype
//!   first". oxmera never promotes silently.
//! - **Numeric** (`abs`, `sign`, `square`, `relu`, `floor`, `ceil`,
//!   `round`, `trunc`, `clamp`): floats and integers. Integer arithmetic wraps
//!   (two's complement): `abs(i32::MIN) == i32::MIN`, `square` overflows
//!   modulo 2^bits. `floor`, `ceil`, `round` and `trunc` of an integer are the
//!   identity. bool is not a number: cast it first.
//! - **Signed** (`neg`): floats, `i32`, `i64`. `u8` has no negative values,
//!   so `neg` of `u8` is an error rather than a silent `256 - x`.
//! - **Bool-only** (`logical_not`).
//!
//! Special values follow IEEE 754 through the `f64` computation: NaN in,
//! NaN out (for every op, including `relu`, `clamp` and `sign`), and the
//! documented limits at ±infinity.

use oxmera_core::{DType, Error, Result};

use crate::{Tensor, UnaryOp};

/// The hint attached to float-only ops applied to integers or bool.
pub(crate) const FLOAT_ONLY_HINT: &str = "cast to a float dtype first";
/// The hint attached to arithmetic on bool.
pub(crate) const BOOL_ARITH_HINT: &str =
    "bool is not a number: cast to an integer or float dtype first";
/// The hint attached to logical ops on non-bool tensors.
pub(crate) const LOGICAL_HINT: &str = "logical ops take bool: compare first, e.g. x.ne_scalar(0.0)";

/// Which dtypes a unary op accepts.
#[derive(Clone, Copy)]
enum Domain {
    Floats,
    Numeric,
    Signed,
    Bool,
}

fn domain(op: UnaryOp) -> Domain {
    use UnaryOp::*;
    match op {
        Neg => Domain::Signed,
        Abs | Sign | Square | Relu | Floor | Ceil | Round | Trunc | Clamp { .. } => Domain::Numeric,
        Not => Domain::Bool,
        Exp | Log | Log1p | Sqrt | Rsqrt | Recip | Sin | Cos | Tanh | Sigmoid | LeakyRelu(_)
        | GeluErf | GeluTanh | Silu | Softplus | Erf | Powf(_) => Domain::Floats,
        Expm1 | Log2 | Log10 | Exp2 | Tan | Atan | Asin | Acos | Sinh | Cosh => Domain::Floats,
        Elu(_) | Selu | Mish | Hardtanh { .. } | Hardsigmoid | Hardswish | Logsigmoid => {
            Domain::Floats
        }
    }
}

/// Rejects a dtype outside the op's domain with a hint saying what to do.
fn check_domain(op: UnaryOp, dtype: DType) -> Result<()> {
    let accepted = match domain(op) {
        Domain::Floats => dtype.is_float(),
        Domain::Numeric => !dtype.is_bool(),
        Domain::Signed => dtype.is_signed(),
        Domain::Bool => dtype.is_bool(),
    };
    if accepted {
        return Ok(());
    }
    let hint = match (domain(op), dtype) {
        (Domain::Floats, _) => FLOAT_ONLY_HINT,
        (Domain::Bool, _) => LOGICAL_HINT,
        (_, DType::U8) => "u8 is unsigned: cast to a signed dtype first",
        _ => BOOL_ARITH_HINT,
    };
    Err(Error::UnsupportedDType {
        op: op.name(),
        dtype,
        hint,
    })
}

/// Rejects scalar parameters that can only be mistakes.
fn check_params(op: UnaryOp) -> Result<()> {
    match op {
        UnaryOp::LeakyRelu(slope) if !slope.is_finite() => Err(Error::invalid(
            op.name(),
            "slope",
            format!("must be finite, got {slope}"),
        )),
        UnaryOp::Elu(alpha) if !alpha.is_finite() => Err(Error::invalid(
            op.name(),
            "alpha",
            format!("must be finite, got {alpha}"),
        )),
        UnaryOp::Hardtanh { min, max } => {
            if min.is_nan() || max.is_nan() {
                let which = if min.is_nan() { "min" } else { "max" };
                return Err(Error::invalid(op.name(), which, "must not be NaN"));
            }
            if min > max {
                return Err(Error::invalid(
                    op.name(),
                    "min",
                    format!("must not exceed max, got min {min} > max {max}"),
                ));
            }
            Ok(())
        }
        UnaryOp::Clamp { min, max } => {
            for (name, bound) in [("min", min), ("max", max)] {
                if bound.is_some_and(f64::is_nan) {
                    return Err(Error::invalid(op.name(), name, "must not be NaN"));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

impl Tensor {
    /// The one path every unary op takes to a backend: validation, then
    /// dispatch. The result has this tensor's shape and dtype.
    pub(super) fn unary_op(&self, op: UnaryOp) -> Result<Tensor> {
        check_domain(op, self.dtype())?;
        check_params(op)?;
        crate::tensor::probe_result(op.name(), self.shape(), self.dtype(), self.device())?;
        let storage = self.backend()?.unary(op, self)?;
        let out = Tensor::from_storage(storage, self.shape().clone());
        Ok(crate::autograd::rules::unary(op, self, out))
    }

    /// `-x`. Floats, `i32` and `i64` (wrapping: `-i32::MIN == i32::MIN`);
    /// `u8` and bool are [`Error::UnsupportedDType`]. `neg(0.0) == -0.0`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, -2, i32::MIN], [3], Device::Reference)?;
    /// assert_eq!(x.neg()?.to_vec::<i32>()?, vec![-1, 2, i32::MIN]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn neg(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Neg)
    }

    /// `|x|`. Floats and integers (wrapping: `abs(i32::MIN) == i32::MIN`;
    /// `u8` is unchanged). `abs(-0.0) == 0.0`, `abs(NaN)` is NaN.
    pub fn abs(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Abs)
    }

    /// -1, 0 or 1 by the sign of `x`. Floats and integers. Both zeros give
    /// `+0.0` and NaN gives NaN (as NumPy's `sign`).
    pub fn sign(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Sign)
    }

    /// `e^x`. Floats only. Overflows to `inf`; `exp(-inf) == 0`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{Device, Error};
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, 1.0], [2], Device::Reference)?;
    /// assert_eq!(x.exp()?.to_vec::<f64>()?, vec![1.0, std::f64::consts::E]);
    /// let i = Tensor::from_vec(vec![1i64], [1], Device::Reference)?;
    /// assert!(matches!(i.exp(), Err(Error::UnsupportedDType { .. })));
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn exp(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Exp)
    }

    /// The natural logarithm. Floats only. `log(0) == -inf`, `log(x < 0)`
    /// is NaN.
    pub fn log(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Log)
    }

    /// `ln(1 + x)`, accurate for tiny `x`. Floats only. `log1p(-1) == -inf`.
    pub fn log1p(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Log1p)
    }

    /// The square root. Floats only. `sqrt(-0.0) == -0.0`; negative inputs
    /// give NaN.
    pub fn sqrt(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Sqrt)
    }

    /// `1 / sqrt(x)`. Floats only. `rsqrt(0) == inf`, `rsqrt(-0.0) == -inf`
    /// (IEEE: `1 / -0.0`), `rsqrt(inf) == 0`.
    pub fn rsqrt(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Rsqrt)
    }

    /// `1 / x`. Floats only (PyTorch would promote integers to float;
    /// oxmera asks for the cast). `recip(±0) == ±inf`.
    pub fn recip(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Recip)
    }

    /// `x * x`. Floats and integers (wrapping).
    pub fn square(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Square)
    }

    /// The sine (radians). Floats only.
    pub fn sin(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Sin)
    }

    /// The cosine (radians). Floats only.
    pub fn cos(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Cos)
    }

    /// The hyperbolic tangent. Floats only.
    pub fn tanh(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Tanh)
    }

    /// The logistic function `1 / (1 + e^-x)`. Floats only; evaluated
    /// without overflow for large `|x|` (`sigmoid(-inf) == 0`,
    /// `sigmoid(inf) == 1`).
    pub fn sigmoid(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Sigmoid)
    }

    /// `max(x, 0)`. Floats and integers. NaN stays NaN (like PyTorch, unlike
    /// a naive `if x > 0`), and `relu(-0.0) == +0.0`.
    pub fn relu(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Relu)
    }

    /// `x` where `x > 0`, else `slope * x`. Floats only; `slope` must be
    /// finite ([`Error::InvalidArgument`] otherwise).
    pub fn leaky_relu(&self, slope: f64) -> Result<Tensor> {
        self.unary_op(UnaryOp::LeakyRelu(slope))
    }

    /// GELU in its exact form, `x * Φ(x)` with Φ the standard normal CDF
    /// (`Φ(x) = erfc(-x / √2) / 2`, which keeps relative accuracy for large
    /// negative `x`; the reference is within about 1e-15 relative
    /// everywhere). Floats only. `gelu(inf) == inf`, `gelu(-inf) == 0`
    /// (the limit; the textbook formula would give NaN).
    pub fn gelu(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::GeluErf)
    }

    /// GELU in the tanh approximation,
    /// `x/2 * (1 + tanh(√(2/π) (x + 0.044715 x³)))`. Floats only; limits at
    /// ±inf as for [`Tensor::gelu`].
    pub fn gelu_tanh(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::GeluTanh)
    }

    /// SiLU (swish), `x * sigmoid(x)`. Floats only. `silu(-inf) == 0`
    /// (the limit).
    pub fn silu(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Silu)
    }

    /// `ln(1 + e^x)`, evaluated without overflow (`softplus(1000) == 1000`).
    /// Floats only. PyTorch's `beta` and `threshold` parameters are not
    /// offered: this is the exact function with `beta = 1`.
    pub fn softplus(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Softplus)
    }

    /// The error function `2/√π ∫₀ˣ e^(-t²) dt`. Floats only.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, 1.0, -1.0], [3], Device::Reference)?;
    /// let y = x.erf()?.to_vec::<f64>()?;
    /// assert!((y[1] - 0.8427007929497149).abs() < 1e-15);
    /// assert_eq!(y[2], -y[1]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn erf(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Erf)
    }

    /// The largest integer not above `x`. Identity on integers.
    pub fn floor(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Floor)
    }

    /// The smallest integer not below `x`. Identity on integers.
    pub fn ceil(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Ceil)
    }

    /// The nearest integer, **ties to even** (`round(0.5) == 0`,
    /// `round(1.5) == 2`, `round(-2.5) == -2`), as NumPy and PyTorch do and
    /// unlike Rust's `f64::round`. Identity on integers.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![0.5f32, 1.5, 2.5, -2.5], [4], Device::Reference)?;
    /// assert_eq!(x.round()?.to_vec::<f32>()?, vec![0.0, 2.0, 2.0, -2.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn round(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Round)
    }

    /// `min(max(x, min), max)`, either bound optional. Floats and integers.
    ///
    /// - As in NumPy and PyTorch, when `min > max` every element becomes
    ///   `max`.
    /// - NaN elements stay NaN; a NaN bound is [`Error::InvalidArgument`].
    /// - For integer dtypes a bound is first narrowed to the integers it
    ///   admits (`min` rounds up, `max` rounds down) and saturated to the
    ///   dtype's range, so `clamp(Some(0.5), None)` on `i32` keeps values
    ///   `>= 1`, and `clamp(Some(300.0), None)` on `u8` gives 255 — the
    ///   result is always representable.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![-2.0f32, 0.5, 3.0], [3], Device::Reference)?;
    /// assert_eq!(x.clamp(Some(0.0), Some(1.0))?.to_vec::<f32>()?, vec![0.0, 0.5, 1.0]);
    /// assert_eq!(x.clamp(None, Some(0.0))?.to_vec::<f32>()?, vec![-2.0, 0.0, 0.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn clamp(&self, min: Option<f64>, max: Option<f64>) -> Result<Tensor> {
        self.unary_op(UnaryOp::Clamp { min, max })
    }

    /// `x^exponent` for a scalar exponent. Floats only (for integer powers
    /// of integers use [`Tensor::pow_scalar`]). IEEE `pow` special cases
    /// apply: `x^0 == 1` even for NaN `x`, `1^y == 1` even for NaN `y`,
    /// a negative base with a non-integer exponent gives NaN.
    pub fn powf(&self, exponent: f64) -> Result<Tensor> {
        self.unary_op(UnaryOp::Powf(exponent))
    }

    /// Logical not. Bool only (compare first to get a mask from numbers).
    pub fn logical_not(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Not)
    }
}
