//! `scan_strided`'s f32 running product in the simulator against the
//! reference's definition: the product carried in f64, each output
//! rounded once into f32. The kernel carries it as `m·2^e` (no step
//! underflows or overflows), so it meets that definition within one
//! rounding per step: `j·ε/2` relative at step `j`, and exactly in the
//! classes (zeros with their signs, infinities, NaN).

use oxmera_kernel::ir::Value;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{scan_code, scan_strided};
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};

fn cumprod(x: &[f32]) -> Vec<f32> {
    let n = x.len() as u32;
    let bits: Vec<u32> = x.iter().map(|v| v.to_bits()).collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_u32(&bits)),
        Arg::Buffer(Buffer::from_u32(&vec![0; x.len()])),
        Arg::Buffer(Buffer::from_u32(&[n])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Scalar(Value::U32(1)),
        Arg::Scalar(Value::U32(1)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(0)),
        Arg::Scalar(Value::U32(scan_code::PROD)),
        Arg::Scalar(Value::U32(0)),
    ];
    sim::run(
        scan_strided(),
        LaunchConfig::linear(1, 64),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    args[1]
        .buffer()
        .unwrap()
        .to_u32()
        .into_iter()
        .map(f32::from_bits)
        .collect()
}

fn check(x: &[f32]) {
    let got = cumprod(x);
    let mut p = 1f64;
    for (j, (&v, &g)) in x.iter().zip(&got).enumerate() {
        p *= f64::from(v);
        let want = p as f32;
        let what = format!("step {j} of {x:?}: {g:e}, want {want:e}");
        if want.is_nan() || g.is_nan() {
            assert!(want.is_nan() && g.is_nan(), "{what}");
        } else if want == 0.0 || want.is_infinite() || g == 0.0 || g.is_infinite() {
            assert_eq!(g.to_bits(), want.to_bits(), "{what}");
        } else {
            let bound = (j + 2) as f64 * f64::from(f32::EPSILON) / 2.0 * p.abs()
                + f64::from(f32::from_bits(1)) / 2.0;
            assert!((f64::from(g) - p).abs() <= bound, "{what}");
        }
    }
}

#[test]
fn a_float_running_product_neither_underflows_nor_overflows_on_the_way() {
    // The corpus's case: 1e-40 (subnormal) then 2e3 comes back to 2e-37.
    check(&[1e-40, 2e3, 0.5, -3.0]);
    // Far below f32's range and back; far above and back.
    check(&[1e-30, 1e-30, 1e-30, 1e30, 1e30, 1e30, 7.0]);
    check(&[1e30, 1e30, 1e30, 1e-30, 1e-30, 1e-30, -7.0]);
    // Into the subnormals (rounded once), to 0 and ∞ by the product.
    check(&[1e-20, 1e-20, 0.75, 1e-3, 1e-3, 1e-3]);
    check(&[3e38, 2.0, 0.25, 1e20, 1e20]);
    // The classes: signed zeros, infinities, NaN, 0·∞.
    check(&[-2.0, 0.0, 5.0, f32::INFINITY, 1.0]);
    check(&[-0.0, -1.5, 3.0]);
    check(&[f32::NEG_INFINITY, -2.0, 0.5, 0.0]);
    check(&[1.5, f32::NAN, 2.0]);
    check(&[f32::MIN_POSITIVE, f32::from_bits(1), 2e38, 2e38, 0.5]);
    // A long product of values near 1: the per-step roundings.
    let long: Vec<f32> = (0..300)
        .map(|i| 1.0 + ((i * 37 % 19) as f32 - 9.0) * 0.013)
        .collect();
    check(&long);
}
