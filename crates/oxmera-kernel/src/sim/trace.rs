//! One thread's path through a simulated launch: the first debugging tool
//! a CUDA programmer reaches for (`printf` from one thread), without
//! editing the kernel.
//!
//! The tracer watches one lane of one warp of one block. Each time that
//! lane executes an operation of a statement other than the one before, a
//! step is recorded with the statement's span; a step also records what the
//! lane wrote: a local (`i = 5`, loop variables included) or a buffer
//! element (`out[5] = 1.5`). Steps where the lane is inactive (the other
//! side of a branch, iterations it left) do not appear, so the trace *is*
//! the path. Everything else in the simulation is unchanged: the trace is
//! taken on the same deterministic run, and a witness (a divergent barrier,
//! an out-of-bounds access) ends it where the kernel stopped.

use std::fmt::Write;

use crate::ir::{Dim3, Kernel, Mem, Scalar, SpanId, Value};
use crate::launch::LaunchConfig;
use crate::sim::compile::{Op, Program};
use crate::sim::exec::{SimOptions, SimStats, run_traced};
use crate::sim::{Arg, SimError, render_report};

/// Most steps kept; a longer path is cut, and the count of the rest kept.
const MAX_STEPS: usize = 10_000;

/// One statement the traced thread executed, with what it wrote there.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceStep {
    /// The statement.
    pub span: SpanId,
    /// What it wrote, as `name = value` or `buffer[index] = value`.
    pub writes: Vec<String>,
}

/// The path of one thread through a launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The thread, as a linear index over the grid (block-major, x fastest).
    pub thread: u64,
    /// Its block.
    pub block: Dim3,
    /// Its linear index in the block.
    pub thread_in_block: u32,
    /// Its warp in the block and lane in the warp.
    pub warp: u32,
    /// Its lane.
    pub lane: u32,
    /// The statements, in order.
    pub steps: Vec<TraceStep>,
    /// Steps past the first 10 000 (the most a trace keeps), not kept.
    pub dropped: u64,
}

/// The watcher the simulator carries for the traced block.
pub(crate) struct Tracer {
    pub(crate) trace: Trace,
    pub(crate) warp: usize,
    lane: usize,
    last_span: Option<SpanId>,
    /// The register of each local, to name a write to it.
    local_of_reg: Vec<Option<(String, Scalar)>>,
}

impl Tracer {
    /// The bit of the traced lane in an active mask.
    pub(crate) fn bit(&self) -> u32 {
        1 << self.lane
    }

    /// Called before the traced lane executes `op` (the lane is active).
    /// Kept out of line and cold, so the warp engine's loop stays as tight
    /// as it is untraced.
    #[cold]
    #[inline(never)]
    pub(crate) fn observe(&mut self, p: &Program, pc: usize, regs: &[[u64; 32]], args: &[Arg]) {
        // The bookkeeping of structured control flow carries the span of
        // the last statement inside it, which the lane may not have run.
        if matches!(
            p.ops[pc],
            Op::Else { .. }
                | Op::EndIf
                | Op::LoopBegin
                | Op::LoopCont
                | Op::LoopBack { .. }
                | Op::LoopEnd
                | Op::End
        ) {
            return;
        }
        let span = p.op_span[pc];
        if self.last_span != Some(span) {
            self.last_span = Some(span);
            if self.trace.steps.len() < MAX_STEPS {
                self.trace.steps.push(TraceStep {
                    span,
                    writes: Vec::new(),
                });
            } else {
                self.trace.dropped += 1;
            }
        }
        let l = self.lane;
        let write = match &p.ops[pc] {
            Op::Mov { d, s } => self
                .local_of_reg
                .get(*d as usize)
                .and_then(Option::as_ref)
                .map(|(name, ty)| format!("{name} = {}", shown(*ty, regs[*s as usize][l]))),
            Op::Store {
                mem,
                idx,
                v,
                signed,
                ..
            } => {
                let raw = regs[*idx as usize][l] as u32;
                let index = if *signed {
                    (raw as i32).to_string()
                } else {
                    raw.to_string()
                };
                let elem = match mem {
                    Mem::Global(param) => match args.get(*param as usize) {
                        Some(Arg::Buffer(b)) => b.elem,
                        _ => Scalar::U32,
                    },
                    Mem::Shared(s) => p.kernel.shared[*s as usize].elem,
                    Mem::Local(a) => p.kernel.arrays[*a as usize].elem,
                };
                Some(format!(
                    "{}[{index}] = {}",
                    p.kernel.mem_name(*mem),
                    shown(elem, regs[*v as usize][l])
                ))
            }
            _ => None,
        };
        if let (Some(w), Some(step)) = (write, self.trace.steps.last_mut()) {
            if self.trace.dropped == 0 {
                step.writes.push(w);
            }
        }
    }
}

/// A value as the trace shows it: the number, without a type suffix.
fn shown(ty: Scalar, bits: u64) -> String {
    let v = Value::from_bits(ty, bits);
    match v {
        Value::F32(x) => format!("{x:?}"),
        Value::F64(x) => format!("{x:?}"),
        Value::F16(_) | Value::BF16(_) => format!("{:?}", v.as_f32().unwrap_or(f32::NAN)),
        Value::I32(x) => x.to_string(),
        Value::U32(x) => x.to_string(),
        Value::Bool(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
        Value::U64(x) => x.to_string(),
        Value::U8(x) => x.to_string(),
        Value::U16(x) => x.to_string(),
    }
}

/// A traced run: the path, and how the run ended.
pub struct TracedRun {
    /// The traced thread's path.
    pub trace: Trace,
    /// The run's outcome, as [`crate::sim::run`] would return it.
    pub result: Result<SimStats, SimError>,
}

/// Runs `k` like [`crate::sim::run`] and traces the thread with linear
/// index `thread` over the grid (block after block, x fastest; within a
/// block, threads x-fastest as `thread_idx` numbers them).
///
/// Errors (before anything runs): a thread outside the launch, or the
/// launch or arguments the simulator refuses.
pub fn trace(
    k: &Kernel,
    launch: LaunchConfig,
    args: &mut [Arg],
    opts: &SimOptions,
    thread: u64,
) -> Result<TracedRun, String> {
    let bt = launch.block.count();
    let total = launch.grid.count() * bt;
    if thread >= total {
        return Err(format!(
            "thread {thread} is outside the launch ({total} threads: grid {} × block {})",
            launch.grid, launch.block
        ));
    }
    let width = u64::from(opts.target.warp_width());
    let (b, t) = (thread / bt, thread % bt);
    let g = launch.grid;
    let block = Dim3::new(
        (b % u64::from(g.x)) as u32,
        (b / u64::from(g.x) % u64::from(g.y)) as u32,
        (b / (u64::from(g.x) * u64::from(g.y))) as u32,
    );
    let p = Program::compile(k);
    let mut local_of_reg = vec![None; p.nregs];
    for (id, &r) in p.local_regs.iter().enumerate() {
        let l = &k.locals[id];
        local_of_reg[r as usize] = Some((l.name.clone(), l.ty));
    }
    let tracer = Tracer {
        trace: Trace {
            thread,
            block,
            thread_in_block: t as u32,
            warp: (t / width) as u32,
            lane: (t % width) as u32,
            steps: Vec::new(),
            dropped: 0,
        },
        warp: (t / width) as usize,
        lane: (t % width) as usize,
        last_span: None,
        local_of_reg,
    };
    let (result, tracer) = run_traced(&p, launch, args, opts, Some((block, tracer)));
    let trace = tracer.expect("the tracer comes back").trace;
    Ok(TracedRun { trace, result })
}

/// The trace as text: one line per statement, its source line and text,
/// and what it wrote.
pub fn render_trace(k: &Kernel, t: &Trace, run: &Result<SimStats, SimError>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "trace of thread {} (block {}, thread {} of the block: warp {}, lane {}):",
        t.thread, t.block, t.thread_in_block, t.warp, t.lane
    );
    for s in &t.steps {
        let sp = k.span(s.span);
        // The statement's source line reads best (`if i < n {` rather than
        // the whole `if` and its body); the snippet where the text is absent.
        let text = k
            .source
            .line(sp.line)
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| k.snippet(s.span).to_string());
        let writes = if s.writes.is_empty() {
            String::new()
        } else {
            format!("    → {}", s.writes.join(", "))
        };
        let _ = writeln!(out, "  line {:>4}: {text}{writes}", sp.line);
    }
    if t.dropped > 0 {
        let _ = writeln!(out, "  … {} more steps", t.dropped);
    }
    match run {
        Ok(_) => {
            let _ = writeln!(out, "  (the thread finished)");
        }
        Err(SimError::Report(r)) => {
            let _ = writeln!(out, "  (the run stopped here:)");
            out.push_str(&render_report(k, r));
        }
        Err(e) => {
            let _ = writeln!(out, "  (the run stopped: {e})");
        }
    }
    out
}
