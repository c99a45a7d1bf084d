//! Statements: structured control flow as predicated branches to labels,
//! loops that evaluate their bound once, stores and barriers.

use crate::ir::{Scalar, Stmt, StmtKind};

use super::{Class, EmitError, Emitter, suffix};

impl Emitter<'_> {
    pub(super) fn block_of(&mut self, stmts: &[Stmt]) -> Result<(), EmitError> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), EmitError> {
        self.source_comment(s);
        match &s.kind {
            StmtKind::Assign { local, value } => {
                let v = self.expr(value)?;
                let dst = self.local(*local);
                self.mov(value.ty, &dst, &v);
            }
            StmtKind::Store { mem, index, value } => {
                let addr = self.address(*mem, index)?;
                let v = self.expr(value)?;
                self.store(*mem, &addr, value.ty, &v);
            }
            StmtKind::Eval(e) => {
                self.expr(e)?;
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond)?;
                let n = self.label();
                let end = format!("$L{n}_end");
                if otherwise.is_empty() {
                    self.ins(format!("@!{c} bra {end}"));
                    self.block_of(then)?;
                } else {
                    let other = format!("$L{n}_else");
                    self.ins(format!("@!{c} bra {other}"));
                    self.block_of(then)?;
                    self.ins(format!("bra {end}"));
                    self.place(&other);
                    self.block_of(otherwise)?;
                }
                self.place(&end);
            }
            StmtKind::For {
                var,
                start,
                end,
                inclusive,
                step,
                body,
            } => {
                // Rust evaluates the bound and the step once and stops rather
                // than wraps when the next value would pass the bound: the
                // distance left is taken unsigned at the variable's width (it
                // holds a signed loop's too) before the step is added.
                let ty = self.k.locals[*var as usize].ty;
                let v = self.local(*var);
                let s0 = self.expr(start)?;
                let e = self.expr(end)?;
                let e = self.snapshot(ty, e);
                let st = self.expr(step)?;
                let st = self.snapshot(ty, st);
                self.mov(ty, &v, &s0);
                let n = self.label();
                let (top, cont, exit) = (
                    format!("$L{n}_loop"),
                    format!("$L{n}_continue"),
                    format!("$L{n}_break"),
                );
                self.place(&top);
                let p = self.temp(Class::Pred);
                let test = if *inclusive { "le" } else { "lt" };
                self.ins(format!("setp.{test}.{} {p}, {v}, {e}", suffix(ty)));
                self.ins(format!("@!{p} bra {exit}"));
                self.loops.push((cont.clone(), exit.clone()));
                self.block_of(body)?;
                self.loops.pop();
                self.place(&cont);
                let (lc, u) = if ty.bits() == 64 {
                    (Class::B64, "u64")
                } else {
                    (Class::B32, "u32")
                };
                let left = self.temp(lc);
                self.ins(format!("sub.{u} {left}, {e}, {v}"));
                self.ins(format!("add.{} {v}, {v}, {st}", suffix(ty)));
                // Exclusive: stop when the step reaches the bound; inclusive:
                // when it passes it (the bound itself is a value of the loop).
                let done = self.temp(Class::Pred);
                let past = if *inclusive { "gt" } else { "ge" };
                self.ins(format!("setp.{past}.{u} {done}, {st}, {left}"));
                self.ins(format!("@{done} bra {exit}"));
                self.ins(format!("bra {top}"));
                self.place(&exit);
            }
            StmtKind::While { cond, body } => {
                let n = self.label();
                let (top, exit) = (format!("$L{n}_loop"), format!("$L{n}_break"));
                self.place(&top);
                let c = self.expr(cond)?;
                self.ins(format!("@!{c} bra {exit}"));
                self.loops.push((top.clone(), exit.clone()));
                self.block_of(body)?;
                self.loops.pop();
                self.ins(format!("bra {top}"));
                self.place(&exit);
            }
            StmtKind::Break | StmtKind::Continue => {
                let Some((cont, exit)) = self.loops.last().cloned() else {
                    return Err(self.unsupported(
                        "`break` or `continue` outside a loop",
                        "the IR validator should have refused it",
                    ));
                };
                let to = if s.kind == StmtKind::Break {
                    exit
                } else {
                    cont
                };
                self.ins(format!("bra {to}"));
            }
            StmtKind::Return => self.ins("ret"),
            StmtKind::Barrier => self.ins("bar.sync 0"),
            // The lanes of the mask wait for each other and their memory
            // accesses are ordered (PTX ISA, `bar.warp.sync`; sm_30 and up).
            StmtKind::WarpSync { mask } => {
                let m = self.expr(mask)?;
                self.ins(format!("bar.warp.sync {m}"));
            }
            // CUDA's `__threadfence()`: `membar.gl`, on sm_70 and later a
            // synonym of `fence.sc.gpu` (PTX ISA, `membar`).
            StmtKind::Fence => self.ins("membar.gl"),
        }
        Ok(())
    }

    /// `dst = v` for a value of type `ty`.
    pub(super) fn mov(&mut self, ty: Scalar, dst: &str, v: &str) {
        let t = match Class::of(ty) {
            Class::Pred => "pred",
            Class::F32 => "f32",
            Class::F64 => "f64",
            Class::B64 => "b64",
            Class::B32 | Class::B16 => "b32",
        };
        self.ins(format!("mov.{t} {dst}, {v}"));
    }

    /// A value the body may not change under us: a register is copied into
    /// a fresh temporary (a loop's bound may be a local the body assigns).
    pub(super) fn snapshot(&mut self, ty: Scalar, v: String) -> String {
        if !v.starts_with('%') {
            return v;
        }
        let t = self.temp(Class::of(ty));
        self.mov(ty, &t, &v);
        t
    }
}
