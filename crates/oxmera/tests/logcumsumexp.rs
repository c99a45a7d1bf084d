//! `logcumsumexp`, by hand: values a reader can check with a pencil
//! (`log(1 + 2) = ln 3`), PyTorch's special cases, the gradient as
//! softmax weights over each prefix, and a finite-difference check, on the
//! reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::Tensor;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];
const INF: f64 = f64::INFINITY;

fn f64s(values: &[f64], shape: &[usize], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), device).unwrap()
}

fn close(got: &Tensor, want: &[f64]) {
    let got = got.to_f64_vec().unwrap();
    assert_eq!(got.len(), want.len(), "{got:?} against {want:?}");
    for (g, w) in got.iter().zip(want) {
        let same = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 4e-16 * w.abs();
        assert!(same, "{got:?} against {want:?}");
    }
}

#[test]
fn running_log_sums_by_hand() {
    let (ln2, ln3, ln6) = (2f64.ln(), 3f64.ln(), 6f64.ln());
    for dev in DEVICES {
        // exp of [0, ln 2, ln 3] is [1, 2, 3]; the running sums 1, 3, 6.
        let x = f64s(&[0.0, ln2, ln3], &[3], dev);
        close(&x.logcumsumexp(0).unwrap(), &[0.0, ln3, ln6]);
        // [[0, ln 2], [ln 3, 0]] is exp [[1, 2], [3, 1]]. Along dim 1 the
        // rows' running sums are [1, 3] and [3, 4]; along dim 0 the
        // columns' are [1, 4] and [2, 3], laid out as [[1, 2], [4, 3]].
        let ln4 = 4f64.ln();
        let m = f64s(&[0.0, ln2, ln3, 0.0], &[2, 2], dev);
        close(&m.logcumsumexp(1).unwrap(), &[0.0, ln3, ln3, ln4]);
        close(&m.logcumsumexp(-2).unwrap(), &[0.0, ln2, ln4, ln3]);
        // The transposed view scans the columns as rows.
        let t = m.transpose(0, 1).unwrap();
        close(&t.logcumsumexp(1).unwrap(), &[0.0, ln4, ln2, ln3]);
        // No overflow where exp(1000) would be inf, in f32 too.
        let big = Tensor::from_vec(vec![1000.0f32, 1000.0], [2], dev).unwrap();
        assert_eq!(
            big.logcumsumexp(0).unwrap().to_vec::<f32>().unwrap(),
            [1000.0, 1000.0 + 2f32.ln()]
        );
        // -inf is the identity; +inf and NaN propagate forward.
        let specials = f64s(
            &[-INF, -INF, 2.0, 1.0, INF, 0.0, 1.0, f64::NAN, 0.0],
            &[3, 3],
            dev,
        );
        let y = specials.logcumsumexp(1).unwrap().to_f64_vec().unwrap();
        assert_eq!(&y[..3], [-INF, -INF, 2.0]);
        assert_eq!(&y[3..6], [1.0, INF, INF]);
        assert!(y[6] == 1.0 && y[7].is_nan() && y[8].is_nan(), "{y:?}");
        // f16 and bf16 keep their dtype.
        for dt in [DType::F16, DType::BF16] {
            let h = x.to_dtype(dt).unwrap().logcumsumexp(0).unwrap();
            assert_eq!(h.dtype(), dt);
        }
        // A scalar is a slice of one; an empty dim gives an empty result.
        let s = Tensor::scalar(2.5f32, dev).unwrap();
        let y = s.logcumsumexp(-1).unwrap();
        assert_eq!((y.dims(), y.item().unwrap()), (&[] as &[usize], 2.5));
        let e = Tensor::zeros([2, 0], DType::F32, dev).unwrap();
        assert_eq!(e.logcumsumexp(1).unwrap().dims(), &[2, 0]);
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = f64s(&[1.0, 2.0], &[2], dev);
        for r in [x.logcumsumexp(1), x.logcumsumexp(-2)] {
            assert!(matches!(r, Err(Error::DimOutOfRange { .. })), "{r:?}");
        }
        // PyTorch has no integer logcumsumexp.
        for dt in [DType::I32, DType::I64, DType::U8, DType::Bool] {
            let r = x.to_dtype(dt).unwrap().logcumsumexp(0);
            assert!(
                matches!(r, Err(Error::UnsupportedDType { dtype, .. }) if dtype == dt),
                "{r:?}"
            );
        }
    }
}

#[test]
fn the_gradient_is_the_softmax_weights_of_each_prefix() {
    let (ln2, ln3) = (2f64.ln(), 3f64.ln());
    for dev in DEVICES {
        // y = [0, ln 3, ln 6] from exp(x) = [1, 2, 3]; ∂y_j/∂x_i =
        // exp(x_i)/exp(y_j) for i <= j. Of Σ y: x0 gets 1/1 + 1/3 + 1/6 =
        // 3/2, x1 gets 2/3 + 2/6 = 1, x2 gets 3/6 = 1/2.
        let x = f64s(&[0.0, ln2, ln3], &[3], dev)
            .with_requires_grad(true)
            .unwrap();
        x.logcumsumexp(0)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        close(&x.grad().unwrap(), &[1.5, 1.0, 0.5]);
        // Of y0 - y2 (a negative upstream part): 1 - 1/6, -2/6, -3/6.
        x.zero_grad();
        let y = x.logcumsumexp(0).unwrap();
        let g = f64s(&[1.0, 0.0, -1.0], &[3], dev);
        y.backward_with(&g).unwrap();
        let got = x.grad().unwrap().to_f64_vec().unwrap();
        for (g, w) in got.iter().zip([5.0 / 6.0, -1.0 / 3.0, -0.5]) {
            assert!((g - w).abs() < 1e-15, "{got:?}");
        }
        // An element of -inf after a finite one has weight 0 everywhere.
        let x = f64s(&[0.0, -INF], &[2], dev)
            .with_requires_grad(true)
            .unwrap();
        x.logcumsumexp(0)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        close(&x.grad().unwrap(), &[2.0, 0.0]);
    }
}

#[test]
fn gradcheck_along_either_dim() {
    let values = [-1.7, 0.35, 2.6, -0.6, 1.3, 40.0];
    for dev in DEVICES {
        let x = f64s(&values, &[2, 3], dev);
        for dim in [0, 1, -1] {
            let report = gradcheck(
                |x| x[0].logcumsumexp(dim),
                std::slice::from_ref(&x),
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(
                report.checked > 0 && report.passed(),
                "{dim} on {dev}: {report}"
            );
        }
        let t = x.transpose(0, 1).unwrap();
        let report = gradcheck(|x| x[0].logcumsumexp(1), &[t], DEFAULT_STEP).unwrap();
        assert!(report.passed(), "transposed on {dev}: {report}");
    }
}
