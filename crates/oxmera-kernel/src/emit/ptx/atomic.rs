//! Atomics: PTX's `atom` on 32- and 64-bit elements (the IR has none on
//! narrower ones), with the operations PTX lacks written as the simulator
//! defines them: subtract as an add of the negation, float min/max as a
//! compare-and-swap loop.

use crate::ir::{AtomicOp, Expr, Mem, Scalar};

use super::{Class, EmitError, Emitter, suffix};

impl Emitter<'_> {
    /// A float atomic min/max as a compare-and-swap loop on the bits:
    /// PTX's `min.f32`/`min.f64` return the other operand of a NaN, as
    /// `f32::min` does. `d` ends holding the value replaced.
    fn float_min_max_loop(
        &mut self,
        f: &str,
        elem: Scalar,
        d: &str,
        space: &str,
        a: &str,
        v: &str,
    ) {
        let (w, bits, ft) = if elem == Scalar::F64 {
            (Class::B64, "b64", "f64")
        } else {
            (Class::B32, "b32", "f32")
        };
        let n = self.label();
        let retry = format!("$L{n}_retry");
        let (old, new) = (self.temp(w), self.temp(Class::of(elem)));
        let (want, seen) = (self.temp(w), self.temp(w));
        let lost = self.temp(Class::Pred);
        self.ins(format!("ld.volatile.{space}.{bits} {old}, {a}"));
        self.place(&retry);
        self.ins(format!("mov.{bits} {d}, {old}"));
        self.ins(format!("{f}.{ft} {new}, {d}, {v}"));
        self.ins(format!("mov.{bits} {want}, {new}"));
        self.ins(format!(
            "atom.{space}.cas.{bits} {seen}, {a}, {old}, {want}"
        ));
        self.ins(format!("setp.ne.{bits} {lost}, {seen}, {old}"));
        self.ins(format!("mov.{bits} {old}, {seen}"));
        self.ins(format!("@{lost} bra {retry}"));
    }

    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        mem: Mem,
        index: &Expr,
        value: &Expr,
        compare: Option<&Expr>,
    ) -> Result<String, EmitError> {
        let elem = self.elem_of(mem);
        if elem == Scalar::Bool {
            return Err(self.unsupported(
                &format!("an atomic on the bool memory `{}`", self.k.mem_name(mem)),
                "atomics hold 32-bit numbers; use a u32 memory",
            ));
        }
        if !op.accepts(elem) {
            return Err(self.unsupported(
                &format!("`{}` on {elem}", op.name()),
                "the IR validator should have refused it",
            ));
        }
        let wide = elem.bits() == 64;
        // PTX ISA, `atom`: `.add.f64` requires sm_60 (the 64-bit integer
        // operations exist from sm_32, below every part oxmera targets).
        if elem == Scalar::F64 && op == AtomicOp::Add && self.cc.major < 6 {
            return Err(self.unsupported("`atomic_add` on f64", "`atom.add.f64` needs sm_60"));
        }
        let addr = self.address(mem, index)?;
        // The simulator's order: the index, the expected value, the value.
        let expected = match compare {
            Some(c) => {
                let c = self.expr(c)?;
                Some(self.in_reg(elem, c))
            }
            None => None,
        };
        let v = self.expr(value)?;
        let v = self.in_reg(value.ty, v);
        let d = self.temp(Class::of(elem));
        let (space, a) = (addr.space, &addr.operand);
        let t = suffix(elem);
        let (b, int) = if wide { ("b64", "u64") } else { ("b32", "u32") };
        match op {
            // `atom.add` has no `.s64`: two's complement makes `.u64` the
            // same operation.
            AtomicOp::Add if elem == Scalar::I64 => {
                self.ins(format!("atom.{space}.add.u64 {d}, {a}, {v}"))
            }
            AtomicOp::Add => self.ins(format!("atom.{space}.add.{t} {d}, {a}, {v}")),
            // PTX has no atomic subtract: add the negation (wrapping, as Rust's).
            AtomicOp::Sub => {
                let n = self.temp(if wide { Class::B64 } else { Class::B32 });
                let s = if wide { "s64" } else { "s32" };
                self.ins(format!("neg.{s} {n}, {v}"));
                self.ins(format!("atom.{space}.add.{int} {d}, {a}, {n}"));
            }
            AtomicOp::And => self.ins(format!("atom.{space}.and.{b} {d}, {a}, {v}")),
            AtomicOp::Or => self.ins(format!("atom.{space}.or.{b} {d}, {a}, {v}")),
            AtomicOp::Xor => self.ins(format!("atom.{space}.xor.{b} {d}, {a}, {v}")),
            // CUDA's atomicInc is PTX's atom.inc: 0 once old >= v.
            AtomicOp::Inc => self.ins(format!("atom.{space}.inc.u32 {d}, {a}, {v}")),
            AtomicOp::Min | AtomicOp::Max if elem.is_float() => {
                let f = if op == AtomicOp::Min { "min" } else { "max" };
                self.float_min_max_loop(f, elem, &d, space, a, &v);
            }
            AtomicOp::Min => self.ins(format!("atom.{space}.min.{t} {d}, {a}, {v}")),
            AtomicOp::Max => self.ins(format!("atom.{space}.max.{t} {d}, {a}, {v}")),
            AtomicOp::Exch => self.ins(format!("atom.{space}.exch.{b} {d}, {a}, {v}")),
            AtomicOp::Cas => {
                let Some(c) = expected else {
                    return Err(self.unsupported(
                        "`atomic_cas` without an expected value",
                        "the IR validator should have refused it",
                    ));
                };
                self.ins(format!("atom.{space}.cas.{b} {d}, {a}, {c}, {v}"));
            }
        }
        Ok(d)
    }
}
