//! What the language has and WGSL spells differently or lacks: Rust's
//! conversions and NaN rules, math builtins, warp shuffles at the
//! simulator's source lanes, and atomics (typed memories, float atomics by
//! compare-exchange, a strong CAS from WGSL's weak one).

use crate::ir::{AtomicOp, Expr, MathFn, Mem, Scalar, ShuffleKind};

use super::{Emitter, WgslError};

impl Emitter<'_> {
    pub(super) fn cast(&mut self, arg: &Expr, to: Scalar) -> Result<String, WgslError> {
        let a = self.expr(arg)?;
        Ok(match (arg.ty, to) {
            (x, y) if x == y => a,
            (Scalar::F32, Scalar::I32) => {
                let f = self.helper("f32_as_i32", || {
                    "// Rust's `as`: NaN is 0, out of range saturates.\n\
                     fn f32_as_i32(x: f32) -> i32 {\n    \
                     if is_nan(x) { return 0i; }\n    \
                     if x >= 2147483648.0f { return 2147483647i; }\n    \
                     if x <= -2147483648.0f { return bitcast<i32>(0x80000000u); }\n    \
                     return i32(x);\n}\n"
                        .to_string()
                });
                format!("{f}({a})")
            }
            (Scalar::F32, Scalar::U32) => {
                let f = self.helper("f32_as_u32", || {
                    "// Rust's `as`: NaN and negatives are 0, out of range saturates.\n\
                     fn f32_as_u32(x: f32) -> u32 {\n    \
                     if is_nan(x) || x <= 0.0f { return 0u; }\n    \
                     if x >= 4294967296.0f { return 4294967295u; }\n    \
                     return u32(x);\n}\n"
                        .to_string()
                });
                format!("{f}({a})")
            }
            (Scalar::I32 | Scalar::U32, Scalar::F32) => format!("f32({a})"),
            (Scalar::I32, Scalar::U32) => format!("bitcast<u32>({a})"),
            (Scalar::U32, Scalar::I32) => format!("bitcast<i32>({a})"),
            // Rust reads a value's bits: -0.0 and NaN are true.
            (Scalar::F32, Scalar::Bool) => format!("(bitcast<u32>({a}) != 0u)"),
            (Scalar::I32, Scalar::Bool) => format!("({a} != 0i)"),
            (Scalar::U32, Scalar::Bool) => format!("({a} != 0u)"),
            (Scalar::Bool, Scalar::F32) => format!("select(0.0f, 1.0f, {a})"),
            (Scalar::Bool, Scalar::I32) => format!("select(0i, 1i, {a})"),
            (Scalar::Bool, Scalar::U32) => format!("select(0u, 1u, {a})"),
            (x, y) if x.bits() == 64 || y.bits() == 64 => return self.cast_wide(&a, x, y),
            (x, y) => {
                return Err(self.unsupported(&format!("`{x} as {y}`"), "no such conversion"));
            }
        })
    }

    /// A conversion to or from a 64-bit type (`f64`, `i64`, `u64`), as
    /// Rust's `as` computes it: floats to integers saturate and take NaN to
    /// 0, integers narrow by dropping high bits and widen by the source's
    /// sign, `bool` reads a value's bits.
    fn cast_wide(&mut self, a: &str, from: Scalar, to: Scalar) -> Result<String, WgslError> {
        use Scalar::{Bool, F32, F64, I32, I64, U32, U64};
        Ok(match (from, to) {
            // f32 and f64 both ways: widening is exact; narrowing rounds
            // to nearest even (SPIR-V's OpFConvert on Vulkan drivers, and
            // Rust) and overflows to infinity.
            (F32, F64) | (F64, F32) => format!("{to}({a})"),
            // Integers to floats: WGSL's conversion (nearest).
            (I32 | U32 | I64 | U64, F32 | F64) => format!("{to}({a})"),
            // Floats to integers through f64, which holds every f32 exactly.
            (F32 | F64, I32 | U32 | I64 | U64) => {
                if from == F32 && !self.target.dtypes().contains(F64) {
                    // The saturating helpers work in f64 (which holds every
                    // f32 exactly); a target with i64 but no f64 (Metal's
                    // can be one) would get an f64 shader it rejects.
                    return Err(self.unsupported(
                        &format!("`{from} as {to}`"),
                        "it is computed through f64, and the target has no f64 \
                         (the adapter lacks SHADER_F64)",
                    ));
                }
                let x = if from == F32 {
                    format!("f64({a})")
                } else {
                    a.to_string()
                };
                let h = self.f64_as_int(to)?;
                format!("{h}({x})")
            }
            // Same width: the bits.
            (I64, U64) | (U64, I64) => format!("bitcast<{to}>({a})"),
            // Widening: by the source's sign (i32 as u64 sign-extends).
            (I32, I64) | (U32, U64) | (U32, I64) => format!("{to}({a})"),
            (I32, U64) => format!("bitcast<u64>(i64({a}))"),
            // Narrowing: the low 32 bits.
            (U64, U32) => format!("u32({a} & 0xfffffffflu)"),
            (I64, U32) => format!("u32(bitcast<u64>({a}) & 0xfffffffflu)"),
            (U64, I32) => format!("bitcast<i32>(u32({a} & 0xfffffffflu))"),
            (I64, I32) => format!("bitcast<i32>(u32(bitcast<u64>({a}) & 0xfffffffflu))"),
            (F64, Bool) => {
                self.need_u64("`f64 as bool` (read from the value's bits)")?;
                format!("(bitcast<u64>({a}) != 0lu)")
            }
            (I64, Bool) => format!("({a} != 0li)"),
            (U64, Bool) => format!("({a} != 0lu)"),
            (Bool, F64) => format!("select(0.0lf, 1.0lf, {a})"),
            (Bool, I64) => format!("select(0li, 1li, {a})"),
            (Bool, U64) => format!("select(0lu, 1lu, {a})"),
            (x, y) => {
                return Err(self.unsupported(&format!("`{x} as {y}`"), "no such conversion"));
            }
        })
    }

    /// Refuses `what` where the target has no u64: an f64's bits are read
    /// as one (naga's `bitcast` keeps the width, so not as two u32s).
    fn need_u64(&self, what: &str) -> Result<(), WgslError> {
        if self.target.dtypes().contains(Scalar::U64) {
            Ok(())
        } else {
            Err(self.unsupported(
                what,
                "it reads an f64's bits as a u64, and the target has no u64 \
                 (the adapter lacks SHADER_INT64)",
            ))
        }
    }

    /// The helper `is_nan_f64` (an f64 NaN by its bits); its name.
    fn is_nan_f64(&mut self, what: &str) -> Result<String, WgslError> {
        self.need_u64(what)?;
        Ok(self.helper("is_nan_f64", || {
            "// An f64 NaN by its bits: a compiler may assume `x != x` is false.\n\
             fn is_nan_f64(x: f64) -> bool {\n    \
             return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu;\n}\n"
                .to_string()
        }))
    }

    /// Rust's saturating `f64 as T` for an integer `T`: NaN is 0, out of
    /// range saturates. The bounds are powers of two, exact in f64.
    fn f64_as_int(&mut self, to: Scalar) -> Result<String, WgslError> {
        self.is_nan_f64(&format!("`f64 as {to}`"))?;
        let (lo, lo_lit, hi, hi_lit) = match to {
            Scalar::I32 => (
                "-2147483648.0lf",
                "bitcast<i32>(0x80000000u)",
                "2147483648.0lf",
                "2147483647i",
            ),
            Scalar::U32 => ("0.0lf", "0u", "4294967296.0lf", "4294967295u"),
            Scalar::I64 => (
                "-9223372036854775808.0lf",
                "(-9223372036854775807li - 1li)",
                "9223372036854775808.0lf",
                "9223372036854775807li",
            ),
            _ => (
                "0.0lf",
                "0lu",
                "18446744073709551616.0lf",
                "18446744073709551615lu",
            ),
        };
        let name = format!("f64_as_{to}");
        let n = name.clone();
        Ok(self.helper(&name, move || {
            format!(
                "// Rust's `as`: NaN is 0, out of range saturates.\n\
                 fn {n}(x: f64) -> {to} {{\n    \
                 if is_nan_f64(x) {{ return {to}(0); }}\n    \
                 if x >= {hi} {{ return {hi_lit}; }}\n    \
                 if x <= {lo} {{ return {lo_lit}; }}\n    \
                 return {to}(x);\n}}\n"
            )
        }))
    }

    pub(super) fn math(&mut self, f: MathFn, args: &[Expr]) -> Result<String, WgslError> {
        let mut a = Vec::with_capacity(args.len());
        for x in args {
            a.push(self.expr(x)?);
        }
        let ty = args.first().map(|x| x.ty).unwrap_or(Scalar::F32);
        if ty == Scalar::F64 {
            return self.math_f64(f, &a);
        }
        if matches!(ty, Scalar::I64 | Scalar::U64)
            && !matches!(f, MathFn::Min | MathFn::Max | MathFn::Abs)
        {
            return Err(self.unsupported(
                &format!("`{}` of {ty}", f.name()),
                "the WGSL emitter writes min, max and abs of the 64-bit integers; \
                 the bit counts of them not yet",
            ));
        }
        Ok(match f {
            MathFn::Exp => format!("exp({})", a[0]),
            MathFn::Log => format!("log({})", a[0]),
            MathFn::Sqrt => format!("sqrt({})", a[0]),
            MathFn::Rsqrt => format!("inverseSqrt({})", a[0]),
            MathFn::Fma => format!("fma({}, {}, {})", a[0], a[1], a[2]),
            MathFn::Abs => format!("abs({})", a[0]),
            MathFn::Floor => format!("floor({})", a[0]),
            MathFn::Sin => format!("sin({})", a[0]),
            MathFn::Cos => format!("cos({})", a[0]),
            MathFn::Exp2 => format!("exp2({})", a[0]),
            MathFn::Log2 => format!("log2({})", a[0]),
            // WGSL's counts keep the argument's type; Rust's are u32.
            MathFn::CountOnes | MathFn::LeadingZeros | MathFn::TrailingZeros => {
                let name = match f {
                    MathFn::CountOnes => "countOneBits",
                    MathFn::LeadingZeros => "countLeadingZeros",
                    _ => "countTrailingZeros",
                };
                if ty == Scalar::I32 {
                    format!("{name}(bitcast<u32>({}))", a[0])
                } else {
                    format!("{name}({})", a[0])
                }
            }
            MathFn::Ceil => format!("ceil({})", a[0]),
            MathFn::Pow => {
                let h = self.pow_helper();
                format!("{h}({}, {})", a[0], a[1])
            }
            MathFn::Erf => {
                let h = self.erf_helper();
                format!("{h}({})", a[0])
            }
            MathFn::Tanh => {
                let h = self.helper("tanh_f32", || {
                    "// tanh through exp overflows to NaN on some drivers past |x| ~ 44;\n\
                     // f32's tanh is exactly +-1 beyond |x| = 9.02, so clamping is exact.\n\
                     fn tanh_f32(x: f32) -> f32 {\n    \
                     if is_nan(x) { return x; }\n    \
                     return tanh(clamp(x, -15.0f, 15.0f));\n}\n"
                        .to_string()
                });
                format!("{h}({})", a[0])
            }
            MathFn::Min | MathFn::Max if ty == Scalar::F32 => {
                let h = self.min_max_f32(f == MathFn::Min);
                format!("{h}({}, {})", a[0], a[1])
            }
            MathFn::Min => format!("min({}, {})", a[0], a[1]),
            MathFn::Max => format!("max({}, {})", a[0], a[1]),
        })
    }

    /// A math builtin at f64. Vulkan's GLSL.std.450 (what naga's SPIR-V
    /// calls) defines the transcendentals (`exp`, `log`, `sin`, `cos`,
    /// `exp2`, `log2`, `pow`, `tanh`) for 16- and 32-bit floats only, and
    /// Metal has no f64 at all: those are refused by name, the rest are
    /// written with the driver's f64 instructions: `abs`, `floor`, `ceil`,
    /// `min`/`max` are exact, `sqrt` and `fma` are correctly rounded on
    /// lavapipe though Vulkan does not promise it, and `rsqrt` is written as
    /// `1 / sqrt` (two roundings, as the language defines it) rather than
    /// `inverseSqrt`, which Vulkan allows 2 ulp.
    fn math_f64(&mut self, f: MathFn, a: &[String]) -> Result<String, WgslError> {
        Ok(match f {
            MathFn::Sqrt => format!("sqrt({})", a[0]),
            MathFn::Rsqrt => format!("(1.0lf / sqrt({}))", a[0]),
            MathFn::Fma => format!("fma({}, {}, {})", a[0], a[1], a[2]),
            MathFn::Abs => format!("abs({})", a[0]),
            MathFn::Floor => format!("floor({})", a[0]),
            MathFn::Ceil => format!("ceil({})", a[0]),
            MathFn::Min | MathFn::Max => {
                let min = f == MathFn::Min;
                let name = if min { "min" } else { "max" };
                self.is_nan_f64(&format!("`f64::{name}` (Rust's NaN rule)"))?;
                let h = self.helper(&format!("{name}_f64"), || {
                    format!(
                        "// Rust's f64::{name}: a NaN operand yields the other one.\n\
                         fn {name}_f64(a: f64, b: f64) -> f64 {{\n    \
                         if is_nan_f64(a) {{ return b; }}\n    \
                         if is_nan_f64(b) {{ return a; }}\n    \
                         return {name}(a, b);\n}}\n"
                    )
                });
                format!("{h}({}, {})", a[0], a[1])
            }
            _ => {
                return Err(self.unsupported(
                    &format!("`{}` of f64", f.name()),
                    "Vulkan's GLSL.std.450 has no f64 form of it (only sqrt, inverseSqrt, \
                     fma, abs, floor, ceil, min and max are written at f64)",
                ));
            }
        })
    }

    /// Rust's `f32::min`/`max` as a helper function; its name.
    fn min_max_f32(&mut self, min: bool) -> String {
        let name = if min { "min" } else { "max" };
        self.helper(&format!("{name}_f32"), || {
            format!(
                "// Rust's f32::{name}: a NaN operand yields the other one.\n\
                 fn {name}_f32(a: f32, b: f32) -> f32 {{\n    \
                 if is_nan(a) {{ return b; }}\n    \
                 if is_nan(b) {{ return a; }}\n    \
                 return {name}(a, b);\n}}\n"
            )
        })
    }

    /// A read-modify-write as a compare-exchange loop: `new` is WGSL for
    /// the value to store given `old` (of the memory's storage type);
    /// returns the helper's name. The loop retries a spurious failure of
    /// the weak exchange as it retries a lost race.
    fn cas_loop(&mut self, var: &str, what: &str, t: &str, v: &str, new: &str) -> String {
        let name = format!("atomic_{what}_{var}");
        let n = name.clone();
        self.helper(&name, move || {
            format!(
                "// atomic_{what} as a compare-exchange loop.\n\
                 fn {n}(i: u32, v: {v}) -> {t} {{\n    \
                 var old = atomicLoad(&{var}[i]);\n    \
                 loop {{\n        \
                 let r = atomicCompareExchangeWeak(&{var}[i], old, {new});\n        \
                 if r.exchanged {{ break; }}\n        \
                 old = r.old_value;\n    \
                 }}\n    \
                 return old;\n}}\n"
            )
        })
    }

    pub(super) fn shuffle_helper(
        &mut self,
        kind: ShuffleKind,
        ty: Scalar,
    ) -> Result<String, WgslError> {
        if ty.bits() == 64 {
            return Err(self.unsupported(
                &format!("`{}` of a {ty}", kind.name()),
                "WGSL's subgroup shuffles are written for the 32-bit types only; \
                 shuffle the two halves of its bits",
            ));
        }
        if ty == Scalar::Bool {
            return Err(self.unsupported(
                &format!("`{}` of a bool", kind.name()),
                "subgroup shuffles move numbers; shuffle `b as u32` instead",
            ));
        }
        let w = self.warp;
        let name = format!("{}_{}", kind.name(), ty.name());
        let t = ty.name();
        // The source lane, as the simulator computes it: XOR and index wrap
        // within the warp, up and down keep the lane's own value past an end.
        let (src, inside) = match kind {
            ShuffleKind::Xor => ("(lane ^ arg) & {w1}u".to_string(), "true".to_string()),
            ShuffleKind::Idx => ("arg & {w1}u".to_string(), "true".to_string()),
            ShuffleKind::Down => ("lane + arg".to_string(), "arg < {w}u - lane".to_string()),
            ShuffleKind::Up => ("lane - arg".to_string(), "arg <= lane".to_string()),
        };
        let fill = |s: &str| {
            s.replace("{w1}", &(w - 1).to_string())
                .replace("{w}", &w.to_string())
        };
        let (src, inside) = (fill(&src), fill(&inside));
        Ok(self.helper(&name, || {
            format!(
                "fn {name}(v: {t}, arg: u32, lane: u32) -> {t} {{\n    \
                 let inside = {inside};\n    \
                 let src = select(lane, {src}, inside);\n    \
                 return subgroupShuffle(v, src);\n}}\n"
            )
        }))
    }

    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        mem: Mem,
        index: &Expr,
        value: &Expr,
        compare: Option<&Expr>,
    ) -> Result<String, WgslError> {
        let var = self.mem_var(mem);
        let i = self.as_u32_index(index)?;
        let v = self.expr(value)?;
        let elem = self.elem_of(mem);
        let cmp = match compare {
            Some(c) => Some(self.expr(c)?),
            None => None,
        };
        if elem == Scalar::F32 {
            // Bits in an atomic<u32>: exchange directly, the rest through a
            // compare-exchange loop.
            return Ok(match op {
                AtomicOp::Exch => {
                    format!("bitcast<f32>(atomicExchange(&{var}[{i}], bitcast<u32>({v})))")
                }
                AtomicOp::Add => {
                    let h = self.cas_loop(
                        &var,
                        "add",
                        "u32",
                        "f32",
                        "bitcast<u32>(bitcast<f32>(old) + v)",
                    );
                    format!("bitcast<f32>({h}({i}, {v}))")
                }
                AtomicOp::Cas => {
                    let h = self.strong_cas(&var, "u32");
                    format!(
                        "bitcast<f32>({h}({i}, bitcast<u32>({}), bitcast<u32>({v})))",
                        cmp.unwrap_or_default()
                    )
                }
                AtomicOp::Min | AtomicOp::Max => {
                    let m = self.min_max_f32(op == AtomicOp::Min);
                    let what = if op == AtomicOp::Min { "min" } else { "max" };
                    let h = self.cas_loop(
                        &var,
                        what,
                        "u32",
                        "f32",
                        &format!("bitcast<u32>({m}(bitcast<f32>(old), v))"),
                    );
                    format!("bitcast<f32>({h}({i}, {v}))")
                }
                _ => {
                    return Err(
                        self.unsupported(&format!("`{}` on f32", op.name()), "it takes integers")
                    );
                }
            });
        }
        Ok(match op {
            AtomicOp::Add => format!("atomicAdd(&{var}[{i}], {v})"),
            AtomicOp::Sub => format!("atomicSub(&{var}[{i}], {v})"),
            AtomicOp::And => format!("atomicAnd(&{var}[{i}], {v})"),
            AtomicOp::Or => format!("atomicOr(&{var}[{i}], {v})"),
            AtomicOp::Xor => format!("atomicXor(&{var}[{i}], {v})"),
            // WGSL has no wrapping increment: CUDA's atomicInc by exchange.
            AtomicOp::Inc => {
                let h = self.cas_loop(&var, "inc", "u32", "u32", "select(old + 1u, 0u, old >= v)");
                format!("{h}({i}, {v})")
            }
            AtomicOp::Min => format!("atomicMin(&{var}[{i}], {v})"),
            AtomicOp::Max => format!("atomicMax(&{var}[{i}], {v})"),
            AtomicOp::Exch => format!("atomicExchange(&{var}[{i}], {v})"),
            AtomicOp::Cas => {
                let h = self.strong_cas(&var, elem.name());
                format!("{h}({i}, {}, {v})", cmp.unwrap_or_default())
            }
        })
    }

    /// CUDA's compare-and-swap fails only when the value differs; WGSL's
    /// weak exchange may also fail spuriously, so retry those.
    fn strong_cas(&mut self, var: &str, t: &str) -> String {
        self.helper(&format!("atomic_cas_{var}"), || {
            format!(
                "// A strong compare-and-swap from WGSL's weak one.\n\
                 fn atomic_cas_{var}(i: u32, expected: {t}, v: {t}) -> {t} {{\n    \
                 var old: {t};\n    \
                 loop {{\n        \
                 let r = atomicCompareExchangeWeak(&{var}[i], expected, v);\n        \
                 old = r.old_value;\n        \
                 if r.exchanged || r.old_value != expected {{ break; }}\n    \
                 }}\n    \
                 return old;\n}}\n"
            )
        })
    }
}
