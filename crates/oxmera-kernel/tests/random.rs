//! `philox_uniform` in the simulator draws the host's random stream: the
//! same Philox blocks, and `[0, 1)` values equal to the host's bit for bit.

use oxmera_core::{DType, Device};
use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library;
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
use oxmera_reference as _;
use oxmera_tensor::Generator;

/// Runs the kernel over `n` elements; returns the output's bits.
fn draw(n: u32, offset: u64, key: u64, rounds: u32, low: f32, high: f32) -> Vec<u32> {
    let block = 64;
    let word = |v: u64| Arg::Scalar(Value::U32(v as u32));
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&vec![0.0; n as usize])),
        Arg::Scalar(Value::U32(n)),
        word(offset),
        word(offset >> 32),
        word(key),
        word(key >> 32),
        Arg::Scalar(Value::U32(rounds)),
        Arg::Scalar(Value::F32(low)),
        Arg::Scalar(Value::F32(high)),
    ];
    let launch = LaunchConfig {
        grid: Dim3::x(n.div_ceil(block)),
        block: Dim3::x(block),
    };
    sim::run(
        library::philox_uniform(),
        launch,
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let out = args[0].buffer().unwrap().to_f32();
    out.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn rand_is_the_hosts_stream_bit_for_bit() {
    // The stream's counter crosses 2^32 inside the draw.
    let (seed, offset, n) = (0x0123_4567_89AB_CDEF, (1u64 << 32) - 1000, 3000);
    let host = Generator::from_state(seed, offset)
        .rand([n], DType::F32, Device::Reference)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    let got = draw(n as u32, offset, seed, 10, 0.0, 1.0);
    for (k, (g, h)) in got.iter().zip(&host).enumerate() {
        assert_eq!(
            *g,
            h.to_bits(),
            "element {k}: {} vs {h}",
            f32::from_bits(*g)
        );
    }
}

/// With no rounds the block is the counter, so the words are chosen: every
/// path of the rounding to 24 bits against the host's `f64`-to-`f32`.
#[test]
fn the_map_to_the_unit_interval_rounds_as_the_host_does() {
    let host = |lo: u32, hi: u32| oxmera_core::unit_f64(lo, hi) as f32;
    let cases: [(u32, u32); 12] = [
        (0, 0),                     // zero
        (0x800, 0),                 // the smallest value, 2^-53
        (0xFFFF_F800, 0),           // 21 low bits only: exact
        (0x1000_0800, 0x0000_07FF), // high word below 2^11: the low branch
        (u32::MAX, u32::MAX),       // rounds up to 1.0, as the host does
        (0, 0x8000_0000),           // one half
        (0x0000_0800, 0x0000_0008), // 2^24 + 1 at 53 bits: a tie, kept even
        (0x0000_1800, 0x0000_0008), // 2^24 + 3: a tie, rounded up to even
        (0xFFFF_FFFF, 0x7FFF_FFFF), // carry into the exponent
        (0x1234_5678, 0x9ABC_DEF0),
        (0x0000_0000, 0x0000_0800), // exactly 2^21 at the top
        (0xFFFF_FFFF, 0x0000_0000), // below 2^21 with every low bit set
    ];
    for (lo, hi) in cases {
        let got = draw(1, (u64::from(hi) << 32) | u64::from(lo), 0, 0, 0.0, 1.0);
        assert_eq!(
            got[0],
            host(lo, hi).to_bits(),
            "words ({lo:#x}, {hi:#x}): {} vs {}",
            f32::from_bits(got[0]),
            host(lo, hi)
        );
    }
    // Random words at every magnitude: the high word shifted right by
    // 0..=32 bits (all of it gone at 32: the low branch), the low word's
    // bits below the kept ones set half the time (ties and sticky bits).
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 32) as u32
    };
    for k in 0..3000u32 {
        let shift = k % 33;
        let hi = if shift == 32 { 0 } else { next() >> shift };
        let lo = match k % 3 {
            0 => next(),
            1 => next() & !0x7FF,           // exactly representable at 53 bits
            _ => (next() & !0xFFF) | 0x800, // a half at the lowest kept bit
        };
        let got = draw(1, (u64::from(hi) << 32) | u64::from(lo), 0, 0, 0.0, 1.0);
        assert_eq!(got[0], host(lo, hi).to_bits(), "words ({lo:#x}, {hi:#x})");
    }
}
