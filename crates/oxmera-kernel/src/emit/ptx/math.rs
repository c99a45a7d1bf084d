//! The math builtins: `f32` (and the halves, computed in `f32` and rounded
//! once), `f64` where PTX has a correctly rounded instruction, and the
//! integers' bit counts, `abs`, `min` and `max` at every width.

use crate::ir::{Expr, MathFn, Scalar};

use super::types::narrow_mask;
use super::{Class, EmitError, Emitter, suffix};

/// `log2(e)` and `ln(2)` as f32 bits, for `exp` and `ln` through base 2.
const LOG2_E: &str = "0f3FB8AA3B";
const LN_2: &str = "0f3F317218";

impl Emitter<'_> {
    pub(super) fn math(&mut self, f: MathFn, args: &[Expr]) -> Result<String, EmitError> {
        let mut a = Vec::with_capacity(args.len());
        for x in args {
            let v = self.expr(x)?;
            a.push(self.in_reg(x.ty, v));
        }
        let ty = args.first().map(|x| x.ty).unwrap_or(Scalar::F32);
        if matches!(
            f,
            MathFn::CountOnes | MathFn::LeadingZeros | MathFn::TrailingZeros
        ) {
            return Ok(self.bit_count(f, ty, &a[0]));
        }
        if ty == Scalar::F64 {
            return self.math_f64(f, &a);
        }
        let d = self.temp(Class::of(ty));
        if !ty.is_float() {
            match f {
                MathFn::Abs => self.ins(format!("abs.{} {d}, {}", suffix(ty), a[0])),
                MathFn::Min => self.ins(format!("min.{} {d}, {}, {}", suffix(ty), a[0], a[1])),
                MathFn::Max => self.ins(format!("max.{} {d}, {}, {}", suffix(ty), a[0], a[1])),
                _ => {
                    return Err(self.unsupported(
                        &format!("`{}` on {ty}", f.name()),
                        "the IR validator should have refused it",
                    ));
                }
            }
            return Ok(d);
        }
        match f {
            MathFn::Exp => {
                let t = self.temp(Class::F32);
                self.ins(format!("mul.rn.f32 {t}, {}, {LOG2_E}", a[0]));
                self.ins(format!("ex2.approx.f32 {d}, {t}"));
            }
            MathFn::Log => {
                let t = self.temp(Class::F32);
                self.ins(format!("lg2.approx.f32 {t}, {}", a[0]));
                self.ins(format!("mul.rn.f32 {d}, {t}, {LN_2}"));
            }
            MathFn::Sqrt => self.ins(format!("sqrt.rn.f32 {d}, {}", a[0])),
            // 1 / sqrt(x) with both steps correctly rounded, as Rust's.
            MathFn::Rsqrt => {
                let t = self.temp(Class::F32);
                self.ins(format!("sqrt.rn.f32 {t}, {}", a[0]));
                self.ins(format!("rcp.rn.f32 {d}, {t}"));
            }
            MathFn::Fma => self.ins(format!("fma.rn.f32 {d}, {}, {}, {}", a[0], a[1], a[2])),
            MathFn::Abs => self.on_bits(&d, &a[0], "and.b32", "0x7FFFFFFF"),
            // PTX's min/max return the other operand of a NaN, as f32::min.
            MathFn::Min => self.ins(format!("min.f32 {d}, {}, {}", a[0], a[1])),
            MathFn::Max => self.ins(format!("max.f32 {d}, {}, {}", a[0], a[1])),
            MathFn::Floor => self.ins(format!("cvt.rmi.f32.f32 {d}, {}", a[0])),
            MathFn::Ceil => self.ins(format!("cvt.rpi.f32.f32 {d}, {}", a[0])),
            MathFn::Sin => self.ins(format!("sin.approx.f32 {d}, {}", a[0])),
            MathFn::Cos => self.ins(format!("cos.approx.f32 {d}, {}", a[0])),
            MathFn::Exp2 => self.ins(format!("ex2.approx.f32 {d}, {}", a[0])),
            MathFn::Log2 => self.ins(format!("lg2.approx.f32 {d}, {}", a[0])),
            MathFn::Tanh if (self.cc.major, self.cc.minor) >= (7, 5) => {
                self.ins(format!("tanh.approx.f32 {d}, {}", a[0]))
            }
            MathFn::Tanh => self.tanh_by_exp(&d, &a[0]),
            MathFn::Pow => self.pow(&d, &a[0], &a[1]),
            MathFn::Erf => self.erf(&d, &a[0]),
            MathFn::CountOnes | MathFn::LeadingZeros | MathFn::TrailingZeros => {
                unreachable!("bit counts return above")
            }
        }
        // A half's result rounded once; abs, min, max, floor and ceil of a
        // half are halves already (exact), so they skip the round trip.
        if !matches!(
            f,
            MathFn::Abs | MathFn::Min | MathFn::Max | MathFn::Floor | MathFn::Ceil
        ) {
            self.round_half(ty, &d);
        }
        Ok(d)
    }

    /// The builtins PTX computes exactly at f64; the transcendental ones
    /// are refused: PTX's approximations (`ex2.approx`, `sin.approx`, ...)
    /// are f32 only, and rounding an f64 through them would lose the
    /// precision the type was chosen for.
    fn math_f64(&mut self, f: MathFn, a: &[String]) -> Result<String, EmitError> {
        let d = self.temp(Class::F64);
        match f {
            MathFn::Sqrt => self.ins(format!("sqrt.rn.f64 {d}, {}", a[0])),
            MathFn::Rsqrt => {
                let t = self.temp(Class::F64);
                self.ins(format!("sqrt.rn.f64 {t}, {}", a[0]));
                self.ins(format!("rcp.rn.f64 {d}, {t}"));
            }
            MathFn::Fma => self.ins(format!("fma.rn.f64 {d}, {}, {}, {}", a[0], a[1], a[2])),
            MathFn::Abs => self.on_bits(&d, &a[0], "and.b64", "0x7FFFFFFFFFFFFFFF"),
            MathFn::Min => self.ins(format!("min.f64 {d}, {}, {}", a[0], a[1])),
            MathFn::Max => self.ins(format!("max.f64 {d}, {}, {}", a[0], a[1])),
            MathFn::Floor => self.ins(format!("cvt.rmi.f64.f64 {d}, {}", a[0])),
            MathFn::Ceil => self.ins(format!("cvt.rpi.f64.f64 {d}, {}", a[0])),
            _ => {
                return Err(self.unsupported(
                    &format!("`{}` on f64", f.name()),
                    "the PTX emitter writes no f64 transcendental yet (PTX's approximate \
                     instructions are f32 only, and f64 values must not pass through them); \
                     compute it in f32 (`x as f32`) where that precision is enough",
                ));
            }
        }
        Ok(d)
    }

    /// `count_ones`, `leading_zeros`, `trailing_zeros`: a u32 whatever the
    /// integer, counted at the integer's own width.
    fn bit_count(&mut self, f: MathFn, ty: Scalar, a: &str) -> String {
        let d = self.temp(Class::B32);
        let b = if ty.bits() == 64 { "b64" } else { "b32" };
        match f {
            // A narrow integer is zero-extended: its ones are the word's.
            MathFn::CountOnes => self.ins(format!("popc.{b} {d}, {a}")),
            MathFn::LeadingZeros => {
                self.ins(format!("clz.{b} {d}, {a}"));
                // The word's zeros above a narrow integer are not its own.
                if narrow_mask(ty).is_some() {
                    self.ins(format!("sub.u32 {d}, {d}, {}", 32 - ty.bits()));
                }
            }
            // The lowest set bit is the highest of the reversed word; clz of
            // 0 is the word's width, as Rust's trailing_zeros of 0 — for a
            // narrow integer, its own width, hence the `min`.
            _ => {
                let r = self.temp(if b == "b64" { Class::B64 } else { Class::B32 });
                self.ins(format!("brev.{b} {r}, {a}"));
                self.ins(format!("clz.{b} {d}, {r}"));
                if narrow_mask(ty).is_some() {
                    self.ins(format!("min.u32 {d}, {d}, {}", ty.bits()));
                }
            }
        }
        d
    }

    /// `tanh` where `tanh.approx` is missing (sm_70, sm_72):
    /// `sign(x) (1 - 2 / (e^{2|x|} + 1))`, and `x` itself below 2^-12, where
    /// the subtraction would cancel and `tanh x = x` to within x²/3.
    fn tanh_by_exp(&mut self, d: &str, x: &str) {
        let (ax, t, q) = (
            self.temp(Class::F32),
            self.temp(Class::F32),
            self.temp(Class::F32),
        );
        self.ins(format!("abs.f32 {ax}, {x}"));
        // 2 log2(e)
        self.ins(format!("mul.rn.f32 {t}, {ax}, 0f4038AA3B"));
        self.ins(format!("ex2.approx.f32 {t}, {t}"));
        self.ins(format!("add.rn.f32 {t}, {t}, 0f3F800000"));
        self.ins(format!("rcp.approx.f32 {q}, {t}"));
        self.ins(format!("fma.rn.f32 {q}, {q}, 0fC0000000, 0f3F800000"));
        let small = self.temp(Class::Pred);
        self.ins(format!("setp.lt.f32 {small}, {ax}, 0f39800000"));
        self.ins(format!("selp.f32 {q}, {ax}, {q}, {small}"));
        // copysign(a, b): b's magnitude with a's sign.
        self.ins(format!("copysign.f32 {d}, {x}, {q}"));
    }
}
