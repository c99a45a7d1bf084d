//! The cpu backend's fused backward kernels (GELU, softmax, layer
//! normalization) against the formulas evaluated in `f64` on the same
//! `f32` inputs, within bounds derived from each kernel's roundings, and
//! the cases they hand to the composition (other dims, other dtypes).
//! The conformance suite compares the same gradients with the reference's
//! composition with the inputs in every layout class (its upstream
//! gradients are contiguous); these tests pin the kernels' own error,
//! element by element, and feed them broadcast and transposed gradients.

use oxmera_core::{DType, Device, Result};
use oxmera_cpu::Cpu;
use oxmera_reference::scalar::erf;
use oxmera_tensor::{Backend, Generator, Tensor};

/// `f32`'s unit roundoff: half an ulp of 1.
const EPS: f64 = f32::EPSILON as f64 / 2.0;

fn t(values: &[f32], dims: &[usize]) -> Result<Tensor> {
    Tensor::from_slice(values, dims.to_vec(), Device::Cpu)
}

fn values(x: &Tensor) -> Result<Vec<f64>> {
    Ok(x.to_vec::<f32>()?.into_iter().map(f64::from).collect())
}

fn storage_values(s: oxmera_tensor::Storage, like: &Tensor) -> Result<Vec<f64>> {
    values(&Tensor::from_storage(s, like.shape().clone()))
}

/// GELU's derivative, `Φ(x) + x·φ(x)`, in `f64`.
fn gelu_derivative(x: f64) -> f64 {
    let cdf = 0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2));
    cdf + x * (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Every `x` in [-12, 12] at a step of 1/1024, and the special values;
/// the gradient alternates sign and magnitude. Bound per element: the
/// conformance suite's for GELU's gradient, `2ε·|want| + (9 + 1)·ε·M`,
/// with `M` taken as the element's own `|g|` (stricter than the suite's
/// maximum over the tensor). The kernel's error is A&S 7.1.26's
/// `0.75e-7` on `Φ` plus a few roundings of `Φ` and `x·φ`, times `|g|`.
#[test]
fn gelu_backward_follows_the_derivative() -> Result<()> {
    let mut xs: Vec<f32> = (-12 * 1024..=12 * 1024)
        .map(|i| i as f32 / 1024.0)
        .collect();
    xs.extend([
        0.0, -0.0, 1e-30, -1e-30, 1e-5, -1e-5, 30.0, -30.0, 1e30, -1e30,
    ]);
    let gs: Vec<f32> = (0..xs.len())
        .map(|i| if i % 2 == 0 { 1.5 } else { -0.25 } * (1.0 + (i % 7) as f32))
        .collect();
    let (x, g) = (t(&xs, &[xs.len()])?, t(&gs, &[gs.len()])?);
    let got = storage_values(Cpu.gelu_backward(&x, &g, false)?, &x)?;
    for ((&xv, &gv), &gotv) in xs.iter().zip(&gs).zip(&got) {
        let want = f64::from(gv) * gelu_derivative(f64::from(xv));
        let bound = 2.0 * EPS * want.abs() + 10.0 * EPS * f64::from(gv).abs();
        assert!(
            (gotv - want).abs() <= bound,
            "gelu' at {xv}: got {gotv}, want {want} (bound {bound:e})"
        );
    }
    // ±inf: x·φ(x) = ∞·0 is NaN, as the composition gives; NaN stays NaN.
    let x = t(&[f32::INFINITY, f32::NEG_INFINITY, f32::NAN], &[3])?;
    let g = t(&[1.0, 1.0, 1.0], &[3])?;
    let got = storage_values(Cpu.gelu_backward(&x, &g, false)?, &x)?;
    assert!(got.iter().all(|v| v.is_nan()), "{got:?}");
    Ok(())
}

/// A hand-checked value: at x = 0, gelu' = Φ(0) = 1/2, so the gradient
/// is g/2 exactly; at x = 1 it is Φ(1) + φ(1) = 0.841345 + 0.241971.
#[test]
fn gelu_backward_by_hand() -> Result<()> {
    let x = t(&[0.0, 1.0], &[2])?;
    let g = t(&[3.0, 2.0], &[2])?;
    let got = storage_values(Cpu.gelu_backward(&x, &g, false)?, &x)?;
    assert_eq!(got[0], 1.5);
    assert!((got[1] - 2.0 * (0.841_344_746 + 0.241_970_725)).abs() < 1e-6);
    Ok(())
}

/// Random rows of several lengths (around the 16-lane blocks), for
/// softmax and log-softmax along the last dim. Softmax: `s = Σ g·y` is
/// summed in `f64` and rounded once, then `g - s` and `y·(g - s)` round
/// once each: `|error| <= 3ε·|y|·(|g| + |s|)`. Log-softmax:
/// `g - e^y·Σ g` with the exponential within 2ε: `<= 5ε·(|g| + e^y·|Σ g|)`.
#[test]
fn softmax_backward_rows() -> Result<()> {
    let mut rng = Generator::new(7);
    for len in [1usize, 5, 16, 17, 64, 100] {
        let logits = rng
            .randn([6, len], DType::F32, Device::Cpu)?
            .mul_scalar(3.0)?;
        let g = rng.randn([6, len], DType::F32, Device::Cpu)?;
        for log in [false, true] {
            let y = if log {
                logits.log_softmax(-1)?
            } else {
                logits.softmax(-1)?
            };
            let got = storage_values(Cpu.softmax_backward(&y, &g, 1, log)?, &y)?;
            let (ys, gs) = (values(&y)?, values(&g)?);
            for r in 0..6 {
                let row = r * len..(r + 1) * len;
                let (yr, gr) = (&ys[row.clone()], &gs[row.clone()]);
                let s: f64 = if log {
                    gr.iter().sum()
                } else {
                    gr.iter().zip(yr).map(|(a, b)| a * b).sum()
                };
                for (i, (&yv, &gv)) in yr.iter().zip(gr).enumerate() {
                    let (want, bound) = if log {
                        let e = yv.exp();
                        (gv - e * s, 5.0 * EPS * (gv.abs() + e * s.abs()))
                    } else {
                        (yv * (gv - s), 3.0 * EPS * yv.abs() * (gv.abs() + s.abs()))
                    };
                    let gotv = got[row.start + i];
                    assert!(
                        (gotv - want).abs() <= bound + f64::from(f32::MIN_POSITIVE),
                        "len {len} log {log} [{r}, {i}]: got {gotv}, want {want}"
                    );
                }
            }
        }
    }
    Ok(())
}

/// Layer normalization's backward over rows of several lengths, against
/// `rstd·(g - mean(g) - y·mean(g·y))` in `f64` from the same `x`, `y`, `g`.
/// The kernel rounds `rstd`, the two means and three steps of the bracket
/// once each: `|error| <= 6ε·rstd·(|g| + |mean g| + |y·mean(g·y)|)`.
#[test]
fn layer_norm_backward_rows() -> Result<()> {
    let mut rng = Generator::new(11);
    for (len, eps) in [
        (1usize, 1e-5),
        (7, 1e-5),
        (16, 0.0),
        (33, 1e-5),
        (128, 1e-3),
    ] {
        let x = rng
            .randn([5, len], DType::F32, Device::Cpu)?
            .mul_scalar(2.0)?
            .add_scalar(0.5)?;
        let g = rng.randn([5, len], DType::F32, Device::Cpu)?;
        let y = x.layer_norm(1, eps)?;
        let got = storage_values(Cpu.layer_norm_backward(&x, &y, &g, 1, eps)?, &x)?;
        let (xs, ys, gs) = (values(&x)?, values(&y)?, values(&g)?);
        for r in 0..5 {
            let row = r * len..(r + 1) * len;
            let (xr, yr, gr) = (&xs[row.clone()], &ys[row.clone()], &gs[row.clone()]);
            let n = len as f64;
            let mean = xr.iter().sum::<f64>() / n;
            let var = xr.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
            let rstd = 1.0 / (var + eps).sqrt();
            let mg = gr.iter().sum::<f64>() / n;
            let mgy = gr.iter().zip(yr).map(|(a, b)| a * b).sum::<f64>() / n;
            for (i, (&yv, &gv)) in yr.iter().zip(gr).enumerate() {
                let want = rstd * (gv - mg - yv * mgy);
                let bound = 6.0 * EPS * rstd * (gv.abs() + mg.abs() + (yv * mgy).abs());
                let gotv = got[row.start + i];
                assert!(
                    (gotv - want).abs() <= bound + f64::from(f32::MIN_POSITIVE),
                    "len {len} [{r}, {i}]: got {gotv}, want {want} (bound {bound:e})"
                );
            }
        }
    }
    Ok(())
}

/// What the kernels hand on — softmax along a dim that is not the last,
/// views, `f64`, `f16` — equals the composition the reference defines.
#[test]
fn the_other_cases_equal_the_composition() -> Result<()> {
    let mut rng = Generator::new(3);
    let x = rng.randn([4, 6], DType::F32, Device::Cpu)?;
    let g = rng.randn([4, 6], DType::F32, Device::Cpu)?;
    // Softmax along dim 0 goes through the composition on this backend.
    let y = x.softmax(0)?;
    let got = storage_values(Cpu.softmax_backward(&y, &g, 0, false)?, &y)?;
    let want = values(&oxmera_tensor::fused_backward::softmax(&y, &g, 0, false)?)?;
    assert_eq!(got, want);
    // A transposed view runs the kernel on a gathered copy.
    let (xt, gt) = (x.t()?, g.t()?);
    let yt = xt.softmax(-1)?;
    let viewed = storage_values(Cpu.softmax_backward(&yt, &gt, 1, false)?, &yt)?;
    let copied = storage_values(
        Cpu.softmax_backward(&yt.contiguous()?, &gt.contiguous()?, 1, false)?,
        &yt,
    )?;
    assert_eq!(viewed, copied);
    // f64 and f16 give the composition's values within their precision.
    for dtype in [DType::F64, DType::F16] {
        let (xd, gd) = (x.to_dtype(dtype)?, g.to_dtype(dtype)?);
        let fused = Cpu.gelu_backward(&xd, &gd, false)?;
        let fused = Tensor::from_storage(fused, xd.shape().clone()).to_dtype(DType::F64)?;
        let composed =
            oxmera_tensor::fused_backward::gelu(&xd, &gd, false)?.to_dtype(DType::F64)?;
        let tol = if dtype == DType::F64 { 1e-14 } else { 4e-3 };
        for (a, b) in fused.to_vec::<f64>()?.iter().zip(composed.to_vec::<f64>()?) {
            assert!(
                (a - b).abs() <= tol * (1.0 + b.abs()),
                "{dtype:?}: {a} vs {b}"
            );
        }
    }
    Ok(())
}

/// The upstream gradient of `x.gelu().sum()` is a stride-0 broadcast of
/// one value, and a gradient may arrive as any view: the kernels read it
/// through its layout, and give what they give for the same values laid
/// out contiguously.
#[test]
fn a_broadcast_or_strided_gradient_is_read_through_its_layout() -> Result<()> {
    let mut rng = Generator::new(5);
    let x = rng.randn([6, 16], DType::F32, Device::Cpu)?;
    let dense = |g: &Tensor| g.contiguous();
    let broadcast = Tensor::from_slice(&[0.75f32], [1, 1], Device::Cpu)?.broadcast_to([6, 16])?;
    let transposed = rng.randn([16, 6], DType::F32, Device::Cpu)?.t()?;
    for g in [broadcast, transposed] {
        assert!(!g.is_contiguous() || g.layout().strides().as_slice().contains(&0));
        let y = x.softmax(-1)?;
        let z = x.layer_norm(1, 1e-5)?;
        let pairs = [
            (
                Cpu.gelu_backward(&x, &g, false)?,
                Cpu.gelu_backward(&x, &dense(&g)?, false)?,
            ),
            (
                Cpu.softmax_backward(&y, &g, 1, false)?,
                Cpu.softmax_backward(&y, &dense(&g)?, 1, false)?,
            ),
            (
                Cpu.softmax_backward(&y, &g, 1, true)?,
                Cpu.softmax_backward(&y, &dense(&g)?, 1, true)?,
            ),
            (
                Cpu.layer_norm_backward(&x, &z, &g, 1, 1e-5)?,
                Cpu.layer_norm_backward(&x, &z, &dense(&g)?, 1, 1e-5)?,
            ),
        ];
        for (viewed, copied) in pairs {
            assert_eq!(storage_values(viewed, &x)?, storage_values(copied, &x)?);
        }
    }
    Ok(())
}

/// ReLU's one-pass gradient has the composition's bits (`grad` where
/// `x > 0`, `+0` elsewhere) for `f32` and `f64`, with the special values
/// on both sides — a zero of either sign, NaN, infinities as `x` and as
/// `grad` — a transposed `x`, a broadcast `grad`, above the thread split;
/// `f16` takes the composition itself.
#[test]
fn relu_backward_has_the_compositions_bits() -> Result<()> {
    let special = [
        0.0f32,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-45,
        -1e-45,
        2.5,
        -2.5,
    ];
    let xs: Vec<f32> = special.iter().flat_map(|&a| special.map(|_| a)).collect();
    let gs: Vec<f32> = special.iter().flat_map(|_| special).collect();
    let n = special.len();
    let (x, g) = (t(&xs, &[n, n])?, t(&gs, &[n, n])?);
    let mut rng = Generator::new(8);
    let big = rng.randn([300, 700], DType::F32, Device::Cpu)?;
    let big_g = rng.randn([700, 300], DType::F32, Device::Cpu)?.t()?;
    let one = Tensor::from_slice(&[-3.0f32], [1, 1], Device::Cpu)?.broadcast_to([n, n])?;
    let cases = [
        (x.clone(), g.clone()),
        (x.t()?, g.clone()),
        (x.clone(), one),
        (big.clone(), big_g.clone()),
    ];
    for dtype in [DType::F32, DType::F64, DType::F16] {
        for (x, g) in &cases {
            let (x, g) = (x.to_dtype(dtype)?, g.to_dtype(dtype)?);
            let fused = Tensor::from_storage(Cpu.relu_backward(&x, &g)?, x.shape().clone());
            let composed = oxmera_tensor::fused_backward::relu(&x, &g)?;
            let bits = |t: &Tensor| -> Result<Vec<u64>> {
                Ok(t.to_dtype(DType::F64)?
                    .to_vec::<f64>()?
                    .iter()
                    .map(|v| v.to_bits())
                    .collect())
            };
            assert_eq!(bits(&fused)?, bits(&composed)?, "{dtype:?} {:?}", x.dims());
        }
    }
    Ok(())
}
