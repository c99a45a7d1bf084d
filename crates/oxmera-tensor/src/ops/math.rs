//! Front end: the elementwise math PyTorch users reach for beyond the
//! basics of `unary.rs` and `binary.rs` — `expm1`, `log2`, `log10`,
//! `exp2`, the remaining trigonometric and hyperbolic functions, `trunc`,
//! and the two-operand `atan2`, `fmod` and `hypot` — plus `remainder`,
//! PyTorch's name for [`Tensor::rem`].
//!
//! Each is a [`UnaryOp`] or [`BinaryOp`] variant: the same chokepoints,
//! dtype rules and autograd as the ops beside it (see `unary.rs` for the
//! rules). All are float-only except `trunc` (identity on integers) and
//! `fmod` (integers too). Special values follow IEEE 754 through the
//! reference's `f64` evaluation, as stated per op.
//!
//! **`fmod` and `remainder` differ in sign.** `fmod`'s result has the
//! sign of the dividend (C's `fmod`, Rust's `%`, PyTorch's `fmod`);
//! `remainder`'s has the sign of the divisor (Python's `%`, PyTorch's
//! `remainder`): `fmod(-7, 3) == -1`, `remainder(-7, 3) == 2`.

use oxmera_core::{Result, Scalar};

use crate::{BinaryOp, Tensor, UnaryOp};

impl Tensor {
    /// `e^x - 1`, accurate where `x` is tiny (`expm1(1e-10)` keeps every
    /// digit that `exp(x) - 1` would lose). Floats only. `expm1(-inf) ==
    /// -1`, `expm1(-0.0) == -0.0`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, 1e-10, f64::NEG_INFINITY], [3], Device::Reference)?;
    /// let y = x.expm1()?.to_vec::<f64>()?;
    /// assert_eq!(y[0], 0.0);
    /// assert!((y[1] - 1.00000000005e-10).abs() < 1e-25);
    /// assert_eq!(y[2], -1.0);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn expm1(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Expm1)
    }

    /// The base-2 logarithm. Floats only. `log2(8) == 3`, `log2(0) ==
    /// -inf`, negative inputs give NaN.
    pub fn log2(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Log2)
    }

    /// The base-10 logarithm. Floats only. `log10(1000) == 3`, `log10(0)
    /// == -inf`, negative inputs give NaN.
    pub fn log10(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Log10)
    }

    /// `2^x`. Floats only. `exp2(10) == 1024`, `exp2(-inf) == 0`; overflows
    /// to `inf`.
    pub fn exp2(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Exp2)
    }

    /// The tangent (radians). Floats only. `tan(±inf)` is NaN.
    pub fn tan(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Tan)
    }

    /// The inverse tangent, in `[-π/2, π/2]`. Floats only. `atan(±inf) ==
    /// ±π/2`.
    pub fn atan(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Atan)
    }

    /// The inverse sine, in `[-π/2, π/2]`. Floats only; NaN outside
    /// `[-1, 1]`. Its gradient `1/√(1 - x²)` is infinite at `±1`.
    pub fn asin(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Asin)
    }

    /// The inverse cosine, in `[0, π]`. Floats only; NaN outside `[-1, 1]`.
    /// Its gradient `-1/√(1 - x²)` is infinite at `±1`.
    pub fn acos(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Acos)
    }

    /// The hyperbolic sine. Floats only. Overflows to `±inf` beyond about
    /// `|x| = 710` in `f64` (89 in `f32`).
    pub fn sinh(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Sinh)
    }

    /// The hyperbolic cosine. Floats only. `cosh(±inf) == inf`.
    pub fn cosh(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Cosh)
    }

    /// Rounding toward zero: `trunc(-2.7) == -2`, `trunc(2.7) == 2`,
    /// `trunc(-0.5) == -0.0`. Identity on integers. Its gradient is 0
    /// everywhere (as PyTorch's, and as `floor`'s here).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![-2.7f32, 2.7, -0.5], [3], Device::Reference)?;
    /// assert_eq!(x.trunc()?.to_vec::<f32>()?, vec![-2.0, 2.0, -0.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn trunc(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Trunc)
    }

    /// `atan2(self, other)`: the angle of the point `(other, self)` —
    /// `self` is the y coordinate, as in PyTorch's `atan2(input, other)` —
    /// in `[-π, π]`, broadcasting. Floats only. The quadrant follows both
    /// signs, zeros included: `atan2(+0, -1) == π`, `atan2(-0, -1) == -π`.
    /// The gradient at `(0, 0)` is NaN, as PyTorch's.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let y = Tensor::from_vec(vec![1.0f64, 1.0, 0.0, -1.0], [4], Device::Reference)?;
    /// let x = Tensor::from_vec(vec![1.0f64, 0.0, -1.0, 0.0], [4], Device::Reference)?;
    /// assert_eq!(y.atan2(&x)?.to_vec::<f64>()?, vec![FRAC_PI_4, FRAC_PI_2, PI, -FRAC_PI_2]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn atan2(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Atan2, other)
    }

    /// The remainder of `self / other` with the **sign of the dividend**
    /// (`self`), broadcasting: C's `fmod`, Rust's `%`, PyTorch's `fmod`.
    /// For the divisor's sign use [`Tensor::remainder`]. Floats: exact (no
    /// rounding happens), `fmod(x, 0)` and `fmod(±inf, y)` are NaN,
    /// `fmod(x, ±inf) == x`. Integers: `fmod(x, 0) == x` (no error, as for
    /// `rem`; PyTorch raises), wrapping at `MIN fmod -1 == 0`. Its gradient
    /// is 1 for `self` and `-trunc(self / other)` for `other`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let a = Tensor::from_vec(vec![7i32, -7, 7, -7], [4], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![3i32, 3, -3, -3], [4], Device::Reference)?;
    /// assert_eq!(a.fmod(&b)?.to_vec::<i32>()?, vec![1, -1, 1, -1]);
    /// assert_eq!(a.remainder(&b)?.to_vec::<i32>()?, vec![1, 2, -2, -1]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn fmod(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Fmod, other)
    }

    /// `fmod(self, value)` with `value` in this tensor's dtype (see
    /// [`Tensor::fmod`]).
    pub fn fmod_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Fmod, value.into(), false)
    }

    /// `√(self² + other²)`, broadcasting, without overflow or underflow in
    /// between (`hypot(3·2^1000, 4·2^1000) == 5·2^1000`, where the squares
    /// would overflow). Floats only.
    /// `hypot(±inf, NaN) == inf` (IEEE). The gradient at `(0, 0)` is NaN,
    /// as PyTorch's (`self / hypot`).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let big = 2f64.powi(1000);
    /// let a = Tensor::from_vec(vec![3.0f64, 5.0, 3.0 * big], [3], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![4.0f64, 12.0, 4.0 * big], [3], Device::Reference)?;
    /// assert_eq!(a.hypot(&b)?.to_vec::<f64>()?, vec![5.0, 13.0, 5.0 * big]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn hypot(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Hypot, other)
    }

    /// PyTorch's name for [`Tensor::rem`]: the remainder with the **sign of
    /// the divisor** (Python's `%`), broadcasting. The same op, kernel and
    /// gradient; see `rem` for integers' `x remainder 0 == x` and the float
    /// special values. For the dividend's sign use [`Tensor::fmod`].
    pub fn remainder(&self, other: &Tensor) -> Result<Tensor> {
        self.rem(other)
    }

    /// PyTorch's `remainder(tensor, scalar)`: [`Tensor::rem_scalar`].
    pub fn remainder_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.rem_scalar(value)
    }
}
