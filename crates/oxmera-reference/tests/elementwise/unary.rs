//! Unary operations.

use std::f64::consts::{E, LN_2};

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::Tensor;

use crate::common::{t, variants};
use crate::{assert_float, assert_ints, rounded, same};

type Op = fn(&Tensor) -> Result<Tensor>;
type F64Unary = fn(f64) -> f64;

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

/// Inputs exactly representable in every float dtype, shape [2, 3].
const X: [f64; 6] = [-2.0, -0.5, 0.0, 0.25, 1.0, 3.0];

/// Every float unary op on `X`.
fn float_cases() -> Vec<(&'static str, Op, [f64; 6])> {
    vec![
        ("neg", |x| x.neg(), [2.0, 0.5, -0.0, -0.25, -1.0, -3.0]),
        ("abs", |x| x.abs(), [2.0, 0.5, 0.0, 0.25, 1.0, 3.0]),
        ("sign", |x| x.sign(), [-1.0, -1.0, 0.0, 1.0, 1.0, 1.0]),
        ("square", |x| x.square(), [4.0, 0.25, 0.0, 0.0625, 1.0, 9.0]),
        ("relu", |x| x.relu(), [0.0, 0.0, 0.0, 0.25, 1.0, 3.0]),
        (
            "leaky_relu",
            |x| x.leaky_relu(0.1),
            [-0.2, -0.05, 0.0, 0.25, 1.0, 3.0],
        ),
        (
            "recip",
            |x| x.recip(),
            [-0.5, -2.0, INF, 4.0, 1.0, 0.3333333333333333],
        ),
        (
            "sqrt",
            |x| x.sqrt(),
            [NAN, NAN, 0.0, 0.5, 1.0, 1.7320508075688772],
        ),
        (
            "rsqrt",
            |x| x.rsqrt(),
            [NAN, NAN, INF, 2.0, 1.0, 0.5773502691896257],
        ),
        (
            "powf",
            |x| x.powf(3.0),
            [-8.0, -0.125, 0.0, 0.015625, 1.0, 27.0],
        ),
        (
            "powf_half",
            |x| x.powf(0.5),
            [NAN, NAN, 0.0, 0.5, 1.0, 1.7320508075688772],
        ),
        (
            "clamp",
            |x| x.clamp(Some(-1.0), Some(2.0)),
            [-1.0, -0.5, 0.0, 0.25, 1.0, 2.0],
        ),
        (
            "clamp_min",
            |x| x.clamp(Some(0.5), None),
            [0.5, 0.5, 0.5, 0.5, 1.0, 3.0],
        ),
        (
            "clamp_max",
            |x| x.clamp(None, Some(0.0)),
            [-2.0, -0.5, 0.0, 0.0, 0.0, 0.0],
        ),
        // min > max: every element becomes max (NumPy and PyTorch agree).
        ("clamp_crossed", |x| x.clamp(Some(2.0), Some(1.0)), [1.0; 6]),
        ("clamp_none", |x| x.clamp(None, None), X),
        (
            "exp",
            |x| x.exp(),
            [
                0.1353352832366127,
                0.6065306597126334,
                1.0,
                1.2840254166877414,
                E,
                20.085536923187668,
            ],
        ),
        (
            "log",
            |x| x.log(),
            [NAN, NAN, -INF, -1.3862943611198906, 0.0, 1.0986122886681098],
        ),
        (
            "log1p",
            |x| x.log1p(),
            [
                NAN,
                -LN_2,
                0.0,
                0.22314355131420976,
                LN_2,
                1.3862943611198906,
            ],
        ),
        (
            "sin",
            |x| x.sin(),
            [
                -0.9092974268256817,
                -0.479425538604203,
                0.0,
                0.24740395925452294,
                0.8414709848078965,
                0.1411200080598672,
            ],
        ),
        (
            "cos",
            |x| x.cos(),
            [
                -0.4161468365471424,
                0.8775825618903728,
                1.0,
                0.9689124217106447,
                0.5403023058681398,
                -0.9899924966004454,
            ],
        ),
        (
            "tanh",
            |x| x.tanh(),
            [
                -0.9640275800758169,
                -0.46211715726000974,
                0.0,
                0.24491866240370913,
                0.7615941559557649,
                0.9950547536867305,
            ],
        ),
        (
            "sigmoid",
            |x| x.sigmoid(),
            [
                0.11920292202211756,
                0.37754066879814546,
                0.5,
                0.5621765008857981,
                0.7310585786300049,
                0.9525741268224333,
            ],
        ),
        (
            "gelu",
            |x| x.gelu(),
            [
                -0.04550026389635842,
                -0.15426876936299344,
                0.0,
                0.14967658142073093,
                0.8413447460685429,
                2.99595030590511,
            ],
        ),
        (
            "gelu_tanh",
            |x| x.gelu_tanh(),
            [
                -0.04540230591222498,
                -0.15428599017485609,
                0.0,
                0.149675350701685,
                0.8411919906082767,
                2.996362607918227,
            ],
        ),
        (
            "silu",
            |x| x.silu(),
            [
                -0.23840584404423512,
                -0.18877033439907273,
                0.0,
                0.14054412522144952,
                0.7310585786300049,
                2.8577223804672998,
            ],
        ),
        (
            "softplus",
            |x| x.softplus(),
            [
                0.1269280110429725,
                0.4740769841801067,
                LN_2,
                0.8259394198788436,
                1.3132616875182228,
                3.048587351573742,
            ],
        ),
        (
            "erf",
            |x| x.erf(),
            [
                -0.9953222650189527,
                -0.5204998778130465,
                0.0,
                0.27632639016823696,
                0.8427007929497149,
                0.9999779095030014,
            ],
        ),
    ]
}

#[test]
fn every_float_op_on_every_float_dtype_and_layout() {
    for dtype in DType::FLOATS {
        for (layout, x) in variants(&X, &[2, 3], dtype) {
            for (name, op, expected) in float_cases() {
                let y = op(&x).unwrap();
                assert_eq!(y.dtype(), dtype, "{name}");
                assert!(
                    y.is_contiguous(),
                    "{name}: backends return contiguous storage"
                );
                assert_float(&y, &expected, &[2, 3], &format!("{name} ({layout})"));
            }
        }
    }
}

#[test]
fn rounding_ops_on_halves() {
    let x = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.25];
    let cases: [(&str, Op, [f64; 6]); 3] = [
        ("floor", |x| x.floor(), [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0]),
        ("ceil", |x| x.ceil(), [-2.0, -1.0, -0.0, 1.0, 2.0, 3.0]),
        // Ties to even: -2.5 -> -2, -1.5 -> -2, -0.5 -> -0, 0.5 -> 0, 1.5 -> 2.
        ("round", |x| x.round(), [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]),
    ];
    for dtype in DType::FLOATS {
        for (layout, v) in variants(&x, &[3, 2], dtype) {
            for (name, op, expected) in cases {
                assert_float(
                    &op(&v).unwrap(),
                    &expected,
                    &[3, 2],
                    &format!("{name} ({layout})"),
                );
            }
        }
    }
}

/// Inputs: NaN, +inf, -inf, -0.0, +0.0.
const SPECIAL: [f64; 5] = [NAN, INF, -INF, -0.0, 0.0];

#[test]
fn special_values_on_every_float_dtype() {
    let cases: Vec<(&str, Op, [f64; 5])> = vec![
        ("neg", |x| x.neg(), [NAN, -INF, INF, 0.0, -0.0]),
        ("abs", |x| x.abs(), [NAN, INF, INF, 0.0, 0.0]),
        ("sign", |x| x.sign(), [NAN, 1.0, -1.0, 0.0, 0.0]),
        ("exp", |x| x.exp(), [NAN, INF, 0.0, 1.0, 1.0]),
        ("log", |x| x.log(), [NAN, INF, NAN, -INF, -INF]),
        ("log1p", |x| x.log1p(), [NAN, INF, NAN, -0.0, 0.0]),
        ("sqrt", |x| x.sqrt(), [NAN, INF, NAN, -0.0, 0.0]),
        ("rsqrt", |x| x.rsqrt(), [NAN, 0.0, NAN, -INF, INF]),
        ("recip", |x| x.recip(), [NAN, 0.0, -0.0, -INF, INF]),
        ("square", |x| x.square(), [NAN, INF, INF, 0.0, 0.0]),
        ("sin", |x| x.sin(), [NAN, NAN, NAN, -0.0, 0.0]),
        ("cos", |x| x.cos(), [NAN, NAN, NAN, 1.0, 1.0]),
        ("tanh", |x| x.tanh(), [NAN, 1.0, -1.0, -0.0, 0.0]),
        ("sigmoid", |x| x.sigmoid(), [NAN, 1.0, 0.0, 0.5, 0.5]),
        ("relu", |x| x.relu(), [NAN, INF, 0.0, 0.0, 0.0]),
        (
            "leaky_relu",
            |x| x.leaky_relu(0.1),
            [NAN, INF, -INF, -0.0, 0.0],
        ),
        ("gelu", |x| x.gelu(), [NAN, INF, -0.0, -0.0, 0.0]),
        ("gelu_tanh", |x| x.gelu_tanh(), [NAN, INF, -0.0, -0.0, 0.0]),
        ("silu", |x| x.silu(), [NAN, INF, -0.0, -0.0, 0.0]),
        ("softplus", |x| x.softplus(), [NAN, INF, 0.0, LN_2, LN_2]),
        ("erf", |x| x.erf(), [NAN, 1.0, -1.0, -0.0, 0.0]),
        ("floor", |x| x.floor(), [NAN, INF, -INF, -0.0, 0.0]),
        ("ceil", |x| x.ceil(), [NAN, INF, -INF, -0.0, 0.0]),
        ("round", |x| x.round(), [NAN, INF, -INF, -0.0, 0.0]),
        (
            "clamp",
            |x| x.clamp(Some(-1.0), Some(1.0)),
            [NAN, 1.0, -1.0, -0.0, 0.0],
        ),
        ("powf", |x| x.powf(2.0), [NAN, INF, INF, 0.0, 0.0]),
        // IEEE pow: anything to the power 0 is 1, NaN included.
        ("powf0", |x| x.powf(0.0), [1.0; 5]),
    ];
    for dtype in DType::FLOATS {
        for (layout, x) in variants(&SPECIAL, &[5], dtype) {
            for (name, op, expected) in &cases {
                assert_float(
                    &op(&x).unwrap(),
                    expected,
                    &[5],
                    &format!("{name} ({layout})"),
                );
            }
        }
    }
}

#[test]
fn large_arguments_do_not_overflow() {
    for dtype in [DType::F32, DType::F64] {
        let x = t(&[-800.0, 800.0], &[2], dtype);
        assert_float(&x.sigmoid().unwrap(), &[0.0, 1.0], &[2], "sigmoid");
        assert_float(&x.softplus().unwrap(), &[0.0, 800.0], &[2], "softplus");
        assert_float(&x.silu().unwrap(), &[-0.0, 800.0], &[2], "silu");
        assert_float(&x.gelu().unwrap(), &[-0.0, 800.0], &[2], "gelu");
        assert_float(&x.exp().unwrap(), &[0.0, INF], &[2], "exp");
    }
    // Φ(-10) ≈ 7.6e-24: the erfc form keeps it, 1 + erf(-10/√2) would give 0.
    let x = t(&[-10.0, -30.0], &[2], DType::F64);
    assert_float(
        &x.gelu().unwrap(),
        &[-7.619853024160526e-23, -1.472014178144456e-196],
        &[2],
        "gelu tail",
    );
}

#[test]
fn subnormal_inputs() {
    // The smallest positive subnormal of each dtype.
    let tiny = [
        (DType::F16, 2f64.powi(-24)),
        (DType::BF16, 2f64.powi(-133)),
        (DType::F32, 2f64.powi(-149)),
        (DType::F64, 5e-324),
    ];
    for (dtype, s) in tiny {
        let x = t(&[s, -s], &[2], dtype);
        assert_eq!(x.to_f64_vec().unwrap(), vec![s, -s], "{dtype} holds it");
        assert_float(&x.neg().unwrap(), &[-s, s], &[2], "neg");
        assert_float(&x.abs().unwrap(), &[s, s], &[2], "abs");
        assert_float(&x.relu().unwrap(), &[s, 0.0], &[2], "relu");
        assert_float(&x.sign().unwrap(), &[1.0, -1.0], &[2], "sign");
        assert_float(&x.sin().unwrap(), &[s, -s], &[2], "sin");
        assert_float(&x.tanh().unwrap(), &[s, -s], &[2], "tanh");
        assert_float(&x.square().unwrap(), &[0.0, 0.0], &[2], "square underflows");
        assert_float(&x.exp().unwrap(), &[1.0, 1.0], &[2], "exp");
        assert_float(&x.floor().unwrap(), &[0.0, -1.0], &[2], "floor");
        assert_float(&x.ceil().unwrap(), &[1.0, -0.0], &[2], "ceil");
        let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
        assert_float(
            &x.erf().unwrap(),
            &[two_over_sqrt_pi * s, -two_over_sqrt_pi * s],
            &[2],
            "erf",
        );
    }
    let x = t(&[5e-324], &[1], DType::F64);
    assert_float(&x.sqrt().unwrap(), &[2.2227587494850775e-162], &[1], "sqrt");
    assert_float(&x.recip().unwrap(), &[INF], &[1], "recip overflows");
}

#[test]
fn broadcast_zero_size_size_one_and_rank_zero_inputs() {
    let row = t(&[0.0, 1.0, -1.0], &[3], DType::F32);
    let wide = row.broadcast_to([2, 3]).unwrap();
    assert_eq!(wide.strides(), &[0, 1]);
    let e = [0.0, 1.0, 1.0];
    assert_float(
        &wide.abs().unwrap(),
        &[e, e].concat(),
        &[2, 3],
        "abs of a stride-0 view",
    );
    let ex = [1.0, E, 1.0 / E];
    assert_float(
        &wide.exp().unwrap(),
        &[ex, ex].concat(),
        &[2, 3],
        "exp of a stride-0 view",
    );

    for dtype in [DType::F32, DType::I32] {
        let empty = Tensor::zeros([0, 3], dtype, Device::Reference).unwrap();
        let y = empty.abs().unwrap();
        assert_eq!((y.dims(), y.dtype()), (&[0usize, 3][..], dtype));
        let empty = Tensor::zeros([2, 0], dtype, Device::Reference).unwrap();
        assert_eq!(empty.square().unwrap().dims(), &[2, 0]);
    }

    let one = t(&[-4.0], &[1, 1, 1], DType::F64);
    assert_float(&one.abs().unwrap(), &[4.0], &[1, 1, 1], "size-1 dims");
    let s = Tensor::scalar(-4.0f32, Device::Reference).unwrap();
    let y = s.abs().unwrap();
    assert_eq!(y.rank(), 0);
    assert_eq!(y.item().unwrap(), 4.0);
    let s = Tensor::scalar(9i64, Device::Reference).unwrap();
    assert_eq!(s.neg().unwrap().item().unwrap(), -9.0);
}

#[test]
fn signed_integer_ops_wrap() {
    let min32 = i32::MIN as f64;
    let x = [-3.0, -1.0, 0.0, 2.0, 5.0, min32];
    let m = i32::MIN as i64;
    let cases: [(&str, Op, [i64; 6]); 9] = [
        ("neg", |x| x.neg(), [3, 1, 0, -2, -5, m]),
        ("abs", |x| x.abs(), [3, 1, 0, 2, 5, m]),
        ("sign", |x| x.sign(), [-1, -1, 0, 1, 1, -1]),
        // (-2^31)^2 = 2^62 = 0 modulo 2^32.
        ("square", |x| x.square(), [9, 1, 0, 4, 25, 0]),
        ("relu", |x| x.relu(), [0, 0, 0, 2, 5, 0]),
        ("floor", |x| x.floor(), [-3, -1, 0, 2, 5, m]),
        ("ceil", |x| x.ceil(), [-3, -1, 0, 2, 5, m]),
        ("round", |x| x.round(), [-3, -1, 0, 2, 5, m]),
        // Bounds narrow to the integers they admit: [-1.5, 2.5] -> [-1, 2].
        (
            "clamp",
            |x| x.clamp(Some(-1.5), Some(2.5)),
            [-1, -1, 0, 2, 2, -1],
        ),
    ];
    for (layout, v) in variants(&x, &[2, 3], DType::I32) {
        for (name, op, expected) in cases {
            let y = op(&v).unwrap();
            assert_eq!(y.dtype(), DType::I32);
            assert_ints(&y, &expected, &[2, 3], &format!("{name} ({layout})"));
        }
    }
    // i64: the same wrap one width up.
    let x = Tensor::from_vec(vec![i64::MIN, -7, 3_000_000_000], [3], Device::Reference).unwrap();
    assert_eq!(
        x.neg().unwrap().to_vec::<i64>().unwrap(),
        vec![i64::MIN, 7, -3_000_000_000]
    );
    assert_eq!(
        x.abs().unwrap().to_vec::<i64>().unwrap(),
        vec![i64::MIN, 7, 3_000_000_000]
    );
    assert_eq!(
        x.square().unwrap().to_vec::<i64>().unwrap(),
        vec![0, 49, 9_000_000_000_000_000_000]
    );
    assert_eq!(
        x.clamp(Some(-1e300), Some(1e300))
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![i64::MIN, -7, 3_000_000_000],
        "bounds beyond the range saturate"
    );
    assert_eq!(
        x.clamp(Some(0.0), None).unwrap().to_vec::<i64>().unwrap(),
        vec![0, 0, 3_000_000_000]
    );
}

#[test]
fn unsigned_and_bool_ops() {
    let x = [0.0, 1.0, 200.0, 255.0];
    for (layout, v) in variants(&x, &[2, 2], DType::U8) {
        let what = |op: &str| format!("{op} ({layout})");
        assert_ints(&v.abs().unwrap(), &[0, 1, 200, 255], &[2, 2], &what("abs"));
        assert_ints(&v.sign().unwrap(), &[0, 1, 1, 1], &[2, 2], &what("sign"));
        // 200^2 = 40000 = 64 (mod 256); 255^2 = 65025 = 1 (mod 256).
        assert_ints(
            &v.square().unwrap(),
            &[0, 1, 64, 1],
            &[2, 2],
            &what("square"),
        );
        assert_ints(
            &v.relu().unwrap(),
            &[0, 1, 200, 255],
            &[2, 2],
            &what("relu"),
        );
        assert_ints(
            &v.round().unwrap(),
            &[0, 1, 200, 255],
            &[2, 2],
            &what("round"),
        );
        assert_ints(
            &v.clamp(Some(-5.0), Some(100.0)).unwrap(),
            &[0, 1, 100, 100],
            &[2, 2],
            &what("clamp"),
        );
        // A bound above the range saturates to 255 rather than wrapping.
        assert_ints(
            &v.clamp(Some(300.0), None).unwrap(),
            &[255; 4],
            &[2, 2],
            &what("clamp"),
        );
    }
    let b = [1.0, 0.0, 0.0, 1.0];
    for (layout, v) in variants(&b, &[2, 2], DType::Bool) {
        let y = v.logical_not().unwrap();
        assert_eq!(y.dtype(), DType::Bool);
        assert_ints(
            &y,
            &[0, 1, 1, 0],
            &[2, 2],
            &format!("logical_not ({layout})"),
        );
    }
}

#[test]
fn narrow_float_results_are_rounded_once_from_f64() {
    // Inputs that are not exact in the narrow dtypes: each result must be
    // the f64 function of the *stored* input, rounded once.
    let raw = [0.1, 0.7, 1.3, 2.9, -0.3, 5.5];
    let fs: [(&str, Op, F64Unary); 6] = [
        ("exp", |x| x.exp(), f64::exp),
        ("log1p", |x| x.log1p(), f64::ln_1p),
        ("sin", |x| x.sin(), f64::sin),
        ("tanh", |x| x.tanh(), f64::tanh),
        ("sqrt", |x| x.abs()?.sqrt(), |v: f64| v.abs().sqrt()),
        ("recip", |x| x.recip(), |v: f64| 1.0 / v),
    ];
    for dtype in [DType::F16, DType::BF16, DType::F32] {
        let stored = rounded(&raw, dtype);
        let x = t(&raw, &[6], dtype);
        for (name, op, f) in fs {
            let want: Vec<f64> = stored.iter().map(|&v| f(v)).collect();
            let got = op(&x).unwrap().to_f64_vec().unwrap();
            let want = rounded(&want, dtype);
            for (g, w) in got.iter().zip(&want) {
                assert!(same(*g, *w), "{name} [{dtype}]: {got:?} vs {want:?}");
            }
        }
    }
}
