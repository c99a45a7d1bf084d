//! The library functions of `unary_math_strided` and `binary_math_strided`
//! on the driver (which may reassociate and contract floats): swept over
//! their domains, computed on the device (no host fallback), and within
//! the ulp bounds their kernels derive — the same bounds
//! `oxmera-kernel`'s `tests/math.rs` holds the simulator to.
#![cfg(feature = "wgpu")]

use oxmera_core::Device;
use oxmera_tensor::{Tensor, fallback};
// The backend registers itself at link time: name it so it links.
use oxmera_wgpu as _;

mod common;
use common::gpu;

fn ulp_key(v: f32) -> i64 {
    let b = v.to_bits() as i64;
    if b >> 31 == 1 { -(b & 0x7fff_ffff) } else { b }
}

/// `n` evenly spaced values from `lo` to `hi`.
fn sweep(lo: f32, hi: f32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| lo + (hi - lo) * i as f32 / (n - 1) as f32)
        .collect()
}

/// The worst distance in f32 steps from `got` to `want` over normal
/// results, and where.
fn worst(x: &[f32], got: &[f32], want: impl Fn(f64) -> f64) -> (i64, f32) {
    let mut worst = (0i64, 0f32);
    for (&v, &g) in x.iter().zip(got) {
        let w = want(f64::from(v)) as f32;
        if !w.is_normal() {
            continue;
        }
        let u = (ulp_key(g) - ulp_key(w)).abs();
        if u > worst.0 {
            worst = (u, v);
        }
    }
    worst
}

type Case = (
    &'static str,
    Vec<f32>,
    fn(&Tensor) -> oxmera_core::Result<Tensor>,
    fn(f64) -> f64,
    i64,
);

#[test]
fn unary_library_functions_on_the_device_are_within_their_bounds() {
    let Some(d) = gpu() else { return };
    let positive: Vec<f32> = (0..8_000)
        .map(|i| 2f32.powf(-149.0 + i as f32 * (277.0 / 8_000.0)))
        .chain(sweep(0.9, 1.1, 2_000))
        .collect();
    // Every binade to f32::MAX for the trigonometric functions (their
    // reduction is exact); tan's results near its poles are huge and
    // still within its 3 ulp.
    let wide: Vec<f32> = (0..10_000)
        .map(|i| 2f32.powf(-20.0 + i as f32 * (147.9 / 10_000.0)))
        .chain(sweep(-10.0, 10.0, 10_000))
        .collect();
    let cases: [Case; 13] = [
        (
            "exp2",
            sweep(-149.0, 127.0, 10_000),
            Tensor::exp2,
            f64::exp2,
            2,
        ),
        (
            "expm1",
            sweep(-20.0, 88.0, 10_000),
            Tensor::expm1,
            f64::exp_m1,
            3,
        ),
        (
            "sinh",
            sweep(-89.0, 89.0, 10_000),
            Tensor::sinh,
            f64::sinh,
            4,
        ),
        (
            "cosh",
            sweep(-89.0, 89.0, 10_000),
            Tensor::cosh,
            f64::cosh,
            4,
        ),
        ("log2", positive.clone(), Tensor::log2, f64::log2, 4),
        ("log10", positive, Tensor::log10, f64::log10, 4),
        (
            "atan",
            sweep(-40.0, 40.0, 10_000),
            Tensor::atan,
            f64::atan,
            2,
        ),
        ("asin", sweep(-1.0, 1.0, 10_000), Tensor::asin, f64::asin, 4),
        ("acos", sweep(-1.0, 1.0, 10_000), Tensor::acos, f64::acos, 4),
        (
            "erf",
            sweep(-5.0, 5.0, 10_000),
            Tensor::erf,
            oxmera_reference::scalar::erf,
            2,
        ),
        ("sin", wide.clone(), Tensor::sin, f64::sin, 2),
        ("cos", wide.clone(), Tensor::cos, f64::cos, 2),
        ("tan", wide, Tensor::tan, f64::tan, 3),
    ];
    for (name, x, op, want, bound) in cases {
        let t = Tensor::from_vec(x.clone(), [x.len()], d).unwrap();
        let before = fallback::count(d, name);
        let got = op(&t).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(fallback::count(d, name), before, "{name} ran on the host");
        let (u, at) = worst(&x, &got, want);
        assert!(u <= bound, "{name}: {u} ulp at {at:e} on the device");
    }
}

#[test]
fn binary_library_functions_on_the_device_match_the_reference() {
    let Some(d) = gpu() else { return };
    let a: Vec<f32> = sweep(-9.0, 9.0, 4_000);
    let b: Vec<f32> = sweep(-4.0, 4.0, 4_000).iter().rev().copied().collect();
    let (ta, tb) = (
        Tensor::from_vec(a.clone(), [a.len()], d).unwrap(),
        Tensor::from_vec(b.clone(), [b.len()], d).unwrap(),
    );
    let host = |v: &[f32]| Tensor::from_vec(v.to_vec(), [v.len()], Device::Reference).unwrap();
    let (ha, hb) = (host(&a), host(&b));
    type Binary = fn(&Tensor, &Tensor) -> oxmera_core::Result<Tensor>;
    // fmod and rem exactly; atan2 within 3 ulp.
    let cases: [(&str, Binary, i64); 3] = [
        ("fmod", Tensor::fmod, 0),
        ("rem", Tensor::rem, 0),
        ("atan2", Tensor::atan2, 3),
    ];
    for (name, op, bound) in cases {
        let before = fallback::count(d, name);
        let got = op(&ta, &tb).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(fallback::count(d, name), before, "{name} ran on the host");
        let want = op(&ha, &hb).unwrap().to_vec::<f32>().unwrap();
        for ((g, w), (x, y)) in got.iter().zip(&want).zip(a.iter().zip(&b)) {
            let u = (ulp_key(*g) - ulp_key(*w)).abs();
            assert!(
                u <= bound || (g.is_nan() && w.is_nan()),
                "{name}({x:e}, {y:e}) = {g:e} on the device, want {w:e}"
            );
        }
    }
}

#[test]
fn logsumexp_runs_on_the_device_with_the_references_infinities() {
    let Some(d) = gpu() else { return };
    // Rows: ordinary values, one far above the rest (the shift matters),
    // all −∞ (−∞), a +∞ among finite values (+∞), a NaN (NaN).
    let inf = f32::INFINITY;
    let rows: Vec<f32> = [
        [0.5, -1.25, 3.0, 2.0],
        [90.0, 1.0, -3.0, 89.5],
        [-inf, -inf, -inf, -inf],
        [1.0, inf, -2.0, 0.0],
        [1.0, f32::NAN, -2.0, 0.0],
    ]
    .concat();
    let host = Tensor::from_vec(rows, [5, 4], Device::Reference).unwrap();
    let x = host.to_device(d).unwrap();
    let before = fallback::count(d, "logsumexp");
    let cases = [
        (
            x.logsumexp(&[1], false).unwrap(),
            host.logsumexp(&[1], false).unwrap(),
        ),
        (
            x.logsumexp(&[0], true).unwrap(),
            host.logsumexp(&[0], true).unwrap(),
        ),
        (
            x.t().unwrap().logsumexp(&[0], false).unwrap(),
            host.t().unwrap().logsumexp(&[0], false).unwrap(),
        ),
    ];
    // Over an empty dim: −∞, the log of an empty sum.
    let empty = Tensor::zeros([3, 0], oxmera_core::DType::F32, d).unwrap();
    let lse = empty
        .logsumexp(&[1], false)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(lse, vec![f32::NEG_INFINITY; 3]);
    assert_eq!(
        fallback::count(d, "logsumexp"),
        before,
        "logsumexp ran on the host"
    );
    for (got, want) in cases {
        assert_eq!(got.dims(), want.dims());
        let (g, w) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        for (a, b) in g.iter().zip(&w) {
            // m + ln Σ: the sum of 4 or 5 terms, exp and ln a few ulp
            // each, the final addition relative to |m| + |want|.
            let ok = (a.is_nan() && b.is_nan())
                || a == b
                || (a - b).abs() <= 8.0 * f32::EPSILON * b.abs().max(1.0);
            assert!(ok, "logsumexp: {a} on the device, {b} on the host");
        }
    }
}

/// Seeded values in `[-1, 1)`: a multiplicative hash of the position.
fn spread(n: usize, seed: u64) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let h = (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
            let h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            (h >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// Runs `op` on the host tensor and on its device copy, and checks the
/// device's values against the reference's: equal when `rel` is 0, else
/// within `rel` of the larger of the value and 1.
fn agrees(d: Device, host: &Tensor, name: &str, rel: f64, op: impl Fn(&Tensor) -> Tensor) {
    let want = op(host);
    let got = op(&host.to_device(d).unwrap());
    assert_eq!(got.dims(), want.dims(), "{name}");
    let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = (a.is_nan() && b.is_nan())
            || a.to_bits() == b.to_bits()
            || (rel > 0.0 && (a - b).abs() <= rel * b.abs().max(1.0));
        assert!(ok, "{name} at {i}: {a} on the device, {b} on the host");
    }
}

/// Walks longer than a thread may take (4096 elements) are cut into
/// chunks whose partials are reduced again: every op below runs with no
/// host fallback, exactly (max, min, argmax, argmin, the integers' sums,
/// products and counts) or within a bound (the compositions).
#[test]
fn long_walks_run_in_chunks_on_the_device() {
    use oxmera_core::DType;
    let Some(d) = gpu() else { return };
    let r = Device::Reference;
    let before = fallback::total(d);
    // Three rows of 10000: a NaN late in row 1; row 2's maximum twice, in
    // the second and the third chunk (the first must win).
    let mut v = spread(30_000, 7);
    v[10_000 + 9_000] = f32::NAN;
    v[20_000 + 5_000] = 4.0;
    v[20_000 + 9_999] = 4.0;
    v[20_000 + 100] = -4.0;
    let x = Tensor::from_vec(v.clone(), [3, 10_000], r).unwrap();
    let xt = Tensor::from_vec(v, [10_000, 3], r).unwrap().t().unwrap();
    for t in [&x, &xt] {
        agrees(d, t, "max", 0.0, |t| t.max(&[1], false).unwrap());
        agrees(d, t, "min", 0.0, |t| t.min(&[-1], true).unwrap());
        agrees(d, t, "argmax", 0.0, |t| t.argmax(1, false).unwrap());
        agrees(d, t, "argmin", 0.0, |t| t.argmin(1, true).unwrap());
    }
    // Two reduced dims that no view can merge: one copy, then chunks.
    let y = Tensor::from_vec(spread(70 * 3 * 80, 3), [70, 3, 80], r)
        .unwrap()
        .permute(&[2, 1, 0])
        .unwrap();
    agrees(d, &y, "max", 0.0, |t| t.max(&[0, 2], false).unwrap());
    agrees(d, &y, "argmax_all", 0.0, |t| t.argmax_all().unwrap());
    // The compositions: sums of up to 10000 terms by the blocked sum, exp
    // and ln within a few ulp; 1e-5 is a coarse check (the corpus's
    // `large.toml` cases hold each op to its derived bound).
    let rows = x.narrow(0, 2, 1).unwrap();
    agrees(d, &rows, "var", 1e-5, |t| t.var(&[1], 1.0, false).unwrap());
    agrees(d, &rows, "std", 1e-5, |t| t.std(&[1], 0.0, true).unwrap());
    agrees(d, &rows, "logsumexp", 1e-5, |t| {
        t.logsumexp(&[1], false).unwrap()
    });
    agrees(d, &xt, "softmax", 1e-5, |t| t.softmax(1).unwrap());
    agrees(d, &xt, "log_softmax", 1e-5, |t| t.log_softmax(1).unwrap());
    agrees(d, &rows, "layer_norm", 1e-5, |t| {
        t.layer_norm(1, 1e-5).unwrap()
    });
    // A product of 6000 factors near 1, taken in f64 and rounded once.
    let near_one: Vec<f32> = spread(6_000, 11).iter().map(|u| 1.0 + u / 64.0).collect();
    let p = Tensor::from_vec(near_one, [6_000], r).unwrap();
    agrees(d, &p, "prod", 2.0 * f64::from(f32::EPSILON), |t| {
        t.prod(&[0], false).unwrap()
    });
    // Integers past the old 16384-element walk: wrapping sums and
    // products, extremes, first indices, counts.
    let ints: Vec<i32> = (0..40_000)
        .map(|i: i32| i.wrapping_mul(2_654_435_761u32 as i32) >> 8)
        .collect();
    let n = Tensor::from_vec(ints, [2, 20_000], r).unwrap();
    agrees(d, &n, "sum", 0.0, |t| t.sum(&[1], false).unwrap());
    agrees(d, &n, "prod", 0.0, |t| t.prod(&[1], false).unwrap());
    agrees(d, &n, "max", 0.0, |t| t.max(&[1], false).unwrap());
    agrees(d, &n, "argmin", 0.0, |t| t.argmin(1, false).unwrap());
    let wide = n.to_dtype(DType::I64).unwrap();
    agrees(d, &wide, "sum_all", 0.0, |t| t.sum_all().unwrap());
    let flags = n.gt_scalar(0).unwrap();
    agrees(d, &flags, "count", 0.0, |t| t.sum(&[1], false).unwrap());
    agrees(d, &flags, "all", 0.0, |t| t.all(&[1], false).unwrap());
    // Halves widen to f32 first; f64 where the adapter stores it.
    let h = x.to_dtype(DType::F16).unwrap();
    agrees(d, &h, "max", 0.0, |t| t.max(&[1], false).unwrap());
    if Tensor::zeros([1], DType::F64, d).is_ok() {
        let w = xt.to_dtype(DType::F64).unwrap();
        agrees(d, &w, "argmax", 0.0, |t| t.argmax(1, false).unwrap());
        agrees(d, &w, "max", 0.0, |t| t.max(&[1], false).unwrap());
        agrees(d, &w, "var", 1e-12, |t| t.var(&[1], 1.0, false).unwrap());
    }
    assert_eq!(fallback::total(d), before, "{:?}", fallback::report());
}
