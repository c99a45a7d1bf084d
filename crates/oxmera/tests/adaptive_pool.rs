//! Adaptive pooling by hand, as `F.adaptive_avg_pool2d` and
//! `F.adaptive_max_pool2d`: PyTorch's windows (`floor(i·in/out)` to
//! `ceil((i+1)·in/out)`, uneven and overlapping), unbatched input, the
//! gradients (spread over each window; to the first maximum) and the
//! typed errors, on the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera::tensor::{Tensor, adaptive_window};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn t(values: &[f64], shape: &[usize], dev: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), dev).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

#[test]
fn windows_follow_pytorch() {
    assert_eq!(adaptive_window(0, 5, 3), (0, 2));
    assert_eq!(adaptive_window(1, 5, 3), (1, 4));
    assert_eq!(adaptive_window(2, 5, 3), (3, 5));
    assert_eq!(adaptive_window(1, 2, 3), (0, 2));
    assert_eq!(adaptive_window(3, 8, 4), (6, 8));
}

#[test]
fn pools_by_hand() {
    for dev in DEVICES {
        let nine: Vec<f64> = (1..=9).map(f64::from).collect();
        let x = t(&nine, &[1, 1, 3, 3], dev);
        // Rows and columns 0..2 and 1..3: overlapping 2x2 windows.
        let y = x.adaptive_avg_pool2d((2, 2)).unwrap();
        assert_eq!(y.dims(), &[1, 1, 2, 2]);
        assert_eq!(vals(&y), [3.0, 4.0, 6.0, 7.0]);
        assert_eq!(
            vals(&x.adaptive_max_pool2d((2, 2)).unwrap()),
            [5.0, 6.0, 8.0, 9.0]
        );
        assert_eq!(vals(&x.adaptive_avg_pool2d((1, 1)).unwrap()), [5.0]);
        assert_eq!(vals(&x.adaptive_max_pool2d((1, 1)).unwrap()), [9.0]);
        // Five columns into three: [1, 2], [2, 3, 4], [4, 5].
        let r = t(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1, 1, 1, 5], dev);
        assert_eq!(
            vals(&r.adaptive_avg_pool2d((1, 3)).unwrap()),
            [1.5, 3.0, 4.5]
        );
        assert_eq!(
            vals(&r.adaptive_max_pool2d((1, 3)).unwrap()),
            [2.0, 4.0, 5.0]
        );
        // Two columns into three: [1], [1, 2], [2].
        let two = t(&[1.0, 2.0], &[1, 1, 1, 2], dev);
        assert_eq!(
            vals(&two.adaptive_avg_pool2d((1, 3)).unwrap()),
            [1.0, 1.5, 2.0]
        );
        // Unbatched [c, h, w] gives [c, oh, ow]; a transposed view.
        let u = t(&nine, &[1, 3, 3], dev);
        let y = u.adaptive_avg_pool2d((2, 2)).unwrap();
        assert_eq!(y.dims(), &[1, 2, 2]);
        assert_eq!(vals(&y), [3.0, 4.0, 6.0, 7.0]);
        let y = x
            .transpose(2, 3)
            .unwrap()
            .adaptive_max_pool2d((2, 2))
            .unwrap();
        assert_eq!(vals(&y), [5.0, 8.0, 6.0, 9.0]);
        // NaN reaches only the windows that hold it; -inf is a value.
        let s = t(&[f64::NAN, 1.0, f64::NEG_INFINITY, 2.0], &[1, 1, 1, 4], dev);
        let m = vals(&s.adaptive_max_pool2d((1, 2)).unwrap());
        assert!(m[0].is_nan());
        assert_eq!(m[1], 2.0);
        let a = vals(&s.adaptive_avg_pool2d((1, 2)).unwrap());
        assert!(a[0].is_nan());
        assert_eq!(a[1], f64::NEG_INFINITY);
        // f16 averages in f32 and rounds once: [2048, 2050, 2050, 2050]
        // sums to 8198, / 4 = 2049.5, which rounds to 2050; summed in f16
        // (spacing 4, then 8) it would be 8192 / 4 = 2048.
        let h = Tensor::from_vec(vec![2048.0f32, 2050.0, 2050.0, 2050.0], [1, 1, 2, 2], dev)
            .unwrap()
            .to_dtype(DType::F16)
            .unwrap();
        let y = h
            .adaptive_avg_pool2d((1, 1))
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [2050.0]);
        // An empty batch.
        let e = Tensor::zeros([0, 2, 3, 3], DType::F32, dev).unwrap();
        assert_eq!(e.adaptive_max_pool2d((2, 2)).unwrap().dims(), &[0, 2, 2, 2]);
    }
}

#[test]
fn gradients_by_hand_and_gradcheck() {
    for dev in DEVICES {
        let nine: Vec<f64> = (1..=9).map(f64::from).collect();
        let x = t(&nine, &[1, 1, 3, 3], dev)
            .with_requires_grad(true)
            .unwrap();
        x.adaptive_avg_pool2d((2, 2))
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        // A quarter from each window that holds the element.
        #[rustfmt::skip]
        assert_eq!(vals(&x.grad().unwrap()), [
            0.25, 0.5, 0.25,
            0.5,  1.0, 0.5,
            0.25, 0.5, 0.25,
        ]);
        x.zero_grad();
        x.adaptive_max_pool2d((2, 2))
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert_eq!(
            vals(&x.grad().unwrap()),
            [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
        );
        // Ties: the first maximum of each window in row-major order.
        let ones = t(&[1.0; 9], &[1, 1, 3, 3], dev)
            .with_requires_grad(true)
            .unwrap();
        ones.adaptive_max_pool2d((2, 2))
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert_eq!(
            vals(&ones.grad().unwrap()),
            [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
        );

        let m = t(
            &(0..70)
                .map(|v| (v as f64 * 0.61).sin() * (1.0 + v as f64 / 70.0))
                .collect::<Vec<_>>(),
            &[1, 2, 7, 5],
            dev,
        );
        for size in [(3, 4), (1, 1), (9, 2)] {
            let r = gradcheck(
                |v| v[0].adaptive_avg_pool2d(size),
                std::slice::from_ref(&m),
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(r.passed(), "avg {size:?} on {dev}: {r}");
            let r = gradcheck(
                |v| v[0].adaptive_max_pool2d(size),
                std::slice::from_ref(&m),
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(r.passed(), "max {size:?} on {dev}: {r}");
        }
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = Tensor::zeros([1, 2, 4, 4], DType::F32, dev).unwrap();
        type Pool = fn(&Tensor, (usize, usize)) -> Result<Tensor>;
        let pools: [Pool; 2] = [Tensor::adaptive_avg_pool2d, Tensor::adaptive_max_pool2d];
        for pool in pools {
            let i = Tensor::zeros([1, 2, 4, 4], DType::I64, dev).unwrap();
            let r = pool(&i, (2, 2));
            assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
            for shape in [&[4, 4][..], &[1, 1, 2, 4, 4]] {
                let r = pool(&Tensor::zeros(shape, DType::F32, dev).unwrap(), (2, 2));
                assert!(matches!(r, Err(Error::RankMismatch { .. })), "{r:?}");
            }
            for size in [(0, 2), (2, 0)] {
                let r = pool(&x, size);
                assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
            }
            for shape in [[1, 0, 4, 4], [1, 2, 0, 4], [1, 2, 4, 0]] {
                let r = pool(&Tensor::zeros(shape, DType::F32, dev).unwrap(), (2, 2));
                assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
            }
            // An output past memory is a typed error, not an abort.
            let r = pool(&x, (1 << 40, 1 << 20));
            assert!(r.is_err(), "{r:?}");
        }
    }
}
