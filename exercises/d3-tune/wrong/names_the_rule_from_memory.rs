//! Names OXK004 as the refusal whatever the report says: which rule refuses depends on the kernel and the part.
//!
//! A named wrong solution of D3, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the
//! author's solution with that one mistake.

use oxmera_kernel::kernel;
use oxmera_kernel::tune::{Row, TuneReport, Verdict};

/// `out[i] = x[i - 1] + x[i] + x[i + 1]` (zero outside `x`) for `i < n`,
/// with blocks of `B` threads and a grid of `ceil(n / TILE)` blocks. Each
/// thread writes `TILE / B` outputs, so `B` must divide `TILE`.
// The contract is what the compiler proves and what runs untuned. The
// space reaches past the 48 KiB static cap on purpose: an NVIDIA part
// opts in to more shared memory a block (99 KiB on sm_86, 163 KiB on
// sm_80, 227 KiB on sm_90), so TILE = 16384 (64 KiB) is safe on most
// parts, and TILE = 65536 (256 KiB) on none: the tuner refuses it (OXK004).
#[kernel(
    block = [256],
    search(
        TILE = [1024, 16384, 65536],
        block = [128, 256, 1024],
        require = [TILE % block_x == 0]
    )
)]
pub fn stencil<const TILE: u32 = 1024>(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(TILE + 2);
    let base = block_idx_x() * TILE;
    let tid = thread_idx_x();
    // The tile and its halo: s[j] holds x[base + j - 1].
    let mut j = tid;
    while j < TILE + 2 {
        let g = base + j;
        let mut v = 0.0;
        if g >= 1 && g - 1 < n {
            v = x[g - 1];
        }
        s[j] = v;
        j += block_dim_x();
    }
    sync_threads();
    let per = TILE / block_dim_x();
    for q in 0..per {
        let t = q * block_dim_x() + tid;
        let i = base + t;
        if i < n {
            out[i] = s[t] + s[t + 1] + s[t + 2];
        }
    }
}

/// One configuration of `stencil`: threads a block, elements a tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    /// Threads in a block.
    pub block: u32,
    /// `TILE`.
    pub tile: u32,
}

/// What you decided after reading a timed tuner report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The configuration to ship on this GPU: the safe one with the lowest
    /// median time.
    pub choice: Pick,
    /// A configuration the cost model says beats your choice, which the
    /// tuner refused.
    pub refused_but_faster: Pick,
    /// The code of the rule that refused it, e.g. `"OXK004"`.
    pub refusal: &'static str,
}

/// A row's configuration as a [`Pick`].
pub fn pick(row: &Row) -> Pick {
    Pick {
        block: row.config.block.x,
        // The space's one constant is `TILE`, first in `specs`.
        tile: row.config.specs.first().map_or(0, |&t| t as u32),
    }
}

/// The middle of a configuration's timed launches: one run slowed by the
/// machine, or one that looks fast by luck, moves it little (D2).
fn median(samples: &[f64]) -> Option<f64> {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// Your decision from a report timed on a GPU (`report.device` is set).
pub fn decide(report: &TuneReport) -> Decision {
    // Only a safe row may ship, and on a device the clock ranks them: the
    // cost model counts instructions and knows nothing of memory.
    let best = report
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Safe)
        .filter_map(|r| Some((r, median(&r.timing.as_ref()?.samples)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(r, _)| r);
    let none = Pick { block: 0, tile: 0 };
    // A refused row is never launched, so only the model can say it would
    // be faster: compare its cost with the cost of the row we ship.
    let best_cost = best.and_then(|r| r.cost).map(|c| c.units());
    let refused = report.rows.iter().find_map(|r| match &r.verdict {
        Verdict::Refused(x) if r.cost.zip(best_cost).is_some_and(|(c, b)| c.units() < b) => {
            // The mistake: the rule from memory, not from the verdict.
            let _ = x;
            Some((r, "OXK004"))
        }
        _ => None,
    });
    Decision {
        choice: best.map_or(none, pick),
        refused_but_faster: refused.map_or(none, |(r, _)| pick(r)),
        refusal: refused.map_or("", |(_, code)| code),
    }
}
