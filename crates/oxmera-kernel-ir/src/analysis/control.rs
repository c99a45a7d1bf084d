//! Control: which threads of the block reach each statement.
//!
//! A [`Reach`] is exact (`mask`, one flag per thread) while every condition
//! on the way was launch-determined; past a data-dependent one it keeps a
//! `bound` (the threads no known condition excluded) and a uniformity (a
//! warp-uniform condition keeps whole warps together). `if` splits it,
//! and the branches' values merge per thread where the condition is
//! known. Loops iterate to a fixed point of their carried values (at most
//! eight rounds); a `for` whose trip count differs between threads is
//! judged on its first split iteration, whose mask is the witness. Threads
//! that leave — `return`, `break`, `continue`, collected as [`Exits`] — are
//! taken out of the rest of their region, so `if t >= 16 { return; }`
//! before a barrier is the divergent barrier it is.

use std::rc::Rc;

use crate::ir::*;

use super::values::{AbstractValue, Mask, Prov, classify_mask, classify_vals};
use super::{Analyzer, Uniformity};

/// Which threads of the block reach a point of the kernel.
#[derive(Debug, Clone)]
pub(super) struct Reach {
    /// Threads of the block reaching this point, when known exactly.
    pub(super) mask: Option<Mask>,
    /// Threads that may reach it: `mask` when that is known, otherwise the
    /// threads that no known condition has excluded. After `if i >= n {
    /// return; }` (data) and `if thread_idx_x() == 0` (known), the mask is
    /// unknown but at most thread 0 of each block stores — which is what
    /// tells a per-block store from a race.
    pub(super) bound: Mask,
    /// How far the decision to reach it is the same across threads.
    pub(super) uni: Uniformity,
    /// Why it varies: the conditions and early exits on the way.
    pub(super) prov: Prov,
}

impl Reach {
    pub(super) fn all(block_threads: usize) -> Self {
        let all = Rc::new(vec![true; block_threads]);
        Reach {
            mask: Some(all.clone()),
            bound: all,
            uni: Uniformity::Grid,
            prov: Rc::new(Vec::new()),
        }
    }
    pub(super) fn dead(&self) -> bool {
        self.mask.as_ref().is_some_and(|m| m.iter().all(|b| !b))
    }
    pub(super) fn join(a: Option<Reach>, b: Option<Reach>) -> Option<Reach> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(a), Some(b)) => {
                let mask = match (&a.mask, &b.mask) {
                    (Some(x), Some(y)) => Some(Rc::new(
                        x.iter().zip(y.iter()).map(|(p, q)| *p || *q).collect(),
                    )),
                    _ => None,
                };
                let prov = if b.uni > a.uni {
                    b.prov.clone()
                } else {
                    a.prov.clone()
                };
                let bound = Rc::new(
                    a.bound
                        .iter()
                        .zip(b.bound.iter())
                        .map(|(p, q)| *p || *q)
                        .collect(),
                );
                Some(Reach {
                    mask,
                    bound,
                    uni: a.uni.max(b.uni),
                    prov,
                })
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
/// The threads that left a region, by how: they skip the rest of it.
pub(super) struct Exits {
    /// By `return`: gone for the rest of the kernel.
    pub(super) ret: Option<Reach>,
    /// By `break`: gone for the rest of the loop.
    pub(super) brk: Option<Reach>,
    /// By `continue`: gone for the rest of this iteration.
    pub(super) cont: Option<Reach>,
}

impl Exits {
    pub(super) fn join(self, o: Exits) -> Exits {
        Exits {
            ret: Reach::join(self.ret, o.ret),
            brk: Reach::join(self.brk, o.brk),
            cont: Reach::join(self.cont, o.cont),
        }
    }
    pub(super) fn all(&self) -> Option<Reach> {
        Reach::join(
            Reach::join(self.ret.clone(), self.brk.clone()),
            self.cont.clone(),
        )
    }
}

impl<'k> Analyzer<'k> {
    /// Control restricted to threads where `c` equals `want`.
    pub(super) fn and(&self, ctl: &Reach, c: &AbstractValue, want: bool, span: SpanId) -> Reach {
        // The threads of `m` where the condition is known to be `want`.
        let keep = |m: &Mask, v: &[Value]| -> Mask {
            Rc::new(
                m.iter()
                    .zip(v.iter())
                    .map(|(a, x)| *a && matches!(x, Value::Bool(b) if *b == want))
                    .collect(),
            )
        };
        let mask = match (&ctl.mask, &c.conc) {
            (Some(m), Some(v)) => Some(keep(m, v)),
            // A block-uniform condition keeps all or none of the threads.
            (Some(m), None) if c.uni <= Uniformity::Block => Some(m.clone()),
            _ => None,
        };
        let uni = match &mask {
            Some(m) => classify_mask(self.warp_width, m).max(ctl.uni.min(Uniformity::Block)),
            None => ctl.uni.max(c.uni),
        };
        let prov = if uni > ctl.uni {
            let what = format!("which decides the condition `{}`", self.k.snippet(span));
            self.push_prov(&c.prov, self.step(span, what))
        } else {
            ctl.prov.clone()
        };
        let bound = match (&mask, &c.conc) {
            (Some(m), _) => m.clone(),
            (None, Some(v)) => keep(&ctl.bound, v),
            (None, None) => ctl.bound.clone(),
        };
        Reach {
            mask,
            bound,
            uni,
            prov,
        }
    }

    /// Control after some threads left (returned, broke or continued).
    pub(super) fn minus(&self, ctl: &Reach, left: &Reach, span: SpanId, how: &str) -> Reach {
        // The threads of `m` that did not leave.
        let stay = |m: &Mask, l: &Mask| -> Mask {
            Rc::new(m.iter().zip(l.iter()).map(|(a, b)| *a && !b).collect())
        };
        let mask = match (&ctl.mask, &left.mask) {
            (Some(m), Some(l)) => Some(stay(m, l)),
            (Some(m), None) if left.uni <= Uniformity::Block => Some(m.clone()),
            _ => None,
        };
        let uni = match &mask {
            Some(m) => classify_mask(self.warp_width, m).max(ctl.uni.min(Uniformity::Block)),
            None => ctl.uni.max(left.uni),
        };
        let prov = if uni > ctl.uni {
            let what = format!(
                "under which some threads leave early ({how} at `{}`)",
                self.k.snippet(span)
            );
            self.push_prov(&left.prov, self.step(span, what))
        } else {
            ctl.prov.clone()
        };
        let bound = match (&mask, &left.mask) {
            (Some(m), _) => m.clone(),
            (None, Some(l)) => stay(&ctl.bound, l),
            (None, None) => ctl.bound.clone(),
        };
        Reach {
            mask,
            bound,
            uni,
            prov,
        }
    }

    pub(super) fn block(
        &mut self,
        stmts: &[Stmt],
        env: &mut [AbstractValue],
        ctl: &Reach,
    ) -> Exits {
        let mut cur = ctl.clone();
        let mut leave = Exits::default();
        for s in stmts {
            if cur.dead() {
                break;
            }
            let l = self.stmt(s, env, &cur);
            if let Some(all) = l.all() {
                let how = if l.ret.is_some() {
                    "return"
                } else if l.brk.is_some() {
                    "break"
                } else {
                    "continue"
                };
                cur = self.minus(&cur, &all, s.span, how);
                leave = leave.join(l);
            }
        }
        leave
    }

    pub(super) fn assign(
        &self,
        env: &mut [AbstractValue],
        local: LocalId,
        v: AbstractValue,
        ctl: &Reach,
        span: SpanId,
    ) {
        let name = &self.k.locals[local as usize].name;
        let mut v = v;
        // Writing under a partial mask keeps the old value in the other threads.
        if let (Some(m), Some(new)) = (&ctl.mask, &v.conc) {
            if m.iter().any(|b| !b) {
                v.conc = env[local as usize].conc.as_ref().map(|old| {
                    Rc::new(
                        m.iter()
                            .zip(new.iter().zip(old.iter()))
                            .map(|(b, (n, o))| if *b { *n } else { *o })
                            .collect(),
                    )
                });
                if let Some(c) = &v.conc {
                    v.uni = classify_vals(self.warp_width, c);
                }
            }
        } else if v.conc.is_some() && ctl.mask.is_none() {
            v.conc = None;
        }
        // The block-term form holds where every thread of the block took
        // the new value.
        if !ctl.mask.as_ref().is_some_and(|m| m.iter().all(|b| *b)) {
            v.affine = None;
        }
        if v.conc.is_none() {
            let partial = match &ctl.mask {
                // Threads outside the mask keep the old value: the local
                // mixes the two along the mask (two different uniform
                // values under `lane_id() == 0` differ between lanes).
                Some(m) if m.iter().any(|b| !b) && !v.same(&env[local as usize]) => {
                    classify_mask(self.warp_width, m).max(env[local as usize].uni)
                }
                Some(_) => Uniformity::Grid,
                None => ctl.uni,
            };
            v.uni = v.uni.max(partial);
            if ctl.mask.is_none() && ctl.uni > Uniformity::Grid && v.prov.is_empty() {
                v.prov = ctl.prov.clone();
            }
        }
        if v.uni > Uniformity::Grid {
            v.prov = self.push_prov(
                &v.prov,
                self.step(span, format!("which flows into `{name}`")),
            );
        }
        env[local as usize] = v;
    }

    pub(super) fn stmt(&mut self, s: &Stmt, env: &mut [AbstractValue], ctl: &Reach) -> Exits {
        match &s.kind {
            StmtKind::Assign { local, value } => {
                let v = self.expr(value, env, ctl);
                self.assign(env, *local, v, ctl, s.span);
                Exits::default()
            }
            StmtKind::Store {
                mem: Mem::Local(a),
                index,
                value,
            } => {
                let i = self.expr(index, env, ctl);
                let v = self.expr(value, env, ctl);
                self.store_array(env, *a, &i, &v, ctl, s.span);
                Exits::default()
            }
            StmtKind::Store { mem, index, value } => {
                let i = self.expr(index, env, ctl);
                self.expr(value, env, ctl);
                if let Mem::Global(_) = mem {
                    self.write_race(*mem, &i, ctl, s.span);
                }
                Exits::default()
            }
            StmtKind::Eval(e) => {
                self.expr(e, env, ctl);
                Exits::default()
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond, env, ctl);
                let tc = self.and(ctl, &c, true, cond.span);
                let ec = self.and(ctl, &c, false, cond.span);
                let mut te = env.to_vec();
                let mut ee = env.to_vec();
                let lt = if tc.dead() {
                    Exits::default()
                } else {
                    self.block(then, &mut te, &tc)
                };
                let le = if ec.dead() {
                    Exits::default()
                } else {
                    self.block(otherwise, &mut ee, &ec)
                };
                let branch_uni = tc.uni.max(ec.uni);
                for i in 0..env.len() {
                    let (t, e) = (&te[i], &ee[i]);
                    if t.same(e) {
                        env[i] = t.clone();
                        continue;
                    }
                    let conc = match (&c.conc, &t.conc, &e.conc) {
                        (Some(cv), Some(tv), Some(ev)) => Some(Rc::new(
                            cv.iter()
                                .zip(tv.iter().zip(ev.iter()))
                                .map(|(c, (t, e))| {
                                    if matches!(c, Value::Bool(true)) {
                                        *t
                                    } else {
                                        *e
                                    }
                                })
                                .collect::<Vec<_>>(),
                        )),
                        _ => None,
                    };
                    let (uni, prov) = match &conc {
                        Some(v) => (
                            classify_vals(self.warp_width, v),
                            if t.uni >= e.uni {
                                t.prov.clone()
                            } else {
                                e.prov.clone()
                            },
                        ),
                        None => {
                            let u = t.uni.max(e.uni).max(branch_uni);
                            let p = if t.uni >= u {
                                t.prov.clone()
                            } else if e.uni >= u {
                                e.prov.clone()
                            } else {
                                let what = format!(
                                    "which decides the condition `{}`",
                                    self.k.snippet(cond.span)
                                );
                                self.push_prov(&c.prov, self.step(cond.span, what))
                            };
                            (u, p)
                        }
                    };
                    env[i] = AbstractValue {
                        uni,
                        conc,
                        prov,
                        affine: None,
                    };
                }
                lt.join(le)
            }
            StmtKind::For {
                var,
                start,
                end,
                inclusive,
                step,
                body,
            } => {
                let a = self.expr(start, env, ctl);
                let b = self.expr(end, env, ctl);
                let st = self.expr(step, env, ctl);
                let (body_ctl, var_val) = self.for_control(ctl, &a, &b, &st, *inclusive, s.span);
                self.run_loop(
                    env,
                    ctl,
                    body_ctl,
                    body,
                    None,
                    Some((*var, var_val)),
                    s.span,
                )
            }
            StmtKind::While { cond, body } => {
                self.run_loop(env, ctl, ctl.clone(), body, Some(cond), None, s.span)
            }
            StmtKind::Break => Exits {
                brk: Some(ctl.clone()),
                ..Exits::default()
            },
            StmtKind::Continue => Exits {
                cont: Some(ctl.clone()),
                ..Exits::default()
            },
            StmtKind::Return => Exits {
                ret: Some(ctl.clone()),
                ..Exits::default()
            },
            StmtKind::Barrier => {
                self.barrier(ctl, s.span);
                Exits::default()
            }
            // A warp barrier is a warp collective: every lane its mask names
            // must reach it (OXK002), as for a shuffle or a vote.
            StmtKind::WarpSync { mask } => {
                let m = self.expr(mask, env, ctl);
                self.collective("sync_warp", &m, ctl, s.span);
                Exits::default()
            }
            // A fence waits for no thread: nothing to converge.
            StmtKind::Fence => Exits::default(),
        }
    }

    /// The body's control of a `for` loop and the loop variable's value.
    pub(super) fn for_control(
        &self,
        ctl: &Reach,
        a: &AbstractValue,
        b: &AbstractValue,
        st: &AbstractValue,
        inclusive: bool,
        span: SpanId,
    ) -> (Reach, AbstractValue) {
        let var_uni = a.uni.max(st.uni);
        let var_prov = if a.uni >= st.uni {
            a.prov.clone()
        } else {
            st.prov.clone()
        };
        let var = AbstractValue {
            uni: var_uni,
            conc: None,
            prov: var_prov,
            affine: None,
        };
        let trip_uni = a.uni.max(b.uni).max(st.uni);
        let trip_prov = [a, b, st]
            .iter()
            .max_by_key(|v| v.uni)
            .map(|v| v.prov.clone())
            .unwrap_or_else(|| Rc::new(Vec::new()));
        let what = format!(
            "which sets the trip count of the loop `{}`",
            self.k.snippet(span)
        );
        if let (Some(m), Some(av), Some(bv), Some(sv)) = (&ctl.mask, &a.conc, &b.conc, &st.conc) {
            let trips: Vec<u64> = (0..self.block_threads)
                .map(|t| trip_count(av[t], bv[t], sv[t], inclusive))
                .collect();
            let active: Vec<u64> = (0..self.block_threads)
                .filter(|&t| m[t])
                .map(|t| trips[t])
                .collect();
            let lo = active.iter().copied().min().unwrap_or(0);
            if active.iter().all(|&t| t == lo) {
                return (
                    Reach {
                        mask: Some(m.clone()),
                        bound: m.clone(),
                        uni: ctl.uni,
                        prov: ctl.prov.clone(),
                    },
                    var,
                );
            }
            // Trip counts differ: the first iteration only some threads run is the witness.
            let wm: Rc<Vec<bool>> = Rc::new(
                (0..self.block_threads)
                    .map(|t| m[t] && trips[t] > lo)
                    .collect(),
            );
            let uni = classify_mask(self.warp_width, &wm).max(ctl.uni);
            let prov = self.push_prov(&trip_prov, self.step(span, what));
            return (
                Reach {
                    // Every thread that entered runs the earlier iterations.
                    bound: m.clone(),
                    mask: Some(wm),
                    uni,
                    prov,
                },
                var,
            );
        }
        if trip_uni <= Uniformity::Block {
            return (ctl.clone(), var);
        }
        let prov = if trip_uni > ctl.uni {
            self.push_prov(&trip_prov, self.step(span, what))
        } else {
            ctl.prov.clone()
        };
        (
            Reach {
                mask: None,
                bound: ctl.bound.clone(),
                uni: ctl.uni.max(trip_uni),
                prov,
            },
            var,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_loop(
        &mut self,
        env: &mut [AbstractValue],
        ctl: &Reach,
        body_ctl0: Reach,
        body: &[Stmt],
        cond: Option<&Expr>,
        var: Option<(LocalId, AbstractValue)>,
        span: SpanId,
    ) -> Exits {
        let mut head = env.to_vec();
        let mut iter_ctl = body_ctl0.clone();
        let mut ret: Option<Reach> = None;
        let mut first = true;
        for _round in 0..8 {
            let mut e = head.clone();
            if let Some((v, val)) = &var {
                let mut val = val.clone();
                if !first {
                    val.conc = None;
                }
                e[*v as usize] = val;
            }
            let mut bc = iter_ctl.clone();
            if let Some(c) = cond {
                let cv = self.expr(c, &e, &bc);
                bc = self.and(&bc, &cv, true, c.span);
            }
            let l = if bc.dead() {
                Exits::default()
            } else {
                self.block(body, &mut e, &bc)
            };
            ret = Reach::join(ret, l.ret.clone());
            // Values carried around the loop: join the head with the end of the body.
            let mut changed = false;
            for i in 0..head.len() {
                if !head[i].same(&e[i]) {
                    let uni = head[i]
                        .uni
                        .max(e[i].uni)
                        .max(bc.uni.min(if bc.mask.is_some() {
                            Uniformity::Grid
                        } else {
                            Uniformity::Divergent
                        }));
                    let prov = if e[i].uni >= head[i].uni {
                        e[i].prov.clone()
                    } else {
                        head[i].prov.clone()
                    };
                    let nv = AbstractValue {
                        uni,
                        conc: None,
                        prov,
                        affine: None,
                    };
                    if !nv.same(&head[i]) {
                        changed = true;
                    }
                    head[i] = nv;
                }
            }
            // Threads that broke or returned do not run later iterations.
            let gone = Reach::join(l.brk.clone(), l.ret.clone());
            let next = match &gone {
                Some(g) if g.uni > iter_ctl.uni || g.mask.is_some() => {
                    self.minus(&iter_ctl, g, span, "break")
                }
                _ => iter_ctl.clone(),
            };
            let ctl_changed = next.uni != iter_ctl.uni;
            iter_ctl = next;
            first = false;
            if !changed && !ctl_changed {
                break;
            }
        }
        // After the loop the threads that entered reconverge.
        for i in 0..env.len() {
            if !head[i].same(&env[i]) {
                let mut v = head[i].clone();
                if ctl.mask.is_none() {
                    v.uni = v.uni.max(ctl.uni);
                }
                env[i] = v;
            }
        }
        Exits {
            ret,
            brk: None,
            cont: None,
        }
    }
}

/// How many times a `for` runs, as the simulator and both emitters run it.
///
/// The step is read as its `u32` bits for both counter types (Rust's
/// `step_by` takes a `usize`, so `s as usize` of a negative `i32` is huge):
/// a negative `i32` step runs the first value only. A zero step never ends
/// once the range is non-empty (`u64::MAX`): threads that disagree on it
/// diverge like any other differing trip count.
fn trip_count(a: Value, b: Value, s: Value, inclusive: bool) -> u64 {
    let (a, b, s) = match (a, b, s) {
        (Value::U32(a), Value::U32(b), Value::U32(s)) => (a as i64, b as i64, s as i64),
        (Value::I32(a), Value::I32(b), Value::I32(s)) => (a as i64, b as i64, s as u32 as i64),
        _ => return 0,
    };
    // In i64 the inclusive bound's successor cannot overflow.
    let b = b + i64::from(inclusive);
    if a >= b {
        0
    } else if s == 0 {
        u64::MAX
    } else {
        ((b - a + s - 1) / s) as u64
    }
}
