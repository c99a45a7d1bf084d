//! Launch-aware uniformity analysis and the rules built on it.
//!
//! The abstract value of an expression has two parts: a *uniformity* (the
//! same for the whole grid, per block, per warp, or different between lanes
//! of one warp) and, when the value is a function of thread geometry and
//! constants only, its *concrete per-thread vector* over one block of the
//! given launch. The vector makes the analysis exact for launch-determined
//! guards — `warp_id() == 0` is all-true at block 32 and split between warps at
//! block 64 — and yields the lane maps of findings. Data-dependent values fall
//! back to the uniformity lattice, which is conservative.
//!
//! Warps are the [`Target`]'s: a block is cut into warps of its warp width,
//! so `warp_id() == 0` covers a 32-thread block on a 32-wide target and one
//! quarter of it on lavapipe's 8-wide subgroups. A verdict is therefore per
//! (target, launch); [`CheckOptions::new`] uses [`Target::generic`] (warps of
//! 32), which is what every check did before targets existed.
//!
//! Control is tracked the same way: the set of threads of the block reaching a
//! statement (exact when known) and its uniformity. Threads that `return`,
//! `break` or `continue` under divergent control make the rest of their region
//! divergent, which catches the early-return and divergent-trip-count
//! disguises of a divergent barrier.

use std::collections::HashSet;
use std::rc::Rc;

mod affine;

use affine::Affine;

use crate::eval;
use crate::ir::*;
use crate::launch::{LaunchConfig, LaunchError};
use crate::target::{Target, TargetKind};

/// How far a value or a control decision is the same across threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Uniformity {
    /// The same for every thread of the grid.
    Grid,
    /// The same within a block; may differ between blocks.
    Block,
    /// The same within each warp; differs between warps of a block.
    Warp,
    /// Differs between lanes of one warp.
    Divergent,
}

/// A rule of the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// OXK001: a block barrier under thread-dependent control.
    DivergentBarrier,
    /// OXK002: a warp collective not reached by every lane of its mask.
    NonConvergentCollective,
    /// OXK003: several threads write one global element without an atomic.
    GlobalWriteRace,
    /// OXK004: shared memory over the target's per-block limit.
    SharedOverBudget,
    /// OXK005: a launch outside the kernel's declared launch space.
    LaunchContract,
}

impl Rule {
    /// Every rule, in code order.
    pub const ALL: [Rule; 5] = [
        Rule::DivergentBarrier,
        Rule::NonConvergentCollective,
        Rule::GlobalWriteRace,
        Rule::SharedOverBudget,
        Rule::LaunchContract,
    ];
    /// The rule's code, e.g. `OXK001`.
    pub fn code(self) -> &'static str {
        match self {
            Rule::DivergentBarrier => "OXK001",
            Rule::NonConvergentCollective => "OXK002",
            Rule::GlobalWriteRace => "OXK003",
            Rule::SharedOverBudget => "OXK004",
            Rule::LaunchContract => "OXK005",
        }
    }
    /// The matching rule of the reconverge tool, if any.
    pub fn reconverge(self) -> Option<&'static str> {
        match self {
            Rule::DivergentBarrier => Some("RC001"),
            Rule::NonConvergentCollective => Some("RC002"),
            Rule::GlobalWriteRace => None,
            Rule::SharedOverBudget => Some("RC004"),
            Rule::LaunchContract => Some("RC005"),
        }
    }
    /// Looks a rule up by code (case-insensitive).
    pub fn from_code(code: &str) -> Option<Rule> {
        Rule::ALL
            .into_iter()
            .find(|r| r.code().eq_ignore_ascii_case(code))
    }
}

/// One step of a provenance chain: why a value differs between threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Where.
    pub span: SpanId,
    /// What happened there.
    pub text: String,
}

/// Which threads reach a point, per warp, for a finding's lane map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneMap {
    /// One row per warp: `W` arrives, `.` never arrives, `-` not involved.
    pub warps: Vec<String>,
}

impl LaneMap {
    /// Rows for printing, with runs of identical warps folded.
    pub fn rows(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.warps.len() {
            let mut j = i;
            while j + 1 < self.warps.len() && self.warps[j + 1] == self.warps[i] {
                j += 1;
            }
            if i == j {
                out.push(format!("warp {i:>2}: {}", self.warps[i]));
            } else {
                out.push(format!("warps {i}-{j}: {}", self.warps[i]));
            }
            i = j + 1;
        }
        out
    }
}

/// A finding of the analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Which rule.
    pub rule: Rule,
    /// The headline.
    pub message: String,
    /// The offending construct.
    pub span: SpanId,
    /// Label under the caret.
    pub label: String,
    /// Provenance chain, first cause first.
    pub notes: Vec<Step>,
    /// Extra notes without a span.
    pub extra: Vec<String>,
    /// How to fix it.
    pub help: String,
    /// Which lanes arrive, where known.
    pub lanes: Option<LaneMap>,
    /// True when the launch alone decides it (no data involved): the
    /// compile-time gate fails only on confirmed findings.
    pub confirmed: bool,
    /// The launch it was found for.
    pub launch: LaunchConfig,
    /// The target it was found for.
    pub target: Target,
}

/// What to check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    /// The launch.
    pub launch: LaunchConfig,
    /// The target: its warp width decides which values are warp-uniform, its
    /// limits bound the block and the shared memory.
    pub target: Target,
    /// Specialization values (none: the defaults).
    pub specs: Option<Vec<i64>>,
}

impl CheckOptions {
    /// Checks one launch with default specialization on
    /// [`Target::generic`] (warps of 32, the 48 KiB static shared cap).
    pub fn new(launch: LaunchConfig) -> Self {
        CheckOptions {
            launch,
            target: Target::generic(),
            specs: None,
        }
    }

    /// The same check on `target`.
    pub fn on(self, target: Target) -> Self {
        CheckOptions { target, ..self }
    }
}

/// Why a check could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The launch is impossible.
    #[error("cannot check kernel `{kernel}`: {source}")]
    Launch {
        /// Kernel name.
        kernel: String,
        /// Why.
        source: LaunchError,
    },
    /// Specialization values do not fit the kernel.
    #[error("kernel `{kernel}` has {expected} specialization constants, {given} values were given")]
    Specs {
        /// Kernel name.
        kernel: String,
        /// Number declared.
        expected: usize,
        /// Number given.
        given: usize,
    },
    /// The kernel uses a scalar type the target does not support.
    #[error("kernel `{kernel}` uses `{dtype}`, which target {target} does not support")]
    Dtype {
        /// Kernel name.
        kernel: String,
        /// The unsupported type.
        dtype: Scalar,
        /// The target, by name.
        target: String,
    },
    /// A shared array length does not evaluate.
    #[error("kernel `{kernel}`: the length of shared array `{array}` overflows or divides by zero")]
    SharedLength {
        /// Kernel name.
        kernel: String,
        /// The array.
        array: String,
    },
}

/// Runs every rule on one kernel for one launch.
pub fn check(k: &Kernel, opts: &CheckOptions) -> Result<Vec<Finding>, CheckError> {
    opts.launch
        .validate(&opts.target)
        .map_err(|source| CheckError::Launch {
            kernel: k.name.clone(),
            source,
        })?;
    if let Some(dtype) = opts.target.unsupported_dtype(k) {
        return Err(CheckError::Dtype {
            kernel: k.name.clone(),
            dtype,
            target: opts.target.to_string(),
        });
    }
    let specs = opts.specs.clone().unwrap_or_else(|| k.default_specs());
    if specs.len() != k.specs.len() {
        return Err(CheckError::Specs {
            kernel: k.name.clone(),
            expected: k.specs.len(),
            given: specs.len(),
        });
    }
    let mut findings = Vec::new();
    contract(k, opts, &mut findings);
    shared_budget(k, opts, &specs, &mut findings)?;
    let mut a = Analyzer::new(k, opts.launch, opts.target, specs);
    let mut env = vec![AVal::grid(); k.locals.len()];
    let top = Ctl::all(a.bt);
    a.block(&k.body, &mut env, &top);
    findings.extend(a.findings);
    findings.sort_by_key(|f| (f.rule, k.span(f.span).line, f.span));
    Ok(findings)
}

fn contract(k: &Kernel, opts: &CheckOptions, out: &mut Vec<Finding>) {
    let l = opts.launch;
    let mut bad = Vec::new();
    if !k.launch.blocks.is_empty() && !k.launch.blocks.contains(&l.block) {
        let allowed: Vec<String> = k.launch.blocks.iter().map(|d| d.to_string()).collect();
        bad.push(format!(
            "block {} is not one of the declared blocks {}",
            l.block,
            allowed.join(", ")
        ));
    }
    if !k.launch.grids.is_empty() && !k.launch.grids.contains(&l.grid) {
        let allowed: Vec<String> = k.launch.grids.iter().map(|d| d.to_string()).collect();
        bad.push(format!(
            "grid {} is not one of the declared grids {}",
            l.grid,
            allowed.join(", ")
        ));
    }
    if bad.is_empty() {
        return;
    }
    out.push(Finding {
        rule: Rule::LaunchContract,
        message: format!("launch contradicts the launch contract of `{}`", k.name),
        span: 0,
        label: "the kernel declares its launch space here".into(),
        notes: Vec::new(),
        extra: bad,
        help: "launch with a declared configuration, or add this one to `#[kernel(block = [...])]` (the macro then checks it too)".into(),
        lanes: None,
        confirmed: true,
        launch: l,
        target: opts.target,
    });
}

fn shared_budget(
    k: &Kernel,
    opts: &CheckOptions,
    specs: &[i64],
    out: &mut Vec<Finding>,
) -> Result<(), CheckError> {
    let mut total = 0u64;
    for s in &k.shared {
        let n = s
            .len
            .eval(specs)
            .and_then(|n| n.checked_mul(s.elem.size_bytes()))
            .ok_or_else(|| CheckError::SharedLength {
                kernel: k.name.clone(),
                array: s.name.clone(),
            })?;
        total = total.saturating_add(n);
    }
    let limit = opts.target.shared_max();
    let what = opts.target.shared_limit_text();
    if total <= limit {
        return Ok(());
    }
    let biggest = k
        .shared
        .iter()
        .max_by_key(|s| s.len.eval(specs).unwrap_or(0))
        .map(|s| s.span)
        .unwrap_or(0);
    let extra = k
        .shared
        .iter()
        .map(|s| {
            let n = s.len.eval(specs).unwrap_or(0);
            format!(
                "`{}`: {} x {} = {} bytes",
                s.name,
                n,
                s.elem,
                n * s.elem.size_bytes()
            )
        })
        .collect();
    out.push(Finding {
        rule: Rule::SharedOverBudget,
        message: format!("shared memory of {total} bytes per block exceeds {what} ({limit} bytes)"),
        span: biggest,
        label: "the largest shared array".into(),
        notes: Vec::new(),
        extra,
        help: if opts.target.kind() == TargetKind::Generic {
            "shrink the tile, or name a target with `--target` (e.g. `cuda:sm_80`) or `--cc` whose opt-in limit is larger".into()
        } else {
            "shrink the tile or the element count; this target cannot hold it".into()
        },
        lanes: None,
        confirmed: true,
        launch: opts.launch,
        target: opts.target,
    });
    Ok(())
}

type Vals = Rc<Vec<Value>>;
type Mask = Rc<Vec<bool>>;
type Prov = Rc<Vec<Step>>;

#[derive(Debug, Clone)]
struct AVal {
    uni: Uniformity,
    conc: Option<Vals>,
    prov: Prov,
    /// Where `conc` is unknown: the value as a block term plus a known
    /// per-thread part, when it is one (see [`affine`]).
    affine: Option<Affine>,
}

impl AVal {
    fn grid() -> Self {
        AVal {
            uni: Uniformity::Grid,
            conc: None,
            prov: Rc::new(Vec::new()),
            affine: None,
        }
    }
    fn same(&self, o: &AVal) -> bool {
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

#[derive(Debug, Clone)]
struct Ctl {
    /// Threads of the block reaching this point, when known exactly.
    mask: Option<Mask>,
    /// Threads that may reach it: `mask` when that is known, otherwise the
    /// threads that no known condition has excluded. After `if i >= n {
    /// return; }` (data) and `if thread_idx_x() == 0` (known), the mask is
    /// unknown but at most thread 0 of each block stores — which is what
    /// tells a per-block store from a race.
    bound: Mask,
    uni: Uniformity,
    prov: Prov,
}

impl Ctl {
    fn all(bt: usize) -> Self {
        let all = Rc::new(vec![true; bt]);
        Ctl {
            mask: Some(all.clone()),
            bound: all,
            uni: Uniformity::Grid,
            prov: Rc::new(Vec::new()),
        }
    }
    fn dead(&self) -> bool {
        self.mask.as_ref().is_some_and(|m| m.iter().all(|b| !b))
    }
    fn join(a: Option<Ctl>, b: Option<Ctl>) -> Option<Ctl> {
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
                Some(Ctl {
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
struct Leave {
    ret: Option<Ctl>,
    brk: Option<Ctl>,
    cont: Option<Ctl>,
}

impl Leave {
    fn join(self, o: Leave) -> Leave {
        Leave {
            ret: Ctl::join(self.ret, o.ret),
            brk: Ctl::join(self.brk, o.brk),
            cont: Ctl::join(self.cont, o.cont),
        }
    }
    fn all(&self) -> Option<Ctl> {
        Ctl::join(
            Ctl::join(self.ret.clone(), self.brk.clone()),
            self.cont.clone(),
        )
    }
}

/// The uniformity of a per-thread vector over one block cut into warps of
/// `ws` lanes.
fn classify_vals(ws: usize, v: &[Value]) -> Uniformity {
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

fn classify_mask(ws: usize, m: &[bool]) -> Uniformity {
    let v: Vec<Value> = m.iter().map(|b| Value::Bool(*b)).collect();
    classify_vals(ws, &v)
}

struct Analyzer<'k> {
    k: &'k Kernel,
    launch: LaunchConfig,
    target: Target,
    /// The target's warp width.
    ws: usize,
    bt: usize,
    specs: Vec<i64>,
    findings: Vec<Finding>,
    seen: HashSet<(Rule, SpanId)>,
}

impl<'k> Analyzer<'k> {
    fn new(k: &'k Kernel, launch: LaunchConfig, target: Target, specs: Vec<i64>) -> Self {
        Analyzer {
            k,
            launch,
            target,
            ws: target.warp_width() as usize,
            bt: launch.block_threads() as usize,
            specs,
            findings: Vec::new(),
            seen: HashSet::new(),
        }
    }

    fn step(&self, span: SpanId, text: String) -> Step {
        Step { span, text }
    }

    fn push_prov(&self, prov: &Prov, s: Step) -> Prov {
        let mut v: Vec<Step> = (**prov).clone();
        if v.len() < 12 {
            v.push(s);
        }
        Rc::new(v)
    }

    /// Control restricted to threads where `c` equals `want`.
    fn and(&self, ctl: &Ctl, c: &AVal, want: bool, span: SpanId) -> Ctl {
        let mask = match (&ctl.mask, &c.conc) {
            (Some(m), Some(v)) => Some(Rc::new(
                m.iter()
                    .zip(v.iter())
                    .map(|(a, x)| *a && matches!(x, Value::Bool(b) if *b == want))
                    .collect::<Vec<_>>(),
            )),
            // A block-uniform condition keeps all or none of the threads.
            (Some(m), None) if c.uni <= Uniformity::Block => Some(m.clone()),
            _ => None,
        };
        let uni = match &mask {
            Some(m) => classify_mask(self.ws, m).max(ctl.uni.min(Uniformity::Block)),
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
            (None, Some(v)) => Rc::new(
                ctl.bound
                    .iter()
                    .zip(v.iter())
                    .map(|(a, x)| *a && matches!(x, Value::Bool(b) if *b == want))
                    .collect(),
            ),
            (None, None) => ctl.bound.clone(),
        };
        Ctl {
            mask,
            bound,
            uni,
            prov,
        }
    }

    /// Control after some threads left (returned, broke or continued).
    fn minus(&self, ctl: &Ctl, left: &Ctl, span: SpanId, how: &str) -> Ctl {
        let mask = match (&ctl.mask, &left.mask) {
            (Some(m), Some(l)) => Some(Rc::new(
                m.iter()
                    .zip(l.iter())
                    .map(|(a, b)| *a && !b)
                    .collect::<Vec<_>>(),
            )),
            (Some(m), None) if left.uni <= Uniformity::Block => Some(m.clone()),
            _ => None,
        };
        let uni = match &mask {
            Some(m) => classify_mask(self.ws, m).max(ctl.uni.min(Uniformity::Block)),
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
            (None, Some(l)) => Rc::new(
                ctl.bound
                    .iter()
                    .zip(l.iter())
                    .map(|(a, b)| *a && !b)
                    .collect(),
            ),
            (None, None) => ctl.bound.clone(),
        };
        Ctl {
            mask,
            bound,
            uni,
            prov,
        }
    }

    fn find(&mut self, f: Finding) {
        if self.seen.insert((f.rule, f.span)) {
            self.findings.push(f);
        }
    }

    fn lane_map(&self, m: &[bool]) -> LaneMap {
        LaneMap {
            warps: m
                .chunks(self.ws)
                .map(|c| c.iter().map(|b| if *b { 'W' } else { '.' }).collect())
                .collect(),
        }
    }

    fn block(&mut self, stmts: &[Stmt], env: &mut [AVal], ctl: &Ctl) -> Leave {
        let mut cur = ctl.clone();
        let mut leave = Leave::default();
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

    fn assign(&self, env: &mut [AVal], local: LocalId, v: AVal, ctl: &Ctl, span: SpanId) {
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
                    v.uni = classify_vals(self.ws, c);
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
                    classify_mask(self.ws, m).max(env[local as usize].uni)
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

    fn stmt(&mut self, s: &Stmt, env: &mut [AVal], ctl: &Ctl) -> Leave {
        match &s.kind {
            StmtKind::Assign { local, value } => {
                let v = self.expr(value, env, ctl);
                self.assign(env, *local, v, ctl, s.span);
                Leave::default()
            }
            StmtKind::Store { mem, index, value } => {
                let i = self.expr(index, env, ctl);
                self.expr(value, env, ctl);
                if let Mem::Global(_) = mem {
                    self.write_race(*mem, &i, ctl, s.span);
                }
                Leave::default()
            }
            StmtKind::Eval(e) => {
                self.expr(e, env, ctl);
                Leave::default()
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
                    Leave::default()
                } else {
                    self.block(then, &mut te, &tc)
                };
                let le = if ec.dead() {
                    Leave::default()
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
                            classify_vals(self.ws, v),
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
                    env[i] = AVal {
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
            StmtKind::Break => Leave {
                brk: Some(ctl.clone()),
                ..Leave::default()
            },
            StmtKind::Continue => Leave {
                cont: Some(ctl.clone()),
                ..Leave::default()
            },
            StmtKind::Return => Leave {
                ret: Some(ctl.clone()),
                ..Leave::default()
            },
            StmtKind::Barrier => {
                self.barrier(ctl, s.span);
                Leave::default()
            }
        }
    }

    /// The body's control of a `for` loop and the loop variable's value.
    fn for_control(
        &self,
        ctl: &Ctl,
        a: &AVal,
        b: &AVal,
        st: &AVal,
        inclusive: bool,
        span: SpanId,
    ) -> (Ctl, AVal) {
        let var_uni = a.uni.max(st.uni);
        let var_prov = if a.uni >= st.uni {
            a.prov.clone()
        } else {
            st.prov.clone()
        };
        let var = AVal {
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
            let trips: Vec<u64> = (0..self.bt)
                .map(|t| trip_count(av[t], bv[t], sv[t], inclusive))
                .collect();
            let active: Vec<u64> = (0..self.bt).filter(|&t| m[t]).map(|t| trips[t]).collect();
            let lo = active.iter().copied().min().unwrap_or(0);
            if active.iter().all(|&t| t == lo) {
                return (
                    Ctl {
                        mask: Some(m.clone()),
                        bound: m.clone(),
                        uni: ctl.uni,
                        prov: ctl.prov.clone(),
                    },
                    var,
                );
            }
            // Trip counts differ: the first iteration only some threads run is the witness.
            let wm: Rc<Vec<bool>> = Rc::new((0..self.bt).map(|t| m[t] && trips[t] > lo).collect());
            let uni = classify_mask(self.ws, &wm).max(ctl.uni);
            let prov = self.push_prov(&trip_prov, self.step(span, what));
            return (
                Ctl {
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
            Ctl {
                mask: None,
                bound: ctl.bound.clone(),
                uni: ctl.uni.max(trip_uni),
                prov,
            },
            var,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn run_loop(
        &mut self,
        env: &mut [AVal],
        ctl: &Ctl,
        body_ctl0: Ctl,
        body: &[Stmt],
        cond: Option<&Expr>,
        var: Option<(LocalId, AVal)>,
        span: SpanId,
    ) -> Leave {
        let mut head = env.to_vec();
        let mut iter_ctl = body_ctl0.clone();
        let mut ret: Option<Ctl> = None;
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
                Leave::default()
            } else {
                self.block(body, &mut e, &bc)
            };
            ret = Ctl::join(ret, l.ret.clone());
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
                    let nv = AVal {
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
            let gone = Ctl::join(l.brk.clone(), l.ret.clone());
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
        Leave {
            ret,
            brk: None,
            cont: None,
        }
    }

    fn barrier(&mut self, ctl: &Ctl, span: SpanId) {
        if ctl.uni <= Uniformity::Block {
            return;
        }
        let lanes = ctl.mask.as_ref().map(|m| self.lane_map(m));
        let early = ctl.prov.iter().any(|s| s.text.contains("leave early"));
        let help = if early {
            "do not leave before the barrier: guard the work instead of returning early, so every thread of the block reaches `sync_threads()`"
        } else {
            "move `sync_threads()` out of the thread-dependent branch or loop, so every thread of the block reaches it"
        };
        let f = Finding {
            rule: Rule::DivergentBarrier,
            message: "block barrier is not reached by every thread of the block".into(),
            span,
            label: format!(
                "barrier under thread-dependent control at block {}",
                self.launch.block
            ),
            notes: ctl.prov.to_vec(),
            extra: Vec::new(),
            help: help.into(),
            confirmed: lanes.is_some(),
            lanes,
            launch: self.launch,
            target: self.target,
        };
        self.find(f);
    }

    #[allow(clippy::needless_range_loop)]
    fn collective(&mut self, name: &str, mask: &AVal, ctl: &Ctl, span: SpanId) {
        let Some(mv) = &mask.conc else { return };
        let bt = self.bt;
        let ws = self.ws;
        let mut rows = Vec::new();
        let mut bad = false;
        let mut absent = false;
        for w in 0..bt.div_ceil(ws) {
            let lanes = (bt - w * ws).min(ws);
            let named = match mv[w * ws] {
                Value::U32(m) => m,
                Value::I32(m) => m as u32,
                _ => return,
            };
            let active: Vec<bool> = (0..lanes)
                .map(|l| ctl.mask.as_ref().is_none_or(|m| m[w * ws + l]))
                .collect();
            if !active.iter().any(|a| *a) {
                rows.push("-".repeat(ws));
                continue;
            }
            let mut row = String::new();
            // Mask bit `l` names lane `l` of the warp. Bits at or above the
            // warp width name no lane (so a full mask means "the whole warp"
            // on every target); the mask is 32 bits, so on a 64-wide target
            // lanes 32..63 cannot be named at all.
            for l in 0..ws {
                let n = l < 32 && named & (1u32 << l) != 0;
                let present = l < lanes && active[l];
                if n && l >= lanes {
                    absent = true;
                    bad = true;
                }
                if n && l < lanes && !active[l] {
                    bad = true;
                }
                row.push(match (n, present) {
                    (true, true) => 'W',
                    (true, false) => '.',
                    (false, _) => '-',
                });
            }
            rows.push(row);
        }
        let unknown = ctl.mask.is_none() && ctl.uni == Uniformity::Divergent;
        if !bad && !unknown {
            return;
        }
        let (message, help) = if absent {
            (
                format!("`{name}` names lanes that do not exist in this launch"),
                "build the mask from the lanes present (e.g. `ballot_sync` of a predicate) or launch whole warps",
            )
        } else {
            (
                format!("`{name}` is not reached by every lane its mask names"),
                "reach the collective with every lane of its mask (hoist it out of the branch), or pass the mask of the lanes that do reach it",
            )
        };
        let f = Finding {
            rule: Rule::NonConvergentCollective,
            message,
            span,
            label: if absent {
                format!(
                    "its mask reaches past the {} threads of a {} block",
                    self.bt, self.launch.block
                )
            } else {
                format!(
                    "warp collective under divergent control at block {}",
                    self.launch.block
                )
            },
            notes: ctl.prov.to_vec(),
            extra: Vec::new(),
            help: help.into(),
            lanes: if bad {
                Some(LaneMap { warps: rows })
            } else {
                None
            },
            confirmed: bad,
            launch: self.launch,
            target: self.target,
        };
        self.find(f);
    }

    fn write_race(&mut self, mem: Mem, idx: &AVal, ctl: &Ctl, span: SpanId) {
        // An index of the block-term form whose writers' per-thread parts
        // differ, in blocks that cannot reach each other's elements, is no
        // race whoever of the possible writers stores.
        let form = match &idx.conc {
            Some(c) => Affine::known(c),
            None => idx.affine.clone(),
        };
        let writers: Vec<usize> = (0..self.bt).filter(|&t| ctl.bound[t]).collect();
        if writers.is_empty() {
            return;
        }
        if let Some(f) = &form {
            if f.distinct_for(&writers, self.launch.grid.count()) {
                return;
            }
        }
        let Some(m) = &ctl.mask else {
            // Which threads store depends on data: a thread-independent index
            // is still a race unless the data lets at most one thread through.
            if idx.uni <= Uniformity::Warp {
                let name = self.k.mem_name(mem).to_string();
                let mut notes = idx.prov.to_vec();
                notes.extend(ctl.prov.iter().cloned());
                notes.push(Step {
                    span,
                    text: format!(
                        "the index does not vary with the thread, so every thread that passes the data-dependent guard writes the same element of `{name}`"
                    ),
                });
                let f = Finding {
                    rule: Rule::GlobalWriteRace,
                    message: format!("several threads may write one element of `{name}` without an atomic"),
                    span,
                    label: "possibly racing store".into(),
                    notes,
                    extra: Vec::new(),
                    help: "give each thread its own element, let one chosen thread write, or combine with `atomic_add`".into(),
                    lanes: None,
                    confirmed: false,
                    launch: self.launch,
                    target: self.target,
                };
                self.find(f);
            }
            return;
        };
        let active: Vec<usize> = (0..self.bt).filter(|&t| m[t]).collect();
        if active.is_empty() {
            return;
        }
        let blocks = self.launch.grid.count();
        let name = self.k.mem_name(mem).to_string();
        let mut why = None;
        if let Some(v) = &idx.conc {
            let mut seen = std::collections::HashMap::new();
            for &t in &active {
                if let Some(&u) = seen.get(&v[t].to_bits()) {
                    why = Some(format!(
                        "threads {u} and {t} of every block both write `{name}[{}]`",
                        v[t]
                    ));
                    break;
                }
                seen.insert(v[t].to_bits(), t);
            }
            if why.is_none() && blocks > 1 {
                why = Some(format!(
                    "the index does not depend on the block, so all {blocks} blocks write the same elements of `{name}`"
                ));
            }
        } else {
            let per_warp =
                active
                    .chunks(1)
                    .fold(vec![0usize; self.bt.div_ceil(self.ws)], |mut acc, t| {
                        acc[t[0] / self.ws] += 1;
                        acc
                    });
            why = match idx.uni {
                Uniformity::Divergent => None,
                Uniformity::Warp if per_warp.iter().any(|&c| c > 1) => Some(format!(
                    "the index is the same for every lane of a warp, and several lanes write `{name}`"
                )),
                Uniformity::Block if active.len() > 1 => Some(format!(
                    "the index is the same for all {} threads of a block that write `{name}`",
                    active.len()
                )),
                Uniformity::Grid if active.len() > 1 || blocks > 1 => Some(format!(
                    "the index is the same for every thread of the grid, and {} threads in each of {blocks} blocks write `{name}`",
                    active.len()
                )),
                _ => None,
            };
        }
        let Some(why) = why else { return };
        let mut notes = idx.prov.to_vec();
        notes.push(Step { span, text: why });
        let f = Finding {
            rule: Rule::GlobalWriteRace,
            message: format!("several threads write one element of `{name}` without an atomic"),
            span,
            label: "racing store".into(),
            notes,
            extra: Vec::new(),
            help: "give each thread its own element (index by the global thread id), guard the store so one thread writes, or combine with `atomic_add`".into(),
            lanes: None,
            confirmed: true,
            launch: self.launch,
            target: self.target,
        };
        self.find(f);
    }

    fn map2(&self, a: &AVal, b: &AVal, f: impl Fn(Value, Value) -> Option<Value>) -> Option<Vals> {
        let (x, y) = (a.conc.as_ref()?, b.conc.as_ref()?);
        let v: Option<Vec<Value>> = x.iter().zip(y.iter()).map(|(p, q)| f(*p, *q)).collect();
        v.map(Rc::new)
    }

    fn combine(&self, parts: &[&AVal], conc: Option<Vals>) -> AVal {
        let mut best: Option<&AVal> = None;
        for p in parts {
            if best.is_none_or(|b| p.uni > b.uni) {
                best = Some(p);
            }
        }
        let uni = match &conc {
            Some(v) => classify_vals(self.ws, v),
            None => parts
                .iter()
                .map(|p| p.uni)
                .max()
                .unwrap_or(Uniformity::Grid),
        };
        let prov = best
            .map(|b| b.prov.clone())
            .unwrap_or_else(|| Rc::new(Vec::new()));
        AVal {
            uni,
            conc,
            prov,
            affine: None,
        }
    }

    fn lit(&self, v: Value) -> AVal {
        AVal {
            uni: Uniformity::Grid,
            conc: Some(Rc::new(vec![v; self.bt])),
            prov: Rc::new(Vec::new()),
            affine: None,
        }
    }

    fn expr(&mut self, e: &Expr, env: &[AVal], ctl: &Ctl) -> AVal {
        match &e.kind {
            ExprKind::Lit(v) => self.lit(*v),
            ExprKind::Local(l) => env[*l as usize].clone(),
            ExprKind::Param(_) => AVal {
                affine: (e.ty == Scalar::U32).then(|| Affine::parameter(self.bt)),
                ..AVal::grid()
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
            ExprKind::Load { mem, index } => {
                let i = self.expr(index, env, ctl);
                let floor = if matches!(mem, Mem::Shared(_)) {
                    Uniformity::Block
                } else {
                    Uniformity::Grid
                };
                let mut v = AVal {
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
                    let form = |x: &AVal| match &x.conc {
                        Some(c) => Affine::known(c),
                        None => x.affine.clone(),
                    };
                    if let (Some(fa), Some(fb)) = (form(&a), form(&b)) {
                        if let Some(r) = Affine::binary(op, &fa, &fb) {
                            v.uni = r.uniformity(self.ws);
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
                let vals: Vec<AVal> = args.iter().map(|a| self.expr(a, env, ctl)).collect();
                let conc = if vals.iter().all(|v| v.conc.is_some()) {
                    (0..self.bt)
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
                let refs: Vec<&AVal> = vals.iter().collect();
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
                AVal {
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
                AVal {
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
                AVal {
                    uni: Uniformity::Divergent,
                    conc: None,
                    prov: Rc::new(vec![self.step(e.span, what)]),
                    affine: None,
                }
            }
        }
    }

    fn builtin(&self, b: Builtin, span: SpanId) -> AVal {
        let vals: Option<Vec<Value>> = (0..self.bt as u32)
            .map(|t| {
                self.launch
                    .builtin_in_block(b, t, self.target.warp_width())
                    .map(Value::U32)
            })
            .collect();
        let block = self.launch.block;
        match vals {
            Some(v) => {
                let uni = classify_vals(self.ws, &v);
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
                AVal {
                    uni,
                    conc: Some(Rc::new(v)),
                    prov: Rc::new(prov),
                    affine: None,
                }
            }
            None => AVal {
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
                            self.bt,
                            g.count() == g.get(axis) as u64,
                        ))
                    }
                    _ => None,
                },
            },
        }
    }
}

fn trip_count(a: Value, b: Value, s: Value, inclusive: bool) -> u64 {
    let (a, b, s) = match (a, b, s) {
        (Value::U32(a), Value::U32(b), Value::U32(s)) => (a as i64, b as i64, s as i64),
        (Value::I32(a), Value::I32(b), Value::I32(s)) => (a as i64, b as i64, s as i64),
        _ => return 0,
    };
    // In i64 the inclusive bound's successor cannot overflow.
    let b = b + i64::from(inclusive);
    if s <= 0 || a >= b {
        0
    } else {
        ((b - a + s - 1) / s) as u64
    }
}
