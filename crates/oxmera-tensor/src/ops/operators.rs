//! The arithmetic operators `+ - * /` and unary `-`, made to chain.
//!
//! A tensor operation can fail on user input (shapes that do not
//! broadcast, mixed dtypes), and oxmera never panics on user input, so
//! every operator returns `Result<Tensor>`. To keep `?` out of the middle
//! of an expression, the operators also take a `Result<Tensor>` on either
//! side: an error on the left (or else on the right) passes through, so
//! one `?` at the end answers for the whole expression, and the error is
//! the first one made, with its typed fields.
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::Device;
//! use oxmera_tensor::{Tensor, TensorResultExt};
//! let x = Tensor::from_vec(vec![1.0f32, -2.0], [1, 2], Device::Reference)?;
//! let w = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], [2, 2], Device::Reference)?;
//! let b = Tensor::from_vec(vec![0.5f32, 0.5], [2], Device::Reference)?;
//! // No `?` inside the arithmetic: Result<Tensor> + &Tensor chains.
//! let y = (x.matmul(&w) + &b).relu()?;
//! assert_eq!(y.to_vec::<f32>()?, vec![1.5, 0.0]);
//! // Scalars of any Rust number type, on either side of a tensor.
//! assert_eq!((&x * 2).relu()?.to_vec::<f32>()?, vec![2.0, 0.0]);
//! assert_eq!((&x * 2).add(1)?.to_vec::<f32>()?, vec![3.0, -3.0]);
//! assert_eq!((1 - &x)?.to_vec::<f32>()?, vec![0.0, 3.0]);
//! assert_eq!((-&x)?.to_vec::<f32>()?, vec![-1.0, 2.0]);
//! # Ok::<(), oxmera_core::Error>(())
//! ```
//!
//! Which mixes exist, and why some cannot: Rust's orphan rule lets this
//! crate implement an operator only when one of its two operand types is
//! a tensor type (`Tensor` or `&Tensor`). So `Tensor ⊕ Tensor`,
//! `Tensor ⊕ Result<Tensor>`, `Result<Tensor> ⊕ Tensor` and
//! `Tensor ⊕ scalar` (either order) all work, but `Result<Tensor> ⊕
//! Result<Tensor>`, `Result<Tensor> ⊕ scalar` and `-Result<Tensor>` cannot
//! be written as operators by any crate. For those, the methods of
//! [`TensorResultExt`] chain on a `Result<Tensor>`:
//! `(&a * 2).add(1)`, `(&a - &b).neg()`, `(&a + &b).mul(&c * 3)`.
//! On the right of a tensor a number may be of any Rust type; on the left
//! it is an `i32` or `f64` (what unsuffixed literals are: `1 - &p`,
//! `0.5 * &x`); put a number of another type on the right.
//! Every operator is exactly the named method ([`Tensor::add`],
//! [`Tensor::add_scalar`], [`Tensor::rsub_scalar`], …), with its dtype
//! rules; a scalar takes the tensor's dtype by the rules of
//! [`oxmera_core::Scalar`].

use std::ops::{Add, Div, Mul, Neg, Sub};

use oxmera_core::Result;

use crate::Tensor;
use crate::ops::chain::Operand;

/// The operators with a tensor on the left: one blanket impl per left
/// type over every [`Operand`] (a tensor, a reference, a result, a
/// number). One impl, not one per right-hand type, so that the output
/// type is known before a literal's type is: `(&x * 2).relu()` compiles.
/// With a `Result<Tensor>` on the left the orphan rule allows only the
/// tensor right-hand sides, spelled out.
macro_rules! tensor_operator {
    ($trait:ident, $method:ident, $tensor_fn:ident, $scalar_fn:ident) => {
        impl<R: Into<Operand>> $trait<R> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: R) -> Result<Tensor> {
                rhs.into()
                    .apply(self, Tensor::$tensor_fn, |t, s| t.$scalar_fn(s))
            }
        }
        impl<R: Into<Operand>> $trait<R> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: R) -> Result<Tensor> {
                rhs.into()
                    .apply(&self, Tensor::$tensor_fn, |t, s| t.$scalar_fn(s))
            }
        }
        impl $trait<&Tensor> for Result<Tensor> {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$tensor_fn(&self?, rhs)
            }
        }
        impl $trait<Tensor> for Result<Tensor> {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$tensor_fn(&self?, &rhs)
            }
        }
    };
}

/// The operators with a number on the left. The orphan rule forbids a
/// blanket impl there, and with one impl per number type a literal's type
/// (and so the output's) would stay open until the end of the function:
/// `(1 - &x)?` would not compile. With exactly one integer type (`i32`)
/// and one float type (`f64`), each unsuffixed literal has one candidate.
macro_rules! scalar_first_operator {
    ($trait:ident, $method:ident, $rscalar_fn:ident; $($s:ty),*) => {$(
        impl $trait<&Tensor> for $s {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$rscalar_fn(rhs, self)
            }
        }
        impl $trait<Tensor> for $s {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$rscalar_fn(&rhs, self)
            }
        }
    )*};
}

macro_rules! operator {
    ($trait:ident, $method:ident, $tensor_fn:ident, $scalar_fn:ident, $rscalar_fn:ident) => {
        tensor_operator!($trait, $method, $tensor_fn, $scalar_fn);
        scalar_first_operator!($trait, $method, $rscalar_fn; f64, i32);
    };
}

operator!(Add, add, add, add_scalar, add_scalar);
operator!(Sub, sub, sub, sub_scalar, rsub_scalar);
operator!(Mul, mul, mul, mul_scalar, mul_scalar);
operator!(Div, div, div, div_scalar, rdiv_scalar);

impl Neg for &Tensor {
    type Output = Result<Tensor>;
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(self)
    }
}

impl Neg for Tensor {
    type Output = Result<Tensor>;
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(&self)
    }
}
