//! The math kernels (`unary_math_strided`, `binary_math_strided`) in the
//! simulator against the reference backend's `f64` functions, over each
//! function's domain and the conformance corpus's special values: every
//! element within the conformance bound of its op (the `f32` row of
//! `oxmera-conformance`'s tolerance table, restated here per op), and the
//! core functions within the ulp bounds their comments derive.

use oxmera_kernel::ir::Value;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{
    binary_math_code as bc, binary_math_strided, math_code as mc, unary_math_strided,
};
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
use oxmera_reference::scalar;

const EPS: f64 = f32::EPSILON as f64;
const TINY: f64 = f32::MIN_POSITIVE as f64;

/// The corpus's special values (`oxmera-conformance`'s `specials` for
/// f32) and a few more edges.
fn specials() -> Vec<f32> {
    let mut v = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -1.5,
        2.5,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
        f32::MAX / 8.0,
        -f32::MIN_POSITIVE * 3.0,
        1.0 + f32::EPSILON,
        88.75,
        -103.5,
        1e4,
        -30.0,
    ];
    v.extend([1e-30, -1e-30, 3.0, -3.0, 1e-8, -1e-8, 100.0, -100.0]);
    v
}

/// `n` values evenly spread over `[lo, hi]`.
fn sweep(lo: f32, hi: f32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| lo + (hi - lo) * (i as f32 / (n - 1) as f32))
        .collect()
}

/// `±2^e` for `e` evenly spread over `[lo, hi]`.
fn geometric(lo: f32, hi: f32, n: usize) -> Vec<f32> {
    sweep(lo, hi, n)
        .into_iter()
        .flat_map(|e| [e.exp2(), -e.exp2()])
        .collect()
}

fn unary(op: u32, p0: f32, p1: f32, x: &[f32]) -> Vec<f32> {
    let n = x.len() as u32;
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(x)),
        Arg::Buffer(Buffer::from_f32(&vec![0.0; x.len()])),
        Arg::Buffer(Buffer::from_u32(&[n])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Scalar(Value::U32(1)),
        Arg::Scalar(Value::U32(n)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
        Arg::Scalar(Value::F32(p0)),
        Arg::Scalar(Value::F32(p1)),
    ];
    let launch = LaunchConfig::linear(n.div_ceil(256), 256);
    sim::run(
        unary_math_strided(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    args[1].buffer().unwrap().to_f32()
}

fn binary(op: u32, a: &[f32], b: &[f32]) -> Vec<f32> {
    let n = a.len() as u32;
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(a)),
        Arg::Buffer(Buffer::from_f32(b)),
        Arg::Buffer(Buffer::from_f32(&vec![0.0; a.len()])),
        Arg::Buffer(Buffer::from_u32(&[n])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Scalar(Value::U32(1)),
        Arg::Scalar(Value::U32(n)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
    ];
    let launch = LaunchConfig::linear(n.div_ceil(256), 256);
    sim::run(
        binary_math_strided(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    args[2].buffer().unwrap().to_f32()
}

/// The distance in f32 steps from `got` to `want` rounded to f32.
fn ulps(got: f32, want: f64) -> i64 {
    let key = |v: f32| {
        let b = v.to_bits() as i64;
        if b >> 31 == 1 { -(b & 0x7fff_ffff) } else { b }
    };
    (key(got) - key(want as f32)).abs()
}

/// Whether `got` meets `want` as the conformance comparison has it: NaN
/// with NaN, an infinity with the same one, else within
/// `ε·max(|want|, tiny) + acc·ε·scale`.
fn meets(got: f32, want: f64, acc: f64, scale: f64) -> bool {
    let g = f64::from(got);
    if want.is_nan() || g.is_nan() {
        return want.is_nan() && g.is_nan();
    }
    // The reference rounds into f32 once; an f32 overflow there is ∞.
    let rounded = f64::from(want as f32);
    if rounded.is_infinite() || g.is_infinite() {
        return g == rounded;
    }
    (g - want).abs() <= EPS * want.abs().max(TINY) + acc * EPS * scale
}

/// Every element of `op` over `x` within the conformance bound (`acc`
/// roundings of `scale(x, want)`) and, for finite normal results, within
/// `max_ulp` where given.
fn check_unary(
    (name, op, p): (&str, u32, (f32, f32)),
    x: &[f32],
    want: impl Fn(f64) -> f64,
    acc: f64,
    scale: impl Fn(f64, f64) -> f64,
    max_ulp: Option<i64>,
) {
    let got = unary(op, p.0, p.1, x);
    for (&v, &g) in x.iter().zip(&got) {
        let w = want(f64::from(v));
        assert!(
            meets(g, w, acc, scale(f64::from(v), w)),
            "{name}({v:e}) = {g:e}, want {w:e}"
        );
        if let Some(m) = max_ulp
            && w.is_finite()
            && (w as f32).is_normal()
        {
            let u = ulps(g, w);
            assert!(u <= m, "{name}({v:e}) = {g:e}, want {w:e}: {u} ulp");
        }
    }
}

fn want_abs(_: f64, w: f64) -> f64 {
    w.abs()
}

#[test]
fn exp2_expm1_sinh_cosh_are_within_their_bounds() {
    let mut x = sweep(-151.0, 129.0, 12_001);
    x.extend(specials());
    check_unary(
        ("exp2", mc::EXP2, (0.0, 0.0)),
        &x,
        f64::exp2,
        4.0,
        want_abs,
        Some(2),
    );
    let mut x = sweep(-20.0, 90.0, 12_001);
    x.extend(geometric(-40.0, 0.0, 4_000));
    x.extend(specials());
    check_unary(
        ("expm1", mc::EXPM1, (0.0, 0.0)),
        &x,
        f64::exp_m1,
        4.0,
        want_abs,
        Some(3),
    );
    let mut x = sweep(-90.0, 90.0, 12_001);
    x.extend(geometric(-30.0, 0.0, 2_000));
    x.extend(specials());
    check_unary(
        ("sinh", mc::SINH, (0.0, 0.0)),
        &x,
        f64::sinh,
        4.0,
        want_abs,
        Some(4),
    );
    check_unary(
        ("cosh", mc::COSH, (0.0, 0.0)),
        &x,
        f64::cosh,
        4.0,
        want_abs,
        Some(4),
    );
}

#[test]
fn log2_and_log10_are_within_their_bounds() {
    let mut x: Vec<f32> = sweep(-149.0, 128.0, 12_000)
        .into_iter()
        .map(f32::exp2)
        .collect();
    x.extend(sweep(0.9, 1.1, 4_000));
    x.extend(specials());
    check_unary(
        ("log2", mc::LOG2, (0.0, 0.0)),
        &x,
        f64::log2,
        4.0,
        want_abs,
        Some(4),
    );
    check_unary(
        ("log10", mc::LOG10, (0.0, 0.0)),
        &x,
        f64::log10,
        4.0,
        want_abs,
        Some(4),
    );
}

#[test]
fn trunc_and_the_hard_activations_are_the_references() {
    let mut x = sweep(-6.0, 6.0, 4_801);
    x.extend(specials());
    x.extend([8_388_607.5, -8_388_607.5, 8_388_608.0, 0.7, -0.7]);
    check_unary(
        ("trunc", mc::TRUNC, (0.0, 0.0)),
        &x,
        f64::trunc,
        0.0,
        want_abs,
        Some(0),
    );
    check_unary(
        ("hardsigmoid", mc::HARDSIGMOID, (0.0, 0.0)),
        &x,
        scalar::hardsigmoid,
        2.0,
        |v, w| v.abs() + w.abs(),
        None,
    );
    check_unary(
        ("hardswish", mc::HARDSWISH, (0.0, 0.0)),
        &x,
        scalar::hardswish,
        3.0,
        want_abs,
        None,
    );
}

#[test]
fn the_activations_built_on_exp_and_ln_are_within_their_bounds() {
    let mut x = sweep(-110.0, 100.0, 12_001);
    x.extend(geometric(-30.0, 3.0, 2_000));
    x.extend(specials());
    let (alpha, scale) = (oxmera_tensor::SELU_ALPHA, oxmera_tensor::SELU_SCALE);
    check_unary(
        ("elu", mc::ELU, (1.0, 1.0)),
        &x,
        |v| scalar::elu(v, 1.0),
        6.0,
        want_abs,
        None,
    );
    check_unary(
        ("elu(0.3)", mc::ELU, (0.3, 1.0)),
        &x,
        |v| scalar::elu(v, f64::from(0.3f32)),
        6.0,
        want_abs,
        None,
    );
    check_unary(
        ("selu", mc::ELU, ((scale * alpha) as f32, scale as f32)),
        &x,
        scalar::selu,
        6.0,
        want_abs,
        None,
    );
    check_unary(
        ("logsigmoid", mc::LOGSIGMOID, (0.0, 0.0)),
        &x,
        scalar::logsigmoid,
        4.0,
        want_abs,
        None,
    );
    check_unary(
        ("mish", mc::MISH, (0.0, 0.0)),
        &x,
        scalar::mish,
        10.0,
        want_abs,
        None,
    );
    let mut x = sweep(-10.0, 10.0, 8_001);
    x.extend(geometric(-30.0, 3.0, 2_000));
    x.extend(specials());
    check_unary(
        ("erf", mc::ERF, (0.0, 0.0)),
        &x,
        scalar::erf,
        4.0,
        want_abs,
        Some(2),
    );
    check_unary(
        ("gelu", mc::GELU, (0.0, 0.0)),
        &x,
        scalar::gelu_erf,
        4.0,
        |v, w| v.abs() + w.abs(),
        None,
    );
}

#[test]
fn atan_asin_acos_are_within_their_bounds() {
    let mut x = sweep(-10.0, 10.0, 8_001);
    x.extend(geometric(-30.0, 40.0, 4_000));
    x.extend(specials());
    check_unary(
        ("atan", mc::ATAN, (0.0, 0.0)),
        &x,
        f64::atan,
        4.0,
        want_abs,
        Some(2),
    );
    let mut x = sweep(-1.0, 1.0, 8_001);
    x.extend(geometric(-30.0, 0.0, 2_000));
    x.extend(specials());
    x.extend([0.999_999_9, -0.999_999_9, 1.5, -1.5]);
    check_unary(
        ("asin", mc::ASIN, (0.0, 0.0)),
        &x,
        f64::asin,
        4.0,
        want_abs,
        Some(4),
    );
    check_unary(
        ("acos", mc::ACOS, (0.0, 0.0)),
        &x,
        f64::acos,
        4.0,
        want_abs,
        Some(4),
    );
}

/// The conformance scale of `a^b`: `|want|·(1 + |b·ln|a||)`.
fn pow_scale(a: f64, b: f64, w: f64) -> f64 {
    let c = (b * a.abs().ln()).abs();
    if c.is_finite() {
        w.abs() * (1.0 + c)
    } else {
        0.0
    }
}

#[test]
fn powf_and_pow_follow_c_and_stay_within_their_bound() {
    let mut bases = sweep(0.125, 4.0, 400);
    bases.extend(specials());
    bases.extend([-2.0, -0.5, -3.0]);
    let exps = [
        0.0,
        -0.0,
        1.0,
        2.0,
        3.0,
        -1.0,
        -2.0,
        0.5,
        -0.5,
        2.5,
        -1.5,
        7.0,
        40.0,
        -40.0,
        0.3,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e10,
        -1e10,
        16_777_217.0,
    ];
    for &p in &exps {
        check_unary(
            ("powf", mc::POWF, (p, 0.0)),
            &bases,
            |v| v.powf(f64::from(p)),
            4.0,
            |v, w| pow_scale(v, f64::from(p), w),
            None,
        );
    }
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in &bases {
        for &y in &exps {
            a.push(x);
            b.push(y);
        }
    }
    let got = binary(bc::POW, &a, &b);
    for ((&x, &y), &g) in a.iter().zip(&b).zip(&got) {
        let w = f64::from(x).powf(f64::from(y));
        let s = pow_scale(f64::from(x), f64::from(y), w);
        assert!(meets(g, w, 4.0, s), "pow({x:e}, {y:e}) = {g:e}, want {w:e}");
    }
}

#[test]
fn powf_keeps_the_class_of_an_f64_exponent_that_f32_rounds_away() {
    // Exponents past 2^24 whose f32 rounding is another class: odd
    // integers rounding to even ones, a non-integer rounding to an
    // integer, with the class (`POWF`'s p1) the backend passes for each.
    let exps: [(f64, f32); 5] = [
        (16_777_217.0, 1.0),
        (-33_554_435.0, 1.0),
        (16_777_216.5, 3.0),
        (-16_777_218.5, 3.0),
        (1e10 + 1.0, 1.0),
    ];
    let mut bases = specials();
    // Bases near ±1 give finite results, so the magnitude is held too.
    bases.extend([
        1.0 - f32::EPSILON / 2.0,
        -(1.0 + f32::EPSILON),
        -(1.0 - f32::EPSILON / 2.0),
        -2.0,
    ]);
    for (p, class) in exps {
        check_unary(
            ("powf", mc::POWF, (p as f32, class)),
            &bases,
            |v| v.powf(p),
            4.0,
            |v, w| pow_scale(v, p, w),
            None,
        );
    }
}

/// Every pair of `xs` and `ys`.
fn pairs(xs: &[f32], ys: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in xs {
        for &y in ys {
            a.push(x);
            b.push(y);
        }
    }
    (a, b)
}

#[test]
fn atan2_and_hypot_are_within_their_bounds() {
    let mut xs = sweep(-4.0, 4.0, 81);
    xs.extend(specials());
    xs.extend([1e20, -1e-20, 3e30, 2e-38]);
    let (a, b) = pairs(&xs, &xs);
    let got = binary(bc::ATAN2, &a, &b);
    for ((&x, &y), &g) in a.iter().zip(&b).zip(&got) {
        let w = f64::from(x).atan2(f64::from(y));
        assert!(
            meets(g, w, 4.0, w.abs()),
            "atan2({x:e}, {y:e}) = {g:e}, want {w:e}"
        );
        if w.is_finite() && (w as f32).is_normal() {
            assert!(ulps(g, w) <= 3, "atan2({x:e}, {y:e}) = {g:e}, want {w:e}");
        }
    }
    let got = binary(bc::HYPOT, &a, &b);
    for ((&x, &y), &g) in a.iter().zip(&b).zip(&got) {
        let w = f64::from(x).hypot(f64::from(y));
        assert!(
            meets(g, w, 4.0, w.abs()),
            "hypot({x:e}, {y:e}) = {g:e}, want {w:e}"
        );
    }
}

#[test]
fn fmod_and_rem_are_exact() {
    let mut xs = sweep(-10.0, 10.0, 161);
    xs.extend(specials());
    xs.extend([1e20, -1e-20, 3e30, 2e-38, 7.0, -7.0, 0.3, 1e-40]);
    let mut ys = vec![-2.5, 1.5, -0.75, 3.0, 0.3, 1e-3, -1e-38, 1e-40];
    ys.extend(specials());
    let (a, b) = pairs(&xs, &ys);
    let fmod = binary(bc::FMOD, &a, &b);
    let rem = binary(bc::REM, &a, &b);
    for (k, (&x, &y)) in a.iter().zip(&b).enumerate() {
        let (x64, y64) = (f64::from(x), f64::from(y));
        for (name, g, w) in [
            ("fmod", fmod[k], x64 % y64),
            ("rem", rem[k], scalar::rem(x64, y64)),
        ] {
            let w = w as f32;
            let same = (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits();
            assert!(same, "{name}({x:e}, {y:e}) = {g:e}, want {w:e}");
        }
    }
}

/// The conformance scale of sin and cos: `|want| + 1` (an absolute part
/// near their zeros).
fn want_plus_one(_: f64, w: f64) -> f64 {
    w.abs() + 1.0
}

#[test]
fn sin_cos_tan_are_within_their_bounds_for_every_argument() {
    // Small, medium and every binade up to f32::MAX (Payne–Hanek's whole
    // range), a dense sweep near the first few quadrant boundaries, and
    // the corpus's specials (sin(f32::MAX) among them).
    let mut x = sweep(-10.0, 10.0, 20_001);
    x.extend(geometric(-20.0, 127.99, 20_000));
    x.extend(sweep(1.5, 1.65, 2_001));
    x.extend(sweep(3.1, 3.2, 2_001));
    x.extend(sweep(1e4, 1e4 + 10.0, 1_001));
    x.extend(specials());
    check_unary(
        ("sin", mc::SIN, (0.0, 0.0)),
        &x,
        f64::sin,
        4.0,
        want_plus_one,
        Some(2),
    );
    check_unary(
        ("cos", mc::COS, (0.0, 0.0)),
        &x,
        f64::cos,
        4.0,
        want_plus_one,
        Some(2),
    );
    check_unary(
        ("tan", mc::TAN, (0.0, 0.0)),
        &x,
        f64::tan,
        4.0,
        want_abs,
        Some(3),
    );
}
