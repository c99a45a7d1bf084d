//! 16-bit floats (`f16`, `bf16`) to and from `f32`, so a GPU that stores
//! them as packed halves of 32-bit words can compute with its `f32` kernels.
//!
//! WGSL has no `bf16` and `f16` only behind an adapter feature, and the
//! language has neither type yet, so both are moved as bits: element `e` of
//! a half tensor is the low (`e` even) or high (`e` odd) 16 bits of word
//! `e / 2`. Widening is exact. Narrowing rounds to nearest, ties to even —
//! the one rounding the reference makes — and works on the bits, because a
//! GPU compiler may not keep a float expression's rounding as written:
//!
//! - `bf16` is the high half of an `f32`: add `0x7fff` plus the lowest kept
//!   bit, then shift (a NaN keeps its sign and becomes a quiet NaN);
//! - `f16` rebiases the exponent (127 → 15) and rounds the 13 dropped
//!   mantissa bits the same way while the result is normal; from 65520 up
//!   (halfway past the largest, 65504) it is infinity; below 2^-14 the value
//!   times 2^24 (exact) is rounded to an integer, the subnormal's mantissa.

use oxmera_kernel_macros::kernel;

/// What the 16-bit elements are, for [`halves_to_f32`] and [`f32_to_halves`].
pub mod half_mode {
    /// IEEE binary16.
    pub const F16: u32 = 0;
    /// bfloat16: the high half of an `f32`.
    pub const BF16: u32 = 1;
    /// Bits to move, not numbers: zero-extended into a word and back (the
    /// data-movement ops run on the words, every pattern kept).
    pub const BITS: u32 = 2;
}

use super::demos::Demo;
use crate::ir::{Dim3, Value};
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

/// Halves read through a strided view to words: `out[i]` is the half at
/// element offset `xoff + Σ c·stride` of the packed input, as an `f32`
/// (`mode` [`half_mode::F16`] or [`half_mode::BF16`]) or as its bits
/// zero-extended ([`half_mode::BITS`]).
#[kernel(block = [64, 256])]
pub fn halves_to_f32(
    x: &[u32],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    mode: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            xi += c as i32 * xstride[d];
        }
        let at = xi as u32;
        let h = (x[at / 2] >> (16 * (at % 2))) & 0xffffu32;
        let mut bits = h;
        if mode == 1 {
            bits = h << 16;
        } else if mode == 0 {
            let sign = (h >> 15) << 31;
            let e = (h >> 10) & 0x1fu32;
            let m = h & 0x3ffu32;
            if e == 0x1fu32 {
                // Infinity, or a NaN keeping its payload.
                bits = sign | 0x7f80_0000u32 | (m << 13);
            } else if e == 0 {
                // Zero or subnormal: m · 2^-24, exact in f32.
                bits = sign | ((m as f32) * from_bits(0x3380_0000u32)).to_bits();
            } else {
                bits = sign | ((e + 112) << 23) | (m << 13);
            }
        }
        out[i] = bits;
    }
}

/// Words through a strided view to halves packed two to a word: `f32`
/// rounded to nearest even (`mode` [`half_mode::F16`] or
/// [`half_mode::BF16`]), or the low 16 bits ([`half_mode::BITS`]). Thread
/// `w` writes elements `2w` and `2w + 1` of the contiguous output.
#[kernel(block = [64, 256])]
pub fn f32_to_halves(
    x: &[u32],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    mode: u32,
) {
    let w = block_idx_x() * block_dim_x() + thread_idx_x();
    if w < (n + 1) / 2 {
        let mut word = 0u32;
        for part in 0..2u32 {
            let i = 2 * w + part;
            if i < n {
                let mut rem = i;
                let mut xi = xoff;
                for k in 0..ndim {
                    let d = ndim - 1 - k;
                    let c = rem % shape[d];
                    rem = rem / shape[d];
                    xi += c as i32 * xstride[d];
                }
                let b = x[xi as u32];
                let a = b & 0x7fff_ffffu32;
                let mut h = b & 0xffffu32;
                if mode == 1 {
                    if a > 0x7f80_0000u32 {
                        h = (b >> 16) | 0x40u32;
                    } else {
                        h = (b + 0x7fffu32 + ((b >> 16) & 1)) >> 16;
                    }
                } else if mode == 0 {
                    let sign = (b >> 16) & 0x8000u32;
                    if a > 0x7f80_0000u32 {
                        h = sign | 0x7e00u32;
                    } else if a >= 0x477f_f000u32 {
                        h = sign | 0x7c00u32;
                    } else if a >= 0x3880_0000u32 {
                        h = sign | ((a - 0x3800_0000u32 + 0xfffu32 + ((a >> 13) & 1)) >> 13);
                    } else {
                        // Below the smallest normal: round a · 2^24 (< 1024,
                        // exact) to an integer, ties to even.
                        let v = from_bits(a) * 16_777_216.0;
                        let f = v.floor();
                        let r = v - f;
                        let mut m = f as u32;
                        if r > 0.5 || (r == 0.5 && (m & 1) == 1) {
                            m += 1;
                        }
                        h = sign | m;
                    }
                }
                word = word | (h << (16 * part));
            }
        }
        out[w] = word;
    }
}

fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}

/// The demos of this module's kernels (see [`super::prepare`]).
pub(super) fn demo(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    let bt = block.count() as u32;
    // Odd seeds f16, even ones bf16 (the bits mode is an exact move,
    // tested beside the conversions).
    let brain = seed % 2 == 0;
    let mode = if brain {
        half_mode::BF16
    } else {
        half_mode::F16
    };
    let kind = if brain { "bf16" } else { "f16" };
    // A transposed [3, 4] view of a [4, 3] tensor of 12 values, signs,
    // subnormals and halfway cases among them.
    let values: [f32; 12] = [
        1.0,
        -2.5,
        65504.0,
        6.0e-8,
        -3.0e-5,
        0.333_333_34,
        1.000_488_3,
        -0.0,
        1.0e-3,
        f32::INFINITY,
        100_000.0,
        2.0e-38,
    ];
    let transposed: Vec<usize> = (0..3)
        .flat_map(|r| (0..4).map(move |c| c * 3 + r))
        .collect();
    let view = |args: Vec<Arg>| -> Vec<Arg> {
        let mut a = args;
        a.extend([
            Arg::Buffer(Buffer::from_u32(&[3, 4])),
            Arg::Buffer(Buffer::from_i32(&[1, 3])),
            u(2),
            u(12),
            Arg::Scalar(Value::I32(0)),
            u(mode),
        ]);
        a
    };
    let to_bits = |v: f32| -> u16 {
        if brain {
            half::bf16::from_f32(v).to_bits()
        } else {
            half::f16::from_f32(v).to_bits()
        }
    };
    let to_f64 = |h: u16| -> f64 {
        if brain {
            half::bf16::from_bits(h).to_f64()
        } else {
            half::f16::from_bits(h).to_f64()
        }
    };
    Some(match name {
        "halves_to_f32" => {
            let halves: Vec<u16> = values.iter().map(|&v| to_bits(v)).collect();
            let words: Vec<u32> = halves
                .chunks(2)
                .map(|p| u32::from(p[0]) | (u32::from(p[1]) << 16))
                .collect();
            let expected: Vec<f64> = transposed.iter().map(|&s| to_f64(halves[s])).collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(12u32.div_ceil(bt)),
                    block,
                },
                args: view(vec![
                    Arg::Buffer(Buffer::from_u32(&words)),
                    Arg::Buffer(Buffer::from_u32(&[0; 12])),
                ]),
                output: 1,
                // The output is read back as words: compare the f32 bits.
                expected: expected
                    .iter()
                    .map(|&e| f64::from((e as f32).to_bits()))
                    .collect(),
                tolerance: vec![0.0; 12],
                summary: format!("12 {kind} values through a transposed view, widened exactly"),
            }
        }
        "f32_to_halves" => {
            let bits: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
            let halves: Vec<u16> = transposed.iter().map(|&s| to_bits(values[s])).collect();
            let expected: Vec<f64> = halves
                .chunks(2)
                .map(|p| f64::from(u32::from(p[0]) | (u32::from(p[1]) << 16)))
                .collect();
            Demo {
                launch: LaunchConfig {
                    grid: Dim3::x(6u32.div_ceil(bt)),
                    block,
                },
                args: view(vec![
                    Arg::Buffer(Buffer::from_u32(&bits)),
                    Arg::Buffer(Buffer::from_u32(&[0; 6])),
                ]),
                output: 1,
                expected,
                tolerance: vec![0.0; 6],
                summary: format!(
                    "12 f32 through a transposed view to {kind}, rounded to nearest even, two to a word"
                ),
            }
        }
        _ => return None,
    })
}
