//! Expressions: each is written into registers and names the register (or
//! the immediate) that holds its value. Where PTX's instruction and Rust's
//! operator differ, the lowering says how it makes up the difference.

use crate::ir::{
    AtomicOp, BinOp, Expr, ExprKind, MathFn, Mem, Scalar, ShuffleKind, UnOp, Value, VoteKind,
};

use super::{Class, EmitError, Emitter, suffix};

/// `log2(e)` and `ln(2)` as f32 bits, for `exp` and `ln` through base 2.
const LOG2_E: &str = "0f3FB8AA3B";
const LN_2: &str = "0f3F317218";

/// An element's address: its state space and the bracketed operand.
pub(super) struct Address {
    space: &'static str,
    operand: String,
}

/// A literal as a PTX operand (`f32` by its exact bits).
fn literal(v: Value) -> String {
    match v {
        Value::F32(x) => format!("0f{:08X}", x.to_bits()),
        Value::I32(x) => x.to_string(),
        // Masks and bit patterns read better in hex.
        Value::U32(x) if x >= 0x10000 => format!("0x{x:08X}"),
        Value::U32(x) => x.to_string(),
        Value::Bool(b) => u32::from(b).to_string(),
        other => unreachable!("`ptx` refuses {} before emitting", other.ty()),
    }
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
                let d = self.temp(Class::of(e.ty));
                self.ins(format!("mov.b32 {d}, {a}"));
                d
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
    fn in_reg(&mut self, ty: Scalar, v: String) -> String {
        if v.starts_with('%') {
            return v;
        }
        let t = self.temp(Class::of(ty));
        self.mov(ty, &t, &v);
        t
    }

    /// A predicate as a 0/1 word.
    fn word(&mut self, p: &str) -> String {
        let w = self.temp(Class::B32);
        self.ins(format!("selp.u32 {w}, 1, 0, {p}"));
        w
    }

    pub(super) fn address(&mut self, mem: Mem, index: &Expr) -> Result<Address, EmitError> {
        let i = self.expr(index)?;
        let i = self.in_reg(index.ty, i);
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
                self.ins(format!("mul.wide.{wide} {off}, {i}, 4"));
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
                self.ins(format!("mul.wide.{wide} {off}, {i}, 4"));
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
                self.ins(format!("mad.lo.u32 {a}, {i}, 4, {base}"));
                Address {
                    space: "shared",
                    operand: format!("[{a}]"),
                }
            }
        })
    }

    /// `.volatile` for a memory an atomic also touches, so that a plain
    /// read of it is made each time the source makes it.
    fn qualifier(&self, mem: Mem) -> &'static str {
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
        } else {
            let v = self.in_reg(ty, v.to_string());
            self.ins(format!("st{q}.{space}.{} {a}, {v}", suffix(ty)));
        }
    }

    fn unary(&mut self, op: UnOp, arg: &Expr) -> Result<String, EmitError> {
        let a = self.expr(arg)?;
        let a = self.in_reg(arg.ty, a);
        let d = self.temp(Class::of(arg.ty));
        match (op, arg.ty) {
            // The sign bit, flipped: Rust's `-x`, NaN payload and all.
            (UnOp::Neg, Scalar::F32) => self.on_bits(&d, &a, "xor.b32", "0x80000000"),
            (UnOp::Neg, _) => self.ins(format!("neg.s32 {d}, {a}")),
            (UnOp::Not, Scalar::Bool) => self.ins(format!("not.pred {d}, {a}")),
            (UnOp::Not, _) => self.ins(format!("not.b32 {d}, {a}")),
        }
        Ok(d)
    }

    /// `d = f32::from_bits(op(a.to_bits(), mask))`.
    fn on_bits(&mut self, d: &str, a: &str, op: &str, mask: &str) {
        let w = self.temp(Class::B32);
        self.ins(format!("mov.b32 {w}, {a}"));
        self.ins(format!("{op} {w}, {w}, {mask}"));
        self.ins(format!("mov.b32 {d}, {w}"));
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
            let (a, b, t) = if ty == Scalar::Bool {
                // false < true, as Rust orders bools.
                (self.word(&a), self.word(&b), "u32")
            } else {
                (a, b, suffix(ty))
            };
            let cmp = match op {
                BinOp::Eq => "eq",
                // Rust's `!=` is true when either side is NaN: unordered.
                BinOp::Ne if ty == Scalar::F32 => "neu",
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
            // into a fused multiply-add the source did not write.
            (BinOp::Add, Scalar::F32) => self.ins(format!("add.rn.f32 {d}, {a}, {b}")),
            (BinOp::Sub, Scalar::F32) => self.ins(format!("sub.rn.f32 {d}, {a}, {b}")),
            (BinOp::Mul, Scalar::F32) => self.ins(format!("mul.rn.f32 {d}, {a}, {b}")),
            (BinOp::Div, Scalar::F32) => self.ins(format!("div.rn.f32 {d}, {a}, {b}")),
            (BinOp::Rem, Scalar::F32) => {
                let b = self.in_reg(ty, b);
                self.float_rem(&d, &a, &b);
            }
            (BinOp::Add, _) => self.ins(format!("add.{s} {d}, {a}, {b}")),
            (BinOp::Sub, _) => self.ins(format!("sub.{s} {d}, {a}, {b}")),
            (BinOp::Mul, _) => self.ins(format!("mul.lo.{s} {d}, {a}, {b}")),
            (BinOp::Div, _) => self.ins(format!("div.{s} {d}, {a}, {b}")),
            (BinOp::Rem, _) => self.ins(format!("rem.{s} {d}, {a}, {b}")),
            (BinOp::BitAnd, _) => self.ins(format!("and.b32 {d}, {a}, {b}")),
            (BinOp::BitOr, _) => self.ins(format!("or.b32 {d}, {a}, {b}")),
            (BinOp::BitXor, _) => self.ins(format!("xor.b32 {d}, {a}, {b}")),
            (BinOp::Shl | BinOp::Shr, _) => {
                // Rust's wrapping shifts take the amount modulo 32; PTX
                // clamps it instead, so the mask is explicit.
                let amount = match &rhs.kind {
                    ExprKind::Lit(v) => (v.to_bits() & 31).to_string(),
                    _ => {
                        let m = self.temp(Class::B32);
                        let b = self.in_reg(rhs.ty, b);
                        self.ins(format!("and.b32 {m}, {b}, 31"));
                        m
                    }
                };
                let kind = match (op, ty) {
                    (BinOp::Shl, _) => "shl.b32",
                    (_, Scalar::I32) => "shr.s32",
                    _ => "shr.u32",
                };
                self.ins(format!("{kind} {d}, {a}, {amount}"));
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

    /// `a % b` for f32 as `a - trunc(a / b) * b`. The quotient is divided
    /// toward zero (`div.rz`): below 2^24 every integer is an f32, so
    /// rounding toward zero cannot cross one and its truncation is exactly
    /// `trunc(a / b)` (to nearest, 3.0000002 / 1.0000001 rounds up to 3 and
    /// the remainder comes out negative); the fused step then computes the
    /// remainder exactly, and it takes `a`'s sign, zero included, as Rust's.
    /// Exact while the quotient is below 2^24; beyond it the quotient has
    /// lost its units and the result is not Rust's (the simulator's `%` is
    /// exact everywhere). An infinite divisor of a finite dividend leaves
    /// the dividend, as Rust's does.
    fn float_rem(&mut self, d: &str, a: &str, b: &str) {
        let q = self.temp(Class::F32);
        self.ins(format!("div.rz.f32 {q}, {a}, {b}"));
        self.ins(format!("cvt.rzi.f32.f32 {q}, {q}"));
        self.ins(format!("neg.f32 {q}, {q}"));
        self.ins(format!("fma.rn.f32 {d}, {q}, {b}, {a}"));
        // copysign(a, r): r's magnitude with a's sign.
        self.ins(format!("copysign.f32 {d}, {a}, {d}"));
        let (inf, fin) = (self.temp(Class::Pred), self.temp(Class::Pred));
        self.ins(format!("testp.infinite.f32 {inf}, {b}"));
        self.ins(format!("testp.finite.f32 {fin}, {a}"));
        self.ins(format!("and.pred {inf}, {inf}, {fin}"));
        self.ins(format!("selp.f32 {d}, {a}, {d}, {inf}"));
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
        let d = self.temp(Class::of(to));
        match (from, to) {
            // cvt.rzi saturates and maps NaN to 0: Rust's `as`.
            (Scalar::F32, Scalar::I32 | Scalar::U32) => {
                self.ins(format!("cvt.rzi.{}.f32 {d}, {a}", suffix(to)))
            }
            (Scalar::I32 | Scalar::U32, Scalar::F32) => {
                self.ins(format!("cvt.rn.f32.{} {d}, {a}", suffix(from)))
            }
            (Scalar::I32 | Scalar::U32, Scalar::I32 | Scalar::U32) => {
                self.ins(format!("mov.b32 {d}, {a}"))
            }
            // Rust reads a value's bits: -0.0 and NaN are true.
            (Scalar::F32, Scalar::Bool) => {
                let w = self.temp(Class::B32);
                self.ins(format!("mov.b32 {w}, {a}"));
                self.ins(format!("setp.ne.b32 {d}, {w}, 0"));
            }
            (_, Scalar::Bool) => self.ins(format!("setp.ne.b32 {d}, {a}, 0")),
            (Scalar::Bool, Scalar::F32) => {
                self.ins(format!("selp.f32 {d}, 0f3F800000, 0f00000000, {a}"))
            }
            (Scalar::Bool, _) => self.ins(format!("selp.b32 {d}, 1, 0, {a}")),
            (x, y) => {
                return Err(self.unsupported(&format!("`{x} as {y}`"), "no such conversion"));
            }
        }
        Ok(d)
    }

    fn math(&mut self, f: MathFn, args: &[Expr]) -> Result<String, EmitError> {
        let mut a = Vec::with_capacity(args.len());
        for x in args {
            let v = self.expr(x)?;
            a.push(self.in_reg(x.ty, v));
        }
        let ty = args.first().map(|x| x.ty).unwrap_or(Scalar::F32);
        // Bit counts are u32 whatever the argument; the rest keep its type.
        let d = self.temp(Class::of(ty));
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
            MathFn::Abs if ty == Scalar::F32 => self.on_bits(&d, &a[0], "and.b32", "0x7FFFFFFF"),
            MathFn::Abs => self.ins(format!("abs.s32 {d}, {}", a[0])),
            // PTX's min/max return the other operand of a NaN, as f32::min.
            MathFn::Min => self.ins(format!("min.{} {d}, {}, {}", suffix(ty), a[0], a[1])),
            MathFn::Max => self.ins(format!("max.{} {d}, {}, {}", suffix(ty), a[0], a[1])),
            MathFn::Floor => self.ins(format!("cvt.rmi.f32.f32 {d}, {}", a[0])),
            MathFn::Sin => self.ins(format!("sin.approx.f32 {d}, {}", a[0])),
            MathFn::Cos => self.ins(format!("cos.approx.f32 {d}, {}", a[0])),
            MathFn::Exp2 => self.ins(format!("ex2.approx.f32 {d}, {}", a[0])),
            MathFn::Log2 => self.ins(format!("lg2.approx.f32 {d}, {}", a[0])),
            MathFn::CountOnes => self.ins(format!("popc.b32 {d}, {}", a[0])),
            MathFn::LeadingZeros => self.ins(format!("clz.b32 {d}, {}", a[0])),
            // The lowest set bit is the highest of the reversed word; clz of
            // 0 is 32, as Rust's trailing_zeros of 0.
            MathFn::TrailingZeros => {
                let r = self.temp(Class::B32);
                self.ins(format!("brev.b32 {r}, {}", a[0]));
                self.ins(format!("clz.b32 {d}, {r}"));
            }
            MathFn::Ceil => self.ins(format!("cvt.rpi.f32.f32 {d}, {}", a[0])),
            MathFn::Tanh if (self.cc.major, self.cc.minor) >= (7, 5) => {
                self.ins(format!("tanh.approx.f32 {d}, {}", a[0]))
            }
            MathFn::Tanh => self.tanh_by_exp(&d, &a[0]),
            MathFn::Pow => self.pow(&d, &a[0], &a[1]),
            MathFn::Erf => self.erf(&d, &a[0]),
        }
        Ok(d)
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
        let class = if value.ty == Scalar::F32 {
            Class::F32
        } else {
            Class::B32
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

    /// `f32` atomic min/max as a compare-and-swap loop on the bits: PTX's
    /// `min.f32` returns the other operand of a NaN, as `f32::min` does.
    /// `d` ends holding the value replaced.
    fn float_min_max_loop(&mut self, f: &str, d: &str, space: &str, a: &str, v: &str) {
        let n = self.label();
        let retry = format!("$L{n}_retry");
        let (old, new) = (self.temp(Class::B32), self.temp(Class::F32));
        let (want, seen) = (self.temp(Class::B32), self.temp(Class::B32));
        let lost = self.temp(Class::Pred);
        self.ins(format!("ld.volatile.{space}.b32 {old}, {a}"));
        self.place(&retry);
        self.ins(format!("mov.b32 {d}, {old}"));
        self.ins(format!("{f}.f32 {new}, {d}, {v}"));
        self.ins(format!("mov.b32 {want}, {new}"));
        self.ins(format!("atom.{space}.cas.b32 {seen}, {a}, {old}, {want}"));
        self.ins(format!("setp.ne.b32 {lost}, {seen}, {old}"));
        self.ins(format!("mov.b32 {old}, {seen}"));
        self.ins(format!("@{lost} bra {retry}"));
    }

    fn atomic(
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
        match op {
            AtomicOp::Add => self.ins(format!("atom.{space}.add.{t} {d}, {a}, {v}")),
            // PTX has no atomic subtract: add the negation (wrapping, as Rust's).
            AtomicOp::Sub => {
                let n = self.temp(Class::B32);
                self.ins(format!("neg.s32 {n}, {v}"));
                self.ins(format!("atom.{space}.add.{t} {d}, {a}, {n}"));
            }
            AtomicOp::And => self.ins(format!("atom.{space}.and.b32 {d}, {a}, {v}")),
            AtomicOp::Or => self.ins(format!("atom.{space}.or.b32 {d}, {a}, {v}")),
            AtomicOp::Xor => self.ins(format!("atom.{space}.xor.b32 {d}, {a}, {v}")),
            // CUDA's atomicInc is PTX's atom.inc: 0 once old >= v.
            AtomicOp::Inc => self.ins(format!("atom.{space}.inc.u32 {d}, {a}, {v}")),
            AtomicOp::Min | AtomicOp::Max if elem == Scalar::F32 => {
                let f = if op == AtomicOp::Min { "min" } else { "max" };
                self.float_min_max_loop(f, &d, space, a, &v);
            }
            AtomicOp::Min => self.ins(format!("atom.{space}.min.{t} {d}, {a}, {v}")),
            AtomicOp::Max => self.ins(format!("atom.{space}.max.{t} {d}, {a}, {v}")),
            AtomicOp::Exch => self.ins(format!("atom.{space}.exch.b32 {d}, {a}, {v}")),
            AtomicOp::Cas => {
                let Some(c) = expected else {
                    return Err(self.unsupported(
                        "`atomic_cas` without an expected value",
                        "the IR validator should have refused it",
                    ));
                };
                self.ins(format!("atom.{space}.cas.b32 {d}, {a}, {c}, {v}"));
            }
        }
        Ok(d)
    }
}
