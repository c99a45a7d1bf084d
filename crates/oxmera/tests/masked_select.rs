//! `nonzero` and `masked_select` by hand, as PyTorch's: results whose
//! length depends on the data, row-major order, broadcasting, the
//! gradient sent back to the selected elements, and the typed errors, on
//! the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::Tensor;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn f64s(values: &[f64], shape: &[usize], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), device).unwrap()
}

fn bools(values: &[bool], shape: &[usize], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), device).unwrap()
}

#[test]
fn nonzero_by_hand() {
    for dev in DEVICES {
        // [[0, 5, -0],
        //  [NaN, 0, 9]]: NaN is nonzero, -0 is zero.
        let x = f64s(&[0.0, 5.0, -0.0, f64::NAN, 0.0, 9.0], &[2, 3], dev);
        let i = x.nonzero().unwrap();
        assert_eq!((i.dtype(), i.dims()), (DType::I64, &[3, 2][..]));
        assert_eq!(i.to_vec::<i64>().unwrap(), [0, 1, 1, 0, 1, 2]);
        // A transposed view: coordinates in its own row-major order.
        let t = x.transpose(0, 1).unwrap();
        assert_eq!(
            t.nonzero().unwrap().to_vec::<i64>().unwrap(),
            [0, 1, 1, 0, 2, 1]
        );
        // Rank 3, integers and bool.
        let r3 = Tensor::from_vec(vec![0i64, 0, 0, 4, 0, 0, 0, -2], [2, 2, 2], dev).unwrap();
        assert_eq!(
            r3.nonzero().unwrap().to_vec::<i64>().unwrap(),
            [0, 1, 1, 1, 1, 1]
        );
        let b = bools(&[false, true, true], &[3], dev);
        let i = b.nonzero().unwrap();
        assert_eq!(
            (i.dims(), i.to_vec::<i64>().unwrap()),
            (&[2, 1][..], vec![1, 2])
        );
        // 0-d: [1, 0] or [0, 0]; all zeros: [0, rank].
        let s = Tensor::scalar(3.0f32, dev).unwrap();
        assert_eq!(s.nonzero().unwrap().dims(), &[1, 0]);
        let z = Tensor::scalar(0.0f32, dev).unwrap();
        assert_eq!(z.nonzero().unwrap().dims(), &[0, 0]);
        let zeros = Tensor::zeros([2, 3], DType::F32, dev).unwrap();
        assert_eq!(zeros.nonzero().unwrap().dims(), &[0, 2]);
        // An empty tensor with a 2^40 dim: nothing to read.
        let e = Tensor::zeros([1 << 40, 0], DType::F32, dev).unwrap();
        assert_eq!(e.nonzero().unwrap().dims(), &[0, 2]);
    }
}

#[test]
fn masked_select_by_hand() {
    for dev in DEVICES {
        // [[1, 2, 3],
        //  [4, 5, 6]]
        let x = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], dev);
        let m = bools(&[true, false, false, false, true, true], &[2, 3], dev);
        assert_eq!(
            x.masked_select(&m).unwrap().to_f64_vec().unwrap(),
            [1.0, 5.0, 6.0]
        );
        // A row mask broadcast over both rows; a column mask over columns.
        let row = bools(&[false, true, true], &[3], dev);
        assert_eq!(
            x.masked_select(&row).unwrap().to_f64_vec().unwrap(),
            [2.0, 3.0, 5.0, 6.0]
        );
        let col = bools(&[false, true], &[2, 1], dev);
        assert_eq!(
            x.masked_select(&col).unwrap().to_f64_vec().unwrap(),
            [4.0, 5.0, 6.0]
        );
        // The input broadcast by a larger mask: [10, 20] over [[t, t], [f, t]].
        let v = f64s(&[10.0, 20.0], &[2], dev);
        let big = bools(&[true, true, false, true], &[2, 2], dev);
        assert_eq!(
            v.masked_select(&big).unwrap().to_f64_vec().unwrap(),
            [10.0, 20.0, 20.0]
        );
        // A transposed view reads in its own order; nothing selected is [0].
        let t = x.transpose(0, 1).unwrap();
        let tm = bools(&[true, true, false, false, false, true], &[3, 2], dev);
        assert_eq!(
            t.masked_select(&tm).unwrap().to_f64_vec().unwrap(),
            [1.0, 4.0, 6.0]
        );
        let none = bools(&[false], &[1], dev);
        assert_eq!(x.masked_select(&none).unwrap().dims(), &[0]);
        // Integers and a 0-d tensor.
        let i = Tensor::from_vec(vec![7i32, 8], [2], dev).unwrap();
        let m2 = bools(&[false, true], &[2], dev);
        assert_eq!(i.masked_select(&m2).unwrap().to_vec::<i32>().unwrap(), [8]);
        let s = Tensor::scalar(2.5f32, dev).unwrap();
        let yes = Tensor::scalar(true, dev).unwrap();
        assert_eq!(
            s.masked_select(&yes).unwrap().to_vec::<f32>().unwrap(),
            [2.5]
        );
    }
}

#[test]
fn the_gradient_goes_back_to_the_selected_elements() {
    for dev in DEVICES {
        let x = f64s(&[1.0, 2.0, 3.0, 4.0], &[2, 2], dev)
            .with_requires_grad(true)
            .unwrap();
        let m = bools(&[true, false, true, true], &[2, 2], dev);
        let w = f64s(&[10.0, 20.0, 30.0], &[3], dev);
        x.masked_select(&m)
            .unwrap()
            .mul(&w)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert_eq!(
            x.grad().unwrap().to_f64_vec().unwrap(),
            [10.0, 0.0, 20.0, 30.0]
        );
        // Broadcast input: v = [a, b] read as [[a, b], [a, b]] with mask
        // [[t, t], [f, t]]: a gets 10, b gets 20 + 30.
        let v = f64s(&[1.0, 2.0], &[2], dev)
            .with_requires_grad(true)
            .unwrap();
        let big = bools(&[true, true, false, true], &[2, 2], dev);
        v.masked_select(&big)
            .unwrap()
            .mul(&w)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert_eq!(v.grad().unwrap().to_f64_vec().unwrap(), [10.0, 50.0]);
        let a = f64s(&[0.5, -1.0, 2.0, 3.5, -2.5, 1.5], &[2, 3], dev);
        let m = bools(&[true, false, true, true, true, false], &[2, 3], dev);
        let r = gradcheck(
            |x| x[0].masked_select(&m),
            std::slice::from_ref(&a),
            DEFAULT_STEP,
        )
        .unwrap();
        assert!(r.passed(), "on {dev}: {r}");
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = f64s(&[1.0, 2.0, 3.0], &[3], dev);
        let r = x.masked_select(&f64s(&[1.0, 0.0, 1.0], &[3], dev));
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
        let r = x.masked_select(&bools(&[true, false], &[2], dev));
        assert!(
            matches!(r, Err(Error::BroadcastIncompatible { .. })),
            "{r:?}"
        );
        // A broadcast past what memory holds (2^62 elements, from two
        // stride-0 views) is a typed error, not an allocation.
        let col = Tensor::zeros([1, 1], DType::F64, dev).unwrap();
        let col = col.broadcast_to([1 << 31, 1]).unwrap();
        let row = Tensor::zeros([1, 1], DType::Bool, dev).unwrap();
        let row = row.broadcast_to([1, 1 << 31]).unwrap();
        let r = col.masked_select(&row);
        assert!(
            matches!(
                r,
                Err(Error::OutOfMemory { .. } | Error::ShapeOverflow { .. })
            ),
            "{r:?}"
        );
    }
    let other = Tensor::from_vec(vec![true], [1], Device::Cpu).unwrap();
    let x = f64s(&[1.0], &[1], Device::Reference);
    assert!(matches!(
        x.masked_select(&other),
        Err(Error::DeviceMismatch { .. })
    ));
}
