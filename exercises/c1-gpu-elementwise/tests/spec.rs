//! The spec of C1. Each test names the law or case it checks. Your one
//! kernel is seen three ways, in this order: oxmera's analysis (at the
//! launch, for a 32-wide target and for lavapipe's 8-wide subgroups), the
//! SIMT simulator (lane by lane, on buffers exactly as long as the data)
//! and your GPU through wgpu (`oxmera_wgpu::run`, the same arguments).
//! Every element of `y` is compared with the host reference.
//!
//! Where this machine has no wgpu adapter, a test that needs one stops
//! after the analysis and the simulator, says so on stderr and exits with
//! status 77 ("needs hardware"): the ladder counts it as skipped, never
//! as passed. `OXMERA_REQUIRE_GPU=1` makes that a failure instead (CI,
//! which installs lavapipe).

use c1::{axpy_relu, launch_for};
use oxmera_core::Device;
use oxmera_kernel::analysis::{CheckOptions, check as analyse};
use oxmera_kernel::diag::render;
use oxmera_kernel::ir::Value;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, SimError, SimOptions, render_report};
use oxmera_kernel::target::Target;
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 32,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xC1),
        ..ProptestConfig::default()
    }
}

/// The block sizes `axpy_relu` declares and is launched at.
const BLOCKS: [u32; 3] = [64, 128, 256];

/// The exit status meaning "this machine lacks the hardware the test
/// needs": `oxmera_ladder::testlog::NEEDS_HARDWARE_EXIT_CODE`.
const NEEDS_HARDWARE: i32 = 77;

/// Stops the test as skipped for want of hardware (or fails it, under
/// `OXMERA_REQUIRE_GPU=1`).
fn needs_hardware(why: &str) -> ! {
    if std::env::var("OXMERA_REQUIRE_GPU").as_deref() == Ok("1") {
        panic!("OXMERA_REQUIRE_GPU=1, but {why}");
    }
    eprintln!("needs hardware: {why}");
    std::process::exit(NEEDS_HARDWARE)
}

/// The wgpu device and the target oxmera checks kernels for on it (its
/// subgroup width: 8 on lavapipe), or a skip.
fn gpu() -> (Device, Target) {
    let device = Device::Wgpu(0);
    match oxmera_wgpu::target(device) {
        Ok(target) => (device, target),
        Err(e) => needs_hardware(&format!("no wgpu adapter ({e})")),
    }
}

const A: f32 = 1.5;

/// `x[i]`: halves, so `A * x[i] + y[i]` is exact in `f32` and a fused
/// multiply-add (which a GPU compiler may use) gives the same bits.
fn x_at(i: usize) -> f32 {
    (i % 17) as f32 * 0.5 - 4.0
}

/// `y[i]` before the kernel runs: quarters, some results negative (ReLU
/// clamps them) and none equal to its input or to the op done twice.
fn y_at(i: usize) -> f32 {
    (i % 11) as f32 * 0.25 + 0.125
}

fn once(x: f32, y: f32) -> f32 {
    (A * x + y).max(0.0)
}

/// The host reference: `y` after `axpy_relu(n, A, x, y)`.
fn reference(n: usize) -> Vec<f32> {
    (0..n).map(|i| once(x_at(i), y_at(i))).collect()
}

fn args(n: usize) -> Vec<Arg> {
    let x: Vec<f32> = (0..n).map(x_at).collect();
    let y: Vec<f32> = (0..n).map(y_at).collect();
    vec![
        Arg::Scalar(Value::U32(n as u32)),
        Arg::Scalar(Value::F32(A)),
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_f32(&y)),
    ]
}

/// Your launch for `n` elements, which must exist for `n >= 1`.
fn launch(n: usize, block: u32, max_blocks: u32) -> LaunchConfig {
    launch_for(n as u32, block, max_blocks).unwrap_or_else(|| {
        panic!("launch_for({n}, {block}, {max_blocks}) is None: only n = 0 has no launch")
    })
}

/// The first element of `got` that is not the reference, said in words:
/// never written, written twice, or just wrong.
fn first_wrong(got: &[f32], launch: LaunchConfig) -> Option<String> {
    let want = reference(got.len());
    let threads = launch.grid.x as usize * launch.block.x as usize;
    let (i, (&g, &w)) = got
        .iter()
        .zip(&want)
        .enumerate()
        .find(|(_, (g, w))| g.to_bits() != w.to_bits())?;
    let what = if g.to_bits() == y_at(i).to_bits() {
        let (grid, block) = (launch.grid.x, launch.block.x);
        if i >= threads {
            format!(
                "y[{i}] was never written (still {g})\nthe grid's {threads} threads ({grid} x \
                 {block}) stop short of it: each must go on one grid further, i += grid_dim_x() \
                 * block_dim_x()"
            )
        } else {
            format!("y[{i}] was never written (still {g}), though the grid has {threads} threads")
        }
    } else if g.to_bits() == once(x_at(i), w).to_bits() {
        format!(
            "y[{i}] = {g}: the op was applied twice (once gives {w})\ntwo threads reached \
             element {i}"
        )
    } else {
        format!(
            "y[{i}] = {g}, expected max({A} * {} + {}, 0) = {w}",
            x_at(i),
            y_at(i)
        )
    };
    Some(what)
}

fn case(n: usize, launch: LaunchConfig) -> String {
    format!(
        "axpy_relu(n = {n}) at grid {} x block {}",
        launch.grid.x, launch.block.x
    )
}

/// The analysis for `launch`, on a 32-wide target and on lavapipe's
/// 8-wide one: it must find nothing.
fn analysis(n: usize, launch: LaunchConfig) {
    for target in [Target::generic(), Target::lavapipe()] {
        let opts = CheckOptions::new(launch).on(target);
        let findings = analyse(axpy_relu(), &opts)
            .unwrap_or_else(|e| panic!("{}: the analysis could not run: {e}", case(n, launch)));
        if let Some(first) = findings.first() {
            panic!(
                "{}: the analysis finds {} problem(s) on a {}-wide target; the first:\n{}",
                case(n, launch),
                findings.len(),
                target.warp_width(),
                render(axpy_relu(), first)
            );
        }
    }
}

/// Runs `axpy_relu` in the simulator and checks `y`.
fn simulate(n: usize, launch: LaunchConfig) -> Vec<f32> {
    let mut args = args(n);
    match sim::run(axpy_relu(), launch, &mut args, &SimOptions::default()) {
        Ok(_) => {}
        Err(SimError::Report(r)) => panic!(
            "{}: the simulator stopped the run in block {}, warp {}:\n{}",
            case(n, launch),
            r.block,
            r.warp,
            render_report(axpy_relu(), &r)
        ),
        Err(e) => panic!("{}: the simulator could not start: {e}", case(n, launch)),
    }
    let got = args[3].buffer().expect("y is a buffer").to_f32();
    if let Some(what) = first_wrong(&got, launch) {
        panic!("{} in the simulator: {what}", case(n, launch));
    }
    got
}

/// Runs `axpy_relu` on the GPU and checks `y` against the reference and
/// the simulator's `y` (when given).
fn on_gpu(n: usize, launch: LaunchConfig, simulated: Option<&[f32]>) {
    let (device, target) = gpu();
    let mut args = args(n);
    if let Err(e) = oxmera_wgpu::run(device, axpy_relu(), launch, &mut args) {
        panic!("{} on {device}: the launch failed: {e}", case(n, launch));
    }
    let got = args[3].buffer().expect("y is a buffer").to_f32();
    if let Some(what) = first_wrong(&got, launch) {
        panic!(
            "{} on {device} (subgroups of {}): {what}",
            case(n, launch),
            target.warp_width()
        );
    }
    if let Some(sim) = simulated {
        if let Some(i) = (0..n).find(|&i| sim[i].to_bits() != got[i].to_bits()) {
            panic!(
                "{} on {device}: y[{i}] = {}, the simulator gave {}",
                case(n, launch),
                got[i],
                sim[i]
            );
        }
    }
}

/// Each case three ways: the analysis and the simulator for all of them
/// first (they need no GPU, so a wrong kernel fails on any machine), then
/// the GPU.
fn three_ways(cases: &[(usize, LaunchConfig)]) {
    let simulated: Vec<Vec<f32>> = cases
        .iter()
        .map(|&(n, launch)| {
            analysis(n, launch);
            simulate(n, launch)
        })
        .collect();
    for (&(n, launch), sim) in cases.iter().zip(&simulated) {
        on_gpu(n, launch, Some(sim));
    }
}

#[test]
fn launch_for_caps_the_grid_and_covers_n() {
    assert_eq!(launch_for(0, 256, 1024), None, "n = 0: no launch");
    for (n, block, max, grid) in [
        (1, 64, 1024, 1),
        (1000, 256, 1024, 4),
        (1024, 256, 1024, 4),
        (1025, 256, 1024, 5),
        (10_000_000, 256, 1024, 1024),
        (1000, 64, 3, 3),
        // The largest n a u32 holds: rounding up must not wrap, and the
        // grid stays within the device's limit per dimension.
        (u32::MAX, 256, 65_535, 65_535),
        (u32::MAX, 1, u32::MAX, u32::MAX),
    ] {
        let got = launch_for(n, block, max);
        assert_eq!(
            got,
            Some(LaunchConfig::linear(grid, block)),
            "launch_for({n}, {block}, {max}) should be {grid} block(s) of {block}: \
             min(ceil({n} / {block}), {max})"
        );
    }
}

#[test]
fn every_element_once_when_the_grid_covers_n() {
    let mut cases = Vec::new();
    for block in BLOCKS {
        for n in [1, 63, 64, 65, 1000, 4097] {
            cases.push((n, launch(n, block, 65_535)));
        }
    }
    three_ways(&cases);
}

#[test]
fn a_grid_smaller_than_n_strides_over_the_rest() {
    let mut cases = Vec::new();
    for block in BLOCKS {
        for (n, max_blocks) in [(1000, 1), (4097, 3), (10_000, 5)] {
            cases.push((n, launch(n, block, max_blocks)));
        }
    }
    three_ways(&cases);
}

#[test]
fn a_million_elements_on_a_bounded_grid_on_the_gpu() {
    // 64 blocks of 256 threads for a million elements: 62 each. Too many
    // for the simulator to run in a blink, which is why a GPU is here.
    let n = 1_000_003;
    let launch = launch(n, 256, 64);
    analysis(n, launch);
    on_gpu(n, launch, None);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_simulator_agrees_with_the_reference_for_any_size(
        n in 1usize..3000,
        block in prop::sample::select(BLOCKS.to_vec()),
        max_blocks in 1u32..8,
    ) {
        simulate(n, launch(n, block, max_blocks));
    }
}
