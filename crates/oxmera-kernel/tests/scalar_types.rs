//! The simulator on every scalar type beyond the 32-bit ones, against
//! values computed by hand: wrap-around at the edges of `u8`, `u16`, `i64`
//! and `u64`; `f64` precision that `f32` would lose; `f16` and `bf16`
//! rounding to nearest-even, overflow to infinity and subnormals; casts,
//! bits, shuffles, shared arrays and atomics of the new types.

use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, SimError, SimOptions};

fn run(k: &oxmera_kernel::ir::Kernel, threads: u32, args: &mut [Arg]) {
    sim::run(
        k,
        LaunchConfig::linear(1, threads),
        args,
        &SimOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

fn buf(a: &Arg) -> &Buffer {
    a.buffer().expect("a buffer")
}

#[kernel]
fn narrow_ints(a: &[u8], b: &[u16], sum8: &mut [u8], diff8: &mut [u8], prod16: &mut [u16]) {
    let i = thread_idx_x();
    sum8[i] = a[i] + 250u8;
    diff8[i] = a[i] - 7 << 1u32;
    prod16[i] = b[i] * 3;
}

#[test]
fn u8_and_u16_wrap_at_their_own_width() {
    let mut args = vec![
        Arg::Buffer(Buffer::from_u8(&[10, 6, 5, 255])),
        Arg::Buffer(Buffer::from_u16(&[20000, 21846, 1, 65535])),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U8, 4)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U8, 4)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U16, 4)),
    ];
    run(narrow_ints(), 4, &mut args);
    // 10+250 = 260 → 4; 6+250 = 256 → 0; 5+250 = 255; 255+250 = 505 → 249.
    assert_eq!(buf(&args[2]).to_u8(), vec![4, 0, 255, 249]);
    // (a − 7) << 1 at 8 bits: 3<<1 = 6; (6−7 = 255)<<1 = 510 → 254;
    // (5−7 = 254)<<1 = 508 → 252; 248<<1 = 496 → 240.
    assert_eq!(buf(&args[3]).to_u8(), vec![6, 254, 252, 240]);
    // 60000; 65538 → 2; 3; 196605 − 2·65536 = 65533.
    assert_eq!(buf(&args[4]).to_u16(), vec![60000, 2, 3, 65533]);
    // Each element sits in its own byte: 4 bytes for 4 u8, 8 for 4 u16.
    assert_eq!(buf(&args[2]).as_bytes(), &[4, 0, 255, 249]);
    assert_eq!(buf(&args[4]).as_bytes().len(), 8);
}

#[kernel]
fn wide_ints(a: &[i64], next: &mut [i64], top: &mut [u64], q: &mut [i64]) {
    let i = thread_idx_x();
    next[i] = a[i] + 1;
    top[i] = (a[i] as u64) >> 60u32;
    q[i] = a[i] / -1i64 + 3_000_000_000i64 * 3;
}

#[test]
fn i64_and_u64_wrap_at_64_bits() {
    let a = [i64::MAX, -1, 1 << 40, i64::MIN];
    let mut args = vec![
        Arg::Buffer(Buffer::from_i64(&a)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::I64, 4)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U64, 4)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::I64, 4)),
    ];
    run(wide_ints(), 4, &mut args);
    assert_eq!(
        buf(&args[1]).to_i64(),
        vec![i64::MIN, 0, (1 << 40) + 1, i64::MIN + 1]
    );
    // The top nibble: 0x7…, 0xf…, 0x000001…, 0x8….
    assert_eq!(buf(&args[2]).to_u64(), vec![7, 15, 0, 8]);
    // a / −1 negates (MIN / −1 wraps to MIN), plus 9 000 000 000, which
    // no 32-bit type holds.
    let nine = 9_000_000_000i64;
    assert_eq!(
        buf(&args[3]).to_i64(),
        vec![
            -i64::MAX + nine,
            1 + nine,
            -(1 << 40) + nine,
            i64::MIN.wrapping_add(nine)
        ]
    );
}

#[kernel]
fn precise(x: &[f64], out: &mut [f64], bits: &mut [u64]) {
    let i = thread_idx_x();
    let big = 16777216.0f64;
    out[i] = (x[i] + big) - big;
    bits[i] = (-x[i]).to_bits() ^ f64::from_bits(x[i].to_bits()).to_bits();
}

#[test]
fn f64_keeps_what_f32_would_round_away() {
    // 2^24 + 1 is not an f32 (f32 has 24 significand bits): in f32 the
    // sum rounds to 2^24 and the difference is 0. f64 keeps it.
    let mut args = vec![
        Arg::Buffer(Buffer::from_f64(&[1.0, 0.5, 3.0])),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F64, 3)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U64, 3)),
    ];
    run(precise(), 3, &mut args);
    assert_eq!(buf(&args[1]).to_f64(), vec![1.0, 0.5, 3.0]);
    assert_eq!((1.0f32 + 16777216.0) - 16777216.0, 0.0);
    // Negation flips only the sign bit.
    assert_eq!(buf(&args[2]).to_u64(), vec![1 << 63; 3]);
}

#[kernel]
fn f64_math(x: &[f64], out: &mut [f64]) {
    let i = thread_idx_x();
    out[i] = x[i].sqrt() + x[i].exp() * 0.0 + x[i].max(-1.0).min(2.0) * 0.0;
}

#[test]
fn f64_math_is_rusts_f64_math() {
    let mut args = vec![
        Arg::Buffer(Buffer::from_f64(&[2.0])),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F64, 1)),
    ];
    run(f64_math(), 1, &mut args);
    // √2 correctly rounded to f64's 53 bits (sqrt is exact-rounded).
    assert_eq!(
        buf(&args[1]).to_u64(),
        vec![std::f64::consts::SQRT_2.to_bits()]
    );
}

#[kernel]
fn half_ops(a: &[f16], b: &[f16], sum: &mut [f16], prod: &mut [f16]) {
    let i = thread_idx_x();
    sum[i] = a[i] + b[i];
    prod[i] = a[i] * b[i];
}

#[test]
fn f16_rounds_once_to_nearest_even() {
    // Bit patterns: 1.0 = 0x3c00, 2^-11 = 0x1000, 3·2^-11 = 0x1600,
    // 65504 = 0x7bff, 16 = 0x4c00, 8 = 0x4800, 2^-24 = 0x0001,
    // 2^-14 = 0x0400, −2^-24 = 0x8001, 1 + 2^-10 = 0x3c01, 256 = 0x5c00,
    // 2^-12 = 0x0c00, 2^-13 = 0x0800.
    let a = [
        0x3c00, 0x3c00, 0x7bff, 0x7bff, 0x0001, 0x0400, 0x3c01, 0x5c00, 0x0c00, 0x0800,
    ];
    let b = [
        0x1000, 0x1600, 0x4c00, 0x4800, 0x0001, 0x8001, 0x3c01, 0x5c00, 0x0c00, 0x0c00,
    ];
    let n = a.len();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f16_bits(&a)),
        Arg::Buffer(Buffer::from_f16_bits(&b)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F16, n)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F16, n)),
    ];
    run(half_ops(), n as u32, &mut args);
    let sum = buf(&args[2]).to_u16();
    // 1 + 2^-11: the tie between 1.0 (even) and 1 + 2^-10 → 1.0.
    assert_eq!(sum[0], 0x3c00);
    // 1 + 3·2^-11: the tie between 1 + 2^-10 (odd) and 1 + 2^-9 → 0x3c02.
    assert_eq!(sum[1], 0x3c02);
    // 65504 + 16 = 65520: the tie between 65504 (odd) and 2^16 → +inf.
    assert_eq!(sum[2], 0x7c00);
    // 65504 + 8 = 65512: under the tie → 65504.
    assert_eq!(sum[3], 0x7bff);
    // Subnormals: 2^-24 + 2^-24 = 2^-23; 2^-14 − 2^-24 = 1023·2^-24.
    assert_eq!(sum[4], 0x0002);
    assert_eq!(sum[5], 0x03ff);
    let prod = buf(&args[3]).to_u16();
    // (1 + 2^-10)² = 1 + 2^-9 + 2^-20: 2^-20 is under half an ulp (2^-11).
    assert_eq!(prod[6], 0x3c02);
    // 256 · 256 = 65536 > 65504 (and past the tie at 65520) → +inf.
    assert_eq!(prod[7], 0x7c00);
    // 2^-12 · 2^-12 = 2^-24, the smallest subnormal.
    assert_eq!(prod[8], 0x0001);
    // 2^-13 · 2^-12 = 2^-25: the tie between 0 (even) and 2^-24 → +0.
    assert_eq!(prod[9], 0x0000);
}

#[kernel]
fn half_div_sqrt(a: &[f16], q: &mut [f16], r: &mut [f16]) {
    let i = thread_idx_x();
    let three: f16 = 3.0;
    q[i] = a[i] / three;
    r[i] = (a[i] + a[i]).sqrt();
}

#[test]
fn f16_division_and_sqrt_by_hand() {
    let mut args = vec![
        Arg::Buffer(Buffer::from_f16_bits(&[0x3c00])),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F16, 1)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F16, 1)),
    ];
    run(half_div_sqrt(), 1, &mut args);
    // 1/3 = 1.0101010101|01…·2^-2: exponent field 13 (0x3400), fraction
    // 0101010101 = 0x155, the next bit 0 → down: 0x3555.
    assert_eq!(buf(&args[1]).to_u16(), vec![0x3555]);
    // √2 = 1.0110101000|0010…: fraction 0x1a8, next bit 0 → 0x3da8.
    assert_eq!(buf(&args[2]).to_u16(), vec![0x3da8]);
}

#[kernel]
fn bf16_ops(a: &[bf16], b: &[bf16], sum: &mut [bf16], prod: &mut [bf16]) {
    let i = thread_idx_x();
    sum[i] = a[i] + b[i];
    prod[i] = a[i] * b[i];
}

#[test]
fn bf16_rounds_once_to_nearest_even() {
    // 1.0 = 0x3f80, 2^-8 = 0x3b80, 3·2^-8 = 0x3c40, 1 + 2^-7 = 0x3f81,
    // the largest bf16 (2 − 2^-7)·2^127 = 0x7f7f, 2.0 = 0x4000.
    let a = [0x3f80, 0x3f80, 0x3f81, 0x7f7f];
    let b = [0x3b80, 0x3c40, 0x3f81, 0x4000];
    let mut args = vec![
        Arg::Buffer(Buffer::from_bf16_bits(&a)),
        Arg::Buffer(Buffer::from_bf16_bits(&b)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::BF16, 4)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::BF16, 4)),
    ];
    run(bf16_ops(), 4, &mut args);
    let sum = buf(&args[2]).to_u16();
    // 1 + 2^-8 ties to 1.0 (even); 1 + 3·2^-8 ties to 1 + 2^-6 (even).
    assert_eq!(sum[0], 0x3f80);
    assert_eq!(sum[1], 0x3f82);
    let prod = buf(&args[3]).to_u16();
    // (1 + 2^-7)² = 1 + 2^-6 + 2^-14 → 1 + 2^-6.
    assert_eq!(prod[2], 0x3f82);
    // The largest bf16 doubled overflows to +inf (0x7f80).
    assert_eq!(prod[3], 0x7f80);
}

#[kernel]
fn casts(x: &[f32], h: &mut [f16], wide: &mut [f32], small: &mut [u8], back: &mut [i64]) {
    let i = thread_idx_x();
    h[i] = x[i] as f16;
    wide[i] = (x[i] as bf16) as f32;
    small[i] = x[i] as u8;
    back[i] = (x[i] as i64) * -1i64;
}

#[test]
fn casts_follow_rust_and_round_halves_to_nearest_even() {
    let x = [0.1f32, 300.0, -1.5, 1.0 + 2f32.powi(-8)];
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F16, 4)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F32, 4)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U8, 4)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::I64, 4)),
    ];
    run(casts(), 4, &mut args);
    // 0.1 = 1.1001100110|011…·2^-4 → 0x2c00 + 0x266 = 0x2e66 (next bit 0).
    // 300 = 1.0010110000·2^8 → 0x5c00 + 0x0b0 = 0x5cb0. −1.5 = 0xbe00.
    // 1 + 2^-8 is exact in f16 (0x3c04).
    assert_eq!(buf(&args[1]).to_u16(), vec![0x2e66, 0x5cb0, 0xbe00, 0x3c04]);
    // Through bf16 (8 significand bits): 0.1 → 0x3dcd = 205/2048;
    // 300 = 1.00101100·2^8 exactly; 1 + 2^-8 ties to 1.0.
    assert_eq!(
        buf(&args[2]).to_f32(),
        vec![205.0 / 2048.0, 300.0, -1.5, 1.0]
    );
    // Float to u8 saturates: 0, 255, 0 (negative), 1.
    assert_eq!(buf(&args[3]).to_u8(), vec![0, 255, 0, 1]);
    assert_eq!(buf(&args[4]).to_i64(), vec![0, -300, 1, -1]);
}

#[kernel]
fn shuffled(x: &[f64], y: &[u16], out: &mut [f64], out16: &mut [u16]) {
    let i = thread_idx_x();
    out[i] = shfl_xor_sync(u32::MAX, x[i], 1);
    out16[i] = shfl_down_sync(u32::MAX, y[i], 1);
}

#[test]
fn shuffles_move_whole_64_and_16_bit_values() {
    let x: Vec<f64> = (0..32).map(|i| 1e300 * i as f64 + 0.25).collect();
    let y: Vec<u16> = (0..32).map(|i| 60000 + i).collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f64(&x)),
        Arg::Buffer(Buffer::from_u16(&y)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F64, 32)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U16, 32)),
    ];
    run(shuffled(), 32, &mut args);
    let want: Vec<f64> = (0..32).map(|i| x[i ^ 1]).collect();
    assert_eq!(buf(&args[2]).to_f64(), want);
    let want: Vec<u16> = (0..32).map(|i| y[(i + 1).min(31)]).collect();
    assert_eq!(buf(&args[3]).to_u16(), want);
}

#[kernel]
fn bytes_through_shared(out: &mut [u8]) {
    let t = thread_idx_x();
    let s = shared::<u8>(64);
    s[t] = (t * 9) as u8;
    sync_threads();
    out[t] = s[(t + 1) % 64];
}

#[test]
fn shared_u8_neighbours_are_separate_elements() {
    // Every thread writes its own byte of the array and of the buffer:
    // neighbours in one 32-bit word are no race.
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::U8,
        64,
    ))];
    run(bytes_through_shared(), 64, &mut args);
    let want: Vec<u8> = (0..64u32).map(|t| (((t + 1) % 64) * 9) as u8).collect();
    assert_eq!(buf(&args[0]).to_u8(), want);
}

#[kernel]
fn wide_atomics(sum: &mut [f64], count: &mut [i64], hi: &mut [u64]) {
    let t = thread_idx_x();
    atomic_add(sum, 0, 0.1);
    atomic_add(count, 0, 1i64 << 40u32);
    atomic_max(hi, 0, (t as u64) << 40u32);
}

#[test]
fn atomics_on_64_bit_elements() {
    let mut args = vec![
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F64, 1)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::I64, 1)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U64, 1)),
    ];
    run(wide_atomics(), 64, &mut args);
    // Lanes add in order: the host's left fold of 64 additions of 0.1.
    let want = (0..64).fold(0.0f64, |a, _| a + 0.1);
    assert_eq!(buf(&args[0]).to_f64(), vec![want]);
    assert_eq!(buf(&args[1]).to_i64(), vec![64 << 40]);
    assert_eq!(buf(&args[2]).to_u64(), vec![63 << 40]);
}

#[kernel]
fn divide_u8(a: &[u8], out: &mut [u8]) {
    let i = thread_idx_x();
    out[i] = 100u8 / a[i];
}

#[test]
fn division_by_zero_is_reported_for_the_new_integers() {
    let mut args = vec![
        Arg::Buffer(Buffer::from_u8(&[5, 0])),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::U8, 2)),
    ];
    let e = sim::run(
        divide_u8(),
        LaunchConfig::linear(1, 2),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap_err();
    let SimError::Report(r) = e else {
        panic!("{e}")
    };
    assert!(
        format!("{:?}", r.kind).contains("DivByZero { thread: 1 }"),
        "{r:?}"
    );
}

#[test]
fn the_wgsl_emitter_refuses_each_new_type_by_name_and_ptx_writes_them() {
    use oxmera_kernel::emit::ptx::{PtxOptions, ptx};
    use oxmera_kernel::emit::wgsl::{WgslOptions, wgsl};
    use oxmera_kernel::ir::{Dim3, Scalar};
    use oxmera_kernel::target::Target;
    // WGSL writes none of the 8- and 16-bit types: it refuses the first it
    // meets with a diagnostic naming it, and never writes wrong code. It
    // writes the 64-bit types where the target has them
    // (tests/wgsl_wide.rs), so it is asked here for a target without them,
    // as Metal is. PTX writes them all (tests/ptx_types.rs assembles them).
    let narrow = Target::generic().with_dtypes(
        oxmera_kernel::target::ScalarSet::ALL
            .without(Scalar::F64)
            .without(Scalar::I64)
            .without(Scalar::U64),
    );
    for (k, ty) in [
        (precise(), "f64"),
        (wide_ints(), "i64"),
        (narrow_ints(), "u8"),
        (half_ops(), "f16"),
        (bf16_ops(), "bf16"),
    ] {
        let cc = "8.0".parse().unwrap();
        ptx(k, &PtxOptions::new(cc, Dim3::x(32))).unwrap_or_else(|e| panic!("{e}"));
        let e = wgsl(k, &WgslOptions::new(Dim3::x(32)).with_target(narrow)).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("a value of type `{ty}` cannot be written as WGSL")),
            "{e}"
        );
    }
}
