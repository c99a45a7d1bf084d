//! `interpolate` by hand, as `F.interpolate` on NCHW input: nearest
//! (PyTorch's `floorf(i·scale)`, the scale factor itself when given) and
//! bilinear with and without `align_corners`, their gradients, and the
//! typed errors, on the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera::tensor::{InterpolateMode, Tensor};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];
const NEAREST: InterpolateMode = InterpolateMode::Nearest;
const LINEAR: InterpolateMode = InterpolateMode::Bilinear {
    align_corners: false,
};
const CORNERS: InterpolateMode = InterpolateMode::Bilinear {
    align_corners: true,
};

fn t(values: &[f64], shape: &[usize], dev: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), dev).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

#[test]
fn resamples_by_hand() {
    for dev in DEVICES {
        let x = t(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2], dev);
        // F.interpolate(x, size=4, mode='bilinear'), PyTorch's output.
        let y = x.interpolate((4, 4), LINEAR).unwrap();
        assert_eq!(y.dims(), &[1, 1, 4, 4]);
        #[rustfmt::skip]
        assert_eq!(vals(&y), [
            1.0, 1.25, 1.75, 2.0,
            1.5, 1.75, 2.25, 2.5,
            2.5, 2.75, 3.25, 3.5,
            3.0, 3.25, 3.75, 4.0,
        ]);
        // The same by scale factor 2.
        assert_eq!(
            vals(&x.interpolate_scale((2.0, 2.0), LINEAR).unwrap()),
            vals(&y)
        );
        // align_corners: the corners stay, the middle is their mean.
        let y = x.interpolate((3, 3), CORNERS).unwrap();
        assert_eq!(vals(&y), [1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0]);
        // Nearest: twice the size copies each twice; 2 to 3 takes
        // floorf(i·2/3) = 0, 0, 1.
        let y = x.interpolate((4, 3), NEAREST).unwrap();
        #[rustfmt::skip]
        assert_eq!(vals(&y), [
            1.0, 1.0, 2.0,
            1.0, 1.0, 2.0,
            3.0, 3.0, 4.0,
            3.0, 3.0, 4.0,
        ]);
        // Five columns: to size 3 the sources are floorf(i·5/3) = 0, 1, 3;
        // by scale 0.7 the output is floor(3.5) = 3 wide but the sources are
        // floorf(i/0.7) = 0, 1, 2, as PyTorch's.
        let r = t(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1, 1, 1, 5], dev);
        assert_eq!(
            vals(&r.interpolate((1, 3), NEAREST).unwrap()),
            [1.0, 2.0, 4.0]
        );
        let y = r.interpolate_scale((1.0, 0.7), NEAREST).unwrap();
        assert_eq!(y.dims(), &[1, 1, 1, 3]);
        assert_eq!(vals(&y), [1.0, 2.0, 3.0]);
        // Bilinear down to 2 of 5: sources (i + 0.5)·2.5 - 0.5 = 0.75 and
        // 3.25.
        let y = r.interpolate((1, 2), LINEAR).unwrap();
        assert_eq!(vals(&y), [1.75, 4.25]);
        // align_corners to a single output: the first element.
        assert_eq!(vals(&r.interpolate((1, 1), CORNERS).unwrap()), [1.0]);
        // Every dtype for nearest; f32 bilinear; a transposed view.
        let b = Tensor::from_vec(vec![true, false], [1, 1, 1, 2], dev).unwrap();
        let y = b.interpolate((2, 4), NEAREST).unwrap();
        assert_eq!(
            y.to_vec::<bool>().unwrap(),
            [true, true, false, false, true, true, false, false]
        );
        let f = Tensor::from_vec(vec![1.0f32, 3.0], [1, 1, 1, 2], dev).unwrap();
        let y = f.interpolate((1, 4), LINEAR).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [1.0, 1.5, 2.5, 3.0]);
        let y = x
            .transpose(2, 3)
            .unwrap()
            .interpolate((3, 3), CORNERS)
            .unwrap();
        assert_eq!(vals(&y), [1.0, 2.0, 3.0, 1.5, 2.5, 3.5, 2.0, 3.0, 4.0]);
        // NaN reaches the outputs whose sources hold it, even at weight 0.
        let s = t(&[f64::NAN, 1.0, 2.0, 3.0], &[1, 1, 1, 4], dev);
        let y = vals(&s.interpolate((1, 2), LINEAR).unwrap());
        assert!(y[0].is_nan());
        assert_eq!(y[1], 2.5);
        // An empty batch.
        let e = Tensor::zeros([0, 3, 2, 2], DType::F32, dev).unwrap();
        assert_eq!(e.interpolate((5, 1), LINEAR).unwrap().dims(), &[0, 3, 5, 1]);
    }
}

#[test]
fn gradients_by_hand_and_gradcheck() {
    for dev in DEVICES {
        let x = t(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2], dev)
            .with_requires_grad(true)
            .unwrap();
        // Output (0, 1) of the 4x4 bilinear is 0.75·x00 + 0.25·x01; output
        // (1, 1) weighs rows and columns 0.75 / 0.25 each.
        for (at, want) in [
            (1, [0.75, 0.25, 0.0, 0.0]),
            (5, [0.5625, 0.1875, 0.1875, 0.0625]),
        ] {
            x.zero_grad();
            let mut w = vec![0.0; 16];
            w[at] = 1.0;
            let w = t(&w, &[1, 1, 4, 4], dev);
            let y = x.interpolate((4, 4), LINEAR).unwrap();
            y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
            assert_eq!(vals(&x.grad().unwrap()), want);
        }
        // Nearest 2x2 to 3x3: sources 0, 0, 1 each way.
        x.zero_grad();
        let y = x.interpolate((3, 3), NEAREST).unwrap();
        y.sum_all().unwrap().backward().unwrap();
        assert_eq!(vals(&x.grad().unwrap()), [4.0, 2.0, 2.0, 1.0]);

        let m = t(
            &(0..30).map(|v| (v as f64 * 0.53).sin()).collect::<Vec<_>>(),
            &[1, 2, 3, 5],
            dev,
        );
        for mode in [NEAREST, LINEAR, CORNERS] {
            for size in [(5, 8), (2, 3)] {
                let r = gradcheck(
                    |v| v[0].interpolate(size, mode),
                    std::slice::from_ref(&m),
                    DEFAULT_STEP,
                )
                .unwrap();
                assert!(r.passed(), "{mode:?} {size:?} on {dev}: {r}");
            }
            let r = gradcheck(
                |v| v[0].interpolate_scale((1.7, 0.6), mode),
                std::slice::from_ref(&m),
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(r.passed(), "{mode:?} by scale on {dev}: {r}");
        }
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = Tensor::zeros([1, 2, 3, 3], DType::F32, dev).unwrap();
        let bad = |r: Result<Tensor>| {
            assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        };
        for mode in [NEAREST, LINEAR, CORNERS] {
            let r = Tensor::zeros([2, 3, 3], DType::F32, dev)
                .unwrap()
                .interpolate((2, 2), mode);
            assert!(matches!(r, Err(Error::RankMismatch { .. })), "{r:?}");
            let r = Tensor::zeros([1, 1, 2, 3, 3], DType::F32, dev)
                .unwrap()
                .interpolate_scale((2.0, 2.0), mode);
            assert!(matches!(r, Err(Error::RankMismatch { .. })), "{r:?}");
            bad(x.interpolate((0, 2), mode));
            bad(x.interpolate((2, 0), mode));
            for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
                bad(x.interpolate_scale((s, 1.0), mode));
                bad(x.interpolate_scale((1.0, s), mode));
            }
            // A scale that leaves no output, or one past any size.
            bad(x.interpolate_scale((0.2, 1.0), mode));
            bad(x.interpolate_scale((1e300, 1.0), mode));
            for shape in [[1, 2, 0, 3], [1, 2, 3, 0], [1, 0, 3, 3]] {
                bad(Tensor::zeros(shape, DType::F32, dev)
                    .unwrap()
                    .interpolate((2, 2), mode));
            }
            let r = x.interpolate((1 << 40, 1 << 30), mode);
            assert!(r.is_err(), "{r:?}");
        }
        let i = Tensor::zeros([1, 1, 2, 2], DType::I64, dev).unwrap();
        assert!(i.interpolate((3, 3), NEAREST).is_ok());
        let r = i.interpolate((3, 3), LINEAR);
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
    }
}
