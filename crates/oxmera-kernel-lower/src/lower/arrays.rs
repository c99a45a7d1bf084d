//! Arrays: a thread's own (register) arrays, `let mut acc = [0.0f32; 4];`
//! and the 2-D `let mut c = [[0.0f32; 4]; 4];`; shared arrays, 1-D
//! `shared::<T>(LEN)`, 2-D `shared::<[T; COLS]>(ROWS)` and the launch-sized
//! `shared_dynamic::<T>()`; and the places that index them, `a[i]` and
//! `a[r][c]`.
//!
//! Every array is stored row-major and addressed through one flat element
//! index, so a 2-D access `a[r][c]` becomes `a[r * COLS + c]` here and
//! nothing downstream needs a second kind of index. The array keeps its
//! row length, so diagnostics and the printer can still say `[r][c]`.
//!
//! A local array's `let` is lowered to a loop that fills every element
//! (the value evaluated once, before it), because a `let` inside a loop
//! makes a fresh array on every iteration, as in Rust: the IR has no
//! declaration statement that could be hoisted by mistake.

use oxmera_kernel_ir::ir::*;

use super::types::scalar_type;
use super::{Binding, Lowering};
use crate::span::err;

/// The hint for a malformed local array.
const LOCAL_HINT: &str = "write `let mut acc = [0.0f32; 4];` or the 2-D `let mut c = [[0.0f32; 4]; 4];` with lengths built from literals, `const` items and const generics";

/// The hint for a malformed shared array.
const SHARED_HINT: &str = "write `let s = shared::<f32>(LEN);`, the 2-D `let t = shared::<[f32; COLS]>(ROWS);` or the launch-sized `let d = shared_dynamic::<f32>();`, with lengths built from literals and const generics";

impl Lowering {
    /// `let [mut] name [: [T; N]] = [e; N];` (or 2-D, or `[a, b, ..]`):
    /// declares a local array and fills it. Returns `false` when the `let`
    /// is not an array one.
    pub(super) fn local_array_decl(
        &mut self,
        local: &syn::Local,
        name: &str,
        mutable: bool,
        ann: Option<&syn::Type>,
        init: &syn::Expr,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<bool> {
        let is_array_init = matches!(init, syn::Expr::Repeat(_) | syn::Expr::Array(_));
        let ann_shape = match ann {
            Some(t @ syn::Type::Array(_)) => Some(self.array_type(t)?),
            _ => None,
        };
        if !is_array_init {
            if ann_shape.is_some() {
                return Err(err(
                    init,
                    "a local array is initialized with `[value; N]`",
                    LOCAL_HINT,
                ));
            }
            return Ok(false);
        }
        if let Some(h) = self.inlining.last() {
            return Err(err(
                init,
                &format!("a local array declared inside the helper `{h}`"),
                "declare it in the kernel; a helper takes and returns scalars",
            ));
        }
        let (value, shape) = self.array_init(init, ann_shape.as_ref().map(|s| s.0))?;
        if let Some((_, len, row_len)) = &ann_shape {
            if (len, row_len) != (&shape.0, &shape.1) {
                return Err(err(
                    local,
                    "the annotated array type differs from the initializer's shape",
                    "write the same lengths in both, e.g. `let mut a: [f32; 4] = [0.0; 4];`",
                ));
            }
        }
        let span = self.span(local);
        let elem = match &value {
            ArrayInit::Fill(e) => e.ty,
            ArrayInit::Elements(es) => es[0].ty,
        };
        let id = self.kernel.arrays.len() as ArrayId;
        self.kernel.arrays.push(LocalArray {
            name: name.to_string(),
            elem,
            len: shape.0.clone(),
            row_len: shape.1,
            span,
        });
        match value {
            ArrayInit::Fill(v) => self.fill(id, name, v, &shape.0, span, out),
            ArrayInit::Elements(es) => {
                for (k, v) in es.into_iter().enumerate() {
                    let index = Expr {
                        kind: ExprKind::Lit(Value::U32(k as u32)),
                        ty: Scalar::U32,
                        span,
                    };
                    out.push(Stmt {
                        kind: StmtKind::Store {
                            mem: Mem::Local(id),
                            index,
                            value: v,
                        },
                        span,
                    });
                }
            }
        }
        self.bind(name.to_string(), Binding::Array(id, mutable));
        Ok(true)
    }

    /// `[T; N]` or `[[T; C]; R]`: the element type, the length and the
    /// row length.
    fn array_type(&mut self, t: &syn::Type) -> syn::Result<(Scalar, ConstExpr, Option<ConstExpr>)> {
        let syn::Type::Array(a) = t else {
            return Err(err(t, "not an array type", LOCAL_HINT));
        };
        let n = self.array_len(&a.len)?;
        if let Some(s) = scalar_type(&a.elem) {
            return Ok((s, n, None));
        }
        let syn::Type::Array(inner) = &*a.elem else {
            return Err(err(
                &a.elem,
                "arrays hold f32, i32, u32 or bool",
                LOCAL_HINT,
            ));
        };
        let cols = self.array_len(&inner.len)?;
        let s = scalar_type(&inner.elem).ok_or_else(|| {
            err(
                &inner.elem,
                "arrays have one or two dimensions of f32, i32, u32 or bool",
                LOCAL_HINT,
            )
        })?;
        Ok((
            s,
            ConstExpr::Mul(Box::new(n), Box::new(cols.clone())),
            Some(cols),
        ))
    }

    /// A length: a compile-time constant that is not zero.
    fn array_len(&mut self, e: &syn::Expr) -> syn::Result<ConstExpr> {
        let c = self.const_expr(e)?;
        if c.eval(&self.kernel.default_specs()) == Some(0) {
            return Err(err(
                e,
                "an array of no elements",
                "give it a length of at least 1",
            ));
        }
        Ok(c)
    }

    /// The initializer: `[e; N]`, `[[e; C]; R]` or `[a, b, ..]`, with its
    /// shape (length, row length).
    #[allow(clippy::type_complexity)]
    fn array_init(
        &mut self,
        init: &syn::Expr,
        hint: Option<Scalar>,
    ) -> syn::Result<(ArrayInit, (ConstExpr, Option<ConstExpr>))> {
        match init {
            syn::Expr::Repeat(r) => {
                let n = self.array_len(&r.len)?;
                if let syn::Expr::Repeat(inner) = &*r.expr {
                    let cols = self.array_len(&inner.len)?;
                    if matches!(&*inner.expr, syn::Expr::Repeat(_) | syn::Expr::Array(_)) {
                        return Err(err(
                            &inner.expr,
                            "arrays have at most two dimensions",
                            LOCAL_HINT,
                        ));
                    }
                    let v = self.scalar_init(&inner.expr, hint)?;
                    let len = ConstExpr::Mul(Box::new(n), Box::new(cols.clone()));
                    return Ok((ArrayInit::Fill(v), (len, Some(cols))));
                }
                if let syn::Expr::Array(a) = &*r.expr {
                    return Err(err(
                        a,
                        "a 2-D array is filled with one value",
                        "write `[[0.0f32; COLS]; ROWS]` and store the elements after",
                    ));
                }
                let v = self.scalar_init(&r.expr, hint)?;
                Ok((ArrayInit::Fill(v), (n, None)))
            }
            syn::Expr::Array(a) => {
                if a.elems.is_empty() {
                    return Err(err(a, "an array of no elements", LOCAL_HINT));
                }
                let mut es: Vec<Expr> = Vec::new();
                for e in &a.elems {
                    if matches!(e, syn::Expr::Array(_) | syn::Expr::Repeat(_)) {
                        return Err(err(
                            e,
                            "a 2-D array is written `[[value; COLS]; ROWS]`",
                            LOCAL_HINT,
                        ));
                    }
                    let h = es.first().map(|f| f.ty).or(hint);
                    let v = match h {
                        Some(t) => self.expect(e, t)?,
                        None => self.expr(e, None)?,
                    };
                    es.push(v);
                }
                let n = ConstExpr::Lit(es.len() as u64);
                Ok((ArrayInit::Elements(es), (n, None)))
            }
            _ => Err(err(init, "not an array initializer", LOCAL_HINT)),
        }
    }

    /// The value a `[e; N]` repeats.
    fn scalar_init(&mut self, e: &syn::Expr, hint: Option<Scalar>) -> syn::Result<Expr> {
        match hint {
            Some(t) => self.expect(e, t),
            None => self.expr(e, None),
        }
    }

    /// `for k in 0..len { arr[k] = v }`, with `v` computed once before it
    /// unless it is a literal.
    fn fill(
        &mut self,
        id: ArrayId,
        name: &str,
        v: Expr,
        len: &ConstExpr,
        span: SpanId,
        out: &mut Vec<Stmt>,
    ) {
        let value = if let ExprKind::Lit(_) = v.kind {
            v
        } else {
            let ty = v.ty;
            let tmp = self.hidden_local(format!("{name}_init"), ty, span);
            out.push(Stmt {
                kind: StmtKind::Assign {
                    local: tmp,
                    value: v,
                },
                span,
            });
            Expr {
                kind: ExprKind::Local(tmp),
                ty,
                span,
            }
        };
        let k = self.hidden_local(format!("{name}_i"), Scalar::U32, span);
        let lit = |v: u32| Expr {
            kind: ExprKind::Lit(Value::U32(v)),
            ty: Scalar::U32,
            span,
        };
        let end = self.const_value(len, span);
        out.push(Stmt {
            kind: StmtKind::For {
                var: k,
                start: lit(0),
                end,
                inclusive: false,
                step: lit(1),
                body: vec![Stmt {
                    kind: StmtKind::Store {
                        mem: Mem::Local(id),
                        index: Expr {
                            kind: ExprKind::Local(k),
                            ty: Scalar::U32,
                            span,
                        },
                        value,
                    },
                    span,
                }],
            },
            span,
        });
    }

    /// A local no source name refers to (not bound in any scope).
    fn hidden_local(&mut self, name: String, ty: Scalar, span: SpanId) -> LocalId {
        let id = self.kernel.locals.len() as LocalId;
        self.kernel.locals.push(Local {
            name,
            ty,
            mutable: true,
            span,
        });
        id
    }

    /// A compile-time length as a `u32` expression (specialization
    /// constants stay symbolic, so one IR serves every specialization).
    pub(super) fn const_value(&self, c: &ConstExpr, span: SpanId) -> Expr {
        let kind = match c {
            ConstExpr::Lit(v) => ExprKind::Lit(Value::U32(*v as u32)),
            ConstExpr::Spec(s) => {
                let spec = Expr {
                    kind: ExprKind::Spec(*s),
                    ty: self.kernel.specs[*s as usize].ty,
                    span,
                };
                if spec.ty == Scalar::U32 {
                    return spec;
                }
                ExprKind::Cast(Box::new(spec))
            }
            ConstExpr::Add(a, b)
            | ConstExpr::Sub(a, b)
            | ConstExpr::Mul(a, b)
            | ConstExpr::Div(a, b) => {
                let op = match c {
                    ConstExpr::Add(..) => BinOp::Add,
                    ConstExpr::Sub(..) => BinOp::Sub,
                    ConstExpr::Mul(..) => BinOp::Mul,
                    _ => BinOp::Div,
                };
                ExprKind::Binary {
                    op,
                    lhs: Box::new(self.const_value(a, span)),
                    rhs: Box::new(self.const_value(b, span)),
                }
            }
        };
        Expr {
            kind,
            ty: Scalar::U32,
            span,
        }
    }

    /// `shared::<T>(LEN)`, `shared::<[T; COLS]>(ROWS)` or
    /// `shared_dynamic::<T>()`: declares the array; `None` when `e` is no
    /// such call.
    pub(super) fn shared_decl(
        &mut self,
        e: &syn::Expr,
        name: &str,
    ) -> syn::Result<Option<SharedId>> {
        let syn::Expr::Call(c) = e else {
            return Ok(None);
        };
        let syn::Expr::Path(p) = &*c.func else {
            return Ok(None);
        };
        let Some(seg) = p.path.segments.last() else {
            return Ok(None);
        };
        let dynamic = seg.ident == "shared_dynamic";
        if !(seg.ident == "shared" || dynamic) || p.path.segments.len() != 1 {
            return Ok(None);
        }
        let syn::PathArguments::AngleBracketed(ab) = &seg.arguments else {
            return Err(err(c, "a shared array needs its element type", SHARED_HINT));
        };
        let ty = match ab.args.first() {
            Some(syn::GenericArgument::Type(t)) if ab.args.len() == 1 => t,
            _ => {
                return Err(err(
                    ab,
                    "a shared array takes one element type",
                    SHARED_HINT,
                ));
            }
        };
        let (elem, row_len) = match (scalar_type(ty), ty) {
            (Some(s), _) => (s, None),
            (None, syn::Type::Array(a)) if !dynamic => {
                let s = scalar_type(&a.elem).ok_or_else(|| {
                    err(
                        &a.elem,
                        "shared arrays have one or two dimensions of f32, i32, u32 or bool",
                        SHARED_HINT,
                    )
                })?;
                (s, Some(self.array_len(&a.len)?))
            }
            _ => {
                return Err(err(
                    ab,
                    if dynamic {
                        "a dynamic shared array holds f32, i32, u32 or bool"
                    } else {
                        "shared arrays hold scalars (f32, f64, f16, bf16, i32, i64, u32, u64, u8, u16, bool) or rows `[T; COLS]` of them"
                    },
                    SHARED_HINT,
                ));
            }
        };
        let len = if dynamic {
            if !c.args.is_empty() {
                return Err(err(
                    c,
                    "`shared_dynamic` takes no length: the launch gives it",
                    "write `shared_dynamic::<f32>()` and launch with the bytes (`--shared-bytes N`)",
                ));
            }
            if let Some(other) = self.kernel.dynamic_shared() {
                return Err(err(
                    c,
                    &format!(
                        "a second dynamic shared array (`{}` is one already)",
                        other.1.name
                    ),
                    "declare one and index its parts at offsets: CUDA's dynamic arrays all start at the same address",
                ));
            }
            ConstExpr::Lit(0)
        } else {
            if c.args.len() != 1 {
                return Err(err(c, "`shared` takes one length", SHARED_HINT));
            }
            let n = self.const_expr(&c.args[0])?;
            match &row_len {
                Some(cols) => ConstExpr::Mul(Box::new(n), Box::new(cols.clone())),
                None => n,
            }
        };
        let span = self.span(e);
        let id = self.kernel.shared.len() as SharedId;
        self.kernel.shared.push(SharedArray {
            name: name.to_string(),
            elem,
            len,
            row_len,
            dynamic,
            span,
        });
        Ok(Some(id))
    }

    /// The memory, element type and flat element index of `a[i]` or
    /// `a[r][c]`.
    pub(super) fn place(
        &mut self,
        ix: &syn::ExprIndex,
        write: bool,
    ) -> syn::Result<(Mem, Scalar, Expr)> {
        let two_d = match &*ix.expr {
            syn::Expr::Index(inner) => Some(inner),
            _ => None,
        };
        let base = two_d.map(|i| &*i.expr).unwrap_or(&*ix.expr);
        let (mem, elem) = self.memory(base, write)?;
        let row_len = self.row_len_of(mem);
        let name = self.kernel.mem_name(mem).to_string();
        match (two_d, row_len) {
            (Some(inner), Some(cols)) => {
                let r = self.index(&inner.index)?;
                let c = self.index(&ix.index)?;
                let span = self.span(ix);
                Ok((mem, elem, self.flatten(r, c, &cols, span)))
            }
            (Some(_), None) => Err(err(
                ix,
                &format!("`{name}` has one dimension"),
                &format!("index it as `{name}[i]`"),
            )),
            (None, Some(_)) => Err(err(
                ix,
                &format!("`{name}` is a 2-D array"),
                &format!("index an element as `{name}[row][col]`"),
            )),
            (None, None) => Ok((mem, elem, self.index(&ix.index)?)),
        }
    }

    /// Elements per row of a 2-D memory.
    pub(super) fn row_len_of(&self, mem: Mem) -> Option<ConstExpr> {
        match mem {
            Mem::Global(_) => None,
            Mem::Shared(s) => self.kernel.shared[s as usize].row_len.clone(),
            Mem::Local(a) => self.kernel.arrays[a as usize].row_len.clone(),
        }
    }

    /// `r * cols + c` in the indices' type (`i32` only when both are, so
    /// that a negative index is reported as one; else `u32`).
    fn flatten(&self, r: Expr, c: Expr, cols: &ConstExpr, span: SpanId) -> Expr {
        let ty = if r.ty == Scalar::I32 && c.ty == Scalar::I32 {
            Scalar::I32
        } else {
            Scalar::U32
        };
        let to = |e: Expr| {
            if e.ty == ty {
                e
            } else {
                Expr {
                    span: e.span,
                    kind: ExprKind::Cast(Box::new(e)),
                    ty,
                }
            }
        };
        let cols = to(self.const_value(cols, span));
        let bin = |op, lhs: Expr, rhs: Expr| Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            ty,
            span,
        };
        bin(BinOp::Add, bin(BinOp::Mul, to(r), cols), to(c))
    }
}

/// What a local array starts with.
enum ArrayInit {
    /// Every element the same value (`[e; N]`).
    Fill(Expr),
    /// Each element its own (`[a, b, c]`).
    Elements(Vec<Expr>),
}
