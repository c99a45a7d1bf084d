//! Procedural data sets drawn from a seed: spirals and moons (small
//! two-feature classification problems that a linear model cannot solve
//! and a small MLP can) and a noisy sine wave (a one-feature regression).
//! Quick to train on, easy to plot.

use crate::random::{MOONS_STREAM, SINE_STREAM, SPIRALS_STREAM, Stream};
use crate::{DataError, TensorDataset};

/// The shape of a spirals data set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpiralsConfig {
    /// Number of arms, one class each (at least 1).
    pub arms: usize,
    /// Points on each arm.
    pub points_per_arm: usize,
    /// Standard deviation of the Gaussian noise added to each point's
    /// angle, in radians (0 for clean arms).
    pub noise: f64,
    /// The seed of the noise.
    pub seed: u64,
}

impl Default for SpiralsConfig {
    fn default() -> Self {
        SpiralsConfig {
            arms: 3,
            points_per_arm: 100,
            noise: 0.2,
            seed: 0,
        }
    }
}

/// Interleaved spiral arms in the plane, one class per arm.
///
/// Point `i` of `n` on arm `a` lies at radius `r = i / (n - 1)` and angle
/// `θ = 4 r + 2π a / arms + noise`, i.e. at `(r sin θ, r cos θ)`: each arm
/// winds about two-thirds of a turn outward from the centre, and the arms
/// are rotated copies of each other. Samples come arm by arm; features
/// have shape `[2]`, labels are `0..arms`.
pub fn spirals(config: SpiralsConfig) -> Result<TensorDataset, DataError> {
    let op = "spirals";
    if config.arms == 0 {
        return Err(DataError::config(op, "arms", "need at least one arm"));
    }
    check_noise(op, config.noise)?;
    let mut rng = Stream::new(config.seed, SPIRALS_STREAM);
    let n = config.points_per_arm;
    let mut features = Vec::with_capacity(2 * n * config.arms);
    let mut labels = Vec::with_capacity(n * config.arms);
    for arm in 0..config.arms {
        let phase = std::f64::consts::TAU * arm as f64 / config.arms as f64;
        for i in 0..n {
            let r = if n > 1 {
                i as f64 / (n - 1) as f64
            } else {
                0.0
            };
            let theta = 4.0 * r + phase + config.noise * rng.normal();
            features.push((r * theta.sin()) as f32);
            features.push((r * theta.cos()) as f32);
            labels.push(arm as i64);
        }
    }
    TensorDataset::classification(features, vec![2], labels, config.arms)
}

/// The shape of a moons data set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoonsConfig {
    /// Total samples; the upper moon gets the odd one out.
    pub samples: usize,
    /// Standard deviation of the Gaussian noise added to each coordinate.
    pub noise: f64,
    /// The seed of the noise.
    pub seed: u64,
}

impl Default for MoonsConfig {
    fn default() -> Self {
        MoonsConfig {
            samples: 200,
            noise: 0.1,
            seed: 0,
        }
    }
}

/// Two interleaving half circles of radius 1, one class each.
///
/// The upper moon (class 0) is `(cos t, sin t)` and the lower (class 1)
/// is `(1 - cos t, 0.5 - sin t)`, for `t` evenly spaced over `[0, π]`,
/// plus Gaussian noise of standard deviation `noise` on each coordinate.
/// Samples come moon by moon; features have shape `[2]`.
pub fn moons(config: MoonsConfig) -> Result<TensorDataset, DataError> {
    check_noise("moons", config.noise)?;
    let mut rng = Stream::new(config.seed, MOONS_STREAM);
    let upper = config.samples.div_ceil(2);
    let lower = config.samples / 2;
    let mut features = Vec::with_capacity(2 * config.samples);
    let mut labels = Vec::with_capacity(config.samples);
    for (class, count) in [(0i64, upper), (1, lower)] {
        for i in 0..count {
            let t = if count > 1 {
                std::f64::consts::PI * i as f64 / (count - 1) as f64
            } else {
                0.0
            };
            let (x, y) = if class == 0 {
                (t.cos(), t.sin())
            } else {
                (1.0 - t.cos(), 0.5 - t.sin())
            };
            features.push((x + config.noise * rng.normal()) as f32);
            features.push((y + config.noise * rng.normal()) as f32);
            labels.push(class);
        }
    }
    TensorDataset::classification(features, vec![2], labels, 2)
}

/// The shape of a sine-wave regression data set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SineConfig {
    /// Number of samples.
    pub samples: usize,
    /// Standard deviation of the Gaussian noise added to each target.
    pub noise: f64,
    /// The seed of the inputs and the noise.
    pub seed: u64,
}

impl Default for SineConfig {
    fn default() -> Self {
        SineConfig {
            samples: 256,
            noise: 0.05,
            seed: 0,
        }
    }
}

/// One period of a sine wave to regress: inputs `x` drawn uniformly from
/// `[-1, 1)`, targets `sin(π x)` plus Gaussian noise of standard
/// deviation `noise`. Features have shape `[1]`, targets one value each.
pub fn sine(config: SineConfig) -> Result<TensorDataset, DataError> {
    check_noise("sine", config.noise)?;
    let mut rng = Stream::new(config.seed, SINE_STREAM);
    let mut xs = Vec::with_capacity(config.samples);
    let mut ys = Vec::with_capacity(config.samples);
    for _ in 0..config.samples {
        let x = 2.0 * rng.unit() - 1.0;
        xs.push(x as f32);
        ys.push(((std::f64::consts::PI * x).sin() + config.noise * rng.normal()) as f32);
    }
    TensorDataset::regression(xs, vec![1], ys, 1)
}

fn check_noise(op: &'static str, noise: f64) -> Result<(), DataError> {
    if noise.is_finite() && noise >= 0.0 {
        Ok(())
    } else {
        Err(DataError::config(
            op,
            "noise",
            format!("need a finite value >= 0, got {noise}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dataset;

    #[test]
    fn spirals_shapes_labels_and_determinism() {
        let cfg = SpiralsConfig {
            arms: 4,
            points_per_arm: 25,
            noise: 0.3,
            seed: 11,
        };
        let a = spirals(cfg).unwrap();
        assert_eq!(a.len(), 100);
        assert_eq!(a.feature_shape(), &[2]);
        let labels = a.labels().unwrap();
        for arm in 0..4 {
            assert_eq!(labels.iter().filter(|&&l| l == arm).count(), 25);
        }
        assert_eq!(a, spirals(cfg).unwrap());
        assert_ne!(a, spirals(SpiralsConfig { seed: 12, ..cfg }).unwrap());
        // Noise moves points along the circle, never off it: |p| = r.
        for (i, p) in a.features().chunks(2).enumerate() {
            let r = (i % 25) as f32 / 24.0;
            assert!(((p[0] * p[0] + p[1] * p[1]).sqrt() - r).abs() < 1e-5);
        }
    }

    #[test]
    fn clean_spiral_points_are_hand_checkable() {
        let ds = spirals(SpiralsConfig {
            arms: 2,
            points_per_arm: 3,
            noise: 0.0,
            seed: 0,
        })
        .unwrap();
        let f = ds.features();
        // Arm 0, middle point: r = 0.5, θ = 2.
        assert!((f[2] - 0.5 * 2f32.sin()).abs() < 1e-6);
        assert!((f[3] - 0.5 * 2f32.cos()).abs() < 1e-6);
        // Arm 1, last point: r = 1, θ = 4 + π.
        assert!((f[10] - (4.0 + std::f32::consts::PI).sin()).abs() < 1e-6);
        assert!((f[11] - (4.0 + std::f32::consts::PI).cos()).abs() < 1e-6);
    }

    #[test]
    fn moons_shapes_and_clean_points() {
        let ds = moons(MoonsConfig {
            samples: 7,
            noise: 0.0,
            seed: 0,
        })
        .unwrap();
        assert_eq!(ds.len(), 7);
        assert_eq!(ds.labels().unwrap(), &[0, 0, 0, 0, 1, 1, 1]);
        let f = ds.features();
        // Upper moon t = 0 and t = π; lower moon t = 0 is (0, 0.5).
        assert_eq!(&f[0..2], &[1.0, 0.0]);
        assert!((f[6] + 1.0).abs() < 1e-6 && f[7].abs() < 1e-6);
        assert_eq!(&f[8..10], &[0.0, 0.5]);
    }

    #[test]
    fn moons_determinism_and_bad_noise() {
        let cfg = MoonsConfig::default();
        let a = moons(cfg).unwrap();
        assert_eq!(a.len(), 200);
        assert_eq!(a, moons(cfg).unwrap());
        assert_ne!(a, moons(MoonsConfig { seed: 1, ..cfg }).unwrap());
        assert!(matches!(
            moons(MoonsConfig { noise: -1.0, ..cfg }),
            Err(DataError::InvalidConfig { what: "noise", .. })
        ));
        assert!(
            spirals(SpiralsConfig {
                arms: 0,
                ..Default::default()
            })
            .is_err()
        );
    }

    #[test]
    fn sine_targets_follow_the_curve() {
        let clean = sine(SineConfig {
            samples: 50,
            noise: 0.0,
            seed: 4,
        })
        .unwrap();
        assert_eq!(clean.len(), 50);
        assert_eq!(clean.target_kind(), crate::TargetKind::Values { width: 1 });
        for (x, y) in clean.features().iter().zip(clean.values().unwrap()) {
            assert!((-1.0..1.0).contains(x));
            assert!((y - (std::f32::consts::PI * x).sin()).abs() < 1e-6);
        }
        let cfg = SineConfig::default();
        let noisy = sine(cfg).unwrap();
        assert_eq!(noisy, sine(cfg).unwrap());
        assert_ne!(noisy, sine(SineConfig { seed: 1, ..cfg }).unwrap());
        // Residuals have about the noise's spread (256 samples: the sample
        // standard deviation is within 20% of 0.05 with overwhelming odds).
        let residuals: Vec<f64> = noisy
            .features()
            .iter()
            .zip(noisy.values().unwrap())
            .map(|(&x, &y)| f64::from(y) - (std::f64::consts::PI * f64::from(x)).sin())
            .collect();
        let sd = (residuals.iter().map(|r| r * r).sum::<f64>() / residuals.len() as f64).sqrt();
        assert!((sd - 0.05).abs() < 0.01, "{sd}");
    }
}
