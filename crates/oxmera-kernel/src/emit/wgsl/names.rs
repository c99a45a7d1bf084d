//! The WGSL emitter's words: identifiers WGSL reserves, and literals that
//! read back exactly.

use crate::ir::Value;

/// The entry point's name: the kernel's, unless WGSL reserves it.
pub(super) fn entry_name(name: &str) -> String {
    // WGSL's keywords and the reserved words a Rust identifier could be.
    const RESERVED: &[&str] = &[
        "alias",
        "break",
        "case",
        "const",
        "const_assert",
        "continue",
        "continuing",
        "default",
        "diagnostic",
        "discard",
        "else",
        "enable",
        "false",
        "fn",
        "for",
        "if",
        "let",
        "loop",
        "override",
        "requires",
        "return",
        "struct",
        "switch",
        "true",
        "var",
        "while",
        "main",
        "NULL",
        "Self",
        "abstract",
        "active",
        "alignas",
        "alignof",
        "as",
        "asm",
        "async",
        "attribute",
        "auto",
        "await",
        "become",
        "binding_array",
        "cast",
        "catch",
        "class",
        "co_await",
        "co_return",
        "co_yield",
        "coherent",
        "column_major",
        "common",
        "compile",
        "compile_fragment",
        "concept",
        "const_cast",
        "consteval",
        "constexpr",
        "constinit",
        "crate",
        "debugger",
        "decltype",
        "delete",
        "demote",
        "demote_to_helper",
        "do",
        "dynamic_cast",
        "enum",
        "explicit",
        "export",
        "extends",
        "extern",
        "external",
        "fallthrough",
        "filter",
        "final",
        "finally",
        "friend",
        "from",
        "fxgroup",
        "get",
        "goto",
        "groupshared",
        "highp",
        "impl",
        "implements",
        "import",
        "inline",
        "instanceof",
        "interface",
        "layout",
        "lowp",
        "macro",
        "macro_rules",
        "match",
        "mediump",
        "meta",
        "mod",
        "module",
        "move",
        "mut",
        "mutable",
        "namespace",
        "new",
        "nil",
        "noexcept",
        "noinline",
        "nointerpolation",
        "non_coherent",
        "noncoherent",
        "noperspective",
        "null",
        "nullptr",
        "of",
        "operator",
        "package",
        "packoffset",
        "partition",
        "pass",
        "patch",
        "pixelfragment",
        "precise",
        "precision",
        "premerge",
        "priv",
        "protected",
        "pub",
        "public",
        "readonly",
        "ref",
        "regardless",
        "register",
        "reinterpret_cast",
        "require",
        "resource",
        "restrict",
        "self",
        "set",
        "shared",
        "sizeof",
        "smooth",
        "snorm",
        "static",
        "static_assert",
        "static_cast",
        "std",
        "subroutine",
        "super",
        "target",
        "template",
        "this",
        "thread_local",
        "throw",
        "trait",
        "try",
        "type",
        "typedef",
        "typeid",
        "typename",
        "typeof",
        "union",
        "unless",
        "unorm",
        "unsafe",
        "unsized",
        "use",
        "using",
        "varying",
        "virtual",
        "volatile",
        "wgsl",
        "where",
        "with",
        "writeonly",
        "yield",
        // The emitter's own names.
        "thread",
        "block",
        "linear",
        "grid",
        "params",
        "Params",
    ];
    if RESERVED.contains(&name) || name.starts_with("__") || is_helper_name(name) {
        format!("{name}_kernel")
    } else {
        name.to_string()
    }
}

/// True for the names of the helper functions the emitter may add.
fn is_helper_name(name: &str) -> bool {
    name.starts_with("atomic_")
        || name.starts_with("shfl_")
        || name.starts_with("f64_as_")
        || matches!(
            name,
            "f32_as_i32"
                | "f32_as_u32"
                | "tanh_f32"
                | "min_f32"
                | "max_f32"
                | "is_nan"
                | "pow_f32"
                | "erf_f32"
                | "is_nan_f64"
                | "min_f64"
                | "max_f64"
        )
}

/// A literal WGSL reads back as exactly this value.
pub(super) fn literal(v: Value) -> String {
    match v {
        Value::F32(x) if x.is_finite() && (x == 0.0 || x.is_normal()) => {
            // Debug prints the shortest decimal that reads back exactly.
            let s = format!("{x:?}");
            if x.is_sign_negative() {
                format!("({s}f)")
            } else {
                format!("{s}f")
            }
        }
        // Infinities, NaNs and subnormals by their bits.
        Value::F32(x) => format!("bitcast<f32>({:#010x}u)", x.to_bits()),
        Value::I32(i32::MIN) => "bitcast<i32>(0x80000000u)".into(),
        Value::I32(x) if x < 0 => format!("({x}i)"),
        Value::I32(x) => format!("{x}i"),
        Value::U32(x) => format!("{x}u"),
        // naga's suffixes for the 64-bit types (`lf`, `li`, `lu`); an f64
        // prints the shortest decimal that reads back exactly, as f32 does.
        Value::F64(x) if x.is_finite() && (x == 0.0 || x.is_normal()) => {
            let s = format!("{x:?}");
            if x.is_sign_negative() {
                format!("({s}lf)")
            } else {
                format!("{s}lf")
            }
        }
        // By its bits: the emitter refuses this form where the target has
        // no u64 (see `Emitter::expr`).
        Value::F64(x) => format!("bitcast<f64>({:#018x}lu)", x.to_bits()),
        // i64::MIN has no positive literal to negate.
        Value::I64(i64::MIN) => "(-9223372036854775807li - 1li)".into(),
        Value::I64(x) if x < 0 => format!("({x}li)"),
        Value::I64(x) => format!("{x}li"),
        Value::U64(x) => format!("{x}lu"),
        Value::Bool(b) => b.to_string(),
        other => unreachable!("`wgsl` refuses {} before emitting", other.ty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_back_exactly() {
        assert_eq!(literal(Value::F32(1.5)), "1.5f");
        assert_eq!(literal(Value::F32(-0.0)), "(-0.0f)");
        assert_eq!(literal(Value::F32(1e-7)), "1e-7f");
        assert_eq!(
            literal(Value::F32(f32::NEG_INFINITY)),
            "bitcast<f32>(0xff800000u)"
        );
        assert_eq!(literal(Value::F32(1e-45)), "bitcast<f32>(0x00000001u)");
        assert_eq!(literal(Value::I32(i32::MIN)), "bitcast<i32>(0x80000000u)");
        assert_eq!(literal(Value::I32(-3)), "(-3i)");
        assert_eq!(literal(Value::U32(7)), "7u");
    }

    #[test]
    fn wide_literals_read_back_exactly() {
        // 0.1 is not an f32: its f64 digits all survive.
        assert_eq!(literal(Value::F64(0.1)), "0.1lf");
        assert_eq!(literal(Value::F64(-2.5)), "(-2.5lf)");
        assert_eq!(literal(Value::F64(-0.0)), "(-0.0lf)");
        assert_eq!(literal(Value::F64(16777217.0)), "16777217.0lf");
        assert_eq!(literal(Value::F64(1e300)), "1e300lf");
        assert_eq!(
            literal(Value::F64(std::f64::consts::PI)),
            "3.141592653589793lf"
        );
        assert_eq!(
            literal(Value::F64(f64::INFINITY)),
            "bitcast<f64>(0x7ff0000000000000lu)"
        );
        assert_eq!(
            literal(Value::F64(5e-324)),
            "bitcast<f64>(0x0000000000000001lu)"
        );
        assert_eq!(literal(Value::I64(-3)), "(-3li)");
        assert_eq!(literal(Value::I64(1 << 40)), "1099511627776li");
        assert_eq!(
            literal(Value::I64(i64::MIN)),
            "(-9223372036854775807li - 1li)"
        );
        assert_eq!(literal(Value::U64(u64::MAX)), "18446744073709551615lu");
        // Every printed decimal reads back as the same bits.
        for x in [
            0.1f64,
            1.0 / 3.0,
            2.0f64.sqrt(),
            1e-300,
            123_456_789.123_456_79,
        ] {
            let s = literal(Value::F64(x));
            let digits = s.trim_end_matches("lf");
            assert_eq!(digits.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{s}");
        }
    }

    #[test]
    fn reserved_entry_names_get_a_suffix() {
        assert_eq!(entry_name("add"), "add");
        assert_eq!(entry_name("filter"), "filter_kernel");
        assert_eq!(entry_name("main"), "main_kernel");
    }
}
