//! `sort`, `argsort` and `topk`, by hand: each case's order can be checked
//! by eye, on the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::Tensor;

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn f32s(values: &[f32], shape: &[usize], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), device).unwrap()
}

fn idx(t: &Tensor) -> Vec<i64> {
    t.to_vec::<i64>().unwrap()
}

#[test]
fn rows_sort_up_and_down_with_nan_above_every_number() {
    for dev in DEVICES {
        let x = f32s(&[3.0, 1.0, 2.0, 0.0, f32::NAN, -1.0], &[2, 3], dev);
        let (v, i) = x.sort(-1, false).unwrap();
        let v = v.to_vec::<f32>().unwrap();
        assert_eq!(&v[..3], [1.0, 2.0, 3.0]);
        assert_eq!(&v[3..5], [-1.0, 0.0]);
        assert!(v[5].is_nan(), "NaN sorts last ascending");
        assert_eq!(idx(&i), [1, 2, 0, 2, 0, 1]);
        let (v, i) = x.sort(1, true).unwrap();
        let v = v.to_vec::<f32>().unwrap();
        assert!(v[3].is_nan(), "and first descending");
        assert_eq!(&v[..3], [3.0, 2.0, 1.0]);
        assert_eq!(idx(&i), [0, 2, 1, 1, 0, 2]);
        assert_eq!(idx(&x.argsort(1, true).unwrap()), idx(&i));
    }
}

#[test]
fn ties_keep_their_order_in_both_directions() {
    for dev in DEVICES {
        // -0.0 == 0.0, so they tie too.
        let x = f32s(&[1.0, 0.0, 1.0, -0.0], &[4], dev);
        assert_eq!(idx(&x.argsort(0, false).unwrap()), [1, 3, 0, 2]);
        assert_eq!(idx(&x.argsort(0, true).unwrap()), [0, 2, 1, 3]);
    }
}

#[test]
fn columns_of_a_transposed_view_and_other_dtypes() {
    for dev in DEVICES {
        // x = [[5, 1], [4, 2], [6, 0]]; its transpose's rows are its columns.
        let x = f32s(&[5.0, 1.0, 4.0, 2.0, 6.0, 0.0], &[3, 2], dev);
        let (v, i) = x.sort(0, false).unwrap();
        assert_eq!(v.to_vec::<f32>().unwrap(), [4.0, 0.0, 5.0, 1.0, 6.0, 2.0]);
        assert_eq!(idx(&i), [1, 2, 0, 0, 2, 1]);
        let t = x.transpose(0, 1).unwrap();
        let (v, _) = t.sort(1, true).unwrap();
        assert_eq!(v.to_vec::<f32>().unwrap(), [6.0, 5.0, 4.0, 2.0, 1.0, 0.0]);
        // i64 beyond 2^53 compares exactly (through f64 the two would tie).
        let big = 1i64 << 53;
        let x = Tensor::from_vec(vec![big + 1, big, -3], [3], dev).unwrap();
        let (v, i) = x.sort(0, false).unwrap();
        assert_eq!(v.to_vec::<i64>().unwrap(), [-3, big, big + 1]);
        assert_eq!(idx(&i), [2, 1, 0]);
        let b = Tensor::from_vec(vec![true, false, true, false], [4], dev).unwrap();
        assert_eq!(idx(&b.argsort(0, false).unwrap()), [1, 3, 0, 2]);
    }
}

#[test]
fn topk_takes_the_first_k_of_the_sort() {
    for dev in DEVICES {
        let x = f32s(&[2.0, f32::NAN, 7.0, 7.0, -1.0], &[5], dev);
        let (v, i) = x.topk(3, 0, true).unwrap();
        let v = v.to_vec::<f32>().unwrap();
        assert!(v[0].is_nan(), "NaN counts as the largest");
        assert_eq!(&v[1..], [7.0, 7.0]);
        assert_eq!(idx(&i), [1, 2, 3]);
        let (v, i) = x.topk(2, -1, false).unwrap();
        assert_eq!(v.to_vec::<f32>().unwrap(), [-1.0, 2.0]);
        assert_eq!(idx(&i), [4, 0]);
        let (v, _) = x.topk(0, 0, true).unwrap();
        assert_eq!(v.dims(), &[0]);
        let e = x.topk(6, 0, true).unwrap_err();
        assert_eq!(e.kind(), "InvalidArgument");
        assert!(e.to_string().contains("k = 6 is more than the 5"), "{e}");
        assert_eq!(x.sort(1, false).unwrap_err().kind(), "DimOutOfRange");
    }
}

#[test]
fn the_gradient_goes_back_to_where_each_value_came_from() {
    for dev in DEVICES {
        let x = f32s(&[3.0, 1.0, 2.0], &[3], dev)
            .with_requires_grad(true)
            .unwrap();
        let (v, _) = x.sort(0, false).unwrap();
        // d/dx of 10·v0 + 20·v1 + 30·v2 with v = [x1, x2, x0].
        let w = f32s(&[10.0, 20.0, 30.0], &[3], dev);
        v.mul(&w).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(
            x.grad().unwrap().to_vec::<f32>().unwrap(),
            [30.0, 10.0, 20.0]
        );
        let y = f32s(&[3.0, 1.0, 2.0], &[3], dev)
            .with_requires_grad(true)
            .unwrap();
        let (top, _) = y.topk(1, 0, true).unwrap();
        top.sum_all().unwrap().backward().unwrap();
        assert_eq!(y.grad().unwrap().to_vec::<f32>().unwrap(), [1.0, 0.0, 0.0]);
    }
}

#[test]
fn a_scalar_and_an_empty_tensor_with_a_huge_dim() {
    for dev in DEVICES {
        let s = Tensor::from_vec(vec![4.0f32], [], dev).unwrap();
        let (v, i) = s.sort(0, false).unwrap();
        assert_eq!((v.rank(), idx(&i)), (0, vec![0]));
        let (v, i) = s.topk(1, -1, true).unwrap();
        assert_eq!((v.to_vec::<f32>().unwrap(), i.rank()), (vec![4.0], 0));
        // 2^40 empty rows: nothing to order, answered at once.
        let e = Tensor::zeros([1 << 40, 0], DType::F32, dev).unwrap();
        let (v, i) = e.sort(1, false).unwrap();
        assert_eq!((v.dims(), i.dims()), (&[1 << 40, 0][..], &[1 << 40, 0][..]));
    }
}

#[test]
fn kthvalue_and_median_pick_elements_by_hand() {
    for dev in DEVICES {
        // Row 0 sorted: 1 (i1), 2 (i3), 4 (i2), 5 (i0); row 1 has a tie and a NaN.
        let x = f32s(&[5.0, 1.0, 4.0, 2.0, 7.0, 7.0, f32::NAN, 3.0], &[2, 4], dev);
        let (v, i) = x.kthvalue(2, 1, false).unwrap();
        assert_eq!(v.to_vec::<f32>().unwrap(), [2.0, 7.0]);
        // Of the two 7s the first in the slice (index 0) is named.
        assert_eq!(idx(&i), [3, 0]);
        let (v, i) = x.kthvalue(4, -1, true).unwrap();
        assert_eq!(v.dims(), &[2, 1]);
        let v = v.to_vec::<f32>().unwrap();
        assert_eq!(v[0], 5.0);
        assert!(v[1].is_nan(), "NaN counts as the largest");
        assert_eq!(idx(&i), [0, 2]);
        for bad in [0, 5] {
            assert!(matches!(
                x.kthvalue(bad, 1, false),
                Err(Error::InvalidArgument { .. })
            ));
        }
        // Median: the lower middle of an even count (2 of 1, 2, 4, 5);
        // a slice with a NaN has NaN, at the NaN's index.
        let (v, i) = x.median(1, false).unwrap();
        let v = v.to_vec::<f32>().unwrap();
        assert_eq!(v[0], 2.0);
        assert!(v[1].is_nan());
        assert_eq!(idx(&i), [3, 2]);
        // Along dim 0 (columns of two): the lower of each pair.
        let (v, i) = x.median(0, true).unwrap();
        assert_eq!(v.dims(), &[1, 4]);
        let v = v.to_vec::<f32>().unwrap();
        assert_eq!([v[0], v[1], v[3]], [5.0, 1.0, 2.0]);
        assert!(v[2].is_nan());
        assert_eq!(idx(&i), [0, 0, 1, 0]);
        let odd = f32s(&[9.0, -1.0, 3.0], &[3], dev);
        assert_eq!(odd.median_all().unwrap().item().unwrap(), 3.0);
        let ints = Tensor::from_vec(vec![4i64, 8, 6, 2], [4], dev).unwrap();
        let (v, i) = ints.median(0, false).unwrap();
        assert_eq!((v.to_vec::<i64>().unwrap(), idx(&i)), (vec![4], vec![0]));
        let empty = f32s(&[], &[2, 0], dev);
        assert!(matches!(
            empty.median(1, false),
            Err(Error::InvalidArgument { .. })
        ));
        let scalar = Tensor::scalar(2.5f32, dev).unwrap();
        assert_eq!(scalar.median(0, false).unwrap().0.dims(), &[] as &[usize]);
    }
}

#[test]
fn the_chosen_element_gets_the_gradient() {
    let x = Tensor::from_vec(vec![5.0f64, 1.0, 4.0, 2.0], [4], Device::Reference)
        .unwrap()
        .with_requires_grad(true)
        .unwrap();
    x.median(0, false).unwrap().0.backward().unwrap();
    // The lower median of 1, 2, 4, 5 is 2, at index 3.
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>().unwrap(),
        [0.0, 0.0, 0.0, 1.0]
    );
    x.zero_grad();
    x.kthvalue(3, 0, false)
        .unwrap()
        .0
        .mul_scalar(2.0)
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>().unwrap(),
        [0.0, 0.0, 2.0, 0.0]
    );
}
