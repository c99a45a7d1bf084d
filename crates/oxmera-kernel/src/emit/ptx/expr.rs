//! Expressions: each is written into registers and names the register (or
//! the immediate) that holds its value. Where PTX's instruction and Rust's
//! operator differ, the lowering says how it makes up the difference.

use crate::ir::{BinOp, Expr, ExprKind, Mem, Scalar, ShuffleKind, UnOp, Value, VoteKind};

use super::types::{literal, narrow_mask};
use super::{Class, EmitError, Emitter, bits, suffix};

/// An element's address: its state space and the bracketed operand.
pub(super) struct Address {
    pub(super) space: &'static str,
    pub(super) operand: String,
}

impl Emitter<'_> {
    pub(super) fn expr(&mut self, e: &Expr) -> Result<String, EmitError> {
        Ok(match &e.kind {
            ExprKind::Lit(Value::Bool(b)) => {
                // Predicates have no immediates in most instructions.
                let p = self.temp(Class::Pred);
                self.ins(format!("mov.pred {p}, {}", u32::from(*b)));
                p
            }
            ExprKind::Lit(v) => literal(*v),
            ExprKind::Local(l) => self.local(*l),
            ExprKind::Param(p) => self.param(*p),
            ExprKind::Spec(s) => {
                let v = self.specs[*s as usize];
                match self.k.specs[*s as usize].ty {
                    Scalar::I32 => literal(Value::I32(v as i32)),
                    _ => literal(Value::U32(v as u32)),
                }
            }
            ExprKind::Builtin(b) => self.builtin(*b),
            ExprKind::Load { mem, index } => {
                let addr = self.address(*mem, index)?;
                self.load(*mem, &addr)
            }
            ExprKind::Unary { op, arg } => self.unary(*op, arg)?,
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs)?,
            ExprKind::Cast(arg) => self.cast(arg, e.ty)?,
            ExprKind::BitCast(arg) => {
                let a = self.expr(arg)?;
                let a = self.in_reg(arg.ty, a);
                self.bit_cast(arg.ty, e.ty, &a)
            }
            ExprKind::Math { func, args } => self.math(*func, args)?,
            ExprKind::Shuffle {
                kind,
                mask,
                value,
                arg,
            } => self.shuffle(*kind, mask, value, arg)?,
            ExprKind::Vote { kind, mask, pred } => {
                let m = self.expr(mask)?;
                let p = self.expr(pred)?;
                match kind {
                    VoteKind::Ballot => {
                        let d = self.temp(Class::B32);
                        self.ins(format!("vote.sync.ballot.b32 {d}, {p}, {m}"));
                        d
                    }
                    VoteKind::Any | VoteKind::All => {
                        let d = self.temp(Class::Pred);
                        let mode = if *kind == VoteKind::Any { "any" } else { "all" };
                        self.ins(format!("vote.sync.{mode}.pred {d}, {p}, {m}"));
                        d
                    }
                }
            }
            ExprKind::Atomic {
                op,
                mem,
                index,
                value,
                compare,
            } => self.atomic(*op, *mem, index, value, compare.as_deref())?,
        })
    }

    /// An operand in a register: an immediate is moved into a temporary
    /// (the first source of most instructions, and every `ld`/`st`/`cvt`
    /// operand, must be one).
    pub(super) fn in_reg(&mut self, ty: Scalar, v: String) -> String {
        if v.starts_with('%') {
            return v;
        }
        let t = self.temp(Class::of(ty));
        self.mov(ty, &t, &v);
        t
    }

    /// A predicate as a 0/1 word.
    pub(super) fn word(&mut self, p: &str) -> String {
        let w = self.temp(Class::B32);
        self.ins(format!("selp.u32 {w}, 1, 0, {p}"));
        w
    }

    pub(super) fn address(&mut self, mem: Mem, index: &Expr) -> Result<Address, EmitError> {
        let i = self.expr(index)?;
        let i = self.in_reg(index.ty, i);
        // Elements at their own width (a `bool` is a 32-bit word).
        let size = self.elem_of(mem).size_bytes();
        Ok(match mem {
            Mem::Global(p) => {
                // Bytes, widened with the index's sign: a negative i32 index
                // stays below the buffer rather than wrapping 4 GiB above it.
                let wide = if index.ty == Scalar::I32 {
                    "s32"
                } else {
                    "u32"
                };
                let off = self.temp(Class::B64);
                self.ins(format!("mul.wide.{wide} {off}, {i}, {size}"));
                let a = self.temp(Class::B64);
                let base = self.param(p);
                self.ins(format!("add.s64 {a}, {base}, {off}"));
                Address {
                    space: "global",
                    operand: format!("[{a}]"),
                }
            }
            Mem::Local(l) => {
                // As a buffer's: bytes widened with the index's sign.
                let wide = if index.ty == Scalar::I32 {
                    "s32"
                } else {
                    "u32"
                };
                let off = self.temp(Class::B64);
                self.ins(format!("mul.wide.{wide} {off}, {i}, {size}"));
                let a = self.temp(Class::B64);
                let base = self.local_array(l).1;
                self.ins(format!("add.s64 {a}, {base}, {off}"));
                Address {
                    space: "local",
                    operand: format!("[{a}]"),
                }
            }
            Mem::Shared(s) => {
                let a = self.temp(Class::B32);
                let base = self.shared_base(s);
                self.ins(format!("mad.lo.u32 {a}, {i}, {size}, {base}"));
                Address {
                    space: "shared",
                    operand: format!("[{a}]"),
                }
            }
        })
    }

    /// `.volatile` for a memory an atomic also touches, so that a plain
    /// read of it is made each time the source makes it.
    pub(super) fn qualifier(&self, mem: Mem) -> &'static str {
        if self.survey.atomic.contains(&mem) {
            ".volatile"
        } else {
            ""
        }
    }

    fn load(&mut self, mem: Mem, addr: &Address) -> String {
        let (q, space, a) = (self.qualifier(mem), addr.space, &addr.operand);
        match self.elem_of(mem) {
            Scalar::Bool => {
                let w = self.temp(Class::B32);
                self.ins(format!("ld{q}.{space}.u32 {w}, {a}"));
                let p = self.temp(Class::Pred);
                self.ins(format!("setp.ne.u32 {p}, {w}, 0"));
                p
            }
            // Zero-extended into the 32-bit register.
            Scalar::U8 | Scalar::U16 => {
                let d = self.temp(Class::B32);
                let t = if self.elem_of(mem) == Scalar::U8 {
                    "u8"
                } else {
                    "u16"
                };
                self.ins(format!("ld{q}.{space}.{t} {d}, {a}"));
                d
            }
            ty if ty.is_half() => {
                let w = self.temp(Class::B32);
                self.ins(format!("ld{q}.{space}.u16 {w}, {a}"));
                let d = self.temp(Class::F32);
                self.widen_half(ty, &d, &w);
                d
            }
            ty => {
                let d = self.temp(Class::of(ty));
                self.ins(format!("ld{q}.{space}.{} {d}, {a}", suffix(ty)));
                d
            }
        }
    }

    pub(super) fn store(&mut self, mem: Mem, addr: &Address, ty: Scalar, v: &str) {
        let (q, space, a) = (self.qualifier(mem), addr.space, addr.operand.clone());
        if ty == Scalar::Bool {
            let w = self.word(v);
            self.ins(format!("st{q}.{space}.u32 {a}, {w}"));
        } else if ty.is_half() {
            let v = self.in_reg(ty, v.to_string());
            let w = self.narrow_half(ty, &v);
            self.ins(format!("st{q}.{space}.u16 {a}, {w}"));
        } else if let Some(m) = narrow_mask(ty) {
            // The low byte or half-word of the register.
            let t = if m == 0xFF { "u8" } else { "u16" };
            let v = self.in_reg(ty, v.to_string());
            self.ins(format!("st{q}.{space}.{t} {a}, {v}"));
        } else {
            let v = self.in_reg(ty, v.to_string());
            self.ins(format!("st{q}.{space}.{} {a}, {v}", suffix(ty)));
        }
    }

    fn unary(&mut self, op: UnOp, arg: &Expr) -> Result<String, EmitError> {
        let a = self.expr(arg)?;
        let a = self.in_reg(arg.ty, a);
        let d = self.temp(Class::of(arg.ty));
        let ty = arg.ty;
        match (op, ty) {
            // The sign bit, flipped: Rust's `-x`, NaN payload and all (a
            // half's sign is its f32's, so this is exact for halves too).
            (UnOp::Neg, Scalar::F64) => self.on_bits(&d, &a, "xor.b64", "0x8000000000000000"),
            (UnOp::Neg, t) if t.is_float() => self.on_bits(&d, &a, "xor.b32", "0x80000000"),
            (UnOp::Neg, t) => self.ins(format!("neg.{} {d}, {a}", suffix(t))),
            (UnOp::Not, Scalar::Bool) => self.ins(format!("not.pred {d}, {a}")),
            (UnOp::Not, t) => {
                self.ins(format!("not.{} {d}, {a}", bits(t)));
                self.wrap(t, &d);
            }
        }
        Ok(d)
    }

    /// `d = f32::from_bits(op(a.to_bits(), mask))` (`f64` where `op` is a
    /// `.b64` one).
    pub(super) fn on_bits(&mut self, d: &str, a: &str, op: &str, mask: &str) {
        let (class, b) = if op.ends_with("b64") {
            (Class::B64, "b64")
        } else {
            (Class::B32, "b32")
        };
        let w = self.temp(class);
        self.ins(format!("mov.{b} {w}, {a}"));
        self.ins(format!("{op} {w}, {w}, {mask}"));
        self.ins(format!("mov.{b} {d}, {w}"));
    }

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Result<String, EmitError> {
        if matches!(op, BinOp::And | BinOp::Or) {
            return self.short_circuit(op, lhs, rhs);
        }
        let ty = lhs.ty;
        let a = self.expr(lhs)?;
        let a = self.in_reg(ty, a);
        let b = self.expr(rhs)?;
        if op.is_comparison() {
            let p = self.temp(Class::Pred);
            // A half compares as its f32 (exact); a narrow integer as its
            // zero-extended u32.
            let (a, b, t) = if ty == Scalar::Bool {
                // false < true, as Rust orders bools.
                (self.word(&a), self.word(&b), "u32")
            } else {
                (a, b, suffix(ty))
            };
            let cmp = match op {
                BinOp::Eq => "eq",
                // Rust's `!=` is true when either side is NaN: unordered.
                BinOp::Ne if ty.is_float() => "neu",
                BinOp::Ne => "ne",
                BinOp::Lt => "lt",
                BinOp::Le => "le",
                BinOp::Gt => "gt",
                _ => "ge",
            };
            self.ins(format!("setp.{cmp}.{t} {p}, {a}, {b}"));
            return Ok(p);
        }
        let d = self.temp(Class::of(ty));
        let s = suffix(ty);
        match (op, ty) {
            (BinOp::BitAnd, Scalar::Bool) => self.ins(format!("and.pred {d}, {a}, {b}")),
            (BinOp::BitOr, Scalar::Bool) => self.ins(format!("or.pred {d}, {a}, {b}")),
            (BinOp::BitXor, Scalar::Bool) => self.ins(format!("xor.pred {d}, {a}, {b}")),
            // `.rn` spelled out: IEEE round-to-nearest, and no contraction
            // into a fused multiply-add the source did not write. A half is
            // the f32 operation rounded once to the half.
            (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, t) if t.is_float() => {
                let name = match op {
                    BinOp::Add => "add",
                    BinOp::Sub => "sub",
                    BinOp::Mul => "mul",
                    _ => "div",
                };
                self.ins(format!("{name}.rn.{s} {d}, {a}, {b}"));
                self.round_half(ty, &d);
            }
            (BinOp::Rem, t) if t.is_float() => {
                let b = self.in_reg(ty, b);
                self.float_rem(s, &d, &a, &b);
                self.round_half(ty, &d);
            }
            (BinOp::Add, _) => {
                self.ins(format!("add.{s} {d}, {a}, {b}"));
                self.wrap(ty, &d);
            }
            (BinOp::Sub, _) => {
                self.ins(format!("sub.{s} {d}, {a}, {b}"));
                self.wrap(ty, &d);
            }
            (BinOp::Mul, _) => {
                self.ins(format!("mul.lo.{s} {d}, {a}, {b}"));
                self.wrap(ty, &d);
            }
            // A literal divisor other than -1 cannot overflow: no guard.
            (BinOp::Div | BinOp::Rem, Scalar::I32 | Scalar::I64)
                if matches!(rhs.kind, ExprKind::Lit(Value::I32(v)) if v != -1)
                    || matches!(rhs.kind, ExprKind::Lit(Value::I64(v)) if v != -1) =>
            {
                let name = if op == BinOp::Div { "div" } else { "rem" };
                self.ins(format!("{name}.{s} {d}, {a}, {b}"));
            }
            (BinOp::Div | BinOp::Rem, Scalar::I32 | Scalar::I64) => {
                let b = self.in_reg(ty, b);
                self.signed_div(op, s, &d, &a, &b);
            }
            // Unsigned: no overflow (a narrow quotient or remainder is at
            // most its dividend). Division by zero is reported by the
            // simulator and eval; PTX leaves its value unspecified.
            (BinOp::Div, _) => self.ins(format!("div.{s} {d}, {a}, {b}")),
            (BinOp::Rem, _) => self.ins(format!("rem.{s} {d}, {a}, {b}")),
            (BinOp::BitAnd, _) => self.ins(format!("and.{} {d}, {a}, {b}", bits(ty))),
            (BinOp::BitOr, _) => self.ins(format!("or.{} {d}, {a}, {b}", bits(ty))),
            (BinOp::BitXor, _) => self.ins(format!("xor.{} {d}, {a}, {b}", bits(ty))),
            (BinOp::Shl | BinOp::Shr, _) => {
                // Rust's wrapping shifts take the amount (read as u32)
                // modulo the width; PTX clamps it instead, so the mask is
                // explicit. The amount is a u32 operand at every width.
                let width = ty.bits();
                let amount = match &rhs.kind {
                    ExprKind::Lit(v) => ((v.to_bits() as u32) & (width - 1)).to_string(),
                    _ => {
                        let b = self.in_reg(rhs.ty, b);
                        let b = if rhs.ty.bits() == 64 {
                            let t = self.temp(Class::B32);
                            self.ins(format!("cvt.u32.u64 {t}, {b}"));
                            t
                        } else {
                            b
                        };
                        let m = self.temp(Class::B32);
                        self.ins(format!("and.b32 {m}, {b}, {}", width - 1));
                        m
                    }
                };
                let w = if width == 64 { 64 } else { 32 };
                let kind = match (op, ty) {
                    (BinOp::Shl, _) => format!("shl.b{w}"),
                    (_, Scalar::I32 | Scalar::I64) => format!("shr.s{w}"),
                    _ => format!("shr.u{w}"),
                };
                self.ins(format!("{kind} {d}, {a}, {amount}"));
                self.wrap(ty, &d);
            }
            _ => {
                return Err(self.unsupported(
                    &format!("`{}` on {ty}", op.symbol()),
                    "the IR validator should have refused it",
                ));
            }
        }
        Ok(d)
    }

    /// Signed `/` and `%` as Rust's `wrapping_div`/`wrapping_rem` (eval's
    /// definition): `MIN / -1` is `MIN` and `MIN % -1` is 0, where PTX
    /// leaves the overflow unspecified. A divisor of -1 is replaced by 1
    /// and the quotient negated (wrapping): `x / -1 = -x`, `x % -1 = 0` for
    /// every `x`. Division by zero is reported by the simulator and eval;
    /// PTX leaves its value unspecified.
    fn signed_div(&mut self, op: BinOp, s: &str, d: &str, a: &str, b: &str) {
        let c = if s == "s64" { Class::B64 } else { Class::B32 };
        let minus_one = self.temp(Class::Pred);
        let divisor = self.temp(c);
        self.ins(format!("setp.eq.{s} {minus_one}, {b}, -1"));
        self.ins(format!("selp.{s} {divisor}, 1, {b}, {minus_one}"));
        if op == BinOp::Rem {
            self.ins(format!("rem.{s} {d}, {a}, {divisor}"));
            return;
        }
        let (q, n) = (self.temp(c), self.temp(c));
        self.ins(format!("div.{s} {q}, {a}, {divisor}"));
        self.ins(format!("neg.{s} {n}, {q}"));
        self.ins(format!("selp.{s} {d}, {n}, {q}, {minus_one}"));
    }

    /// `a % b` for a float (`t`: `f32` or `f64`) as `a - trunc(a / b) * b`.
    /// The quotient is divided toward zero (`div.rz`): below 2^24 (2^53
    /// for f64) every integer is a float of the type, so rounding toward
    /// zero cannot cross one and its truncation is exactly `trunc(a / b)`
    /// (to nearest, 3.0000002 / 1.0000001 rounds up to 3 and the remainder
    /// comes out negative); the fused step then computes the remainder
    /// exactly, and it takes `a`'s sign, zero included, as Rust's. Exact
    /// while the quotient is below 2^24 (2^53); beyond it the quotient has
    /// lost its units and the result is not Rust's (the simulator's `%` is
    /// exact everywhere). An infinite divisor of a finite dividend leaves
    /// the dividend, as Rust's does.
    fn float_rem(&mut self, t: &str, d: &str, a: &str, b: &str) {
        let q = self.temp(if t == "f64" { Class::F64 } else { Class::F32 });
        self.ins(format!("div.rz.{t} {q}, {a}, {b}"));
        self.ins(format!("cvt.rzi.{t}.{t} {q}, {q}"));
        self.ins(format!("neg.{t} {q}, {q}"));
        self.ins(format!("fma.rn.{t} {d}, {q}, {b}, {a}"));
        // copysign(a, r): r's magnitude with a's sign.
        self.ins(format!("copysign.{t} {d}, {a}, {d}"));
        let (inf, fin) = (self.temp(Class::Pred), self.temp(Class::Pred));
        self.ins(format!("testp.infinite.{t} {inf}, {b}"));
        self.ins(format!("testp.finite.{t} {fin}, {a}"));
        self.ins(format!("and.pred {inf}, {inf}, {fin}"));
        self.ins(format!("selp.{t} {d}, {a}, {d}, {inf}"));
    }

    /// `&&` and `||` evaluate their right side only where the left does not
    /// decide: `i < n && x[i] > 0` must not load past the end.
    fn short_circuit(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Result<String, EmitError> {
        let a = self.expr(lhs)?;
        let r = self.temp(Class::Pred);
        self.ins(format!("mov.pred {r}, {a}"));
        let n = self.label();
        let (skip, guard) = if op == BinOp::And {
            (format!("$L{n}_and_done"), format!("@!{a}"))
        } else {
            (format!("$L{n}_or_done"), format!("@{a}"))
        };
        self.ins(format!("{guard} bra {skip}"));
        let b = self.expr(rhs)?;
        self.ins(format!("mov.pred {r}, {b}"));
        self.place(&skip);
        Ok(r)
    }

    fn cast(&mut self, arg: &Expr, to: Scalar) -> Result<String, EmitError> {
        let a = self.expr(arg)?;
        let from = arg.ty;
        if from == to {
            return Ok(a);
        }
        let a = self.in_reg(from, a);
        self.convert(from, to, &a)
    }

    fn shuffle(
        &mut self,
        kind: ShuffleKind,
        mask: &Expr,
        value: &Expr,
        arg: &Expr,
    ) -> Result<String, EmitError> {
        let m = self.expr(mask)?;
        let v = self.expr(value)?;
        let v = if value.ty == Scalar::Bool {
            self.word(&v)
        } else {
            self.in_reg(value.ty, v)
        };
        let a = self.expr(arg)?;
        let a = self.in_reg(arg.ty, a);
        // The source lane as the simulator picks it: XOR and index wrap
        // within the warp; up and down past an end keep the lane's own value,
        // which PTX does for offsets below 32 but not for larger ones (it
        // reads the low 5 bits), so the offset is clamped to 32 (read as 0).
        let o = self.temp(Class::B32);
        let (mode, clamp) = match kind {
            ShuffleKind::Xor => ("bfly", 31),
            ShuffleKind::Idx => ("idx", 31),
            ShuffleKind::Down => ("down", 31),
            ShuffleKind::Up => ("up", 0),
        };
        if matches!(kind, ShuffleKind::Xor | ShuffleKind::Idx) {
            self.ins(format!("and.b32 {o}, {a}, 31"));
        } else {
            self.ins(format!("min.u32 {o}, {a}, 32"));
        }
        if value.ty.bits() == 64 {
            // Two 32-bit shuffles from the same lane, the halves rejoined.
            let (lo, hi) = (self.temp(Class::B32), self.temp(Class::B32));
            self.ins(format!("mov.b64 {{{lo}, {hi}}}, {v}"));
            self.ins(format!(
                "shfl.sync.{mode}.b32 {lo}, {lo}, {o}, {clamp}, {m}"
            ));
            self.ins(format!(
                "shfl.sync.{mode}.b32 {hi}, {hi}, {o}, {clamp}, {m}"
            ));
            let d = self.temp(Class::of(value.ty));
            self.ins(format!("mov.b64 {d}, {{{lo}, {hi}}}"));
            return Ok(d);
        }
        let class = match value.ty {
            Scalar::Bool => Class::B32,
            t => Class::of(t),
        };
        let d = self.temp(class);
        self.ins(format!("shfl.sync.{mode}.b32 {d}, {v}, {o}, {clamp}, {m}"));
        if value.ty == Scalar::Bool {
            let p = self.temp(Class::Pred);
            self.ins(format!("setp.ne.u32 {p}, {d}, 0"));
            return Ok(p);
        }
        Ok(d)
    }
}
