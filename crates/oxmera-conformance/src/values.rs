//! The values a case's inputs hold: seeded random draws and special values.
//!
//! Random draws come from [`oxmera_tensor::Generator`] (Philox, counter
//! based), seeded from the case's id and the input's position only, so a
//! case's values never change when other cases are added or reordered,
//! and every dtype, layout class and device sees the same numbers (a
//! broadcast input draws fewer of them: only its size-1 source).
//! Draws are made in `f64` and rounded once into the input's dtype, with
//! the same rules as every other conversion in oxmera.

use half::{bf16, f16};
use oxmera_core::{DType, Device, Result, Shape};
use oxmera_tensor::Generator;
use serde::Deserialize;

/// How an input's values are chosen (the `values` field of an input).
///
/// In TOML a unit variant is a string (`values = "normal"`) and the others
/// are one-key tables (`values = { uniform = [-2, 2] }`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ValueSpec {
    /// Standard normal draws. Integers get `round(10·v)` (its absolute
    /// value for `u8`); bool gets `v > 0`.
    Normal,
    /// Uniform draws in `[1/8, 4)`: a domain safe for `log`, `sqrt`,
    /// `rsqrt` and a base of `pow`. Integers get `1..=40`; bool `true`.
    Positive,
    /// The dtype's special values in a fixed order (see [`specials`]),
    /// then normal draws for the rest of the tensor.
    Specials,
    /// Small integers in `-2..3`, so that maxima, minima and rounding
    /// ties repeat (converted into the dtype; `u8` saturates at 0).
    Ties,
    /// Random `false`/`true` (as 0/1 in a numeric dtype).
    Bool,
    /// Uniform draws in `[low, high)`.
    Uniform([f64; 2]),
    /// `±10^e` with `e` uniform in `[low, high)` and a random sign: huge
    /// and tiny magnitudes (which may overflow or flush in narrow dtypes,
    /// identically on every device).
    LogUniform([f64; 2]),
    /// Integers uniform in `[low, high)`, as for indices.
    Int([i64; 2]),
    /// `big` first, then `small` everywhere else: absorption, where a
    /// running sum loses every small term to the big one.
    Spike([f64; 2]),
    /// These values, repeated in order to fill the tensor. Entries are
    /// numbers (TOML writes `nan`, `inf`, `-inf`, `-0.0`) or names of
    /// dtype-dependent constants: `max`, `min_normal`, `subnormal`,
    /// `max_subnormal`, `eps` (each may start with `-`).
    List(Vec<Scalar>),
}

/// One entry of a [`ValueSpec::List`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    /// A number.
    Num(f64),
    /// A named dtype constant, such as `"max"` or `"-subnormal"`.
    Name(String),
}

impl Scalar {
    /// The value in `dtype`'s terms, or `None` for an unknown name.
    pub fn resolve(&self, dtype: DType) -> Option<f64> {
        match self {
            Scalar::Num(v) => Some(*v),
            Scalar::Name(name) => {
                let (sign, bare) = match name.strip_prefix('-') {
                    Some(rest) => (-1.0, rest),
                    None => (1.0, name.as_str()),
                };
                let c = FloatConsts::of(dtype);
                let v = match bare {
                    "max" => c.max,
                    "min_normal" => c.min_normal,
                    "subnormal" => c.min_subnormal,
                    "max_subnormal" => c.min_normal - c.min_subnormal,
                    "eps" => c.eps,
                    _ => return None,
                };
                Some(sign * v)
            }
        }
    }
}

/// The limits of a float dtype (for integer dtypes, those of `f64`, which
/// the conversion then saturates).
#[derive(Debug, Clone, Copy)]
struct FloatConsts {
    max: f64,
    min_normal: f64,
    min_subnormal: f64,
    eps: f64,
}

impl FloatConsts {
    fn of(dtype: DType) -> Self {
        match dtype {
            DType::F16 => FloatConsts {
                max: f16::MAX.to_f64(),
                min_normal: f16::MIN_POSITIVE.to_f64(),
                min_subnormal: f16::MIN_POSITIVE_SUBNORMAL.to_f64(),
                eps: f16::EPSILON.to_f64(),
            },
            DType::BF16 => FloatConsts {
                max: bf16::MAX.to_f64(),
                min_normal: bf16::MIN_POSITIVE.to_f64(),
                min_subnormal: bf16::MIN_POSITIVE_SUBNORMAL.to_f64(),
                eps: bf16::EPSILON.to_f64(),
            },
            DType::F32 => FloatConsts {
                max: f32::MAX as f64,
                min_normal: f32::MIN_POSITIVE as f64,
                min_subnormal: f32::from_bits(1) as f64,
                eps: f32::EPSILON as f64,
            },
            _ => FloatConsts {
                max: f64::MAX,
                min_normal: f64::MIN_POSITIVE,
                min_subnormal: f64::from_bits(1),
                eps: f64::EPSILON,
            },
        }
    }
}

/// The special values of `dtype`, in the order [`ValueSpec::Specials`]
/// lays them out.
///
/// For floats: NaN, both infinities, both zeros, ±1, rounding ties
/// (`0.5`, `-1.5`, `2.5`), the smallest and largest subnormals, the
/// smallest normal, the largest finite values and a huge one below them,
/// a tiny normal, `1 + eps`, and values around the overflow and underflow
/// thresholds of `exp` in `f32`. For integers: 0, ±1, ±2, the extremes and
/// their neighbours (converted with saturation, so `u8` keeps 0..=255).
pub fn specials(dtype: DType) -> Vec<f64> {
    if dtype.is_bool() {
        return vec![0.0, 1.0];
    }
    if !dtype.is_float() {
        let (lo, hi) = match dtype {
            DType::I32 => (i32::MIN as f64, i32::MAX as f64),
            DType::U8 => (0.0, 255.0),
            // i64's extremes: MIN is exact in f64, MAX saturates from 2^63.
            _ => (i64::MIN as f64, i64::MAX as f64),
        };
        return vec![
            0.0,
            1.0,
            -1.0,
            2.0,
            -2.0,
            lo,
            hi,
            lo + 1.0,
            hi - 1.0,
            7.0,
            -7.0,
        ];
    }
    let c = FloatConsts::of(dtype);
    vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -1.5,
        2.5,
        c.min_subnormal,
        -c.min_subnormal,
        c.min_normal - c.min_subnormal,
        c.min_normal,
        -c.min_normal,
        c.max,
        -c.max,
        c.max / 8.0,
        -c.min_normal * 3.0,
        1.0 + c.eps,
        88.75,
        -103.5,
        1e4,
        -30.0,
    ]
}

/// `n` values for `spec` in `f64` (before rounding into `dtype`).
///
/// # Errors
/// Only from the generator (which cannot fail for the ranges used here)
/// and for a malformed range in the spec, reported by the generator as
/// [`oxmera_core::Error::InvalidArgument`].
pub(crate) fn generate(
    spec: &ValueSpec,
    shape: &Shape,
    dtype: DType,
    seed: u64,
) -> Result<Vec<f64>> {
    let n = shape.numel();
    let mut rng = Generator::new(seed);
    let draw_normal = |rng: &mut Generator, n: usize| -> Result<Vec<f64>> {
        rng.randn([n], DType::F64, Device::Reference)?.to_f64_vec()
    };
    let draw_uniform = |rng: &mut Generator, n: usize, lo: f64, hi: f64| -> Result<Vec<f64>> {
        rng.uniform([n], lo, hi, DType::F64, Device::Reference)?
            .to_f64_vec()
    };
    let draw_int = |rng: &mut Generator, n: usize, lo: i64, hi: i64| -> Result<Vec<f64>> {
        rng.randint([n], lo, hi, DType::F64, Device::Reference)?
            .to_f64_vec()
    };
    let values = match spec {
        ValueSpec::Normal => {
            let v = draw_normal(&mut rng, n)?;
            match dtype {
                DType::Bool => v.into_iter().map(|x| f64::from(x > 0.0)).collect(),
                DType::U8 => v.into_iter().map(|x| (10.0 * x).round().abs()).collect(),
                d if d.is_int() => v.into_iter().map(|x| (10.0 * x).round()).collect(),
                _ => v,
            }
        }
        ValueSpec::Positive => match dtype {
            DType::Bool => vec![1.0; n],
            d if d.is_int() => draw_int(&mut rng, n, 1, 41)?,
            _ => draw_uniform(&mut rng, n, 0.125, 4.0)?,
        },
        ValueSpec::Specials => {
            let mut v = specials(dtype);
            v.truncate(n);
            let rest = draw_normal(&mut rng, n - v.len())?;
            v.extend(rest);
            v
        }
        ValueSpec::Ties => draw_int(&mut rng, n, -2, 3)?,
        ValueSpec::Bool => draw_int(&mut rng, n, 0, 2)?,
        ValueSpec::Uniform([lo, hi]) => {
            let v = draw_uniform(&mut rng, n, *lo, *hi)?;
            if dtype.is_bool() {
                let mid = (lo + hi) / 2.0;
                v.into_iter().map(|x| f64::from(x > mid)).collect()
            } else {
                v
            }
        }
        ValueSpec::LogUniform([lo, hi]) => {
            let exps = draw_uniform(&mut rng, n, *lo, *hi)?;
            let signs = draw_int(&mut rng, n, 0, 2)?;
            exps.into_iter()
                .zip(signs)
                .map(|(e, s)| {
                    if s == 0.0 {
                        -(10f64.powf(e))
                    } else {
                        10f64.powf(e)
                    }
                })
                .collect()
        }
        ValueSpec::Int([lo, hi]) => draw_int(&mut rng, n, *lo, *hi)?,
        ValueSpec::Spike([big, small]) => {
            (0..n).map(|i| if i == 0 { *big } else { *small }).collect()
        }
        ValueSpec::List(list) => {
            let resolved: Vec<f64> = list
                .iter()
                .map(|s| s.resolve(dtype).unwrap_or(f64::NAN))
                .collect();
            if resolved.is_empty() {
                vec![0.0; n]
            } else {
                (0..n).map(|i| resolved[i % resolved.len()]).collect()
            }
        }
    };
    Ok(values)
}

/// A stable 64-bit seed from a case id and small integers (FNV-1a), so that
/// a case's random values depend on nothing but the case itself.
pub(crate) fn seed_of(case_id: &str, parts: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    for b in case_id.bytes() {
        eat(b);
    }
    for p in parts {
        for b in p.to_le_bytes() {
            eat(b);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmera_reference as _;

    #[test]
    fn named_constants_resolve_per_dtype() {
        let max = Scalar::Name("max".into());
        assert_eq!(max.resolve(DType::F16), Some(65504.0));
        assert_eq!(
            Scalar::Name("-subnormal".into()).resolve(DType::F32),
            Some(-(f32::from_bits(1) as f64))
        );
        assert_eq!(
            Scalar::Name("eps".into()).resolve(DType::BF16),
            Some(2f64.powi(-7))
        );
        assert_eq!(Scalar::Name("nope".into()).resolve(DType::F32), None);
    }

    #[test]
    fn draws_are_seeded_and_shaped() {
        let s = Shape::from([3, 4]);
        let a = generate(&ValueSpec::Normal, &s, DType::F32, 7).unwrap();
        let b = generate(&ValueSpec::Normal, &s, DType::F32, 7).unwrap();
        let c = generate(&ValueSpec::Normal, &s, DType::F32, 8).unwrap();
        assert_eq!(a.len(), 12);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let idx = generate(&ValueSpec::Int([0, 3]), &s, DType::I64, 1).unwrap();
        assert!(idx.iter().all(|&v| v == 0.0 || v == 1.0 || v == 2.0));
    }

    #[test]
    fn specials_come_first_then_draws() {
        let s = Shape::from([40]);
        let v = generate(&ValueSpec::Specials, &s, DType::F32, 1).unwrap();
        assert!(v[0].is_nan());
        assert_eq!(v[1], f64::INFINITY);
        assert!(v[4] == 0.0 && v[4].is_sign_negative());
        assert_eq!(v.len(), 40);
        let short = generate(&ValueSpec::Specials, &Shape::from([2]), DType::I32, 1).unwrap();
        assert_eq!(short, vec![0.0, 1.0]);
    }

    #[test]
    fn a_spike_leads_and_the_rest_is_small() {
        let v = generate(
            &ValueSpec::Spike([8.0, 1.0]),
            &Shape::from([4]),
            DType::F32,
            0,
        )
        .unwrap();
        assert_eq!(v, vec![8.0, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn lists_cycle() {
        let spec = ValueSpec::List(vec![Scalar::Num(1.0), Scalar::Name("max".into())]);
        let v = generate(&spec, &Shape::from([5]), DType::F16, 0).unwrap();
        assert_eq!(v, vec![1.0, 65504.0, 1.0, 65504.0, 1.0]);
    }

    #[test]
    fn seeds_differ_by_every_part() {
        let a = seed_of("x", &[0, 0]);
        assert_ne!(a, seed_of("y", &[0, 0]));
        assert_ne!(a, seed_of("x", &[1, 0]));
        assert_ne!(a, seed_of("x", &[0, 1]));
        assert_eq!(a, seed_of("x", &[0, 0]));
    }
}
