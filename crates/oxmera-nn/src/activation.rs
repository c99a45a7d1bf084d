//! Activation layers: stateless modules wrapping elementwise tensor ops.

use oxmera_core::{Error, Result};
use oxmera_tensor::Tensor;

use crate::{Module, ModuleState, Param};

/// Implements `Module` for a stateless layer whose forward is `$f`.
macro_rules! stateless {
    ($ty:ty, |$s:ident, $x:ident| $body:expr) => {
        impl Module for $ty {
            fn forward(&self, $x: &Tensor) -> Result<Tensor> {
                let $s = self;
                $body
            }
        }

        impl ModuleState for $ty {
            fn visit_params(&self, _prefix: &str, _out: &mut Vec<(String, Param)>) {}
        }
    };
}

/// `max(x, 0)`, elementwise. Its gradient at 0 is 0, as in PyTorch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReLU;
stateless!(ReLU, |_s, x| x.relu());

/// `x` where `x > 0`, else `slope · x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeakyReLU {
    slope: f64,
}

impl LeakyReLU {
    /// A leaky ReLU with negative slope `slope` (PyTorch's default is
    /// 0.01). [`Error::InvalidArgument`] for a non-finite slope.
    pub fn new(slope: f64) -> Result<LeakyReLU> {
        if !slope.is_finite() {
            return Err(Error::invalid(
                "LeakyReLU",
                "slope",
                format!("must be finite, got {slope}"),
            ));
        }
        Ok(LeakyReLU { slope })
    }

    /// The negative slope.
    pub fn slope(&self) -> f64 {
        self.slope
    }
}

impl Default for LeakyReLU {
    fn default() -> Self {
        LeakyReLU { slope: 0.01 }
    }
}
stateless!(LeakyReLU, |s, x| x.leaky_relu(s.slope));

/// Which formula [`GELU`] evaluates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GeluApproximation {
    /// The exact `x · Φ(x)`, through the error function.
    #[default]
    None,
    /// `x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³)))`.
    Tanh,
}

/// The Gaussian error linear unit, `x · Φ(x)`, exactly or in the tanh
/// approximation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GELU {
    /// The formula.
    pub approximation: GeluApproximation,
}

impl GELU {
    /// The exact GELU.
    pub fn new() -> GELU {
        GELU::default()
    }

    /// The tanh approximation (GPT-2's).
    pub fn tanh() -> GELU {
        GELU {
            approximation: GeluApproximation::Tanh,
        }
    }
}
stateless!(GELU, |s, x| match s.approximation {
    GeluApproximation::None => x.gelu(),
    GeluApproximation::Tanh => x.gelu_tanh(),
});

/// The hyperbolic tangent, elementwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tanh;
stateless!(Tanh, |_s, x| x.tanh());

/// The logistic function `1 / (1 + e^-x)`, elementwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sigmoid;
stateless!(Sigmoid, |_s, x| x.sigmoid());

/// SiLU (swish), `x · sigmoid(x)`, elementwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SiLU;
stateless!(SiLU, |_s, x| x.silu());

/// Softmax along one dim: each slice along `dim` becomes a probability
/// distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Softmax {
    dim: isize,
}

impl Softmax {
    /// Softmax along `dim` (negative counts from the end). The dim is
    /// checked against the input's rank in `forward`.
    pub fn new(dim: isize) -> Softmax {
        Softmax { dim }
    }

    /// The dim normalized over.
    pub fn dim(&self) -> isize {
        self.dim
    }
}
stateless!(Softmax, |s, x| x.softmax(s.dim));

/// Merges every dim after the first into one: `[n, …]` becomes
/// `[n, product of the rest]` (a view when the layout allows).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flatten;

impl Flatten {
    /// A flatten that keeps dim 0 (the batch).
    pub fn new() -> Flatten {
        Flatten
    }
}

impl Module for Flatten {
    /// Rank 2 and above; a rank-1 input has no dims after the batch
    /// ([`Error::RankMismatch`]).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if x.rank() < 2 {
            return Err(Error::RankMismatch {
                op: "Flatten",
                expected: 2,
                shape: x.shape().clone(),
            });
        }
        x.flatten(1, -1)
    }
}

impl ModuleState for Flatten {
    fn visit_params(&self, _prefix: &str, _out: &mut Vec<(String, Param)>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    fn apply(m: &dyn Module, values: &[f64]) -> Vec<f64> {
        m.forward(&t64(values, [values.len()]))
            .unwrap()
            .to_vec()
            .unwrap()
    }

    #[test]
    fn activations_match_hand_values() {
        let xs = [-2.0, 0.0, 1.0];
        assert_eq!(apply(&ReLU, &xs), vec![0.0, 0.0, 1.0]);
        let leaky = LeakyReLU::new(0.1).unwrap();
        assert_close(&apply(&leaky, &xs), &[-0.2, 0.0, 1.0], 1e-15);
        assert_eq!(LeakyReLU::default().slope(), 0.01);
        // Φ(1) = 0.8413447460685429 (standard normal CDF).
        assert_close(
            &apply(&GELU::new(), &[0.0, 1.0]),
            &[0.0, 0.8413447460685429],
            1e-15,
        );
        let inner = (2.0 / std::f64::consts::PI).sqrt() * (1.0 + 0.044715);
        let want = 0.5 * (1.0 + inner.tanh());
        assert_close(&apply(&GELU::tanh(), &[1.0]), &[want], 1e-15);
        assert_close(&apply(&Tanh, &[1.0]), &[1f64.tanh()], 1e-15);
        assert_close(
            &apply(&Sigmoid, &[0.0, 2.0]),
            &[0.5, 1.0 / (1.0 + (-2f64).exp())],
            1e-15,
        );
        assert_close(&apply(&SiLU, &[1.0]), &[1.0 / (1.0 + (-1f64).exp())], 1e-15);
        for m in [&ReLU as &dyn Module, &Tanh, &Sigmoid, &SiLU, &GELU::new()] {
            assert!(m.named_parameters().is_empty());
            assert!(m.is_training());
        }
    }

    #[test]
    fn leaky_slope_must_be_finite() {
        let err = LeakyReLU::new(f64::NAN).unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidArgument {
                op: "LeakyReLU",
                ..
            }
        ));
    }

    #[test]
    fn softmax_normalizes_along_its_dim() {
        let x = t64(&[0.0, 3f64.ln(), 1.0, 1.0], [2, 2]);
        let rows = Softmax::new(-1)
            .forward(&x)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        assert_close(&rows, &[0.25, 0.75, 0.5, 0.5], 1e-15);
        let cols = Softmax::new(0).forward(&x).unwrap();
        let sums = cols.sum(&[0], false).unwrap().to_vec::<f64>().unwrap();
        assert_close(&sums, &[1.0, 1.0], 1e-15);
        assert!(matches!(
            Softmax::new(2).forward(&x),
            Err(Error::DimOutOfRange { .. })
        ));
    }

    #[test]
    fn flatten_keeps_the_batch_dim() {
        let x = Tensor::zeros([2, 3, 4], oxmera_core::DType::F32, DEV).unwrap();
        assert_eq!(Flatten::new().forward(&x).unwrap().dims(), &[2, 12]);
        let x = Tensor::zeros([5], oxmera_core::DType::F32, DEV).unwrap();
        assert!(matches!(
            Flatten::new().forward(&x),
            Err(Error::RankMismatch {
                op: "Flatten",
                expected: 2,
                ..
            })
        ));
    }

    #[test]
    fn activation_gradients_pass_gradcheck() {
        let x = t64(&[-1.5, -0.3, 0.4, 2.0], [2, 2]);
        let modules: [&dyn Module; 6] = [
            &LeakyReLU::default(),
            &GELU::new(),
            &GELU::tanh(),
            &SiLU,
            &Sigmoid,
            &Softmax::new(1),
        ];
        for m in modules {
            check_grad(|xs| m.forward(&xs[0]), std::slice::from_ref(&x));
        }
    }
}
