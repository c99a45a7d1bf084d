//! `repeat_interleave` by hand, as PyTorch's: one count or a count per
//! element, along a dim or flattened, the gradient adding each element's
//! copies, and the typed errors, on the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::Tensor;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn i64s(values: &[i64], shape: &[usize], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), device).unwrap()
}

fn ints(t: &Tensor) -> Vec<i64> {
    t.to_vec::<i64>().unwrap()
}

#[test]
fn copies_in_place_by_hand() {
    for dev in DEVICES {
        // [[1, 2, 3],
        //  [4, 5, 6]]
        let x = i64s(&[1, 2, 3, 4, 5, 6], &[2, 3], dev);
        let flat = x.repeat_interleave(2, None).unwrap();
        assert_eq!(flat.dims(), &[12]);
        assert_eq!(ints(&flat), [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
        let rows = x.repeat_interleave(2, Some(0)).unwrap();
        assert_eq!(rows.dims(), &[4, 3]);
        assert_eq!(ints(&rows), [1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]);
        // Counts per column: 0, 2, 1.
        let cols = x.repeat_interleave_counts(&[0, 2, 1], Some(-1)).unwrap();
        assert_eq!(cols.dims(), &[2, 3]);
        assert_eq!(ints(&cols), [2, 2, 3, 5, 5, 6]);
        // The same counts as a tensor, i32 or i64; a 0-d count is for all.
        let c = Tensor::from_vec(vec![0i32, 2, 1], [3], dev).unwrap();
        assert_eq!(
            ints(&x.repeat_interleave_tensor(&c, Some(1)).unwrap()),
            ints(&cols)
        );
        let one = Tensor::scalar(3i64, dev).unwrap();
        assert_eq!(
            ints(&x.repeat_interleave_tensor(&one, Some(0)).unwrap()),
            ints(&x.repeat_interleave(3, Some(0)).unwrap())
        );
        // One count in a list is for every element, as PyTorch's size-1 tensor.
        assert_eq!(
            ints(&x.repeat_interleave_counts(&[2], None).unwrap()),
            ints(&flat)
        );
        // A transposed view: its rows are x's columns.
        let t = x.transpose(0, 1).unwrap();
        assert_eq!(
            ints(&t.repeat_interleave_counts(&[1, 2], Some(1)).unwrap()),
            [1, 4, 4, 2, 5, 5, 3, 6, 6]
        );
        // Zero copies, a 0-d tensor flattened, and bool.
        assert_eq!(x.repeat_interleave(0, Some(1)).unwrap().dims(), &[2, 0]);
        let s = Tensor::scalar(7.5f32, dev).unwrap();
        assert_eq!(
            s.repeat_interleave(3, None)
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            [7.5; 3]
        );
        let b = Tensor::from_vec(vec![true, false], [2], dev).unwrap();
        assert_eq!(
            b.repeat_interleave_counts(&[1, 2], Some(0))
                .unwrap()
                .to_vec::<bool>()
                .unwrap(),
            [true, false, false]
        );
        // An empty tensor with a 2^40 dim: nothing is copied.
        let e = Tensor::zeros([1 << 40, 0], DType::F32, dev).unwrap();
        assert_eq!(
            e.repeat_interleave(2, Some(0)).unwrap().dims(),
            &[1 << 41, 0]
        );
        let e = Tensor::zeros([2, 0], DType::F32, dev).unwrap();
        assert_eq!(
            e.repeat_interleave_counts(&[1 << 40, 1], Some(0))
                .unwrap()
                .dims(),
            &[(1 << 40) + 1, 0]
        );
    }
}

#[test]
fn an_empty_input_stays_in_the_graph() {
    for dev in DEVICES {
        // Empty along another dim than the counts' (PyTorch keeps the
        // grad_fn and gives an empty gradient), and along it.
        for (shape, dim, counts) in [([0usize, 3], 1isize, &[1usize, 2, 3][..]), ([2, 0], 1, &[])] {
            let x = Tensor::zeros(shape, DType::F64, dev)
                .unwrap()
                .with_requires_grad(true)
                .unwrap();
            let y = x.repeat_interleave_counts(counts, Some(dim)).unwrap();
            assert!(y.requires_grad(), "{shape:?} on {dev}");
            let total: usize = counts.iter().sum();
            assert_eq!(y.dims()[1], total);
            y.sum_all().unwrap().backward().unwrap();
            assert_eq!(x.grad().expect("a gradient").dims(), &shape);
        }
    }
}

#[test]
fn the_gradient_adds_the_copies() {
    for dev in DEVICES {
        let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], [3], dev)
            .unwrap()
            .with_requires_grad(true)
            .unwrap();
        // Copies [x0, x1, x1, x1, x2, x2] weighted by 1..=6: x0 gets 1,
        // x1 2 + 3 + 4 = 9, x2 5 + 6 = 11.
        let w = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], [6], dev).unwrap();
        let y = x.repeat_interleave_counts(&[1, 3, 2], Some(0)).unwrap();
        y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), [1.0, 9.0, 11.0]);
        // Two copies each: 1 + 2, 3 + 4, 5 + 6; a dropped element gets 0.
        x.zero_grad();
        let y = x.repeat_interleave(2, None).unwrap();
        y.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), [3.0, 7.0, 11.0]);
        x.zero_grad();
        let y = x.repeat_interleave_counts(&[2, 0, 1], None).unwrap();
        y.sum_all().unwrap().backward().unwrap();
        assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), [2.0, 0.0, 1.0]);
        let m = Tensor::from_vec(vec![0.5f64, -1.0, 2.0, 3.5, -2.5, 1.5], [2, 3], dev).unwrap();
        let cases: [(Option<isize>, &[usize]); 3] = [
            (Some(0), &[2, 1]),
            (Some(1), &[2, 0, 3]),
            (None, &[1, 0, 2, 1, 3, 1]),
        ];
        for (dim, counts) in cases {
            let r = gradcheck(
                |x| x[0].repeat_interleave_counts(counts, dim),
                std::slice::from_ref(&m),
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(r.passed(), "{counts:?} along {dim:?} on {dev}: {r}");
            let r = gradcheck(
                |x| x[0].repeat_interleave(3, dim),
                std::slice::from_ref(&m),
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(r.passed(), "3 along {dim:?} on {dev}: {r}");
        }
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = i64s(&[1, 2, 3], &[3], dev);
        let r = x.repeat_interleave(2, Some(1));
        assert!(matches!(r, Err(Error::DimOutOfRange { .. })), "{r:?}");
        let s = Tensor::scalar(1.0f32, dev).unwrap();
        let r = s.repeat_interleave(2, Some(0));
        assert!(matches!(r, Err(Error::DimOutOfRange { .. })), "{r:?}");
        let r = x.repeat_interleave_counts(&[1, 2], Some(0));
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        let r = x.repeat_interleave_counts(&[usize::MAX, 1, 0], Some(0));
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        let r = x.repeat_interleave(usize::MAX, None);
        assert!(r.is_err(), "{r:?}");
        let neg = i64s(&[1, -1, 2], &[3], dev);
        let r = x.repeat_interleave_tensor(&neg, Some(0));
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        let f = Tensor::from_vec(vec![1.0f32, 1.0, 1.0], [3], dev).unwrap();
        let r = x.repeat_interleave_tensor(&f, Some(0));
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
        let m = i64s(&[1, 1, 1, 1], &[2, 2], dev);
        let r = x.repeat_interleave_tensor(&m, None);
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        // A count past what memory holds is a typed error, not an abort.
        let r = x.repeat_interleave_counts(&[1 << 50, 1, 1], Some(0));
        assert!(r.is_err(), "{r:?}");
    }
}
