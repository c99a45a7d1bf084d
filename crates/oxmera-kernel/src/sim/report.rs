//! What the simulator reports when it stops, and how it prints it.

use std::fmt::Write;

use crate::ir::{Dim3, Kernel, SpanId};
use crate::launch::{LaunchConfig, LaunchError};
use crate::sim::ArgError;
use crate::target::Target;

/// Why a simulation stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportKind {
    /// A barrier that can never be satisfied.
    DivergentBarrier {
        /// One row per warp: `W` waits here, `o` waits at another barrier,
        /// `.` never arrives (exited or parked in another branch).
        lanes: Vec<String>,
    },
    /// An access outside a buffer or shared array.
    OutOfBounds {
        /// Lane in its warp.
        lane: u32,
        /// Linear thread index in the block.
        thread: u32,
        /// The index used.
        index: i64,
        /// The buffer or array.
        buffer: String,
        /// Its length in elements.
        len: usize,
        /// A store rather than a load.
        write: bool,
        /// Elements per row of a 2-D array (the report names `[row][col]`).
        row_len: Option<u64>,
    },
    /// Two threads touched one shared address between barriers, one writing.
    SharedRace {
        /// The array.
        array: String,
        /// Elements per row of a 2-D array (the report names `[row][col]`).
        row_len: Option<u64>,
        /// The element index.
        index: usize,
        /// Linear thread index of the earlier access.
        first: u32,
        /// The earlier access was a write.
        first_write: bool,
        /// Linear thread index of the later access.
        second: u32,
        /// The later access was a write.
        second_write: bool,
    },
    /// Two blocks touched one global element, one of them writing (or one
    /// updating it atomically and the other not): blocks of one launch are
    /// not ordered, so the result depends on which ran first.
    GlobalRace {
        /// The buffer.
        buffer: String,
        /// The element index.
        index: usize,
        /// The earlier access's block and linear thread index in it.
        first: (Dim3, u32),
        /// How the earlier access touched it: "writes", "reads" or
        /// "updates atomically".
        first_how: &'static str,
        /// The later access's thread (in the report's block).
        second: u32,
        /// How the later access touched it.
        second_how: &'static str,
    },
    /// A warp collective whose mask names lanes that are not executing it.
    Collective {
        /// The builtin.
        name: String,
        /// One row for the warp: `W` arrives, `.` named but absent, `-` not named.
        lanes: String,
    },
    /// Integer division or remainder by zero.
    DivByZero {
        /// Linear thread index in the block.
        thread: u32,
    },
    /// An undefined value — a shuffle's result in a lane whose source lane
    /// was outside the shuffle's mask — used where it matters: stored, as
    /// an index, an atomic's operand, a branch or loop condition, or a
    /// collective's mask.
    Undefined {
        /// Lane in its warp that used it.
        lane: u32,
        /// Its linear thread index in the block.
        thread: u32,
        /// How it was used ("stored to `out[5]`", "as a branch condition").
        used: String,
        /// The shuffle that produced it.
        shuffle: &'static str,
        /// Where that shuffle is.
        origin: SpanId,
        /// The thread (linear index in the block) whose shuffle result was
        /// undefined.
        reader: u32,
        /// The lane it read, in its warp.
        source: u32,
        /// The shuffle's mask: the lanes that executed it.
        mask: u32,
    },
    /// A `for` loop's `step_by` step is 0 in this thread: the loop would
    /// never advance (Rust panics on `step_by(0)`).
    ZeroStep {
        /// Linear thread index in the block.
        thread: u32,
    },
    /// A block ran out of its step budget (an endless loop, most likely).
    StepLimit {
        /// The per-block budget, in warp instructions.
        steps: u64,
        /// The loops the warp was in when the budget ran out, innermost
        /// first (the statements' spans).
        loops: Vec<SpanId>,
    },
}

/// A report with its witness: where, for which launch, block and warp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// What happened.
    pub kind: ReportKind,
    /// The source construct.
    pub span: SpanId,
    /// The launch.
    pub launch: LaunchConfig,
    /// The target whose warp width the run used.
    pub target: Target,
    /// The block index.
    pub block: Dim3,
    /// The warp in the block.
    pub warp: u32,
}

impl Report {
    /// A short name of the report's kind, as the corpus file spells it.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            ReportKind::DivergentBarrier { .. } => "barrier",
            ReportKind::OutOfBounds { .. } => "out-of-bounds",
            ReportKind::SharedRace { .. } => "shared-race",
            ReportKind::GlobalRace { .. } => "global-race",
            ReportKind::Collective { .. } => "collective",
            ReportKind::DivByZero { .. } => "div-by-zero",
            ReportKind::Undefined { .. } => "undefined",
            ReportKind::ZeroStep { .. } => "zero-step",
            ReportKind::StepLimit { .. } => "step-limit",
        }
    }
}

/// Why a simulation did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The arguments do not fit the kernel.
    #[error(transparent)]
    Args(#[from] ArgError),
    /// The launch is impossible.
    #[error("cannot simulate: {0}")]
    Launch(#[from] LaunchError),
    /// The target's warps are wider than the simulator's 32-lane registers.
    #[error(
        "cannot simulate target {target}: its warps have {width} lanes and the simulator runs at most 32; check it with the analysis, or simulate a 32-wide target"
    )]
    WarpTooWide {
        /// The target, by name.
        target: String,
        /// Its warp width.
        width: u32,
    },
    /// The kernel misbehaved; the report is the witness.
    #[error("the simulation stopped: {}", .0.kind_name())]
    Report(Box<Report>),
}

/// Prints a report like a rustc diagnostic.
pub fn render_report(k: &Kernel, r: &Report) -> String {
    let mut out = String::new();
    let (code, msg) = match &r.kind {
        ReportKind::DivergentBarrier { .. } => (
            "sim:barrier",
            "barrier can never be satisfied: some threads of the block never arrive".to_string(),
        ),
        ReportKind::OutOfBounds {
            index,
            buffer,
            len,
            write,
            lane,
            thread,
            row_len,
        } => (
            "sim:out-of-bounds",
            format!(
                "out-of-bounds {} of `{buffer}{}`{} (length {len}{}) by lane {lane} (thread {thread})",
                if *write { "store" } else { "load" },
                element(*index, *row_len),
                flat(*index, *row_len),
                match row_len {
                    Some(c) => format!(": {} rows of {c}", *len as u64 / c),
                    None => String::new(),
                }
            ),
        ),
        ReportKind::SharedRace {
            array,
            row_len,
            index,
            first,
            first_write,
            second,
            second_write,
        } => {
            let w = |b: &bool| if *b { "writes" } else { "reads" };
            (
                "sim:shared-race",
                format!(
                    "shared-memory race on `{array}{}`{}: thread {first} {} and thread {second} {} it with no barrier between",
                    element(*index as i64, *row_len),
                    flat(*index as i64, *row_len),
                    w(first_write),
                    w(second_write)
                ),
            )
        }
        ReportKind::GlobalRace {
            buffer,
            index,
            first,
            first_how,
            second,
            second_how,
        } => (
            "sim:global-race",
            format!(
                "global race on `{buffer}[{index}]`: thread {} of block {} {first_how} it and \
                 thread {second} of block {} {second_how} it; blocks are not ordered",
                first.1, first.0, r.block
            ),
        ),
        ReportKind::Collective { name, .. } => (
            "sim:collective",
            format!("`{name}` executed while lanes named in its mask are absent"),
        ),
        ReportKind::DivByZero { thread } => (
            "sim:div-by-zero",
            format!("integer division by zero in thread {thread}"),
        ),
        ReportKind::Undefined {
            lane, thread, used, ..
        } => (
            "sim:undefined",
            format!("lane {lane} (thread {thread}) uses an undefined value: {used}"),
        ),
        ReportKind::ZeroStep { thread } => (
            "sim:zero-step",
            format!(
                "`step_by(0)` in thread {thread}: the loop would never advance (Rust panics on \
                 a zero step)"
            ),
        ),
        ReportKind::StepLimit { steps, .. } => (
            "sim:step-limit",
            format!(
                "block {} ran {steps} warp instructions without finishing (the per-block budget, \
                 SimOptions::max_warp_steps); the kernel does not terminate",
                r.block
            ),
        ),
    };
    let _ = writeln!(out, "error[{code}]: {msg}");
    let sp = k.span(r.span);
    let gutter = sp.line.to_string().len().max(2);
    let pad = " ".repeat(gutter);
    if sp.line > 0 {
        crate::diag::location(&mut out, k, r.span, "", gutter);
    }
    // A witness inside a helper names the calls that led there.
    crate::diag::call_notes(&mut out, k, r.span, gutter);
    // The generic target's reports read as they did before targets existed.
    let on = if r.target == Target::generic() {
        String::new()
    } else {
        format!(
            " on target {} (warps of {})",
            r.target,
            r.target.warp_width()
        )
    };
    let _ = writeln!(
        out,
        "{pad} = note: launch {}{on}, block {}, warp {}",
        r.launch, r.block, r.warp
    );
    match &r.kind {
        ReportKind::DivergentBarrier { lanes } => {
            let _ = writeln!(
                out,
                "   = lanes (W waits here, o waits at another barrier, . never arrives):"
            );
            for (w, row) in lanes.iter().enumerate() {
                let _ = writeln!(out, "       warp {w:>2}: {row}");
            }
        }
        ReportKind::Collective { lanes, .. } => {
            let _ = writeln!(
                out,
                "   = lanes (W arrives, . named but absent, ! arrives unnamed, - not named):"
            );
            let _ = writeln!(out, "       warp {:>2}: {lanes}", r.warp);
        }
        ReportKind::StepLimit { loops, .. } => {
            for (i, l) in loops.iter().enumerate() {
                let line = k.span(*l).line;
                let text = k
                    .source
                    .line(line)
                    .unwrap_or_else(|| k.snippet(*l).to_string());
                let which = if i == 0 {
                    "in the loop"
                } else {
                    "inside the loop"
                };
                let _ = writeln!(
                    out,
                    "{pad} = note: {which} at line {line}: `{}`",
                    text.trim()
                );
            }
        }
        ReportKind::Undefined {
            shuffle,
            origin,
            reader,
            source,
            mask,
            ..
        } => {
            let at = k.span(*origin);
            let _ = writeln!(
                out,
                "{pad} = note: undefined since `{shuffle}` at line {}: thread {reader} read lane \
                 {source}, which is not in the shuffle's mask {mask:#010x} (the lanes executing \
                 it); CUDA gives that lane an undefined value",
                at.line
            );
            let _ = writeln!(out, "{pad} = note: `{}`", k.snippet(*origin));
            let _ = writeln!(
                out,
                "{pad} = help: use a shuffle's result only where its source lane executed it \
                 (e.g. `if lane + offset < warp_size()` after `shfl_down_sync`, `if lane >= \
                 offset` after `shfl_up_sync`), or select another value there"
            );
        }
        _ => {}
    }
    out
}

/// An element for a message: `[i]`, or `[row][col]` for a 2-D array.
fn element(index: i64, row_len: Option<u64>) -> String {
    match row_len {
        Some(c) if index >= 0 => format!("[{}][{}]", index as u64 / c, index as u64 % c),
        _ => format!("[{index}]"),
    }
}

/// What follows a 2-D element in a message: its flat index.
fn flat(index: i64, row_len: Option<u64>) -> String {
    match row_len {
        Some(_) if index >= 0 => format!(" (flat index {index})"),
        _ => String::new(),
    }
}
