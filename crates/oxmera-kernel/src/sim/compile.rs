//! Compiles the structured IR to a warp-wide register bytecode.
//!
//! Every local and every temporary is a register holding 32 lanes of 64
//! bits: each lane holds its value's bit pattern, zero-extended (an `f16`
//! in the low 16 bits, an `i32` in the low 32, not sign-extended). Pure
//! operations compute all 32 lanes (cheap, vectorizable, and harmless for
//! inactive lanes because temporaries are never read by them); writes to
//! locals and memory are masked. Control flow becomes mask-stack operations
//! whose jump targets are the reconvergence points of the source.
//!
//! The 32-bit types (`f32`, `i32`, `u32`, `bool`) — nearly every kernel —
//! run on specialised operations ([`BinK`], [`UnK`]). Every other type runs
//! on the `*V` operations, which apply [`crate::eval`], the language's one
//! definition of each operator, lane by lane: slower, and exactly the
//! semantics the analysis folds with.

use crate::ir::*;

pub(crate) type Reg = u32;

/// Two-operand operations, resolved by type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinK {
    AddF,
    SubF,
    MulF,
    DivF,
    RemF,
    AddI,
    SubI,
    MulI,
    DivU,
    DivS,
    RemU,
    RemS,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
    EqBits,
    NeBits,
    EqF,
    NeF,
    LtF,
    LeF,
    GtF,
    GeF,
    LtU,
    LeU,
    GtU,
    GeU,
    LtS,
    LeS,
    GtS,
    GeS,
    MinF,
    MaxF,
    MinU,
    MaxU,
    MinS,
    MaxS,
    PowF,
}

/// One-operand operations, resolved by type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnK {
    NegF,
    NegI,
    NotB,
    NotI,
    F2S,
    F2U,
    S2F,
    U2F,
    Id,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Tanh,
    Floor,
    Ceil,
    AbsF,
    AbsS,
    Sin,
    Cos,
    Exp2,
    Log2,
    Popc,
    Clz,
    Ctz,
    Erf,
}

/// A bytecode operation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Const {
        d: Reg,
        bits: u64,
    },
    Builtin {
        d: Reg,
        b: Builtin,
    },
    Mov {
        d: Reg,
        s: Reg,
    },
    Un {
        d: Reg,
        k: UnK,
        a: Reg,
    },
    Bin {
        d: Reg,
        k: BinK,
        a: Reg,
        b: Reg,
        span: SpanId,
    },
    Fma {
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// A unary operator on a type other than the 32-bit ones.
    UnV {
        d: Reg,
        op: UnOp,
        ty: Scalar,
        a: Reg,
    },
    /// A binary operator with an operand of a type other than the 32-bit
    /// ones (`&&`/`||` never: they are control flow).
    BinV {
        d: Reg,
        op: BinOp,
        lty: Scalar,
        rty: Scalar,
        a: Reg,
        b: Reg,
        span: SpanId,
    },
    /// `a as to` where either side is not a 32-bit type.
    CastV {
        d: Reg,
        from: Scalar,
        to: Scalar,
        a: Reg,
    },
    /// A math intrinsic on a type other than the 32-bit ones.
    MathV {
        d: Reg,
        f: MathFn,
        ty: Scalar,
        args: Vec<Reg>,
    },
    Load {
        d: Reg,
        mem: Mem,
        idx: Reg,
        signed: bool,
        span: SpanId,
    },
    Store {
        mem: Mem,
        idx: Reg,
        v: Reg,
        signed: bool,
        span: SpanId,
    },
    Atomic {
        d: Reg,
        op: AtomicOp,
        ty: Scalar,
        mem: Mem,
        idx: Reg,
        v: Reg,
        cmp: Reg,
        signed: bool,
        span: SpanId,
    },
    Shuffle {
        d: Reg,
        kind: ShuffleKind,
        mask: Reg,
        v: Reg,
        arg: Reg,
        span: SpanId,
    },
    Vote {
        d: Reg,
        kind: VoteKind,
        mask: Reg,
        pred: Reg,
        span: SpanId,
    },
    If {
        cond: Reg,
        negate: bool,
        else_pc: u32,
    },
    Else {
        end_pc: u32,
    },
    EndIf,
    LoopBegin,
    LoopTest {
        cond: Reg,
        end_pc: u32,
    },
    LoopCont,
    LoopBack {
        head_pc: u32,
    },
    LoopEnd,
    Break {
        skip: u32,
    },
    Continue {
        skip: u32,
    },
    Return {
        skip: u32,
    },
    Barrier {
        span: SpanId,
    },
    /// `sync_warp(mask)`: the mask must name exactly the lanes executing it.
    WarpSync {
        mask: Reg,
        span: SpanId,
    },
    /// A `for` loop's step, checked once where the loop starts: a zero step
    /// never advances (Rust panics on `step_by(0)`).
    CheckStep {
        step: Reg,
        span: SpanId,
    },
    End,
}

/// A kernel compiled for the simulator, with its specialization fixed.
#[derive(Debug, Clone)]
pub struct Program {
    pub(crate) kernel: Kernel,
    pub(crate) ops: Vec<Op>,
    pub(crate) nregs: usize,
    /// Scalar parameters are loaded into these registers at warp start.
    pub(crate) param_regs: Vec<Option<Reg>>,
    /// Length in elements of each shared array (0 for the dynamic one,
    /// which the launch sizes: see [`Program::shared_lens`]).
    pub(crate) shared_len: Vec<usize>,
    /// Length in elements of each local array (per thread).
    pub(crate) array_len: Vec<usize>,
    /// The specialization it was compiled with (reports name 2-D elements
    /// by their row length under it).
    pub(crate) specs: Vec<i64>,
    /// Where each op came from, for reports.
    pub(crate) op_span: Vec<SpanId>,
    /// The register of each local, by local id (the lane tracer names
    /// writes with it).
    pub(crate) local_regs: Vec<Reg>,
}

struct Compiler {
    specs: Vec<i64>,
    ops: Vec<Op>,
    op_span: Vec<SpanId>,
    cur_span: SpanId,
    nregs: u32,
    local_regs: Vec<Reg>,
    param_regs: Vec<Option<Reg>>,
    /// Pending forward jumps of break/continue/return, per region.
    skips: Vec<Vec<usize>>,
}

impl Program {
    /// Compiles with the kernel's default specialization.
    pub fn compile(k: &Kernel) -> Program {
        Self::compile_with(k, &k.default_specs())
    }

    /// Compiles with the given specialization values.
    ///
    /// # Panics
    /// If `specs` does not have one value per specialization constant, or a
    /// shared length does not evaluate (the validator rejects both).
    pub fn compile_with(k: &Kernel, specs: &[i64]) -> Program {
        assert_eq!(
            specs.len(),
            k.specs.len(),
            "one value per specialization constant"
        );
        let mut c = Compiler {
            specs: specs.to_vec(),
            ops: Vec::new(),
            op_span: Vec::new(),
            cur_span: 0,
            nregs: 0,
            local_regs: Vec::new(),
            param_regs: Vec::new(),
            skips: vec![Vec::new()],
        };
        c.local_regs = (0..k.locals.len()).map(|_| c.reg()).collect();
        c.param_regs = k
            .params
            .iter()
            .map(|p| matches!(p.kind, ParamKind::Scalar(_)).then(|| c.reg()))
            .collect();
        c.block(&k.body);
        let end = c.emit(Op::End);
        c.patch_skips(end);
        let shared_len = k
            .shared
            .iter()
            .map(|s| s.len.eval(specs).expect("shared length evaluates") as usize)
            .collect();
        let array_len = k
            .arrays
            .iter()
            .map(|a| a.len.eval(specs).expect("array length evaluates") as usize)
            .collect();
        Program {
            kernel: k.clone(),
            ops: c.ops,
            nregs: c.nregs as usize,
            param_regs: c.param_regs,
            shared_len,
            array_len,
            specs: specs.to_vec(),
            op_span: c.op_span,
            local_regs: c.local_regs,
        }
    }

    /// The length of each shared array in a launch that gives
    /// `dynamic_bytes` of dynamic shared memory: the dynamic array gets
    /// as many whole elements as fit.
    pub(crate) fn shared_lens(&self, dynamic_bytes: u64) -> Vec<usize> {
        self.kernel
            .shared
            .iter()
            .zip(&self.shared_len)
            .map(|(s, &n)| {
                if s.dynamic {
                    (dynamic_bytes / s.elem.size_bytes()) as usize
                } else {
                    n
                }
            })
            .collect()
    }

    /// The kernel this program runs.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Number of bytecode operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True if the program has no operations (never: there is always `End`).
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

impl Compiler {
    fn reg(&mut self) -> Reg {
        self.nregs += 1;
        self.nregs - 1
    }

    fn emit(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.op_span.push(self.cur_span);
        self.ops.len() - 1
    }

    fn pc(&self) -> u32 {
        self.ops.len() as u32
    }

    fn patch_skips(&mut self, target: usize) {
        let list = self.skips.pop().expect("skip region");
        for at in list {
            match &mut self.ops[at] {
                Op::Break { skip } | Op::Continue { skip } | Op::Return { skip } => {
                    *skip = target as u32
                }
                _ => unreachable!("only jumps are patched"),
            }
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.cur_span = s.span;
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign { local, value } => {
                let v = self.expr(value);
                let d = self.local_regs[*local as usize];
                self.emit(Op::Mov { d, s: v });
            }
            StmtKind::Store { mem, index, value } => {
                let idx = self.expr(index);
                let v = self.expr(value);
                self.emit(Op::Store {
                    mem: *mem,
                    idx,
                    v,
                    signed: index.ty == Scalar::I32,
                    span: s.span,
                });
            }
            StmtKind::Eval(e) => {
                self.expr(e);
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond);
                let at_if = self.emit(Op::If {
                    cond: c,
                    negate: false,
                    else_pc: 0,
                });
                self.skips.push(Vec::new());
                self.block(then);
                let at_else = self.emit(Op::Else { end_pc: 0 });
                self.patch_skips(at_else);
                self.skips.push(Vec::new());
                self.block(otherwise);
                let at_end = self.emit(Op::EndIf);
                self.patch_skips(at_end);
                self.ops[at_if] = Op::If {
                    cond: c,
                    negate: false,
                    else_pc: at_else as u32,
                };
                self.ops[at_else] = Op::Else {
                    end_pc: at_end as u32,
                };
            }
            StmtKind::For {
                var,
                start,
                end,
                inclusive,
                step,
                body,
            } => {
                let a = self.expr(start);
                let var_reg = self.local_regs[*var as usize];
                self.emit(Op::Mov { d: var_reg, s: a });
                // The bounds are evaluated once, into registers nothing else writes.
                let b = self.expr(end);
                let end_reg = self.reg();
                self.emit(Op::Mov { d: end_reg, s: b });
                let st = self.expr(step);
                let step_reg = self.reg();
                self.emit(Op::Mov { d: step_reg, s: st });
                self.emit(Op::CheckStep {
                    step: step_reg,
                    span: s.span,
                });
                // An inclusive loop may not step onto its bound and past it:
                // `more` says the last step stayed within the bound (an
                // exclusive loop needs no flag, see the step below).
                let more = self.reg();
                if *inclusive {
                    self.emit(Op::Const { d: more, bits: 1 });
                }
                self.emit(Op::LoopBegin);
                let head = self.pc();
                let cond = self.reg();
                let signed = start.ty == Scalar::I32;
                let test_k = match (*inclusive, signed) {
                    (false, true) => BinK::LtS,
                    (false, false) => BinK::LtU,
                    (true, true) => BinK::LeS,
                    (true, false) => BinK::LeU,
                };
                self.emit(Op::Bin {
                    d: cond,
                    k: test_k,
                    a: var_reg,
                    b: end_reg,
                    span: s.span,
                });
                if *inclusive {
                    self.emit(Op::Bin {
                        d: cond,
                        k: BinK::And,
                        a: cond,
                        b: more,
                        span: s.span,
                    });
                }
                let test = self.emit(Op::LoopTest { cond, end_pc: 0 });
                self.skips.push(Vec::new());
                self.block(body);
                self.cur_span = s.span;
                let cont = self.emit(Op::LoopCont);
                self.patch_skips(cont);
                // Rust stops where the next value would pass the bound
                // rather than wrap: the step is capped at the distance left
                // (taken in u32, which holds an i32 loop's too), so a step
                // past the end lands exactly on it and the test ends the loop.
                let left = self.reg();
                self.emit(Op::Bin {
                    d: left,
                    k: BinK::SubI,
                    a: end_reg,
                    b: var_reg,
                    span: s.span,
                });
                let capped = self.reg();
                if *inclusive {
                    // The bound is a value of the loop: go on only while the
                    // step fits in the distance left.
                    self.emit(Op::Bin {
                        d: more,
                        k: BinK::LeU,
                        a: step_reg,
                        b: left,
                        span: s.span,
                    });
                    self.emit(Op::Mov {
                        d: capped,
                        s: step_reg,
                    });
                } else {
                    self.emit(Op::Bin {
                        d: capped,
                        k: BinK::MinU,
                        a: step_reg,
                        b: left,
                        span: s.span,
                    });
                }
                let next = self.reg();
                self.emit(Op::Bin {
                    d: next,
                    k: BinK::AddI,
                    a: var_reg,
                    b: capped,
                    span: s.span,
                });
                self.emit(Op::Mov {
                    d: var_reg,
                    s: next,
                });
                self.emit(Op::LoopBack { head_pc: head });
                let end_pc = self.emit(Op::LoopEnd);
                self.ops[test] = Op::LoopTest {
                    cond,
                    end_pc: end_pc as u32,
                };
            }
            StmtKind::While { cond, body } => {
                self.emit(Op::LoopBegin);
                let head = self.pc();
                let c = self.expr(cond);
                let test = self.emit(Op::LoopTest { cond: c, end_pc: 0 });
                self.skips.push(Vec::new());
                self.block(body);
                self.cur_span = s.span;
                let cont = self.emit(Op::LoopCont);
                self.patch_skips(cont);
                self.emit(Op::LoopBack { head_pc: head });
                let end_pc = self.emit(Op::LoopEnd);
                self.ops[test] = Op::LoopTest {
                    cond: c,
                    end_pc: end_pc as u32,
                };
            }
            StmtKind::Break => {
                let at = self.emit(Op::Break { skip: 0 });
                self.skips.last_mut().expect("region").push(at);
            }
            StmtKind::Continue => {
                let at = self.emit(Op::Continue { skip: 0 });
                self.skips.last_mut().expect("region").push(at);
            }
            StmtKind::Return => {
                let at = self.emit(Op::Return { skip: 0 });
                self.skips.last_mut().expect("region").push(at);
            }
            StmtKind::Barrier => {
                self.emit(Op::Barrier { span: s.span });
            }
            StmtKind::WarpSync { mask } => {
                let m = self.expr(mask);
                self.emit(Op::WarpSync {
                    mask: m,
                    span: s.span,
                });
            }
            // The simulator's memory is sequentially consistent: every access
            // is seen by every thread in program order, so a fence orders
            // nothing that is not already ordered.
            StmtKind::Fence => {}
        }
    }

    fn konst(&mut self, bits: u64) -> Reg {
        let d = self.reg();
        self.emit(Op::Const { d, bits });
        d
    }

    fn expr(&mut self, e: &Expr) -> Reg {
        match &e.kind {
            ExprKind::Lit(v) => self.konst(v.to_bits()),
            ExprKind::Local(l) => self.local_regs[*l as usize],
            ExprKind::Param(p) => self.param_regs[*p as usize].expect("scalar parameter register"),
            ExprKind::Spec(s) => {
                let v = self.specs[*s as usize];
                self.konst(if e.ty == Scalar::I32 {
                    v as i32 as u32 as u64
                } else {
                    v as u32 as u64
                })
            }
            ExprKind::Builtin(b) => {
                let d = self.reg();
                self.emit(Op::Builtin { d, b: *b });
                d
            }
            ExprKind::Load { mem, index } => {
                let idx = self.expr(index);
                let d = self.reg();
                self.emit(Op::Load {
                    d,
                    mem: *mem,
                    idx,
                    signed: index.ty == Scalar::I32,
                    span: e.span,
                });
                d
            }
            ExprKind::Unary { op, arg } if !native(arg.ty) => {
                let a = self.expr(arg);
                let d = self.reg();
                self.emit(Op::UnV {
                    d,
                    op: *op,
                    ty: arg.ty,
                    a,
                });
                d
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg);
                let k = match (op, arg.ty) {
                    (UnOp::Neg, Scalar::F32) => UnK::NegF,
                    (UnOp::Neg, _) => UnK::NegI,
                    (UnOp::Not, Scalar::Bool) => UnK::NotB,
                    (UnOp::Not, _) => UnK::NotI,
                };
                self.un(k, a)
            }
            ExprKind::Binary {
                op: BinOp::And,
                lhs,
                rhs,
            } => self.short_circuit(lhs, rhs, false),
            ExprKind::Binary {
                op: BinOp::Or,
                lhs,
                rhs,
            } => self.short_circuit(lhs, rhs, true),
            ExprKind::Binary { op, lhs, rhs } if !native(lhs.ty) || !native(rhs.ty) => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                let d = self.reg();
                self.emit(Op::BinV {
                    d,
                    op: *op,
                    lty: lhs.ty,
                    rty: rhs.ty,
                    a,
                    b,
                    span: e.span,
                });
                d
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs);
                let b = self.expr(rhs);
                let k = bin_kind(*op, lhs.ty);
                let d = self.reg();
                self.emit(Op::Bin {
                    d,
                    k,
                    a,
                    b,
                    span: e.span,
                });
                d
            }
            // Registers hold bit patterns: reading them as another type of
            // the same width is no operation at all.
            ExprKind::BitCast(arg) => self.expr(arg),
            ExprKind::Cast(arg) if !native(arg.ty) || !native(e.ty) => {
                let a = self.expr(arg);
                let d = self.reg();
                self.emit(Op::CastV {
                    d,
                    from: arg.ty,
                    to: e.ty,
                    a,
                });
                d
            }
            ExprKind::Math { func, args } if !native(args[0].ty) => {
                let r: Vec<Reg> = args.iter().map(|a| self.expr(a)).collect();
                let d = self.reg();
                self.emit(Op::MathV {
                    d,
                    f: *func,
                    ty: args[0].ty,
                    args: r,
                });
                d
            }
            ExprKind::Cast(arg) => {
                let a = self.expr(arg);
                let k = match (arg.ty, e.ty) {
                    (Scalar::F32, Scalar::I32) => UnK::F2S,
                    (Scalar::F32, Scalar::U32) => UnK::F2U,
                    (Scalar::I32, Scalar::F32) => UnK::S2F,
                    (Scalar::U32 | Scalar::Bool, Scalar::F32) => UnK::U2F,
                    _ => UnK::Id,
                };
                if k == UnK::Id { a } else { self.un(k, a) }
            }
            ExprKind::Math { func, args } => {
                let r: Vec<Reg> = args.iter().map(|a| self.expr(a)).collect();
                let ty = args[0].ty;
                match func {
                    MathFn::Fma => {
                        let d = self.reg();
                        self.emit(Op::Fma {
                            d,
                            a: r[0],
                            b: r[1],
                            c: r[2],
                        });
                        d
                    }
                    MathFn::Pow => {
                        let d = self.reg();
                        self.emit(Op::Bin {
                            d,
                            k: BinK::PowF,
                            a: r[0],
                            b: r[1],
                            span: e.span,
                        });
                        d
                    }
                    MathFn::Min | MathFn::Max => {
                        let min = *func == MathFn::Min;
                        let k = match ty {
                            Scalar::F32 => {
                                if min {
                                    BinK::MinF
                                } else {
                                    BinK::MaxF
                                }
                            }
                            Scalar::I32 => {
                                if min {
                                    BinK::MinS
                                } else {
                                    BinK::MaxS
                                }
                            }
                            _ => {
                                if min {
                                    BinK::MinU
                                } else {
                                    BinK::MaxU
                                }
                            }
                        };
                        let d = self.reg();
                        self.emit(Op::Bin {
                            d,
                            k,
                            a: r[0],
                            b: r[1],
                            span: e.span,
                        });
                        d
                    }
                    f => {
                        let k = match (f, ty) {
                            (MathFn::Exp, _) => UnK::Exp,
                            (MathFn::Log, _) => UnK::Log,
                            (MathFn::Sqrt, _) => UnK::Sqrt,
                            (MathFn::Rsqrt, _) => UnK::Rsqrt,
                            (MathFn::Tanh, _) => UnK::Tanh,
                            (MathFn::Floor, _) => UnK::Floor,
                            (MathFn::Ceil, _) => UnK::Ceil,
                            (MathFn::Abs, Scalar::F32) => UnK::AbsF,
                            (MathFn::Abs, _) => UnK::AbsS,
                            (MathFn::Sin, _) => UnK::Sin,
                            (MathFn::Cos, _) => UnK::Cos,
                            (MathFn::Exp2, _) => UnK::Exp2,
                            (MathFn::Log2, _) => UnK::Log2,
                            // On the bits: the same count for i32 and u32.
                            (MathFn::CountOnes, _) => UnK::Popc,
                            (MathFn::LeadingZeros, _) => UnK::Clz,
                            (MathFn::TrailingZeros, _) => UnK::Ctz,
                            (MathFn::Erf, _) => UnK::Erf,
                            _ => unreachable!("validated math intrinsic"),
                        };
                        self.un(k, r[0])
                    }
                }
            }
            ExprKind::Shuffle {
                kind,
                mask,
                value,
                arg,
            } => {
                let m = self.expr(mask);
                let v = self.expr(value);
                let a = self.expr(arg);
                let d = self.reg();
                self.emit(Op::Shuffle {
                    d,
                    kind: *kind,
                    mask: m,
                    v,
                    arg: a,
                    span: e.span,
                });
                d
            }
            ExprKind::Vote { kind, mask, pred } => {
                let m = self.expr(mask);
                let p = self.expr(pred);
                let d = self.reg();
                self.emit(Op::Vote {
                    d,
                    kind: *kind,
                    mask: m,
                    pred: p,
                    span: e.span,
                });
                d
            }
            ExprKind::Atomic {
                op,
                mem,
                index,
                value,
                compare,
            } => {
                let idx = self.expr(index);
                let cmp = match compare {
                    Some(c) => self.expr(c),
                    None => 0,
                };
                let v = self.expr(value);
                let d = self.reg();
                self.emit(Op::Atomic {
                    d,
                    op: *op,
                    ty: e.ty,
                    mem: *mem,
                    idx,
                    v,
                    cmp,
                    signed: index.ty == Scalar::I32,
                    span: e.span,
                });
                d
            }
        }
    }

    fn un(&mut self, k: UnK, a: Reg) -> Reg {
        let d = self.reg();
        self.emit(Op::Un { d, k, a });
        d
    }

    /// `a && b` runs `b` only where `a` is true; `a || b` only where false.
    fn short_circuit(&mut self, lhs: &Expr, rhs: &Expr, or: bool) -> Reg {
        let a = self.expr(lhs);
        let d = self.reg();
        self.emit(Op::Mov { d, s: a });
        let at_if = self.emit(Op::If {
            cond: a,
            negate: or,
            else_pc: 0,
        });
        let b = self.expr(rhs);
        self.emit(Op::Mov { d, s: b });
        let at_else = self.emit(Op::Else { end_pc: 0 });
        let at_end = self.emit(Op::EndIf);
        self.ops[at_if] = Op::If {
            cond: a,
            negate: or,
            else_pc: at_else as u32,
        };
        self.ops[at_else] = Op::Else {
            end_pc: at_end as u32,
        };
        d
    }
}

/// True for the types the specialised operations compute: `f32`, `i32`,
/// `u32`, `bool`.
pub(crate) fn native(ty: Scalar) -> bool {
    matches!(ty, Scalar::F32 | Scalar::I32 | Scalar::U32 | Scalar::Bool)
}

fn bin_kind(op: BinOp, ty: Scalar) -> BinK {
    use BinK::*;
    let f = ty == Scalar::F32;
    let s = ty == Scalar::I32;
    match op {
        BinOp::Add if f => AddF,
        BinOp::Sub if f => SubF,
        BinOp::Mul if f => MulF,
        BinOp::Div if f => DivF,
        BinOp::Rem if f => RemF,
        BinOp::Add => AddI,
        BinOp::Sub => SubI,
        BinOp::Mul => MulI,
        BinOp::Div if s => DivS,
        BinOp::Div => DivU,
        BinOp::Rem if s => RemS,
        BinOp::Rem => RemU,
        BinOp::BitAnd | BinOp::And => And,
        BinOp::BitOr | BinOp::Or => Or,
        BinOp::BitXor => Xor,
        BinOp::Shl => Shl,
        BinOp::Shr if s => ShrS,
        BinOp::Shr => ShrU,
        BinOp::Eq if f => EqF,
        BinOp::Ne if f => NeF,
        BinOp::Eq => EqBits,
        BinOp::Ne => NeBits,
        BinOp::Lt if f => LtF,
        BinOp::Le if f => LeF,
        BinOp::Gt if f => GtF,
        BinOp::Ge if f => GeF,
        BinOp::Lt if s => LtS,
        BinOp::Le if s => LeS,
        BinOp::Gt if s => GtS,
        BinOp::Ge if s => GeS,
        BinOp::Lt => LtU,
        BinOp::Le => LeU,
        BinOp::Gt => GtU,
        BinOp::Ge => GeU,
    }
}
