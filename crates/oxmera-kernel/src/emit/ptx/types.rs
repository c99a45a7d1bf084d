//! The types beyond the 32-bit ones: literals, the narrow integers' wrap,
//! the halves' rounding and their 16-bit form in memory, and conversions
//! (`as`) and bit casts between every pair, each as `eval::cast` defines
//! it (Rust's `as`).

use crate::ir::{ParamId, ParamKind, Scalar, Value};

use super::{Class, EmitError, Emitter, bits, ident, suffix};

/// A literal as a PTX operand: floats by their exact bits (`0f` for `f32`
/// and the halves, which live in `f32` registers; `0d` for `f64`).
pub(super) fn literal(v: Value) -> String {
    match v {
        Value::F32(x) => format!("0f{:08X}", x.to_bits()),
        Value::F64(x) => format!("0d{:016X}", x.to_bits()),
        Value::F16(_) | Value::BF16(_) => {
            format!("0f{:08X}", v.as_f32().unwrap_or(0.0).to_bits())
        }
        Value::I32(x) => x.to_string(),
        // Outside ±2^31 the bits in hex, which PTX reads as 64-bit.
        Value::I64(x) if i32::try_from(x).is_ok() => x.to_string(),
        Value::I64(x) => format!("0x{:016X}", x as u64),
        // Masks and bit patterns read better in hex.
        Value::U32(x) if x >= 0x10000 => format!("0x{x:08X}"),
        Value::U32(x) => x.to_string(),
        Value::U64(x) if x >= 0x10000 => format!("0x{x:016X}"),
        Value::U64(x) => x.to_string(),
        Value::U8(x) => x.to_string(),
        Value::U16(x) => x.to_string(),
        Value::Bool(b) => u32::from(b).to_string(),
    }
}

/// The mask of a narrow integer's width, `None` for the others.
pub(super) fn narrow_mask(ty: Scalar) -> Option<u32> {
    match ty {
        Scalar::U8 => Some(0xFF),
        Scalar::U16 => Some(0xFFFF),
        _ => None,
    }
}

impl Emitter<'_> {
    /// A `u8`/`u16` result wrapped to its width (a no-op for other types):
    /// the register stays zero-extended, as [`Class`] requires.
    pub(super) fn wrap(&mut self, ty: Scalar, d: &str) {
        if let Some(m) = narrow_mask(ty) {
            self.ins(format!("and.b32 {d}, {d}, {m}"));
        }
    }

    /// An `f32` result rounded to the half `ty` once, to nearest even (as
    /// `half::f16_from_f32`/`bf16_from_f32` do), and widened back in
    /// place: the one rounding each half operation ends with. A no-op for
    /// other types.
    pub(super) fn round_half(&mut self, ty: Scalar, d: &str) {
        let h = match ty {
            Scalar::F16 | Scalar::BF16 => self.temp(Class::B16),
            _ => return,
        };
        if ty == Scalar::F16 {
            self.ins(format!("cvt.rn.f16.f32 {h}, {d}"));
            self.ins(format!("cvt.f32.f16 {d}, {h}"));
        } else {
            // A bf16 is the high half of the f32 with its bits: widening is
            // a shift, exact on every part (`cvt.f32.bf16` needs sm_90).
            self.ins(format!("cvt.rn.bf16.f32 {h}, {d}"));
            let w = self.temp(Class::B32);
            self.ins(format!("cvt.u32.u16 {w}, {h}"));
            self.ins(format!("shl.b32 {w}, {w}, 16"));
            self.ins(format!("mov.b32 {d}, {w}"));
        }
    }

    /// `d` (an `f32` register) = the half `ty` whose bits are the low 16 of
    /// the word `w`: exact.
    pub(super) fn widen_half(&mut self, ty: Scalar, d: &str, w: &str) {
        if ty == Scalar::F16 {
            let h = self.temp(Class::B16);
            self.ins(format!("cvt.u16.u32 {h}, {w}"));
            self.ins(format!("cvt.f32.f16 {d}, {h}"));
        } else {
            let t = self.temp(Class::B32);
            self.ins(format!("shl.b32 {t}, {w}, 16"));
            self.ins(format!("mov.b32 {d}, {t}"));
        }
    }

    /// The bits of the half `ty` held (exactly) in the `f32` register `f`,
    /// zero-extended in a fresh word.
    pub(super) fn narrow_half(&mut self, ty: Scalar, f: &str) -> String {
        let w = self.temp(Class::B32);
        if ty == Scalar::F16 {
            // Exact: the value is an f16 already.
            let h = self.temp(Class::B16);
            self.ins(format!("cvt.rn.f16.f32 {h}, {f}"));
            self.ins(format!("cvt.u32.u16 {w}, {h}"));
        } else {
            self.ins(format!("mov.b32 {w}, {f}"));
            self.ins(format!("shr.u32 {w}, {w}, 16"));
        }
        w
    }

    /// `x as to` with `eval::cast`'s semantics, `a` holding `x` (of type
    /// `from`) in a register.
    pub(super) fn convert(
        &mut self,
        from: Scalar,
        to: Scalar,
        a: &str,
    ) -> Result<String, EmitError> {
        let d = self.temp(Class::of(to));
        let float = |t: Scalar| t.is_float();
        // The float a value is computed in: a half is its f32.
        let fsuf = |t: Scalar| if t == Scalar::F64 { "f64" } else { "f32" };
        match (from, to) {
            // Rust reads a value's bits: -0.0 and NaN are true (a half's
            // sign and NaN survive its widening, so the f32's bits are
            // nonzero exactly when the half's are).
            (_, Scalar::Bool) => {
                let b = bits(from);
                let w = if float(from) {
                    let w = self.temp(if b == "b64" { Class::B64 } else { Class::B32 });
                    self.ins(format!("mov.{b} {w}, {a}"));
                    w
                } else {
                    a.to_string()
                };
                self.ins(format!("setp.ne.{b} {d}, {w}, 0"));
            }
            (Scalar::Bool, _) => {
                let (one, zero) = match to {
                    Scalar::F64 => (literal(Value::F64(1.0)), literal(Value::F64(0.0))),
                    t if float(t) => (literal(Value::F32(1.0)), literal(Value::F32(0.0))),
                    _ => ("1".to_string(), "0".to_string()),
                };
                let t = match to {
                    t if float(t) => fsuf(t),
                    t => bits(t),
                };
                self.ins(format!("selp.{t} {d}, {one}, {zero}, {a}"));
            }
            // Float to integer: `cvt.rzi` truncates, saturates to the
            // destination's range and maps NaN to 0 — Rust's `as`. PTX has
            // no 8- or 16-bit destination in a 32-bit register, so a narrow
            // one saturates to u32 first and then to its own top.
            (f, t) if float(f) && t.is_int() => match narrow_mask(t) {
                Some(m) => {
                    self.ins(format!("cvt.rzi.u32.{} {d}, {a}", fsuf(f)));
                    self.ins(format!("min.u32 {d}, {d}, {m}"));
                }
                None => self.ins(format!("cvt.rzi.{}.{} {d}, {a}", suffix(t), fsuf(f))),
            },
            // Integer to float rounds once, to nearest (from the integer's
            // own type); to a half through its f32, as eval's cast does.
            (f, t) if f.is_int() && float(t) => {
                self.ins(format!("cvt.rn.{}.{} {d}, {a}", fsuf(t), suffix(f)));
                self.round_half(t, &d);
            }
            (Scalar::F64, t) => {
                // To f32 rounds once; to a half through f32, twice, as eval.
                self.ins(format!("cvt.rn.f32.f64 {d}, {a}"));
                self.round_half(t, &d);
            }
            // f32 or a half widens to f64 exactly.
            (_, Scalar::F64) if float(from) => self.ins(format!("cvt.f64.f32 {d}, {a}")),
            (f, t) if float(f) && float(t) => {
                self.ins(format!("mov.f32 {d}, {a}"));
                self.round_half(t, &d);
            }
            // Integer to integer: extend by the source's sign, truncate.
            (f, t) if f.is_int() && t.is_int() => {
                let wide = |t: Scalar| t.bits() == 64;
                match (wide(f), wide(t)) {
                    (false, true) if f == Scalar::I32 => self.ins(format!("cvt.s64.s32 {d}, {a}")),
                    (false, true) => self.ins(format!("cvt.u64.u32 {d}, {a}")),
                    (true, true) => self.ins(format!("mov.b64 {d}, {a}")),
                    (true, false) => {
                        self.ins(format!("cvt.u32.u64 {d}, {a}"));
                        self.wrap(t, &d);
                    }
                    (false, false) => {
                        self.ins(format!("mov.b32 {d}, {a}"));
                        // Only a narrowing needs the mask: a narrow source
                        // is zero-extended already.
                        if f.bits() > t.bits() {
                            self.wrap(t, &d);
                        }
                    }
                }
            }
            (x, y) => {
                return Err(self.unsupported(&format!("`{x} as {y}`"), "no such conversion"));
            }
        }
        Ok(d)
    }

    /// `T::from_bits(x.to_bits())` between two types of one width.
    pub(super) fn bit_cast(&mut self, from: Scalar, to: Scalar, a: &str) -> String {
        if from.is_half() {
            return self.narrow_half(from, a);
        }
        let d = self.temp(Class::of(to));
        if to.is_half() {
            self.widen_half(to, &d, a);
        } else {
            self.ins(format!("mov.{} {d}, {a}", bits(to)));
        }
        d
    }
}

/// How a scalar parameter of type `t` is declared. The launcher passes
/// each scalar as its bits zero-extended to a 64-bit word and the driver
/// copies as many bytes as the declaration names: the 64-bit types take
/// all 8, the rest 4 — a `u8`, `u16` or half is read as the 32-bit word
/// holding its bits (the value, on a little-endian host), a `bool` as a
/// word that is nonzero for true.
pub(super) fn param_type(t: Scalar) -> &'static str {
    match t {
        Scalar::F32 => ".f32",
        Scalar::F64 => ".f64",
        Scalar::I64 | Scalar::U64 => ".u64",
        _ => ".u32",
    }
}

impl Emitter<'_> {
    /// Reads every parameter into its register (into `self.body`).
    pub(super) fn param_loads(&mut self) {
        for (i, p) in self.k.params.iter().enumerate() {
            let reg = self.param(i as ParamId);
            let name = ident(&p.name);
            match p.kind {
                ParamKind::Buffer { .. } => {
                    self.ins(format!("ld.param.u64 {reg}, [p_{name}]"));
                    self.ins(format!("cvta.to.global.u64 {reg}, {reg}"));
                }
                ParamKind::Scalar(Scalar::Bool) => {
                    // A word travels; the predicate is its being nonzero.
                    let w = self.temp(Class::B32);
                    self.ins(format!("ld.param.u32 {w}, [p_{name}]"));
                    self.ins(format!("setp.ne.u32 {reg}, {w}, 0"));
                }
                ParamKind::Scalar(t) if t.is_half() => {
                    let w = self.temp(Class::B32);
                    self.ins(format!("ld.param.u32 {w}, [p_{name}]"));
                    self.widen_half(t, &reg, &w);
                }
                ParamKind::Scalar(t) => {
                    let ty = &param_type(t)[1..];
                    self.ins(format!("ld.param.{ty} {reg}, [p_{name}]"));
                }
            }
        }
    }
}
