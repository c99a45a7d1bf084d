//! Integer and bool ops on the device: no host fallback, and the
//! reference's results bit for bit over values that reach every branch
//! (zero and -1 divisors, `MIN`, negative exponents, wrapping), through
//! strided views, and with byte tensors whose length is no multiple of 4.
#![cfg(feature = "wgpu")]

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{Tensor, fallback};
// The backend registers itself at link time: name it so it links.
use oxmera_wgpu as _;

mod common;
use common::gpu;

/// `[7, 9]` i32 values with the edge cases in the first rows.
fn i32s() -> Vec<i32> {
    let edges = [
        0,
        1,
        -1,
        2,
        -2,
        7,
        -7,
        31,
        -31,
        i32::MIN,
        i32::MAX,
        65536,
        -65536,
    ];
    (0..63)
        .map(|k| match k {
            k if k < edges.len() => edges[k],
            k => ((k as i64 * 2_654_435_761) % 41 - 20) as i32,
        })
        .collect()
}

fn u8s() -> Vec<u8> {
    (0..63)
        .map(|k: u32| (k.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

/// Runs `op` on the reference and on `d`, checks the device did not fall
/// back for `name`, and compares the results exactly (as `i64`).
fn same(
    d: Device,
    x: &Tensor,
    y: &Tensor,
    name: &str,
    op: impl Fn(&Tensor, &Tensor) -> Result<Tensor>,
) {
    let want = op(x, y).unwrap();
    let (xd, yd) = (x.to_device(d).unwrap(), y.to_device(d).unwrap());
    let before = fallback::count(d, name);
    let got = op(&xd, &yd).unwrap();
    assert_eq!(
        fallback::count(d, name),
        before,
        "{name} {:?} fell back",
        x.dtype()
    );
    assert_eq!(got.dtype(), want.dtype(), "{name}");
    let as_i64 = |t: &Tensor| {
        t.to_device(Device::Reference)
            .unwrap()
            .to_dtype(DType::I64)
            .unwrap()
            .to_vec::<i64>()
            .unwrap()
    };
    assert_eq!(as_i64(&got), as_i64(&want), "{name} {:?}", x.dtype());
}

type Op = fn(&Tensor, &Tensor) -> Result<Tensor>;

/// The binary, scalar, unary, reduction and matmul ops every integer
/// dtype runs natively, each over `(a, b)`.
fn ops() -> [(&'static str, Op); 24] {
    [
        ("add", |a, b| a.add(b)),
        ("sub", |a, b| a.sub(b)),
        ("mul", |a, b| a.mul(b)),
        ("div", |a, b| a.div(b)),
        ("rem", |a, b| a.rem(b)),
        ("fmod", |a, b| a.fmod(b)),
        ("pow", |a, b| a.pow(b)),
        ("maximum", |a, b| a.maximum(b)),
        ("minimum", |a, b| a.minimum(b)),
        ("eq", |a, b| a.eq(b)),
        ("ne", |a, b| a.ne(b)),
        ("lt", |a, b| a.lt(b)),
        ("ge", |a, b| a.ge(b)),
        ("add", |a, _| a.add_scalar(3)),
        ("sub", |a, _| a.rsub_scalar(5)),
        ("abs", |a, _| a.abs()),
        ("sign", |a, _| a.sign()),
        ("square", |a, _| a.square()),
        ("relu", |a, _| a.relu()),
        ("clamp", |a, _| a.clamp(Some(2.5), Some(100.0))),
        ("sum", |a, _| a.sum(&[1], false)),
        ("prod", |a, _| a.prod(&[0], true)),
        ("argmax", |a, _| a.argmax(0, false)),
        ("matmul", |a, b| a.matmul(&b.t()?)),
    ]
}

/// The value reductions and positions over views `a` (`b` unused).
fn reductions(d: Device, a: &Tensor, b: &Tensor) {
    same(d, a, b, "max", |a, _| a.max(&[0, 1], false));
    same(d, a, b, "min", |a, _| a.min(&[1], true));
    same(d, a, b, "argmin", |a, _| a.argmin(1, false));
}

/// A transposed view of `t` (`[7, 9]`) against a broadcast row of it:
/// both read by strides.
fn views(t: &Tensor) -> (Tensor, Tensor) {
    (
        t.t().unwrap(),
        t.narrow(0, 2, 1)
            .unwrap()
            .t()
            .unwrap()
            .expand([9, 7])
            .unwrap(),
    )
}

#[test]
fn integer_and_bool_ops_run_on_the_device_as_on_the_reference() {
    let Some(d) = gpu() else { return };
    let r = Device::Reference;
    let i = Tensor::from_vec(i32s(), [7, 9], r).unwrap();
    let u = Tensor::from_vec(u8s(), [7, 9], r).unwrap();
    for x in [&i, &u] {
        let (a, b) = views(x);
        for (name, op) in ops() {
            same(d, &a, &b, name, op);
        }
        reductions(d, &a, &b);
        same(d, &a, &b, "any", |a, _| a.any(&[1], false));
        same(d, &a, &b, "all", |a, _| a.all(&[0], false));
    }
    same(d, &i, &i, "neg", |a, _| a.neg());
    // Bools: comparisons (isnan of an integer is `x != x`) and all/any.
    let bools =
        Tensor::from_vec((0..13).map(|k| k % 3 != 0).collect::<Vec<bool>>(), [13], r).unwrap();
    same(d, &bools, &bools.flip(&[0]).unwrap(), "eq", |a, b| a.eq(b));
    same(d, &bools, &bools, "all", |a, _| a.all(&[0], false));
    same(d, &bools, &bools, "any", |a, _| a.any(&[0], false));
    same(d, &i, &i, "ne", |a, _| a.isnan());
    // all/any of f32: NaN and -0 read by their bits.
    let f = Tensor::from_vec(vec![1.0f32, f32::NAN, -0.0, 0.0, 2.0, 3.0], [2, 3], r).unwrap();
    same(d, &f, &f, "any", |a, _| a.any(&[0], false));
    same(d, &f, &f, "all", |a, _| a.all(&[1], false));
}

/// `[7, 9]` i64 values: the edges of the word pairs' arithmetic (`MIN`,
/// `MAX`, values across the word boundary, a divisor past one word, 0 and
/// -1), then values over the whole range and small ones.
fn i64s() -> Vec<i64> {
    let edges = [
        0,
        1,
        -1,
        2,
        -7,
        63,
        i64::MIN,
        i64::MAX,
        1 << 32,
        -(1 << 32),
        (1 << 32) - 1,
        -(3 << 40) - 5,
        0x1234_5678_9abc_def0,
    ];
    (0..63)
        .map(|k: i64| match k {
            k if (k as usize) < edges.len() => edges[k as usize],
            k if k % 2 == 0 => k.wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64),
            k => (k * 2_654_435_761) % 41 - 20,
        })
        .collect()
}

#[test]
fn i64_ops_run_on_the_device_as_on_the_reference() {
    let Some(d) = gpu() else { return };
    let x = Tensor::from_vec(i64s(), [7, 9], Device::Reference).unwrap();
    let (a, b) = views(&x);
    for (name, op) in ops() {
        same(d, &a, &b, name, op);
    }
    reductions(d, &a, &b);
    same(d, &x, &x, "neg", |a, _| a.neg());
    // A scalar past one word, on either side, and bounds past one word.
    same(d, &a, &b, "mul", |a, _| a.mul_scalar(-(3i64 << 40)));
    same(d, &a, &b, "div", |a, _| a.rdiv_scalar(1i64 << 50));
    same(d, &a, &b, "clamp", |a, _| {
        a.clamp(Some(-(2f64.powi(40))), Some(2f64.powi(62)))
    });
}
