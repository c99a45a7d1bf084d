//! `scatter_reduce` by hand, as PyTorch's: sum, prod, mean, amax and amin,
//! with and without `self`, integers (floor mean), the gradients (ties
//! shared evenly for amax/amin, the product rule at zeros), gradcheck and
//! the typed errors, on the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera::tensor::{ScatterReduce as R, Tensor};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn t(values: &[f64], shape: &[usize], dev: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), dev).unwrap()
}

fn idx(values: &[i64], shape: &[usize], dev: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), dev).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn leaf(t: Tensor) -> Tensor {
    t.with_requires_grad(true).unwrap()
}

#[test]
fn reduces_by_hand() {
    for dev in DEVICES {
        // src (0,0)=1 and (1,0)=4 go to (0,0); (1,1)=5 to (0,1); (0,2)=3
        // to (0,2); (0,1)=2 to (1,1); (1,2)=6 to (1,2). (1,0) keeps self.
        let x = t(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0], &[2, 3], dev);
        let i = idx(&[0, 1, 0, 0, 0, 1], &[2, 3], dev);
        let s = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], dev);
        let r = |reduce, include| vals(&x.scatter_reduce(0, &i, &s, reduce, include).unwrap());
        assert_eq!(r(R::Sum, true), [15.0, 25.0, 33.0, 40.0, 52.0, 66.0]);
        assert_eq!(r(R::Sum, false), [5.0, 5.0, 3.0, 40.0, 2.0, 6.0]);
        assert_eq!(r(R::Prod, true), [40.0, 100.0, 90.0, 40.0, 100.0, 360.0]);
        assert_eq!(r(R::Prod, false), [4.0, 5.0, 3.0, 40.0, 2.0, 6.0]);
        assert_eq!(r(R::Mean, true), [5.0, 12.5, 16.5, 40.0, 26.0, 33.0]);
        assert_eq!(r(R::Mean, false), [2.5, 5.0, 3.0, 40.0, 2.0, 6.0]);
        assert_eq!(r(R::Amax, true), [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
        assert_eq!(r(R::Amax, false), [4.0, 5.0, 3.0, 40.0, 2.0, 6.0]);
        assert_eq!(r(R::Amin, true), [1.0, 5.0, 3.0, 40.0, 2.0, 6.0]);
        assert_eq!(r(R::Amin, false), [1.0, 5.0, 3.0, 40.0, 2.0, 6.0]);
        // Integers: the mean is floor division, as PyTorch's.
        let xi = Tensor::from_vec(vec![10i64, 20, 30, 40, 50, 60], [2, 3], dev).unwrap();
        let si = Tensor::from_vec(vec![1i64, 2, 3, 4, 5, 6], [2, 3], dev).unwrap();
        let y = xi.scatter_reduce(0, &i, &si, R::Mean, true).unwrap();
        assert_eq!(y.to_vec::<i64>().unwrap(), [5, 12, 16, 40, 26, 33]);
        let y = xi.scatter_reduce(0, &i, &si, R::Amin, true).unwrap();
        assert_eq!(y.to_vec::<i64>().unwrap(), [1, 5, 3, 40, 2, 6]);
        // Along the last dim, a src larger than the index (only its corner
        // is read), an i32 index, and a transposed self.
        let x1 = t(&[0.0, 0.0, 0.0, 0.0], &[2, 2], dev);
        let i1 = Tensor::from_vec(vec![1i32, 1, 0, 1], [2, 2], dev).unwrap();
        let s1 = t(&[1.0, 2.0, 9.0, 3.0, 4.0, 9.0], &[2, 3], dev);
        let y = x1.scatter_reduce(1, &i1, &s1, R::Sum, false).unwrap();
        assert_eq!(vals(&y), [0.0, 3.0, 3.0, 4.0]);
        let xt = t(&[1.0, 3.0, 2.0, 4.0], &[2, 2], dev)
            .transpose(0, 1)
            .unwrap();
        let y = xt.scatter_reduce(1, &i1, &s1, R::Amax, true).unwrap();
        assert_eq!(vals(&y), [1.0, 2.0, 3.0, 4.0]);
        // NaN propagates through amax; an empty index copies self.
        let xn = t(&[0.0, 0.0], &[2], dev);
        let y = xn
            .scatter_reduce(
                0,
                &idx(&[1, 1], &[2], dev),
                &t(&[f64::NAN, 1.0], &[2], dev),
                R::Amax,
                true,
            )
            .unwrap();
        let y = vals(&y);
        assert_eq!(y[0], 0.0);
        assert!(y[1].is_nan());
        let e = xn.scatter_reduce(0, &idx(&[], &[0], dev), &t(&[], &[0], dev), R::Prod, true);
        assert_eq!(vals(&e.unwrap()), [0.0, 0.0]);
    }
}

#[test]
fn gradients_by_hand() {
    for dev in DEVICES {
        // amax with three ties (self and two sources): a third each.
        let x = leaf(t(&[1.0], &[1], dev));
        let s = leaf(t(&[1.0, 1.0], &[2], dev));
        let i = idx(&[0, 0], &[2], dev);
        let y = x.scatter_reduce(0, &i, &s, R::Amax, true).unwrap();
        y.sum_all().unwrap().backward().unwrap();
        assert_eq!(vals(&x.grad().unwrap()), [1.0 / 3.0]);
        assert_eq!(vals(&s.grad().unwrap()), [1.0 / 3.0, 1.0 / 3.0]);
        // Excluded self equal to the result does not take a share (PyTorch
        // gives src 0.5 here; the derivative is 1).
        let x = leaf(t(&[3.0, 5.0], &[2], dev));
        let s = leaf(t(&[3.0, 1.0], &[2], dev));
        let y = x.scatter_reduce(0, &i, &s, R::Amax, false).unwrap();
        assert_eq!(vals(&y), [3.0, 5.0]);
        y.sum_all().unwrap().backward().unwrap();
        assert_eq!(vals(&s.grad().unwrap()), [1.0, 0.0]);
        assert_eq!(vals(&x.grad().unwrap()), [0.0, 1.0]);
        // prod at a zero: the product of the others, no division.
        let x = leaf(t(&[2.0], &[1], dev));
        let s = leaf(t(&[0.0, 3.0, 9.0], &[3], dev));
        let y = x.scatter_reduce(0, &i, &s, R::Prod, true).unwrap();
        y.sum_all().unwrap().backward().unwrap();
        assert_eq!(vals(&x.grad().unwrap()), [0.0]);
        assert_eq!(vals(&s.grad().unwrap()), [6.0, 0.0, 0.0]);
        // mean: 1/count to each member; an excluded self gets nothing.
        for (include, gx, gs) in [(true, [0.25, 1.0], 0.25), (false, [0.0, 1.0], 1.0 / 3.0)] {
            let x = leaf(t(&[1.0, 2.0], &[2], dev));
            let s = leaf(t(&[4.0, 5.0, 6.0], &[3], dev));
            let i3 = idx(&[0, 0, 0], &[3], dev);
            let y = x.scatter_reduce(0, &i3, &s, R::Mean, include).unwrap();
            y.sum_all().unwrap().backward().unwrap();
            assert_eq!(vals(&x.grad().unwrap()), gx);
            assert_eq!(vals(&s.grad().unwrap()), [gs; 3]);
        }
    }
}

#[test]
fn gradcheck_every_reduction() {
    for dev in DEVICES {
        let x = t(
            &(0..12)
                .map(|v| 1.0 + (v as f64 * 0.7).sin())
                .collect::<Vec<_>>(),
            &[3, 4],
            dev,
        );
        let s = t(
            &(0..30)
                .map(|v| 1.5 + (v as f64 * 1.3).cos())
                .collect::<Vec<_>>(),
            &[6, 5],
            dev,
        );
        let i = idx(
            &[
                0, 2, 1, 0, 2, 0, 1, 0, 1, 2, 2, 0, 0, 1, 1, 1, 2, 0, 2, 0, 0, 1, 2, 2,
            ],
            &[6, 4],
            dev,
        );
        for reduce in [R::Sum, R::Prod, R::Mean, R::Amax, R::Amin] {
            for include in [true, false] {
                let r = gradcheck(
                    |v| v[0].scatter_reduce(0, &i, &v[1], reduce, include),
                    &[x.clone(), s.clone()],
                    DEFAULT_STEP,
                )
                .unwrap();
                assert!(
                    r.passed(),
                    "{reduce:?} include_self {include} on {dev}: {r}"
                );
            }
        }
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = t(&[0.0; 6], &[2, 3], dev);
        let s = t(&[1.0; 6], &[2, 3], dev);
        let i = idx(&[0, 1, 0, 1, 0, 1], &[2, 3], dev);
        let named = |r: &Result<Tensor>| matches!(r, Err(e) if e.op() == Some("scatter_reduce"));
        let b = Tensor::from_vec(vec![true; 6], [2, 3], dev).unwrap();
        let r = b.scatter_reduce(0, &i, &b, R::Amax, true);
        assert!(
            matches!(r, Err(Error::UnsupportedDType { .. })) && named(&r),
            "{r:?}"
        );
        let r = x.scatter_reduce(2, &i, &s, R::Sum, true);
        assert!(matches!(r, Err(Error::DimOutOfRange { .. })), "{r:?}");
        for bad in [[0i64, 2, 0, 1, 0, 1], [0, -1, 0, 1, 0, 1]] {
            let r = x.scatter_reduce(0, &idx(&bad, &[2, 3], dev), &s, R::Prod, true);
            assert!(r.is_err() && named(&r), "{r:?}");
        }
        let f = t(&[0.0; 6], &[2, 3], dev);
        let r = x.scatter_reduce(0, &f, &s, R::Sum, true);
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
        let s32 = Tensor::from_vec(vec![1.0f32; 6], [2, 3], dev).unwrap();
        let r = x.scatter_reduce(0, &i, &s32, R::Mean, true);
        assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
        let small = t(&[1.0; 2], &[1, 2], dev);
        let r = x.scatter_reduce(0, &i, &small, R::Amin, false);
        assert!(r.is_err() && named(&r), "{r:?}");
        let wide = idx(&[0; 8], &[2, 4], dev);
        let r = x.scatter_reduce(0, &wide, &t(&[1.0; 8], &[2, 4], dev), R::Sum, true);
        assert!(r.is_err() && named(&r), "{r:?}");
    }
}
