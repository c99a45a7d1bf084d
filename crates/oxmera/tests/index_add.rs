//! `index_add` and `index_copy` by hand, as PyTorch's: slices written or
//! added at a 1-D index's positions, repeated positions, alpha, the
//! gradients PyTorch gives, and the typed errors, on the reference and cpu
//! backends.

use oxmera::prelude::*;
use oxmera::tensor::Tensor;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn f64s(values: &[f64], shape: &[usize], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), device).unwrap()
}

fn idx(values: &[i64], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), [values.len()], device).unwrap()
}

fn v(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

#[test]
fn slices_added_and_copied_by_hand() {
    for dev in DEVICES {
        // x = [[1, 1],     source = [[10, 20],
        //      [1, 1],               [30, 40],
        //      [1, 1]]               [50, 60]]
        let x = f64s(&[1.0; 6], &[3, 2], dev);
        let s = f64s(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0], &[3, 2], dev);
        // Rows 0, 2, 0: row 0 gets 10+50, 20+60; row 2 gets 30, 40.
        let i = idx(&[0, 2, 0], dev);
        assert_eq!(
            v(&x.index_add(0, &i, &s, 1.0).unwrap()),
            [61.0, 81.0, 1.0, 1.0, 31.0, 41.0]
        );
        assert_eq!(
            v(&x.index_add(0, &i, &s, 0.5).unwrap()),
            [31.0, 41.0, 1.0, 1.0, 16.0, 21.0]
        );
        // index_copy with distinct rows 2, 0, 1 permutes the source in.
        let p = idx(&[2, 0, 1], dev);
        assert_eq!(
            v(&x.index_copy(0, &p, &s).unwrap()),
            [30.0, 40.0, 50.0, 60.0, 10.0, 20.0]
        );
        // Repeated rows 0, 2, 0: the last (50, 60) wins at row 0.
        assert_eq!(
            v(&x.index_copy(0, &i, &s).unwrap()),
            [50.0, 60.0, 1.0, 1.0, 30.0, 40.0]
        );
        // Along columns of a transposed view: x.t() is [2, 3], source [2, 1].
        let t = x.transpose(0, 1).unwrap();
        let col = f64s(&[7.0, 8.0], &[2, 1], dev);
        assert_eq!(
            v(&t.index_add(-1, &idx(&[1], dev), &col, 1.0).unwrap()),
            [1.0, 8.0, 1.0, 1.0, 9.0, 1.0]
        );
        // i32 indices and integer tensors (alpha integral).
        let xi = Tensor::from_vec(vec![0i64; 4], [4], dev).unwrap();
        let si = Tensor::from_vec(vec![5i64, 6, 7], [3], dev).unwrap();
        let i32s = Tensor::from_vec(vec![3i32, 1, 3], [3], dev).unwrap();
        assert_eq!(
            xi.index_add(0, &i32s, &si, 2.0)
                .unwrap()
                .to_vec::<i64>()
                .unwrap(),
            [0, 12, 0, 24]
        );
        assert_eq!(
            xi.index_copy(0, &i32s, &si)
                .unwrap()
                .to_vec::<i64>()
                .unwrap(),
            [0, 6, 0, 7]
        );
        // bool copies; a 0-d tensor is one element along dim 0.
        let b = Tensor::from_vec(vec![false, false], [2], dev).unwrap();
        let t1 = Tensor::from_vec(vec![true], [1], dev).unwrap();
        assert_eq!(
            b.index_copy(0, &idx(&[1], dev), &t1)
                .unwrap()
                .to_vec::<bool>()
                .unwrap(),
            [false, true]
        );
        let z = Tensor::scalar(1.5f64, dev).unwrap();
        let y = z.index_add(
            0,
            &idx(&[0], dev),
            &Tensor::scalar(2.0f64, dev).unwrap(),
            1.0,
        );
        let y = y.unwrap();
        assert_eq!((y.dims(), y.item().unwrap()), (&[] as &[usize], 3.5));
        // An empty index changes nothing.
        let e = f64s(&[], &[0, 2], dev);
        assert_eq!(
            v(&x.index_add(0, &idx(&[], dev), &e, 1.0).unwrap()),
            [1.0; 6]
        );
    }
}

#[test]
fn gradients_are_pytorchs() {
    for dev in DEVICES {
        let x = f64s(&[1.0, 2.0, 3.0, 4.0], &[4], dev)
            .with_requires_grad(true)
            .unwrap();
        let s = f64s(&[5.0, 6.0, 7.0], &[3], dev)
            .with_requires_grad(true)
            .unwrap();
        let i = idx(&[3, 1, 3], dev);
        let w = f64s(&[1.0, 10.0, 100.0, 1000.0], &[4], dev);
        // index_add: self gets g; the source g[index]·alpha.
        let y = x.index_add(0, &i, &s, -2.0).unwrap();
        y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(v(&x.grad().unwrap()), [1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(v(&s.grad().unwrap()), [-2000.0, -20.0, -2000.0]);
        // index_copy: self's overwritten positions (1, 3) get 0; every
        // source element g[index], the overwritten first 3 too (as PyTorch).
        x.zero_grad();
        s.zero_grad();
        let y = x.index_copy(0, &i, &s).unwrap();
        y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(v(&x.grad().unwrap()), [1.0, 0.0, 100.0, 0.0]);
        assert_eq!(v(&s.grad().unwrap()), [1000.0, 10.0, 1000.0]);
        // Finite differences, along either dim of a matrix.
        let m = f64s(&[0.5, -1.0, 2.0, 3.5, -2.5, 1.5], &[2, 3], dev);
        let rows = f64s(&[1.25, -0.75, 2.0, 0.5, 1.0, -3.0], &[2, 3], dev);
        let cols = f64s(&[1.25, -0.75, 2.0, 0.5], &[2, 2], dev);
        let r = gradcheck(
            |x| x[0].index_add(0, &idx(&[1, 1], dev), &x[1], 0.75),
            &[m.clone(), rows.clone()],
            DEFAULT_STEP,
        )
        .unwrap();
        assert!(r.passed(), "index_add rows on {dev}: {r}");
        let r = gradcheck(
            |x| x[0].index_copy(1, &idx(&[2, 0], dev), &x[1]),
            &[m.clone(), cols.clone()],
            DEFAULT_STEP,
        )
        .unwrap();
        assert!(r.passed(), "index_copy columns on {dev}: {r}");
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = f64s(&[0.0; 6], &[3, 2], dev);
        let s = f64s(&[1.0; 4], &[2, 2], dev);
        let i = idx(&[0, 2], dev);
        for r in [x.index_add(2, &i, &s, 1.0), x.index_copy(-3, &i, &s)] {
            assert!(matches!(r, Err(Error::DimOutOfRange { .. })), "{r:?}");
        }
        // A position past the dim, or negative.
        for bad in [[0, 3], [-1, 0]] {
            let r = x.index_add(0, &idx(&bad, dev), &s, 1.0);
            assert!(matches!(r, Err(Error::IndexOutOfBounds { .. })), "{r:?}");
        }
        // The source's slices must match the index and self.
        let r = x.index_add(0, &idx(&[0], dev), &s, 1.0);
        assert!(matches!(r, Err(Error::ShapeMismatch { .. })), "{r:?}");
        let r = x.index_copy(0, &i, &f64s(&[1.0; 6], &[2, 3], dev));
        assert!(matches!(r, Err(Error::ShapeMismatch { .. })), "{r:?}");
        let r = x.index_add(0, &i, &f64s(&[1.0; 2], &[2], dev), 1.0);
        assert!(matches!(r, Err(Error::RankMismatch { .. })), "{r:?}");
        let two_d = Tensor::from_vec(vec![0i64, 1], [1, 2], dev).unwrap();
        let r = x.index_copy(0, &two_d, &s);
        assert!(matches!(r, Err(Error::RankMismatch { .. })), "{r:?}");
        // Dtypes: the source's, the index's, bool and a fractional alpha.
        let r = x.index_add(0, &i, &s.to_dtype(DType::F32).unwrap(), 1.0);
        assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
        let r = x.index_add(0, &i.to_dtype(DType::F32).unwrap(), &s, 1.0);
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
        let xb = x.to_dtype(DType::Bool).unwrap();
        let r = xb.index_add(0, &i, &s.to_dtype(DType::Bool).unwrap(), 1.0);
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
        let xi = x.to_dtype(DType::I64).unwrap();
        let r = xi.index_add(0, &i, &s.to_dtype(DType::I64).unwrap(), 0.5);
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        // An integral alpha past i64 is refused, not clamped to i64::MAX.
        for alpha in [1e19, -1e19, 9_223_372_036_854_775_808.0, f64::INFINITY] {
            let r = xi.index_add(0, &i, &s.to_dtype(DType::I64).unwrap(), alpha);
            assert!(
                matches!(r, Err(Error::InvalidArgument { .. })),
                "{alpha}: {r:?}"
            );
        }
    }
}
