//! The ops PyTorch users reach for (issue 23) on the reference backend:
//! hand-computed values a reader can check, PyTorch's special cases and
//! gradients at the kinks, the typed errors, and a finite-difference
//! gradient check of every differentiable one in every layout variant.

mod common;
use common::*;

use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, LN_2, PI};

use oxmera_core::{DType, Device, Error};
use oxmera_tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera_tensor::{SELU_ALPHA, SELU_SCALE, Tensor};

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

fn f64s(values: &[f64]) -> Tensor {
    t(values, &[values.len()], DType::F64)
}

fn leaf(values: &[f64]) -> Tensor {
    f64s(values).with_requires_grad(true).unwrap()
}

/// `d(sum f(x))/dx` at `values`.
fn grad_of(values: &[f64], f: impl Fn(&Tensor) -> oxmera_core::Result<Tensor>) -> Vec<f64> {
    let x = leaf(values);
    f(&x).unwrap().sum_all().unwrap().backward().unwrap();
    x.grad().unwrap().to_f64_vec().unwrap()
}

/// Runs [`gradcheck`] with the first input in every layout variant.
fn check(
    name: &str,
    f: impl Fn(&[Tensor]) -> oxmera_core::Result<Tensor>,
    inputs: &[(&[f64], &[usize])],
) {
    let (v0, s0) = inputs[0];
    for (layout, first) in variants(v0, s0, DType::F64) {
        let mut xs = vec![first];
        xs.extend(inputs[1..].iter().map(|(v, s)| t(v, s, DType::F64)));
        let report = gradcheck(&f, &xs, DEFAULT_STEP).unwrap();
        assert!(report.checked > 0, "{name}: nothing checked");
        assert!(report.passed(), "{name} ({layout}): {report}");
    }
}

// ---- math ----

#[test]
fn math_by_hand() {
    let x = f64s(&[8.0, 1.0, 0.0, -1.0]);
    assert_close(&x.log2().unwrap(), &[3.0, 0.0, -INF, NAN], &[4], 0.0);
    let x = f64s(&[1000.0, 0.01, 0.0, -1.0]);
    assert_close(&x.log10().unwrap(), &[3.0, -2.0, -INF, NAN], &[4], 1e-15);
    let x = f64s(&[10.0, -1.0, -INF, 0.5]);
    assert_close(
        &x.exp2().unwrap(),
        &[1024.0, 0.5, 0.0, 2f64.sqrt()],
        &[4],
        1e-15,
    );
    let x = f64s(&[1.0, INF, -INF, 0.0]);
    assert_close(
        &x.atan().unwrap(),
        &[FRAC_PI_4, FRAC_PI_2, -FRAC_PI_2, 0.0],
        &[4],
        1e-15,
    );
    let x = f64s(&[FRAC_PI_4, 0.0, INF]);
    assert_close(&x.tan().unwrap(), &[1.0, 0.0, NAN], &[3], 1e-15);
    let x = f64s(&[1.0, 0.5, -1.0, 1.5]);
    assert_close(
        &x.asin().unwrap(),
        &[FRAC_PI_2, PI / 6.0, -FRAC_PI_2, NAN],
        &[4],
        1e-15,
    );
    assert_close(&x.acos().unwrap(), &[0.0, PI / 3.0, PI, NAN], &[4], 1e-15);
    let x = f64s(&[0.0, LN_2, -INF, INF]);
    // sinh(ln 2) = (2 - 1/2)/2, cosh(ln 2) = (2 + 1/2)/2.
    assert_close(&x.sinh().unwrap(), &[0.0, 0.75, -INF, INF], &[4], 1e-15);
    assert_close(&x.cosh().unwrap(), &[1.0, 1.25, INF, INF], &[4], 1e-15);
    // expm1 keeps what exp(x) - 1 loses.
    let tiny = f64s(&[1e-10]);
    let direct = tiny
        .exp()
        .unwrap()
        .sub_scalar(1.0)
        .unwrap()
        .to_f64_vec()
        .unwrap()[0];
    let good = tiny.expm1().unwrap().to_f64_vec().unwrap()[0];
    assert!((good - 1.00000000005e-10).abs() < 1e-25);
    assert!((direct - 1.00000000005e-10).abs() > 1e-18);
    let x = f64s(&[-2.7, 2.7, -0.5, 3.0, INF, NAN]);
    let y = x.trunc().unwrap().to_f64_vec().unwrap();
    assert_eq!(&y[..5], &[-2.0, 2.0, -0.0, 3.0, INF]);
    assert!(y[2].is_sign_negative() && y[5].is_nan());
    let i = Tensor::from_vec(vec![-3i32, 4], [2], Device::Reference).unwrap();
    assert_eq!(i.trunc().unwrap().to_vec::<i32>().unwrap(), vec![-3, 4]);
}

#[test]
fn atan2_fmod_hypot_remainder_by_hand() {
    // atan2(y, x): the quadrant follows both signs, signed zeros included.
    let y = f64s(&[1.0, 0.0, -0.0, -1.0, 0.0, INF]);
    let x = f64s(&[-1.0, -1.0, -1.0, -1.0, 0.0, INF]);
    assert_close(
        &y.atan2(&x).unwrap(),
        &[3.0 * FRAC_PI_4, PI, -PI, -3.0 * FRAC_PI_4, 0.0, FRAC_PI_4],
        &[6],
        1e-15,
    );
    // fmod follows the dividend, remainder the divisor.
    let a = f64s(&[7.5, -7.5, 7.5, -7.5, 1.0, INF, 5.0, -4.0]);
    let b = f64s(&[2.0, 2.0, -2.0, -2.0, 0.0, 2.0, INF, 2.0]);
    let f = a.fmod(&b).unwrap().to_f64_vec().unwrap();
    assert_eq!(&f[..4], &[1.5, -1.5, 1.5, -1.5]);
    assert!(f[4].is_nan() && f[5].is_nan());
    assert_eq!(f[6], 5.0);
    assert!(
        f[7] == 0.0 && f[7].is_sign_negative(),
        "a zero takes the dividend's sign"
    );
    let r = a.remainder(&b).unwrap().to_f64_vec().unwrap();
    assert_eq!(&r[..4], &[1.5, 0.5, -0.5, -1.5]);
    assert_eq!(a.fmod_scalar(2.0).unwrap().to_f64_vec().unwrap()[1], -1.5);
    assert_eq!(
        a.remainder_scalar(2.0).unwrap().to_f64_vec().unwrap()[1],
        0.5
    );
    let ai = Tensor::from_vec(vec![7i64, -7, 7, -7, 5, i64::MIN], [6], Device::Reference).unwrap();
    let bi = Tensor::from_vec(vec![3i64, 3, -3, -3, 0, -1], [6], Device::Reference).unwrap();
    assert_eq!(
        ai.fmod(&bi).unwrap().to_vec::<i64>().unwrap(),
        vec![1, -1, 1, -1, 5, 0]
    );
    let h = f64s(&[3.0, 5.0, INF, 0.0])
        .hypot(&f64s(&[4.0, -12.0, NAN, 0.0]))
        .unwrap();
    assert_eq!(h.to_f64_vec().unwrap(), vec![5.0, 13.0, INF, 0.0]);
}

#[test]
fn math_gradients_by_hand() {
    assert_close(
        &Tensor::from_vec(grad_of(&[0.0, 1.0], |x| x.expm1()), [2], Device::Reference).unwrap(),
        &[1.0, std::f64::consts::E],
        &[2],
        1e-15,
    );
    assert_eq!(grad_of(&[2.0], |x| x.log2()), vec![1.0 / (2.0 * LN_2)]);
    assert_eq!(grad_of(&[3.0], |x| x.exp2()), vec![8.0 * LN_2]);
    assert_eq!(grad_of(&[0.0, 1.0], |x| x.atan()), vec![1.0, 0.5]);
    assert_eq!(grad_of(&[0.0], |x| x.tan()), vec![1.0]);
    assert_eq!(grad_of(&[0.0, 1.0], |x| x.asin()), vec![1.0, INF]);
    assert_eq!(grad_of(&[0.0, 1.0], |x| x.acos()), vec![-1.0, -INF]);
    assert_eq!(grad_of(&[0.0], |x| x.cosh()), vec![0.0]);
    assert_eq!(grad_of(&[0.0], |x| x.sinh()), vec![1.0]);
    assert_eq!(grad_of(&[-2.5, 0.0, 2.7], |x| x.trunc()), vec![0.0; 3]);
    // fmod's divisor gradient: -trunc(a / b); remainder's: -floor(a / b).
    let a = leaf(&[-7.0]);
    let b = leaf(&[2.0]);
    a.fmod(&b).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(a.grad().unwrap().to_f64_vec().unwrap(), vec![1.0]);
    assert_eq!(b.grad().unwrap().to_f64_vec().unwrap(), vec![3.0]);
    let b2 = leaf(&[2.0]);
    a.remainder(&b2)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(b2.grad().unwrap().to_f64_vec().unwrap(), vec![4.0]);
    // atan2(y, x): (x, -y) / (x² + y²); hypot: (a, b) / hypot.
    let (y, x) = (leaf(&[3.0]), leaf(&[4.0]));
    y.atan2(&x).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(y.grad().unwrap().to_f64_vec().unwrap(), vec![4.0 / 25.0]);
    assert_eq!(x.grad().unwrap().to_f64_vec().unwrap(), vec![-3.0 / 25.0]);
    let (a, b) = (leaf(&[3.0]), leaf(&[4.0]));
    a.hypot(&b).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(a.grad().unwrap().to_f64_vec().unwrap(), vec![0.6]);
    assert_eq!(b.grad().unwrap().to_f64_vec().unwrap(), vec![0.8]);
}

#[test]
fn math_dtype_errors_are_typed() {
    let i = Tensor::from_vec(vec![1i32, 2], [2], Device::Reference).unwrap();
    for (name, r) in [
        ("expm1", i.expm1()),
        ("log2", i.log2()),
        ("tan", i.tan()),
        ("acos", i.acos()),
        ("atan2", i.atan2(&i)),
        ("hypot", i.hypot(&i)),
        ("elu", i.elu(1.0)),
        ("logsigmoid", i.logsigmoid()),
    ] {
        match r {
            Err(Error::UnsupportedDType { op, .. }) => assert_eq!(op, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let b = Tensor::from_vec(vec![true], [1], Device::Reference).unwrap();
    assert!(matches!(b.fmod(&b), Err(Error::UnsupportedDType { .. })));
    assert!(matches!(b.trunc(), Err(Error::UnsupportedDType { .. })));
    let x = f64s(&[1.0]);
    assert!(matches!(x.elu(NAN), Err(Error::InvalidArgument { .. })));
    assert!(matches!(
        x.hardtanh(NAN, 1.0),
        Err(Error::InvalidArgument { .. })
    ));
    let e = x.hardtanh(2.0, 1.0).unwrap_err();
    assert!(e.to_string().contains("must not exceed max"), "{e}");
    let f = f32t(&[1.0], &[1]);
    assert!(matches!(x.atan2(&f), Err(Error::DTypeMismatch { .. })));
    assert!(matches!(
        f64s(&[1.0, 2.0]).hypot(&f64s(&[1.0, 2.0, 3.0])),
        Err(Error::BroadcastIncompatible { .. })
    ));
}

// ---- activations ----

#[test]
fn activations_by_hand() {
    let x = f64s(&[2.0, 0.0, -1.0, -INF, NAN]);
    let e = x.elu(0.5).unwrap().to_f64_vec().unwrap();
    assert_eq!(&e[..4], &[2.0, 0.0, 0.5 * (-1f64).exp_m1(), -0.5]);
    assert!(e[4].is_nan());
    let s = x.selu().unwrap().to_f64_vec().unwrap();
    assert_eq!(s[0], SELU_SCALE * 2.0);
    assert!((s[2] - -1.1113307378125625).abs() < 1e-15, "{}", s[2]);
    assert_eq!(s[3], -SELU_SCALE * SELU_ALPHA);
    // mish(1) = tanh(ln(1 + e)); mish(-inf) = 0 (the limit), mish(inf) = inf.
    let m = f64s(&[1.0, -INF, INF, 0.0])
        .mish()
        .unwrap()
        .to_f64_vec()
        .unwrap();
    assert!((m[0] - 0.8650983882673103).abs() < 1e-15);
    assert_eq!(&m[1..], &[0.0, INF, 0.0]);
    let x = f64s(&[-4.0, -3.0, -1.5, 0.0, 1.5, 3.0, 4.0, -INF, INF]);
    assert_close(
        &x.hardtanh(-1.0, 2.0).unwrap(),
        &[-1.0, -1.0, -1.0, 0.0, 1.5, 2.0, 2.0, -1.0, 2.0],
        &[9],
        0.0,
    );
    assert_close(
        &x.hardsigmoid().unwrap(),
        &[0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 0.0, 1.0],
        &[9],
        0.0,
    );
    // x (x + 3) / 6: -1.5 · 1.5 / 6 = -0.375; 1.5 · 4.5 / 6 = 1.125.
    assert_close(
        &x.hardswish().unwrap(),
        &[0.0, 0.0, -0.375, 0.0, 1.125, 3.0, 4.0, 0.0, INF],
        &[9],
        0.0,
    );
    // logsigmoid(-1) = -ln(1 + e); no overflow at -1000, the tail at 40.
    let l = f64s(&[0.0, -1.0, -1000.0, 40.0, INF, -INF])
        .logsigmoid()
        .unwrap()
        .to_f64_vec()
        .unwrap();
    assert_eq!(l[0], -LN_2);
    assert!((l[1] - -1.3132616875182228).abs() < 1e-15);
    assert_eq!(l[2], -1000.0);
    assert!((l[3] + (-40f64).exp()).abs() < 1e-30 && l[3] < 0.0);
    assert_eq!(&l[4..], &[0.0, -INF]);
}

#[test]
fn activation_gradients_at_the_kinks_follow_pytorch() {
    // elu: alpha at 0 (the x <= 0 branch).
    assert_eq!(
        grad_of(&[0.0, 1.0, -INF], |x| x.elu(0.5)),
        vec![0.5, 1.0, 0.0]
    );
    assert_eq!(
        grad_of(&[0.0, 1.0], |x| x.selu()),
        vec![SELU_SCALE * SELU_ALPHA, SELU_SCALE]
    );
    // hardtanh: 0 at the bounds (clamp passes it there).
    assert_eq!(
        grad_of(&[-1.0, 0.0, 1.0, 2.0], |x| x.hardtanh(-1.0, 1.0)),
        vec![0.0, 1.0, 0.0, 0.0]
    );
    assert_eq!(
        grad_of(&[-1.0, 1.0], |x| x.clamp(Some(-1.0), Some(1.0))),
        vec![1.0, 1.0]
    );
    assert_eq!(
        grad_of(&[-3.0, 0.0, 3.0, 4.0], |x| x.hardsigmoid()),
        vec![0.0, 1.0 / 6.0, 0.0, 0.0]
    );
    // hardswish: x/3 + 1/2 on [-3, 3], bounds included.
    assert_eq!(
        grad_of(&[-4.0, -3.0, 0.0, 3.0, 4.0], |x| x.hardswish()),
        vec![0.0, -0.5, 0.5, 1.5, 1.0]
    );
    // logsigmoid'(x) = σ(-x): 1/2 at 0.
    assert_eq!(grad_of(&[0.0], |x| x.logsigmoid()), vec![0.5]);
    // mish'(0) = tanh(ln 2) = 0.6.
    assert!((grad_of(&[0.0], |x| x.mish())[0] - 0.6).abs() < 1e-15);
    // An infinite incoming gradient gives 0 where the slope is 0.
    let x = leaf(&[-5.0, 5.0]);
    let y = x.hardtanh(-1.0, 1.0).unwrap();
    y.backward_with(&f64s(&[INF, INF])).unwrap();
    assert_eq!(x.grad().unwrap().to_f64_vec().unwrap(), vec![0.0, 0.0]);
}

// ---- masks ----

#[test]
fn masks_and_nan_to_num_by_hand() {
    let x = f64s(&[1.0, NAN, INF, -INF, -0.0, f64::MAX]);
    let bools = |t: Tensor| t.to_vec::<bool>().unwrap();
    assert_eq!(
        bools(x.isnan().unwrap()),
        [false, true, false, false, false, false]
    );
    assert_eq!(
        bools(x.isinf().unwrap()),
        [false, false, true, true, false, false]
    );
    assert_eq!(
        bools(x.isfinite().unwrap()),
        [true, false, false, false, true, true]
    );
    let y = x.nan_to_num(0.0, None, None).unwrap().to_f64_vec().unwrap();
    assert_eq!(y, vec![1.0, 0.0, f64::MAX, f64::MIN, -0.0, f64::MAX]);
    // f16's extremes are ±65504; bf16's about ±3.39e38.
    let h = t(&[INF, -INF], &[2], DType::F16)
        .nan_to_num(0.0, None, None)
        .unwrap();
    assert_eq!(h.to_f64_vec().unwrap(), vec![65504.0, -65504.0]);
    let b = t(&[INF], &[1], DType::BF16)
        .nan_to_num(0.0, None, None)
        .unwrap();
    assert_eq!(b.to_f64_vec().unwrap(), vec![3.3895313892515355e38]);
    // Integers hold neither NaN nor infinity.
    let i = Tensor::from_vec(vec![i64::MAX, -3], [2], Device::Reference).unwrap();
    assert_eq!(bools(i.isnan().unwrap()), [false, false]);
    assert_eq!(bools(i.isinf().unwrap()), [false, false]);
    assert_eq!(bools(i.isfinite().unwrap()), [true, true]);
    let same = i.nan_to_num(0.0, None, None).unwrap();
    assert_eq!(same.to_vec::<i64>().unwrap(), vec![i64::MAX, -3]);
    // The gradient passes where the value was kept, 0 where replaced.
    assert_eq!(
        grad_of(&[2.0, NAN, INF, -INF], |x| x.nan_to_num(
            1.0,
            Some(5.0),
            None
        )),
        vec![1.0, 0.0, 0.0, 0.0]
    );
}

// ---- scans ----

#[test]
fn scans_by_hand() {
    // [[1, 2, 3],
    //  [4, 5, 6]]
    let x = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], DType::F32);
    assert_close(
        &x.cumsum(1).unwrap(),
        &[1.0, 3.0, 6.0, 4.0, 9.0, 15.0],
        &[2, 3],
        0.0,
    );
    assert_close(
        &x.cumsum(-2).unwrap(),
        &[1.0, 2.0, 3.0, 5.0, 7.0, 9.0],
        &[2, 3],
        0.0,
    );
    assert_close(
        &x.cumprod(-1).unwrap(),
        &[1.0, 2.0, 6.0, 4.0, 20.0, 120.0],
        &[2, 3],
        0.0,
    );
    // Every layout gives the same scan.
    for (layout, v) in variants(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], DType::F64) {
        let got = v.cumsum(0).unwrap().to_f64_vec().unwrap();
        assert_eq!(got, vec![1.0, 2.0, 3.0, 5.0, 7.0, 9.0], "{layout}");
    }
    // NaN and infinities propagate forward along the slice.
    let y = f64s(&[1.0, NAN, 2.0])
        .cumsum(0)
        .unwrap()
        .to_f64_vec()
        .unwrap();
    assert!(y[0] == 1.0 && y[1].is_nan() && y[2].is_nan());
    let y = f64s(&[INF, -INF]).cumsum(0).unwrap().to_f64_vec().unwrap();
    assert!(y[0] == INF && y[1].is_nan());
    // Integers and bool give i64, wrapping.
    let i = Tensor::from_vec(vec![i32::MAX, 1, 2], [3], Device::Reference).unwrap();
    let s = i.cumsum(0).unwrap();
    assert_eq!(s.dtype(), DType::I64);
    assert_eq!(
        s.to_vec::<i64>().unwrap(),
        vec![2147483647, 2147483648, 2147483650]
    );
    let u = Tensor::from_vec(vec![200u8, 2, 3], [3], Device::Reference).unwrap();
    assert_eq!(
        u.cumprod(0).unwrap().to_vec::<i64>().unwrap(),
        vec![200, 400, 1200]
    );
    // A scalar is a slice of one; an empty dim gives an empty result.
    let s = Tensor::scalar(2.5f32, Device::Reference).unwrap();
    assert_eq!(s.cumsum(-1).unwrap().dims(), &[] as &[usize]);
    assert_eq!(s.cumprod(0).unwrap().item().unwrap(), 2.5);
    let e = Tensor::zeros([2, 0], DType::F32, Device::Reference).unwrap();
    assert_eq!(e.cumsum(1).unwrap().dims(), &[2, 0]);
}

#[test]
fn scan_errors_are_typed() {
    let x = f64s(&[1.0, 2.0]);
    for r in [x.cumsum(1), x.cumsum(-2), x.cumprod(5)] {
        assert!(
            matches!(r, Err(Error::DimOutOfRange { rank: 1, .. })),
            "{r:?}"
        );
    }
    let s = Tensor::scalar(1.0f64, Device::Reference).unwrap();
    assert!(matches!(s.cumsum(1), Err(Error::DimOutOfRange { .. })));
}

#[test]
fn scan_gradients_by_hand() {
    // d/dx_i Σ_j cumsum(x)_j = (number of j >= i) = n - i.
    assert_eq!(
        grad_of(&[5.0, -1.0, 2.0, 0.5], |x| x.cumsum(0)),
        vec![4.0, 3.0, 2.0, 1.0]
    );
    // cumprod of [2, 3, 4] = [2, 6, 24]; Σ: d/dx0 = 1 + 3 + 12 = 16,
    // d/dx1 = 2 + 8 = 10, d/dx2 = 6.
    assert_eq!(
        grad_of(&[2.0, 3.0, 4.0], |x| x.cumprod(0)),
        vec![16.0, 10.0, 6.0]
    );
    // With zeros: [2, 0, 3, 0] gives [2, 0, 0, 0]; d/dx0 = 1 (only y0 is
    // non-zero), d/dx1 = 2 + 2·3 + 2·3·0 = 8 (the first zero left out),
    // d/dx2 = 0 and d/dx3 = 0 (their products contain x1 = 0).
    assert_eq!(
        grad_of(&[2.0, 0.0, 3.0, 0.0], |x| x.cumprod(0)),
        vec![1.0, 8.0, 0.0, 0.0]
    );
    // A zero in the first place.
    assert_eq!(
        grad_of(&[0.0, 5.0, 2.0], |x| x.cumprod(0)),
        vec![1.0 + 5.0 + 10.0, 0.0, 0.0]
    );
}

// ---- finite differences ----

const XS: [f64; 6] = [-1.7, -0.6, 0.35, 0.8, 1.3, 1.9];
const SMALL: [f64; 6] = [-0.9, -0.55, -0.1, 0.2, 0.6, 0.85];
const POS: [f64; 6] = [0.3, 0.75, 1.2, 1.9, 2.6, 3.5];
const WIDE: [f64; 6] = [-4.5, -2.2, -0.6, 0.7, 2.1, 4.6];

#[test]
fn gradcheck_math() {
    let s = &[2usize, 3][..];
    check("expm1", |x| x[0].expm1(), &[(&XS, s)]);
    check("log2", |x| x[0].log2(), &[(&POS, s)]);
    check("log10", |x| x[0].log10(), &[(&POS, s)]);
    check("exp2", |x| x[0].exp2(), &[(&XS, s)]);
    check("tan", |x| x[0].tan(), &[(&SMALL, s)]);
    check("atan", |x| x[0].atan(), &[(&XS, s)]);
    check("asin", |x| x[0].asin(), &[(&SMALL, s)]);
    check("acos", |x| x[0].acos(), &[(&SMALL, s)]);
    check("sinh", |x| x[0].sinh(), &[(&XS, s)]);
    check("cosh", |x| x[0].cosh(), &[(&XS, s)]);
    check("trunc", |x| x[0].trunc(), &[(&XS, s)]);
    check("atan2", |x| x[0].atan2(&x[1]), &[(&XS, s), (&WIDE, s)]);
    check("hypot", |x| x[0].hypot(&x[1]), &[(&XS, s), (&WIDE, s)]);
    // Away from the jumps of trunc(a / b).
    check(
        "fmod",
        |x| x[0].fmod(&x[1]),
        &[(&WIDE, s), (&[1.1, 0.9, -1.3, 1.6, -0.8, 1.7], s)],
    );
    check(
        "fmod broadcast",
        |x| x[0].fmod(&x[1]),
        &[(&WIDE, s), (&[1.3, -0.8, 1.7], &[3])],
    );
}

#[test]
fn gradcheck_activations() {
    let s = &[3usize, 2][..];
    check("elu", |x| x[0].elu(0.7), &[(&WIDE, s)]);
    check("selu", |x| x[0].selu(), &[(&WIDE, s)]);
    check("mish", |x| x[0].mish(), &[(&WIDE, s)]);
    check("hardtanh", |x| x[0].hardtanh(-1.0, 1.5), &[(&XS, s)]);
    check("hardsigmoid", |x| x[0].hardsigmoid(), &[(&WIDE, s)]);
    check("hardswish", |x| x[0].hardswish(), &[(&WIDE, s)]);
    check("logsigmoid", |x| x[0].logsigmoid(), &[(&WIDE, s)]);
    check(
        "nan_to_num",
        |x| x[0].nan_to_num(0.0, None, None),
        &[(&WIDE, s)],
    );
}
