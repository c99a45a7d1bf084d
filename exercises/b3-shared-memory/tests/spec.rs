//! The spec of B3. Each test names the law or case it checks. Two
//! witnesses check your `matmul`: oxmera's analysis, which reads the
//! kernel for one launch on one target and finds what that target cannot
//! run (the shared memory a block asks for, OXK004, and a barrier some
//! threads never reach, OXK001), and the SIMT simulator, which runs the
//! kernel lane by lane, tracks every shared-memory access between two
//! barriers and stops at the first race, naming the array, the address and
//! the two threads. Every element of `c` is compared with the host
//! reference.

use b3::matmul;
use oxmera_kernel::analysis::{CheckOptions, check as analyse};
use oxmera_kernel::diag::render;
use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, ReportKind, SimError, SimOptions, render_report};
use oxmera_kernel::target::Target;
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 24,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xB3),
        ..ProptestConfig::default()
    }
}

/// The tile, and the block: 16 x 16 threads, one per element of a tile of
/// `c`.
const TILE: u32 = 16;

/// The targets a tier-B kernel should run on, with their shared memory per
/// block: the portable 48 KiB cap (`generic`), an NVIDIA Turing part
/// (`cuda:sm_75`, 64 KiB with opt-in), an AMD GPU in wave64 (64 KiB),
/// Mesa's lavapipe (32 KiB) and an Apple GPU (32 KiB).
const TARGETS: [&str; 5] = ["generic", "cuda:sm_75", "wave64", "lavapipe", "apple"];

/// `a[i]` and `b[i]`: small integers, so every product and every partial
/// sum is exact in `f32` and the order of the additions cannot change a
/// bit.
fn a_at(i: usize) -> f32 {
    (i % 7) as f32 - 3.0
}

fn b_at(i: usize) -> f32 {
    (i % 5) as f32 - 2.0
}

/// The host reference: `c = a b` for `a` of `m x k` and `b` of `k x n`.
fn reference(m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for r in 0..m {
        for j in 0..n {
            c[r * n + j] = (0..k).map(|q| a_at(r * k + q) * b_at(q * n + j)).sum();
        }
    }
    c
}

/// The launch for `c` of `m x n`: a 16 x 16 block per tile of `c`.
fn launch(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig {
        grid: Dim3::new(
            n.div_ceil(TILE as usize) as u32,
            m.div_ceil(TILE as usize) as u32,
            1,
        ),
        block: Dim3::new(TILE, TILE, 1),
    }
}

/// Thread `t` of a 16 x 16 block, where it sits: `(tx, ty)`, and its warp
/// and lane (warps of 32: two rows of the block a warp).
fn thread(t: u32) -> String {
    format!(
        "thread {t} (tx {}, ty {}; warp {}, lane {})",
        t % TILE,
        t / TILE,
        t / 32,
        t % 32
    )
}

/// Runs `matmul` in the simulator for `a` of `m x k` and `b` of `k x n`,
/// buffers exactly that long, and returns `c` and the barriers released,
/// or the simulator's witness in words when it stopped the run.
fn simulate(m: usize, n: usize, k: usize) -> Result<(Vec<f32>, u64), String> {
    let a: Vec<f32> = (0..m * k).map(a_at).collect();
    let b: Vec<f32> = (0..k * n).map(b_at).collect();
    // A value no element of c can be: an unwritten element is seen.
    let unwritten = f32::NAN;
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&a)),
        Arg::Buffer(Buffer::from_f32(&b)),
        Arg::Buffer(Buffer::from_f32(&vec![unwritten; m * n])),
        Arg::Scalar(Value::U32(m as u32)),
        Arg::Scalar(Value::U32(n as u32)),
        Arg::Scalar(Value::U32(k as u32)),
    ];
    match sim::run(matmul(), launch(m, n), &mut args, &SimOptions::default()) {
        Ok(stats) => Ok((
            args[2].buffer().expect("c is a buffer").to_f32(),
            stats.barriers,
        )),
        Err(SimError::Report(r)) => {
            // The witness in the tile's own terms first (which array, which
            // address, which two threads, where they sit), then the
            // simulator's report with its source line.
            let what = match &r.kind {
                ReportKind::SharedRace {
                    array,
                    index,
                    first,
                    first_write,
                    second,
                    second_write,
                    ..
                } => {
                    let how = |w: &bool| if *w { "writes" } else { "reads" };
                    format!(
                        "a shared-memory race on `{array}[{index}]` (row {}, column {} of the tile): {} {} it, then {} {} it, with no barrier between",
                        index / TILE as usize,
                        index % TILE as usize,
                        thread(*first),
                        how(first_write),
                        thread(*second),
                        how(second_write)
                    )
                }
                ReportKind::DivergentBarrier { lanes } => {
                    let count = |c: char| lanes.iter().map(|w| w.matches(c).count()).sum::<usize>();
                    let elsewhere = match count('o') {
                        0 => String::new(),
                        o => format!(", {o} wait at another barrier"),
                    };
                    format!(
                        "a hang at a barrier: {} of the block's 256 threads wait there, {} never arrive{elsewhere}",
                        count('W'),
                        count('.')
                    )
                }
                _ => format!("warp {}", r.warp),
            };
            Err(format!(
                "in block {}, {what}:\n{}",
                r.block,
                render_report(matmul(), &r)
            ))
        }
        Err(e) => Err(format!("before it started: {e}")),
    }
}

/// Runs `matmul` and checks every element of `c` against the reference,
/// naming the first element that differs and the tile it is in.
fn check(m: usize, n: usize, k: usize) {
    let l = launch(m, n);
    let case = format!(
        "matmul(m = {m}, n = {n}, k = {k}), grid ({}, {}) of 16 x 16 blocks",
        l.grid.x, l.grid.y
    );
    let (got, _) =
        simulate(m, n, k).unwrap_or_else(|w| panic!("{case}: the simulator stopped the run {w}"));
    let want = reference(m, n, k);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        // `==`, not the bits: the sum of no products (a row of zeros in
        // a padded tile) may be 0 or -0, and both are right.
        if g == w {
            continue;
        }
        let (r, j) = (i / n, i % n);
        let block = format!("block ({}, {})", j / TILE as usize, r / TILE as usize);
        if g.is_nan() {
            panic!(
                "{case}: c[{r}][{j}] was never written (its thread is in {block}); expected {w}"
            );
        }
        panic!(
            "{case}: c[{r}][{j}] (row {r} of a times column {j} of b, in {block}) should be {w}, got {g}"
        );
    }
}

#[test]
fn the_tiles_fit_the_shared_memory_of_every_target() {
    // The shared memory a block asks for is known before anything runs:
    // the analysis adds up the shared arrays and holds them to each
    // target's limit (and finds, too, a barrier some threads never
    // reach). A grid of 3 x 3 blocks, the tile's shape, on every target.
    assert!(
        !matmul().shared.is_empty(),
        "matmul declares no shared array: stage the tiles of a and b in `shared::<f32>(...)` \
         arrays, then they are held to each target's budget"
    );
    for name in TARGETS {
        let target: Target = name.parse().expect("a target oxmera knows");
        let l = launch(40, 40);
        let opts = CheckOptions::new(l).on(target);
        let findings = analyse(matmul(), &opts)
            .unwrap_or_else(|e| panic!("matmul on target {name}: the analysis could not run: {e}"));
        if let Some(first) = findings.first() {
            panic!(
                "matmul on target {name} (block 16 x 16): the analysis finds {} problem(s); the first, {}:\n{}",
                findings.len(),
                first.rule.code(),
                render(matmul(), first)
            );
        }
    }
}

#[test]
fn the_block_waits_for_its_tiles() {
    // The point of the rung: a block reads each element of a and b from
    // global memory once per tile step, not once per product. That needs
    // shared arrays, and barriers between the threads that fill them and
    // the threads that read them.
    let (_, barriers) = simulate(32, 32, 48)
        .unwrap_or_else(|w| panic!("matmul(32, 32, 48): the simulator stopped the run {w}"));
    assert!(
        barriers > 0,
        "matmul(32, 32, 48) released no barrier: the threads that read a tile must wait \
         (`sync_threads()`) for the threads that write it"
    );
}

#[test]
fn the_kernel_declares_its_block() {
    // `#[kernel(block = [[16, 16]])]`: the compiler checks the kernel at
    // that block (a barrier some threads miss, a tile over the 48 KiB
    // static cap) before the spec even runs.
    let declared = &matmul().launch.blocks;
    assert!(
        declared.contains(&Dim3::new(TILE, TILE, 1)),
        "matmul declares the block sizes {declared:?}, not (16, 16, 1): keep \
         #[kernel(block = [[16, 16]])], the block the spec launches at"
    );
}

#[test]
fn one_tile_matches_the_reference() {
    // One block, one step: m = n = k = 16.
    check(16, 16, 16);
}

#[test]
fn several_tiles_and_steps_match_the_reference() {
    // Whole tiles: 2 x 2 blocks, 3 steps along k.
    check(32, 32, 48);
    check(16, 48, 32);
}

#[test]
fn partial_tiles_are_filled_with_zeros() {
    // m, n and k not multiples of 16: the last tiles hang over the edges
    // of a and b, and the threads there must still store 0 and reach
    // every barrier.
    check(17, 33, 20);
    check(5, 7, 3);
    check(1, 40, 35);
    check(40, 1, 17);
}

#[test]
fn a_long_k_takes_many_steps() {
    // k = 100: seven steps, the last one partial, through the same two
    // tiles.
    check(16, 16, 100);
    check(3, 18, 100);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn products_match_the_reference(m in 1usize..40, n in 1usize..40, k in 1usize..70) {
        check(m, n, k);
    }
}
