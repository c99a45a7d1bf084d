//! Pooling with PyTorch's `dilation` and `ceil_mode` by hand
//! (`max_pool2d_with`, `avg_pool2d_with`): the extra partial window
//! `ceil_mode` makes and the one it must not, the clipped divisor of the
//! mean, dilated taps, the gradients (to the first maximum; spread over
//! each window by its divisor), bit-for-bit agreement with the plain ops
//! where the windows are the same, and the typed errors — on the
//! reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera::tensor::{Pool2dOptions, Pool2dParams, Tensor};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn t(values: &[f64], shape: &[usize], dev: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), dev).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn grad_of(x: &Tensor, f: impl Fn(&Tensor) -> Result<Tensor>) -> Vec<f64> {
    x.zero_grad();
    f(x).unwrap().sum_all().unwrap().backward().unwrap();
    vals(&x.grad().unwrap())
}

#[test]
fn ceil_mode_by_hand() {
    for dev in DEVICES {
        let nine: Vec<f64> = (1..=9).map(f64::from).collect();
        let x = t(&nine, &[1, 1, 3, 3], dev);
        let o = Pool2dOptions::new((2, 2)).ceil_mode(true);
        // Rows and columns {0, 1} and {2}: an extra partial window each way.
        let y = x.max_pool2d_with(o).unwrap();
        assert_eq!(y.dims(), &[1, 1, 2, 2]);
        assert_eq!(vals(&y), [5.0, 6.0, 8.0, 9.0]);
        // The partial windows divide by their part: [3, 6] / 2, [9] / 1.
        assert_eq!(vals(&x.avg_pool2d_with(o).unwrap()), [3.0, 4.5, 7.5, 9.0]);
        assert_eq!(vals(&x.max_pool2d_with(o.ceil_mode(false)).unwrap()), [5.0]);

        // Width 4, kernel 3, stride 2, padding 1: ceil_mode's third window
        // starts at input 3 and reaches the right padding and one past it;
        // its divisor is 2 (clipped at the padded border).
        let r = t(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 1, 4], dev);
        let o = Pool2dOptions::new((1, 3))
            .stride((1, 2))
            .padding((0, 1))
            .ceil_mode(true);
        assert_eq!(vals(&r.avg_pool2d_with(o).unwrap()), [1.0, 3.0, 2.0]);
        assert_eq!(vals(&r.max_pool2d_with(o).unwrap()), [2.0, 4.0, 4.0]);

        // Width 5, kernel 2, stride 2, padding 1: ceil would give a fourth
        // window starting at 6 = in + pad, in the right padding: dropped.
        let f = t(&[1.0, 5.0, 2.0, 4.0, 3.0], &[1, 1, 1, 5], dev);
        let o = Pool2dOptions::new((1, 2))
            .stride((1, 2))
            .padding((0, 1))
            .ceil_mode(true);
        let y = f.max_pool2d_with(o).unwrap();
        assert_eq!(y.dims(), &[1, 1, 1, 3]);
        assert_eq!(vals(&y), [1.0, 5.0, 4.0]);
        assert_eq!(vals(&f.avg_pool2d_with(o).unwrap()), [0.5, 3.5, 3.5]);
    }
}

#[test]
fn dilation_by_hand() {
    for dev in DEVICES {
        let f = t(&[1.0, 5.0, 2.0, 4.0, 3.0], &[1, 1, 1, 5], dev);
        let o = Pool2dOptions::new((1, 2)).stride((1, 1)).dilation((1, 2));
        // Taps 2 apart: [1, 2], [5, 4], [2, 3].
        assert_eq!(vals(&f.max_pool2d_with(o).unwrap()), [2.0, 5.0, 3.0]);

        let sixteen: Vec<f64> = (1..=16).map(f64::from).collect();
        let x = t(&sixteen, &[1, 1, 4, 4], dev)
            .with_requires_grad(true)
            .unwrap();
        let o = Pool2dOptions::new((2, 2)).stride((1, 1)).dilation((2, 2));
        assert_eq!(
            vals(&x.max_pool2d_with(o).unwrap()),
            [11.0, 12.0, 15.0, 16.0]
        );
        let mut want = vec![0.0; 16];
        for i in [10, 11, 14, 15] {
            want[i] = 1.0;
        }
        assert_eq!(grad_of(&x, |x| x.max_pool2d_with(o)), want);

        // Dilation with ceil_mode: width 6, kernel 2, dilation 2, stride
        // 2: span 3, floor(3 / 2) + 1 = 2 windows, ceil(3 / 2) + 1 = 3,
        // the last reading input 4 and −∞.
        let six = t(&[1.0, 2.0, 3.0, 9.0, 5.0, 6.0], &[1, 1, 1, 6], dev);
        let o = Pool2dOptions::new((1, 2)).stride((1, 2)).dilation((1, 2));
        assert_eq!(vals(&six.max_pool2d_with(o).unwrap()), [3.0, 5.0]);
        let y = six.max_pool2d_with(o.ceil_mode(true)).unwrap();
        assert_eq!(vals(&y), [3.0, 5.0, 5.0]);
    }
}

#[test]
fn gradients_by_hand_and_gradcheck() {
    for dev in DEVICES {
        // Ties: the first maximum of each window in row-major tap order.
        let ones = t(&[1.0; 9], &[1, 1, 3, 3], dev)
            .with_requires_grad(true)
            .unwrap();
        let o = Pool2dOptions::new((2, 2)).ceil_mode(true);
        assert_eq!(
            grad_of(&ones, |x| x.max_pool2d_with(o)),
            [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]
        );
        // The mean's: a quarter, a half and a whole from the partial windows.
        #[rustfmt::skip]
        assert_eq!(grad_of(&ones, |x| x.avg_pool2d_with(o)), [
            0.25, 0.25, 0.5,
            0.25, 0.25, 0.5,
            0.5,  0.5,  1.0,
        ]);

        let m = t(
            &(0..70)
                .map(|v| (v as f64 * 0.61).sin() * (1.0 + v as f64 / 70.0))
                .collect::<Vec<_>>(),
            &[1, 2, 7, 5],
            dev,
        );
        let cases = [
            Pool2dOptions::new((2, 2)).ceil_mode(true),
            Pool2dOptions::new((3, 2))
                .stride((2, 2))
                .padding((1, 1))
                .ceil_mode(true),
            Pool2dOptions::new((2, 3)).stride((1, 2)).dilation((2, 1)),
            Pool2dOptions::new((3, 3))
                .stride((2, 1))
                .padding((1, 0))
                .dilation((2, 2))
                .ceil_mode(true),
        ];
        for o in cases {
            let r = gradcheck(
                |v| v[0].max_pool2d_with(o),
                std::slice::from_ref(&m),
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(r.passed(), "max {o:?} on {dev}: {r}");
            if o.dilation == (1, 1) {
                let r = gradcheck(
                    |v| v[0].avg_pool2d_with(o),
                    std::slice::from_ref(&m),
                    DEFAULT_STEP,
                )
                .unwrap();
                assert!(r.passed(), "avg {o:?} on {dev}: {r}");
            }
        }
    }
}

#[test]
fn same_windows_are_the_plain_ops_bit_for_bit() {
    for dev in DEVICES {
        let v: Vec<f32> = (0..2 * 3 * 7 * 6)
            .map(|i| ((i as f32) * 0.37).sin() * 3.0)
            .collect();
        let x = Tensor::from_vec(v, [2, 3, 7, 6], dev).unwrap();
        let params = [
            Pool2dParams::new((2, 2)),
            Pool2dParams {
                kernel: (3, 3),
                stride: (2, 2),
                padding: (1, 1),
            },
            Pool2dParams {
                kernel: (3, 2),
                stride: (1, 2),
                padding: (1, 0),
            },
        ];
        for p in params {
            let o = Pool2dOptions::from(p);
            let bits = |t: Tensor| -> Vec<u32> {
                t.to_vec::<f32>()
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect()
            };
            assert_eq!(
                bits(x.max_pool2d_with(o).unwrap()),
                bits(x.max_pool2d(p).unwrap())
            );
            assert_eq!(
                bits(x.avg_pool2d_with(o).unwrap()),
                bits(x.avg_pool2d(p).unwrap())
            );
        }
        // A NaN in a window makes it NaN, as max_pool2d's.
        let n = t(&[1.0, f64::NAN, 3.0], &[1, 1, 1, 3], dev);
        let y = n.max_pool2d_with(Pool2dOptions::new((1, 2)).ceil_mode(true));
        let y = vals(&y.unwrap());
        assert!(y[0].is_nan() && y[1] == 3.0, "{y:?}");
        let n = t(&[f64::NAN, 1.0, 3.0], &[1, 1, 1, 3], dev);
        let y = n.max_pool2d_with(Pool2dOptions::new((1, 2)).stride((1, 1)).dilation((1, 2)));
        assert!(vals(&y.unwrap())[0].is_nan());
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = Tensor::zeros([1, 2, 4, 4], DType::F32, dev).unwrap();
        let o = Pool2dOptions::new((2, 2));
        let r = x.avg_pool2d_with(o.dilation((2, 1)));
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        for bad in [
            o.dilation((0, 1)),
            o.stride((1, 0)),
            Pool2dOptions::new((0, 2)),
            o.padding((2, 0)),
        ] {
            let r = x.max_pool2d_with(bad);
            assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        }
        let i = Tensor::zeros([1, 2, 4, 4], DType::I64, dev).unwrap();
        let r = i.max_pool2d_with(o.ceil_mode(true));
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
        let r = Tensor::zeros([2, 4, 4], DType::F32, dev)
            .unwrap()
            .max_pool2d_with(o);
        assert!(matches!(r, Err(Error::RankMismatch { .. })), "{r:?}");
        let r = x.max_pool2d_with(o.dilation((4, 1)));
        assert!(matches!(r, Err(Error::WindowTooLarge { .. })), "{r:?}");
        let r = x.max_pool2d_with(o.dilation((usize::MAX, 1)).ceil_mode(true));
        assert!(r.is_err(), "{r:?}");
        // An empty batch keeps its shape.
        let e = Tensor::zeros([0, 2, 4, 4], DType::F32, dev).unwrap();
        let y = e.max_pool2d_with(o.dilation((2, 1))).unwrap();
        assert_eq!(y.dims(), &[0, 2, 1, 2]);
    }
}
