//! The spec of B2. Each test names the law or case it checks. Two
//! witnesses check your `block_sum`: oxmera's analysis, which reasons
//! about every thread of a block for one launch and finds a barrier some
//! of them never reach (OXK001, with the lane map), and the SIMT
//! simulator, which runs the kernel lane by lane and stops where it
//! hangs, races or reads out of bounds. Every block sum is compared with
//! the host reference.

use b2::block_sum;
use oxmera_kernel::analysis::{CheckOptions, check as analyse};
use oxmera_kernel::diag::render;
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, ReportKind, SimError, SimOptions, render_report};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 32,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xB2),
        ..ProptestConfig::default()
    }
}

/// The block sizes the kernel is launched at: one warp, and several.
const BLOCKS: [u32; 4] = [32, 64, 128, 256];

/// `x[i]`: quarters, so every partial sum is exact in `f32` and the order
/// of the additions cannot change a bit.
fn x_at(i: usize) -> f32 {
    (i % 13) as f32 * 0.25 - 1.5
}

/// The host reference: block `b`'s sum of `x[b * block ..][.. block]`,
/// elements from `n` on counting as 0.
fn reference(n: usize, block: usize, grid: usize) -> Vec<f32> {
    (0..grid)
        .map(|b| (b * block..((b + 1) * block).min(n)).map(x_at).sum())
        .collect()
}

/// Who reaches a barrier, warp by warp, in words: `rows` holds one row of
/// lanes per warp, `W` for a lane there and `.` for one that never comes
/// (anything else: elsewhere). Runs of warps alike are folded:
/// "warp 0 waits there, warps 1-7 never arrive".
fn who_arrives(rows: &[String]) -> String {
    let class = |row: &str| {
        if row.chars().all(|c| c == 'W') {
            0
        } else if row.chars().all(|c| c == '.') {
            1
        } else {
            2
        }
    };
    let mut parts = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let c = class(&rows[i]);
        let mut j = i;
        while j + 1 < rows.len() && class(&rows[j + 1]) == c {
            j += 1;
        }
        let (who, one) = if i == j {
            (format!("warp {i}"), true)
        } else {
            (format!("warps {i}-{j}"), false)
        };
        let what = match (c, one) {
            (0, true) => "waits there",
            (0, false) => "wait there",
            (1, true) => "never arrives",
            (1, false) => "never arrive",
            (_, true) => "arrives in part",
            (_, false) => "arrive in part",
        };
        parts.push(format!("{who} {what}"));
        i = j + 1;
    }
    parts.join(", ")
}

/// Runs `block_sum` in the simulator over `n` elements in `grid` blocks of
/// `block`, `x` exactly `n` long, and checks each block's sum.
fn check(n: usize, block: u32, grid: u32) {
    let case = format!("block_sum(n = {n}), {grid} block(s) of {block}");
    let x: Vec<f32> = (0..n).map(x_at).collect();
    // A value no block sum here can be: an unwritten `out` is seen.
    let unwritten = f32::NAN;
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_f32(&vec![unwritten; grid as usize])),
        Arg::Scalar(oxmera_kernel::ir::Value::U32(n as u32)),
    ];
    let launch = LaunchConfig::linear(grid, block);
    match sim::run(block_sum(), launch, &mut args, &SimOptions::default()) {
        Ok(_) => {}
        Err(SimError::Report(r)) => {
            let what = match &r.kind {
                ReportKind::DivergentBarrier { lanes } => {
                    format!("a hang at a barrier ({})", who_arrives(lanes))
                }
                _ => format!("warp {}", r.warp),
            };
            panic!(
                "{case}: the simulator stopped the run in block {}, {what}:\n{}",
                r.block,
                render_report(block_sum(), &r)
            )
        }
        Err(e) => panic!("{case}: the simulator could not start: {e}"),
    }
    let got = args[1].buffer().expect("out is a buffer").to_f32();
    let want = reference(n, block as usize, grid as usize);
    for (b, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.to_bits() == w.to_bits() {
            continue;
        }
        let first = b * block as usize;
        let last = ((b + 1) * block as usize).min(n);
        if g.is_nan() {
            panic!(
                "{case}: out[{b}] was never written (expected {w}, the sum of x[{first}..{last}])"
            );
        }
        panic!("{case}: out[{b}] should be the sum of x[{first}..{last}] = {w}, got {g}");
    }
}

#[test]
fn the_analysis_finds_no_barrier_a_thread_misses() {
    for block in BLOCKS {
        let opts = CheckOptions::new(LaunchConfig::linear(4, block));
        let findings = analyse(block_sum(), &opts).unwrap_or_else(|e| {
            panic!("block_sum at block {block}: the analysis could not run: {e}")
        });
        if let Some(first) = findings.first() {
            let lanes = match &first.lanes {
                Some(map) => format!(" ({})", who_arrives(&map.warps)),
                None => String::new(),
            };
            panic!(
                "block_sum at block {block}: the analysis finds {} problem(s); the first{lanes}:\n{}",
                findings.len(),
                render(block_sum(), first)
            );
        }
    }
}

#[test]
fn one_block_sums_its_slice_at_every_block_size() {
    for block in BLOCKS {
        check(block as usize, block, 1);
    }
}

#[test]
fn every_block_sums_its_own_slice() {
    for block in BLOCKS {
        check(4 * block as usize, block, 4);
    }
}

#[test]
fn a_partial_last_block_counts_only_the_real_elements() {
    for block in BLOCKS {
        check(2 * block as usize + 5, block, 3);
    }
    // n = 1: one real element, the rest of the block zeros.
    check(1, 64, 1);
}

#[test]
fn the_kernel_declares_the_blocks_it_is_launched_at() {
    // `#[kernel(block = [...])]`: the compiler checks every declared block
    // size, so the flip cannot come back unnoticed.
    let declared = &block_sum().launch.blocks;
    for block in BLOCKS {
        assert!(
            declared.contains(&Dim3::x(block)),
            "block_sum declares the block sizes {declared:?}, not {block}: name every block it is \
             launched at (32, 64, 128, 256) in #[kernel(block = [...])]"
        );
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn block_sums_match_the_reference(
        n in 1usize..1500,
        block in prop::sample::select(BLOCKS.to_vec()),
    ) {
        check(n, block, n.div_ceil(block as usize) as u32);
    }
}
