//! `pow` and `erf` in WGSL, each as a helper function: WGSL's `pow` is
//! undefined where Rust's `powf` has its special cases, and WGSL has no
//! `erf` at all.

use std::fmt::Write as _;

use crate::emit::erf_approx::{PIECES, SMALL, SMALL_Q};
use crate::ir::Value;

use super::Emitter;
use super::names::literal;

impl Emitter<'_> {
    /// Rust's `f32::powf` (C99 / IEEE 754 `pow`): WGSL's `pow(x, y)` is
    /// `exp2(y·log2(x))`, undefined for `x < 0` and for `x = 0` with
    /// `y ≤ 0`, and a compiler may assume no infinity or NaN reaches it, so
    /// every special case is decided first, on the bits, and only a finite
    /// nonzero `|x|` reaches `exp2(y·log2|x|)` — with the over- and
    /// underflow of the result decided here too. Returns the helper's name.
    pub(super) fn pow_helper(&mut self) -> String {
        self.helper("pow_f32", || {
            "// Rust's f32::powf: every special case by the bits, then exp2(y log2|x|).\n\
             fn pow_f32(x: f32, y: f32) -> f32 {\n    \
             let xb = bitcast<u32>(x) & 0x7fffffffu;\n    \
             let yb = bitcast<u32>(y) & 0x7fffffffu;\n    \
             // x^(+-0) = 1 and 1^y = 1, even for a NaN.\n    \
             if yb == 0u || bitcast<u32>(x) == 0x3f800000u { return 1.0f; }\n    \
             if is_nan(x) || is_nan(y) { return bitcast<f32>(0x7fc00000u); }\n    \
             let ax = bitcast<f32>(xb);\n    \
             if yb == 0x7f800000u {\n        \
             // y = +-inf: 1 for |x| = 1, else 0 or inf by |x| < 1 and y's sign.\n        \
             if ax == 1.0f { return 1.0f; }\n        \
             if (ax < 1.0f) == (y > 0.0f) { return 0.0f; }\n        \
             return bitcast<f32>(0x7f800000u);\n    \
             }\n    \
             // y is finite: an integer when it has no fraction; odd below 2^24.\n    \
             let y_int = trunc(y) == y;\n    \
             let y_odd = y_int && bitcast<f32>(yb) < 16777216.0f && trunc(y * 0.5f) != y * 0.5f;\n    \
             let x_neg = (bitcast<u32>(x) >> 31u) == 1u;\n    \
             let x_inf = xb == 0x7f800000u;\n    \
             // A finite negative x to a non-integer power has no real value.\n    \
             if x_neg && !y_int && !x_inf && xb != 0u { return bitcast<f32>(0x7fc00000u); }\n    \
             var r = 0.0f;\n    \
             if xb == 0u {\n        \
             r = select(bitcast<f32>(0x7f800000u), 0.0f, y > 0.0f);\n    \
             } else if x_inf {\n        \
             r = select(0.0f, bitcast<f32>(0x7f800000u), y > 0.0f);\n    \
             } else {\n        \
             let t = y * log2(ax);\n        \
             if t >= 128.0f {\n            \
             r = bitcast<f32>(0x7f800000u);\n        \
             } else if t >= -150.0f {\n            \
             r = exp2(t);\n        \
             }\n    \
             }\n    \
             return select(r, -r, x_neg && y_odd);\n}\n"
                .to_string()
        })
    }

    /// The error function by the polynomials of
    /// [`erf_approx`](crate::emit::erf_approx), each `fma` as the host's
    /// evaluation of the same table has it. Returns the helper's name.
    pub(super) fn erf_helper(&mut self) -> String {
        self.helper("erf_f32", || {
            let f = |x: f32| literal(Value::F32(x));
            let horner = |out: &mut String, var: &str, t: &str, cs: &[f32]| {
                let _ = writeln!(out, "        var {var} = {};", f(cs[0]));
                for c in &cs[1..] {
                    let _ = writeln!(out, "        {var} = fma({var}, {t}, {});", f(*c));
                }
            };
            let mut s = String::from(
                "// erf(x): oxmera's polynomials (emit/erf_approx.rs), within 1 ulp of the\n\
                 // correctly rounded value whether or not fma fuses.\n\
                 fn erf_f32(x: f32) -> f32 {\n    \
                 if is_nan(x) { return x; }\n    \
                 let a = abs(x);\n",
            );
            let _ = writeln!(s, "    if a < {} {{", f(SMALL));
            s.push_str("        let s = x * x;\n");
            horner(&mut s, "q", "s", &SMALL_Q);
            s.push_str("        return fma(x, q, x);\n    }\n    var r = 1.0f;\n");
            for (i, p) in PIECES.iter().enumerate() {
                let kw = if i == 0 { "    if" } else { " else if" };
                let _ = writeln!(s, "{kw} a < {} {{", f(p.below));
                let _ = writeln!(s, "        let u = a - {};", f(p.centre));
                horner(&mut s, "p", "u", p.coefficients);
                s.push_str("        r = 1.0f - p;\n    }");
            }
            s.push_str("\n    return select(r, -r, x < 0.0f);\n}\n");
            s
        })
    }
}
