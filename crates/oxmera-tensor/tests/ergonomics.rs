//! Writing it the way one thinks it: operators that chain on results,
//! scalars of any Rust number type, nested-array constructors and
//! PyTorch-style indexing, each checked against hand-computed values.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_reference as _;
use oxmera_tensor::{Ellipsis, NewAxis, Tensor, TensorResultExt};

const DEV: Device = Device::Reference;

fn f(t: Result<Tensor>) -> Vec<f32> {
    t.unwrap().to_vec::<f32>().unwrap()
}

fn ints(t: Result<Tensor>) -> (Vec<usize>, Vec<i32>) {
    let t = t.unwrap();
    (t.dims().to_vec(), t.to_vec::<i32>().unwrap())
}

#[test]
fn every_mix_of_tensor_reference_and_result_chains() {
    let a = Tensor::new([1f32, 2.], DEV).unwrap();
    let b = Tensor::new([10f32, 20.], DEV).unwrap();
    assert_eq!(f(&a + &b), [11.0, 22.0]);
    assert_eq!(f(a.clone() - &b), [-9.0, -18.0]);
    assert_eq!(f(&a * b.clone()), [10.0, 40.0]);
    assert_eq!(f(a.clone() / b.clone()), [0.1, 0.1]);
    assert_eq!(f(&a + &b + &a), [12.0, 24.0]);
    assert_eq!(f(&a - (&b * &a)), [-9.0, -38.0]);
    assert_eq!(f((&a + &b) * b.clone()), [110.0, 440.0]);
    assert_eq!(f(a.clone() / (&b - &a)), [1.0 / 9.0, 2.0 / 18.0]);
    // What the orphan rule keeps from operators, as methods.
    assert_eq!(f((&a + &b).mul(&b - &a)), [99.0, 396.0]);
    assert_eq!(f((&a + &b).sub(1).div(2u8)), [5.0, 10.5]);
    assert_eq!(f((&a + &b).add(a.clone())), [12.0, 24.0]);
}

#[test]
fn scalars_of_every_number_type_on_either_side() {
    let a = Tensor::new([1f32, 2.], DEV).unwrap();
    assert_eq!(f(&a * 2), [2.0, 4.0]);
    assert_eq!(f(&a + 1u8), [2.0, 3.0]);
    assert_eq!(f(&a - 0.5f32), [0.5, 1.5]);
    assert_eq!(f(3 - &a), [2.0, 1.0]);
    assert_eq!(f((1 - &a).relu()), [0.0, 0.0]);
    assert_eq!(f((0.5 * &a).mul(&a)), [0.5, 2.0]);
    assert_eq!(f(2.0 / a.clone()), [2.0, 1.0]);
    assert_eq!(f((&a * 2).add(1)), [3.0, 5.0]);
    assert_eq!(f((&a * 2).relu()), [2.0, 4.0]);
    assert_eq!(f((&a + &a).mul_scalar(3)), [6.0, 12.0]);
    assert_eq!(f((&a - 4).neg()), [3.0, 2.0]);
    assert_eq!(f(a.pow_scalar(2)), [1.0, 4.0]);
    assert_eq!(f(a.add_scalar(1i64)), [2.0, 3.0]);
    assert_eq!(
        a.gt_scalar(1).unwrap().to_vec::<bool>().unwrap(),
        [false, true]
    );
    assert_eq!(
        f(Tensor::full([2], 7, DType::F32, DEV).map(Ok).unwrap()),
        [7.0, 7.0]
    );
    let r = Tensor::arange(0, 6, 2, DType::I64, DEV).unwrap();
    assert_eq!(r.to_vec::<i64>().unwrap(), [0, 2, 4]);
}

#[test]
fn scalars_follow_the_dtype_rules_and_never_wrap() {
    let i = Tensor::new([1i32, 2], DEV).unwrap();
    assert_eq!(ints(&i * 3).1, [3, 6]);
    assert!(matches!(&i + 0.5, Err(Error::InvalidArgument { .. })));
    let u = Tensor::new([1u8], DEV).unwrap();
    // 300 is not a u8: refused, not wrapped to 44.
    assert!(matches!(&u + 300, Err(Error::InvalidArgument { .. })));
    let l = Tensor::new([0i64], DEV).unwrap();
    // 2^53 + 1 would round on its way through f64: refused.
    assert!(matches!(
        &l + ((1i64 << 53) + 1),
        Err(Error::InvalidArgument { .. })
    ));
    assert_eq!(
        (&l + (1i64 << 53)).unwrap().to_vec::<i64>().unwrap(),
        [1 << 53]
    );
}

#[test]
fn the_first_error_passes_through_with_its_fields() {
    let a = Tensor::new([1f32, 2.], DEV).unwrap();
    let c = Tensor::new([1f32, 2., 3.], DEV).unwrap();
    let err = ((&a + &c) * &a - &a).unwrap_err();
    assert!(
        matches!(err, Error::BroadcastIncompatible { op: "add", .. }),
        "{err}"
    );
    let err = (&a * (&c + &a)).unwrap_err();
    assert!(
        matches!(err, Error::BroadcastIncompatible { op: "add", .. }),
        "{err}"
    );
    let err = (&a + &c).relu().sum_all().unwrap_err();
    assert!(
        matches!(err, Error::BroadcastIncompatible { op: "add", .. }),
        "{err}"
    );
}

#[test]
fn nested_data_gives_shape_and_dtype() {
    let x = Tensor::new([[1f32, 2., 3.], [4., 5., 6.]], DEV).unwrap();
    assert_eq!((x.dims(), x.dtype()), (&[2, 3][..], DType::F32));
    let v = Tensor::new(vec![vec![1i64, 2], vec![3, 4]], DEV).unwrap();
    assert_eq!(
        (v.dims(), v.to_vec::<i64>().unwrap()),
        (&[2, 2][..], vec![1, 2, 3, 4])
    );
    let s: &[u8] = &[1, 2, 3];
    assert_eq!(Tensor::new(s, DEV).unwrap().dtype(), DType::U8);
    let scalar = Tensor::new(2.5f64, DEV).unwrap();
    assert_eq!((scalar.rank(), scalar.item().unwrap()), (0, 2.5));
    let empty: Vec<Vec<f32>> = vec![];
    assert_eq!(Tensor::new(&empty, DEV).unwrap().dims(), &[0]);
    let ragged = vec![vec![1f32, 2.], vec![3.]];
    let err = Tensor::new(&ragged, DEV).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { op: "new", .. }),
        "{err}"
    );
    assert_eq!(Tensor::new([[true, false]], DEV).unwrap().dims(), &[1, 2]);
}

#[test]
fn try_from_uses_the_default_device() {
    // The default device is Cpu, which this test binary does not link: the
    // conversion is fallible, and says which device it could not open.
    assert_eq!(Device::default(), Device::Cpu);
    let err = Tensor::try_from(vec![1f32, 2.]).unwrap_err();
    assert!(err.to_string().contains("cpu"), "{err}");
}

#[test]
fn indexing_reads_like_pytorch() {
    // x = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    let x = Tensor::arange(0, 12, 1, DType::I32, DEV)
        .unwrap()
        .reshape([3, 4])
        .unwrap();
    assert_eq!(ints(x.i(-1)), (vec![4], vec![8, 9, 10, 11])); // x[-1]
    assert_eq!(ints(x.i((.., 1..3))), (vec![3, 2], vec![1, 2, 5, 6, 9, 10])); // x[:, 1:3]
    assert_eq!(ints(x.i((Ellipsis, 0))), (vec![3], vec![0, 4, 8])); // x[..., 0]
    assert_eq!(
        ints(x.i((1.., ..-1))),
        (vec![2, 3], vec![4, 5, 6, 8, 9, 10])
    ); // x[1:, :-1]
    assert_eq!(ints(x.i((0, 2..=3))), (vec![2], vec![2, 3])); // x[0, 2:4]
    assert_eq!(ints(x.i((.., ..=-1))), (vec![3, 4], (0..12).collect())); // x[:, :]
    assert_eq!(ints(x.i((.., NewAxis, 0))), (vec![3, 1], vec![0, 4, 8])); // x[:, None, 0]
    assert_eq!(ints(x.i((-1, -1))), (vec![], vec![11])); // x[-1, -1]
    assert_eq!(ints(x.i(-10..)), (vec![3, 4], (0..12).collect())); // clamped
    let (hi, lo) = (2, 1); // x[2:1]: empty, not an error
    assert_eq!(ints(x.i(hi..lo)), (vec![0, 4], vec![]));
    assert_eq!(ints(x.i((Ellipsis, 1usize, 2i64))), (vec![], vec![6]));
    // Views, never copies.
    assert!(x.i((.., 1..3)).unwrap().shares_storage(&x));
    assert_eq!(ints(x.select(1, -1)), (vec![3], vec![3, 7, 11]));
    assert_eq!(ints(x.narrow(0, -2, 2)), (vec![2, 4], (4..12).collect()));
}

#[test]
fn bad_indices_are_typed_errors() {
    let x = Tensor::zeros([3, 4], DType::F32, DEV).unwrap();
    let err = x.i((0, 4)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::IndexOutOfBounds {
                index: 4,
                dim: 1,
                size: 4,
                ..
            }
        ),
        "{err}"
    );
    let err = x.i(-4).unwrap_err();
    assert!(
        matches!(
            err,
            Error::IndexOutOfBounds {
                index: -4,
                dim: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(matches!(x.i((0, 0, 0)), Err(Error::InvalidArgument { .. })));
    assert!(matches!(
        x.i((Ellipsis, 0, Ellipsis)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(x.select(2, 0), Err(Error::DimOutOfRange { .. })));
    assert!(matches!(
        x.narrow(0, -4, 1),
        Err(Error::IndexOutOfBounds { .. })
    ));
    assert!(matches!(
        x.narrow(0, 2, 2),
        Err(Error::RangeOutOfBounds { .. })
    ));
}

#[test]
fn indexing_records_the_gradient() {
    let x = Tensor::new([[1f32, 2.], [3., 4.]], DEV)
        .unwrap()
        .with_requires_grad(true)
        .unwrap();
    let y = x.i((.., 1)).mul(3).sum_all().unwrap();
    y.backward().unwrap();
    assert_eq!(
        x.grad().unwrap().to_vec::<f32>().unwrap(),
        [0.0, 3.0, 0.0, 3.0]
    );
}
