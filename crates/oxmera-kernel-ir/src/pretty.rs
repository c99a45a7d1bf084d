//! The IR printer: what `oxmera kernel ir NAME` shows a learner.
//!
//! The output reads like the source language with every type made explicit,
//! every local numbered (`%3 tid`) and every builtin resolved, so the learner
//! sees exactly what the analysis and the simulator see.

use std::fmt::Write;

use crate::ir::*;

/// Prints a kernel.
pub fn print(k: &Kernel) -> String {
    let mut p = Printer {
        k,
        out: String::new(),
    };
    p.header();
    p.block(&k.body, 1);
    p.out.push_str("}\n");
    p.out
}

struct Printer<'k> {
    k: &'k Kernel,
    out: String,
}

impl Printer<'_> {
    fn header(&mut self) {
        let k = self.k;
        let specs: Vec<String> = k
            .specs
            .iter()
            .map(|s| format!("const {}: {} = {}", s.name, s.ty, s.default))
            .collect();
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| match p.kind {
                ParamKind::Scalar(t) => format!("{}: {t}", p.name),
                ParamKind::Buffer {
                    elem,
                    writable: true,
                } => format!("{}: global &mut [{elem}]", p.name),
                ParamKind::Buffer {
                    elem,
                    writable: false,
                } => format!("{}: global &[{elem}]", p.name),
            })
            .collect();
        let spec = if specs.is_empty() {
            String::new()
        } else {
            format!("<{}>", specs.join(", "))
        };
        let _ = writeln!(
            self.out,
            "kernel {}{spec}({}) {{",
            k.name,
            params.join(", ")
        );
        if !k.launch.blocks.is_empty() {
            let b: Vec<String> = k.launch.blocks.iter().map(|d| d.to_string()).collect();
            let _ = writeln!(self.out, "    // launch space: block in [{}]", b.join(", "));
        }
        for s in &k.shared {
            let ty = if s.dynamic {
                format!("[{}; dynamic]  // sized by the launch", s.elem)
            } else {
                self.array_type(s.elem, &s.len, s.row_len.as_ref())
            };
            let _ = writeln!(self.out, "    shared {}: {ty}", s.name);
        }
        for a in &k.arrays {
            let _ = writeln!(
                self.out,
                "    local {}: {}",
                a.name,
                self.array_type(a.elem, &a.len, a.row_len.as_ref())
            );
        }
    }

    /// `[T; N]`, or `[[T; COLS]; ROWS]` for a 2-D array (whose length the
    /// lowering builds as `ROWS * COLS`).
    fn array_type(&self, elem: Scalar, len: &ConstExpr, row_len: Option<&ConstExpr>) -> String {
        match (row_len, len) {
            (Some(cols), ConstExpr::Mul(rows, c)) if **c == *cols => {
                format!("[[{elem}; {}]; {}]", self.cexpr(cols), self.cexpr(rows))
            }
            (Some(cols), _) => format!(
                "[[{elem}; {}]; {} / {}]",
                self.cexpr(cols),
                self.cexpr(len),
                self.cexpr(cols)
            ),
            (None, _) => format!("[{elem}; {}]", self.cexpr(len)),
        }
    }

    fn cexpr(&self, c: &ConstExpr) -> String {
        match c {
            ConstExpr::Lit(v) => v.to_string(),
            ConstExpr::Spec(s) => self.k.specs[*s as usize].name.clone(),
            ConstExpr::Add(a, b) => format!("({} + {})", self.cexpr(a), self.cexpr(b)),
            ConstExpr::Sub(a, b) => format!("({} - {})", self.cexpr(a), self.cexpr(b)),
            ConstExpr::Mul(a, b) => format!("({} * {})", self.cexpr(a), self.cexpr(b)),
            ConstExpr::Div(a, b) => format!("({} / {})", self.cexpr(a), self.cexpr(b)),
        }
    }

    fn local(&self, l: LocalId) -> String {
        format!("%{l} {}", self.k.locals[l as usize].name)
    }

    fn block(&mut self, stmts: &[Stmt], depth: usize) {
        for s in stmts {
            self.stmt(s, depth);
        }
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        let ind = "    ".repeat(depth);
        let line = self.k.span(s.span).line;
        let at = if line > 0 {
            format!("  // line {line}")
        } else {
            String::new()
        };
        match &s.kind {
            StmtKind::Assign { local, value } => {
                let ty = self.k.locals[*local as usize].ty;
                let _ = writeln!(
                    self.out,
                    "{ind}{}: {ty} = {};{at}",
                    self.local(*local),
                    self.expr(value)
                );
            }
            StmtKind::Store { mem, index, value } => {
                let _ = writeln!(
                    self.out,
                    "{ind}{}[{}] = {};{at}",
                    self.mem(*mem),
                    self.expr(index),
                    self.expr(value)
                );
            }
            StmtKind::Eval(e) => {
                let _ = writeln!(self.out, "{ind}{};{at}", self.expr(e));
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let _ = writeln!(self.out, "{ind}if {} {{{at}", self.expr(cond));
                self.block(then, depth + 1);
                if !otherwise.is_empty() {
                    let _ = writeln!(self.out, "{ind}}} else {{");
                    self.block(otherwise, depth + 1);
                }
                let _ = writeln!(self.out, "{ind}}}");
            }
            StmtKind::For {
                var,
                start,
                end,
                inclusive,
                step,
                body,
            } => {
                let _ = writeln!(
                    self.out,
                    "{ind}for {} in ({}{}{}).step_by({}) {{{at}",
                    self.local(*var),
                    self.expr(start),
                    if *inclusive { "..=" } else { ".." },
                    self.expr(end),
                    self.expr(step)
                );
                self.block(body, depth + 1);
                let _ = writeln!(self.out, "{ind}}}");
            }
            StmtKind::While { cond, body } => {
                let _ = writeln!(self.out, "{ind}while {} {{{at}", self.expr(cond));
                self.block(body, depth + 1);
                let _ = writeln!(self.out, "{ind}}}");
            }
            StmtKind::Break => {
                let _ = writeln!(self.out, "{ind}break;{at}");
            }
            StmtKind::Continue => {
                let _ = writeln!(self.out, "{ind}continue;{at}");
            }
            StmtKind::Return => {
                let _ = writeln!(self.out, "{ind}return;{at}");
            }
            StmtKind::Barrier => {
                let _ = writeln!(self.out, "{ind}barrier.block;{at}");
            }
            StmtKind::WarpSync { mask } => {
                let _ = writeln!(self.out, "{ind}barrier.warp({});{at}", self.expr(mask));
            }
            StmtKind::Fence => {
                let _ = writeln!(self.out, "{ind}fence.device;{at}");
            }
        }
    }

    fn mem(&self, m: Mem) -> String {
        match m {
            Mem::Global(p) => format!("global {}", self.k.params[p as usize].name),
            Mem::Shared(s) => format!("shared {}", self.k.shared[s as usize].name),
            Mem::Local(a) => format!("local {}", self.k.arrays[a as usize].name),
        }
    }

    fn expr(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Lit(v) => v.to_string(),
            ExprKind::Local(l) => self.local(*l),
            ExprKind::Param(p) => format!("param {}", self.k.params[*p as usize].name),
            ExprKind::Spec(s) => format!("spec {}", self.k.specs[*s as usize].name),
            ExprKind::Builtin(b) => b.source_name(),
            ExprKind::Load { mem, index } => format!("{}[{}]", self.mem(*mem), self.expr(index)),
            ExprKind::Unary { op, arg } => {
                let o = if *op == UnOp::Neg { "-" } else { "!" };
                format!("{o}{}", self.expr(arg))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                format!(
                    "({} {}.{} {})",
                    self.expr(lhs),
                    op.symbol(),
                    e.ty_of_operands(lhs),
                    self.expr(rhs)
                )
            }
            ExprKind::Cast(a) => format!("({} as {})", self.expr(a), e.ty),
            ExprKind::BitCast(a) if !e.ty.is_float() => format!("{}.to_bits()", self.expr(a)),
            ExprKind::BitCast(a) => format!("{}::from_bits({})", e.ty, self.expr(a)),
            ExprKind::Math { func, args } => {
                let a: Vec<String> = args.iter().map(|x| self.expr(x)).collect();
                format!("{}.{}({})", func.name(), e.ty, a.join(", "))
            }
            ExprKind::Shuffle {
                kind,
                mask,
                value,
                arg,
            } => {
                format!(
                    "{}({}, {}, {})",
                    kind.name(),
                    self.expr(mask),
                    self.expr(value),
                    self.expr(arg)
                )
            }
            ExprKind::Vote { kind, mask, pred } => {
                format!("{}({}, {})", kind.name(), self.expr(mask), self.expr(pred))
            }
            ExprKind::Atomic {
                op,
                mem,
                index,
                value,
                compare,
            } => {
                let c = compare
                    .as_ref()
                    .map(|c| format!(", {}", self.expr(c)))
                    .unwrap_or_default();
                format!(
                    "{}({}[{}]{c}, {})",
                    op.name(),
                    self.mem(*mem),
                    self.expr(index),
                    self.expr(value)
                )
            }
        }
    }
}

impl Expr {
    fn ty_of_operands(&self, lhs: &Expr) -> Scalar {
        let _ = self;
        lhs.ty
    }
}
