//! The large class of the corpus: 768³ tiled matmuls, which once made the
//! simulator report a correct kernel as "does not terminate" (its step
//! budget was for the whole grid, and 2304 correct blocks exceed it). The
//! budget is now per block; these cases keep it so.
//!
//! Each clean kernel runs the full grid — every block, because a race
//! between blocks needs all of them — about ten billion lane instructions,
//! which is why `tests/corpus_large.rs` runs them in release only (CI:
//! `cargo test --release -p oxmera-kernel --test corpus_large`). The buggy
//! twins are caught in the first block, in any build.
//!
//! They take `(a, b, c, m, n, k)`, not the small corpus's `(x, out, n)`,
//! so they are listed here rather than in the registry and
//! `corpus/expected.toml`.

use crate::ir::{Dim3, Kernel, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::library::{matmul_tiled, rng_f32};
use crate::sim::{self, Arg, Buffer, SimError, SimOptions, SimStats};

/// The matrices' size: `m = n = k = 768`.
pub const SIZE: u32 = 768;

/// Buggy twin of the library's `matmul_tiled` (16×16 tiles): no barrier
/// between loading a tile and reading it, so a thread reads a slot another
/// thread has not written yet.
#[kernel]
pub fn matmul_tile16_no_barrier(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
    let a_tile = shared::<f32>(256);
    let b_tile = shared::<f32>(256);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let row = block_idx_y() * 16 + ty;
    let col = block_idx_x() * 16 + tx;
    let mut acc = 0.0;
    for t in 0..(k + 15) / 16 {
        let ac = t * 16 + tx;
        let br = t * 16 + ty;
        let mut av = 0.0;
        if row < m && ac < k {
            av = a[row * k + ac];
        }
        let mut bv = 0.0;
        if br < k && col < n {
            bv = b[br * n + col];
        }
        a_tile[ty * 16 + tx] = av;
        b_tile[ty * 16 + tx] = bv;
        for q in 0..16u32 {
            acc += a_tile[ty * 16 + q] * b_tile[q * 16 + tx];
        }
        sync_threads();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}

/// Clean, written differently: 32×32 tiles on a 32×8 block, each thread
/// loading four rows of each tile and computing four outputs, a column
/// apart by eight rows, with one `b` value shared by the four.
#[kernel]
pub fn matmul_tile32_rows4(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
    let a_tile = shared::<f32>(1024);
    let b_tile = shared::<f32>(1024);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let col = block_idx_x() * 32 + tx;
    let row0 = block_idx_y() * 32 + ty;
    let mut acc0 = 0.0;
    let mut acc1 = 0.0;
    let mut acc2 = 0.0;
    let mut acc3 = 0.0;
    for t in 0..(k + 31) / 32 {
        for r in 0..4u32 {
            let tr = ty + r * 8;
            let row = block_idx_y() * 32 + tr;
            let ac = t * 32 + tx;
            let mut av = 0.0;
            if row < m && ac < k {
                av = a[row * k + ac];
            }
            a_tile[tr * 32 + tx] = av;
            let br = t * 32 + tr;
            let mut bv = 0.0;
            if br < k && col < n {
                bv = b[br * n + col];
            }
            b_tile[tr * 32 + tx] = bv;
        }
        sync_threads();
        for q in 0..32u32 {
            let bq = b_tile[q * 32 + tx];
            acc0 += a_tile[ty * 32 + q] * bq;
            acc1 += a_tile[(ty + 8) * 32 + q] * bq;
            acc2 += a_tile[(ty + 16) * 32 + q] * bq;
            acc3 += a_tile[(ty + 24) * 32 + q] * bq;
        }
        sync_threads();
    }
    if col < n {
        if row0 < m {
            c[row0 * n + col] = acc0;
        }
        if row0 + 8 < m {
            c[(row0 + 8) * n + col] = acc1;
        }
        if row0 + 16 < m {
            c[(row0 + 16) * n + col] = acc2;
        }
        if row0 + 24 < m {
            c[(row0 + 24) * n + col] = acc3;
        }
    }
}

/// Buggy twin: the loads are unguarded (768 is a multiple of 32) and the
/// tile count is `k / 32 + 1`, one too many when 32 divides `k`: the extra
/// tile reads `b` past its end.
#[kernel]
pub fn matmul_tile32_extra_tile(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
    let a_tile = shared::<f32>(1024);
    let b_tile = shared::<f32>(1024);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let col = block_idx_x() * 32 + tx;
    let row0 = block_idx_y() * 32 + ty;
    let mut acc0 = 0.0;
    let mut acc1 = 0.0;
    let mut acc2 = 0.0;
    let mut acc3 = 0.0;
    for t in 0..k / 32 + 1 {
        for r in 0..4u32 {
            let tr = ty + r * 8;
            let row = block_idx_y() * 32 + tr;
            a_tile[tr * 32 + tx] = a[row * k + t * 32 + tx];
            b_tile[tr * 32 + tx] = b[(t * 32 + tr) * n + col];
        }
        sync_threads();
        for q in 0..32u32 {
            let bq = b_tile[q * 32 + tx];
            acc0 += a_tile[ty * 32 + q] * bq;
            acc1 += a_tile[(ty + 8) * 32 + q] * bq;
            acc2 += a_tile[(ty + 16) * 32 + q] * bq;
            acc3 += a_tile[(ty + 24) * 32 + q] * bq;
        }
        sync_threads();
    }
    if col < n && row0 + 24 < m {
        c[row0 * n + col] = acc0;
        c[(row0 + 8) * n + col] = acc1;
        c[(row0 + 16) * n + col] = acc2;
        c[(row0 + 24) * n + col] = acc3;
    }
}

/// Buggy twin: no barrier after the reads of a tile, so a fast warp loads
/// the next tile over values slower threads are still reading.
#[kernel]
pub fn matmul_tile32_no_trailing_barrier(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared::<f32>(1024);
    let b_tile = shared::<f32>(1024);
    let tx = thread_idx_x();
    let ty = thread_idx_y();
    let col = block_idx_x() * 32 + tx;
    let row0 = block_idx_y() * 32 + ty;
    let mut acc0 = 0.0;
    let mut acc1 = 0.0;
    let mut acc2 = 0.0;
    let mut acc3 = 0.0;
    for t in 0..(k + 31) / 32 {
        for r in 0..4u32 {
            let tr = ty + r * 8;
            let row = block_idx_y() * 32 + tr;
            let ac = t * 32 + tx;
            let mut av = 0.0;
            if row < m && ac < k {
                av = a[row * k + ac];
            }
            a_tile[tr * 32 + tx] = av;
            let br = t * 32 + tr;
            let mut bv = 0.0;
            if br < k && col < n {
                bv = b[br * n + col];
            }
            b_tile[tr * 32 + tx] = bv;
        }
        sync_threads();
        for q in 0..32u32 {
            let bq = b_tile[q * 32 + tx];
            acc0 += a_tile[ty * 32 + q] * bq;
            acc1 += a_tile[(ty + 8) * 32 + q] * bq;
            acc2 += a_tile[(ty + 16) * 32 + q] * bq;
            acc3 += a_tile[(ty + 24) * 32 + q] * bq;
        }
    }
    if col < n {
        if row0 < m {
            c[row0 * n + col] = acc0;
        }
        if row0 + 8 < m {
            c[(row0 + 8) * n + col] = acc1;
        }
        if row0 + 16 < m {
            c[(row0 + 16) * n + col] = acc2;
        }
        if row0 + 24 < m {
            c[(row0 + 24) * n + col] = acc3;
        }
    }
}

/// One case of the large class.
#[derive(Debug, Clone, Copy)]
pub struct LargeCase {
    /// The kernel's name.
    pub name: &'static str,
    /// What it is, "(clean)" for a clean kernel.
    pub summary: &'static str,
    /// The kernel.
    pub kernel: fn() -> &'static Kernel,
    /// The launch: the whole 768×768 output.
    pub launch: LaunchConfig,
    /// `"clean"`: the analysis finds nothing and the full grid simulates to
    /// the end with the host's product; `"sim:KIND"`: the simulator stops
    /// with that report.
    pub expect: &'static str,
}

/// The 16×16 launch (a 48×48 grid) and the 32×8 one (24×24).
fn tile16() -> LaunchConfig {
    LaunchConfig {
        grid: Dim3::new(SIZE / 16, SIZE / 16, 1),
        block: Dim3::new(16, 16, 1),
    }
}

fn tile32() -> LaunchConfig {
    LaunchConfig {
        grid: Dim3::new(SIZE / 32, SIZE / 32, 1),
        block: Dim3::new(32, 8, 1),
    }
}

/// The large class: two clean 768³ matmuls written differently, and their
/// buggy twins.
pub fn large_cases() -> Vec<LargeCase> {
    vec![
        LargeCase {
            name: "matmul_tiled",
            summary: "the library's 16×16 shared-tile matmul at 768³ (clean)",
            kernel: || matmul_tiled(),
            launch: tile16(),
            expect: "clean",
        },
        LargeCase {
            name: "matmul_tile16_no_barrier",
            summary: "16×16 tiles read with no barrier after the loads",
            kernel: matmul_tile16_no_barrier,
            launch: tile16(),
            expect: "sim:shared-race",
        },
        LargeCase {
            name: "matmul_tile32_rows4",
            summary: "32×32 tiles, a 32×8 block, four outputs a thread (clean)",
            kernel: matmul_tile32_rows4,
            launch: tile32(),
            expect: "clean",
        },
        LargeCase {
            name: "matmul_tile32_extra_tile",
            summary: "unguarded loads over `k / 32 + 1` tiles: one too many",
            kernel: matmul_tile32_extra_tile,
            launch: tile32(),
            expect: "sim:out-of-bounds",
        },
        LargeCase {
            name: "matmul_tile32_no_trailing_barrier",
            summary: "no barrier between reading a tile and loading the next",
            kernel: matmul_tile32_no_trailing_barrier,
            launch: tile32(),
            expect: "sim:shared-race",
        },
    ]
}

/// The seeded inputs: `a` and `b` of 768×768 values in [-1, 1), `c` of
/// zeros, and `m = n = k = 768`.
pub fn large_inputs(seed: u64) -> Vec<Arg> {
    let len = (SIZE * SIZE) as usize;
    vec![
        Arg::Buffer(Buffer::from_f32(&rng_f32(seed, len))),
        Arg::Buffer(Buffer::from_f32(&rng_f32(seed + 1, len))),
        Arg::Buffer(Buffer::from_f32(&vec![0.0; len])),
        Arg::Scalar(Value::U32(SIZE)),
        Arg::Scalar(Value::U32(SIZE)),
        Arg::Scalar(Value::U32(SIZE)),
    ]
}

/// Simulates a case on [`large_inputs`] with the default options — the
/// default per-block step budget, as a user's run has — and returns the
/// arguments after the run beside its result.
pub fn simulate_large(case: &LargeCase, seed: u64) -> (Result<SimStats, SimError>, Vec<Arg>) {
    let mut args = large_inputs(seed);
    let r = sim::run(
        (case.kernel)(),
        case.launch,
        &mut args,
        &SimOptions::default(),
    );
    (r, args)
}
