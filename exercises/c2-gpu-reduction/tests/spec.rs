//! The spec of C2. Each test names the law or case it checks. Your one
//! kernel is seen three ways, in this order: oxmera's analysis (at the
//! launch, for warps of 32, lavapipe's subgroups of 8 and AMD's waves of
//! 64), the SIMT simulator at warps of 32 and of 8, and your GPU through
//! wgpu (`oxmera_wgpu::run`) at its own subgroup width. Every block's
//! partial sum is compared with the host reference, and so is the total
//! that a second launch of the same kernel makes of the partial sums.
//!
//! Where this machine has no wgpu adapter, a test that needs one stops
//! after the analysis and the simulator, says so on stderr and exits with
//! status 77 ("needs hardware"): the ladder counts it as skipped, never
//! as passed. `OXMERA_REQUIRE_GPU=1` makes that a failure instead (CI,
//! which installs lavapipe).

use c2::block_sums;
use oxmera_core::Device;
use oxmera_kernel::analysis::{CheckOptions, check as analyse};
use oxmera_kernel::diag::render;
use oxmera_kernel::ir::Value;
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
        rng_seed: RngSeed::Fixed(0xC2),
        ..ProptestConfig::default()
    }
}

/// The block sizes `block_sums` declares and is launched at.
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

/// `x[i]`: quarters, so every partial sum here is exact in `f32` and the
/// order of the additions (a GPU compiler may reorder them) cannot change
/// a bit.
fn x_at(i: usize) -> f32 {
    (i % 13) as f32 * 0.25 - 1.5
}

/// The host reference: block `b`'s sum over the grid-stride loop, at
/// `grid` blocks of `block` threads.
fn reference(n: usize, launch: LaunchConfig) -> Vec<f32> {
    let (grid, block) = (launch.grid.x as usize, launch.block.x as usize);
    let mut sums = vec![0.0f32; grid];
    for i in 0..n {
        sums[(i % (grid * block)) / block] += x_at(i);
    }
    sums
}

/// Where a run happens, for the messages.
#[derive(Clone, Copy)]
enum Where {
    Simulator(Target),
    Gpu(Device, Target),
}

impl std::fmt::Display for Where {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Where::Simulator(t) => write!(f, "in the simulator at warps of {}", t.warp_width()),
            Where::Gpu(d, t) => write!(f, "on {d} (subgroups of {})", t.warp_width()),
        }
    }
}

fn case(n: usize, launch: LaunchConfig) -> String {
    format!(
        "block_sums(n = {n}) at grid {} x block {}",
        launch.grid.x, launch.block.x
    )
}

/// Runs `block_sums` over `x` (its length is `n`) at `launch`, `where`,
/// and returns `partial`, or panics with the simulator's witness or the
/// device's error.
fn run(x: &[f32], launch: LaunchConfig, at: Where) -> Vec<f32> {
    let n = x.len();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(x)),
        // NaN: a value no sum here can be, so an unwritten slot shows.
        Arg::Buffer(Buffer::from_f32(&vec![f32::NAN; launch.grid.x as usize])),
        Arg::Scalar(Value::U32(n as u32)),
    ];
    match at {
        Where::Simulator(target) => {
            let opts = SimOptions {
                target,
                ..SimOptions::default()
            };
            match sim::run(block_sums(), launch, &mut args, &opts) {
                Ok(_) => {}
                Err(SimError::Report(r)) => {
                    let what = match &r.kind {
                        ReportKind::DivergentBarrier { .. } => "a hang at a barrier".to_string(),
                        ReportKind::SharedRace { .. } => "a shared-memory race".to_string(),
                        _ => format!("warp {}", r.warp),
                    };
                    panic!(
                        "{} {at}: the simulator stopped the run in block {}, {what}:\n{}",
                        case(n, launch),
                        r.block,
                        render_report(block_sums(), &r)
                    )
                }
                Err(e) => panic!(
                    "{} {at}: the simulator could not start: {e}",
                    case(n, launch)
                ),
            }
        }
        Where::Gpu(device, _) => {
            if let Err(e) = oxmera_wgpu::run(device, block_sums(), launch, &mut args) {
                panic!("{} {at}: the launch failed: {e}", case(n, launch));
            }
        }
    }
    args[1].buffer().expect("partial is a buffer").to_f32()
}

/// Checks `got` against the reference, saying which block is wrong and
/// which elements it should have summed.
fn check_partials(n: usize, launch: LaunchConfig, at: Where, got: &[f32]) {
    check_partials_noting(n, launch, at, got, "")
}

/// [`check_partials`], with `note` after the message.
fn check_partials_noting(n: usize, launch: LaunchConfig, at: Where, got: &[f32], note: &str) {
    let want = reference(n, launch);
    for (b, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.to_bits() == w.to_bits() {
            continue;
        }
        let block = launch.block.x as usize;
        let threads = launch.grid.x as usize * block;
        let first = b * block;
        let whose = format!(
            "({w} is the sum of x[i] for i < {n} with i mod {threads} in {first}..{})",
            first + block
        );
        if g.is_nan() {
            panic!(
                "{} {at}: partial[{b}] was never written\n{whose}",
                case(n, launch)
            );
        }
        panic!(
            "{} {at}: partial[{b}] = {g}, expected {w}{note}\n{whose}",
            case(n, launch)
        );
    }
}

/// The analysis at `launch` on targets of three warp widths: it must find
/// nothing.
fn analysis(n: usize, launch: LaunchConfig) {
    for target in [Target::generic(), Target::lavapipe(), Target::amd_wave64()] {
        let opts = CheckOptions::new(launch).on(target);
        let findings = analyse(block_sums(), &opts)
            .unwrap_or_else(|e| panic!("{}: the analysis could not run: {e}", case(n, launch)));
        if let Some(first) = findings.first() {
            panic!(
                "{}: the analysis finds {} problem(s) at warps of {}; the first:\n{}",
                case(n, launch),
                findings.len(),
                target.warp_width(),
                render(block_sums(), first)
            );
        }
    }
}

/// Each case three ways: the analysis and the simulator (warps of 32 and
/// of 8) for all of them first, since they need no GPU, then the GPU;
/// then a second launch that sums the partial sums into one total.
fn three_ways(cases: &[(usize, LaunchConfig)]) {
    for &(n, launch) in cases {
        analysis(n, launch);
        let x: Vec<f32> = (0..n).map(x_at).collect();
        for target in [Target::generic(), Target::lavapipe()] {
            let at = Where::Simulator(target);
            // Warps of 32 ran first and were right: a wrong sum now is a
            // kernel that counts on 32 lanes.
            let note = if target.warp_width() == 32 {
                ""
            } else {
                "\nat warps of 32 the same launch gives the right sums: something in the kernel \
                 counts on a warp of 32 lanes (warp_size() is the width)"
            };
            check_partials_noting(n, launch, at, &run(&x, launch, at), note);
        }
    }
    let (device, target) = gpu();
    let at = Where::Gpu(device, target);
    for &(n, launch) in cases {
        let x: Vec<f32> = (0..n).map(x_at).collect();
        let partial = run(&x, launch, at);
        check_partials(n, launch, at, &partial);
        // The second pass: one block sums the partial sums.
        let total = run(&partial, LaunchConfig::linear(1, 64), at)[0];
        let want: f32 = x.iter().sum();
        assert_eq!(
            total.to_bits(),
            want.to_bits(),
            "{} {at}: the second pass (one block of 64 over the {} partial sums) gives {total}, \
             expected the whole sum {want}",
            case(n, launch),
            partial.len()
        );
    }
}

#[test]
fn one_block_sums_everything() {
    let cases: Vec<_> = BLOCKS
        .iter()
        .flat_map(|&b| [1, 7, b as usize, 1000].map(|n| (n, LaunchConfig::linear(1, b))))
        .collect();
    three_ways(&cases);
}

#[test]
fn every_block_sums_its_own_slice_for_ragged_n() {
    let cases: Vec<_> = BLOCKS
        .iter()
        .flat_map(|&b| {
            let b_ = b as usize;
            [b_ + 1, 3 * b_ - 5, 4 * b_]
                .map(|n| (n, LaunchConfig::linear(n.div_ceil(b_) as u32, b)))
        })
        .collect();
    three_ways(&cases);
}

#[test]
fn a_bounded_grid_strides_over_a_large_input() {
    let cases: Vec<_> = BLOCKS
        .iter()
        .flat_map(|&b| [(4097, 3), (100_000, 8)].map(|(n, g)| (n, LaunchConfig::linear(g, b))))
        .collect();
    three_ways(&cases);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_simulator_agrees_with_the_reference_at_warps_of_8_and_32(
        n in 1usize..2000,
        block in prop::sample::select(BLOCKS.to_vec()),
        grid in 1u32..6,
    ) {
        let launch = LaunchConfig::linear(grid, block);
        let x: Vec<f32> = (0..n).map(x_at).collect();
        for target in [Target::lavapipe(), Target::generic()] {
            let at = Where::Simulator(target);
            check_partials(n, launch, at, &run(&x, launch, at));
        }
    }
}
