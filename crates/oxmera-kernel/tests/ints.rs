//! The integer kernels in the simulator give the reference backend's
//! results bit for bit: every elementwise op and comparison on `i32` and
//! `u8` over values that take each branch (zero and -1 divisors, `MIN`,
//! negative exponents, wrapping), every reduction, and matmul.

use oxmera_core::{DType, Device};
use oxmera_kernel::ir::Value;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{self, int_code, int_kind, int_out, int_reduce_code};
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
use oxmera_reference as _;
use oxmera_tensor::Tensor;

/// Values that reach every branch of the kernels, then seeded ones.
fn values(dtype: DType, n: usize, seed: u64) -> Vec<i64> {
    let edges: Vec<i64> = match dtype {
        DType::U8 => vec![0, 1, 2, 3, 7, 128, 254, 255],
        _ => vec![
            0,
            1,
            -1,
            2,
            -2,
            7,
            -7,
            31,
            -31,
            40,
            i32::MIN.into(),
            i32::MAX.into(),
            65536,
            -65536,
        ],
    };
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|k| {
            if k < edges.len() {
                edges[(k + seed as usize) % edges.len()]
            } else {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                match dtype {
                    DType::U8 => (s % 256) as i64,
                    _ if k % 3 == 0 => (s as u32 as i32).into(),
                    _ => (s % 41) as i64 - 20,
                }
            }
        })
        .collect()
}

/// The device words of `v` in `dtype`: `i32` one a word, `u8` and bool
/// bytes four to a word.
fn words(dtype: DType, v: &[i64]) -> Buffer {
    match dtype {
        DType::I32 => Buffer::from_u32(&v.iter().map(|&x| x as i32 as u32).collect::<Vec<_>>()),
        _ => {
            let bytes: Vec<u8> = v.iter().map(|&x| x as u8).collect();
            let w: Vec<u32> = bytes
                .chunks(4)
                .map(|c| {
                    let mut b = [0u8; 4];
                    b[..c.len()].copy_from_slice(c);
                    u32::from_le_bytes(b)
                })
                .collect();
            Buffer::from_u32(&w)
        }
    }
}

/// `n` elements of `dtype` read back from the kernel's words, as `i64`.
fn read(dtype: DType, b: &Buffer, n: usize) -> Vec<i64> {
    let w = b.to_u32();
    match dtype {
        DType::I32 => w[..n].iter().map(|&x| i64::from(x as i32)).collect(),
        DType::I64 => (0..n)
            .map(|k| (u64::from(w[2 * k]) | (u64::from(w[2 * k + 1]) << 32)) as i64)
            .collect(),
        _ => (0..n)
            .map(|k| i64::from((w[k / 4] >> (8 * (k % 4))) & 0xff))
            .collect(),
    }
}

fn tensor(dtype: DType, v: &[i64], shape: &[usize]) -> Tensor {
    let t = match dtype {
        DType::I32 => Tensor::from_vec(
            v.iter().map(|&x| x as i32).collect(),
            shape.to_vec(),
            Device::Reference,
        ),
        DType::U8 => Tensor::from_vec(
            v.iter().map(|&x| x as u8).collect(),
            shape.to_vec(),
            Device::Reference,
        ),
        _ => Tensor::from_vec(
            v.iter().map(|&x| x != 0).collect(),
            shape.to_vec(),
            Device::Reference,
        ),
    };
    t.unwrap()
}

fn to_i64(t: &Tensor) -> Vec<i64> {
    t.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap()
}

fn kind(dtype: DType) -> u32 {
    match dtype {
        DType::I32 => int_kind::I32,
        DType::U8 => int_kind::U8,
        _ => int_kind::BOOL,
    }
}

/// Runs `int_elementwise` over `n` contiguous elements: `b` read, or the
/// scalar `s` placed by `scalar`.
fn elementwise(
    dtype: DType,
    op: u32,
    a: &[i64],
    b: &[i64],
    scalar: u32,
    s: i64,
    bounds: (i32, i32),
) -> Vec<i64> {
    let n = a.len();
    let compare = op >= int_code::EQ;
    let out = if compare { DType::Bool } else { dtype };
    let packed = out != DType::I32;
    let per = if packed { 4 } else { 1 };
    let threads = n.div_ceil(per) as u32;
    let mut args = vec![
        Arg::Buffer(words(dtype, a)),
        Arg::Buffer(words(dtype, b)),
        Arg::Buffer(Buffer::from_u32(&vec![0; threads as usize])),
        Arg::Buffer(Buffer::from_u32(&[n as u32])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Buffer(Buffer::from_i32(&[1])),
        Arg::Scalar(Value::U32(1)),
        Arg::Scalar(Value::U32(n as u32)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
        Arg::Scalar(Value::U32(kind(dtype))),
        Arg::Scalar(Value::Bool(packed)),
        Arg::Scalar(Value::U32(scalar)),
        Arg::Scalar(Value::I32(s as i32)),
        Arg::Scalar(Value::I32(bounds.0)),
        Arg::Scalar(Value::I32(bounds.1)),
    ];
    let launch = LaunchConfig::linear(threads.div_ceil(64), 64);
    sim::run(
        library::int_elementwise(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    read(out, args[2].buffer().unwrap(), n)
}

type Binary = fn(&Tensor, &Tensor) -> oxmera_core::Result<Tensor>;

#[test]
fn binary_ops_and_comparisons_match_the_reference() {
    let ops: [(u32, Binary); 15] = [
        (int_code::ADD, |a, b| a.add(b)),
        (int_code::SUB, |a, b| a.sub(b)),
        (int_code::MUL, |a, b| a.mul(b)),
        (int_code::DIV, |a, b| a.div(b)),
        (int_code::REM, |a, b| a.rem(b)),
        (int_code::FMOD, |a, b| a.fmod(b)),
        (int_code::POW, |a, b| a.pow(b)),
        (int_code::MAX, |a, b| a.maximum(b)),
        (int_code::MIN, |a, b| a.minimum(b)),
        (int_code::EQ, |a, b| a.eq(b)),
        (int_code::NE, |a, b| a.ne(b)),
        (int_code::LT, |a, b| a.lt(b)),
        (int_code::LE, |a, b| a.le(b)),
        (int_code::GT, |a, b| a.gt(b)),
        (int_code::GE, |a, b| a.ge(b)),
    ];
    for dtype in [DType::I32, DType::U8] {
        // Every pair of edge values, then seeded ones: 14 x 14 for i32.
        let edges = values(dtype, 14, 0);
        let edges = &edges[..if dtype == DType::U8 { 8 } else { 14 }];
        let mut a: Vec<i64> = edges
            .iter()
            .flat_map(|&x| edges.iter().map(move |_| x))
            .collect();
        let mut b: Vec<i64> = edges.iter().flat_map(|_| edges.iter().copied()).collect();
        a.extend(values(dtype, 61, 3));
        b.extend(values(dtype, 61, 4));
        let n = a.len();
        for (code, f) in ops {
            let want = to_i64(&f(&tensor(dtype, &a, &[n]), &tensor(dtype, &b, &[n])).unwrap());
            let got = elementwise(dtype, code, &a, &b, 0, 0, (0, 0));
            assert_eq!(got, want, "op {code} on {dtype:?}");
            // The scalar forms: b[5] second, then first.
            let s = b[5];
            let st = tensor(dtype, &vec![s; n], &[n]);
            let want = to_i64(&f(&tensor(dtype, &a, &[n]), &st).unwrap());
            assert_eq!(
                elementwise(dtype, code, &a, &a, 1, s, (0, 0)),
                want,
                "op {code} scalar"
            );
            let want = to_i64(&f(&st, &tensor(dtype, &a, &[n])).unwrap());
            assert_eq!(
                elementwise(dtype, code, &a, &a, 2, s, (0, 0)),
                want,
                "op {code} first"
            );
        }
    }
    // Bools compare by truth, as the reference's 0 and 1.
    let a = [1i64, 0, 1, 0, 1, 1, 0];
    let b = [1i64, 1, 0, 0, 0, 1, 1];
    let want = to_i64(
        &tensor(DType::Bool, &a, &[7])
            .lt(&tensor(DType::Bool, &b, &[7]))
            .unwrap(),
    );
    assert_eq!(
        elementwise(DType::Bool, int_code::LT, &a, &b, 0, 0, (0, 0)),
        want
    );
}

type Unary = fn(&Tensor) -> oxmera_core::Result<Tensor>;

#[test]
fn unary_ops_match_the_reference() {
    let ops: [(u32, Unary, bool); 8] = [
        (int_code::NEG, |x| x.neg(), false),
        (int_code::ABS, |x| x.abs(), true),
        (int_code::SIGN, |x| x.sign(), true),
        (int_code::SQUARE, |x| x.square(), true),
        (int_code::RELU, |x| x.relu(), true),
        (int_code::COPY, |x| x.floor(), true),
        (int_code::COPY, |x| x.round(), true),
        (int_code::CLAMP, |x| x.clamp(Some(-6.5), Some(100.2)), true),
    ];
    for dtype in [DType::I32, DType::U8] {
        let a = values(dtype, 77, 5);
        for (code, f, unsigned_too) in ops {
            if dtype == DType::U8 && !unsigned_too {
                continue;
            }
            let want = to_i64(&f(&tensor(dtype, &a, &[77])).unwrap());
            // The backend's bounds for clamp(-6.5, 100.2): ceil and floor,
            // saturated to the dtype.
            let bounds = if dtype == DType::U8 {
                (0, 100)
            } else {
                (-6, 100)
            };
            let got = elementwise(dtype, code, &a, &a, 0, 0, bounds);
            assert_eq!(got, want, "op {code} on {dtype:?}");
        }
    }
}

/// Runs `int_reduce_strided` over dim `dim` of a contiguous `[r, c]`.
fn reduce(dtype: DType, op: u32, x: &[i64], shape: [usize; 2], dim: usize, out: DType) -> Vec<i64> {
    let n_out = shape[1 - dim];
    let (out_kind, per, words_per) = match out {
        DType::I64 => (int_out::PAIR, 1, 2),
        DType::I32 => (int_out::WORD, 1, 1),
        _ => (int_out::BYTES, 4, 1),
    };
    let threads = n_out.div_ceil(per) as u32;
    let marks: Vec<u32> = (0..2).map(|d| u32::from(d == dim)).collect();
    let mut args = vec![
        Arg::Buffer(words(dtype, x)),
        Arg::Buffer(Buffer::from_u32(&vec![0; threads as usize * words_per])),
        Arg::Buffer(Buffer::from_u32(&[shape[0] as u32, shape[1] as u32])),
        Arg::Buffer(Buffer::from_i32(&[shape[1] as i32, 1])),
        Arg::Buffer(Buffer::from_u32(&marks)),
        Arg::Scalar(Value::U32(2)),
        Arg::Scalar(Value::U32(n_out as u32)),
        Arg::Scalar(Value::U32(shape[dim] as u32)),
        Arg::Scalar(Value::I32(0)),
        Arg::Scalar(Value::U32(op)),
        Arg::Scalar(Value::U32(kind(dtype))),
        Arg::Scalar(Value::U32(out_kind)),
    ];
    let launch = LaunchConfig::linear(threads.div_ceil(64), 64);
    sim::run(
        library::int_reduce_strided(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    read(out, args[1].buffer().unwrap(), n_out)
}

#[test]
fn reductions_match_the_reference() {
    type Reduce = fn(&Tensor, usize) -> oxmera_core::Result<Tensor>;
    let ops: [(u32, Reduce); 8] = [
        (int_reduce_code::SUM, |t, d| t.sum(&[d as isize], false)),
        (int_reduce_code::PROD, |t, d| t.prod(&[d as isize], false)),
        (int_reduce_code::MAX, |t, d| t.max(&[d as isize], false)),
        (int_reduce_code::MIN, |t, d| t.min(&[d as isize], false)),
        (int_reduce_code::ARGMAX, |t, d| t.argmax(d as isize, false)),
        (int_reduce_code::ARGMIN, |t, d| t.argmin(d as isize, false)),
        (int_reduce_code::ALL, |t, d| t.all(&[d as isize], false)),
        (int_reduce_code::ANY, |t, d| t.any(&[d as isize], false)),
    ];
    for dtype in [DType::I32, DType::U8, DType::Bool] {
        // Ties (small values repeat), zeros in some rows, MIN and MAX.
        let mut x = values(dtype, 9 * 7, 7);
        if dtype == DType::Bool {
            x.iter_mut().for_each(|v| *v = i64::from(*v % 3 != 0));
        }
        for dim in [0, 1] {
            for (code, f) in ops {
                let want = f(&tensor(dtype, &x, &[9, 7]), dim).unwrap();
                let got = reduce(dtype, code, &x, [9, 7], dim, want.dtype());
                assert_eq!(got, to_i64(&want), "op {code} on {dtype:?} over {dim}");
            }
        }
    }
}

#[test]
fn matmul_matches_the_reference() {
    for dtype in [DType::I32, DType::U8] {
        let (m, k, n) = (5usize, 9usize, 6usize);
        let a = values(dtype, m * k, 11);
        let b = values(dtype, k * n, 12);
        let want = to_i64(
            &tensor(dtype, &a, &[m, k])
                .matmul(&tensor(dtype, &b, &[k, n]))
                .unwrap(),
        );
        let per = if dtype == DType::U8 { 4 } else { 1 };
        let threads = (m * n).div_ceil(per) as u32;
        let mut args = vec![
            Arg::Buffer(words(dtype, &a)),
            Arg::Buffer(words(dtype, &b)),
            Arg::Buffer(Buffer::from_u32(&vec![0; threads as usize])),
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
            Arg::Scalar(Value::U32(kind(dtype))),
        ];
        let launch = LaunchConfig::linear(threads.div_ceil(64), 64);
        sim::run(
            library::int_matmul_strided(),
            launch,
            &mut args,
            &SimOptions::default(),
        )
        .unwrap();
        assert_eq!(
            read(dtype, args[2].buffer().unwrap(), m * n),
            want,
            "{dtype:?}"
        );
    }
}
