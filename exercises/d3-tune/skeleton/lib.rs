//! # D3 — tune
//!
//! `stencil` is B4's kernel: a three-point stencil staged through a shared
//! tile. In B4 the simulator's cost model ranked its configurations for a
//! generic target; here an NVIDIA GPU times them, and the part's own
//! limits decide which are safe. Give the kernel a search space for NVIDIA
//! parts, then write `decide`: what you ship after reading a timed report,
//! and which faster configuration had to stay on the table, and why.
//! Read the README first; the spec is `tests/spec.rs`.

use oxmera_kernel::kernel;
use oxmera_kernel::tune::{Row, TuneReport};

/// `out[i] = x[i - 1] + x[i] + x[i + 1]` (zero outside `x`) for `i < n`,
/// with blocks of `B` threads and a grid of `ceil(n / TILE)` blocks. Each
/// thread writes `TILE / B` outputs, so `B` must divide `TILE`.
// TODO(D3): keep the contract (`block = [256]`) and add a search space
// beside it: `TILE` in 1024, 16384 and 65536, blocks of 128, 256 and 1024
// threads, and the requirement that the block divides the tile (B4's
// grammar).
#[kernel(block = [256])]
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

/// Your decision from a report timed on a GPU (`report.device` is set).
pub fn decide(report: &TuneReport) -> Decision {
    // TODO(D3): read the rows of `report` — each has a `verdict`
    // (`oxmera_kernel::tune::Verdict`), a model `cost` and, when it ran on
    // the device, a `timing` with its samples — and fill these in.
    let _ = report;
    Decision {
        choice: Pick { block: 0, tile: 0 },
        refused_but_faster: Pick { block: 0, tile: 0 },
        refusal: "",
    }
}
