//! Random numbers on the device: the same Philox4x32-10 blocks the host
//! draws ([`oxmera_core::philox4x32_10`]), computed a thread per element.
//!
//! Two things the GPU lacks are built from what it has. WGSL has no 64-bit
//! product, and Philox needs the high word of a 32×32-bit one: it is put
//! together from four 16×16-bit products, each of which fits a `u32`. And
//! the host's `[0, 1)` value is 53 random bits rounded once to the
//! element's float; converting the two words to `f32` and adding them
//! would round twice (and WGSL leaves the rounding of an inexact
//! int-to-float conversion to the implementation), so the kernel rounds
//! the 53-bit integer to 24 significant bits itself, to nearest with ties
//! to even, and assembles the float from its bits: exactly the host's
//! `f32` value, bit for bit.

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::Demo;

/// `n` uniform `f32` values in `[low, high)`: element `i` from the Philox
/// block at counter `offset + i` (a 64-bit counter, passed as two words)
/// under key `key`, mapped as the host maps it — `u` in `[0, 1)` from the
/// block's first two words (exact), then `low + (high - low)·u` in `f32`.
/// For `low = 0, high = 1` the values are the host's bit for bit; other
/// bounds differ from the host's single rounding of the `f64` map by the
/// three roundings of this `f32` one (see `oxmera_tensor::random`).
///
/// `rounds` is 10 (Philox4x32-10). With 0 the block is the counter itself,
/// which lets a test choose the two words and check the map to `[0, 1)`
/// on every path of its rounding.
///
/// Helper functions (the kernel-language issue) would hold the two
/// products and the rounding; until then they are written out.
#[kernel(block = [64, 256])]
pub fn philox_uniform(
    out: &mut [f32],
    n: u32,
    offset_lo: u32,
    offset_hi: u32,
    key_lo: u32,
    key_hi: u32,
    rounds: u32,
    low: f32,
    high: f32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        // The counter offset + i, with the carry into its high word.
        let mut c0 = offset_lo + i;
        let mut c1 = offset_hi;
        if c0 < offset_lo {
            c1 += 1u32;
        }
        let mut c2 = 0u32;
        let mut c3 = 0u32;
        let mut k0 = key_lo;
        let mut k1 = key_hi;
        for _round in 0..rounds {
            // M0·c0 and M1·c2 as (hi, lo): the low words wrap; each high
            // word from 16-bit halves, whose products and partial sums
            // stay below 2^32.
            let lo0 = 0xD251_1F53u32 * c0;
            let t0 = 0x1F53u32 * (c0 & 0xFFFFu32);
            let m0 = 0xD251u32 * (c0 & 0xFFFFu32) + (t0 >> 16u32);
            let p0 = 0x1F53u32 * (c0 >> 16u32) + (m0 & 0xFFFFu32);
            let hi0 = 0xD251u32 * (c0 >> 16u32) + (m0 >> 16u32) + (p0 >> 16u32);
            let lo1 = 0xCD9E_8D57u32 * c2;
            let t1 = 0x8D57u32 * (c2 & 0xFFFFu32);
            let m1 = 0xCD9Eu32 * (c2 & 0xFFFFu32) + (t1 >> 16u32);
            let p1 = 0x8D57u32 * (c2 >> 16u32) + (m1 & 0xFFFFu32);
            let hi1 = 0xCD9Eu32 * (c2 >> 16u32) + (m1 >> 16u32) + (p1 >> 16u32);
            let n0 = hi1 ^ c1 ^ k0;
            let n2 = hi0 ^ c3 ^ k1;
            c0 = n0;
            c1 = lo1;
            c2 = n2;
            c3 = lo0;
            k0 += 0x9E37_79B9u32;
            k1 += 0xBB67_AE85u32;
        }
        // The 53 bits (c1·2^32 + c0) >> 11, as 21 high and 32 low bits,
        // rounded to a 24-bit significand m with the leading one at bit
        // e of the 53 (value m·2^(e - 23 - 53)).
        let top = c1 >> 11u32;
        let bot = (c1 << 21u32) | (c0 >> 11u32);
        let mut m = 0u32;
        let mut e = 0u32;
        let mut dropped = 0u32;
        let mut half = 1u32;
        if top != 0u32 {
            let mut p = 0u32;
            while (top >> (p + 1u32)) != 0u32 {
                p += 1u32;
            }
            let up = 23u32 - p;
            m = (top << up) | (bot >> (32u32 - up));
            dropped = bot & ((1u32 << (32u32 - up)) - 1u32);
            half = 1u32 << (31u32 - up);
            e = 32u32 + p;
        } else if bot != 0u32 {
            let mut p = 0u32;
            while p < 31u32 && (bot >> (p + 1u32)) != 0u32 {
                p += 1u32;
            }
            if p <= 23u32 {
                m = bot << (23u32 - p);
            } else {
                let s = p - 23u32;
                m = bot >> s;
                dropped = bot & ((1u32 << s) - 1u32);
                half = 1u32 << (s - 1u32);
            }
            e = p;
        }
        if dropped > half || (dropped == half && (m & 1u32) == 1u32) {
            m += 1u32;
        }
        if m == 0x0100_0000u32 {
            m = 0x0080_0000u32;
            e += 1u32;
        }
        let mut u = 0.0f32;
        if m != 0u32 {
            // Exponent e - 76 (2^(e-23-53) times the significand's 2^23).
            u = f32::from_bits(((e + 74u32) << 23u32) | (m & 0x007F_FFFFu32));
        }
        out[i] = low + (high - low) * u;
    }
}

/// The demo: 1000 values in `[-1, 3)` at a stream offset whose low word
/// wraps inside the draw (the counter's carry), against the host's `f64`
/// map rounded once. The tolerance is the three `f32` roundings of
/// `low + (high - low)·u` beside the host's one: `2^-24·(3|high - low|·u
/// + 2|x|)`, as `oxmera_tensor::random` states for devices.
pub(super) fn demo(block: Dim3, seed: u64) -> Demo {
    let (n, low, high) = (1000u32, -1.0f64, 3.0f64);
    let offset = (1u64 << 32) - 500;
    let key = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let unit: Vec<f64> = (0..u64::from(n))
        .map(|i| {
            let c = offset + i;
            let w = oxmera_core::philox4x32_10(
                [c as u32, (c >> 32) as u32, 0, 0],
                [key as u32, (key >> 32) as u32],
            );
            oxmera_core::unit_f64(w[0], w[1])
        })
        .collect();
    let expected: Vec<f64> = unit
        .iter()
        .map(|u| f64::from((low + (high - low) * u) as f32))
        .collect();
    let tolerance = unit
        .iter()
        .zip(&expected)
        .map(|(u, x)| 2f64.powi(-24) * (3.0 * (high - low) * u + 2.0 * x.abs()))
        .collect();
    let bt = block.count() as u32;
    let word = |v: u64| Arg::Scalar(Value::U32(v as u32));
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(n.div_ceil(bt)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&vec![0.0; n as usize])),
            Arg::Scalar(Value::U32(n)),
            word(offset),
            word(offset >> 32),
            word(key),
            word(key >> 32),
            Arg::Scalar(Value::U32(10)),
            Arg::Scalar(Value::F32(low as f32)),
            Arg::Scalar(Value::F32(high as f32)),
        ],
        output: 0,
        expected,
        tolerance,
        summary: "1000 Philox uniforms in [-1, 3), the counter crossing 2^32".into(),
    }
}
