//! The PTX emitter on every scalar type beyond the 32-bit ones: each
//! kernel emitted for sm_80 and sm_90 and — where NVIDIA's `ptxas` is at
//! hand (CI sets `OXMERA_REQUIRE_PTXAS=1`) — assembled; `bf16` refused
//! below sm_80; hand-checked instructions where the choice carries the
//! semantics (the rounding of a conversion, the guard of a division, the
//! mask of a shift). No GPU runs here: that the instructions compute what
//! `eval.rs` defines is argued in the emitter's comments, not measured.

use std::path::PathBuf;

use oxmera_kernel::emit::EmitError;
use oxmera_kernel::emit::ptx::{PtxKernel, PtxOptions, PtxasError, assemble, find_ptxas, ptx};
use oxmera_kernel::ir::{Dim3, Kernel, Scalar};
use oxmera_kernel::kernel;
use oxmera_kernel::limits::ComputeCapability;

fn cc(s: &str) -> ComputeCapability {
    s.parse().unwrap()
}

/// The assembler, or `None` (with a note) where it is absent and not required.
fn ptxas() -> Option<PathBuf> {
    match find_ptxas() {
        Some(p) => Some(p),
        None if std::env::var_os("OXMERA_REQUIRE_PTXAS").is_some() => {
            panic!("OXMERA_REQUIRE_PTXAS is set but {}", PtxasError::Missing)
        }
        None => {
            eprintln!("skipping the assembly: {}", PtxasError::Missing);
            None
        }
    }
}

/// `k` emitted for `part` at a block of 64 and, where `ptxas` is at hand,
/// assembled.
fn emit(k: &Kernel, part: &str) -> PtxKernel {
    let p = ptx(k, &PtxOptions::new(cc(part), Dim3::x(64)))
        .unwrap_or_else(|e| panic!("{} for sm_{part}: {e}", k.name));
    if let Some(a) = ptxas() {
        assemble(&a, &p).unwrap_or_else(|e| panic!("{} for sm_{part}: {e}\n{}", k.name, p.source));
    }
    p
}

/// Every line of the module holding `needle`, for the messages.
fn has(p: &PtxKernel, needle: &str) {
    assert!(
        p.source.contains(needle),
        "`{needle}` missing:\n{}",
        p.source
    );
}

// The library's generic `axpy` and `iota`, source for source, with no
// `dtypes(..)`: an instance for every scalar their bounds admit (the
// library's own list names the 32-bit ones, which the WGSL emitter writes).

/// `y[i] = a * x[i] + y[i]`: the library's `axpy`.
#[kernel(block = [64, 256])]
pub fn axpy<T: Float>(a: T, x: &[T], y: &mut [T], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        y[i] = a * x[i] + y[i];
    }
}

/// `out[i] = start + step * i`: the library's `iota`.
#[kernel(block = [64, 256])]
pub fn iota<T: Int>(out: &mut [T], start: T, step: T, n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        out[i] = start + step * (i as T);
    }
}

#[test]
fn every_generic_instance_assembles_for_sm_80_and_sm_90() {
    let floats: Vec<&Kernel> = axpy_instances().iter().map(|b| b()).collect();
    let ints: Vec<&Kernel> = iota_instances().iter().map(|b| b()).collect();
    let dtype = |k: &Kernel| k.type_arg_scalars()[0];
    assert_eq!(floats.len(), 4, "f32, f64, f16, bf16");
    assert_eq!(ints.len(), 6, "i32, u32, i64, u64, u8, u16");
    for k in floats.iter().chain(&ints) {
        for part in ["8.0", "9.0"] {
            let p = emit(k, part);
            // Elements at their own width.
            let size = dtype(k).size_bytes();
            has(&p, &format!(", %i_0, {size};"));
        }
    }
    // What each float instance's multiply-add is.
    let p = emit(axpy::<f64>(), "8.0");
    has(&p, ".param .f64 p_a");
    has(&p, "ld.global.f64");
    has(&p, "mul.rn.f64");
    has(&p, "add.rn.f64");
    has(&p, "st.global.f64");
    let p = emit(axpy_instance(&[Scalar::F16]).unwrap(), "8.0");
    // Loaded as 16 bits, widened, computed in f32, rounded after each step.
    has(&p, "ld.global.u16");
    has(&p, "cvt.f32.f16");
    has(&p, "mul.rn.f32");
    has(&p, "cvt.rn.f16.f32");
    has(&p, "st.global.u16");
    let p = emit(axpy_instance(&[Scalar::BF16]).unwrap(), "8.0");
    has(&p, "cvt.rn.bf16.f32");
    has(&p, "shl.b32");
    let p = emit(iota::<u8>(), "8.0");
    // The wrap at 8 bits after the multiply and the add; a byte store.
    has(&p, "and.b32");
    has(&p, "255;");
    has(&p, "st.global.u8");
    let p = emit(iota::<i64>(), "9.0");
    has(&p, "mul.lo.s64");
    has(&p, "cvt.u64.u32");
    has(&p, ".param .u64 p_start");
}

#[test]
fn bf16_is_refused_below_sm_80_with_the_reason() {
    for k in [axpy_instance(&[Scalar::BF16]).unwrap(), half_rounding()] {
        let e = ptx(k, &PtxOptions::new(cc("7.5"), Dim3::x(64))).unwrap_err();
        let EmitError::Unsupported { construct, why, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(construct, "a value of type `bf16`");
        assert!(why.contains("sm_75 has no bf16"), "{why}");
        assert!(why.contains("cvt.rn.bf16.f32"), "{why}");
        assert!(e.to_string().contains("cuda:sm_75"), "{e}");
    }
    // f16 is there on sm_75 (from sm_53).
    emit(axpy_instance(&[Scalar::F16]).unwrap(), "7.5");
}

/// Conversions between the types, each as `eval::cast` (Rust's `as`).
#[kernel]
fn conversions(
    x: &[f64],
    y: &[f32],
    b: &[u8],
    w: &[i64],
    out: &mut [f64],
    i: &mut [i32],
    n: &mut [u8],
    h: &mut [f16],
    q: &mut [u64],
    t: &mut [bool],
    g: &mut [bf16],
) {
    let k = thread_idx_x();
    out[k] = (y[k] as f64) + (w[k] as f64) + (b[k] as f64) + ((x[k] as f32) as f64);
    i[k] = x[k] as i32 + (w[k] as i32) + (b[k] as i32);
    n[k] = x[k] as u8 + (y[k] as u8) + (w[k] as u8) + (k as u8);
    h[k] = x[k] as f16 + (w[k] as f16) + (g[k] as f16);
    q[k] = (x[k] as u64) + (k as i32 as u64) + (b[k] as u64) + (x[k] as i64 as u64);
    t[k] = x[k] != 0.0 || w[k] > 0;
    g[k] = (x[k] as bf16) + (w[k] as bf16);
}

#[test]
fn conversions_round_as_rusts_as_does() {
    for part in ["8.0", "9.0"] {
        let p = emit(conversions(), part);
        for needle in [
            // f32 → f64 is exact (no rounding modifier); f64 → f32 rounds
            // to nearest; integers to floats round to nearest.
            "cvt.f64.f32 ",
            "cvt.rn.f32.f64 ",
            "cvt.rn.f64.s64 ",
            "cvt.rn.f64.u32 ",
            // Float to integer truncates and saturates, NaN to 0.
            "cvt.rzi.s32.f64 ",
            "cvt.rzi.u64.f64 ",
            "cvt.rzi.s64.f64 ",
            // Float to u8: saturated to u32, then to 255.
            "cvt.rzi.u32.f64 ",
            "cvt.rzi.u32.f32 ",
            "min.u32 ",
            // i32 → u64 sign-extends, u8 → u64 zero-extends, i64 → i32
            // truncates.
            "cvt.s64.s32 ",
            "cvt.u64.u32 ",
            "cvt.u32.u64 ",
            // f64 → f16 through f32 (as eval), rounded to nearest even;
            // to bf16 likewise.
            "cvt.rn.f16.f32 ",
            "cvt.rn.bf16.f32 ",
        ] {
            has(&p, needle);
        }
    }
}

/// Division and remainder by every signed width: `MIN / -1` wraps.
#[kernel]
fn division(
    a: &[i64],
    b: &[i64],
    c: &[i32],
    d: &[i32],
    u: &[u64],
    out: &mut [i64],
    out32: &mut [i32],
    outu: &mut [u64],
) {
    let k = thread_idx_x();
    out[k] = a[k] / b[k] + a[k] % b[k] + a[k] / 7 + (a[k] & -9223372036854775808i64) / -1;
    out32[k] = c[k] / d[k] + c[k] % d[k];
    outu[k] = u[k] / u[k + 1] + u[k] % 3;
}

#[test]
fn signed_division_wraps_at_minus_one_as_eval_defines() {
    let p = emit(division(), "8.0");
    // A divisor of -1 is replaced by 1 and the quotient negated: `MIN / -1`
    // is MIN, `MIN % -1` is 0 (wrapping_div / wrapping_rem), where PTX
    // leaves the overflow unspecified.
    has(&p, "setp.eq.s64 %p1, %rd");
    has(&p, ", -1;");
    has(&p, "selp.s64 %rd");
    has(&p, "div.s64 ");
    has(&p, "neg.s64 ");
    has(&p, "rem.s64 ");
    has(&p, "setp.eq.s32 ");
    has(&p, "div.s32 ");
    // A literal divisor other than -1 needs no guard; unsigned never does.
    has(&p, "div.u64 ");
    // i64::MIN as its bits in hex, which PTX reads as a 64-bit operand.
    has(&p, "0x8000000000000000");
    has(&p, "rem.u64 ");
}

/// Shifts at every width, the amount of any integer type.
#[kernel]
fn shifts(
    a: &[u8],
    b: &[u16],
    c: &[i64],
    d: &[u64],
    n: &[u32],
    m: &[i64],
    o8: &mut [u8],
    o16: &mut [u16],
    o64: &mut [i64],
    ou: &mut [u64],
) {
    let k = thread_idx_x();
    o8[k] = (a[k] << n[k]) | (a[k] >> 3u32) | (a[k] << 9u32);
    o16[k] = (b[k] << m[k]) ^ !b[k];
    o64[k] = (c[k] >> n[k]) + (c[k] << 65u32);
    ou[k] = (d[k] >> m[k]) & !d[k];
}

#[test]
fn shift_amounts_are_taken_modulo_the_width() {
    let p = emit(shifts(), "9.0");
    // u8: the amount masked to 3 bits, the result to 8; a literal amount
    // reduced here (9 → 1, 65 → 1).
    has(&p, "and.b32 %r");
    has(&p, ", 7;");
    has(&p, ", 1;");
    // u16: an i64 amount truncated to 32 bits, then masked to 4.
    has(&p, "cvt.u32.u64 ");
    has(&p, ", 15;");
    has(&p, ", 65535;");
    // 64-bit: masked to 6 bits; `>>` arithmetic on i64, logical on u64.
    has(&p, ", 63;");
    has(&p, "shr.s64 ");
    has(&p, "shl.b64 ");
    has(&p, "shr.u64 ");
    has(&p, "not.b64 ");
}

/// Compares, min/max, abs and bit counts at every type.
#[kernel]
fn compares(
    x: &[f64],
    h: &[f16],
    a: &[u8],
    w: &[i64],
    u: &[u64],
    out: &mut [u32],
    m: &mut [f64],
    mi: &mut [i64],
) {
    let k = thread_idx_x();
    let mut c = 0u32;
    if x[k] != x[k + 1] {
        c += 1;
    }
    if h[k] < h[k + 1] {
        c += 2;
    }
    if a[k] >= a[k + 1] {
        c += 4;
    }
    if w[k] < w[k + 1] && u[k] > u[k + 1] {
        c += 8;
    }
    out[k] = c
        + a[k].leading_zeros()
        + a[k].trailing_zeros()
        + u[k].count_ones()
        + w[k].trailing_zeros();
    m[k] =
        x[k].abs().min(x[k + 1]).max(-x[k]).sqrt().floor() + x[k].mul_add(2.0, 1.0) + x[k].ceil();
    mi[k] = w[k].abs().max(w[k + 1]).min(7);
}

#[test]
fn compares_and_bit_counts_at_every_width() {
    let p = emit(compares(), "8.0");
    // f64 `!=` is unordered (true for NaN), as Rust's.
    has(&p, "setp.neu.f64 ");
    // A half compares as its (exact) f32; a u8 as its zero-extended word.
    has(&p, "setp.lt.f32 ");
    has(&p, "setp.ge.u32 ");
    has(&p, "setp.lt.s64 ");
    has(&p, "setp.gt.u64 ");
    // u8's leading zeros: the word's less 24; trailing: at most 8.
    has(&p, "sub.u32 %r");
    has(&p, ", 24;");
    has(&p, ", 8;");
    has(&p, "popc.b64 ");
    has(&p, "brev.b64 ");
    has(&p, "clz.b64 ");
    // f64: exact instructions only; abs and neg on the sign bit.
    has(&p, "and.b64 %rd");
    has(&p, "0x7FFFFFFFFFFFFFFF");
    has(&p, "xor.b64 %rd");
    has(&p, "min.f64 ");
    has(&p, "max.f64 ");
    has(&p, "sqrt.rn.f64 ");
    has(&p, "cvt.rmi.f64.f64 ");
    has(&p, "cvt.rpi.f64.f64 ");
    has(&p, "fma.rn.f64 ");
    // The literal 2.0 as its f64 bits.
    has(&p, "0d4000000000000000");
    has(&p, "abs.s64 ");
    has(&p, "max.s64 ");
}

/// The halves: every result rounded once to the half, to nearest even.
#[kernel]
fn half_rounding(a: &[f16], b: &[bf16], x: &mut [f16], y: &mut [bf16], bits: &mut [u16]) {
    let k = thread_idx_x();
    let one: f16 = 1.0;
    x[k] = (a[k] + one) * a[k] / a[k + 1] - a[k] % one + a[k].sqrt() + (-a[k]).abs();
    y[k] = b[k] * b[k] + b[k].max(b[k + 1]);
    bits[k] = a[k].to_bits() ^ b[k].to_bits() ^ f16::from_bits(bits[k]).to_bits();
}

#[test]
fn halves_compute_in_f32_and_round_once_to_nearest_even() {
    for part in ["8.0", "9.0"] {
        let p = emit(half_rounding(), part);
        // Each arithmetic result goes through the half's rounding.
        let rounds = p.source.matches("cvt.rn.f16.f32").count();
        assert!(rounds >= 6, "{rounds} f16 roundings:\n{}", p.source);
        has(&p, "cvt.rn.bf16.f32");
        // 1.0 as an f16 is the f32 1.0 in its register.
        has(&p, "0f3F800000");
        // A bf16's bits are its f32's high half.
        has(&p, "shr.u32 ");
        has(&p, "shl.b32 ");
    }
}

/// Atomics, shuffles, shared and local arrays of the wide and narrow types.
#[kernel]
fn memories(
    sum: &mut [f64],
    count: &mut [i64],
    hi: &mut [u64],
    lo: &mut [f64],
    out: &mut [f64],
    small: &mut [u16],
) {
    let t = thread_idx_x();
    let s = shared::<f64>(64);
    let bytes = shared::<u8>(64);
    let mut l = [0u16; 4];
    s[t] = sum[t] * 2.0;
    bytes[t] = t as u8;
    l[t % 4] = t as u16;
    sync_threads();
    atomic_add(sum, 0, 0.1);
    atomic_add(count, 0, 1i64 << 40u32);
    atomic_sub(count, 1, 3);
    atomic_max(hi, 0, (t as u64) << 40u32);
    atomic_min(lo, 0, s[t]);
    atomic_cas(hi, 1, 0, 5);
    out[t] = shfl_xor_sync(u32::MAX, s[(t + 1) % 64], 1) + (bytes[63 - t] as f64);
    small[t] = shfl_down_sync(u32::MAX, l[t % 4], 1);
}

#[test]
fn atomics_shuffles_and_arrays_of_the_new_types() {
    for part in ["8.0", "9.0"] {
        let p = emit(memories(), part);
        for needle in [
            "atom.global.add.f64 ",
            "atom.global.add.u64 ",
            "neg.s64 ",
            "atom.global.max.u64 ",
            // f64 min: a compare-and-swap loop on the 64-bit pattern.
            "atom.global.cas.b64 ",
            "min.f64 ",
            // 64-bit shuffles: two 32-bit ones, the halves rejoined.
            "mov.b64 {%r",
            "shfl.sync.bfly.b32 ",
            "shfl.sync.down.b32 ",
            // Shared f64 at 8 bytes an element, 8-aligned; u8 at 1.
            ".shared .align 8 .b8 s_s[512];",
            ".shared .align 4 .b8 s_bytes[64];",
            "st.shared.u8 ",
            "ld.shared.f64 ",
            // A local u16 array at 2 bytes an element.
            ".local .align 4 .b8 l_l_0[8];",
            "st.local.u16 ",
        ] {
            has(&p, needle);
        }
    }
}

/// Scalar parameters of every type and a loop on a 64-bit counter.
#[kernel]
fn params(a: f64, b: i64, c: u64, d: u8, e: u16, f: f16, g: bf16, out: &mut [f64]) {
    let t = thread_idx_x();
    let mut acc = a;
    let mut j = b;
    while j < b + 4 {
        acc += j as f64;
        j += 1;
    }
    out[t] = acc + (c as f64) + (d as f64) + (e as f64) + (f as f64) + (g as f64);
}

#[test]
fn scalar_parameters_of_every_type_and_a_64_bit_loop() {
    let p = emit(params(), "8.0");
    has(&p, ".param .f64 p_a");
    has(&p, ".param .u64 p_b");
    has(&p, ".param .u64 p_c");
    // The narrow ones travel in a 32-bit word holding their bits.
    has(&p, ".param .u32 p_d");
    has(&p, ".param .u32 p_f");
    has(&p, "ld.param.f64 %a_arg, [p_a];");
    has(&p, "setp.lt.s64 ");
    has(&p, "add.s64 ");
}

/// f64's transcendental functions have no PTX instruction.
#[kernel]
fn f64_exp(x: &[f64], out: &mut [f64]) {
    let i = thread_idx_x();
    out[i] = x[i].exp();
}

#[test]
fn f64_transcendentals_are_refused_by_name_not_approximated_in_f32() {
    let e = ptx(f64_exp(), &PtxOptions::new(cc("9.0"), Dim3::x(64))).unwrap_err();
    let EmitError::Unsupported {
        construct,
        target,
        why,
        ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(construct, "`exp` on f64");
    assert_eq!(target, "cuda:sm_90");
    assert!(why.contains("f32 only"), "{why}");
}

/// One conversion to a half, for its exact text.
#[kernel]
fn to_half(x: &[f32], h: &mut [f16]) {
    let k = thread_idx_x();
    h[k] = x[k] as f16;
}

/// One conversion from f64 to i32, for its exact text.
#[kernel]
fn to_int(x: &[f64], out: &mut [i32]) {
    let k = thread_idx_x();
    out[k] = x[k] as i32;
}

#[test]
fn the_conversions_read_as_checked_by_hand() {
    // f32 → f16: rounded once to nearest even (`.rn`), widened back into
    // the f32 register the half lives in; stored as its 16 bits, which the
    // second `cvt.rn` recovers exactly (the value is an f16 already).
    let p = emit(to_half(), "8.0");
    let want = "    ld.global.f32 %f1, [%rd4];
    mov.f32 %f2, %f1;
    cvt.rn.f16.f32 %h1, %f2;
    cvt.f32.f16 %f2, %h1;
    cvt.rn.f16.f32 %h2, %f2;
    cvt.u32.u16 %r1, %h2;
    st.global.u16 [%rd2], %r1;
";
    has(&p, want);
    // The element is 2 bytes: the store's address is `h + 2k`.
    has(
        &p,
        "mul.wide.u32 %rd1, %k_0, 2;\n    add.s64 %rd2, %h_arg, %rd1;",
    );
    // f64 → i32: truncated toward zero, saturated, NaN to 0 (`.rzi`).
    let p = emit(to_int(), "9.0");
    has(
        &p,
        "    ld.global.f64 %fd1, [%rd4];
    cvt.rzi.s32.f64 %r1, %fd1;
    st.global.s32 [%rd2], %r1;
",
    );
    has(&p, "mul.wide.u32 %rd3, %k_0, 8;");
}
