//! The arithmetic operators `+ - * /` and unary `-`.
//!
//! Every operator returns `Result<Tensor>`, because a tensor operation can
//! fail on user input (shapes that do not broadcast, mixed dtypes), and
//! oxmera never panics on user input. So an expression reads
//! `(&a + &b)?` and a chain `((&a * 2.0)? + &b)?`.
//!
//! They are implemented for every mix of `Tensor`, `&Tensor` and `f64`
//! (on either side); each is exactly the named method ([`Tensor::add`],
//! [`Tensor::add_scalar`], [`Tensor::rsub_scalar`], …), with its dtype
//! rules and semantics.
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::Device;
//! use oxmera_tensor::Tensor;
//! let a = Tensor::from_vec(vec![1.0f32, 2.0], [2], Device::Reference)?;
//! let b = Tensor::from_vec(vec![10.0f32, 20.0], [2], Device::Reference)?;
//! let y = ((&a * 2.0)? + &b)?;
//! assert_eq!(y.to_vec::<f32>()?, vec![12.0, 24.0]);
//! assert_eq!((1.0 - &a)?.to_vec::<f32>()?, vec![0.0, -1.0]);
//! assert_eq!((-&a)?.to_vec::<f32>()?, vec![-1.0, -2.0]);
//! # Ok::<(), oxmera_core::Error>(())
//! ```

use std::ops::{Add, Div, Mul, Neg, Sub};

use oxmera_core::Result;

use crate::Tensor;

macro_rules! tensor_operator {
    ($trait:ident, $method:ident, $tensor_fn:ident, $scalar_fn:ident, $rscalar_fn:ident) => {
        impl $trait<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$tensor_fn(self, rhs)
            }
        }
        impl $trait<Tensor> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$tensor_fn(self, &rhs)
            }
        }
        impl $trait<&Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$tensor_fn(&self, rhs)
            }
        }
        impl $trait<Tensor> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$tensor_fn(&self, &rhs)
            }
        }
        impl $trait<f64> for &Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: f64) -> Result<Tensor> {
                Tensor::$scalar_fn(self, rhs)
            }
        }
        impl $trait<f64> for Tensor {
            type Output = Result<Tensor>;
            fn $method(self, rhs: f64) -> Result<Tensor> {
                Tensor::$scalar_fn(&self, rhs)
            }
        }
        impl $trait<&Tensor> for f64 {
            type Output = Result<Tensor>;
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$rscalar_fn(rhs, self)
            }
        }
        impl $trait<Tensor> for f64 {
            type Output = Result<Tensor>;
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$rscalar_fn(&rhs, self)
            }
        }
    };
}

tensor_operator!(Add, add, add, add_scalar, add_scalar);
tensor_operator!(Sub, sub, sub, sub_scalar, rsub_scalar);
tensor_operator!(Mul, mul, mul, mul_scalar, mul_scalar);
tensor_operator!(Div, div, div, div_scalar, rdiv_scalar);

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
