//! Front end: the activation functions PyTorch users reach for beyond
//! `relu`, `gelu`, `silu` and `softplus` — `elu`, `selu`, `mish`,
//! `hardtanh`, `hardsigmoid`, `hardswish` and `logsigmoid`.
//!
//! Each is a [`UnaryOp`] variant (float-only, like the activations in
//! `unary.rs`), with PyTorch's formula and PyTorch's gradient at the
//! kinks, stated per op. NaN in gives NaN out.

use oxmera_core::Result;

use crate::{Tensor, UnaryOp};

impl Tensor {
    /// ELU: `x` where `x > 0`, else `alpha · (e^x - 1)` (PyTorch's default
    /// `alpha` is 1). Floats only; `alpha` must be finite
    /// ([`oxmera_core::Error::InvalidArgument`] otherwise). `elu(-inf) ==
    /// -alpha`. The gradient at 0 is `alpha` (PyTorch's choice: the
    /// `x <= 0` branch).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![2.0f64, 0.0, f64::NEG_INFINITY], [3], Device::Reference)?;
    /// assert_eq!(x.elu(0.5)?.to_vec::<f64>()?, vec![2.0, 0.0, -0.5]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn elu(&self, alpha: f64) -> Result<Tensor> {
        self.unary_op(UnaryOp::Elu(alpha))
    }

    /// SELU: `scale · elu(x, alpha)` with PyTorch's constants
    /// `alpha = 1.6732632423543772` and `scale = 1.0507009873554805`.
    /// Floats only. `selu(-inf) == -scale · alpha`.
    pub fn selu(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Selu)
    }

    /// Mish: `x · tanh(softplus(x))`. Floats only. `mish(inf) == inf`,
    /// `mish(-inf) == 0` (the limit).
    pub fn mish(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Mish)
    }

    /// HardTanh: `x` clamped to `[min, max]` (PyTorch's defaults are -1
    /// and 1). Floats only. A NaN bound, or `min > max`, is
    /// [`oxmera_core::Error::InvalidArgument`]. Unlike
    /// [`Tensor::clamp`], the gradient is 0 **at** the bounds as well as
    /// beyond them (PyTorch's `hardtanh_backward` passes it only strictly
    /// inside).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![-3.0f32, -0.5, 1.0, 2.0], [4], Device::Reference)?;
    /// assert_eq!(x.hardtanh(-1.0, 1.0)?.to_vec::<f32>()?, vec![-1.0, -0.5, 1.0, 1.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn hardtanh(&self, min: f64, max: f64) -> Result<Tensor> {
        self.unary_op(UnaryOp::Hardtanh { min, max })
    }

    /// HardSigmoid: 0 for `x <= -3`, 1 for `x >= 3`, `x/6 + 1/2` between.
    /// Floats only. The gradient is `1/6` strictly inside `(-3, 3)` and 0
    /// at and beyond ±3 (PyTorch's choice).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![-4.0f64, 0.0, 1.5, 3.0], [4], Device::Reference)?;
    /// assert_eq!(x.hardsigmoid()?.to_vec::<f64>()?, vec![0.0, 0.5, 0.75, 1.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn hardsigmoid(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Hardsigmoid)
    }

    /// HardSwish: `x · hardsigmoid(x)` — 0 for `x <= -3`, `x` for
    /// `x >= 3`, `x (x + 3) / 6` between. Floats only. The gradient is 0
    /// below -3, `x/3 + 1/2` on `[-3, 3]` (bounds included, so -1/2 at -3
    /// and 3/2 at 3) and 1 above, as PyTorch's `hardswish_backward`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![-4.0f64, -1.5, 1.5, 4.0], [4], Device::Reference)?;
    /// assert_eq!(x.hardswish()?.to_vec::<f64>()?, vec![0.0, -0.375, 1.125, 4.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn hardswish(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Hardswish)
    }

    /// `ln(sigmoid(x))`, evaluated as `-softplus(-x)` so that it neither
    /// overflows nor loses the tail: `logsigmoid(-1000) == -1000`,
    /// `logsigmoid(40) ≈ -4.2e-18` (not 0). Floats only.
    /// `logsigmoid(inf) == 0`, `logsigmoid(-inf) == -inf`.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, -1000.0, 40.0], [3], Device::Reference)?;
    /// let y = x.logsigmoid()?.to_vec::<f64>()?;
    /// assert_eq!(y[0], -std::f64::consts::LN_2);
    /// assert_eq!(y[1], -1000.0);
    /// assert!((y[2] + (-40.0f64).exp()).abs() < 1e-30);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn logsigmoid(&self) -> Result<Tensor> {
        self.unary_op(UnaryOp::Logsigmoid)
    }
}
