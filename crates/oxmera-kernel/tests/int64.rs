//! The `i64` kernels (word pairs, 32-bit arithmetic) in the simulator give
//! the reference backend's results bit for bit: every elementwise op over
//! every pair of values that take a branch (zero and -1 divisors, `MIN`,
//! `MAX`, values across the word boundary, divisors past one word,
//! negative and large exponents) and seeded ones spread over the whole
//! range, the scalar forms, every reduction, and matmul.

use oxmera_core::{DType, Device};
use oxmera_kernel::ir::Value;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{self, int_code, int_reduce_code};
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
use oxmera_reference as _;
use oxmera_tensor::Tensor;

/// Values that reach every branch of the kernels.
const EDGES: [i64; 20] = [
    0,
    1,
    -1,
    2,
    -2,
    7,
    -7,
    63,
    -64,
    i64::MIN,
    i64::MAX,
    i64::MIN + 1,
    1 << 32,
    -(1 << 32),
    (1 << 32) - 1,
    u32::MAX as i64 + 2,
    -(3 << 40) - 5,
    1 << 62,
    0x1234_5678_9abc_def0,
    i32::MIN as i64,
];

/// The edges, then `n` seeded values: a third over the whole range, a
/// third within one word, a third small (so products and powers both
/// wrap and stay exact).
fn values(n: usize, seed: u64) -> Vec<i64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v = EDGES.to_vec();
    v.extend((0..n).map(|k| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        match k % 3 {
            0 => s as i64,
            1 => (s as i32).into(),
            _ => (s % 41) as i64 - 20,
        }
    }));
    v
}

fn pairs(v: &[i64]) -> Buffer {
    Buffer::from_u32(
        &v.iter()
            .flat_map(|&x| [x as u64 as u32, (x as u64 >> 32) as u32])
            .collect::<Vec<_>>(),
    )
}

fn read(b: &Buffer, n: usize) -> Vec<i64> {
    let w = b.to_u32();
    (0..n)
        .map(|k| (u64::from(w[2 * k]) | (u64::from(w[2 * k + 1]) << 32)) as i64)
        .collect()
}

fn tensor(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape.to_vec(), Device::Reference).unwrap()
}

fn to_i64(t: &Tensor) -> Vec<i64> {
    t.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap()
}

/// The two words of an `i64` scalar argument.
fn words_of(v: i64) -> [Arg; 2] {
    [
        Arg::Scalar(Value::U32(v as u64 as u32)),
        Arg::Scalar(Value::U32((v as u64 >> 32) as u32)),
    ]
}

/// Runs `i64_elementwise` over `n` contiguous elements: `b` read, or the
/// scalar `s` placed by `scalar`; `bounds` are a clamp's.
fn elementwise(op: u32, a: &[i64], b: &[i64], scalar: u32, s: i64, bounds: (i64, i64)) -> Vec<i64> {
    let n = a.len();
    let mut args = vec![
        Arg::Buffer(pairs(a)),
        Arg::Buffer(pairs(b)),
        Arg::Buffer(Buffer::from_u32(&vec![0; 2 * n])),
        Arg::Buffer(Buffer::from_u32(&[n as u32])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Scalar(Value::U32(1)),
        Arg::Scalar(Value::U32(n as u32)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
        Arg::Scalar(Value::U32(scalar)),
    ];
    args.extend(words_of(s));
    args.extend(words_of(bounds.0));
    args.extend(words_of(bounds.1));
    let launch = LaunchConfig::linear((n as u32).div_ceil(64), 64);
    sim::run(
        library::i64_elementwise(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    read(args[2].buffer().unwrap(), n)
}

type Binary = fn(&Tensor, &Tensor) -> oxmera_core::Result<Tensor>;

#[test]
fn binary_ops_match_the_reference() {
    let ops: [(u32, Binary); 9] = [
        (int_code::ADD, |a, b| a.add(b)),
        (int_code::SUB, |a, b| a.sub(b)),
        (int_code::MUL, |a, b| a.mul(b)),
        (int_code::DIV, |a, b| a.div(b)),
        (int_code::REM, |a, b| a.rem(b)),
        (int_code::FMOD, |a, b| a.fmod(b)),
        (int_code::POW, |a, b| a.pow(b)),
        (int_code::MAX, |a, b| a.maximum(b)),
        (int_code::MIN, |a, b| a.minimum(b)),
    ];
    // Every pair of edge values (20 x 20), then seeded pairs.
    let mut a: Vec<i64> = EDGES
        .iter()
        .flat_map(|&x| EDGES.iter().map(move |_| x))
        .collect();
    let mut b: Vec<i64> = EDGES.iter().flat_map(|_| EDGES.iter().copied()).collect();
    a.extend(values(120, 3));
    b.extend(values(120, 4));
    let n = a.len();
    for (code, f) in ops {
        let want = to_i64(&f(&tensor(&a, &[n]), &tensor(&b, &[n])).unwrap());
        let got = elementwise(code, &a, &b, 0, 0, (0, 0));
        for k in 0..n {
            assert_eq!(got[k], want[k], "op {code}: {} op {}", a[k], b[k]);
        }
        // The scalar forms, second and first, with a value past one word.
        for s in [-(3i64 << 40) - 5, 7] {
            let st = tensor(&vec![s; n], &[n]);
            let want = to_i64(&f(&tensor(&a, &[n]), &st).unwrap());
            assert_eq!(
                elementwise(code, &a, &a, 1, s, (0, 0)),
                want,
                "op {code} scalar {s}"
            );
            let want = to_i64(&f(&st, &tensor(&a, &[n])).unwrap());
            assert_eq!(
                elementwise(code, &a, &a, 2, s, (0, 0)),
                want,
                "op {code} {s} first"
            );
        }
    }
}

type Unary = fn(&Tensor) -> oxmera_core::Result<Tensor>;

#[test]
fn unary_ops_match_the_reference() {
    let ops: [(u32, Unary, (i64, i64)); 8] = [
        (int_code::NEG, |x| x.neg(), (0, 0)),
        (int_code::ABS, |x| x.abs(), (0, 0)),
        (int_code::SIGN, |x| x.sign(), (0, 0)),
        (int_code::SQUARE, |x| x.square(), (0, 0)),
        (int_code::RELU, |x| x.relu(), (0, 0)),
        (int_code::COPY, |x| x.floor(), (0, 0)),
        // The backend's bounds for clamp(-6.5, 1e12 + 0.5): ceil and floor.
        (
            int_code::CLAMP,
            |x| x.clamp(Some(-6.5), Some(1e12 + 0.5)),
            (-6, 1_000_000_000_000),
        ),
        // Bounds past one word on both sides.
        (
            int_code::CLAMP,
            |x| x.clamp(Some(-(2f64.powi(40))), Some(2f64.powi(62))),
            (-(1 << 40), 1 << 62),
        ),
    ];
    let a = values(100, 5);
    for (code, f, bounds) in ops {
        let want = to_i64(&f(&tensor(&a, &[a.len()])).unwrap());
        let got = elementwise(code, &a, &a, 0, 0, bounds);
        assert_eq!(got, want, "op {code}");
    }
}

/// Runs `i64_reduce_strided` over dim `dim` of a contiguous `[r, c]`.
fn reduce(op: u32, x: &[i64], shape: [usize; 2], dim: usize) -> Vec<i64> {
    let n_out = shape[1 - dim];
    let marks: Vec<u32> = (0..2).map(|d| u32::from(d == dim)).collect();
    let mut args = vec![
        Arg::Buffer(pairs(x)),
        Arg::Buffer(Buffer::from_u32(&vec![0; 2 * n_out])),
        Arg::Buffer(Buffer::from_u32(&[shape[0] as u32, shape[1] as u32])),
        Arg::Buffer(Buffer::from_i32(&[shape[1] as i32, 1])),
        Arg::Buffer(Buffer::from_u32(&marks)),
        Arg::Scalar(Value::U32(2)),
        Arg::Scalar(Value::U32(n_out as u32)),
        Arg::Scalar(Value::U32(shape[dim] as u32)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
    ];
    let launch = LaunchConfig::linear((n_out as u32).div_ceil(64), 64);
    sim::run(
        library::i64_reduce_strided(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    read(args[1].buffer().unwrap(), n_out)
}

#[test]
fn reductions_match_the_reference() {
    type Reduce = fn(&Tensor, usize) -> oxmera_core::Result<Tensor>;
    let ops: [(u32, Reduce); 6] = [
        (int_reduce_code::SUM, |t, d| t.sum(&[d as isize], false)),
        (int_reduce_code::PROD, |t, d| t.prod(&[d as isize], false)),
        (int_reduce_code::MAX, |t, d| t.max(&[d as isize], false)),
        (int_reduce_code::MIN, |t, d| t.min(&[d as isize], false)),
        (int_reduce_code::ARGMAX, |t, d| t.argmax(d as isize, false)),
        (int_reduce_code::ARGMIN, |t, d| t.argmin(d as isize, false)),
    ];
    // Ties (small values repeat), MIN and MAX, values across the words.
    let mut x = values(43, 7);
    x.truncate(9 * 7);
    for dim in [0, 1] {
        for (code, f) in ops {
            let want = f(&tensor(&x, &[9, 7]), dim).unwrap();
            let got = reduce(code, &x, [9, 7], dim);
            assert_eq!(got, to_i64(&want), "op {code} over {dim}");
        }
    }
}

#[test]
fn matmul_matches_the_reference() {
    let (m, k, n) = (5usize, 9usize, 6usize);
    let a = values(m * k, 11)[EDGES.len()..].to_vec();
    let mut b = values(k * n, 12)[..k * n].to_vec();
    b[0] = i64::MIN;
    let want = to_i64(&tensor(&a, &[m, k]).matmul(&tensor(&b, &[k, n])).unwrap());
    let mut args = vec![
        Arg::Buffer(pairs(&a)),
        Arg::Buffer(pairs(&b)),
        Arg::Buffer(Buffer::from_u32(&vec![0; 2 * m * n])),
        Arg::Buffer(Buffer::from_u32(&[1])),
        Arg::Buffer(Buffer::from_i32(&[0])),
        Arg::Buffer(Buffer::from_i32(&[0])),
        Arg::Scalar(Value::U32(0)),
        Arg::Scalar(Value::U32((m * n) as u32)),
        Arg::Scalar(Value::U32(m as u32)),
        Arg::Scalar(Value::U32(n as u32)),
        Arg::Scalar(Value::U32(k as u32)),
        Arg::Scalar(Value::I32(k as i32)),
        Arg::Scalar(Value::I32(1)),
        Arg::Scalar(Value::I32(n as i32)),
        Arg::Scalar(Value::I32(1)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::I32(0)),
    ];
    let launch = LaunchConfig::linear(((m * n) as u32).div_ceil(64), 64);
    sim::run(
        library::i64_matmul_strided(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    assert_eq!(read(args[2].buffer().unwrap(), m * n), want);
}
