//! The SIMT simulator: runs a kernel on concrete buffers for one launch.
//!
//! A kernel is first compiled to a register bytecode ([`Program`]) whose
//! operations work on whole warps: 32-lane registers, under an active mask.
//! A warp has the target's width ([`SimOptions::target`]): a narrower one
//! (lavapipe's 8) uses the low lanes of each register, a wider one (wave64)
//! is refused with [`SimError::WarpTooWide`].
//! Structured control flow becomes mask operations on a small per-warp stack
//! (if/else, loops with break/continue, early return), so warps reconverge
//! exactly where the source's blocks end. Warps of a block run in turn until
//! each is finished or waits at a barrier; a barrier releases when every
//! thread of the block waits at it, and otherwise the run stops with a
//! witness. Everything is deterministic (lanes in order, warps in order,
//! blocks in order) and a step budget guarantees termination. A shuffle
//! that reads a lane outside its mask yields an undefined value, tracked
//! per lane and reported only where it is stored or decides control.

mod buffer;
mod compile;
mod exec;
mod report;
mod trace;

pub use buffer::{Arg, ArgError, Buffer, check_args};
pub use compile::Program;
pub use exec::{SimOptions, SimStats, run, run_program};
pub use report::{Report, ReportKind, SimError, render_report};
pub use trace::{Trace, TraceStep, TracedRun, render_trace, trace};
