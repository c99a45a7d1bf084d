//! # B4 — the launch space
//!
//! `stencil` is a three-point stencil staged through a shared tile: each
//! block copies `TILE` inputs and a one-element halo into shared memory,
//! then each of its threads writes `TILE / block` outputs. It is correct
//! at its contract, `block = [256]` with `TILE = 1024`, and the compiler
//! proves that. Which block and tile are *fastest*, and which of the fast
//! ones are *safe*, is a different question: give the kernel a search
//! space, read what the tuner says about it, and write down your decision.
//! Read the README first; the spec is `tests/spec.rs`.

use oxmera_kernel::kernel;

/// `out[i] = x[i - 1] + x[i] + x[i + 1]` (zero outside `x`) for `i < n`,
/// with blocks of `B` threads and a grid of `ceil(n / TILE)` blocks. Each
/// thread writes `TILE / B` outputs, so `B` must divide `TILE`.
// TODO(B4): keep the contract (`block = [256]`) and add a search space
// beside it: `TILE` in 1024, 4096 and 16384, blocks of 64, 96, 128 and
// 256 threads, and the requirement that the block divides the tile (the
// README has the grammar).
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

/// What you decided after reading the tuner's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The configuration you would ship on the generic target: the best
    /// one that is safe.
    pub choice: Pick,
    /// A configuration the cost model says is faster than your choice,
    /// which the tuner refused.
    pub refused_but_faster: Pick,
    /// The code of the rule that refused it, e.g. `"OXK001"`.
    pub refusal: &'static str,
}

/// Your decision for the generic target (warps of 32, 48 KiB of shared
/// memory a block).
pub fn decide() -> Decision {
    // TODO(B4): read `oxmera-learn ladder check B4` (it prints the tuner's
    // report once your search space exists) and fill these in.
    Decision {
        choice: Pick { block: 0, tile: 0 },
        refused_but_faster: Pick { block: 0, tile: 0 },
        refusal: "",
    }
}
