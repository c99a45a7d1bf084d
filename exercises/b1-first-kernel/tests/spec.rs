//! The spec of B1. Each test names the law or case it checks. The kernel
//! tests run your `saxpy` in oxmera's SIMT simulator, lane by lane, on
//! buffers exactly as long as the data (so a thread past the end touches
//! memory that is not there), and compare every element of `y` with the
//! host reference. When the simulator stops the run, the failure is its
//! witness: what went wrong, the source line, the lane, the thread, the
//! block and the index.

use b1::{launch_for, saxpy};
use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, SimError, SimOptions, render_report};
use oxmera_kernel::target::Target;
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xB1),
        ..ProptestConfig::default()
    }
}

/// The block sizes `saxpy` declares (`#[kernel(block = [...])]`).
const BLOCKS: [u32; 4] = [32, 64, 128, 256];

/// `x[i]`: small integers, so `a * x[i] + y[i]` is exact in `f32` and a
/// fused multiply-add gives the same bits as a multiply then an add.
fn x_at(i: usize) -> f32 {
    (i % 17) as f32 - 8.0
}

/// `y[i]` before the kernel runs: quarters, never equal to the result.
fn y_at(i: usize) -> f32 {
    (i % 7) as f32 * 0.25 + 100.0
}

/// The host reference: what `y` holds after `saxpy(n, a, x, y)`.
fn reference(n: usize, a: f32, len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| {
            if i < n {
                a * x_at(i) + y_at(i)
            } else {
                y_at(i)
            }
        })
        .collect()
}

/// Runs the learner's `saxpy` in the simulator over `n` elements, with
/// `x` and `y` of `len` elements, and returns `y` afterwards, or the
/// simulator's witness when it stopped the run.
fn simulate(n: usize, a: f32, launch: LaunchConfig, len: usize) -> Result<Vec<f32>, String> {
    let x: Vec<f32> = (0..len).map(x_at).collect();
    let y: Vec<f32> = (0..len).map(y_at).collect();
    let mut args = vec![
        Arg::Scalar(Value::U32(n as u32)),
        Arg::Scalar(Value::F32(a)),
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_f32(&y)),
    ];
    match sim::run(saxpy(), launch, &mut args, &SimOptions::default()) {
        Ok(_) => Ok(args[3].buffer().expect("y is a buffer").to_f32()),
        // The witness: the block and warp first, then the simulator's own
        // report (what, by which lane and thread, at which line).
        Err(SimError::Report(r)) => Err(format!(
            "in block {}, warp {}:\n{}",
            r.block,
            r.warp,
            render_report(saxpy(), &r)
        )),
        Err(e) => Err(format!("before it started: {e}")),
    }
}

/// The case, short enough to stay on screen: `n`, `a`, the buffers'
/// length and the launch.
fn case(n: usize, a: f32, launch: LaunchConfig, len: usize) -> String {
    let blocks = launch.grid.x;
    let block = launch.block.x;
    let buffers = if len == n {
        String::new()
    } else {
        format!(", x and y of length {len}")
    };
    format!("saxpy(n = {n}, a = {a}){buffers}, {blocks} block(s) of {block}")
}

/// Runs `saxpy` and checks every element of `y` against the reference,
/// naming the first element that differs and what that means.
fn check(n: usize, a: f32, launch: LaunchConfig, len: usize) {
    let case = case(n, a, launch, len);
    let got = simulate(n, a, launch, len)
        .unwrap_or_else(|witness| panic!("{case}: the simulator stopped the run {witness}"));
    let want = reference(n, a, len);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.to_bits() == w.to_bits() {
            continue;
        }
        let what = if i >= n {
            format!("y[{i}] is past n = {n}: it must be left as it was")
        } else if g.to_bits() == y_at(i).to_bits() {
            format!("y[{i}] was never written: no thread did element {i}")
        } else {
            format!(
                "y[{i}] should be a * x[{i}] + y[{i}] = {a} * {} + {}",
                x_at(i),
                y_at(i)
            )
        };
        panic!("{case}: {what}; expected {w}, got {g}");
    }
}

#[test]
fn full_blocks_match_the_reference() {
    // n a multiple of the block: every thread owns an element.
    check(64, 2.5, LaunchConfig::linear(2, 32), 64);
    check(128, -0.5, LaunchConfig::linear(1, 128), 128);
    check(256, 2.5, LaunchConfig::linear(4, 64), 256);
    check(512, 3.0, LaunchConfig::linear(2, 256), 512);
}

#[test]
fn a_partial_last_block_is_guarded() {
    // n not a multiple of the block: the last block's last threads own no
    // element, and x and y end at n.
    check(33, 2.5, LaunchConfig::linear(2, 32), 33);
    check(100, -0.5, LaunchConfig::linear(2, 64), 100);
    check(255, 2.5, LaunchConfig::linear(2, 128), 255);
    check(1000, 3.0, LaunchConfig::linear(4, 256), 1000);
}

#[test]
fn one_element_at_every_block_size() {
    // n = 1: one busy thread, the rest of its block idle.
    for block in BLOCKS {
        check(1, 2.5, LaunchConfig::linear(1, block), 1);
    }
}

#[test]
fn whole_blocks_past_the_end_do_nothing() {
    // More blocks than n needs (a host that rounds generously): every
    // thread of the extra blocks is past the end.
    check(40, 2.5, LaunchConfig::linear(4, 32), 40);
    check(1, -0.5, LaunchConfig::linear(3, 64), 1);
    check(300, 2.5, LaunchConfig::linear(8, 128), 300);
}

#[test]
fn elements_past_n_are_left_alone() {
    // Buffers longer than n: the kernel works on the first n elements
    // only, whatever the buffers' lengths.
    check(100, 2.5, LaunchConfig::linear(2, 64), 150);
    check(32, -0.5, LaunchConfig::linear(1, 32), 40);
    check(1, 3.0, LaunchConfig::linear(1, 256), 300);
}

#[test]
fn launch_for_hand_computed_cases() {
    for (n, block, grid) in [
        (1000, 256, 4),
        (1024, 256, 4),
        (1025, 256, 5),
        (1, 32, 1),
        (32, 32, 1),
        (33, 32, 2),
        (100, 64, 2),
        (7, 1, 7),
    ] {
        assert_eq!(
            launch_for(n, block),
            Some(LaunchConfig::linear(grid, block)),
            "launch_for({n}, {block}): {grid} block(s) of {block} threads cover {n} elements"
        );
    }
}

#[test]
fn launch_for_rounds_up_without_overflow() {
    // u32::MAX = 2^32 - 1 elements need 2^24 blocks of 256; `n + block - 1`
    // does not fit in a u32 there.
    assert_eq!(
        launch_for(u32::MAX, 256),
        Some(LaunchConfig::linear(1 << 24, 256)),
        "launch_for(u32::MAX, 256): 2^24 blocks of 256 threads"
    );
    assert_eq!(
        launch_for(u32::MAX - 30, 32),
        Some(LaunchConfig::linear(1 << 27, 32)),
        "launch_for(u32::MAX - 30, 32): 2^27 blocks of 32 threads, the last with one idle thread"
    );
}

#[test]
fn an_empty_input_launches_nothing() {
    // The rung's launch rule for n = 0: no launch at all. A grid of zero
    // blocks is not "a launch that does nothing": LaunchConfig::validate
    // rejects it, and so does every real GPU API.
    for block in BLOCKS {
        if let Some(launch) = launch_for(0, block) {
            let why = match launch.validate(&Target::generic()) {
                Err(e) => format!("LaunchConfig::validate rejects it: {e}"),
                Ok(()) => "it starts threads with nothing to do".to_string(),
            };
            panic!(
                "launch_for(0, {block}) gave Some({launch}), but an empty input launches nothing \
                 (None): {why}"
            );
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn launch_for_covers_n_with_at_most_one_partial_block(
        n in 1u32..100_000,
        block in prop::sample::select(BLOCKS.to_vec()),
    ) {
        let launch = launch_for(n, block);
        let Some(launch) = launch else {
            panic!("launch_for({n}, {block}) gave None, but {n} elements need a launch");
        };
        prop_assert_eq!(
            launch.block,
            Dim3::x(block),
            "launch_for({}, {}): the block it was asked for, 1-D",
            n,
            block
        );
        prop_assert_eq!((launch.grid.y, launch.grid.z), (1, 1), "launch_for({}, {}): a 1-D grid", n, block);
        let threads = u64::from(launch.grid.x) * u64::from(block);
        prop_assert!(
            threads >= u64::from(n),
            "launch_for({}, {}) = {}: {} threads for {} elements",
            n, block, launch, threads, n
        );
        prop_assert!(
            threads - u64::from(block) < u64::from(n),
            "launch_for({}, {}) = {}: its last block has no element at all (one block too many)",
            n, block, launch
        );
        prop_assert!(
            launch.validate(&Target::generic()).is_ok(),
            "launch_for({}, {}) = {}: {:?}",
            n, block, launch, launch.validate(&Target::generic())
        );
    }

    #[test]
    fn saxpy_matches_the_reference_at_every_size_and_block(
        n in 0usize..700,
        block in prop::sample::select(BLOCKS.to_vec()),
        a in prop::sample::select(vec![2.5f32, -0.5, 3.0, -4.0]),
    ) {
        // Your launch_for picks the grid; n = 0 launches nothing, and y
        // (empty) is already the reference.
        match launch_for(n as u32, block) {
            None => prop_assert_eq!(n, 0, "launch_for({}, {}) gave None, but {} elements need a launch", n, block, n),
            Some(launch) => check(n, a, launch, n),
        }
    }
}
