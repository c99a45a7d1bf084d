//! `conv1d` by hand, as `F.conv1d`: stride, padding, dilation, groups,
//! bias, an unbatched input, the gradients of all three operands and the
//! typed errors (named `conv1d`), on the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera::tensor::{Conv1dParams, Tensor};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn t(values: &[f64], shape: &[usize], dev: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), dev).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

#[test]
fn convolves_by_hand() {
    for dev in DEVICES {
        let x = t(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1, 1, 5], dev);
        let w = t(&[1.0, 0.0, -1.0], &[1, 1, 3], dev);
        let b = t(&[10.0], &[1], dev);
        // x[i] - x[i + 2] + 10.
        let y = x.conv1d(&w, Some(&b), Conv1dParams::default()).unwrap();
        assert_eq!(y.dims(), &[1, 1, 3]);
        assert_eq!(vals(&y), [8.0, 8.0, 8.0]);
        // Stride 2, padding 1, dilation 2: taps at -1, 1, 3 and 1, 3, 5
        // (the first and last in the padding): -x[3] + 10, x[1] + 10.
        let p = Conv1dParams {
            stride: 2,
            padding: 1,
            dilation: 2,
            groups: 1,
        };
        let y = x.conv1d(&w, Some(&b), p).unwrap();
        assert_eq!(vals(&y), [6.0, 12.0]);
        // Two groups of one channel: [1, 1] over [1, 2, 3], [2, -1] over
        // [4, 5, 6].
        let x = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[1, 2, 3], dev);
        let w = t(&[1.0, 1.0, 2.0, -1.0], &[2, 1, 2], dev);
        let g = Conv1dParams {
            groups: 2,
            ..Conv1dParams::default()
        };
        let y = x.conv1d(&w, None, g).unwrap();
        assert_eq!(y.dims(), &[1, 2, 2]);
        assert_eq!(vals(&y), [3.0, 5.0, 3.0, 4.0]);
        // Unbatched [c, l] gives [c_out, l_out]; a transposed view.
        let u = x.squeeze(0).unwrap();
        let y = u.conv1d(&w, None, g).unwrap();
        assert_eq!(y.dims(), &[2, 2]);
        assert_eq!(vals(&y), [3.0, 5.0, 3.0, 4.0]);
        let xt = t(&[1.0, 4.0, 2.0, 5.0, 3.0, 6.0], &[1, 3, 2], dev);
        let y = xt.transpose(1, 2).unwrap().conv1d(&w, None, g).unwrap();
        assert_eq!(vals(&y), [3.0, 5.0, 3.0, 4.0]);
        // f32 too.
        let xf = Tensor::from_vec(vec![1.0f32, 2.0, 4.0], [1, 1, 3], dev).unwrap();
        let wf = Tensor::from_vec(vec![0.5f32, 0.25], [1, 1, 2], dev).unwrap();
        let y = xf.conv1d(&wf, None, Conv1dParams::default()).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [1.0, 2.0]);
    }
}

#[test]
fn gradients_by_hand_and_gradcheck() {
    for dev in DEVICES {
        let x = t(&[1.0, 2.0, 4.0], &[1, 1, 3], dev)
            .with_requires_grad(true)
            .unwrap();
        let w = t(&[2.0, 3.0], &[1, 1, 2], dev)
            .with_requires_grad(true)
            .unwrap();
        let b = t(&[0.5], &[1], dev).with_requires_grad(true).unwrap();
        let y = x.conv1d(&w, Some(&b), Conv1dParams::default()).unwrap();
        y.sum_all().unwrap().backward().unwrap();
        // Each x meets the taps that cover it; each tap the xs it slides over.
        assert_eq!(vals(&x.grad().unwrap()), [2.0, 5.0, 3.0]);
        assert_eq!(vals(&w.grad().unwrap()), [3.0, 6.0]);
        assert_eq!(vals(&b.grad().unwrap()), [2.0]);

        let xs = t(
            &(0..24).map(|v| (v as f64 * 0.41).sin()).collect::<Vec<_>>(),
            &[2, 4, 3],
            dev,
        );
        let ws = t(
            &(0..16).map(|v| (v as f64 * 0.77).cos()).collect::<Vec<_>>(),
            &[4, 2, 2],
            dev,
        );
        let bs = t(&[0.1, -0.2, 0.3, 0.4], &[4], dev);
        let p = Conv1dParams {
            stride: 2,
            padding: 2,
            dilation: 1,
            groups: 2,
        };
        let r = gradcheck(
            |v| v[0].conv1d(&v[1], Some(&v[2]), p),
            &[xs.clone(), ws, bs],
            DEFAULT_STEP,
        )
        .unwrap();
        assert!(r.passed(), "{dev}: {r}");
        let wd = t(&[0.3, -0.7, 1.1, 0.2, 0.9, -0.4], &[1, 2, 3], dev);
        let pd = Conv1dParams {
            dilation: 2,
            padding: 1,
            ..Conv1dParams::default()
        };
        let x2 = xs.narrow(1, 0, 2).unwrap();
        let r = gradcheck(|v| v[0].conv1d(&v[1], None, pd), &[x2, wd], DEFAULT_STEP).unwrap();
        assert!(r.passed(), "{dev}: {r}");
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = Tensor::zeros([1, 4, 6], DType::F32, dev).unwrap();
        let w = Tensor::zeros([2, 4, 3], DType::F32, dev).unwrap();
        let d = Conv1dParams::default();
        let xi = Tensor::zeros([1, 4, 6], DType::I64, dev).unwrap();
        let r = xi.conv1d(&w, None, d);
        assert!(
            matches!(r, Err(Error::UnsupportedDType { op: "conv1d", .. })),
            "{r:?}"
        );
        let w64 = Tensor::zeros([2, 4, 3], DType::F64, dev).unwrap();
        let r = x.conv1d(&w64, None, d);
        assert!(
            matches!(r, Err(Error::DTypeMismatch { op: "conv1d", .. })),
            "{r:?}"
        );
        let x4 = Tensor::zeros([1, 4, 1, 6], DType::F32, dev).unwrap();
        let r = x4.conv1d(&w, None, d);
        assert!(
            matches!(r, Err(Error::RankMismatch { op: "conv1d", .. })),
            "{r:?}"
        );
        let w4 = Tensor::zeros([2, 4, 1, 3], DType::F32, dev).unwrap();
        let r = x.conv1d(&w4, None, d);
        assert!(
            matches!(r, Err(Error::RankMismatch { op: "conv1d", .. })),
            "{r:?}"
        );
        for p in [
            Conv1dParams { stride: 0, ..d },
            Conv1dParams { dilation: 0, ..d },
            Conv1dParams { groups: 0, ..d },
            Conv1dParams { groups: 3, ..d },
        ] {
            let r = x.conv1d(&w, None, p);
            assert!(
                matches!(r, Err(Error::InvalidArgument { op: "conv1d", .. })),
                "{p:?}: {r:?}"
            );
        }
        let w0 = Tensor::zeros([2, 4, 0], DType::F32, dev).unwrap();
        let r = x.conv1d(&w0, None, d);
        assert!(
            matches!(r, Err(Error::InvalidArgument { op: "conv1d", .. })),
            "{r:?}"
        );
        let w3 = Tensor::zeros([2, 3, 3], DType::F32, dev).unwrap();
        let r = x.conv1d(&w3, None, d);
        assert!(
            matches!(r, Err(Error::ChannelMismatch { op: "conv1d", .. })),
            "{r:?}"
        );
        let b = Tensor::zeros([3], DType::F32, dev).unwrap();
        let r = x.conv1d(&w, Some(&b), d);
        assert!(
            matches!(r, Err(Error::ShapeMismatch { op: "conv1d", .. })),
            "{r:?}"
        );
        let b2 = Tensor::zeros([2, 1], DType::F32, dev).unwrap();
        let r = x.conv1d(&w, Some(&b2), d);
        assert!(
            matches!(r, Err(Error::RankMismatch { op: "conv1d", .. })),
            "{r:?}"
        );
        let wl = Tensor::zeros([2, 4, 7], DType::F32, dev).unwrap();
        let r = x.conv1d(&wl, None, d);
        assert!(
            matches!(r, Err(Error::WindowTooLarge { op: "conv1d", .. })),
            "{r:?}"
        );
        let r = x.conv1d(&w, None, Conv1dParams { dilation: 3, ..d });
        assert!(
            matches!(r, Err(Error::WindowTooLarge { op: "conv1d", .. })),
            "{r:?}"
        );
        // Padding makes room; a huge padding is a typed error.
        assert!(
            x.conv1d(&wl, None, Conv1dParams { padding: 1, ..d })
                .is_ok()
        );
        let r = x.conv1d(
            &w,
            None,
            Conv1dParams {
                padding: 1 << 60,
                ..d
            },
        );
        assert!(r.is_err(), "{r:?}");
    }
    let x = Tensor::zeros([1, 4, 6], DType::F32, Device::Reference).unwrap();
    let w = Tensor::zeros([2, 4, 3], DType::F32, Device::Cpu).unwrap();
    let r = x.conv1d(&w, None, Conv1dParams::default());
    assert!(
        matches!(r, Err(Error::DeviceMismatch { op: "conv1d", .. })),
        "{r:?}"
    );
}
