//! `unary_math_f64` and `binary_math_f64` in the simulator against the reference backend's f64
//! functions (Rust's `f64` methods and `oxmera_reference::scalar`), over
//! each function's domain and the f64 special values: every element
//! within the conformance bound of its op (`oxmera-conformance`'s
//! tolerance table at f64, restated here per op), exp and ln within 1
//! ulp, and the exact ops bit for bit.

use oxmera_kernel::ir::Value;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{
    binary_math_code, binary_math_f64, unary_math_f64, wide_math_code as c,
};
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
use oxmera_reference::scalar;

const EPS: f64 = f64::EPSILON;

/// Special values, sweeps over `[-40, 40]` and `±2^e` for `e` in
/// `[-1074, 1023]`.
fn inputs() -> Vec<f64> {
    let mut v = vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -2.5,
        2.5,
        3.0,
        -3.0,
        f64::MAX,
        -f64::MAX,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        -f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        709.78,
        709.782_712_893_384,
        -745.1,
        -708.5,
        1e-300,
        -1e-10,
        1.0 + EPS,
        1.0 - EPS / 2.0,
        0.346_573_590_279_972_65,
        -0.346_573_590_279_972_7,
        22.0,
        -21.99,
        40.0,
        1e16 + 1.0,
        4_503_599_627_370_497.5,
    ];
    v.extend((0..=2000).map(|k| -40.0 + 0.04 * k as f64 + 1e-9));
    v.extend((-1074..=1023).step_by(3).flat_map(|e| {
        let x = 2f64.powi(e) * 1.3;
        [x, -x]
    }));
    v
}

fn run(op: u32, p0: f64, p1: f64, x: &[f64]) -> Vec<f64> {
    let n = x.len() as u32;
    let mut args = vec![
        Arg::Buffer(Buffer::from_f64(x)),
        Arg::Buffer(Buffer::from_f64(&vec![0.0; x.len()])),
        Arg::Buffer(Buffer::from_u32(&[n])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Scalar(Value::U32(1)),
        Arg::Scalar(Value::U32(n)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
        Arg::Scalar(Value::F64(p0)),
        Arg::Scalar(Value::F64(p1)),
    ];
    let launch = LaunchConfig::linear(n.div_ceil(64), 64);
    sim::run(unary_math_f64(), launch, &mut args, &SimOptions::default()).unwrap();
    args[1].buffer().unwrap().to_f64()
}

/// Ulps between two finite f64s of one sign (or both zero).
fn ulps(got: f64, want: f64) -> u64 {
    let key = |v: f64| {
        let b = v.to_bits() as i64;
        if b < 0 { -(b & i64::MAX) } else { b }
    };
    (key(got) - key(want)).unsigned_abs()
}

/// The conformance comparison at f64: NaN with NaN, an infinity with the
/// same one, else within `ε·max(|want|, tiny) + acc·ε·|want|`.
fn meets(got: f64, want: f64, acc: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= EPS * want.abs().max(f64::MIN_POSITIVE) + acc * EPS * want.abs()
}

/// Every element of `op` within `acc` of the bound, and within `max_ulp`
/// ulps where given (finite normal results); `acc` 0 asks for the bits.
fn check(name: &str, op: u32, p: (f64, f64), want: impl Fn(f64) -> f64, acc: f64, max_ulp: u64) {
    let x = inputs();
    let got = run(op, p.0, p.1, &x);
    let mut worst = 0;
    for (&v, &g) in x.iter().zip(&got) {
        let w = want(v);
        if acc == 0.0 {
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{name}({v:e}) = {g:e}, want {w:e} bit for bit"
            );
            continue;
        }
        assert!(meets(g, w, acc), "{name}({v:e}) = {g:e}, want {w:e}");
        if w.is_normal() && g.is_finite() {
            worst = worst.max(ulps(g, w));
        }
    }
    assert!(worst <= max_ulp, "{name}: {worst} ulp");
}

#[test]
fn exp_and_ln_are_within_an_ulp() {
    check("exp", c::EXP, (0.0, 0.0), f64::exp, 4.0, 1);
    check("ln", c::LOG, (0.0, 0.0), f64::ln, 4.0, 1);
}

#[test]
fn functions_built_on_exp_and_ln_are_within_their_bounds() {
    check("log1p", c::LOG1P, (0.0, 0.0), f64::ln_1p, 4.0, 3);
    check("expm1", c::EXPM1, (0.0, 0.0), f64::exp_m1, 4.0, 3);
    check("sigmoid", c::SIGMOID, (0.0, 0.0), scalar::sigmoid, 4.0, 3);
    check("tanh", c::TANH, (0.0, 0.0), f64::tanh, 4.0, 4);
    check(
        "softplus",
        c::SOFTPLUS,
        (0.0, 0.0),
        scalar::softplus,
        4.0,
        4,
    );
    check("silu", c::SILU, (0.0, 0.0), scalar::silu, 4.0, 4);
    check(
        "logsigmoid",
        c::LOGSIGMOID,
        (0.0, 0.0),
        scalar::logsigmoid,
        4.0,
        4,
    );
    check("elu", c::ELU, (0.7, 1.0), |x| scalar::elu(x, 0.7), 6.0, 5);
    const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
    const SELU_SCALE: f64 = 1.050_700_987_355_480_5;
    check(
        "selu",
        c::ELU,
        (SELU_ALPHA, SELU_SCALE),
        scalar::selu,
        6.0,
        5,
    );
    check("exp2", c::EXP2, (0.0, 0.0), f64::exp2, 4.0, 2);
    check("log2", c::LOG2, (0.0, 0.0), f64::log2, 4.0, 3);
    check("log10", c::LOG10, (0.0, 0.0), f64::log10, 4.0, 3);
    check("sinh", c::SINH, (0.0, 0.0), f64::sinh, 4.0, 4);
    check("cosh", c::COSH, (0.0, 0.0), f64::cosh, 4.0, 4);
    check(
        "gelu_tanh",
        c::GELU_TANH,
        (0.0, 0.0),
        scalar::gelu_tanh,
        4.0,
        4,
    );
    check("mish", c::MISH, (0.0, 0.0), scalar::mish, 10.0, 9);
    check("rsqrt", c::RSQRT, (0.0, 0.0), |x| 1.0 / x.sqrt(), 2.0, 1);
}

#[test]
fn the_exact_ops_give_the_references_bits() {
    let sign = |x: f64| {
        if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else if x.is_nan() {
            x
        } else {
            0.0
        }
    };
    check("sign", c::SIGN, (0.0, 0.0), sign, 0.0, 0);
    check("trunc", c::TRUNC, (0.0, 0.0), f64::trunc, 0.0, 0);
    check("round", c::ROUND, (0.0, 0.0), f64::round_ties_even, 0.0, 0);
    let (lo, hi) = (-6.5, 1e300);
    check(
        "clamp",
        c::CLAMP,
        (lo, hi),
        |x| scalar::clamp(x, Some(lo), Some(hi)),
        0.0,
        0,
    );
    check(
        "clamp with one bound",
        c::CLAMP,
        (f64::NEG_INFINITY, 2.5),
        |x| scalar::clamp(x, None, Some(2.5)),
        0.0,
        0,
    );
    check(
        "leaky_relu",
        c::LEAKY_RELU,
        (0.01, 0.0),
        |x| if x > 0.0 { x } else { 0.01 * x },
        0.0,
        0,
    );
    check(
        "hardsigmoid",
        c::HARDSIGMOID,
        (0.0, 0.0),
        scalar::hardsigmoid,
        0.0,
        0,
    );
    check(
        "hardswish",
        c::HARDSWISH,
        (0.0, 0.0),
        scalar::hardswish,
        0.0,
        0,
    );
}

/// Whether `got` is `a^b` as C's `pow` gives it (the special values
/// exactly), else within `pow_tolerance`'s bound
/// `ε·(1 + 4·(1 + |b·ln a|))·|want|`.
fn pow_meets(got: f64, a: f64, b: f64) -> bool {
    let want = a.powf(b);
    let scale = 1.0 + 4.0 * (1.0 + (b * a.abs().ln()).abs());
    if got == want {
        true
    } else if want.is_nan() || got.is_nan() {
        want.is_nan() && got.is_nan()
    } else if want.is_infinite() || got.is_infinite() || want == 0.0 {
        got == want
    } else {
        (got - want).abs() <= EPS * want.abs().max(f64::MIN_POSITIVE) + EPS * scale * want.abs()
    }
}

#[test]
fn powf_follows_c_and_stays_within_its_bound() {
    // The bound of `pow_tolerance`: ε·(1 + 4·(1 + |b·ln a|))·|want|.
    let x = inputs();
    for p in [
        0.0,
        -0.0,
        1.0,
        2.0,
        3.0,
        -1.0,
        -2.0,
        0.5,
        -0.5,
        7.0,
        40.5,
        -300.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        9_007_199_254_740_993.0,
        1e300,
    ] {
        let got = run(c::POWF, p, 0.0, &x);
        for (&a, &g) in x.iter().zip(&got) {
            let w = a.powf(p);
            assert!(pow_meets(g, a, p), "powf({a:e}, {p:e}) = {g:e}, want {w:e}");
        }
    }
}

/// `binary_math_f64` over every pair of `a` and `b` (`a` down a column,
/// `b` broadcast along a row), `op` one of `binary_math_code`.
fn run_binary(op: u32, a: &[f64], b: &[f64]) -> Vec<f64> {
    let n = (a.len() * b.len()) as u32;
    let mut args = vec![
        Arg::Buffer(Buffer::from_f64(a)),
        Arg::Buffer(Buffer::from_f64(b)),
        Arg::Buffer(Buffer::from_f64(&vec![0.0; n as usize])),
        Arg::Buffer(Buffer::from_u32(&[a.len() as u32, b.len() as u32])),
        Arg::Buffer(Buffer::from_i32(&[1, 0])),
        Arg::Buffer(Buffer::from_i32(&[0, 1])),
        Arg::Scalar(Value::U32(2)),
        Arg::Scalar(Value::U32(n)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
    ];
    let launch = LaunchConfig::linear(n.div_ceil(64), 64);
    sim::run(binary_math_f64(), launch, &mut args, &SimOptions::default()).unwrap();
    args[2].buffer().unwrap().to_f64()
}

#[test]
fn pow_and_hypot_of_two_tensors_stay_within_their_bounds() {
    let a = inputs();
    // Exponents that take every branch of pow (odd and even integers,
    // one past 2^53, infinities, NaN), and operands for hypot from the
    // subnormals to f64::MAX.
    let b = [
        0.0,
        -0.0,
        1.0,
        3.0,
        -2.0,
        0.5,
        -0.5,
        40.5,
        -300.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        9_007_199_254_740_993.0,
        1e300,
        f64::from_bits(3),
        f64::MAX,
    ];
    let got = run_binary(binary_math_code::POW, &a, &b);
    for (k, &g) in got.iter().enumerate() {
        let (x, y) = (a[k / b.len()], b[k % b.len()]);
        let w = x.powf(y);
        assert!(pow_meets(g, x, y), "pow({x:e}, {y:e}) = {g:e}, want {w:e}");
    }
    let got = run_binary(binary_math_code::HYPOT, &a, &b);
    let mut worst = 0;
    for (k, &g) in got.iter().enumerate() {
        let (x, y) = (a[k / b.len()], b[k % b.len()]);
        let w = x.hypot(y);
        assert!(meets(g, w, 1.0), "hypot({x:e}, {y:e}) = {g:e}, want {w:e}");
        if w.is_normal() {
            worst = worst.max(ulps(g, w));
        }
    }
    // The kernel's derivation says 1.25 ulp; Rust's `hypot` is itself
    // within an ulp of the exact value.
    assert!(worst <= 2, "hypot: {worst} ulp");
}
