//! Methods that chain on a `Result<Tensor>`: [`TensorResultExt`].
//!
//! `x.matmul(&w)` returns `Result<Tensor>`; with this trait in scope (it is
//! in `oxmera::prelude`) the next op can be called on that result directly,
//! so an expression needs one `?`, at its end:
//! `(x.matmul(&w) + &b).relu()?.sum_all()?` becomes
//! `(x.matmul(&w) + &b).relu().sum_all()?`. Each method is the
//! [`Tensor`] method of the same name applied to the `Ok` value; an `Err`
//! passes through untouched, so the error a caller sees is the first one
//! made, with its typed fields.
//!
//! It also covers what the orphan rule keeps from the operators (see
//! [`crate::ops`]' operator docs): `Result ⊕ Result` and `Result ⊕ scalar`
//! as [`TensorResultExt::add`], [`TensorResultExt::sub`],
//! [`TensorResultExt::mul`] and [`TensorResultExt::div`], which take any
//! [`Operand`] — a tensor, a reference, another result, or a number.
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::Device;
//! use oxmera_tensor::{Tensor, TensorResultExt};
//! let a = Tensor::from_vec(vec![1.0f32, 4.0], [2], Device::Reference)?;
//! let b = Tensor::from_vec(vec![3.0f32, 0.0], [2], Device::Reference)?;
//! let y = (&a + &b).mul(&a - &b).sqrt().sum_all()?; // sqrt(-8) is NaN
//! assert!(y.item()?.is_nan());
//! let z = (&a + &b).div(2).pow_scalar(2).sum_all()?; // 2^2 + 2^2
//! assert_eq!(z.item()?, 8.0);
//! # Ok::<(), oxmera_core::Error>(())
//! ```

use oxmera_core::{DType, Device, Result, Scalar, Shape};

use crate::{Pool2dParams, Tensor};

/// The right-hand side of [`TensorResultExt`]'s arithmetic: anything an
/// arithmetic op can meet — a tensor (owned or borrowed), a result still
/// to be checked, or a number of any Rust type.
#[derive(Debug, Clone)]
pub enum Operand {
    /// A tensor operand.
    Tensor(Tensor),
    /// A result from an earlier op: its error, if any, passes through.
    Result(Result<Tensor>),
    /// A number, converted to the tensor's dtype by [`Scalar`]'s rules.
    Scalar(Scalar),
}

impl From<Tensor> for Operand {
    fn from(t: Tensor) -> Operand {
        Operand::Tensor(t)
    }
}

impl From<&Tensor> for Operand {
    fn from(t: &Tensor) -> Operand {
        Operand::Tensor(t.clone())
    }
}

impl From<Result<Tensor>> for Operand {
    fn from(r: Result<Tensor>) -> Operand {
        Operand::Result(r)
    }
}

macro_rules! operand_from_number {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand {
            fn from(v: $t) -> Operand {
                Operand::Scalar(Scalar::from(v))
            }
        }
    )*};
}
operand_from_number!(f64, f32, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl Operand {
    /// `tensor_op(lhs, rhs)` or `scalar_op(lhs, value)`, whichever the
    /// operand is.
    pub(crate) fn apply(
        self,
        lhs: &Tensor,
        tensor_op: fn(&Tensor, &Tensor) -> Result<Tensor>,
        scalar_op: fn(&Tensor, Scalar) -> Result<Tensor>,
    ) -> Result<Tensor> {
        match self {
            Operand::Tensor(t) => tensor_op(lhs, &t),
            Operand::Result(r) => tensor_op(lhs, &r?),
            Operand::Scalar(s) => scalar_op(lhs, s),
        }
    }
}

/// Declares the forwarding methods once, for the trait and its impl.
macro_rules! chain_methods {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*); )*) => {
        /// Tensor methods callable on a `Result<Tensor>`, so that ops chain
        /// with one `?` at the end (see the [module docs](self)).
        pub trait TensorResultExt: Sized {
            /// `self + rhs`, for a right side the `+` operator cannot take
            /// here (another result, or a number).
            fn add(self, rhs: impl Into<Operand>) -> Result<Tensor>;
            /// `self - rhs` (see [`TensorResultExt::add`]).
            fn sub(self, rhs: impl Into<Operand>) -> Result<Tensor>;
            /// `self * rhs` (see [`TensorResultExt::add`]).
            fn mul(self, rhs: impl Into<Operand>) -> Result<Tensor>;
            /// `self / rhs` (see [`TensorResultExt::add`]).
            fn div(self, rhs: impl Into<Operand>) -> Result<Tensor>;
            $( $(#[$doc])* fn $name(self, $($arg: $ty),*) -> Result<Tensor>; )*
        }

        impl TensorResultExt for Result<Tensor> {
            fn add(self, rhs: impl Into<Operand>) -> Result<Tensor> {
                rhs.into().apply(&self?, Tensor::add, |t, s| t.add_scalar(s))
            }
            fn sub(self, rhs: impl Into<Operand>) -> Result<Tensor> {
                rhs.into().apply(&self?, Tensor::sub, |t, s| t.sub_scalar(s))
            }
            fn mul(self, rhs: impl Into<Operand>) -> Result<Tensor> {
                rhs.into().apply(&self?, Tensor::mul, |t, s| t.mul_scalar(s))
            }
            fn div(self, rhs: impl Into<Operand>) -> Result<Tensor> {
                rhs.into().apply(&self?, Tensor::div, |t, s| t.div_scalar(s))
            }
            $( fn $name(self, $($arg: $ty),*) -> Result<Tensor> {
                self?.$name($($arg),*)
            } )*
        }
    };
}

chain_methods! {
    /// [`Tensor::neg`].
    fn neg();
    /// [`Tensor::abs`].
    fn abs();
    /// [`Tensor::exp`].
    fn exp();
    /// [`Tensor::log`].
    fn log();
    /// [`Tensor::log1p`].
    fn log1p();
    /// [`Tensor::sqrt`].
    fn sqrt();
    /// [`Tensor::rsqrt`].
    fn rsqrt();
    /// [`Tensor::square`].
    fn square();
    /// [`Tensor::recip`].
    fn recip();
    /// [`Tensor::sin`].
    fn sin();
    /// [`Tensor::cos`].
    fn cos();
    /// [`Tensor::tanh`].
    fn tanh();
    /// [`Tensor::sigmoid`].
    fn sigmoid();
    /// [`Tensor::relu`].
    fn relu();
    /// [`Tensor::gelu`].
    fn gelu();
    /// [`Tensor::silu`].
    fn silu();
    /// [`Tensor::softplus`].
    fn softplus();
    /// [`Tensor::leaky_relu`].
    fn leaky_relu(slope: f64);
    /// [`Tensor::clamp`].
    fn clamp(min: Option<f64>, max: Option<f64>);
    /// [`Tensor::expm1`].
    fn expm1();
    /// [`Tensor::log2`].
    fn log2();
    /// [`Tensor::log10`].
    fn log10();
    /// [`Tensor::exp2`].
    fn exp2();
    /// [`Tensor::tan`].
    fn tan();
    /// [`Tensor::atan`].
    fn atan();
    /// [`Tensor::asin`].
    fn asin();
    /// [`Tensor::acos`].
    fn acos();
    /// [`Tensor::sinh`].
    fn sinh();
    /// [`Tensor::cosh`].
    fn cosh();
    /// [`Tensor::trunc`].
    fn trunc();
    /// [`Tensor::elu`].
    fn elu(alpha: f64);
    /// [`Tensor::selu`].
    fn selu();
    /// [`Tensor::mish`].
    fn mish();
    /// [`Tensor::hardtanh`].
    fn hardtanh(min: f64, max: f64);
    /// [`Tensor::hardsigmoid`].
    fn hardsigmoid();
    /// [`Tensor::hardswish`].
    fn hardswish();
    /// [`Tensor::logsigmoid`].
    fn logsigmoid();
    /// [`Tensor::cumsum`].
    fn cumsum(dim: isize);
    /// [`Tensor::cumprod`].
    fn cumprod(dim: isize);
    /// [`Tensor::roll`].
    fn roll(shifts: &[isize], dims: &[isize]);
    /// [`Tensor::repeat`].
    fn repeat(repeats: &[usize]);
    /// [`Tensor::tile`].
    fn tile(reps: &[usize]);
    /// [`Tensor::diagonal`].
    fn diagonal(offset: i64, dim1: isize, dim2: isize);
    /// [`Tensor::diag`].
    fn diag(diagonal: i64);
    /// [`Tensor::trace`].
    fn trace();
    /// [`Tensor::outer`].
    fn outer(other: &Tensor);
    /// [`Tensor::isnan`].
    fn isnan();
    /// [`Tensor::isinf`].
    fn isinf();
    /// [`Tensor::isfinite`].
    fn isfinite();
    /// [`Tensor::nan_to_num`].
    fn nan_to_num(nan: f64, posinf: Option<f64>, neginf: Option<f64>);
    /// [`Tensor::add_scalar`].
    fn add_scalar(value: impl Into<Scalar>);
    /// [`Tensor::sub_scalar`].
    fn sub_scalar(value: impl Into<Scalar>);
    /// [`Tensor::rsub_scalar`].
    fn rsub_scalar(value: impl Into<Scalar>);
    /// [`Tensor::mul_scalar`].
    fn mul_scalar(value: impl Into<Scalar>);
    /// [`Tensor::div_scalar`].
    fn div_scalar(value: impl Into<Scalar>);
    /// [`Tensor::rdiv_scalar`].
    fn rdiv_scalar(value: impl Into<Scalar>);
    /// [`Tensor::pow_scalar`].
    fn pow_scalar(value: impl Into<Scalar>);
    /// [`Tensor::maximum_scalar`].
    fn maximum_scalar(value: impl Into<Scalar>);
    /// [`Tensor::minimum_scalar`].
    fn minimum_scalar(value: impl Into<Scalar>);
    /// [`Tensor::gt_scalar`].
    fn gt_scalar(value: impl Into<Scalar>);
    /// [`Tensor::lt_scalar`].
    fn lt_scalar(value: impl Into<Scalar>);
    /// [`Tensor::eq_scalar`].
    fn eq_scalar(value: impl Into<Scalar>);
    /// [`Tensor::matmul`].
    fn matmul(other: &Tensor);
    /// [`Tensor::pow`].
    fn pow(other: &Tensor);
    /// [`Tensor::atan2`].
    fn atan2(other: &Tensor);
    /// [`Tensor::fmod`].
    fn fmod(other: &Tensor);
    /// [`Tensor::hypot`].
    fn hypot(other: &Tensor);
    /// [`Tensor::remainder`].
    fn remainder(other: &Tensor);
    /// [`Tensor::maximum`].
    fn maximum(other: &Tensor);
    /// [`Tensor::minimum`].
    fn minimum(other: &Tensor);
    /// [`Tensor::eq`].
    fn eq(other: &Tensor);
    /// [`Tensor::gt`].
    fn gt(other: &Tensor);
    /// [`Tensor::lt`].
    fn lt(other: &Tensor);
    /// [`Tensor::masked_fill`].
    fn masked_fill(mask: &Tensor, value: impl Into<Scalar>);
    /// [`Tensor::sum`].
    fn sum(dims: &[isize], keepdim: bool);
    /// [`Tensor::sum_all`].
    fn sum_all();
    /// [`Tensor::mean`].
    fn mean(dims: &[isize], keepdim: bool);
    /// [`Tensor::mean_all`].
    fn mean_all();
    /// [`Tensor::max`].
    fn max(dims: &[isize], keepdim: bool);
    /// [`Tensor::min`].
    fn min(dims: &[isize], keepdim: bool);
    /// [`Tensor::argmax`].
    fn argmax(dim: isize, keepdim: bool);
    /// [`Tensor::var`].
    fn var(dims: &[isize], correction: f64, keepdim: bool);
    /// [`Tensor::softmax`].
    fn softmax(dim: isize);
    /// [`Tensor::log_softmax`].
    fn log_softmax(dim: isize);
    /// [`Tensor::logsumexp`].
    fn logsumexp(dims: &[isize], keepdim: bool);
    /// [`Tensor::reshape`].
    fn reshape(shape: impl Into<Shape>);
    /// [`Tensor::view`].
    fn view(shape: impl Into<Shape>);
    /// [`Tensor::t`].
    fn t();
    /// [`Tensor::transpose`].
    fn transpose(a: isize, b: isize);
    /// [`Tensor::permute`].
    fn permute(perm: &[isize]);
    /// [`Tensor::flatten`].
    fn flatten(start: isize, end: isize);
    /// [`Tensor::squeeze`].
    fn squeeze(dim: isize);
    /// [`Tensor::unsqueeze`].
    fn unsqueeze(dim: isize);
    /// [`Tensor::narrow`].
    fn narrow(dim: isize, start: isize, len: usize);
    /// [`Tensor::select`].
    fn select(dim: isize, index: isize);
    /// [`Tensor::broadcast_to`].
    fn broadcast_to(shape: impl Into<Shape>);
    /// [`Tensor::contiguous`].
    fn contiguous();
    /// [`Tensor::to_dtype`].
    fn to_dtype(dtype: DType);
    /// [`Tensor::to_device`].
    fn to_device(device: Device);
    /// [`Tensor::gather`].
    fn gather(dim: isize, index: &Tensor);
    /// [`Tensor::index_select`].
    fn index_select(dim: isize, indices: &Tensor);
    /// [`Tensor::max_pool2d`].
    fn max_pool2d(params: Pool2dParams);
    /// [`Tensor::avg_pool2d`].
    fn avg_pool2d(params: Pool2dParams);
    /// [`Tensor::with_requires_grad`].
    fn with_requires_grad(requires_grad: bool);
}
