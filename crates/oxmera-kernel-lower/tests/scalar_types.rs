//! The scalar types beyond the 32-bit ones (issue 16): `f64`, `i64`,
//! `u64`, `u8`, `u16`, `f16`, `bf16` through the file front door — how
//! literals, constants, casts, `to_bits`/`from_bits` and operators type,
//! what the printer shows, and which uses are refused with which message.

use oxmera_kernel_ir::ir::{ExprKind, Kernel, Scalar, StmtKind, Value};
use oxmera_kernel_ir::pretty::print;
use oxmera_kernel_ir::target::Target;
use oxmera_kernel_lower::file::lower_source;

fn kernel(text: &str) -> Kernel {
    let f = lower_source("t.rs", text).unwrap_or_else(|e| panic!("{e}"));
    let k = f.kernels[0].clone();
    oxmera_kernel_ir::validate::validate(&k).unwrap();
    k
}

fn refused(text: &str) -> String {
    match lower_source("t.rs", text) {
        Ok(_) => panic!("lowered:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// The value each `let` of the kernel assigns, when it is a literal.
fn literals(k: &Kernel) -> Vec<Value> {
    k.body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { value, .. } => match value.kind {
                ExprKind::Lit(v) => Some(v),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn suffixed_literals_and_annotated_bindings_take_their_type() {
    let k = kernel(
        "#[kernel]
fn k(out: &mut [f64]) {
    let a = 3i64;
    let b = 7u8;
    let c = 65535u16;
    let d = 18446744073709551615u64;
    let e = 1.0f64;
    let f: f64 = 0.1;
    let g: f16 = 1.5;
    let h: bf16 = 2.0;
    let i: u8 = 200;
    let j = -9223372036854775808i64;
    out[0] = e;
}",
    );
    assert_eq!(
        literals(&k),
        vec![
            Value::I64(3),
            Value::U8(7),
            Value::U16(65535),
            Value::U64(u64::MAX),
            Value::F64(1.0),
            // Read as f64 directly: 0.1f64, not 0.1f32 widened.
            Value::F64(0.1),
            // 1.5 = 0x3e00 in f16; 2.0 = 0x4000 in bf16.
            Value::F16(0x3e00),
            Value::BF16(0x4000),
            Value::U8(200),
        ]
    );
    let tys: Vec<Scalar> = k.locals.iter().map(|l| l.ty).collect();
    assert_eq!(
        tys,
        vec![
            Scalar::I64,
            Scalar::U8,
            Scalar::U16,
            Scalar::U64,
            Scalar::F64,
            Scalar::F64,
            Scalar::F16,
            Scalar::BF16,
            Scalar::U8,
            Scalar::I64,
        ]
    );
}

#[test]
fn out_of_range_literals_and_suffixes_are_refused() {
    let m = refused("#[kernel]\nfn k(out: &mut [u8]) { out[0] = 256u8; }");
    assert!(m.contains("literal out of range for u8"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [u16]) { let x: u16 = 70000; out[0] = x; }");
    assert!(m.contains("literal out of range for u16"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [i32]) { let x = 1i8; }");
    assert!(m.contains("`i8` literals are not supported"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [f32]) { let x = 1.0f16; }");
    assert!(m.contains("only f32 and f64 float suffixes"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [f64]) { let x: f64 = 1; }");
    assert!(
        m.contains("an integer literal where f64 is expected"),
        "{m}"
    );
}

#[test]
fn type_constants_of_every_type() {
    let k = kernel(
        "#[kernel]
fn k(out: &mut [u8]) {
    let a = u8::MAX;
    let b = u16::MAX;
    let c = i64::MIN;
    let d = u64::MAX;
    let e = f64::MAX;
    let f = f64::INFINITY;
    let g = f16::MAX;
    let h = bf16::MIN_POSITIVE;
    let i = f64::EPSILON;
    out[0] = a;
}",
    );
    assert_eq!(
        literals(&k),
        vec![
            Value::U8(255),
            Value::U16(65535),
            Value::I64(i64::MIN),
            Value::U64(u64::MAX),
            Value::F64(f64::MAX),
            Value::F64(f64::INFINITY),
            // 65504 and 2^-126.
            Value::F16(0x7bff),
            Value::BF16(0x0080),
            Value::F64(f64::EPSILON),
        ]
    );
    let m = refused("#[kernel]\nfn k(out: &mut [u8]) { let x = u8::INFINITY; }");
    assert!(m.contains("unknown constant"), "{m}");
}

#[test]
fn casts_bits_and_operators_type_as_in_rust() {
    let k = kernel(
        "#[kernel]
fn k(x: &[f64], h: &[f16], out: &mut [u64], small: &mut [u8]) {
    let i = thread_idx_x();
    let bits = x[i].to_bits();
    let back = f64::from_bits(bits);
    let hb = h[i].to_bits();
    let hh = f16::from_bits(hb);
    let b: bf16 = hh as f32 as bf16;
    let wide = (back * 2.0) as i64 + (i as i64) << 40u32;
    out[i] = bits ^ (wide as u64);
    small[i] = (small[i] + 250) as u8;
    let neg = -b;
    let m = x[i].max(back).sqrt();
}",
    );
    let ty = |name: &str| k.locals.iter().find(|l| l.name == name).unwrap().ty;
    assert_eq!(ty("bits"), Scalar::U64);
    assert_eq!(ty("back"), Scalar::F64);
    assert_eq!(ty("hb"), Scalar::U16);
    assert_eq!(ty("hh"), Scalar::F16);
    assert_eq!(ty("b"), Scalar::BF16);
    assert_eq!(ty("wide"), Scalar::I64);
    assert_eq!(ty("neg"), Scalar::BF16);
    assert_eq!(ty("m"), Scalar::F64);
    let text = print(&k);
    for shown in [
        "x: global &[f64]",
        "h: global &[f16]",
        "small: global &mut [u8]",
        "%1 bits: u64 = global x[%0 i].to_bits();",
        "%2 back: f64 = f64::from_bits(%1 bits);",
        "%4 hh: f16 = f16::from_bits(%3 hb);",
        "((%4 hh as f32) as bf16)",
        "(%2 back *.f64 2.0f64)",
        "(global small[%0 i] +.u8 250u8)",
    ] {
        assert!(text.contains(shown), "`{shown}` not in\n{text}");
    }
}

#[test]
fn operators_a_type_lacks_are_refused() {
    let m = refused("#[kernel]\nfn k(out: &mut [u8]) { out[0] = -out[0]; }");
    assert!(m.contains("this operator does not apply to u8"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [f16]) { out[0] = !out[0]; }");
    assert!(m.contains("this operator does not apply to f16"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [f64]) { let x = out[0] & out[1]; }");
    assert!(m.contains("`&` does not apply to f64"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [f64], a: &[f32]) { out[0] = a[0] + out[0]; }");
    assert!(m.contains("mismatched types: f32 + f64"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [u16]) { let x = out[0].sqrt(); }");
    assert!(m.contains("`sqrt` does not take u16"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [u64]) { let x = out[0].to_bits(); }");
    assert!(m.contains("`to_bits` applies to floats, not u64"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [u32]) { let x = u8::from_bits(1u8); }");
    assert!(m.contains("`u8::from_bits` is not a float's"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [f64]) { let x = f64::from_bits(1u32); }");
    assert!(m.contains("expected u64, found u32"), "{m}");
}

#[test]
fn indices_and_loop_counters_stay_u32_or_i32() {
    let m = refused("#[kernel]\nfn k(out: &mut [f32]) { out[1u64] = 1.0; }");
    assert!(m.contains("an index must be u32 or i32, found u64"), "{m}");
    let m = refused("#[kernel]\nfn k(out: &mut [f32]) { for i in 0..4u8 { out[0] = 1.0; } }");
    assert!(m.contains("a `for` loop counts in u32 or i32"), "{m}");
}

#[test]
fn atomics_on_narrow_types_are_refused_and_64_bit_ones_accepted() {
    for t in ["u8", "u16", "f16", "bf16"] {
        let m = refused(&format!(
            "#[kernel]\nfn k(out: &mut [{t}]) {{ let v = out[1]; atomic_add(out, 0, v); }}"
        ));
        assert!(
            m.contains(&format!("`atomic_add` does not take {t}")),
            "{m}"
        );
        assert!(m.contains("no atomic takes u8, u16, f16 or bf16"), "{m}");
    }
    let k = kernel(
        "#[kernel]
fn k(a: &mut [f64], b: &mut [u64], c: &mut [i64]) {
    atomic_add(a, 0, 1.5);
    atomic_or(b, 0, 4u64);
    atomic_min(c, 0, -3i64);
    atomic_cas(b, 1, 0u64, 9u64);
}",
    );
    assert_eq!(k.params.len(), 3);
}

#[test]
fn a_target_without_a_type_names_it_wherever_the_kernel_uses_it() {
    // Only a cast uses bf16 here: no parameter, local or shared array.
    let k = kernel(
        "#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let i = thread_idx_x();
    out[i] = (x[i] as bf16) as f32;
}",
    );
    let sm70: Target = "cuda:sm_70".parse().unwrap();
    let sm80: Target = "cuda:sm_80".parse().unwrap();
    assert_eq!(sm70.unsupported_dtype(&k), Some(Scalar::BF16));
    assert_eq!(sm80.unsupported_dtype(&k), None);
    // A literal alone is enough on Metal.
    let k = kernel(
        "#[kernel]
fn k(out: &mut [f32]) {
    out[0] = (2.5f64 * 2.0) as f32;
}",
    );
    assert_eq!(Target::apple().unsupported_dtype(&k), Some(Scalar::F64));
    assert_eq!(Target::lavapipe().unsupported_dtype(&k), None);
}
