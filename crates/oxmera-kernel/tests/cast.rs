//! `cast_strided` in the simulator against the reference backend's casts,
//! for every pair of the eight dtypes a GPU stores as words (but `f64`
//! into a half, which the kernel leaves to the reference), bit for bit
//! (any NaN for a NaN): values at every rounding, truncation, saturation
//! and wrapping edge, read through a strided view with an offset.
//!
//! Into `f16` and `bf16` the oracle is the rule `Element` documents — one
//! rounding to nearest even from the `f64` value — computed here
//! ([`round_half`]), not the reference's `half` crate: its `f64 → bf16`
//! (and `f64 → f16` without F16C) drops the low 32 bits of the `f64`
//! mantissa before rounding, so a value just past a halfway point by less
//! than 2^-20 of its leading bit rounds as a tie there
//! (`2^25 + 2^17 + 1` → bf16 gives `2^25`, not `2^25 + 2^18`). Every
//! other value must equal the reference's.

use oxmera_core::{DType, Device};
use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{cast_code, cast_strided};
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
use oxmera_reference as _;
use oxmera_tensor::{HostBuffer, Tensor};

const DTYPES: [(DType, u32); 8] = [
    (DType::F64, cast_code::F64),
    (DType::F32, cast_code::F32),
    (DType::F16, cast_code::F16),
    (DType::BF16, cast_code::BF16),
    (DType::I32, cast_code::I32),
    (DType::I64, cast_code::I64),
    (DType::U8, cast_code::U8),
    (DType::Bool, cast_code::BOOL),
];

/// Float sources: halfway cases for every float type, saturation edges of
/// every integer type, subnormals, NaN and infinities.
fn float_values() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        0.5,
        -0.75,
        1.5,
        -2.5,
        2.5,
        254.5,
        255.0,
        255.9,
        256.0,
        300.0,
        -1.0,
        -129.75,
        65504.0,
        65519.0,
        65520.0,
        1.0 + 2f64.powi(-11),
        1.0 + 3.0 * 2f64.powi(-11),
        1.0 + 2f64.powi(-8),
        1.0e-40,
        6.0e-8,
        3.0e-5,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -3.0e9,
        3.0e9,
        9.2e18,
        9.3e18,
        -9.3e18,
        1.0e20,
        -1.0e20,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        // f64 into f32: ties and near-ties at 24 bits, the edge where
        // f32::MAX rounds to ∞, f32's subnormals and below, f64's own
        // subnormals, and integers past i64's range.
        1.0 + 2f64.powi(-24),
        1.0 + 3.0 * 2f64.powi(-24),
        1.0 + 2f64.powi(-24) + 2f64.powi(-50),
        -(1.0 + 2f64.powi(-24) - 2f64.powi(-52)),
        f32::MAX as f64 * (1.0 + 2f64.powi(-25)),
        f32::MAX as f64 * (1.0 + 2f64.powi(-24)),
        -1.0e39,
        1.0e-45,
        7.0e-46,
        7.1e-46,
        2f64.powi(-149) * 2.5,
        -2f64.powi(-149) * 3.5,
        1.1754942e-38,
        2f64.powi(-126) * (1.0 - 2f64.powi(-25)),
        1.0e-300,
        -5.0e-324,
        9.223372036854775e18,
        -9.223372036854776e18,
        1.0e19,
    ];
    for k in 0..40 {
        v.push((k as f64 - 20.0) * 1.37);
    }
    v
}

/// Integer sources: wrapping edges, and `i64`s past 2^53 whose two
/// roundings (to `f64`, then to the float type) differ from one.
fn int_values() -> Vec<i64> {
    let mut v = vec![
        0,
        1,
        -1,
        127,
        128,
        255,
        256,
        257,
        -129,
        2049,
        2051,
        65504,
        65519,
        65520,
        65535,
        16_777_217,
        -16_777_219,
        (1 << 25) + (1 << 17) + 1,
        (1 << 25) + (1 << 17),
        i32::MAX as i64,
        i32::MIN as i64,
        i32::MAX as i64 + 1,
        (1i64 << 53) + 1,
        (1i64 << 54) + 3,
        (1i64 << 62) + (1 << 38) + (1 << 9),
        (1i64 << 60) + (1 << 36) + (1 << 7) + 1,
        -(1i64 << 61) - (1 << 37) - 1,
        i64::MAX,
        i64::MIN,
        i64::MIN + 1,
        0x1234_5678_9abc_def0,
    ];
    for k in 0..40 {
        v.push((k - 20) * 1_000_003 * (k % 7 + 1));
    }
    v
}

fn words_of(buf: &HostBuffer) -> Vec<u32> {
    let mut bytes = buf.to_le_bytes();
    bytes.resize(bytes.len().div_ceil(4) * 4, 0);
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// `v` rounded once, to nearest even, to `to` (f16 or bf16), as an f64.
fn round_half(v: f64, to: DType) -> f64 {
    let (p, max_exp) = if to == DType::BF16 {
        (8, 127)
    } else {
        (11, 15)
    };
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let e = ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    // Below the smallest normal the step is the subnormals'.
    let min_exp = if to == DType::BF16 { -126 } else { -14 };
    let step = 2f64.powi(e.max(min_exp) - (p - 1));
    let r = (v / step).round_ties_even() * step;
    let largest = (2.0 - 2f64.powi(1 - p)) * 2f64.powi(max_exp);
    if r.abs() > largest {
        return f64::INFINITY.copysign(v);
    }
    r
}

fn same(a: &HostBuffer, b: &HostBuffer, i: usize) -> bool {
    let (x, y) = (a.get_f64(i), b.get_f64(i));
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    // Bits, so -0.0 and 0.0 differ; i64 beyond 2^53 compared as i64.
    x.to_bits() == y.to_bits() && a.get_i64(i) == b.get_i64(i)
}

#[test]
fn every_pair_matches_the_reference_bit_for_bit() {
    for (from, from_code) in DTYPES {
        let source = if from.is_float() {
            HostBuffer::from_f64s(from, float_values())
        } else {
            HostBuffer::from_i64s(from, int_values())
        };
        let len = source.len();
        // Every other element, from the second: a strided view.
        let n = (len - 1) / 2;
        let x = Tensor::from_host(source.clone(), [len], Device::Reference, "test").unwrap();
        let view = x.narrow(0, 1, 2 * n).unwrap();
        let view = view.reshape([n, 2]).unwrap().select(1, 0).unwrap();
        for (to, to_code) in DTYPES {
            if from == DType::F64 && matches!(to, DType::F16 | DType::BF16) {
                continue;
            }
            let mut want = view.to_dtype(to).unwrap().to_host().unwrap();
            if matches!(to, DType::F16 | DType::BF16) {
                let exact = view.to_dtype(DType::F64).unwrap().to_host().unwrap();
                // An i64 past 2^53 is first rounded to f64, as `as f64`.
                let values = (0..n).map(|i| round_half(exact.get_f64(i), to));
                want = HostBuffer::from_f64s(to, values);
            }
            let out_words = match to.size_in_bytes() {
                1 => n.div_ceil(4),
                2 => n.div_ceil(2),
                4 => n,
                _ => 2 * n,
            };
            let mut args = vec![
                Arg::Buffer(Buffer::from_u32(&words_of(&source))),
                Arg::Buffer(Buffer::from_u32(&vec![0; out_words])),
                Arg::Buffer(Buffer::from_u32(&[n as u32])),
                Arg::Buffer(Buffer::from_i32(&[2])),
                Arg::Scalar(Value::U32(1)),
                Arg::Scalar(Value::U32(n as u32)),
                Arg::Scalar(Value::I32(1)),
                Arg::Scalar(Value::U32(from_code)),
                Arg::Scalar(Value::U32(to_code)),
            ];
            let launch = LaunchConfig {
                grid: Dim3::x((out_words as u32).div_ceil(64)),
                block: Dim3::x(64),
            };
            sim::run(cast_strided(), launch, &mut args, &SimOptions::default()).unwrap();
            let got_words = args[1].buffer().unwrap().to_u32();
            let bytes: Vec<u8> = got_words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let got = HostBuffer::from_le_bytes(to, &bytes[..n * to.size_in_bytes()]);
            for i in 0..n {
                assert!(
                    same(&got, &want, i),
                    "{from:?} -> {to:?} element {i} ({}): got {} want {}",
                    source.get_f64(1 + 2 * i),
                    got.get_f64(i),
                    want.get_f64(i)
                );
            }
        }
    }
}
