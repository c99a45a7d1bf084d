//! Abstract values: what an expression is across the threads of a block.
//!
//! Every value carries its [`Uniformity`] and, where it can, its exact
//! per-thread vector (`per_thread`, a `Vec` of one value per thread of the
//! block): a literal, a specialization constant or a thread-geometry
//! builtin has one, and arithmetic on values that have one has one too,
//! computed by the same evaluator the simulator uses. A load, a parameter
//! or an atomic's old value has none; its uniformity comes from the
//! lattice (a load from a thread-dependent index differs between threads)
//! and the reason travels with it as provenance steps ("`thread_idx_x()`
//! differs between the lanes of a warp", "which flows into `t`"), which the
//! findings print as notes.

use std::rc::Rc;

use crate::eval;
use crate::ir::*;

use super::affine::Affine;
use super::control::Reach;
use super::{Analyzer, Step, Uniformity};

/// One value per thread of the block, in thread order.
pub(super) type Vals = Rc<Vec<Value>>;
/// One flag per thread of the block.
pub(super) type Mask = Rc<Vec<bool>>;
/// Provenance: the steps that made a value or a control vary, printed as
/// a finding's notes.
pub(super) type Prov = Rc<Vec<Step>>;

#[derive(Debug, Clone)]
/// What one expression or local is across the threads of a block.
pub(super) struct AbstractValue {
    /// How far it is the same across threads.
    pub(super) uni: Uniformity,
    /// Its concrete value in each thread of the block, when known.
    pub(super) conc: Option<Vals>,
    /// Why it varies (empty for a grid-uniform value).
    pub(super) prov: Prov,
    /// Where `conc` is unknown: the value as a block term plus a known
    /// per-thread part, when it is one (see [`affine`]).
    pub(super) affine: Option<Affine>,
}

impl AbstractValue {
    pub(super) fn grid() -> Self {
        AbstractValue {
            uni: Uniformity::Grid,
            conc: None,
            prov: Rc::new(Vec::new()),
            affine: None,
        }
    }
    pub(super) fn same(&self, o: &AbstractValue) -> bool {
        let affine = match (&self.affine, &o.affine) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same(b),
            _ => false,
        };
        affine
            && self.uni == o.uni
            && match (&self.conc, &o.conc) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    Rc::ptr_eq(a, b)
                        || (a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.same(*y)))
                }
                _ => false,
            }
    }
}

/// The uniformity of a per-thread vector over one block cut into warps of
/// `ws` lanes.
pub(super) fn classify_vals(ws: usize, v: &[Value]) -> Uniformity {
    let Some(first) = v.first() else {
        return Uniformity::Grid;
    };
    if v.iter().all(|x| x.same(*first)) {
        return Uniformity::Grid;
    }
    if v.chunks(ws).all(|c| c.iter().all(|x| x.same(c[0]))) {
        Uniformity::Warp
    } else {
        Uniformity::Divergent
    }
}

pub(super) fn classify_mask(ws: usize, m: &[bool]) -> Uniformity {
    let v: Vec<Value> = m.iter().map(|b| Value::Bool(*b)).collect();
    classify_vals(ws, &v)
}

impl<'k> Analyzer<'k> {
    pub(super) fn map2(
        &self,
        a: &AbstractValue,
        b: &AbstractValue,
        f: impl Fn(Value, Value) -> Option<Value>,
    ) -> Option<Vals> {
        let (x, y) = (a.conc.as_ref()?, b.conc.as_ref()?);
        let v: Option<Vec<Value>> = x.iter().zip(y.iter()).map(|(p, q)| f(*p, *q)).collect();
        v.map(Rc::new)
    }

    pub(super) fn combine(&self, parts: &[&AbstractValue], conc: Option<Vals>) -> AbstractValue {
        let mut best: Option<&AbstractValue> = None;
        for p in parts {
            if best.is_none_or(|b| p.uni > b.uni) {
                best = Some(p);
            }
        }
        let uni = match &conc {
            Some(v) => classify_vals(self.warp_width, v),
            None => parts
                .iter()
                .map(|p| p.uni)
                .max()
                .unwrap_or(Uniformity::Grid),
        };
        let prov = best
            .map(|b| b.prov.clone())
            .unwrap_or_else(|| Rc::new(Vec::new()));
        AbstractValue {
            uni,
            conc,
            prov,
            affine: None,
        }
    }

    pub(super) fn lit(&self, v: Value) -> AbstractValue {
        AbstractValue {
            uni: Uniformity::Grid,
            conc: Some(Rc::new(vec![v; self.block_threads])),
            prov: Rc::new(Vec::new()),
            affine: None,
        }
    }

    pub(super) fn expr(&mut self, e: &Expr, env: &[AbstractValue], ctl: &Reach) -> AbstractValue {
        match &e.kind {
            ExprKind::Lit(v) => self.lit(*v),
            ExprKind::Local(l) => env[*l as usize].clone(),
            ExprKind::Param(_) => AbstractValue {
                affine: (e.ty == Scalar::U32).then(|| Affine::parameter(self.block_threads)),
                ..AbstractValue::grid()
            },
            ExprKind::Spec(s) => {
                let v = self.specs[*s as usize];
                self.lit(if e.ty == Scalar::I32 {
                    Value::I32(v as i32)
                } else {
                    Value::U32(v as u32)
                })
            }
            ExprKind::Builtin(b) => self.builtin(*b, e.span),
            ExprKind::Load {
                mem: Mem::Local(a),
                index,
            } => {
                // A thread reads its own array: the value is whatever this
                // thread stored, so it is as uniform as everything ever
                // stored into the array (its summary slot in `env`) and as
                // the index choosing the element.
                let i = self.expr(index, env, ctl);
                let slot = &env[self.array_slot(*a)];
                let mut v = self.combine(&[slot, &i], None);
                if i.uni > slot.uni && i.uni > Uniformity::Block {
                    let what = format!("which indexes the load `{}`", self.k.snippet(e.span));
                    v.prov = self.push_prov(&i.prov, self.step(e.span, what));
                }
                v
            }
            ExprKind::Load { mem, index } => {
                let i = self.expr(index, env, ctl);
                let floor = if matches!(mem, Mem::Shared(_)) {
                    Uniformity::Block
                } else {
                    Uniformity::Grid
                };
                let mut v = AbstractValue {
                    uni: i.uni.max(floor),
                    conc: None,
                    prov: i.prov.clone(),
                    affine: None,
                };
                if i.uni > Uniformity::Block {
                    let what = format!("which indexes the load `{}`", self.k.snippet(e.span));
                    v.prov = self.push_prov(&i.prov, self.step(e.span, what));
                }
                v
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg, env, ctl);
                let conc = a.conc.as_ref().and_then(|v| {
                    v.iter()
                        .map(|x| eval::unary(*op, *x).ok())
                        .collect::<Option<Vec<_>>>()
                        .map(Rc::new)
                });
                self.combine(&[&a], conc)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs, env, ctl);
                let b = self.expr(rhs, env, ctl);
                let op = *op;
                let conc = self.map2(&a, &b, |x, y| match op {
                    BinOp::And => Some(Value::Bool(
                        matches!(x, Value::Bool(true)) && matches!(y, Value::Bool(true)),
                    )),
                    BinOp::Or => Some(Value::Bool(
                        matches!(x, Value::Bool(true)) || matches!(y, Value::Bool(true)),
                    )),
                    _ => eval::binary(op, x, y).ok(),
                });
                let mut v = self.combine(&[&a, &b], conc);
                if v.conc.is_none() && e.ty == Scalar::U32 {
                    let form = |x: &AbstractValue| match &x.conc {
                        Some(c) => Affine::known(c),
                        None => x.affine.clone(),
                    };
                    if let (Some(fa), Some(fb)) = (form(&a), form(&b)) {
                        if let Some(r) = Affine::binary(op, &fa, &fb) {
                            v.uni = r.uniformity(self.warp_width);
                            if r.is_known() {
                                v.conc = Some(r.per_thread.clone());
                            } else {
                                v.affine = Some(r);
                            }
                        }
                    }
                }
                v
            }
            ExprKind::Cast(arg) | ExprKind::BitCast(arg) => {
                let a = self.expr(arg, env, ctl);
                let to = e.ty;
                let convert = if matches!(e.kind, ExprKind::Cast(_)) {
                    eval::cast
                } else {
                    eval::bitcast
                };
                let conc = a
                    .conc
                    .as_ref()
                    .map(|v| Rc::new(v.iter().map(|x| convert(*x, to)).collect::<Vec<_>>()));
                self.combine(&[&a], conc)
            }
            ExprKind::Math { func, args } => {
                let vals: Vec<AbstractValue> =
                    args.iter().map(|a| self.expr(a, env, ctl)).collect();
                let conc = if vals.iter().all(|v| v.conc.is_some()) {
                    (0..self.block_threads)
                        .map(|t| {
                            let xs: Vec<Value> =
                                vals.iter().map(|v| v.conc.as_ref().unwrap()[t]).collect();
                            eval::math(*func, &xs).ok()
                        })
                        .collect::<Option<Vec<_>>>()
                        .map(Rc::new)
                } else {
                    None
                };
                let refs: Vec<&AbstractValue> = vals.iter().collect();
                self.combine(&refs, conc)
            }
            ExprKind::Shuffle {
                kind,
                mask,
                value,
                arg,
            } => {
                let m = self.expr(mask, env, ctl);
                let v = self.expr(value, env, ctl);
                let a = self.expr(arg, env, ctl);
                self.collective(kind.name(), &m, ctl, e.span);
                let uni = if v.uni <= Uniformity::Warp && a.uni <= Uniformity::Warp {
                    v.uni
                } else if *kind == ShuffleKind::Idx && a.uni <= Uniformity::Warp {
                    // Every lane reads the same source lane: a broadcast,
                    // the same value in the whole warp.
                    Uniformity::Warp
                } else {
                    Uniformity::Divergent
                };
                let what = format!("which is exchanged by `{}`", self.k.snippet(e.span));
                let src = if v.uni >= a.uni { &v } else { &a };
                let prov = if uni > Uniformity::Grid {
                    self.push_prov(&src.prov, self.step(e.span, what))
                } else {
                    src.prov.clone()
                };
                AbstractValue {
                    uni,
                    conc: None,
                    prov,
                    affine: None,
                }
            }
            ExprKind::Vote { kind, mask, pred } => {
                let m = self.expr(mask, env, ctl);
                let p = self.expr(pred, env, ctl);
                self.collective(kind.name(), &m, ctl, e.span);
                let uni = p.uni.min(Uniformity::Warp).max(if ctl.mask.is_none() {
                    ctl.uni.min(Uniformity::Warp)
                } else {
                    Uniformity::Grid
                });
                AbstractValue {
                    uni,
                    conc: None,
                    prov: p.prov.clone(),
                    affine: None,
                }
            }
            ExprKind::Atomic {
                index,
                value,
                compare,
                ..
            } => {
                self.expr(index, env, ctl);
                self.expr(value, env, ctl);
                if let Some(c) = compare {
                    self.expr(c, env, ctl);
                }
                let what = format!(
                    "`{}` returns a different old value to each thread",
                    self.k.snippet(e.span)
                );
                AbstractValue {
                    uni: Uniformity::Divergent,
                    conc: None,
                    prov: Rc::new(vec![self.step(e.span, what)]),
                    affine: None,
                }
            }
        }
    }

    /// The slot of a local array's summary in `env`: after the locals.
    pub(super) fn array_slot(&self, a: ArrayId) -> usize {
        self.k.locals.len() + a as usize
    }

    /// `arr[index] = value` on a thread's own array. The array has one
    /// summary value for all its elements, updated weakly (the other
    /// elements keep theirs): it becomes as thread-dependent as the value
    /// stored, as the index (threads writing different elements leave the
    /// array different between them) and as the control (the threads that
    /// skip a store under a divergent branch keep their old elements).
    pub(super) fn store_array(
        &self,
        env: &mut [AbstractValue],
        a: ArrayId,
        index: &AbstractValue,
        value: &AbstractValue,
        ctl: &Reach,
        span: SpanId,
    ) {
        let slot = self.array_slot(a);
        let old = env[slot].clone();
        let mut v = self.combine(&[&old, value, index], None);
        if ctl.uni > v.uni {
            v.uni = ctl.uni;
            v.prov = ctl.prov.clone();
        }
        if v.uni > old.uni {
            let name = &self.k.arrays[a as usize].name;
            v.prov = self.push_prov(
                &v.prov,
                self.step(
                    span,
                    format!("which is stored into the local array `{name}`"),
                ),
            );
        }
        env[slot] = v;
    }

    pub(super) fn builtin(&self, b: Builtin, span: SpanId) -> AbstractValue {
        let vals: Option<Vec<Value>> = (0..self.block_threads as u32)
            .map(|t| {
                self.launch
                    .builtin_in_block(b, t, self.target.warp_width())
                    .map(Value::U32)
            })
            .collect();
        let block = self.launch.block;
        match vals {
            Some(v) => {
                let uni = classify_vals(self.warp_width, &v);
                let text = match uni {
                    Uniformity::Grid => String::new(),
                    Uniformity::Block => unreachable!("concrete builtins do not vary by block"),
                    Uniformity::Warp => format!(
                        "`{}` is the same within a warp but differs between the {} warps of a {} block",
                        b.source_name(),
                        self.launch.warps_per_block(self.target.warp_width()),
                        block
                    ),
                    Uniformity::Divergent => {
                        format!(
                            "`{}` differs between the lanes of a warp at block {}",
                            b.source_name(),
                            block
                        )
                    }
                };
                let prov = if text.is_empty() {
                    Vec::new()
                } else {
                    vec![self.step(span, text)]
                };
                AbstractValue {
                    uni,
                    conc: Some(Rc::new(v)),
                    prov: Rc::new(prov),
                    affine: None,
                }
            }
            None => AbstractValue {
                uni: Uniformity::Block,
                conc: None,
                prov: Rc::new(vec![self.step(
                    span,
                    format!("`{}` differs between blocks", b.source_name()),
                )]),
                affine: match b {
                    // Different in every block when the grid extends along
                    // this axis only.
                    Builtin::BlockIdx(axis) => {
                        let g = self.launch.grid;
                        Some(Affine::block_index(
                            self.block_threads,
                            g.count() == g.get(axis) as u64,
                        ))
                    }
                    _ => None,
                },
            },
        }
    }
}
