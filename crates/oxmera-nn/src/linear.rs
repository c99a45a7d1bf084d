//! The fully connected layer.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::{Generator, Tensor};

use crate::init::{self, FanMode, Nonlinearity};
use crate::{Module, ModuleState, Param, join_name};

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
    #[track_caller]
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
}

impl ModuleState for Linear {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        out.push((join_name(prefix, "weight"), self.weight.clone()));
        if let Some(b) = &self.bias {
            out.push((join_name(prefix, "bias"), b.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    #[test]
    fn init_is_pytorch_default_and_drawn_weight_then_bias() {
        let layer = Linear::new(50, 20, true, &mut Generator::new(9), DType::F64, DEV).unwrap();
        let bound = 1.0 / 50f64.sqrt();
        let w = layer.weight().tensor().to_f64_vec().unwrap();
        let b = layer.bias().unwrap().tensor().to_f64_vec().unwrap();
        assert!(w.iter().chain(&b).all(|v| v.abs() <= bound));
        // The same stream, drawn by hand: weight first, then bias.
        let mut rng = Generator::new(9);
        let w_hand = rng
            .uniform([20, 50], -bound, bound, DType::F64, DEV)
            .unwrap();
        let b_hand = rng.uniform([20], -bound, bound, DType::F64, DEV).unwrap();
        assert_close(&w, &w_hand.to_f64_vec().unwrap(), 1e-15);
        assert_close(&b, &b_hand.to_f64_vec().unwrap(), 1e-15);
    }

    #[test]
    fn without_bias_has_one_param() {
        let layer = Linear::new(3, 2, false, &mut Generator::new(0), DType::F32, DEV).unwrap();
        assert!(layer.bias().is_none());
        let names: Vec<String> = layer
            .named_parameters()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["weight"]);
        assert_eq!((layer.in_features(), layer.out_features()), (3, 2));
    }

    #[test]
    fn gradients_of_a_sum_are_hand_computable() {
        // loss = Σ (x Wᵀ + b): dW[o][i] = Σ_n x[n][i], db[o] = N.
        let layer = Linear::new(2, 3, true, &mut Generator::new(1), DType::F64, DEV).unwrap();
        let x = t64(&[1.0, 2.0, 3.0, -4.0, 0.5, 0.5], [3, 2]);
        layer
            .forward(&x)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let dw = layer.weight().grad().unwrap().to_f64_vec().unwrap();
        assert_eq!(dw, vec![4.5, -1.5, 4.5, -1.5, 4.5, -1.5]);
        let db = layer.bias().unwrap().grad().unwrap().to_f64_vec().unwrap();
        assert_eq!(db, vec![3.0, 3.0, 3.0]);
    }

    #[test]
    fn leading_dims_are_kept() {
        let layer = Linear::new(4, 5, true, &mut Generator::new(2), DType::F32, DEV).unwrap();
        let x = Tensor::zeros([2, 3, 4], DType::F32, DEV).unwrap();
        assert_eq!(layer.forward(&x).unwrap().dims(), &[2, 3, 5]);
    }

    #[test]
    fn input_gradient_passes_gradcheck_on_a_transposed_input() {
        let layer = Linear::new(3, 2, true, &mut Generator::new(3), DType::F64, DEV).unwrap();
        // [3, 4] transposed: a non-contiguous [4, 3].
        let x = Generator::new(4)
            .randn([3, 4], DType::F64, DEV)
            .unwrap()
            .t()
            .unwrap();
        assert!(!x.is_contiguous());
        check_grad(|xs| layer.forward(&xs[0]), &[x]);
    }

    #[test]
    fn wrong_width_and_rank_are_named() {
        let layer = Linear::new(3, 2, true, &mut Generator::new(5), DType::F32, DEV).unwrap();
        let err = layer
            .forward(&Tensor::zeros([4, 5], DType::F32, DEV).unwrap())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Linear: inner dimensions differ: [4, 5] @ [3, 2] (5 != 3)"
        );
        let err = layer
            .forward(&Tensor::scalar(1.0f32, DEV).unwrap())
            .unwrap_err();
        assert!(
            matches!(err, Error::RankMismatch { op: "Linear", .. }),
            "{err}"
        );
    }

    #[test]
    fn zero_inputs_give_the_bias() {
        let layer = Linear::new(0, 2, true, &mut Generator::new(6), DType::F32, DEV).unwrap();
        let y = layer
            .forward(&Tensor::zeros([3, 0], DType::F32, DEV).unwrap())
            .unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0; 6]);
    }
}
