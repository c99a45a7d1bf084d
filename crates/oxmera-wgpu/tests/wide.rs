//! f64 on the device (where the adapter stores and computes it: lavapipe
//! does) for the ops that accumulate in order or take a scalar operand —
//! scatter-add, `index_add`, `cumsum`, `cumprod`, and arithmetic with a
//! number — plus `i64` compared with a number: no host fallback, and the
//! reference's bits (each step one correctly rounded f64 operation in the
//! reference's order).
#![cfg(feature = "wgpu")]

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{Tensor, fallback};
// The backend registers itself at link time: name it so it links.
use oxmera_wgpu as _;

mod common;
use common::gpu;

/// Runs `op` on the reference and on `d` over `inputs`, checks that `d`
/// did not fall back for `name`, and compares the results bit for bit.
fn same(d: Device, inputs: &[&Tensor], name: &str, op: impl Fn(&[Tensor]) -> Result<Tensor>) {
    let host: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
    let want = op(&host).unwrap();
    let on_device: Vec<Tensor> = inputs.iter().map(|t| t.to_device(d).unwrap()).collect();
    let before = fallback::count(d, name);
    let got = op(&on_device).unwrap();
    assert_eq!(fallback::count(d, name), before, "{name} fell back");
    let bits = |t: &Tensor| -> Vec<u64> {
        let v = t
            .to_device(Device::Reference)
            .unwrap()
            .to_f64_vec()
            .unwrap();
        v.iter().map(|x| x.to_bits()).collect()
    };
    assert_eq!(bits(&got), bits(&want), "{name}");
}

#[test]
fn f64_accumulations_and_scalar_operands_run_on_the_device() {
    let Some(d) = gpu() else { return };
    if Tensor::zeros([1], DType::F64, d).is_err() {
        eprintln!("skipped: the adapter has no f64");
        return;
    }
    let r = Device::Reference;
    // Magnitudes 1e12 apart beside small ones: a different order of the
    // additions gives different bits.
    let v: Vec<f64> = (0..20)
        .map(|k| {
            let x = ((k * 37 % 11) as f64 - 5.0) * 0.37 + 1e-9 * k as f64;
            if k % 3 == 0 { x * 1e12 } else { x }
        })
        .collect();
    let x = Tensor::from_vec(v.clone(), [4, 5], r).unwrap();
    let xt = x.t().unwrap();
    let index = Tensor::from_vec(
        (0..15).map(|k| (k * 7) % 4).collect::<Vec<i64>>(),
        [3, 5],
        r,
    )
    .unwrap();
    let src = Tensor::from_vec(v[..15].to_vec(), [3, 5], r).unwrap();
    same(d, &[&x, &index, &src], "scatter_add", |t| {
        t[0].scatter_add(0, &t[1], &t[2])
    });
    let picks = Tensor::from_vec(vec![3i64, 0, 3], [3], r).unwrap();
    same(d, &[&x, &picks, &src], "scatter_add", |t| {
        t[0].index_add(0, &t[1], &t[2], 1.0)
    });
    for dim in [0, 1] {
        same(d, &[&xt], "cumsum", |t| t[0].cumsum(dim));
        same(d, &[&xt], "cumprod", |t| t[0].cumprod(dim));
    }
    // A number on either side of each operator, through a view.
    same(d, &[&xt], "add", |t| t[0].add_scalar(0.1));
    same(d, &[&xt], "sub", |t| t[0].rsub_scalar(1e-3));
    same(d, &[&xt], "mul", |t| t[0].mul_scalar(3.7));
    same(d, &[&xt], "div", |t| t[0].rdiv_scalar(2.5));
    same(d, &[&xt], "div", |t| t[0].div_scalar(-7.0));
    // i64 compared with a number: the number filled once and broadcast.
    let i = Tensor::from_vec(vec![i64::MIN, -1, 0, 1 << 40, i64::MAX, 7], [2, 3], r).unwrap();
    same(d, &[&i], "gt", |t| t[0].gt_scalar(0));
    same(d, &[&i], "le", |t| t[0].t()?.le_scalar(1i64 << 40));
}

#[test]
fn f64_library_functions_run_on_the_device_within_their_bounds() {
    let Some(d) = gpu() else { return };
    if Tensor::zeros([1], DType::F64, d).is_err() {
        eprintln!("skipped: the adapter has no f64");
        return;
    }
    // Values with bits f32 cannot hold, over the range each function
    // meets in training, through a transposed view.
    let v: Vec<f64> = (0..60)
        .map(|k| (k as f64 - 30.0) * 0.731 + 1e-10 * k as f64)
        .collect();
    let host = Tensor::from_vec(v, [6, 10], Device::Reference)
        .unwrap()
        .t()
        .unwrap();
    let x = host.to_device(d).unwrap();
    type Op = fn(&Tensor) -> Result<Tensor>;
    let ops: [(&str, Op); 11] = [
        ("exp", |t| t.exp()),
        // Two tensors, the second a broadcast row.
        ("pow", |t| {
            t.abs()?.pow(&t.narrow(0, 0, 1)?.mul_scalar(0.1)?)
        }),
        ("hypot", |t| t.hypot(&t.narrow(0, 1, 1)?)),
        ("log", |t| t.abs()?.log()),
        ("tanh", |t| t.tanh()),
        ("sigmoid", |t| t.sigmoid()),
        ("powf", |t| t.abs()?.powf(2.5)),
        ("logcumsumexp", |t| t.logcumsumexp(1)),
        ("gelu_tanh", |t| t.gelu_tanh()),
        ("softmax", |t| t.softmax(1)),
        ("log_softmax", |t| t.log_softmax(0)),
    ];
    for (name, op) in ops {
        let before = fallback::count(d, name);
        let got = op(&x).unwrap().to_f64_vec().unwrap();
        assert_eq!(fallback::count(d, name), before, "{name} fell back");
        let want = op(&host).unwrap().to_f64_vec().unwrap();
        for (g, w) in got.iter().zip(&want) {
            // A coarse device check, 60ε·max(|want|, 1): each op's own
            // bound (4ε·|want| and up; the scan's grows with its 10 steps)
            // is held by the simulator sweeps of `tests/wide_math.rs` and
            // by the conformance corpus on this same device.
            let bound = 60.0 * f64::EPSILON * w.abs().max(1.0);
            assert!((g - w).abs() <= bound, "{name}: {g:e} vs {w:e}");
        }
    }
}

#[test]
fn f64_reductions_walk_on_the_device_as_the_reference() {
    let Some(d) = gpu() else { return };
    if Tensor::zeros([1], DType::F64, d).is_err() {
        eprintln!("skipped: the adapter has no f64");
        return;
    }
    let mut v: Vec<f64> = (0..42)
        .map(|k| ((k * 29 % 13) as f64 - 6.0) * 0.43 + 1e-11 * k as f64)
        .collect();
    v[9] = f64::NAN;
    let r = Device::Reference;
    let with_nan = Tensor::from_vec(v.clone(), [6, 7], r).unwrap().t().unwrap();
    v[9] = 2.0;
    let finite = Tensor::from_vec(v, [6, 7], r).unwrap().t().unwrap();
    // Max, min, the positions (a NaN first) and the product: bit for bit.
    for x in [&with_nan, &finite] {
        same(d, &[x], "max", |t| t[0].max(&[1], false));
        same(d, &[x], "min", |t| t[0].min(&[0], true));
        same(d, &[x], "argmax", |t| t[0].argmax(1, false));
        same(d, &[x], "argmin", |t| t[0].argmin(0, false));
        same(d, &[x], "prod", |t| t[0].prod(&[1], false));
    }
    // Two passes in the reference's order: the same bits where the driver
    // does not fuse the square into the sum (lavapipe may), else within
    // a few ulps; log-sum-exp within its bound.
    type Op = fn(&Tensor) -> Result<Tensor>;
    let ops: [(&str, Op); 3] = [
        ("var", |t| t.var(&[1], 1.0, false)),
        ("std", |t| t.std(&[0], 0.0, true)),
        ("logsumexp", |t| t.logsumexp(&[1], false)),
    ];
    let x = finite.to_device(d).unwrap();
    for (name, op) in ops {
        let before = fallback::count(d, name);
        let got = op(&x).unwrap().to_f64_vec().unwrap();
        assert_eq!(fallback::count(d, name), before, "{name} fell back");
        let want = op(&finite).unwrap().to_f64_vec().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 16.0 * f64::EPSILON * w.abs(),
                "{name}: {g:e} vs {w:e}"
            );
        }
    }
}
