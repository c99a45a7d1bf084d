//! Launch-aware uniformity analysis and the rules built on it.
//!
//! The question every rule asks is "which threads reach this, and does
//! this value differ between them?". A barrier is wrong when some threads
//! of the block never reach it; a warp collective when some lanes its mask
//! names are elsewhere; a store races when two threads write one element.
//! The analysis answers it by walking the kernel once per launch (and
//! target), with an abstract value for every local and an abstract
//! control for every statement:
//!
//! - [`values`]: what an expression is across threads — its *uniformity*
//!   (the same for the whole grid, per block, per warp, or different
//!   between lanes of one warp) and, when it is a function of thread
//!   geometry and constants, its *concrete per-thread vector* over one
//!   block. The vector makes launch-determined guards exact: `warp_id() ==
//!   0` is all-true at block 32 and split between warps at block 64, which
//!   is also where the findings' lane maps come from. Data-dependent values
//!   fall back to the lattice, which is conservative.
//! - [`affine`]: values built from the block index — the global thread id
//!   and what divides it — as a block term plus a known per-thread part, so
//!   `gid / 32` is warp-uniform without knowing the block.
//! - [`control`]: which threads reach each statement — exactly when every
//!   condition so far was launch-determined, otherwise a bound and a
//!   uniformity — through `if`, loops (iterated to a fixed point), and the
//!   threads that `return`, `break` or `continue` under divergent control,
//!   which catches the early-return and divergent-trip-count disguises of
//!   a divergent barrier.
//! - [`rules`]: the checks made at barriers, collectives and global
//!   stores, each finding with the chain of steps that led to it.
//! - [`contract`]: what a launch may ask before any statement runs — the
//!   kernel's declared launch space and the target's shared memory.
//!
//! Warps are the [`Target`]'s: a block is cut into warps of its warp width,
//! so `warp_id() == 0` covers a 32-thread block on a 32-wide target and one
//! quarter of it on lavapipe's 8-wide subgroups. A verdict is therefore per
//! (target, launch); [`CheckOptions::new`] uses [`Target::generic`] (warps of
//! 32), which is what every check did before targets existed.

use std::collections::HashSet;
use std::rc::Rc;

mod affine;
mod contract;
mod control;
mod rules;
mod values;

use contract::{contract, shared_budget};
use control::Reach;
use values::{AbstractValue, Prov};

use crate::ir::*;
use crate::launch::{LaunchConfig, LaunchError};
use crate::target::Target;

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
    /// Bytes of dynamically sized shared memory the launch asks for
    /// (CUDA's third launch parameter): the length of the kernel's
    /// `shared_dynamic::<T>()` array, counted with the static arrays
    /// against the target's limit (OXK004).
    pub dynamic_shared_bytes: u64,
}

impl CheckOptions {
    /// Checks one launch with default specialization on
    /// [`Target::generic`] (warps of 32, the 48 KiB static shared cap).
    pub fn new(launch: LaunchConfig) -> Self {
        CheckOptions {
            launch,
            target: Target::generic(),
            specs: None,
            dynamic_shared_bytes: 0,
        }
    }

    /// The same check on `target`.
    pub fn on(self, target: Target) -> Self {
        CheckOptions { target, ..self }
    }

    /// The same check with `bytes` of dynamic shared memory.
    pub fn with_dynamic_shared(self, bytes: u64) -> Self {
        CheckOptions {
            dynamic_shared_bytes: bytes,
            ..self
        }
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
    // One slot per local, then one summary per local array (see
    // `Analyzer::store_array`).
    let mut env = vec![AbstractValue::grid(); k.locals.len() + k.arrays.len()];
    let top = Reach::all(a.block_threads);
    a.block(&k.body, &mut env, &top);
    findings.extend(a.findings);
    findings.sort_by_key(|f| (f.rule, k.span(f.span).line, f.span));
    Ok(findings)
}

/// One walk of one kernel at one launch on one target: the state the
/// submodules share.
struct Analyzer<'k> {
    k: &'k Kernel,
    launch: LaunchConfig,
    target: Target,
    /// The target's warp width.
    warp_width: usize,
    /// Threads in one block of the launch.
    block_threads: usize,
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
            warp_width: target.warp_width() as usize,
            block_threads: launch.block_threads() as usize,
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

    fn find(&mut self, f: Finding) {
        if self.seen.insert((f.rule, f.span)) {
            self.findings.push(f);
        }
    }

    fn lane_map(&self, m: &[bool]) -> LaneMap {
        LaneMap {
            warps: m
                .chunks(self.warp_width)
                .map(|c| c.iter().map(|b| if *b { 'W' } else { '.' }).collect())
                .collect(),
        }
    }
}
