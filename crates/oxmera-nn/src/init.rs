//! Weight initializers: Kaiming (He) and Xavier (Glorot), uniform and
//! normal, drawn from a seeded [`Generator`].
//!
//! # Fans
//!
//! Both families scale by the *fan* of a weight: how many inputs feed one
//! output (fan-in) or how many outputs one input feeds (fan-out). For a
//! weight of shape `[out, in, k1, k2, …]` (a `Linear` weight `[out, in]`,
//! a `Conv2d` weight `[c_out, c_in / groups, kh, kw]`) the receptive field
//! is `k1 · k2 · …` (1 for a matrix) and
//!
//! - `fan_in  = in  · receptive field`
//! - `fan_out = out · receptive field`
//!
//! which is PyTorch's `_calculate_fan_in_and_fan_out`. A weight needs
//! rank at least 2 to have fans.
//!
//! # Scales
//!
//! Kaiming keeps the variance of activations constant through a layer
//! followed by the given nonlinearity: `std = gain / √fan` (fan-in by
//! default, fan-out to preserve the backward pass instead). Xavier
//! balances both directions: `std = gain · √(2 / (fan_in + fan_out))`.
//! The uniform variants draw from `U(-b, b)` with `b = √3 · std`, the
//! bound whose variance `b² / 3` is `std²`.
//!
//! A tensor with no elements has a zero fan; every initializer returns it
//! empty (as zeros) rather than dividing by zero.
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::{DType, Device};
//! use oxmera_nn::init::{self, FanMode, Nonlinearity};
//! use oxmera_tensor::Generator;
//! let mut rng = Generator::new(7);
//! let w = init::kaiming_uniform([64, 16, 3, 3], Nonlinearity::Relu.gain()?, FanMode::FanIn,
//!                               &mut rng, DType::F32, Device::Reference)?;
//! // fan_in = 16 * 3 * 3 = 144, so every value lies within √2 · √3 / 12.
//! let bound = (6.0f64 / 144.0).sqrt();
//! assert!(w.to_f64_vec()?.iter().all(|v| v.abs() <= bound));
//! # Ok::<(), oxmera_core::Error>(())
//! ```

use oxmera_core::{DType, Device, Error, Result, Shape};
use oxmera_tensor::{Generator, Tensor};

/// Which fan a Kaiming initializer divides by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FanMode {
    /// Preserve the variance of the forward pass (the default).
    #[default]
    FanIn,
    /// Preserve the variance of the backward pass.
    FanOut,
}

/// The nonlinearity a layer is followed by, which sets the gain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Nonlinearity {
    /// No nonlinearity (or a linear one): gain 1.
    Linear,
    /// Sigmoid: gain 1.
    Sigmoid,
    /// Tanh: gain 5/3.
    Tanh,
    /// ReLU: gain √2, since it zeroes half of a symmetric input.
    Relu,
    /// Leaky ReLU with this negative slope: gain `√(2 / (1 + slope²))`.
    /// PyTorch's default `Linear`/`Conv2d` initialization is Kaiming
    /// uniform with `LeakyRelu(√5)`, which makes the bound exactly
    /// `1 / √fan_in`.
    LeakyRelu(f64),
}

impl Nonlinearity {
    /// The recommended gain (PyTorch's `calculate_gain`). Errors with
    /// [`Error::InvalidArgument`] for a non-finite leaky slope.
    pub fn gain(self) -> Result<f64> {
        Ok(match self {
            Nonlinearity::Linear | Nonlinearity::Sigmoid => 1.0,
            Nonlinearity::Tanh => 5.0 / 3.0,
            Nonlinearity::Relu => 2f64.sqrt(),
            Nonlinearity::LeakyRelu(slope) => {
                if !slope.is_finite() {
                    return Err(Error::invalid(
                        "Nonlinearity::gain",
                        "slope",
                        format!("the leaky slope must be finite, got {slope}"),
                    ));
                }
                (2.0 / (1.0 + slope * slope)).sqrt()
            }
        })
    }
}

/// `(fan_in, fan_out)` of a weight of `shape` (see the module docs).
/// Errors with [`Error::RankMismatch`] below rank 2.
///
/// ```
/// use oxmera_nn::init::fans;
/// assert_eq!(fans(&[10, 4])?, (4, 10));
/// assert_eq!(fans(&[8, 2, 3, 3])?, (18, 72));
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn fans(shape: &[usize]) -> Result<(usize, usize)> {
    if shape.len() < 2 {
        return Err(Error::RankMismatch {
            op: "init::fans",
            expected: 2,
            shape: Shape::from(shape.to_vec()),
        });
    }
    let receptive: usize = shape[2..].iter().product();
    Ok((shape[1] * receptive, shape[0] * receptive))
}

/// Kaiming (He) uniform: `U(-b, b)` with `b = gain · √(3 / fan)`.
pub fn kaiming_uniform(
    shape: impl Into<Shape>,
    gain: f64,
    mode: FanMode,
    rng: &mut Generator,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    let shape = shape.into();
    let std = kaiming_std("kaiming_uniform", &shape, gain, mode)?;
    uniform_with_std(shape, std, rng, dtype, device)
}

/// Kaiming (He) normal: `N(0, std²)` with `std = gain / √fan`.
pub fn kaiming_normal(
    shape: impl Into<Shape>,
    gain: f64,
    mode: FanMode,
    rng: &mut Generator,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    let shape = shape.into();
    let std = kaiming_std("kaiming_normal", &shape, gain, mode)?;
    normal_with_std(shape, std, rng, dtype, device)
}

/// Xavier (Glorot) uniform: `U(-b, b)` with
/// `b = gain · √(6 / (fan_in + fan_out))`.
pub fn xavier_uniform(
    shape: impl Into<Shape>,
    gain: f64,
    rng: &mut Generator,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    let shape = shape.into();
    let std = xavier_std("xavier_uniform", &shape, gain)?;
    uniform_with_std(shape, std, rng, dtype, device)
}

/// Xavier (Glorot) normal: `N(0, std²)` with
/// `std = gain · √(2 / (fan_in + fan_out))`.
pub fn xavier_normal(
    shape: impl Into<Shape>,
    gain: f64,
    rng: &mut Generator,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    let shape = shape.into();
    let std = xavier_std("xavier_normal", &shape, gain)?;
    normal_with_std(shape, std, rng, dtype, device)
}

/// `U(-bound, bound)`, or zeros when `bound` is 0 (an empty fan). Used
/// for the biases of `Linear` and `Conv2d`, whose bound is `1 / √fan_in`.
pub fn uniform_symmetric(
    shape: impl Into<Shape>,
    bound: f64,
    rng: &mut Generator,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    if !bound.is_finite() || bound < 0.0 {
        return Err(Error::invalid(
            "init::uniform_symmetric",
            "bound",
            format!("need a finite bound >= 0, got {bound}"),
        ));
    }
    let shape = shape.into();
    if bound == 0.0 || shape.numel() == 0 {
        return Tensor::zeros(shape, dtype, device);
    }
    rng.uniform(shape, -bound, bound, dtype, device)
}

fn check_gain(op: &'static str, gain: f64) -> Result<()> {
    if gain.is_finite() && gain >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            op,
            "gain",
            format!("need a finite gain >= 0, got {gain}"),
        ))
    }
}

/// The standard deviation Kaiming asks for; 0 for an empty tensor.
fn kaiming_std(op: &'static str, shape: &Shape, gain: f64, mode: FanMode) -> Result<f64> {
    check_gain(op, gain)?;
    let (fan_in, fan_out) = fans(shape.dims()).map_err(|e| rename(e, op))?;
    let fan = match mode {
        FanMode::FanIn => fan_in,
        FanMode::FanOut => fan_out,
    };
    Ok(if fan == 0 {
        0.0
    } else {
        gain / (fan as f64).sqrt()
    })
}

/// The standard deviation Xavier asks for; 0 for an empty tensor.
fn xavier_std(op: &'static str, shape: &Shape, gain: f64) -> Result<f64> {
    check_gain(op, gain)?;
    let (fan_in, fan_out) = fans(shape.dims()).map_err(|e| rename(e, op))?;
    let fans = fan_in + fan_out;
    Ok(if fans == 0 {
        0.0
    } else {
        gain * (2.0 / fans as f64).sqrt()
    })
}

fn uniform_with_std(
    shape: Shape,
    std: f64,
    rng: &mut Generator,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    uniform_symmetric(shape, 3f64.sqrt() * std, rng, dtype, device)
}

fn normal_with_std(
    shape: Shape,
    std: f64,
    rng: &mut Generator,
    dtype: DType,
    device: Device,
) -> Result<Tensor> {
    if std == 0.0 || shape.numel() == 0 {
        return Tensor::zeros(shape, dtype, device);
    }
    rng.normal(shape, 0.0, std, dtype, device)
}

/// Reports a fan error under the initializer's own name.
fn rename(e: Error, op: &'static str) -> Error {
    match e {
        Error::RankMismatch {
            expected, shape, ..
        } => Error::RankMismatch {
            op,
            expected,
            shape,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    /// Sample mean and standard deviation.
    fn moments(t: &Tensor) -> (f64, f64) {
        let v = t.to_f64_vec().unwrap();
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt())
    }

    /// Checks mean and standard deviation against `std` for `n` draws of
    /// a distribution with kurtosis `kurtosis` (1.8 uniform, 3 normal).
    ///
    /// The sample mean has standard error `σ/√n`; the sample variance has
    /// relative standard error `√((κ − 1)/n)`, so the standard deviation
    /// about half that. Five standard errors bound a correct seeded draw;
    /// a wrong fan or gain (a factor of √2 or more) lands far outside.
    fn check_moments(t: &Tensor, std: f64, kurtosis: f64) {
        let n = t.numel() as f64;
        let (mean, sd) = moments(t);
        assert!(mean.abs() < 5.0 * std / n.sqrt(), "mean {mean}, std {std}");
        let rel = 0.5 * ((kurtosis - 1.0) / n).sqrt();
        assert!(
            (sd / std - 1.0).abs() < 5.0 * rel,
            "sample std {sd}, expected {std} (relative bound {})",
            5.0 * rel
        );
    }

    #[test]
    fn fans_follow_pytorch() {
        assert_eq!(fans(&[6, 4]).unwrap(), (4, 6));
        assert_eq!(fans(&[16, 3, 5, 5]).unwrap(), (75, 400));
        assert!(matches!(
            fans(&[5]),
            Err(Error::RankMismatch {
                op: "init::fans",
                expected: 2,
                ..
            })
        ));
    }

    #[test]
    fn gains_follow_pytorch() {
        assert_eq!(Nonlinearity::Linear.gain().unwrap(), 1.0);
        assert_eq!(Nonlinearity::Tanh.gain().unwrap(), 5.0 / 3.0);
        assert_eq!(Nonlinearity::Relu.gain().unwrap(), 2f64.sqrt());
        // The PyTorch default layer init: gain √(2/6), so b = 1/√fan_in.
        let g = Nonlinearity::LeakyRelu(5f64.sqrt()).gain().unwrap();
        assert!((g * 3f64.sqrt() - 1.0).abs() < 1e-15);
        assert!(Nonlinearity::LeakyRelu(f64::INFINITY).gain().is_err());
    }

    #[test]
    fn kaiming_statistics() {
        let mut rng = Generator::new(41);
        let relu = Nonlinearity::Relu.gain().unwrap();
        // fan_in 64: std √(2/64), uniform bound √3 times that.
        let std = (2.0f64 / 64.0).sqrt();
        let u =
            kaiming_uniform([256, 64], relu, FanMode::FanIn, &mut rng, DType::F64, DEV).unwrap();
        assert!(
            u.to_f64_vec()
                .unwrap()
                .iter()
                .all(|v| v.abs() <= 3f64.sqrt() * std)
        );
        check_moments(&u, std, 1.8);
        let nrm =
            kaiming_normal([256, 64], relu, FanMode::FanIn, &mut rng, DType::F64, DEV).unwrap();
        check_moments(&nrm, std, 3.0);
        // Fan-out of a conv weight [32, 8, 3, 3]: 32 · 9 = 288.
        let out = kaiming_normal(
            [32, 8, 3, 3],
            1.0,
            FanMode::FanOut,
            &mut rng,
            DType::F64,
            DEV,
        )
        .unwrap();
        check_moments(&out, 1.0 / 288f64.sqrt(), 3.0);
    }

    #[test]
    fn xavier_statistics() {
        let mut rng = Generator::new(42);
        // fan_in 100 + fan_out 60: std √(2/160).
        let std = (2.0f64 / 160.0).sqrt();
        let u = xavier_uniform([60, 100], 1.0, &mut rng, DType::F64, DEV).unwrap();
        assert!(
            u.to_f64_vec()
                .unwrap()
                .iter()
                .all(|v| v.abs() <= 3f64.sqrt() * std)
        );
        check_moments(&u, std, 1.8);
        let nrm = xavier_normal([60, 100], 1.0, &mut rng, DType::F64, DEV).unwrap();
        check_moments(&nrm, std, 3.0);
    }

    #[test]
    fn initializers_are_seeded() {
        let draw = |seed| {
            xavier_uniform([4, 4], 1.0, &mut Generator::new(seed), DType::F32, DEV)
                .unwrap()
                .to_vec::<f32>()
                .unwrap()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }

    #[test]
    fn empty_tensors_and_bad_gains() {
        let mut rng = Generator::new(0);
        let e = kaiming_uniform([0, 5], 1.0, FanMode::FanIn, &mut rng, DType::F32, DEV).unwrap();
        assert_eq!(e.dims(), &[0, 5]);
        assert!(matches!(
            xavier_normal([2, 2], f64::NAN, &mut rng, DType::F32, DEV),
            Err(Error::InvalidArgument {
                op: "xavier_normal",
                name: "gain",
                ..
            })
        ));
        assert!(matches!(
            kaiming_uniform([3], 1.0, FanMode::FanIn, &mut rng, DType::F32, DEV),
            Err(Error::RankMismatch {
                op: "kaiming_uniform",
                ..
            })
        ));
        assert!(uniform_symmetric([2], -1.0, &mut rng, DType::F32, DEV).is_err());
        let z = uniform_symmetric([2], 0.0, &mut rng, DType::F32, DEV).unwrap();
        assert_eq!(z.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
    }
}
