//! The warp engine and the block scheduler.

use std::collections::HashMap;

use crate::eval::{self, EvalError};
use crate::ir::{
    AtomicOp, Builtin, Dim3, Kernel, Mem, ParamKind, Scalar, ShuffleKind, SpanId, Value, VoteKind,
};
use crate::launch::LaunchConfig;
use crate::sim::buffer::{Arg, check_args};
use crate::sim::compile::{BinK, Op, Program, Reg, UnK};
use crate::sim::report::{Report, ReportKind, SimError};
use crate::sim::trace::Tracer;
use crate::target::Target;

mod collective;
mod lanes;
mod memory;
mod undefined;

use lanes::{binary, builtin_lanes, unary};
use undefined::{Origin, Undef, Use};

/// Lanes of a register: the widest warp the simulator runs. A target with
/// narrower warps uses the low `warp_width` lanes of each register (the rest
/// are never valid); wider targets (AMD's wave64) are refused with
/// [`SimError::WarpTooWide`] rather than half-simulated.
const W: usize = 32;
/// One register: each lane's bit pattern, zero-extended to 64 bits.
type Lanes = [u64; W];

/// The mask of the low `n` lanes (`n <= 32`).
fn low_lanes(n: u32) -> u32 {
    if n >= 32 { u32::MAX } else { (1u32 << n) - 1 }
}

/// Simulation limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    /// Most warp instructions one block may execute before the run gives
    /// up on it as endless. Per block, so a large grid of correct blocks
    /// (a 768³ tiled matmul) is never mistaken for a hang; the report names
    /// the block, the warp and the statement it was at.
    pub max_warp_steps: u64,
    /// Track shared-memory accesses between barriers and report races.
    pub detect_races: bool,
    /// The target: its warp width decides how a block is cut into warps and
    /// what `lane_id()`, `warp_id()`, `warp_size()`, shuffles and votes see.
    pub target: Target,
    /// Bytes of dynamically sized shared memory the launch gives each
    /// block: the kernel's `shared_dynamic::<T>()` array holds as many
    /// whole elements as fit (CUDA's third launch parameter).
    pub dynamic_shared_bytes: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            max_warp_steps: 200_000_000,
            detect_races: true,
            target: Target::generic(),
            dynamic_shared_bytes: 0,
        }
    }
}

/// What a completed simulation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimStats {
    /// Warp instructions executed.
    pub warp_instructions: u64,
    /// Lane instructions executed (active lanes summed over warp instructions).
    pub lane_instructions: u64,
    /// Barriers released.
    pub barriers: u64,
}

/// Compiles and runs a kernel with its default specialization.
pub fn run(
    k: &Kernel,
    launch: LaunchConfig,
    args: &mut [Arg],
    opts: &SimOptions,
) -> Result<SimStats, SimError> {
    run_program(&Program::compile(k), launch, args, opts)
}

#[derive(Debug, Clone, Copy)]
enum Frame {
    If { else_mask: u32, join: u32 },
    Loop { exit: u32, brk: u32, cont: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    AtBarrier,
    Done,
}

struct Warp {
    pc: usize,
    active: u32,
    valid: u32,
    state: State,
    stack: Vec<Frame>,
    regs: Vec<Lanes>,
    /// Which lanes of which registers hold undefined values (a shuffle
    /// read a lane outside its mask; see `undefined.rs`).
    undef: Undef,
    /// The lanes' local arrays: element `i` of lane `l` of array `a` is
    /// `arrays[a][i * W + l]`, so one element of a warp is contiguous.
    arrays: Vec<Vec<u64>>,
    /// Linear thread index of lane 0.
    base: u32,
}

#[derive(Clone, Copy, Default)]
struct Access {
    epoch: u32,
    /// Thread index + 1 of the writer in this epoch (0: none).
    writer: u32,
    /// Thread index + 1 of the first reader in this epoch (0: none).
    reader: u32,
    many_readers: bool,
    /// Thread index + 1 of the first reader other than `reader` (0: none),
    /// so that a thread writing what it and others read names one of the
    /// others, not itself, as the other side of the race.
    other_reader: u32,
    /// Thread index + 1 of the first thread to update it with an atomic in
    /// this epoch (0: none); atomics never race with each other, but a
    /// plain access by another thread does with them.
    atomic: u32,
    many_atomics: bool,
}

/// Which threads of which blocks touched one global element during the
/// launch, each as its grid-linear thread index + 1 (0: none); the block is
/// that index over the block's threads. Blocks cannot wait for each other,
/// so two blocks touching one element, one writing — or one updating it
/// atomically and the other not — is a race whatever order they ran in.
/// Within a block, global accesses are left to the analysis (OXK003).
/// Only writable buffers are tracked: nothing can race on a read-only one.
#[derive(Clone, Copy, Default)]
struct GlobalAccess {
    writer: u32,
    /// The first reader, and the first from a block other than its.
    reader: u32,
    reader_elsewhere: u32,
    /// The same for atomic updates.
    atomic: u32,
    atomic_elsewhere: u32,
}

struct Block<'p> {
    p: &'p Program,
    launch: LaunchConfig,
    /// The target's warp width, at most 32.
    width: u32,
    block: Dim3,
    warps: Vec<Warp>,
    /// Each shared array's elements' bit patterns, one word per element.
    shared: Vec<Vec<u64>>,
    access: Vec<Vec<Access>>,
    /// Per buffer parameter, per element: the blocks that touched it
    /// (empty for a read-only buffer, or when blocks cannot race).
    global: Vec<Vec<GlobalAccess>>,
    /// The grid-linear index of this block's thread 0.
    first_thread: u32,
    epoch: u32,
    opts: SimOptions,
    stats: SimStats,
    /// The lane tracer, in the traced block only.
    trace: Option<Tracer>,
    /// Warp instructions executed before this block began (the step
    /// budget is per block).
    steps_before: u64,
    /// Where this block's undefined values came from, indexed by the
    /// warps' per-lane origin indices.
    undef_origins: Vec<Origin>,
    /// Each origin's index in `undef_origins`.
    undef_index: HashMap<Origin, u32>,
}

/// Runs a compiled program.
pub fn run_program(
    p: &Program,
    launch: LaunchConfig,
    args: &mut [Arg],
    opts: &SimOptions,
) -> Result<SimStats, SimError> {
    run_traced(p, launch, args, opts, None).0
}

/// Runs a compiled program, with a tracer for one block when given; the
/// tracer comes back with what it saw.
pub(crate) fn run_traced(
    p: &Program,
    launch: LaunchConfig,
    args: &mut [Arg],
    opts: &SimOptions,
    mut tracer: Option<(Dim3, Tracer)>,
) -> (Result<SimStats, SimError>, Option<Tracer>) {
    let give_back = |t: Option<(Dim3, Tracer)>| t.map(|(_, t)| t);
    let checked = (|| {
        launch.validate(&opts.target)?;
        if opts.target.warp_width() as usize > W {
            return Err(SimError::WarpTooWide {
                target: opts.target.to_string(),
                width: opts.target.warp_width(),
            });
        }
        check_args(&p.kernel, args)?;
        Ok(())
    })();
    if let Err(e) = checked {
        return (Err(e), give_back(tracer));
    }
    let r = run_checked(p, launch, args, opts, &mut tracer);
    (r, give_back(tracer))
}

fn run_checked(
    p: &Program,
    launch: LaunchConfig,
    args: &mut [Arg],
    opts: &SimOptions,
    tracer: &mut Option<(Dim3, Tracer)>,
) -> Result<SimStats, SimError> {
    let target = opts.target;
    let width = target.warp_width();
    let bt = launch.block_threads();
    let nw = launch.warps_per_block(width) as usize;
    let mut warps: Vec<Warp> = (0..nw)
        .map(|w| {
            let base = w as u32 * width;
            let valid = low_lanes((bt - base).min(width));
            Warp {
                pc: 0,
                active: valid,
                valid,
                state: State::Running,
                stack: Vec::new(),
                regs: vec![[0; W]; p.nregs],
                undef: Undef::default(),
                arrays: p.array_len.iter().map(|&n| vec![0; n * W]).collect(),
                base,
            }
        })
        .collect();
    let mut stats = SimStats::default();
    let shared_len = p.shared_lens(opts.dynamic_shared_bytes);
    let g = launch.grid;
    // Only with more than one block can blocks race; the records name
    // threads by a u32 grid-linear index.
    let trackable = g.count() > 1 && g.count() * bt as u64 <= u32::MAX as u64;
    let mut global: Vec<Vec<GlobalAccess>> = if opts.detect_races && trackable {
        args.iter()
            .zip(&p.kernel.params)
            .map(|(a, param)| match (a, param.kind) {
                (Arg::Buffer(b), ParamKind::Buffer { writable: true, .. }) => {
                    vec![GlobalAccess::default(); b.len()]
                }
                _ => Vec::new(),
            })
            .collect()
    } else {
        Vec::new()
    };
    for bz in 0..g.z {
        for by in 0..g.y {
            for bx in 0..g.x {
                for w in warps.iter_mut() {
                    w.pc = 0;
                    w.active = w.valid;
                    w.state = State::Running;
                    w.stack.clear();
                    w.undef.reset();
                    // Deterministic: a block never sees the last one's arrays.
                    for a in w.arrays.iter_mut() {
                        a.fill(0);
                    }
                    for (i, a) in args.iter().enumerate() {
                        if let (Some(r), Arg::Scalar(v)) = (p.param_regs[i], a) {
                            w.regs[r as usize] = [v.to_bits(); W];
                        }
                    }
                }
                let mut b = Block {
                    p,
                    launch,
                    width,
                    block: Dim3::new(bx, by, bz),
                    shared: shared_len.iter().map(|&n| vec![0; n]).collect(),
                    access: if opts.detect_races {
                        shared_len
                            .iter()
                            .map(|&n| vec![Access::default(); n])
                            .collect()
                    } else {
                        Vec::new()
                    },
                    warps: std::mem::take(&mut warps),
                    global: std::mem::take(&mut global),
                    // Wrapping: used only when `trackable`, where it fits;
                    // a grid too large to track must not overflow here.
                    first_thread: bx
                        .wrapping_add(g.x.wrapping_mul(by.wrapping_add(g.y.wrapping_mul(bz))))
                        .wrapping_mul(bt),
                    epoch: 1,
                    opts: *opts,
                    stats,
                    steps_before: stats.warp_instructions,
                    undef_origins: Vec::new(),
                    undef_index: HashMap::new(),
                    trace: match tracer {
                        Some((at, _)) if *at == Dim3::new(bx, by, bz) => {
                            tracer.take().map(|(_, t)| t)
                        }
                        _ => None,
                    },
                };
                let r = b.run(args);
                stats = b.stats;
                warps = b.warps;
                global = b.global;
                if let Some(t) = b.trace.take() {
                    *tracer = Some((Dim3::new(bx, by, bz), t));
                }
                r.map_err(SimError::Report)?;
            }
        }
    }
    Ok(stats)
}

/// The loops around bytecode position `pc`, innermost first, each as its
/// statement's span: the bytecode is structured, so walking back and
/// skipping every loop that ends before `pc` finds the ones still open.
fn enclosing_loops(p: &Program, pc: usize) -> Vec<SpanId> {
    let mut out = Vec::new();
    let mut closed = 0usize;
    for at in (0..=pc.min(p.ops.len() - 1)).rev() {
        match p.ops[at] {
            Op::LoopEnd if at != pc => closed += 1,
            Op::LoopBegin if closed > 0 => closed -= 1,
            Op::LoopBegin => out.push(p.op_span[at]),
            _ => {}
        }
    }
    out
}

fn lanes_of(m: u32) -> impl Iterator<Item = usize> {
    let mut m = m;
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(l)
    })
}

impl Block<'_> {
    // Reports are boxed: they are rare, and a `Result` on the hot path stays
    // small.
    fn report(&self, kind: ReportKind, span: SpanId, warp: usize) -> Box<Report> {
        Box::new(Report {
            kind,
            span,
            launch: self.launch,
            target: self.opts.target,
            block: self.block,
            warp: warp as u32,
        })
    }

    fn run(&mut self, args: &mut [Arg]) -> Result<(), Box<Report>> {
        loop {
            for w in 0..self.warps.len() {
                if self.warps[w].state == State::Running {
                    self.run_warp(w, args)?;
                }
            }
            if self.warps.iter().all(|w| w.state == State::Done) {
                return Ok(());
            }
            // Every warp is done or waiting: release the barrier or report.
            let first = self
                .warps
                .iter()
                .position(|w| w.state == State::AtBarrier)
                .expect("a waiting warp");
            let pc = self.warps[first].pc;
            let ok = self
                .warps
                .iter()
                .all(|w| w.state == State::AtBarrier && w.pc == pc && w.active == w.valid);
            if !ok {
                let lanes = self
                    .warps
                    .iter()
                    .map(|w| {
                        (0..W)
                            .map(|l| {
                                let bit = 1u32 << l;
                                if w.valid & bit == 0 {
                                    ' '
                                } else if w.state == State::AtBarrier && w.active & bit != 0 {
                                    if w.pc == pc { 'W' } else { 'o' }
                                } else {
                                    '.'
                                }
                            })
                            .collect::<String>()
                            .trim_end()
                            .to_string()
                    })
                    .collect();
                let span = match self.p.ops[pc] {
                    Op::Barrier { span } => span,
                    _ => unreachable!("waiting at a barrier"),
                };
                return Err(self.report(ReportKind::DivergentBarrier { lanes }, span, first));
            }
            for w in self.warps.iter_mut() {
                w.state = State::Running;
                w.pc += 1;
            }
            self.epoch += 1;
            self.stats.barriers += 1;
        }
    }

    fn run_warp(&mut self, wi: usize, args: &mut [Arg]) -> Result<(), Box<Report>> {
        let p = self.p;
        let ops = &p.ops;
        let mut steps = self.stats.warp_instructions;
        let mut lane_steps = 0u64;
        let limit = self.opts.max_warp_steps;
        // The traced lane's bit in this warp, else 0: one AND per step.
        let trace_bit = match &self.trace {
            Some(t) if t.warp == wi => t.bit(),
            _ => 0,
        };
        let result = loop {
            let w = &mut self.warps[wi];
            let pc = w.pc;
            steps += 1;
            lane_steps += w.active.count_ones() as u64;
            if steps - self.steps_before > limit {
                let span = p.op_span[pc];
                let loops = enclosing_loops(p, pc);
                let kind = ReportKind::StepLimit {
                    steps: limit,
                    loops,
                };
                break Err(self.report(kind, span, wi));
            }
            if trace_bit & w.active != 0 {
                if let Some(t) = self.trace.as_mut() {
                    t.observe(p, pc, &w.regs, args);
                }
            }
            w.pc += 1;
            match &ops[pc] {
                Op::Const { d, bits } => {
                    w.regs[*d as usize] = [*bits; W];
                    w.undef.define(*d);
                }
                Op::Builtin { d, b } => {
                    let v = builtin_lanes(*b, w.base, self.width, self.launch, self.block);
                    w.regs[*d as usize] = v;
                    w.undef.define(*d);
                }
                Op::Mov { d, s } => {
                    let src = w.regs[*s as usize];
                    let m = w.active;
                    let dst = &mut w.regs[*d as usize];
                    if m == u32::MAX {
                        *dst = src;
                    } else {
                        for l in lanes_of(m) {
                            dst[l] = src[l];
                        }
                    }
                    if w.undef.live {
                        w.undef.copy(*d, *s, m);
                    }
                }
                Op::Un { d, k, a } => {
                    let r = w.regs[*a as usize];
                    w.regs[*d as usize] = unary(*k, &r);
                    if w.undef.live {
                        w.undef.join(*d, &[*a]);
                    }
                }
                Op::Bin { d, k, a, b, span } => {
                    let (ra, rb) = (*a, *b);
                    let (a, b) = (w.regs[ra as usize], w.regs[rb as usize]);
                    if matches!(k, BinK::DivU | BinK::DivS | BinK::RemU | BinK::RemS) {
                        // An undefined divisor makes an undefined quotient,
                        // not a division by zero.
                        let defined = w.active & !w.undef.of(rb);
                        if let Some(l) = lanes_of(defined).find(|&l| b[l] == 0) {
                            let thread = w.base + l as u32;
                            break Err(self.report(ReportKind::DivByZero { thread }, *span, wi));
                        }
                    }
                    w.regs[*d as usize] = binary(*k, &a, &b);
                    if w.undef.live {
                        w.undef.join(*d, &[ra, rb]);
                    }
                }
                Op::Fma { d, a, b, c } => {
                    if w.undef.live {
                        w.undef.join(*d, &[*a, *b, *c]);
                    }
                    let (a, b, c) = (
                        w.regs[*a as usize],
                        w.regs[*b as usize],
                        w.regs[*c as usize],
                    );
                    let f = |x: u64| f32::from_bits(x as u32);
                    let mut o = [0; W];
                    for l in 0..W {
                        o[l] = f(a[l]).mul_add(f(b[l]), f(c[l])).to_bits() as u64;
                    }
                    w.regs[*d as usize] = o;
                }
                Op::UnV { d, op, ty, a } => {
                    let a = &w.regs[*a as usize];
                    let mut o = [0; W];
                    for l in 0..W {
                        o[l] =
                            eval::unary(*op, Value::from_bits(*ty, a[l])).map_or(0, Value::to_bits);
                    }
                    w.regs[*d as usize] = o;
                }
                Op::BinV {
                    d,
                    op,
                    lty,
                    rty,
                    a,
                    b,
                    span,
                } => {
                    let (a, b) = (&w.regs[*a as usize], &w.regs[*b as usize]);
                    let mut o = [0; W];
                    let mut zero_divisor = None;
                    for l in 0..W {
                        let x = Value::from_bits(*lty, a[l]);
                        let y = Value::from_bits(*rty, b[l]);
                        o[l] = match eval::binary(*op, x, y) {
                            Ok(v) => v.to_bits(),
                            // Inactive lanes compute too; only an active
                            // lane's division by zero is the kernel's.
                            Err(EvalError::DivByZero) if w.active & (1 << l) != 0 => {
                                zero_divisor.get_or_insert(l as u32);
                                0
                            }
                            Err(_) => 0,
                        };
                    }
                    if let Some(l) = zero_divisor {
                        let thread = w.base + l;
                        break Err(self.report(ReportKind::DivByZero { thread }, *span, wi));
                    }
                    w.regs[*d as usize] = o;
                }
                Op::CastV { d, from, to, a } => {
                    let a = &w.regs[*a as usize];
                    let mut o = [0; W];
                    for l in 0..W {
                        o[l] = eval::cast(Value::from_bits(*from, a[l]), *to).to_bits();
                    }
                    w.regs[*d as usize] = o;
                }
                Op::MathV { d, f, ty, args } => {
                    let mut o = [0; W];
                    let mut vals = [Value::Bool(false); 3];
                    for (l, out) in o.iter_mut().enumerate() {
                        for (v, r) in vals.iter_mut().zip(args) {
                            *v = Value::from_bits(*ty, w.regs[*r as usize][l]);
                        }
                        *out = eval::math(*f, &vals[..args.len()]).map_or(0, Value::to_bits);
                    }
                    w.regs[*d as usize] = o;
                }
                Op::Load {
                    d,
                    mem,
                    idx,
                    signed,
                    span,
                } => {
                    let (d, mem, idx, signed, span) = (*d, *mem, *idx, *signed, *span);
                    if let Err(r) = self.defined_access(wi, mem, idx, &[], signed, false, span) {
                        break Err(r);
                    }
                    if let Err(r) = self.load(wi, d, mem, idx, signed, span, args) {
                        break Err(r);
                    }
                    match mem {
                        Mem::Local(a) if self.warps[wi].undef.live => {
                            self.local_loaded(wi, a, idx, d, signed)
                        }
                        _ => self.warps[wi].undef.define(d),
                    }
                }
                Op::Store {
                    mem,
                    idx,
                    v,
                    signed,
                    span,
                } => {
                    let (mem, idx, v, signed, span) = (*mem, *idx, *v, *signed, *span);
                    if let Err(r) = self.defined_access(wi, mem, idx, &[v], signed, false, span) {
                        break Err(r);
                    }
                    if let Err(r) = self.store(wi, mem, idx, v, signed, span, args) {
                        break Err(r);
                    }
                    if let Mem::Local(a) = mem {
                        if self.warps[wi].undef.live {
                            self.local_stored(wi, a, idx, v, signed);
                        }
                    }
                }
                Op::Atomic {
                    d,
                    op,
                    ty,
                    mem,
                    idx,
                    v,
                    cmp,
                    signed,
                    span,
                } => {
                    let a = (*d, *op, *ty, *mem, *idx, *v, *cmp, *signed, *span);
                    let operands: &[Reg] = if *op == AtomicOp::Cas {
                        &[*cmp, *v]
                    } else {
                        &[*v]
                    };
                    if let Err(r) =
                        self.defined_access(wi, *mem, *idx, operands, *signed, true, *span)
                    {
                        break Err(r);
                    }
                    if let Err(r) = self.atomic(wi, a, args) {
                        break Err(r);
                    }
                    self.warps[wi].undef.define(*d);
                }
                Op::Shuffle {
                    d,
                    kind,
                    mask,
                    v,
                    arg,
                    span,
                } => {
                    let (d, kind, mask, v, arg, span) = (*d, *kind, *mask, *v, *arg, *span);
                    if let Err(r) = self.shuffle(wi, d, kind, mask, v, arg, span) {
                        break Err(r);
                    }
                }
                Op::Vote {
                    d,
                    kind,
                    mask,
                    pred,
                    span,
                } => {
                    let (d, kind, mask, pred, span) = (*d, *kind, *mask, *pred, *span);
                    if let Err(r) = self.vote(wi, d, kind, mask, pred, span) {
                        break Err(r);
                    }
                }
                Op::If {
                    cond,
                    negate,
                    else_pc,
                } => {
                    if w.undef.live {
                        let active = w.active;
                        if let Err(r) = self.defined(wi, *cond, active, Use::Branch, p.op_span[pc])
                        {
                            break Err(r);
                        }
                    }
                    let w = &mut self.warps[wi];
                    let c = &w.regs[*cond as usize];
                    let mut t = 0u32;
                    for l in lanes_of(w.active) {
                        if (c[l] as u32 != 0) != *negate {
                            t |= 1 << l;
                        }
                    }
                    w.stack.push(Frame::If {
                        else_mask: w.active & !t,
                        join: 0,
                    });
                    w.active = t;
                    if t == 0 {
                        w.pc = *else_pc as usize;
                    }
                }
                Op::Else { end_pc } => {
                    let Some(Frame::If { else_mask, join }) = w.stack.last_mut() else {
                        unreachable!("else without if")
                    };
                    *join = w.active;
                    w.active = *else_mask;
                    if w.active == 0 {
                        w.pc = *end_pc as usize;
                    }
                }
                Op::EndIf => {
                    let Some(Frame::If { join, .. }) = w.stack.pop() else {
                        unreachable!("endif without if")
                    };
                    w.active |= join;
                }
                Op::LoopBegin => w.stack.push(Frame::Loop {
                    exit: 0,
                    brk: 0,
                    cont: 0,
                }),
                Op::LoopTest { cond, end_pc } => {
                    if w.undef.live {
                        let active = w.active;
                        if let Err(r) = self.defined(wi, *cond, active, Use::Loop, p.op_span[pc]) {
                            break Err(r);
                        }
                    }
                    let w = &mut self.warps[wi];
                    let c = &w.regs[*cond as usize];
                    let mut t = 0u32;
                    for l in lanes_of(w.active) {
                        if c[l] as u32 != 0 {
                            t |= 1 << l;
                        }
                    }
                    let Some(Frame::Loop { exit, .. }) = w.stack.last_mut() else {
                        unreachable!("test outside loop")
                    };
                    *exit |= w.active & !t;
                    w.active = t;
                    if t == 0 {
                        w.pc = *end_pc as usize;
                    }
                }
                Op::LoopCont => {
                    let Some(Frame::Loop { cont, .. }) = w.stack.last_mut() else {
                        unreachable!("continue outside loop")
                    };
                    w.active |= *cont;
                    *cont = 0;
                }
                Op::LoopBack { head_pc } => {
                    if w.active != 0 {
                        w.pc = *head_pc as usize;
                    }
                }
                Op::LoopEnd => {
                    let Some(Frame::Loop { exit, brk, .. }) = w.stack.pop() else {
                        unreachable!("loop end")
                    };
                    w.active = exit | brk;
                }
                Op::Break { skip } | Op::Continue { skip } => {
                    let is_break = matches!(ops[pc], Op::Break { .. });
                    let frame = w
                        .stack
                        .iter_mut()
                        .rev()
                        .find(|f| matches!(f, Frame::Loop { .. }));
                    let Some(Frame::Loop { brk, cont, .. }) = frame else {
                        unreachable!("break outside loop")
                    };
                    if is_break {
                        *brk |= w.active;
                    } else {
                        *cont |= w.active;
                    }
                    // Lanes leaving also leave every enclosing `if` of this loop body.
                    w.active = 0;
                    w.pc = *skip as usize;
                }
                Op::Return { skip } => {
                    w.active = 0;
                    w.pc = *skip as usize;
                }
                Op::WarpSync { mask, span } => {
                    // Lockstep lanes are already together: the check is the
                    // whole of it (and memory is sequentially consistent).
                    if w.active != 0 {
                        let (mask, span) = (*mask, *span);
                        let checked = self
                            .collective_mask(wi, mask, "sync_warp", span)
                            .and_then(|m| self.defined(wi, mask, m, Use::Mask("sync_warp"), span));
                        if let Err(r) = checked {
                            break Err(r);
                        }
                    }
                }
                Op::CheckStep { step, span } => {
                    let s = &w.regs[*step as usize];
                    if let Some(l) = lanes_of(w.active).find(|&l| s[l] == 0) {
                        let thread = w.base + l as u32;
                        let span = *span;
                        break Err(self.report(ReportKind::ZeroStep { thread }, span, wi));
                    }
                }
                Op::Barrier { .. } => {
                    if w.active != 0 {
                        w.pc = pc;
                        w.state = State::AtBarrier;
                        break Ok(());
                    }
                }
                Op::End => {
                    w.state = State::Done;
                    break Ok(());
                }
            }
        };
        self.stats.warp_instructions = steps;
        self.stats.lane_instructions += lane_steps;
        result
    }
}
