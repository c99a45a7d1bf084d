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

#[test]
fn integer_and_bool_ops_run_on_the_device_as_on_the_reference() {
    let Some(d) = gpu() else { return };
    let r = Device::Reference;
    let i = Tensor::from_vec(i32s(), [7, 9], r).unwrap();
    let u = Tensor::from_vec(u8s(), [7, 9], r).unwrap();
    // A transposed view against a broadcast row: both read by strides.
    let views = |t: &Tensor| {
        (
            t.t().unwrap(),
            t.narrow(0, 2, 1)
                .unwrap()
                .t()
                .unwrap()
                .expand([9, 7])
                .unwrap(),
        )
    };
    let ops: [(&str, Op); 24] = [
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
    ];
    for x in [&i, &u] {
        let (a, b) = views(x);
        for (name, op) in ops {
            same(d, &a, &b, name, op);
        }
        same(d, &a, &b, "max", |a, _| a.max(&[0, 1], false));
        same(d, &a, &b, "min", |a, _| a.min(&[1], true));
        same(d, &a, &b, "argmin", |a, _| a.argmin(1, false));
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
