//! Shapes no tensor may have are a typed error where they are asked for —
//! never a wrapped element count that later indexes out of bounds, an
//! allocation that aborts the process, or a silently empty tensor.
//!
//! The reproducers are the ones a hostile caller found: each product
//! overflows `usize` (or wraps to a small number in a release build) or
//! passes the element limit, `MAX_NUMEL` = `isize::MAX / 16`. Every case
//! runs the same under the test and release profiles, since each check is
//! a checked multiplication, not an overflow trap.

use oxmera::prelude::*;
use oxmera::tensor::Conv2dParams;
use oxmera_core::MAX_NUMEL;

const R: Device = Device::Reference;

fn is_overflow<T: std::fmt::Debug>(what: &str, r: Result<T>) {
    match r {
        Err(Error::ShapeOverflow { shape, max, .. }) => {
            assert_eq!(max, MAX_NUMEL);
            assert!(shape.checked_numel().is_none(), "{what}: {shape}");
        }
        other => panic!("{what}: expected ShapeOverflow, got {other:?}"),
    }
}

#[test]
fn constructors_refuse_shapes_no_tensor_may_have() {
    // The product is 2^64: wrapped, it was 0 elements and a sum of -0.0.
    is_overflow("zeros", Tensor::zeros([1 << 32, 1 << 32], DType::F32, R));
    is_overflow("eye", Tensor::eye(1 << 32, DType::F32, R));
    is_overflow("full", Tensor::full([MAX_NUMEL + 1], 1.0, DType::U8, R));
    let mut rng = Generator::new(7);
    is_overflow("rand", rng.rand([1 << 40, 1 << 40], DType::F32, R));
    is_overflow(
        "randint",
        rng.randint([usize::MAX, 2], 0, 10, DType::I64, R),
    );
    is_overflow(
        "linspace",
        Tensor::linspace(0.0, 1.0, usize::MAX, DType::F32, R),
    );
    // A zero dim makes no elements, but its neighbours' product still has
    // to fit: the strides span it.
    is_overflow(
        "zero dim",
        Tensor::zeros([1 << 40, 0, 1 << 40], DType::F32, R),
    );
    // At the limit and below it nothing changes.
    assert_eq!(Shape::from([MAX_NUMEL]).checked_numel(), Some(MAX_NUMEL));
    let empty = Tensor::zeros([1 << 20, 0, 1 << 20], DType::F32, R).unwrap();
    assert_eq!(empty.numel(), 0);
}

#[test]
fn views_refuse_them_before_they_wrap_into_a_valid_count() {
    let six = Tensor::arange(0.0, 6.0, 1.0, DType::F32, R).unwrap();
    // (2^63 + 3) * 2 wraps to 6: it used to pass for six elements.
    is_overflow("reshape", six.reshape([(1usize << 63) + 3, 2]));
    is_overflow("view", six.view([(1usize << 63) + 3, 2]));
    let one = Tensor::zeros([1, 1], DType::F32, R).unwrap();
    is_overflow("broadcast_to", one.broadcast_to([1 << 40, 1 << 40]));
    is_overflow("expand", one.expand([1 << 32, 1 << 32]));
}

#[test]
fn ops_whose_result_would_be_too_large_refuse_before_computing() {
    // Views of one element: nothing of their size is ever allocated.
    let one = Tensor::zeros([1, 1], DType::F32, R).unwrap();
    let col = one.broadcast_to([1 << 40, 1]).unwrap();
    let row = one.broadcast_to([1, 1 << 40]).unwrap();
    // Broadcasting a column against a row: compatible, 2^80 elements.
    is_overflow("add", col.add(&row));
    // Zero inner extent, 2^80 outputs.
    let a = Tensor::zeros([1 << 40, 0], DType::F32, R).unwrap();
    let b = Tensor::zeros([0, 1 << 40], DType::F32, R).unwrap();
    is_overflow("matmul", a.matmul(&b));
    let classes = Tensor::from_slice(&[0i64, 1], [2], R).unwrap();
    is_overflow("one_hot", classes.one_hot(1 << 63));
    let x = Tensor::zeros([1, 1, 2, 2], DType::F32, R).unwrap();
    is_overflow(
        "pad",
        x.pad(&[(0, 0), (0, 0), (1 << 31, 0), (1 << 31, 0)], 0.0),
    );
    let w = Tensor::zeros([1, 1, 1, 1], DType::F32, R).unwrap();
    let p = Conv2dParams {
        padding: (1 << 31, 1 << 31),
        ..Conv2dParams::default()
    };
    is_overflow("conv2d", x.conv2d(&w, None, p));
    // 2^20 empty parts of extent 2^40: the stack's extent is 2^60.
    let wide = Tensor::zeros([1 << 40, 0], DType::F32, R).unwrap();
    let parts: Vec<&Tensor> = std::iter::repeat_n(&wide, 1 << 20).collect();
    is_overflow("stack", Tensor::stack(&parts, 0));
    let huge_dim = Tensor::zeros([0, MAX_NUMEL], DType::F32, R).unwrap();
    is_overflow("cat", Tensor::cat(&[&huge_dim, &huge_dim], 1));
}

#[test]
fn an_empty_tensor_with_a_huge_dim_costs_nothing_to_stack() {
    // It used to walk the 2^40 rows of a tensor with no elements.
    let empty = Tensor::zeros([1 << 40, 0], DType::F32, R).unwrap();
    let s = Tensor::stack(&[&empty], 1).unwrap();
    assert_eq!(s.dims(), &[1 << 40, 1, 0]);
    assert_eq!(s.numel(), 0);
}
