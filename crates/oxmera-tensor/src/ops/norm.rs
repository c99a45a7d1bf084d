//! Front end: vector norms, as `torch.linalg.vector_norm`.
//!
//! The norm is a composite of existing reductions (`sum`, `max`, `min`)
//! and elementwise ops, so every backend has it through the kernels it
//! already has. Its forward runs without recording, and one node carries
//! PyTorch's gradient (`norm_backward`): a chain through `sqrt` and `pow`
//! would give `0 · ∞ = NaN` at a zero norm, where PyTorch gives 0.

use oxmera_core::{DType, Error, Result, Shape, normalize_dims};

use super::unary::FLOAT_ONLY_HINT;
use crate::{Tensor, no_grad};

const NAME: &str = "vector_norm";

impl Tensor {
    /// The `ord`-norm of `self` over `dims`, as `torch.linalg.vector_norm(x,
    /// ord, dims, keepdim)`:
    ///
    /// - `ord = 2`: `sqrt(Σ x²)`; `1`: `Σ |x|`; `0`: the count of nonzero
    ///   elements (NaN counts); `inf` / `-inf`: `max |x|` / `min |x|`;
    ///   any other `p` (negative too): `(Σ |x|^p)^(1/p)`.
    /// - The sum is formed directly, without rescaling, as PyTorch does:
    ///   `x²` overflows where PyTorch's does. `f16` and `bf16` are computed
    ///   in `f32` and rounded once (PyTorch accumulates them in `f32` too).
    /// - `dims` follow [`Tensor::sum`]: an empty `dims` reduces over
    ///   nothing (each element's norm is `|x|`, or `x != 0` for `ord = 0`);
    ///   [`Tensor::vector_norm_all`] reduces every dim.
    ///
    /// Gradients are PyTorch's: `g·x/‖x‖` for the 2-norm and `g·sign(x)`
    /// for the 1-norm; a **zero 2-norm (or any `p > 1` norm) has gradient
    /// 0**, the subgradient PyTorch picks, not the NaN of `0/0`; `inf`
    /// shares `g` evenly among the elements that attain the maximum (or
    /// are NaN), with their signs; `ord = 0` has gradient 0 everywhere; for
    /// `p < 1` an element that is 0 gets 0.
    ///
    /// Errors: integer and bool inputs are [`Error::UnsupportedDType`]
    /// (PyTorch wants a float input); a NaN `ord` is
    /// [`Error::InvalidArgument`]; `inf`, `-inf` and negative `ord` over an
    /// empty extent have no identity and are [`Error::EmptyReduction`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // [[3, -4],
    /// //  [0,  0]]
    /// let x = Tensor::from_vec(vec![3.0f32, -4.0, 0.0, 0.0], [2, 2], Device::Reference)?;
    /// assert_eq!(x.vector_norm(2.0, &[1], false)?.to_vec::<f32>()?, [5.0, 0.0]);
    /// assert_eq!(x.vector_norm(1.0, &[0], true)?.to_vec::<f32>()?, [3.0, 4.0]);
    /// assert_eq!(x.vector_norm(f64::INFINITY, &[1], false)?.to_vec::<f32>()?, [4.0, 0.0]);
    /// assert_eq!(x.vector_norm_all(0.0)?.item()?, 2.0);
    /// // The zero row's gradient is 0, not NaN.
    /// let w = x.with_requires_grad(true)?;
    /// w.vector_norm(2.0, &[1], false)?.sum_all()?.backward()?;
    /// assert_eq!(w.grad().unwrap().to_vec::<f32>()?, [0.6, -0.8, 0.0, 0.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn vector_norm(&self, ord: f64, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        let dtype = self.dtype();
        if !dtype.is_float() {
            return Err(Error::UnsupportedDType {
                op: NAME,
                dtype,
                hint: FLOAT_ONLY_HINT,
            });
        }
        if ord.is_nan() {
            return Err(Error::invalid(NAME, "ord", "must be a number, got NaN"));
        }
        let reduced = normalize_dims(NAME, dims, self.rank())?;
        let extent: usize = reduced.iter().map(|&d| self.dims()[d]).product();
        if extent == 0 && (ord < 0.0 || ord.is_infinite()) {
            return Err(Error::EmptyReduction {
                op: NAME,
                shape: self.shape().clone(),
                dims: reduced,
            });
        }
        if matches!(dtype, DType::F16 | DType::BF16) {
            return self
                .to_dtype(DType::F32)?
                .vector_norm(ord, dims, keepdim)?
                .to_dtype(dtype);
        }
        let over: Vec<isize> = reduced.iter().map(|&d| d as isize).collect();
        let x = self.detach();
        let out = no_grad(|| -> Result<Tensor> {
            if ord == 2.0 {
                return x.square()?.sum(&over, true)?.sqrt();
            }
            let a = x.abs()?;
            if ord == 0.0 {
                a.ne_scalar(0.0)?.to_dtype(dtype)?.sum(&over, true)
            } else if ord == 1.0 {
                a.sum(&over, true)
            } else if ord == f64::INFINITY {
                a.max(&over, true)
            } else if ord == f64::NEG_INFINITY {
                a.min(&over, true)
            } else {
                a.powf(ord)?.sum(&over, true)?.powf(1.0 / ord)
            }
        })?;
        let out = crate::autograd::rules::vector_norm(self, &reduced, ord, out);
        if keepdim {
            return Ok(out);
        }
        let squeezed: Vec<usize> = (0..self.rank())
            .filter(|d| !reduced.contains(d))
            .map(|d| self.dims()[d])
            .collect();
        out.view(Shape::from(squeezed))
    }

    /// The `ord`-norm of every element (the flattened tensor), 0-d; see
    /// [`Tensor::vector_norm`].
    pub fn vector_norm_all(&self, ord: f64) -> Result<Tensor> {
        let all: Vec<isize> = (0..self.rank() as isize).collect();
        self.vector_norm(ord, &all, false)
    }

    /// `x.norm(p)` as PyTorch's `Tensor.norm(p)` for a vector norm: the
    /// `p`-norm of every element, [`Tensor::vector_norm_all`].
    pub fn norm(&self, p: f64) -> Result<Tensor> {
        self.vector_norm_all(p)
    }
}
