//! The validator: structural and type invariants of a kernel.
//!
//! The macro only produces valid IR, so the validator guards the other way
//! in: IR built by hand (tests, future front ends) and the macro itself.

use crate::eval;
use crate::ir::*;

/// An invariant a kernel breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kernel `{kernel}` is invalid at `{snippet}`: {problem}")]
pub struct ValidateError {
    /// Kernel name.
    pub kernel: String,
    /// Source text of the offending node.
    pub snippet: String,
    /// What is wrong.
    pub problem: String,
}

/// The most bytes of local (register) arrays one thread may hold: CUDA's
/// per-thread local-memory limit, 512 KiB (the CUDA C++ Programming
/// Guide's table of technical specifications, every compute capability
/// from 2.0 on). Larger arrays are refused by the validator.
pub const MAX_LOCAL_BYTES_PER_THREAD: u64 = 512 * 1024;

/// Checks every invariant; returns the first broken one.
pub fn validate(k: &Kernel) -> Result<(), ValidateError> {
    let v = Validator { k };
    if k.specs
        .iter()
        .any(|s| !matches!(s.ty, Scalar::U32 | Scalar::I32))
    {
        return Err(v.err(0, "specialization constants must be u32 or i32".into()));
    }
    let specs = k.default_specs();
    for s in &k.shared {
        if s.len.eval(&specs).is_none() {
            return Err(v.err(
                s.span,
                format!("the length of `{}` does not evaluate", s.name),
            ));
        }
        if s.dynamic && (s.row_len.is_some() || s.len != ConstExpr::Lit(0)) {
            return Err(v.err(
                s.span,
                format!(
                    "the dynamic shared array `{}` has a static length or rows",
                    s.name
                ),
            ));
        }
        v.rows(&s.name, &s.len, s.row_len.as_ref(), &specs, s.span)?;
    }
    if k.shared.iter().filter(|s| s.dynamic).count() > 1 {
        return Err(v.err(
            0,
            "more than one dynamic shared array (they would alias one launch-sized block)".into(),
        ));
    }
    for a in &k.arrays {
        match a.len.eval(&specs) {
            Some(n) if n > 0 && n <= u64::from(u32::MAX) => {}
            _ => {
                return Err(v.err(
                    a.span,
                    format!(
                        "the length of the local array `{}` is not between 1 and u32::MAX",
                        a.name
                    ),
                ));
            }
        }
        v.rows(&a.name, &a.len, a.row_len.as_ref(), &specs, a.span)?;
    }
    // Every thread holds its own copy of each local array, so a length a
    // GPU refuses (and that the simulator would try to allocate per lane
    // before the first statement) is an error here, not an abort there.
    let local_bytes: u64 = k
        .arrays
        .iter()
        .filter_map(|a| Some(a.len.eval(&specs)? * a.elem.size_bytes()))
        .sum();
    if local_bytes > MAX_LOCAL_BYTES_PER_THREAD {
        let a = k.arrays.last().map_or(0, |a| a.span);
        return Err(v.err(
            a,
            format!(
                "the local arrays take {local_bytes} bytes per thread, over the {MAX_LOCAL_BYTES_PER_THREAD} \
                 a thread may hold (CUDA's local-memory limit); stage the data in shared or global memory"
            ),
        ));
    }
    for c in &k.inlined {
        // Ranges index the span table; a kernel built by hand may have an
        // empty table, where only an empty range is consistent.
        let table = k.snippets.len().max(k.spans.len()) as SpanId;
        if c.spans.start > c.spans.end || c.spans.end > table || c.call >= table.max(1) {
            return Err(v.err(
                0,
                format!(
                    "the inlined call of `{}` names spans outside the table",
                    c.helper
                ),
            ));
        }
    }
    v.block(&k.body, 0)
}

struct Validator<'k> {
    k: &'k Kernel,
}

impl Validator<'_> {
    fn err(&self, span: SpanId, problem: String) -> ValidateError {
        ValidateError {
            kernel: self.k.name.clone(),
            snippet: self.k.snippet(span).to_string(),
            problem,
        }
    }

    /// A 2-D array's rows are whole: its row length is positive and
    /// divides its length.
    fn rows(
        &self,
        name: &str,
        len: &ConstExpr,
        row_len: Option<&ConstExpr>,
        specs: &[i64],
        span: SpanId,
    ) -> Result<(), ValidateError> {
        let Some(r) = row_len else {
            return Ok(());
        };
        match (r.eval(specs), len.eval(specs)) {
            (Some(cols), Some(n)) if cols > 0 && n % cols == 0 => Ok(()),
            _ => Err(self.err(
                span,
                format!("the rows of the 2-D array `{name}` do not divide its length"),
            )),
        }
    }

    fn block(&self, stmts: &[Stmt], loops: usize) -> Result<(), ValidateError> {
        stmts.iter().try_for_each(|s| self.stmt(s, loops))
    }

    fn mem(&self, m: Mem, span: SpanId, write: bool) -> Result<Scalar, ValidateError> {
        match m {
            Mem::Global(p) => match self.k.params.get(p as usize).map(|p| p.kind) {
                Some(ParamKind::Buffer { elem, writable }) => {
                    if write && !writable {
                        return Err(self.err(span, "store into a read-only buffer".into()));
                    }
                    Ok(elem)
                }
                _ => Err(self.err(span, "memory is not a buffer parameter".into())),
            },
            Mem::Shared(s) => self
                .k
                .shared
                .get(s as usize)
                .map(|a| a.elem)
                .ok_or_else(|| self.err(span, "unknown shared array".into())),
            Mem::Local(a) => self
                .k
                .arrays
                .get(a as usize)
                .map(|a| a.elem)
                .ok_or_else(|| self.err(span, "unknown local array".into())),
        }
    }

    fn stmt(&self, s: &Stmt, loops: usize) -> Result<(), ValidateError> {
        match &s.kind {
            StmtKind::Assign { local, value } => {
                let l = self
                    .k
                    .locals
                    .get(*local as usize)
                    .ok_or_else(|| self.err(s.span, "unknown local".into()))?;
                self.expect(value, l.ty)
            }
            StmtKind::Store { mem, index, value } => {
                let elem = self.mem(*mem, s.span, true)?;
                self.index(index)?;
                self.expect(value, elem)
            }
            StmtKind::Eval(e) => self.expr(e),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.expect(cond, Scalar::Bool)?;
                self.block(then, loops)?;
                self.block(otherwise, loops)
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                let l = self
                    .k
                    .locals
                    .get(*var as usize)
                    .ok_or_else(|| self.err(s.span, "unknown loop variable".into()))?;
                if !matches!(l.ty, Scalar::U32 | Scalar::I32) {
                    return Err(self.err(s.span, "loop variable must be u32 or i32".into()));
                }
                self.expect(start, l.ty)?;
                self.expect(end, l.ty)?;
                self.expect(step, l.ty)?;
                self.block(body, loops + 1)
            }
            StmtKind::While { cond, body } => {
                self.expect(cond, Scalar::Bool)?;
                self.block(body, loops + 1)
            }
            StmtKind::WarpSync { mask } => self.expect(mask, Scalar::U32),
            StmtKind::Break | StmtKind::Continue if loops == 0 => {
                Err(self.err(s.span, "break/continue outside a loop".into()))
            }
            _ => Ok(()),
        }
    }

    fn index(&self, e: &Expr) -> Result<(), ValidateError> {
        self.expr(e)?;
        if !matches!(e.ty, Scalar::U32 | Scalar::I32) {
            return Err(self.err(e.span, format!("index must be u32 or i32, found {}", e.ty)));
        }
        Ok(())
    }

    fn expect(&self, e: &Expr, ty: Scalar) -> Result<(), ValidateError> {
        self.expr(e)?;
        if e.ty != ty {
            return Err(self.err(e.span, format!("expected {ty}, found {}", e.ty)));
        }
        Ok(())
    }

    fn expr(&self, e: &Expr) -> Result<(), ValidateError> {
        let bad = |what: String| Err(self.err(e.span, what));
        match &e.kind {
            ExprKind::Lit(v) if v.ty() != e.ty => bad("literal type mismatch".into()),
            ExprKind::Local(l) => match self.k.locals.get(*l as usize) {
                Some(l) if l.ty == e.ty => Ok(()),
                _ => bad("local type mismatch".into()),
            },
            ExprKind::Param(p) => match self.k.params.get(*p as usize).map(|p| p.kind) {
                Some(ParamKind::Scalar(t)) if t == e.ty => Ok(()),
                _ => bad("parameter is not a scalar of this type".into()),
            },
            ExprKind::Spec(s) if self.k.specs.get(*s as usize).map(|s| s.ty) != Some(e.ty) => {
                bad("specialization constant type mismatch".into())
            }
            ExprKind::Builtin(_) if e.ty != Scalar::U32 => bad("builtins are u32".into()),
            ExprKind::Load { mem, index } => {
                let elem = self.mem(*mem, e.span, false)?;
                self.index(index)?;
                if elem != e.ty {
                    bad("load type mismatch".into())
                } else {
                    Ok(())
                }
            }
            ExprKind::Unary { op, arg } => {
                self.expr(arg)?;
                let ok = match op {
                    UnOp::Neg => arg.ty.is_signed(),
                    UnOp::Not => !arg.ty.is_float(),
                };
                if ok && arg.ty == e.ty {
                    Ok(())
                } else {
                    bad("bad unary operand".into())
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.expr(lhs)?;
                self.expr(rhs)?;
                let shift = matches!(op, BinOp::Shl | BinOp::Shr);
                if !shift && lhs.ty != rhs.ty {
                    return bad(format!(
                        "operands of `{}` differ: {} and {}",
                        op.symbol(),
                        lhs.ty,
                        rhs.ty
                    ));
                }
                let want = if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                    Scalar::Bool
                } else {
                    lhs.ty
                };
                if e.ty != want {
                    return bad("binary result type".into());
                }
                let probe = eval::binary(
                    *op,
                    Value::from_bits(lhs.ty, 1),
                    Value::from_bits(rhs.ty, 1),
                );
                if probe == Err(eval::EvalError::Types) && !matches!(op, BinOp::And | BinOp::Or) {
                    return bad(format!("`{}` does not apply to {}", op.symbol(), lhs.ty));
                }
                Ok(())
            }
            ExprKind::Cast(a) => self.expr(a),
            ExprKind::BitCast(a) => {
                // A float and the unsigned integer of its width, either way.
                if a.ty.bits_type() != Some(e.ty) && e.ty.bits_type() != Some(a.ty) {
                    return bad(format!("bits of {} cannot be read as {}", a.ty, e.ty));
                }
                self.expr(a)
            }
            ExprKind::Math { func, args } => {
                if args.len() != func.arity() {
                    return bad("wrong number of arguments".into());
                }
                for a in args {
                    self.expect(a, args[0].ty)?;
                }
                if eval::math_type(*func, args[0].ty) != Some(e.ty) {
                    bad("math type".into())
                } else {
                    Ok(())
                }
            }
            ExprKind::Shuffle {
                mask, value, arg, ..
            } => {
                self.expect(mask, Scalar::U32)?;
                self.expect(arg, Scalar::U32)?;
                self.expect(value, e.ty)
            }
            ExprKind::Vote { kind, mask, pred } => {
                self.expect(mask, Scalar::U32)?;
                self.expect(pred, Scalar::Bool)?;
                let want = if *kind == VoteKind::Ballot {
                    Scalar::U32
                } else {
                    Scalar::Bool
                };
                if e.ty != want {
                    bad("vote type".into())
                } else {
                    Ok(())
                }
            }
            ExprKind::Atomic {
                op,
                mem,
                index,
                value,
                compare,
            } => {
                let elem = self.mem(*mem, e.span, true)?;
                if let Mem::Local(_) = mem {
                    return bad(format!(
                        "`{}` on a local array, which no other thread can touch",
                        op.name()
                    ));
                }
                if !op.accepts(elem) {
                    return bad(format!("`{}` on {elem}", op.name()));
                }
                self.index(index)?;
                self.expect(value, elem)?;
                if let Some(c) = compare {
                    self.expect(c, elem)?;
                }
                if e.ty != elem {
                    bad("atomic type".into())
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(body: Vec<Stmt>, params: Vec<Param>) -> Kernel {
        Kernel {
            name: "k".into(),
            params,
            specs: Vec::new(),
            locals: vec![Local {
                name: "x".into(),
                ty: Scalar::U32,
                mutable: true,
                span: 0,
            }],
            shared: Vec::new(),
            arrays: Vec::new(),
            body,
            launch: LaunchSpace::default(),
            spans: Vec::new(),
            snippets: Vec::new(),
            source: SourceText::default(),
            inlined: Vec::new(),
            type_args: Vec::new(),
        }
    }

    fn lit(v: Value) -> Expr {
        Expr {
            kind: ExprKind::Lit(v),
            ty: v.ty(),
            span: 0,
        }
    }

    #[test]
    fn a_typed_assignment_is_valid() {
        let s = Stmt {
            kind: StmtKind::Assign {
                local: 0,
                value: lit(Value::U32(1)),
            },
            span: 0,
        };
        assert!(validate(&kernel(vec![s], Vec::new())).is_ok());
    }

    #[test]
    fn a_mistyped_assignment_is_rejected() {
        let s = Stmt {
            kind: StmtKind::Assign {
                local: 0,
                value: lit(Value::F32(1.0)),
            },
            span: 0,
        };
        let e = validate(&kernel(vec![s], Vec::new())).unwrap_err();
        assert!(e.problem.contains("expected u32, found f32"), "{e}");
    }

    #[test]
    fn break_outside_a_loop_and_stores_to_read_only_buffers_are_rejected() {
        let brk = Stmt {
            kind: StmtKind::Break,
            span: 0,
        };
        assert!(validate(&kernel(vec![brk], Vec::new())).is_err());
        let p = Param {
            name: "x".into(),
            kind: ParamKind::Buffer {
                elem: Scalar::F32,
                writable: false,
            },
            span: 0,
        };
        let st = Stmt {
            kind: StmtKind::Store {
                mem: Mem::Global(0),
                index: lit(Value::U32(0)),
                value: lit(Value::F32(1.0)),
            },
            span: 0,
        };
        let e = validate(&kernel(vec![st], vec![p])).unwrap_err();
        assert!(e.problem.contains("read-only"), "{e}");
    }
}
