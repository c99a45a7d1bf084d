//! The builtins `pow` (`x.powf(y)`), `erf(x)`: their values in the
//! simulator, checked by hand where a reader can, and against the
//! reference backend's `f64` erf where they cannot; and the polynomial the
//! emitters write for `erf`, held to its stated bound.

use oxmera_kernel::emit::erf_approx::{MAX_ABS, MAX_ULP, erf_approx};
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};

/// `out[i] = x[i].powf(y[i])`, `both[i] = pow(x[i], y[i])` (the free
/// spelling), `e[i] = erf(x[i])`.
#[kernel]
fn math2(x: &[f32], y: &[f32], out: &mut [f32], both: &mut [f32], e: &mut [f32], n: u32) {
    let i = thread_idx_x();
    if i < n {
        out[i] = x[i].powf(y[i]);
        both[i] = pow(x[i], y[i]);
        e[i] = erf(x[i]);
    }
}

/// Runs `math2` on pairs; returns (`powf`, `pow`, `erf` of x).
fn run_math2(x: &[f32], y: &[f32]) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let n = x.len();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(x)),
        Arg::Buffer(Buffer::from_f32(y)),
        Arg::Buffer(Buffer::from_f32(&vec![0.0; n])),
        Arg::Buffer(Buffer::from_f32(&vec![0.0; n])),
        Arg::Buffer(Buffer::from_f32(&vec![0.0; n])),
        Arg::Scalar(oxmera_kernel::ir::Value::U32(n as u32)),
    ];
    let launch = LaunchConfig::linear(1, n.next_multiple_of(32) as u32);
    sim::run(math2(), launch, &mut args, &SimOptions::default()).unwrap();
    let get = |k: usize| args[k].buffer().unwrap().to_f32();
    (get(2), get(3), get(4))
}

#[test]
fn pow_gives_hand_checked_values_and_rusts_special_cases() {
    let inf = f32::INFINITY;
    let nan = f32::NAN;
    // (x, y, Rust's x.powf(y)), each checkable by hand:
    let cases: [(f32, f32, f32); 22] = [
        (2.0, 10.0, 1024.0),
        (9.0, 0.5, 3.0),
        (-2.0, 3.0, -8.0), // a negative base to an odd integer keeps its sign
        (-2.0, 2.0, 4.0),
        (-8.0, 1.0 / 3.0, nan), // a negative base to a non-integer: no real value
        (0.0, 0.0, 1.0),        // x^0 = 1 for every x ...
        (nan, 0.0, 1.0),        // ... even NaN
        (1.0, nan, 1.0),        // 1^y = 1 even for NaN
        (2.0, nan, nan),
        (nan, 1.0, nan),
        (0.0, -1.0, inf), // 0 to a negative power: ∞, signed by an odd power
        (-0.0, -1.0, -inf),
        (-0.0, -2.0, inf),
        (-0.0, 3.0, -0.0),
        (0.5, inf, 0.0), // |x| < 1 to +∞ vanishes, to −∞ explodes
        (0.5, -inf, inf),
        (-1.0, inf, 1.0), // (−1)^±∞ = 1
        (2.0, -inf, 0.0),
        (-inf, 3.0, -inf), // −∞ to an odd power keeps its sign
        (-inf, -3.0, -0.0),
        (-inf, 0.5, inf),
        (inf, -1.0, 0.0),
    ];
    let x: Vec<f32> = cases.iter().map(|c| c.0).collect();
    let y: Vec<f32> = cases.iter().map(|c| c.1).collect();
    let (out, both, _) = run_math2(&x, &y);
    for (k, &(x, y, want)) in cases.iter().enumerate() {
        for got in [out[k], both[k]] {
            let same = got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
            assert!(same, "{x}.powf({y}) = {got}, want {want}");
        }
    }
}

#[test]
fn erf_gives_table_values_in_the_simulator() {
    // Abramowitz & Stegun, table 7.1: erf(0.5) = 0.5204998778,
    // erf(1) = 0.8427007929, erf(2) = 0.9953222650; an odd function.
    let x = [0.0, -0.0, 0.5, 1.0, 2.0, -1.0, 5.0, f32::NEG_INFINITY];
    let (_, _, e) = run_math2(&x, &[0.0; 8]);
    assert_eq!(e[0].to_bits(), 0.0f32.to_bits());
    assert_eq!(e[1].to_bits(), (-0.0f32).to_bits());
    assert_eq!(
        &e[2..],
        &[
            0.520_499_9,
            0.842_700_8,
            0.995_322_3,
            -0.842_700_8,
            1.0,
            -1.0
        ]
    );
}

/// The points of both sweeps: every 2^-16 of [-5, 5] and a geometric sweep
/// from 1e-30 to 1, with both signs.
fn sweep() -> Vec<f32> {
    let mut xs: Vec<f32> = (-(5 << 16)..=(5 << 16))
        .map(|k| k as f32 / 65536.0)
        .collect();
    let steps = 200_000;
    for k in 0..=steps {
        let x = (1e-30f64.ln() * (1.0 - k as f64 / steps as f64)).exp() as f32;
        xs.push(x);
        xs.push(-x);
    }
    xs
}

#[test]
fn erf_is_the_reference_erf_rounded_to_f32() {
    // The simulator's erf (computed in f64 by a series, rounded once) against
    // the reference backend's f64 erf (Cody's rational approximations),
    // rounded to f32: equal at every point.
    let mut differ = Vec::new();
    for x in sweep() {
        let sim = oxmera_kernel::eval::math(
            oxmera_kernel::ir::MathFn::Erf,
            &[oxmera_kernel::ir::Value::F32(x)],
        );
        let Ok(oxmera_kernel::ir::Value::F32(got)) = sim else {
            panic!("erf({x}) gave {sim:?}")
        };
        let want = oxmera_reference::scalar::erf(f64::from(x)) as f32;
        if got.to_bits() != want.to_bits() {
            differ.push((x, got, want));
        }
    }
    assert!(
        differ.is_empty(),
        "{} points differ: {:?}",
        differ.len(),
        &differ[..differ.len().min(10)]
    );
}

/// Units in the last place of the correctly rounded f32 of `exact`.
fn ulps(got: f32, exact: f64) -> f64 {
    let r = exact as f32;
    let spacing = if r == 0.0 {
        f64::from(f32::from_bits(1))
    } else {
        let up = f32::from_bits(r.abs().to_bits() + 1);
        f64::from(up) - f64::from(r.abs())
    };
    (f64::from(got) - exact).abs() / spacing
}

#[test]
fn the_emitters_erf_formula_evaluated_on_the_host_is_within_its_stated_bound() {
    // The formula both emitters write (one coefficient table,
    // emit/erf_approx.rs; that the emitted text follows it is read, not
    // tested), evaluated on the host in f32 with
    // each fma fused (PTX's fma.rn) and unfused (WGSL's fma need not fuse),
    // against the reference's f64 erf.
    for fused in [true, false] {
        let (mut worst_ulp, mut worst_abs, mut at) = (0.0f64, 0.0f64, 0.0f32);
        for x in sweep() {
            let exact = oxmera_reference::scalar::erf(f64::from(x));
            let got = erf_approx(x, fused);
            let u = ulps(got, exact);
            if u > worst_ulp {
                (worst_ulp, at) = (u, x);
            }
            worst_abs = worst_abs.max((f64::from(got) - exact).abs());
        }
        eprintln!(
            "erf_approx (fused: {fused}): {worst_ulp:.3} ulp at {at}, {worst_abs:.3e} absolute"
        );
        assert!(
            worst_ulp <= MAX_ULP,
            "fused {fused}: {worst_ulp} ulp at {at}"
        );
        assert!(worst_abs <= MAX_ABS, "fused {fused}: {worst_abs} absolute");
    }
}
