//! The cpu backend's one-pass Adam and SGD steps equal the compositions of
//! tensor ops they replace (`oxmera_tensor::fused_update::{adam, sgd}`,
//! run on this same backend) to the bit: same operations, same order,
//! same roundings.

use oxmera_core::{DType, Device, Result};
use oxmera_cpu::Cpu;
use oxmera_tensor::fused_update::{AdamStep, SgdStep, adam, sgd};
use oxmera_tensor::{Backend, Generator, Tensor};

fn bits(t: &Tensor) -> Result<Vec<u64>> {
    Ok(t.to_dtype(DType::F64)?
        .to_vec::<f64>()?
        .into_iter()
        .map(f64::to_bits)
        .collect())
}

/// The shapes both steps are checked at: 70 000 elements is above the
/// size where the pass splits across threads.
const SHAPES: [([usize; 2], DType); 3] = [
    ([7, 5], DType::F32),
    ([350, 200], DType::F32),
    ([7, 5], DType::F64),
];

/// A parameter and a gradient a tenth its size.
fn param_and_grad(rng: &mut Generator, dims: &[usize], dtype: DType) -> Result<(Tensor, Tensor)> {
    let p = rng.randn(dims.to_vec(), dtype, Device::Cpu)?;
    let g = rng
        .randn(dims.to_vec(), dtype, Device::Cpu)?
        .mul_scalar(0.1)?;
    Ok((p, g))
}

#[test]
fn one_pass_adam_is_the_composition_to_the_bit() -> Result<()> {
    let mut rng = Generator::new(9);
    for (dims, dtype) in SHAPES {
        let (p, g) = param_and_grad(&mut rng, &dims, dtype)?;
        let m = rng.randn(dims, dtype, Device::Cpu)?.mul_scalar(0.01)?;
        let v = rng
            .randn(dims, dtype, Device::Cpu)?
            .square()?
            .mul_scalar(1e-4)?;
        for (weight_decay, decoupled) in [(0.0, true), (0.01, true), (0.01, false)] {
            for t in [1.0f64, 7.0] {
                let s = AdamStep {
                    lr: 1e-3,
                    beta1: 0.9,
                    beta2: 0.999,
                    eps: 1e-8,
                    weight_decay,
                    decoupled,
                    bias1: 1.0 - 0.9f64.powf(t),
                    bias2: 1.0 - 0.999f64.powf(t),
                };
                let fused = Cpu.adam_update(&p, &g, &m, &v, &s)?;
                let composed = adam(&p, &g, &m, &v, &s)?;
                for (f, c) in fused.into_iter().zip(&composed) {
                    let f = Tensor::from_storage(f, p.shape().clone());
                    assert_eq!(
                        bits(&f)?,
                        bits(c)?,
                        "{dims:?} {dtype:?} λ {weight_decay} {t}"
                    );
                }
            }
        }
    }
    Ok(())
}

/// A hand-checked step: p = 1, g = 0.5, fresh moments, lr 0.1, t = 1:
/// m = 0.05, v = 0.00025, and the bias corrections make the step
/// lr·m̂/(√v̂ + eps) = 0.1·0.5/(0.5 + 1e-8) ≈ 0.1, so p ≈ 0.9.
#[test]
fn a_first_step_by_hand() -> Result<()> {
    let t = |v: f32| Tensor::from_slice(&[v], [1], Device::Cpu);
    let s = AdamStep {
        lr: 0.1,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.0,
        decoupled: true,
        bias1: 0.1,
        bias2: 1.0 - 0.999,
    };
    let [p, m, v] = Cpu.adam_update(&t(1.0)?, &t(0.5)?, &t(0.0)?, &t(0.0)?, &s)?;
    let one = |s| Tensor::from_storage(s, [1]).to_vec::<f32>().map(|v| v[0]);
    assert!((one(p)? - 0.9).abs() < 1e-6);
    assert!((one(m)? - 0.05).abs() < 1e-8);
    assert!((one(v)? - 0.00025).abs() < 1e-10);
    Ok(())
}

#[test]
fn one_pass_sgd_is_the_composition_to_the_bit() -> Result<()> {
    let mut rng = Generator::new(10);
    for (dims, dtype) in SHAPES {
        let (p, g) = param_and_grad(&mut rng, &dims, dtype)?;
        let b = rng.randn(dims, dtype, Device::Cpu)?.mul_scalar(0.05)?;
        // A transposed view of a buffer: the pass reads any layout.
        let bt = rng.randn([dims[1], dims[0]], dtype, Device::Cpu)?.t()?;
        for (momentum, dampening, nesterov, weight_decay) in [
            (0.0, 0.0, false, 0.0),
            (0.0, 0.0, false, 0.01),
            (0.9, 0.0, false, 0.0),
            (0.9, 0.1, false, 0.01),
            (0.9, 0.0, true, 0.003),
        ] {
            let s = SgdStep {
                lr: 0.03,
                momentum,
                dampening,
                nesterov,
                weight_decay,
            };
            for buf in [None, Some(&b), Some(&bt)] {
                let (fp, fb) = Cpu.sgd_update(&p, &g, buf, &s)?;
                let (cp, cb) = sgd(&p, &g, buf, &s)?;
                let what = format!("{dims:?} {dtype:?} {s:?} buffer {}", buf.is_some());
                let fp = Tensor::from_storage(fp, p.shape().clone());
                assert_eq!(bits(&fp)?, bits(&cp)?, "{what}");
                assert_eq!(fb.is_some(), cb.is_some(), "{what}");
                if let (Some(fb), Some(cb)) = (fb, cb) {
                    let fb = Tensor::from_storage(fb, p.shape().clone());
                    assert_eq!(bits(&fb)?, bits(&cb)?, "{what}");
                }
            }
        }
    }
    Ok(())
}

/// Hand-checked steps with p = 1, g = 0.5, lr 0.1, μ = 0.9: the first
/// step's buffer is the gradient (buf = 0.5, p = 1 - 0.05 = 0.95); the
/// next, from buf = 0.5 with the same gradient, has buf = 0.45 + 0.5 =
/// 0.95 and p = 1 - 0.095 = 0.905; Nesterov steps along g + μ·buf =
/// 0.5 + 0.855 = 1.355, p = 0.8645.
#[test]
fn sgd_steps_by_hand() -> Result<()> {
    let t = |v: f32| Tensor::from_slice(&[v], [1], Device::Cpu);
    let one = |s| Tensor::from_storage(s, [1]).to_vec::<f32>().map(|v| v[0]);
    let mut s = SgdStep {
        lr: 0.1,
        momentum: 0.9,
        dampening: 0.0,
        nesterov: false,
        weight_decay: 0.0,
    };
    let (p, b) = Cpu.sgd_update(&t(1.0)?, &t(0.5)?, None, &s)?;
    assert!((one(p)? - 0.95).abs() < 1e-7);
    assert!((one(b.expect("a buffer"))? - 0.5).abs() < 1e-7);
    let (p, b) = Cpu.sgd_update(&t(1.0)?, &t(0.5)?, Some(&t(0.5)?), &s)?;
    assert!((one(p)? - 0.905).abs() < 1e-7);
    assert!((one(b.expect("a buffer"))? - 0.95).abs() < 1e-7);
    s.nesterov = true;
    let (p, _) = Cpu.sgd_update(&t(1.0)?, &t(0.5)?, Some(&t(0.5)?), &s)?;
    assert!((one(p)? - 0.8645).abs() < 1e-6);
    s.momentum = 0.0;
    s.nesterov = false;
    let (p, b) = Cpu.sgd_update(&t(1.0)?, &t(0.5)?, None, &s)?;
    assert!((one(p)? - 0.95).abs() < 1e-7);
    assert!(b.is_none());
    Ok(())
}
