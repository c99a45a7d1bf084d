//! The fully connected layer.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::{Generator, Tensor};

use crate::init::{self, FanMode, Nonlinearity};
use crate::{Module, Param, join_name};

/// `y = x Wᵀ + b`: a fully connected layer with weight `[out, in]` and an
/// optional bias `[out]`.
///
/// Initialized as PyTorch's `nn.Linear`: the weight by Kaiming uniform
/// with a leaky slope of √5, which is `U(-1/√in, 1/√in)`, and the bias
/// from the same range. The weight is drawn first, then the bias, from the
/// caller's generator.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Linear, Module};
/// use oxmera_tensor::{Generator, Tensor};
/// let layer = Linear::new(2, 1, true, &mut Generator::new(0), DType::F32, Device::Reference)?;
/// layer.weight().set(Tensor::from_vec(vec![2.0f32, -1.0], [1, 2], Device::Reference)?)?;
/// layer.bias().unwrap().set(Tensor::from_vec(vec![0.5f32], [1], Device::Reference)?)?;
/// let x = Tensor::from_vec(vec![1.0f32, 3.0, 4.0, 1.0], [2, 2], Device::Reference)?;
/// assert_eq!(layer.forward(&x)?.to_vec::<f32>()?, vec![-0.5, 7.5]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Linear {
    weight: Param,
    bias: Option<Param>,
    in_features: usize,
    out_features: usize,
}

impl Linear {
    /// A layer mapping `in_features` to `out_features`, with a bias if
    /// `bias`, its values drawn from `rng` in `dtype` (a float) on `device`.
    pub fn new(
        in_features: usize,
        out_features: usize,
        bias: bool,
        rng: &mut Generator,
        dtype: DType,
        device: Device,
    ) -> Result<Linear> {
        let gain = Nonlinearity::LeakyRelu(5f64.sqrt()).gain()?;
        let weight = init::kaiming_uniform(
            [out_features, in_features],
            gain,
            FanMode::FanIn,
            rng,
            dtype,
            device,
        )?;
        let bias = if bias {
            let bound = inverse_sqrt(in_features);
            let b = init::uniform_symmetric([out_features], bound, rng, dtype, device)?;
            Some(Param::new(b)?)
        } else {
            None
        };
        Ok(Linear {
            weight: Param::new(weight)?,
            bias,
            in_features,
            out_features,
        })
    }

    /// The weight, `[out_features, in_features]`.
    pub fn weight(&self) -> &Param {
        &self.weight
    }

    /// The bias, `[out_features]`, if the layer has one.
    pub fn bias(&self) -> Option<&Param> {
        self.bias.as_ref()
    }

    /// The input width.
    pub fn in_features(&self) -> usize {
        self.in_features
    }

    /// The output width.
    pub fn out_features(&self) -> usize {
        self.out_features
    }
}

/// `1 / √n`, or 0 for `n == 0` (an empty layer has nothing to scale).
pub(crate) fn inverse_sqrt(n: usize) -> f64 {
    if n == 0 { 0.0 } else { 1.0 / (n as f64).sqrt() }
}

impl Module for Linear {
    /// `x` is `[…, in_features]` (any leading dims); the result is
    /// `[…, out_features]`. A rank-0 input is [`Error::RankMismatch`]; a
    /// last dim other than `in_features` is [`Error::MatmulInner`], both
    /// named `"Linear"`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let w = self.weight.tensor();
        let Some(&k) = x.dims().last() else {
            return Err(Error::RankMismatch {
                op: "Linear",
                expected: 1,
                shape: x.shape().clone(),
            });
        };
        if k != self.in_features {
            return Err(Error::MatmulInner {
                op: "Linear",
                lhs: x.shape().clone(),
                rhs: w.t()?.shape().clone(),
                k_lhs: k,
                k_rhs: self.in_features,
            });
        }
        let y = x.matmul(&w.t()?)?;
        match &self.bias {
            Some(b) => y.add(&b.tensor()),
            None => Ok(y),
        }
    }

    fn named_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        out.push((join_name(prefix, "weight"), self.weight.clone()));
        if let Some(b) = &self.bias {
            out.push((join_name(prefix, "bias"), b.clone()));
        }
    }
}
