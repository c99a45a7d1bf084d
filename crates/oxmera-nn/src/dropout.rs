//! Seeded dropout.

use std::sync::Mutex;

use oxmera_core::{Error, Result, Shape};
use oxmera_tensor::{Generator, Tensor};

use crate::{Module, ModuleState, Param};

/// In training mode, zeroes each element with probability `p` and scales
/// the survivors by `1 / (1 − p)`, so the expected output equals the
/// input; in evaluation mode, the identity.
///
/// The layer owns its [`Generator`] (behind a mutex, so `forward` can
/// advance it through `&self`): the same seed gives the same masks, call
/// after call. Its position is not part of the state dict (PyTorch's
/// `Dropout` has no state, and state dicts stay interchangeable); a
/// training loop that must resume bit-identically saves
/// [`Dropout::generator`] and restores it with
/// [`Dropout::set_generator`].
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Dropout, Module};
/// use oxmera_tensor::{Generator, Tensor};
/// let mut drop = Dropout::new(0.5, Generator::new(3))?;
/// let x = Tensor::ones([8], DType::F32, Device::Reference)?;
/// // Each element is dropped (0) or doubled (2).
/// assert!(drop.forward(&x)?.to_vec::<f32>()?.iter().all(|&v| v == 0.0 || v == 2.0));
/// drop.eval();
/// assert_eq!(drop.forward(&x)?.to_vec::<f32>()?, vec![1.0; 8]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Dropout {
    p: f64,
    rng: Mutex<Generator>,
    training: bool,
}

impl Dropout {
    /// Dropout with probability `p` in `[0, 1]` (1 drops everything),
    /// drawing from `rng`. [`Error::InvalidArgument`] otherwise.
    pub fn new(p: f64, rng: Generator) -> Result<Dropout> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::invalid(
                "Dropout",
                "p",
                format!("the drop probability must lie in [0, 1], got {p}"),
            ));
        }
        Ok(Dropout {
            p,
            rng: Mutex::new(rng),
            training: true,
        })
    }

    /// The drop probability.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// The generator's current state (seed and offset).
    pub fn generator(&self) -> Generator {
        *self.lock()
    }

    /// Replaces the generator, e.g. with a saved state.
    pub fn set_generator(&self, rng: Generator) {
        *self.lock() = rng;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generator> {
        // A generator is a plain value that is never left half-updated, so a
        // lock poisoned by a panic elsewhere still guards a valid state.
        self.rng.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Module for Dropout {
    /// Float input of any shape ([`Error::UnsupportedDType`] otherwise, in
    /// training mode).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.drop("Dropout", x, x.shape().clone())
    }
}

impl Dropout {
    /// `x` times a mask of `mask_shape` (which broadcasts to `x`): each
    /// mask element 0 with probability `p`, else `1 / (1 − p)`.
    fn drop(&self, op: &'static str, x: &Tensor, mask_shape: Shape) -> Result<Tensor> {
        if !self.training || self.p == 0.0 {
            return Ok(x.clone());
        }
        if !x.dtype().is_float() {
            return Err(Error::UnsupportedDType {
                op,
                dtype: x.dtype(),
                hint: "dropout scales values, so it needs a float dtype",
            });
        }
        if self.p == 1.0 {
            // Multiplying (rather than building zeros) keeps the graph, so
            // the input still gets its (zero) gradient.
            return x.mul_scalar(0.0);
        }
        let u = self.lock().rand(mask_shape, x.dtype(), x.device())?;
        let mask = u
            .ge_scalar(self.p)?
            .to_dtype(x.dtype())?
            .mul_scalar(1.0 / (1.0 - self.p))?;
        x.mul(&mask)
    }
}

/// Channel dropout, as PyTorch's `nn.Dropout2d`: in training, zeroes each
/// whole channel of `[N, C, H, W]` (or unbatched `[C, H, W]`, which
/// PyTorch 2.x still reads as `[N, C, L]` with a warning that it will
/// change to this) with
/// probability `p` and scales the kept channels by `1 / (1 − p)`; in
/// evaluation, the identity. Neighbouring pixels of a feature map are
/// strongly correlated, so dropping pixels one by one regularizes little;
/// dropping maps does. Seeded like [`Dropout`].
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Dropout2d, Module};
/// use oxmera_tensor::{Generator, Tensor};
/// let drop = Dropout2d::new(0.5, Generator::new(1))?;
/// let x = Tensor::ones([2, 3, 4, 4], DType::F32, Device::Reference)?;
/// let y = drop.forward(&x)?.to_vec::<f32>()?;
/// // Each 4x4 map is all 0 or all 2.
/// for map in y.chunks(16) {
///     assert!(map.iter().all(|&v| v == map[0]) && (map[0] == 0.0 || map[0] == 2.0));
/// }
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Dropout2d(Dropout);

impl Dropout2d {
    /// Channel dropout with probability `p` in `[0, 1]`, drawing from
    /// `rng`. [`Error::InvalidArgument`] otherwise.
    pub fn new(p: f64, rng: Generator) -> Result<Dropout2d> {
        Dropout::new(p, rng).map(Dropout2d)
    }

    /// The drop probability.
    pub fn p(&self) -> f64 {
        self.0.p
    }

    /// The generator's current state (seed and offset).
    pub fn generator(&self) -> Generator {
        self.0.generator()
    }

    /// Replaces the generator, e.g. with a saved state.
    pub fn set_generator(&self, rng: Generator) {
        self.0.set_generator(rng)
    }
}

impl Module for Dropout2d {
    /// `x` is `[N, C, H, W]` or `[C, H, W]`, float
    /// ([`Error::RankMismatch`] / [`Error::UnsupportedDType`] otherwise).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if !(x.rank() == 3 || x.rank() == 4) {
            return Err(Error::RankMismatch {
                op: "Dropout2d",
                expected: 4,
                shape: x.shape().clone(),
            });
        }
        let mut channels = x.dims().to_vec();
        let r = channels.len();
        channels[r - 2..].fill(1);
        self.0.drop("Dropout2d", x, Shape::from(channels))
    }
}

impl ModuleState for Dropout2d {
    fn visit_params(&self, _prefix: &str, _out: &mut Vec<(String, Param)>) {}

    fn set_training(&mut self, training: bool) {
        self.0.training = training;
    }

    fn is_training(&self) -> bool {
        self.0.training
    }
}

impl ModuleState for Dropout {
    fn visit_params(&self, _prefix: &str, _out: &mut Vec<(String, Param)>) {}

    fn set_training(&mut self, training: bool) {
        self.training = training;
    }

    fn is_training(&self) -> bool {
        self.training
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use oxmera_core::DType;

    const N: usize = 4000;

    fn ones() -> Tensor {
        Tensor::ones([N], DType::F64, DEV).unwrap()
    }

    #[test]
    fn same_seed_same_masks_and_calls_differ() {
        let a = Dropout::new(0.3, Generator::new(5)).unwrap();
        let b = Dropout::new(0.3, Generator::new(5)).unwrap();
        let a1 = a.forward(&ones()).unwrap().to_f64_vec().unwrap();
        let b1 = b.forward(&ones()).unwrap().to_f64_vec().unwrap();
        assert_eq!(a1, b1);
        let a2 = a.forward(&ones()).unwrap().to_f64_vec().unwrap();
        assert_ne!(a1, a2);
        assert_eq!(a.generator().offset(), 2 * N as u64);
        // Restoring a saved state replays the masks.
        let replay = Dropout::new(0.3, Generator::new(0)).unwrap();
        replay.set_generator(Generator::from_state(5, N as u64));
        assert_eq!(replay.forward(&ones()).unwrap().to_f64_vec().unwrap(), a2);
    }

    #[test]
    fn survivors_are_scaled_and_the_drop_rate_is_p() {
        let p = 0.25;
        let d = Dropout::new(p, Generator::new(6)).unwrap();
        let x = ones().with_requires_grad(true).unwrap();
        let y = d.forward(&x).unwrap();
        let v = y.to_f64_vec().unwrap();
        assert!(v.iter().all(|&e| e == 0.0 || e == 1.0 / (1.0 - p)));
        let dropped = v.iter().filter(|&&e| e == 0.0).count() as f64 / N as f64;
        // The dropped fraction has standard deviation √(p(1−p)/N) ≈ 0.0068;
        // five of them bound a seeded draw that is correct.
        let sd = (p * (1.0 - p) / N as f64).sqrt();
        assert!((dropped - p).abs() < 5.0 * sd, "dropped {dropped}");
        // The gradient is the same mask: y / x with x = 1.
        y.sum_all().unwrap().backward().unwrap();
        assert_eq!(x.grad().unwrap().to_f64_vec().unwrap(), v);
    }

    #[test]
    fn identity_in_eval_and_at_p_zero_zeros_at_p_one() {
        let x = t64(&[1.0, -2.0, 3.0], [3]);
        let mut d = Dropout::new(0.5, Generator::new(7)).unwrap();
        d.eval();
        assert!(!d.is_training());
        assert_eq!(
            d.forward(&x).unwrap().to_f64_vec().unwrap(),
            vec![1.0, -2.0, 3.0]
        );
        assert_eq!(d.generator().offset(), 0, "evaluation draws nothing");
        let zero = Dropout::new(0.0, Generator::new(7)).unwrap();
        assert_eq!(
            zero.forward(&x).unwrap().to_f64_vec().unwrap(),
            vec![1.0, -2.0, 3.0]
        );
        let all = Dropout::new(1.0, Generator::new(7)).unwrap();
        assert_eq!(all.forward(&x).unwrap().to_f64_vec().unwrap(), vec![0.0; 3]);
    }

    #[test]
    fn bad_probability_and_dtype_are_rejected() {
        for p in [-0.1, 1.1, f64::NAN] {
            assert!(matches!(
                Dropout::new(p, Generator::new(0)),
                Err(Error::InvalidArgument {
                    op: "Dropout",
                    name: "p",
                    ..
                })
            ));
        }
        let d = Dropout::new(0.5, Generator::new(0)).unwrap();
        assert!(matches!(
            d.forward(&ti(&[1, 2], [2])),
            Err(Error::UnsupportedDType { op: "Dropout", .. })
        ));
        assert_eq!(d.p(), 0.5);
    }

    #[test]
    fn dropout2d_drops_whole_channels_at_rate_p() {
        let p = 0.3;
        let d = Dropout2d::new(p, Generator::new(9)).unwrap();
        let (n, c) = (50, 40);
        let x = Tensor::ones([n, c, 2, 3], DType::F64, DEV)
            .unwrap()
            .with_requires_grad(true)
            .unwrap();
        let y = d.forward(&x).unwrap();
        let v = y.to_f64_vec().unwrap();
        let mut dropped = 0;
        for map in v.chunks(6) {
            assert!(
                map.iter().all(|&e| e == map[0]),
                "a channel is all kept or all dropped"
            );
            assert!(map[0] == 0.0 || map[0] == 1.0 / (1.0 - p));
            dropped += usize::from(map[0] == 0.0);
        }
        // 2000 channels: the dropped fraction's standard deviation is
        // √(p(1−p)/2000) ≈ 0.0102; five of them bound a correct draw.
        let rate = dropped as f64 / (n * c) as f64;
        assert!(
            (rate - p).abs() < 5.0 * (p * (1.0 - p) / (n * c) as f64).sqrt(),
            "{rate}"
        );
        assert_eq!(
            d.generator().offset(),
            (n * c) as u64,
            "one draw per channel"
        );
        y.sum_all().unwrap().backward().unwrap();
        assert_eq!(x.grad().unwrap().to_f64_vec().unwrap(), v);
        assert!(matches!(
            d.forward(&t64(&[1.0; 4], [2, 2])),
            Err(Error::RankMismatch {
                op: "Dropout2d",
                ..
            })
        ));
        let mut d = d;
        d.eval();
        assert_eq!(
            d.forward(&x).unwrap().to_f64_vec().unwrap(),
            vec![1.0; n * c * 6]
        );
    }
}
