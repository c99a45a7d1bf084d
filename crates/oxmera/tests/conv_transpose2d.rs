//! `conv_transpose2d` by hand, as `F.conv_transpose2d`: each input pixel
//! spreads the kernel over the output (stride, padding, output_padding,
//! dilation, groups, bias), it is the adjoint of `conv2d` (equal to
//! conv2d's input gradient), its own gradients, and the typed errors, on
//! the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera::tensor::{Conv2dParams, ConvTranspose2dParams as P, Tensor};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn t(values: &[f64], shape: &[usize], dev: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), dev).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn wave(n: usize, f: f64, shape: &[usize], dev: Device) -> Tensor {
    t(
        &(0..n).map(|v| (v as f64 * f).sin()).collect::<Vec<_>>(),
        shape,
        dev,
    )
}

#[test]
fn spreads_the_kernel_by_hand() {
    for dev in DEVICES {
        let d = P::default();
        // One pixel gives the kernel itself (not flipped).
        let one = t(&[1.0], &[1, 1, 1, 1], dev);
        let k = t(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2], dev);
        assert_eq!(
            vals(&one.conv_transpose2d(&k, None, d).unwrap()),
            [1.0, 2.0, 3.0, 4.0]
        );
        // [1, 10] spreading [1, 2]: 1, 2 + 10, 20.
        let x = t(&[1.0, 10.0], &[1, 1, 1, 2], dev);
        let w = t(&[1.0, 2.0], &[1, 1, 1, 2], dev);
        assert_eq!(
            vals(&x.conv_transpose2d(&w, None, d).unwrap()),
            [1.0, 12.0, 20.0]
        );
        // Dilation 2 puts a gap between the taps.
        let p = P {
            dilation: (1, 2),
            ..d
        };
        assert_eq!(
            vals(&one.conv_transpose2d(&w, None, p).unwrap()),
            [1.0, 0.0, 2.0]
        );
        // A 2x2 of ones over [[1, 2], [3, 4]]: stride 1 overlaps, stride 2
        // tiles, padding 1 crops a border, output_padding adds a row and a
        // column (only the bias lands there).
        let x = t(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2], dev);
        let ones = t(&[1.0; 4], &[1, 1, 2, 2], dev);
        let y = x.conv_transpose2d(&ones, None, d).unwrap();
        assert_eq!(y.dims(), &[1, 1, 3, 3]);
        assert_eq!(vals(&y), [1.0, 3.0, 2.0, 4.0, 10.0, 6.0, 3.0, 7.0, 4.0]);
        let p = P {
            padding: (1, 1),
            ..d
        };
        assert_eq!(vals(&x.conv_transpose2d(&ones, None, p).unwrap()), [10.0]);
        let p = P {
            stride: (2, 2),
            ..d
        };
        #[rustfmt::skip]
        assert_eq!(vals(&x.conv_transpose2d(&ones, None, p).unwrap()), [
            1.0, 1.0, 2.0, 2.0,
            1.0, 1.0, 2.0, 2.0,
            3.0, 3.0, 4.0, 4.0,
            3.0, 3.0, 4.0, 4.0,
        ]);
        let b = t(&[0.5], &[1], dev);
        let p = P {
            stride: (2, 2),
            output_padding: (1, 0),
            ..d
        };
        let y = x.conv_transpose2d(&ones, Some(&b), p).unwrap();
        assert_eq!(y.dims(), &[1, 1, 5, 4]);
        assert_eq!(vals(&y)[16..], [0.5; 4]);
        assert_eq!(vals(&y)[..4], [1.5, 1.5, 2.5, 2.5]);
        // Channels: two inputs into one output add; two groups keep apart.
        let x2 = t(&[1.0, 10.0], &[1, 2, 1, 1], dev);
        let w2 = t(&[3.0, 5.0], &[2, 1, 1, 1], dev);
        assert_eq!(vals(&x2.conv_transpose2d(&w2, None, d).unwrap()), [53.0]);
        let g = P { groups: 2, ..d };
        let y = x2.conv_transpose2d(&w2, None, g).unwrap();
        assert_eq!(y.dims(), &[1, 2, 1, 1]);
        assert_eq!(vals(&y), [3.0, 50.0]);
        // Unbatched [c, h, w]; f32.
        let y = x2
            .squeeze(0)
            .unwrap()
            .conv_transpose2d(&w2, None, g)
            .unwrap();
        assert_eq!(y.dims(), &[2, 1, 1]);
        let xf = Tensor::from_vec(vec![1.0f32, 10.0], [1, 1, 1, 2], dev).unwrap();
        let wf = Tensor::from_vec(vec![1.0f32, 2.0], [1, 1, 1, 2], dev).unwrap();
        let y = xf.conv_transpose2d(&wf, None, d).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [1.0, 12.0, 20.0]);
    }
}

#[test]
fn is_conv2d_input_gradient() {
    for dev in DEVICES {
        for (s, p, dil, groups) in [
            ((1, 1), (0, 0), (1, 1), 1),
            ((2, 3), (1, 0), (1, 2), 2),
            ((3, 2), (2, 1), (2, 1), 1),
        ] {
            let z = wave(2 * 4 * 7 * 6, 0.37, &[2, 4, 7, 6], dev)
                .with_requires_grad(true)
                .unwrap();
            let w = wave(6 * 4 / groups * 3 * 2, 0.91, &[6, 4 / groups, 3, 2], dev);
            let cp = Conv2dParams {
                stride: s,
                padding: p,
                dilation: dil,
                groups,
            };
            let y = z.conv2d(&w, None, cp).unwrap();
            let g = wave(y.numel(), 0.53, y.dims(), dev);
            y.mul(&g).unwrap().sum_all().unwrap().backward().unwrap();
            // The output padding that recovers z's size.
            let (yh, yw) = (y.dims()[2], y.dims()[3]);
            let base = |n: usize, s: usize, p: usize, d: usize, k: usize| {
                (n - 1) * s + d * (k - 1) + 1 - 2 * p
            };
            let op = (
                7 - base(yh, s.0, p.0, dil.0, 3),
                6 - base(yw, s.1, p.1, dil.1, 2),
            );
            let tp = P {
                stride: s,
                padding: p,
                output_padding: op,
                dilation: dil,
                groups,
            };
            let back = g.conv_transpose2d(&w, None, tp).unwrap();
            assert_eq!(back.dims(), z.dims());
            let (a, b) = (vals(&back), vals(&z.grad().unwrap()));
            for (a, b) in a.iter().zip(&b) {
                assert!(
                    (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                    "{s:?} {p:?}: {a} vs {b}"
                );
            }
        }
    }
}

#[test]
fn gradients_pass_gradcheck() {
    for dev in DEVICES {
        let x = wave(2 * 4 * 3 * 2, 0.41, &[2, 4, 3, 2], dev);
        let w = wave(4 * 3 * 2 * 3, 0.77, &[4, 3, 2, 3], dev);
        let b = t(&[0.1, -0.2, 0.3, 0.4, -0.5, 0.6], &[6], dev);
        let p = P {
            stride: (2, 1),
            padding: (1, 1),
            output_padding: (1, 0),
            dilation: (1, 2),
            groups: 2,
        };
        let r = gradcheck(
            |v| v[0].conv_transpose2d(&v[1], Some(&v[2]), p),
            &[x, w, b],
            DEFAULT_STEP,
        )
        .unwrap();
        assert!(r.passed(), "{dev}: {r}");
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = Tensor::zeros([1, 4, 3, 3], DType::F32, dev).unwrap();
        let w = Tensor::zeros([4, 2, 2, 2], DType::F32, dev).unwrap();
        let d = P::default();
        let named = |r: &Result<Tensor>| match r {
            Err(e) => e.op() == Some("conv_transpose2d"),
            Ok(_) => false,
        };
        let i = Tensor::zeros([1, 4, 3, 3], DType::I64, dev).unwrap();
        let r = i.conv_transpose2d(&w, None, d);
        assert!(
            matches!(r, Err(Error::UnsupportedDType { .. })) && named(&r),
            "{r:?}"
        );
        let w64 = Tensor::zeros([4, 2, 2, 2], DType::F64, dev).unwrap();
        let r = x.conv_transpose2d(&w64, None, d);
        assert!(
            matches!(r, Err(Error::DTypeMismatch { .. })) && named(&r),
            "{r:?}"
        );
        for (xs, ws) in [
            (&[4, 3, 3][..], &[4, 2, 2][..]),
            (&[1, 1, 4, 3, 3], &[4, 2, 2, 2]),
        ] {
            let xx = Tensor::zeros(xs, DType::F32, dev).unwrap();
            let ww = Tensor::zeros(ws, DType::F32, dev).unwrap();
            let r = xx.conv_transpose2d(&ww, None, d);
            assert!(
                matches!(r, Err(Error::RankMismatch { .. })) && named(&r),
                "{r:?}"
            );
        }
        for p in [
            P {
                stride: (0, 1),
                ..d
            },
            P {
                dilation: (1, 0),
                ..d
            },
            P { groups: 0, ..d },
            P { groups: 3, ..d },
            P {
                output_padding: (1, 0),
                ..d
            },
            P {
                stride: (2, 2),
                output_padding: (0, 2),
                ..d
            },
            P {
                padding: (2, 0),
                ..d
            },
        ] {
            let r = x.conv_transpose2d(&w, None, p);
            assert!(
                matches!(r, Err(Error::InvalidArgument { .. })) && named(&r),
                "{p:?}: {r:?}"
            );
        }
        // output_padding below the dilation is allowed.
        let p = P {
            dilation: (2, 2),
            output_padding: (1, 1),
            ..d
        };
        assert_eq!(
            x.conv_transpose2d(&w, None, p).unwrap().dims(),
            &[1, 2, 6, 6]
        );
        let w3 = Tensor::zeros([3, 2, 2, 2], DType::F32, dev).unwrap();
        let r = x.conv_transpose2d(&w3, None, d);
        assert!(
            matches!(r, Err(Error::ChannelMismatch { .. })) && named(&r),
            "{r:?}"
        );
        let b = Tensor::zeros([4], DType::F32, dev).unwrap();
        let r = x.conv_transpose2d(&w, Some(&b), d);
        assert!(
            matches!(r, Err(Error::ShapeMismatch { .. })) && named(&r),
            "{r:?}"
        );
        let e = Tensor::zeros([1, 4, 0, 3], DType::F32, dev).unwrap();
        let r = e.conv_transpose2d(&w, None, d);
        assert!(
            matches!(r, Err(Error::InvalidArgument { .. })) && named(&r),
            "{r:?}"
        );
        let w0 = Tensor::zeros([4, 2, 0, 2], DType::F32, dev).unwrap();
        let r = x.conv_transpose2d(&w0, None, d);
        assert!(
            matches!(r, Err(Error::InvalidArgument { .. })) && named(&r),
            "{r:?}"
        );
        // Sizes past memory or past usize are typed errors.
        for p in [
            P {
                stride: (1 << 40, 1),
                ..d
            },
            P {
                stride: (usize::MAX, usize::MAX),
                ..d
            },
            P {
                dilation: (usize::MAX, 1),
                ..d
            },
        ] {
            let r = x.conv_transpose2d(&w, None, p);
            assert!(r.is_err(), "{p:?}: {r:?}");
        }
        // A single row takes any stride.
        let row = Tensor::zeros([1, 4, 1, 3], DType::F32, dev).unwrap();
        let p = P {
            stride: (usize::MAX, 1),
            ..d
        };
        assert_eq!(
            row.conv_transpose2d(&w, None, p).unwrap().dims(),
            &[1, 2, 2, 4]
        );
        // An empty batch.
        let nb = Tensor::zeros([0, 4, 3, 3], DType::F32, dev).unwrap();
        assert_eq!(
            nb.conv_transpose2d(&w, None, d).unwrap().dims(),
            &[0, 2, 4, 4]
        );
    }
}
