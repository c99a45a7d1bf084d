//! Front end: elementwise operations of two (or three) operands, with
//! broadcasting.
//!
//! Three private chokepoints carry every op of this module to a backend:
//! `binary_op` (arithmetic and logical ops, including the `_scalar` forms
//! and the `+ - * /` operators), `compare_op` (comparisons) and `where_op`
//! (`where_` and `masked_fill`).
//! Each checks, in this order: devices agree ([`Error::DeviceMismatch`]),
//! dtypes agree ([`Error::DTypeMismatch`]; oxmera never promotes), the
//! dtype suits the op ([`Error::UnsupportedDType`]), the shapes broadcast
//! ([`Error::BroadcastIncompatible`]); then it broadcasts the operands to
//! the common shape as stride-0 views and dispatches.
//!
//! # Semantics where NumPy and PyTorch differ, or where a choice was needed
//!
//! - **Integer `div` floors** (like Python's `//`, NumPy's `floor_divide`
//!   and PyTorch's `div(rounding_mode="floor")`; Rust's `/` truncates and
//!   PyTorch's plain `div` of integers returns floats). `-7 div 2 == -4`.
//! - **`rem` takes the sign of the divisor** (Python's `%`, NumPy's
//!   `remainder`, PyTorch's `remainder`; Rust's `%` and C's `fmod` follow
//!   the dividend). `-7 rem 2 == 1`, `7 rem -2 == -1`. With floor `div`
//!   this keeps `a == b * (a div b) + (a rem b)` for every integer pair.
//! - **Integer division by zero does not fail**: `x div 0 == 0` and
//!   `x rem 0 == x` (so the identity above still holds). NumPy gives 0 for
//!   both with a warning; PyTorch raises. A per-element error cannot be
//!   raised cleanly by a GPU backend, so oxmera defines the value instead.
//!   Float division by zero follows IEEE (`±inf` or NaN).
//! - **Integer overflow wraps** (two's complement) in every op:
//!   `i32::MIN div -1 == i32::MIN`, `i32::MAX + 1 == i32::MIN`.
//! - **Integer `pow` with a negative exponent** gives the exact power
//!   truncated toward zero: 1 for base 1, ±1 for base -1, and 0 for every
//!   other base, base 0 included (as for division by zero). NumPy and
//!   PyTorch raise.
//! - **`maximum`/`minimum` propagate NaN** (as NumPy's `maximum` and
//!   PyTorch's `maximum`; NumPy's `fmax` ignores it) and order `-0.0`
//!   below `+0.0` (IEEE 754-2019 `maximum`), so the result never depends on
//!   the operands' order.
//! - **Comparisons follow IEEE**: every comparison with NaN is false except
//!   `ne`, which is true; `-0.0 == 0.0`.
//! - **Scalar operands** (`add_scalar(2)`, `&t * 2.0`: any Rust integer,
//!   float or bool, through [`oxmera_core::Scalar`]) take the tensor's
//!   dtype. Into a float dtype the scalar is rounded to nearest; into an
//!   integer or bool dtype it must be exactly representable (an integer in
//!   range, or 0/1 for bool), else [`Error::InvalidArgument`] — `i32 + 0.5`
//!   is refused rather than silently truncated.

use oxmera_core::{DType, Error, Result, Scalar, Shape, broadcast_shapes, broadcast_shapes_all};

use super::unary::{BOOL_ARITH_HINT, LOGICAL_HINT};
use crate::{BinaryOp, CmpOp, Tensor};

/// `Err(DeviceMismatch)` unless `a` and `b` live on one device.
pub(crate) fn same_device(op: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.device() == b.device() {
        Ok(())
    } else {
        Err(Error::DeviceMismatch {
            op,
            lhs: a.device(),
            rhs: b.device(),
        })
    }
}

/// `Err(DTypeMismatch)` unless `a` and `b` have one dtype.
pub(crate) fn same_dtype(op: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() == b.dtype() {
        Ok(())
    } else {
        Err(Error::DTypeMismatch {
            op,
            lhs: a.dtype(),
            rhs: b.dtype(),
        })
    }
}

/// The hint attached to a non-bool condition or mask.
const COND_HINT: &str = "the condition must be bool: compare first, e.g. x.gt_scalar(0.0)";

/// `x` viewed (stride 0) at `shape`, or `x` itself when it already has it.
fn broadcast_view(x: &Tensor, shape: &Shape) -> Result<Tensor> {
    if x.shape() == shape {
        Ok(x.clone())
    } else {
        x.broadcast_to(shape.clone())
    }
}

/// Whether `value` is exactly a value of the integer or bool `dtype`.
fn representable(value: f64, dtype: DType) -> bool {
    // 2^63 is exactly representable in f64; i64's range is [-2^63, 2^63).
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    let (lo, hi_exclusive) = match dtype {
        DType::I32 => (i32::MIN as f64, i32::MAX as f64 + 1.0),
        DType::I64 => (-TWO_63, TWO_63),
        DType::U8 => (0.0, 256.0),
        DType::Bool => (0.0, 2.0),
        _ => return true,
    };
    value.fract() == 0.0 && value >= lo && value < hi_exclusive
}

/// `Err(InvalidArgument)` unless `value` is exactly a value of `dtype`
/// (always true of a float dtype, which rounds it).
fn check_representable(op: &'static str, value: f64, dtype: DType) -> Result<()> {
    if representable(value, dtype) {
        Ok(())
    } else {
        Err(Error::invalid(
            op,
            "scalar",
            format!("{value} is not exactly representable in {dtype}"),
        ))
    }
}

impl Tensor {
    /// A rank-0 tensor holding `value` in this tensor's dtype and device,
    /// refusing values the dtype cannot hold exactly (integers and bool).
    pub(crate) fn scalar_like(&self, op: &'static str, value: f64) -> Result<Tensor> {
        let dtype = self.dtype();
        check_representable(op, value, dtype)?;
        // The device's fill service makes it: no host data is uploaded.
        Tensor::full(Shape::scalar(), value, dtype, self.device())
    }

    /// The checks every binary op makes of its dtype: logical ops take
    /// bool, arithmetic ones refuse it.
    fn binary_dtype_suits(op: BinaryOp, dtype: DType) -> Result<()> {
        if matches!(op, BinaryOp::Atan2 | BinaryOp::Hypot) && !dtype.is_float() {
            return Err(Error::UnsupportedDType {
                op: op.name(),
                dtype,
                hint: super::unary::FLOAT_ONLY_HINT,
            });
        }
        let logical = matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor);
        if logical == dtype.is_bool() {
            return Ok(());
        }
        Err(Error::UnsupportedDType {
            op: op.name(),
            dtype,
            hint: if logical {
                LOGICAL_HINT
            } else {
                BOOL_ARITH_HINT
            },
        })
    }

    /// The one path every arithmetic and logical binary op takes to a
    /// backend. Output: the broadcast shape, the operands' dtype.
    pub(super) fn binary_op(&self, op: BinaryOp, other: &Tensor) -> Result<Tensor> {
        let name = op.name();
        same_device(name, self, other)?;
        same_dtype(name, self, other)?;
        Tensor::binary_dtype_suits(op, self.dtype())?;
        let shape = broadcast_shapes(name, self.shape(), other.shape())?;
        crate::tensor::probe_result(name, &shape, self.dtype(), self.device())?;
        let a = broadcast_view(self, &shape)?;
        let b = broadcast_view(other, &shape)?;
        let storage = self.backend()?.binary(op, &a, &b)?;
        let out = Tensor::from_storage(storage, shape);
        Ok(crate::autograd::rules::binary(op, self, other, out))
    }

    /// `op(self, value)` with `value` converted to this tensor's dtype, or
    /// `op(value, self)` when `scalar_first`: the one path of the `_scalar`
    /// forms. The value reaches the backend as a number, never as an
    /// uploaded tensor; only when a gradient is recorded is it made a
    /// rank-0 tensor (by the device's fill service) for the rule to use.
    pub(super) fn binary_scalar_op(
        &self,
        op: BinaryOp,
        value: Scalar,
        scalar_first: bool,
    ) -> Result<Tensor> {
        let name = op.name();
        let value = value.to_f64(name)?;
        Tensor::binary_dtype_suits(op, self.dtype())?;
        check_representable(name, value, self.dtype())?;
        let storage = self
            .backend()?
            .binary_scalar(op, self, value, scalar_first)?;
        let out = Tensor::from_storage(storage, self.shape().clone());
        if !crate::autograd::wants_grad(&[self]) {
            return Ok(out);
        }
        // Checked representable above; the device's fill service makes it.
        let s = Tensor::full(Shape::scalar(), value, self.dtype(), self.device())?;
        Ok(if scalar_first {
            crate::autograd::rules::binary(op, &s, self, out)
        } else {
            crate::autograd::rules::binary(op, self, &s, out)
        })
    }

    /// `op(self, value)` for a comparison: the one path of `eq_scalar`,
    /// `gt_scalar` and the rest (the value travels as a number).
    fn compare_scalar_op(&self, op: CmpOp, value: Scalar) -> Result<Tensor> {
        let value = value.to_f64(op.name())?;
        check_representable(op.name(), value, self.dtype())?;
        crate::tensor::probe_result(op.name(), self.shape(), DType::Bool, self.device())?;
        let storage = self.backend()?.compare_scalar(op, self, value)?;
        Ok(Tensor::from_storage(storage, self.shape().clone()))
    }

    /// The one path every comparison takes to a backend. Output: the
    /// broadcast shape, bool. Every dtype may be compared (bool as
    /// `false < true`).
    fn compare_op(&self, op: CmpOp, other: &Tensor) -> Result<Tensor> {
        let name = op.name();
        same_device(name, self, other)?;
        same_dtype(name, self, other)?;
        let shape = broadcast_shapes(name, self.shape(), other.shape())?;
        crate::tensor::probe_result(name, &shape, DType::Bool, self.device())?;
        let a = broadcast_view(self, &shape)?;
        let b = broadcast_view(other, &shape)?;
        let storage = self.backend()?.compare(op, &a, &b)?;
        Ok(Tensor::from_storage(storage, shape))
    }

    /// The one path `where_` and `masked_fill` take to a backend.
    fn where_op(op: &'static str, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        same_device(op, cond, a)?;
        same_device(op, a, b)?;
        if !cond.dtype().is_bool() {
            return Err(Error::UnsupportedDType {
                op,
                dtype: cond.dtype(),
                hint: COND_HINT,
            });
        }
        same_dtype(op, a, b)?;
        let shape = broadcast_shapes_all(op, &[cond.shape(), a.shape(), b.shape()])?;
        crate::tensor::probe_result(op, &shape, a.dtype(), a.device())?;
        let c = broadcast_view(cond, &shape)?;
        let x = broadcast_view(a, &shape)?;
        let y = broadcast_view(b, &shape)?;
        let storage = a.backend()?.where_cond(&c, &x, &y)?;
        let out = Tensor::from_storage(storage, shape);
        Ok(crate::autograd::rules::where_cond(&c, a, b, out))
    }

    /// `self + other`, broadcasting. Floats and integers (wrapping); bool is
    /// [`Error::UnsupportedDType`] (use [`Tensor::logical_or`]).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let col = Tensor::from_vec(vec![10.0f32, 20.0], [2, 1], Device::Reference)?;
    /// let row = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], Device::Reference)?;
    /// let sum = col.add(&row)?;
    /// assert_eq!(sum.dims(), &[2, 3]);
    /// assert_eq!(sum.to_vec::<f32>()?, vec![11.0, 12.0, 13.0, 21.0, 22.0, 23.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn add(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Add, other)
    }

    /// `self - other`, broadcasting. Floats and integers (wrapping; `u8`
    /// wraps below zero: `1 - 2 == 255`).
    pub fn sub(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Sub, other)
    }

    /// `self * other`, broadcasting. Floats and integers (wrapping).
    pub fn mul(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Mul, other)
    }

    /// `self / other`, broadcasting. Floats: IEEE division. Integers:
    /// **floor** division, `x div 0 == 0`, wrapping (see the module docs).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let a = Tensor::from_vec(vec![7i32, -7, 7, -7, 5], [5], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![2i32, 2, -2, -2, 0], [5], Device::Reference)?;
    /// assert_eq!(a.div(&b)?.to_vec::<i32>()?, vec![3, -4, -4, 3, 0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn div(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Div, other)
    }

    /// `self ^ other`, broadcasting. Floats: IEEE `pow` (`x^0 == 1` for
    /// every `x`, NaN included). Integers: exact power, wrapping; a
    /// negative exponent gives 1 for base 1, ±1 for base -1, else 0.
    pub fn pow(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Pow, other)
    }

    /// The larger of each pair, broadcasting. NaN propagates;
    /// `maximum(-0.0, 0.0) == 0.0` in either order.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, f64::NAN, -0.0], [3], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![2.0f64, 0.0, 0.0], [3], Device::Reference)?;
    /// let m = a.maximum(&b)?.to_vec::<f64>()?;
    /// assert_eq!(m[0], 2.0);
    /// assert!(m[1].is_nan());
    /// assert!(m[2] == 0.0 && m[2].is_sign_positive());
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn maximum(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Maximum, other)
    }

    /// The smaller of each pair, broadcasting. NaN propagates;
    /// `minimum(0.0, -0.0) == -0.0` in either order.
    pub fn minimum(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Minimum, other)
    }

    /// The remainder with the **sign of the divisor**, broadcasting
    /// (Python's `%`). Integers: `x rem 0 == x`. Floats: the exact `fmod`,
    /// shifted by the divisor when the signs differ (one rounding, as in
    /// Python, so a tiny negative `x` against a large `y` may round to `y`);
    /// `x rem 0` and `inf rem y` are NaN, `x rem ±inf` is `x` when the signs
    /// agree (or `x` is zero) and `±inf` otherwise; a zero result carries
    /// the divisor's sign.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7, 7, -7], [4], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![3i64, 3, -3, -3], [4], Device::Reference)?;
    /// assert_eq!(a.rem(&b)?.to_vec::<i64>()?, vec![1, 2, -2, -1]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn rem(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Rem, other)
    }

    /// Logical and, broadcasting. Bool only.
    pub fn logical_and(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::And, other)
    }

    /// Logical or, broadcasting. Bool only.
    pub fn logical_or(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Or, other)
    }

    /// Logical exclusive or, broadcasting. Bool only.
    pub fn logical_xor(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_op(BinaryOp::Xor, other)
    }

    /// `self + value` (see the module docs for how `value` takes the dtype).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{Device, Error};
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2], [2], Device::Reference)?;
    /// assert_eq!(x.add_scalar(3.0)?.to_vec::<i32>()?, vec![4, 5]);
    /// assert!(matches!(x.add_scalar(0.5), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn add_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Add, value.into(), false)
    }

    /// `self - value`.
    pub fn sub_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Sub, value.into(), false)
    }

    /// `value - self` (what `2.0 - &t` computes).
    pub fn rsub_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Sub, value.into(), true)
    }

    /// `self * value`.
    pub fn mul_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Mul, value.into(), false)
    }

    /// `self / value` (integer rules as for [`Tensor::div`]).
    pub fn div_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Div, value.into(), false)
    }

    /// `value / self` (what `1.0 / &t` computes).
    pub fn rdiv_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Div, value.into(), true)
    }

    /// `self ^ value` with the rules of [`Tensor::pow`]; unlike
    /// [`Tensor::powf`] it accepts integer tensors (with an integral
    /// exponent).
    pub fn pow_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Pow, value.into(), false)
    }

    /// `self rem value` with the rules of [`Tensor::rem`].
    pub fn rem_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Rem, value.into(), false)
    }

    /// `maximum(self, value)` with the rules of [`Tensor::maximum`].
    pub fn maximum_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Maximum, value.into(), false)
    }

    /// `minimum(self, value)` with the rules of [`Tensor::minimum`].
    pub fn minimum_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.binary_scalar_op(BinaryOp::Minimum, value.into(), false)
    }

    /// `self == other` elementwise, broadcasting; bool result.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, f32::NAN, -0.0], [3], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![1.0f32, f32::NAN, 0.0], [3], Device::Reference)?;
    /// assert_eq!(a.eq(&b)?.to_vec::<bool>()?, vec![true, false, true]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn eq(&self, other: &Tensor) -> Result<Tensor> {
        self.compare_op(CmpOp::Eq, other)
    }

    /// `self != other` elementwise (true wherever either is NaN).
    pub fn ne(&self, other: &Tensor) -> Result<Tensor> {
        self.compare_op(CmpOp::Ne, other)
    }

    /// `self < other` elementwise.
    pub fn lt(&self, other: &Tensor) -> Result<Tensor> {
        self.compare_op(CmpOp::Lt, other)
    }

    /// `self <= other` elementwise.
    pub fn le(&self, other: &Tensor) -> Result<Tensor> {
        self.compare_op(CmpOp::Le, other)
    }

    /// `self > other` elementwise.
    pub fn gt(&self, other: &Tensor) -> Result<Tensor> {
        self.compare_op(CmpOp::Gt, other)
    }

    /// `self >= other` elementwise.
    pub fn ge(&self, other: &Tensor) -> Result<Tensor> {
        self.compare_op(CmpOp::Ge, other)
    }

    /// `self == value`, with `value` in this tensor's dtype (it must be
    /// exactly representable in an integer or bool dtype).
    pub fn eq_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.compare_scalar_op(CmpOp::Eq, value.into())
    }

    /// `self != value`.
    pub fn ne_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.compare_scalar_op(CmpOp::Ne, value.into())
    }

    /// `self < value`.
    pub fn lt_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.compare_scalar_op(CmpOp::Lt, value.into())
    }

    /// `self <= value`.
    pub fn le_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.compare_scalar_op(CmpOp::Le, value.into())
    }

    /// `self > value`.
    pub fn gt_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.compare_scalar_op(CmpOp::Gt, value.into())
    }

    /// `self >= value`.
    pub fn ge_scalar(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.compare_scalar_op(CmpOp::Ge, value.into())
    }

    /// `a` where `cond` is true, else `b`; all three broadcast together.
    /// `cond` must be bool, `a` and `b` must share a dtype (which the
    /// result has). Named with a trailing underscore because `where` is a
    /// Rust keyword; the op's name in errors is `"where"`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![-1.0f32, 2.0, -3.0], [3], Device::Reference)?;
    /// let zero = Tensor::scalar(0.0f32, Device::Reference)?;
    /// let relu = Tensor::where_(&x.gt_scalar(0.0)?, &x, &zero)?;
    /// assert_eq!(relu.to_vec::<f32>()?, vec![0.0, 2.0, 0.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn where_(cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        Tensor::where_op("where", cond, a, b)
    }

    /// A copy of `self` with `value` wherever `mask` is true. `mask` is bool
    /// and must broadcast *to* `self`'s shape (the result always has
    /// `self`'s shape; [`Error::ExpandIncompatible`] otherwise); `value`
    /// takes `self`'s dtype by the scalar rules in the module docs.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2], Device::Reference)?;
    /// let row = Tensor::from_vec(vec![false, true], [2], Device::Reference)?;
    /// let y = x.masked_fill(&row, f64::NEG_INFINITY)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![1.0, f32::NEG_INFINITY, 3.0, f32::NEG_INFINITY]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn masked_fill(&self, mask: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        const OP: &str = "masked_fill";
        let value = value.into().to_f64(OP)?;
        same_device(OP, self, mask)?;
        if !mask.dtype().is_bool() {
            return Err(Error::UnsupportedDType {
                op: OP,
                dtype: mask.dtype(),
                hint: COND_HINT,
            });
        }
        mask.layout().broadcast_to(OP, self.shape())?;
        let fill = self.scalar_like(OP, value)?;
        Tensor::where_op(OP, mask, &fill, self)
    }
}
