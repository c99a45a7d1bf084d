//! Leaves the tile that does not fit out of the space: nothing is refused for its shared memory, so there is no refused-but-faster to explain.
//!
//! A named wrong solution of B4, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through. It is the author's
//! solution with TILE 16384 left out of the search.

use oxmera_kernel::kernel;

/// `out[i] = x[i - 1] + x[i] + x[i + 1]` (zero outside `x`) for `i < n`,
/// with blocks of `B` threads and a grid of `ceil(n / TILE)` blocks. Each
/// thread writes `TILE / B` outputs, so `B` must divide `TILE`.
// The contract stays as it was (proven at compile time); the search space
// beside it is not gated: the tuner checks each configuration for the
// target at hand, and refuses what is unsafe there.
#[kernel(
    block = [256],
    search(
        TILE = [1024, 4096],
        block = [64, 96, 128, 256],
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
    // The table's `best` row; and a TILE=16384 row of the refused-but-
    // faster section: 65544 bytes of shared memory, over the generic
    // target's 48 KiB (OXK004). Block 96 is refused too, but as OXK005 —
    // it divides no tile, so it skips outputs, and is never costed.
    Decision {
        choice: Pick {
            block: 64,
            tile: 4096,
        },
        refused_but_faster: Pick {
            block: 64,
            tile: 16384,
        },
        refusal: "OXK004",
    }
}
