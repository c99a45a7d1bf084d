//! The WGSL emitter on the 64-bit types: `f64`, `i64` and `u64` are
//! written where the target has them (wgpu's SHADER_F64 and SHADER_INT64),
//! and naga accepts the shaders with its FLOAT64 and SHADER_INT64
//! capabilities and refuses them without; a target without them, and the
//! f64 builtins Vulkan lacks, are refused by name.

use naga::valid::{Capabilities, ValidationFlags, Validator};
use oxmera_kernel::emit::EmitError;
use oxmera_kernel::emit::wgsl::{WgslKernel, WgslOptions, wgsl};
use oxmera_kernel::ir::{Dim3, Scalar, Value};
use oxmera_kernel::kernel;
use oxmera_kernel::target::{ScalarSet, Target};

/// Parses and validates `k` with naga under `caps`; on success writes
/// SPIR-V (what Vulkan runs). naga's message on failure.
fn compile(k: &WgslKernel, caps: Capabilities) -> Result<(), String> {
    let module =
        naga::front::wgsl::parse_str(&k.source).map_err(|e| e.emit_to_string(&k.source))?;
    let info = Validator::new(ValidationFlags::all(), caps)
        .validate(&module)
        .map_err(|e| e.emit_to_string(&k.source))?;
    naga::back::spv::write_vec(&module, &info, &Default::default(), None)
        .map_err(|e| format!("SPIR-V: {e}"))?;
    Ok(())
}

const WIDE: Capabilities = Capabilities::FLOAT64.union(Capabilities::SHADER_INT64);

fn emit(k: &oxmera_kernel::ir::Kernel, target: Target) -> Result<WgslKernel, EmitError> {
    wgsl(k, &WgslOptions::new(Dim3::x(64)).with_target(target))
}

/// A target with every 32-bit type and `wide` of the 64-bit ones.
fn with_only(wide: &[Scalar]) -> Target {
    let mut set = ScalarSet::ALL
        .without(Scalar::F64)
        .without(Scalar::I64)
        .without(Scalar::U64);
    for &t in wide {
        set = set.with(t);
    }
    Target::lavapipe().with_dtypes(set)
}

#[kernel]
fn f64_arith(x: &[f64], y: &[f64], out: &mut [f64], flags: &mut [u32], a: f64, n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let p = x[i];
        let q = y[i];
        let mut r = (p + q) * a - p / q + 0.1;
        r = r.max(-1.5).min(16777217.0);
        r = r.sqrt().abs().floor() + r.ceil() + p.mul_add(q, -0.0) + 1.0 / q.abs().sqrt();
        out[i] = -r;
        let mut f = 0u32;
        if p < q {
            f |= 1u32;
        }
        if p == q || p >= 3.0 {
            f |= 2u32;
        }
        flags[i] = f;
    }
}

#[kernel]
fn f64_casts(x: &[f64], h: &[f32], i: &[i32], u: &mut [u32], out: &mut [f64], back: &mut [i32]) {
    let t = thread_idx_x();
    out[t] = h[t] as f64 + i[t] as f64 + u[t] as f64 + (x[t] > 0.0) as f64;
    back[t] = x[t] as i32 + (x[t] as f32) as i32 + (h[t] as f64) as i32;
    u[t] = x[t] as u32;
}

#[kernel]
fn f64_bits(x: &[f64], bits: &mut [u64], out: &mut [f64]) {
    let t = thread_idx_x();
    bits[t] = x[t].to_bits() ^ 0x8000_0000_0000_0000u64;
    out[t] = f64::from_bits(bits[t]) + f64::INFINITY * 0.0;
}

#[kernel]
fn i64_ops(a: &[i64], b: &[u64], out: &mut [i64], outu: &mut [u64], low: &mut [i32], n: u32) {
    let t = thread_idx_x();
    if t < n {
        let mut acc = 0i64;
        for k in 0u32..4u32 {
            acc += a[t] * (k as i64) - (1i64 << 40u32);
        }
        out[t] = acc.min(a[t]).max(-9_223_372_036_854_775_807i64 - 1) >> (t % 70u32);
        outu[t] = (b[t] << 3u32) / 7u64 + a[t] as u64 + (t as u64) + u64::MAX;
        low[t] = a[t] as i32 + (b[t] as i32) + (t as i64 >= a[t]) as i32 + (a[t] as f64) as i32;
    }
}

#[kernel]
fn f32_to_i64(x: &[f32], out: &mut [i64]) {
    let t = thread_idx_x();
    out[t] = x[t] as i64;
}

#[kernel]
fn f64_exp(x: &[f64], out: &mut [f64]) {
    let t = thread_idx_x();
    out[t] = x[t].exp();
}

#[kernel]
fn f64_atomic(sum: &mut [f64], x: &[f64]) {
    let t = thread_idx_x();
    atomic_add(sum, 0u32, x[t]);
}

#[test]
fn the_64_bit_types_compile_with_the_capabilities_and_not_without() {
    for k in [f64_arith(), f64_casts(), f64_bits(), i64_ops()] {
        let w = emit(k, Target::lavapipe()).unwrap_or_else(|e| panic!("{e}"));
        compile(&w, WIDE).unwrap_or_else(|m| panic!("{}: {m}\n{}", k.name, w.source));
        // The same shader on a device without the capabilities is refused
        // by naga itself: the types are not decoration.
        let err = compile(&w, Capabilities::empty()).unwrap_err();
        assert!(
            err.contains("FLOAT64") || err.contains("SHADER_INT64"),
            "{}: {err}",
            k.name
        );
    }
}

#[test]
fn a_target_without_the_type_refuses_it_by_name() {
    let e = emit(f64_arith(), with_only(&[Scalar::I64, Scalar::U64])).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("a value of type `f64`"), "{text}");
    assert!(text.contains("SHADER_F64"), "{text}");
    let e = emit(i64_ops(), with_only(&[Scalar::F64])).unwrap_err();
    assert!(e.to_string().contains("SHADER_INT64"), "{e}");
    // f64 alone: arithmetic and math are written; what reads an f64's bits
    // (Rust's NaN rule for min/max) needs u64, and says so.
    let e = emit(f64_arith(), with_only(&[Scalar::F64])).unwrap_err();
    assert!(e.to_string().contains("f64::max"), "{e}");
    assert!(e.to_string().contains("no u64"), "{e}");
}

#[test]
fn the_f64_transcendentals_and_atomics_are_refused_naming_builtin_and_target() {
    let e = emit(f64_exp(), Target::lavapipe()).unwrap_err();
    let EmitError::Unsupported {
        construct, target, ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(construct, "`exp` of f64");
    assert_eq!(target, "lavapipe");
    assert!(e.to_string().contains("GLSL.std.450"), "{e}");
    let e = emit(f64_atomic(), Target::lavapipe()).unwrap_err();
    assert!(e.to_string().contains("an atomic on the f64 memory"), "{e}");
}

#[test]
fn wide_scalars_sit_at_their_alignment_in_the_uniform() {
    let w = emit(f64_arith(), Target::lavapipe()).unwrap();
    // `a: f64` first at 0, then `n: u32` at 8: 12 bytes, rounded to 16.
    let offsets: Vec<u32> = w.uniforms.iter().map(|f| f.offset).collect();
    assert_eq!(offsets, [0, 8]);
    let bytes = w.uniform_bytes(&[Value::F64(0.1), Value::U32(7)]);
    assert_eq!(bytes.len(), 16);
    assert_eq!(bytes[..8], 0.1f64.to_le_bytes());
    assert_eq!(bytes[8..12], 7u32.to_le_bytes());
}

#[test]
fn literals_are_written_losslessly() {
    let w = emit(f64_arith(), Target::lavapipe()).unwrap();
    // 0.1 keeps its 17 significant digits' worth: not rounded through f32.
    assert!(w.source.contains("0.1lf"), "{}", w.source);
    assert!(w.source.contains("16777217.0lf"), "{}", w.source);
    let w = emit(f64_bits(), Target::lavapipe()).unwrap();
    assert!(
        w.source.contains("bitcast<f64>(0x7ff0000000000000lu)"),
        "{}",
        w.source
    );
}

#[test]
fn f32_to_a_64_bit_integer_needs_f64_and_says_so_where_the_target_lacks_it() {
    // Written through the saturating f64 helper where the target has f64
    // (and naga accepts it)...
    let k = emit(f32_to_i64(), Target::lavapipe()).unwrap();
    compile(&k, WIDE).unwrap();
    // ...and refused by name on one with i64 but no f64 (Metal's can be
    // one), instead of an f64 shader the device would reject.
    let e = emit(f32_to_i64(), with_only(&[Scalar::I64, Scalar::U64])).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("`f32 as i64`"), "{text}");
    assert!(text.contains("SHADER_F64"), "{text}");
}
