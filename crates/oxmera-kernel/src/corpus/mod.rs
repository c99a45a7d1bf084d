//! The broken-kernel corpus: kernels that are each wrong in one known way,
//! and their expected verdicts (`corpus/expected.toml`), so that every rule
//! of the analysis and every report of the simulator is shown to fire.

mod convergent;
mod helpers;
mod kernels;
mod large;
mod page;
mod undefined;

pub use page::ptx_page;

pub use convergent::*;
pub use helpers::helper_calls::*;
pub use kernels::*;
pub use large::*;
pub use undefined::*;

use crate::ir::{Dim3, Value};
use crate::launch::LaunchConfig;
use crate::library::{DemoOutcome, rng_f32};
use crate::registry::{Entry, Origin};
use crate::sim::{self, Arg, Buffer, SimError, SimOptions};
use crate::target::Target;

/// The expected verdicts, as shipped.
pub const EXPECTED: &str = include_str!("../../corpus/expected.toml");

/// The corpus kernels for the registry.
pub fn entries() -> Vec<Entry> {
    let e = |name, summary, kernel| Entry {
        name,
        summary,
        kernel,
        origin: Origin::Corpus,
    };
    vec![
        e(
            "barrier_warp_guard",
            "barrier under `warp_id() == 0`",
            barrier_warp_guard,
        ),
        e(
            "barrier_thread_guard",
            "barrier under `thread_idx_x() < 32`",
            barrier_thread_guard,
        ),
        e(
            "barrier_early_return",
            "half the warp returns before the barrier",
            barrier_early_return,
        ),
        e(
            "barrier_bounds_return",
            "bounds check returns before the barrier",
            barrier_bounds_return,
        ),
        e(
            "barrier_divergent_trip",
            "barrier in a loop with per-thread trip count",
            barrier_divergent_trip,
        ),
        e(
            "barrier_odd_lanes",
            "only even lanes reach the barrier",
            barrier_odd_lanes,
        ),
        e(
            "barrier_data_while",
            "barrier in a data-dependent while",
            barrier_data_while,
        ),
        e(
            "barrier_divergent_break",
            "divergent break before a barrier",
            barrier_divergent_break,
        ),
        e(
            "barrier_two_arms",
            "different barriers in two divergent arms",
            barrier_two_arms,
        ),
        e(
            "ballot_divergent",
            "full-mask ballot in a lane-dependent branch",
            ballot_divergent,
        ),
        e(
            "shfl_divergent",
            "full-mask shuffle on even lanes only",
            shfl_divergent,
        ),
        e(
            "shfl_absent_lanes",
            "full-mask shuffle with a partial last warp",
            shfl_absent_lanes,
        ),
        e(
            "vote_after_return",
            "full-mask vote after lanes returned",
            vote_after_return,
        ),
        e("shared_64k", "64 KiB static shared memory", shared_64k),
        e(
            "shared_80k",
            "80 KiB shared memory: fits 8.6, not 7.5",
            shared_80k,
        ),
        e(
            "shared_race_neighbor",
            "reads a neighbour's slot without a barrier",
            shared_race_neighbor,
        ),
        e(
            "shared_race_tree",
            "tree reduction missing its barrier",
            shared_race_tree,
        ),
        e(
            "shared_race_one_slot",
            "every thread writes one shared slot",
            shared_race_one_slot,
        ),
        e("oob_unguarded", "no bounds check", oob_unguarded),
        e(
            "oob_shared_off_by_one",
            "shared index off by one",
            oob_shared_off_by_one,
        ),
        e("oob_negative_index", "reads index -1", oob_negative_index),
        e(
            "global_race_all",
            "every thread writes out[0]",
            global_race_all,
        ),
        e(
            "global_race_block_slot",
            "every thread writes out[block]",
            global_race_block_slot,
        ),
        e(
            "global_race_halved",
            "two threads per output element",
            global_race_halved,
        ),
        e(
            "contract_block_128",
            "declares block 128 only",
            contract_block_128,
        ),
        e("endless_loop", "a loop that never ends", endless_loop),
        e("div_by_zero", "integer division by zero", div_by_zero),
        e(
            "helper_barrier_guarded",
            "a helper's barrier called under `thread_idx_x() < 32`",
            helper_barrier_guarded,
        ),
        e(
            "helper_barrier_after_return",
            "odd lanes return; the rest reach a barrier two helpers deep",
            helper_barrier_after_return,
        ),
        e(
            "helper_barrier_every_thread",
            "every thread calls the staging helper (clean)",
            helper_barrier_every_thread,
        ),
        e(
            "helper_barrier_uniform_guard",
            "the call's guard is block-uniform (clean)",
            helper_barrier_uniform_guard,
        ),
        e(
            "warp_row_by_gid",
            "one warp per row, the row from the global id (clean at whole warps)",
            warp_row_by_gid,
        ),
        e(
            "warp_row_by_warp_id",
            "one warp per row, the row from `warp_id()` (clean)",
            warp_row_by_warp_id,
        ),
        e(
            "warp_row_every_lane_stores",
            "every lane of a row's warp stores the row",
            warp_row_every_lane_stores,
        ),
        e(
            "broadcast_trip_count",
            "a trip count broadcast from lane 0 by `shfl_sync` (clean)",
            broadcast_trip_count,
        ),
        e(
            "ballot_trip_count",
            "a trip count from a vote (clean)",
            ballot_trip_count,
        ),
        e(
            "lane_zero_trip_count",
            "a trip count set in lane 0 only, before full-mask shuffles",
            lane_zero_trip_count,
        ),
        e(
            "early_return_block_slot",
            "early return, then thread 0 writes its block's slot (clean)",
            early_return_block_slot,
        ),
        e(
            "early_return_warp_slot",
            "early return, then lane 0 writes its warp's slot (clean)",
            early_return_warp_slot,
        ),
        e(
            "early_return_one_slot",
            "early return, then thread 0 of every block writes slot 0",
            early_return_one_slot,
        ),
        e(
            "block_blind_guarded_store",
            "`out[thread_idx_x()]` behind a data guard: every block writes the same elements",
            block_blind_guarded_store,
        ),
        e(
            "block_blind_folded_slot",
            "a slot from `thread_idx_x() % 16` after a data-dependent return",
            block_blind_folded_slot,
        ),
        e(
            "guarded_store_by_gid",
            "a data-guarded store to `out[gid]` (clean)",
            guarded_store_by_gid,
        ),
        e(
            "shared_zero_then_atomic",
            "shared counts zeroed by plain stores, then atomics, no barrier between",
            shared_zero_then_atomic,
        ),
        e(
            "shared_atomic_then_read",
            "shared counts read right after other threads' atomics",
            shared_atomic_then_read,
        ),
        e(
            "shared_histogram_synced",
            "zero, barrier, atomics, barrier, read (clean)",
            shared_histogram_synced,
        ),
        e(
            "global_accumulate_plain",
            "thread 0 of every block adds into `out[0]` without an atomic",
            global_accumulate_plain,
        ),
        e(
            "stencil_in_place",
            "an in-place stencil reads a neighbour another block writes",
            stencil_in_place,
        ),
        e(
            "global_accumulate_atomic",
            "every block adds into `out[0]` with `atomic_add` (clean)",
            global_accumulate_atomic,
        ),
        e(
            "stencil_two_buffers",
            "a stencil from one buffer into another (clean)",
            stencil_two_buffers,
        ),
        e(
            "shfl_down_guarded_sum",
            "a `shfl_down_sync` sum of a partial warp, adding only where the source lane is in its mask (clean)",
            shfl_down_guarded_sum,
        ),
        e(
            "shfl_down_unguarded_sum",
            "the same sum adding the undefined values read from lanes that left",
            shfl_down_unguarded_sum,
        ),
        e(
            "shfl_up_guarded_scan",
            "a `shfl_up_sync` scan whose mask starts mid-warp, adding only from lanes in it (clean)",
            shfl_up_guarded_scan,
        ),
        e(
            "shfl_up_scan_wrong_guard",
            "the same scan guarded by `lane >= off`: stores values read from lanes that left",
            shfl_up_scan_wrong_guard,
        ),
    ]
}

/// One expected verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Corpus kernel name.
    pub kernel: String,
    /// The launch.
    pub launch: LaunchConfig,
    /// Target compute capability, if any (`cc = "8.6"`: [`Target::cuda`]).
    pub cc: Option<String>,
    /// Target by name, if any (`target = "lavapipe"`; see [`Target`]).
    pub target: Option<String>,
    /// Expected verdicts: `OXKnnn`, `sim:KIND` or `clean`.
    pub expect: Vec<String>,
}

impl Case {
    /// The target the case names: `target`, else `cc` as a CUDA target, else
    /// [`Target::generic`].
    ///
    /// # Panics
    /// If `cc` names an unknown compute capability (`target` is checked when
    /// the file is parsed).
    pub fn target(&self) -> Target {
        if let Some(t) = &self.target {
            return t.parse().expect("checked when parsed");
        }
        match &self.cc {
            Some(cc) => Target::cuda(cc.parse().expect("a known compute capability")),
            None => Target::generic(),
        }
    }
}

/// A malformed line of the expectations file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("corpus expectations, line {line}: {problem}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub problem: String,
}

fn dim(v: &str) -> Option<Dim3> {
    let v = v.trim().trim_start_matches('[').trim_end_matches(']');
    let n: Vec<u32> = v
        .split(',')
        .map(|p| p.trim().parse().ok())
        .collect::<Option<_>>()?;
    match n.as_slice() {
        [x] => Some(Dim3::x(*x)),
        [x, y] => Some(Dim3::new(*x, *y, 1)),
        [x, y, z] => Some(Dim3::new(*x, *y, *z)),
        _ => None,
    }
}

/// Parses the expectations (a small TOML subset: `[[case]]` tables of
/// `key = value` lines, strings, integers and arrays).
pub fn parse(text: &str) -> Result<Vec<Case>, ParseError> {
    let mut cases: Vec<Case> = Vec::new();
    for (no, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let err = |problem: &str| ParseError {
            line: no + 1,
            problem: problem.to_string(),
        };
        if line.is_empty() {
            continue;
        }
        if line == "[[case]]" {
            cases.push(Case {
                kernel: String::new(),
                launch: LaunchConfig::linear(1, 32),
                cc: None,
                target: None,
                expect: Vec::new(),
            });
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| err("expected `key = value`"))?;
        let c = cases
            .last_mut()
            .ok_or_else(|| err("a key before the first [[case]]"))?;
        let v = v.trim();
        let unq = |s: &str| s.trim().trim_matches('"').to_string();
        match k.trim() {
            "kernel" => c.kernel = unq(v),
            "block" => c.launch.block = dim(v).ok_or_else(|| err("bad block"))?,
            "grid" => c.launch.grid = dim(v).ok_or_else(|| err("bad grid"))?,
            "cc" => c.cc = Some(unq(v)),
            "target" => {
                let t = unq(v);
                t.parse::<Target>().map_err(|e| err(&e.to_string()))?;
                c.target = Some(t)
            }
            "expect" => {
                c.expect = v
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .split(',')
                    .map(unq)
                    .filter(|s| !s.is_empty())
                    .collect()
            }
            other => return Err(err(&format!("unknown key `{other}`"))),
        }
    }
    Ok(cases)
}

/// The shipped expectations.
///
/// # Panics
/// If the shipped file is malformed (a test keeps it well-formed).
pub fn cases() -> Vec<Case> {
    parse(EXPECTED).expect("the shipped corpus expectations parse")
}

/// The arguments every corpus kernel runs on: `x` of one value per thread,
/// `out` of `n = threads - 3` zeros, and `n`.
pub fn inputs(launch: LaunchConfig, seed: u64) -> Vec<Arg> {
    let threads = (launch.grid.count() * launch.block.count()) as usize;
    let n = threads.saturating_sub(3);
    vec![
        Arg::Buffer(Buffer::from_f32(&rng_f32(seed, threads))),
        Arg::Buffer(Buffer::from_f32(&vec![0.0; n])),
        Arg::Scalar(Value::U32(n as u32)),
    ]
}

/// Step budget for corpus runs: ample for these small launches, small enough
/// that the endless loop stops at once.
pub const STEP_BUDGET: u64 = 2_000_000;

/// Runs a corpus kernel for one launch on the standard inputs, on the
/// generic target.
pub fn simulate(
    name: &str,
    launch: LaunchConfig,
    seed: u64,
) -> Option<Result<DemoOutcome, SimError>> {
    simulate_on(name, launch, Target::generic(), seed)
}

/// Runs a corpus kernel for one launch on the standard inputs, on `target`.
pub fn simulate_on(
    name: &str,
    launch: LaunchConfig,
    target: Target,
    seed: u64,
) -> Option<Result<DemoOutcome, SimError>> {
    let e = entries().into_iter().find(|e| e.name == name)?;
    let mut args = inputs(launch, seed);
    let opts = SimOptions {
        max_warp_steps: STEP_BUDGET,
        target,
        ..SimOptions::default()
    };
    Some(
        sim::run((e.kernel)(), launch, &mut args, &opts).map(|stats| {
            let out = args[1].buffer().expect("out").to_f32();
            DemoOutcome {
                summary: format!("corpus kernel `{name}` on {} seeded inputs", out.len() + 3),
                launch,
                max_abs_err: 0.0,
                passed: true,
                head: out.iter().take(8).copied().collect(),
                stats,
            }
        }),
    )
}

/// Runs a corpus kernel with one block of the given size... or two, when the
/// expectations file launches it with a grid; used by `oxmera kernel run`.
pub fn demo(name: &str, block: Dim3, seed: u64) -> Option<Result<DemoOutcome, SimError>> {
    demo_on(name, block, Target::generic(), seed)
}

/// [`demo`] on `target`.
pub fn demo_on(
    name: &str,
    block: Dim3,
    target: Target,
    seed: u64,
) -> Option<Result<DemoOutcome, SimError>> {
    // As the library's demos do: a block the target cannot run is refused
    // before any data is sized by it.
    if let Err(e) = (LaunchConfig {
        grid: Dim3::x(1),
        block,
    })
    .validate(&target)
    {
        return Some(Err(SimError::Launch(e)));
    }
    let grid = cases()
        .iter()
        .find(|c| c.kernel == name && c.launch.block == block)
        .map(|c| c.launch.grid);
    simulate_on(
        name,
        LaunchConfig {
            grid: grid.unwrap_or(Dim3::x(2)),
            block,
        },
        target,
        seed,
    )
}
