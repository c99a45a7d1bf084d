//! The spec of D2. Each test names the law or case it checks. The
//! arithmetic of a measurement is checked on any machine. The kernel runs
//! on an NVIDIA GPU through `oxmera_cuda::run` (the simulator's
//! arguments, after oxmera's analysis passes for the part), is compared
//! with the simulator and the host reference, and is timed beside a copy
//! of the same bytes by the GPU's own clock (`oxmera_cuda::time_launch`:
//! CUDA events around the launch, the trip over the bus left out).
//!
//! Where this machine has no CUDA driver, a test that needs one says so
//! on stderr and exits with status 77 ("needs hardware"): the ladder
//! counts it as skipped, never as passed. `OXMERA_REQUIRE_CUDA=1` makes
//! that a failure instead (the GPU check script sets it).

use d2::{bytes_moved, gb_per_s, scale, typical};
use oxmera_core::Device;
use oxmera_kernel::ir::Value;
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};

/// The exit status meaning "this machine lacks the hardware the test
/// needs": `oxmera_ladder::testlog::NEEDS_HARDWARE_EXIT_CODE`.
const NEEDS_HARDWARE: i32 = 77;

/// Stops the test as skipped for want of hardware (or fails it, under
/// `OXMERA_REQUIRE_CUDA=1`).
fn needs_hardware(why: &str) -> ! {
    if std::env::var("OXMERA_REQUIRE_CUDA").as_deref() == Ok("1") {
        panic!("OXMERA_REQUIRE_CUDA=1, but {why}");
    }
    eprintln!("needs hardware: {why}");
    std::process::exit(NEEDS_HARDWARE)
}

/// `cuda:0` and its name, or a skip where no driver lists a GPU.
fn gpu() -> (Device, String) {
    match oxmera_cuda::probe() {
        Ok(gpus) if !gpus.is_empty() => (Device::Cuda(0), gpus[0].name.clone()),
        Ok(_) => needs_hardware("the CUDA driver lists no GPU"),
        Err(e) => needs_hardware(&format!("no CUDA driver ({e})")),
    }
}

/// The baseline: a plain copy, the least work that moves the same bytes
/// as `scale` (one read and one write an element), written the same way.
#[kernel(block = [256])]
fn copy(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    let stride = grid_dim_x() * block_dim_x();
    let mut i = block_idx_x() * block_dim_x() + thread_idx_x();
    // `a` is unused on purpose: the same parameters as `scale`.
    while i < n {
        y[i] = x[i];
        i += stride;
    }
}

const A: f32 = 2.5;

/// `x[i]`: halves, so `A * x[i]` is exact and every run gives the same bits.
fn x_at(i: usize) -> f32 {
    (i % 29) as f32 * 0.5 - 7.0
}

fn args(n: usize) -> Vec<Arg> {
    let x: Vec<f32> = (0..n).map(x_at).collect();
    vec![
        Arg::Scalar(Value::U32(n as u32)),
        Arg::Scalar(Value::F32(A)),
        Arg::Buffer(Buffer::from_f32(&x)),
        // NaN: a value `A * x[i]` never is, so an unwritten element shows.
        Arg::Buffer(Buffer::from_f32(&vec![f32::NAN; n])),
    ]
}

/// The launch: 256-thread blocks, at most 1024 of them (the loop does the
/// rest).
fn launch(n: usize) -> LaunchConfig {
    LaunchConfig::linear((n.div_ceil(256) as u32).clamp(1, 1024), 256)
}

fn first_wrong(y: &[f32]) -> Option<(usize, f32, f32)> {
    (0..y.len())
        .map(|i| (i, y[i], A * x_at(i)))
        .find(|(_, got, want)| got.to_bits() != want.to_bits())
}

#[test]
fn bytes_moved_counts_every_read_and_every_write() {
    assert_eq!(
        bytes_moved(1000),
        8000,
        "scale reads x[i] (4 bytes) and writes y[i] (4 bytes) for each of 1000 elements"
    );
    assert_eq!(bytes_moved(0), 0);
    assert_eq!(
        bytes_moved(1 << 30),
        8 << 30,
        "no overflow at 2^30 elements"
    );
}

#[test]
fn bandwidth_is_bytes_over_seconds_in_gb_per_s() {
    let close = |got: f64, want: f64| (got - want).abs() <= 1e-9 * want;
    let got = gb_per_s(8_000_000_000, 1.0);
    assert!(close(got, 8.0), "8e9 bytes in 1 s is 8 GB/s, got {got}");
    let got = gb_per_s(3_000_000, 0.001);
    assert!(close(got, 3.0), "3 MB in 1 ms is 3 GB/s, got {got}");
}

#[test]
fn the_typical_time_leaves_out_the_warm_up_and_resists_an_outlier() {
    // The first run compiled the kernel: 300 ms. One later run was slowed
    // by something else on the machine: 40 ms. The kernel takes 2 ms.
    let runs = [300.0, 2.1, 1.9, 2.0, 40.0, 2.0, 2.2];
    assert_eq!(
        typical(&runs, 1),
        Some(2.05),
        "the median of the runs after the first (2.1, 1.9, 2.0, 40, 2.0, 2.2) is 2.05: \
         the warm-up is not the kernel's time, and one slow run must not move the answer"
    );
    assert_eq!(typical(&[5.0, 3.0, 1.0, 2.0], 1), Some(2.0), "odd count");
    assert_eq!(
        typical(&[1.0, 2.0], 2),
        None,
        "nothing left after the warm-up"
    );
    assert_eq!(typical(&[1.0], 3), None, "fewer runs than the warm-up");
}

#[test]
fn the_kernel_matches_the_simulator_and_the_reference_on_the_gpu() {
    let (device, name) = gpu();
    for n in [1, 255, 256, 257, 100_000, (1 << 20) + 7] {
        let mut on_gpu = args(n);
        if let Err(e) = oxmera_cuda::run(device, scale(), launch(n), &mut on_gpu) {
            panic!("scale(n = {n}) on {device} ({name}): the launch failed: {e}");
        }
        let y = on_gpu[3].buffer().expect("y is a buffer").to_f32();
        if let Some((i, got, want)) = first_wrong(&y) {
            panic!(
                "scale(n = {n}) on {device} ({name}): y[{i}] = {got}, expected {A} * {} = {want}",
                x_at(i)
            );
        }
        if n <= 100_000 {
            let mut simulated = args(n);
            sim::run(scale(), launch(n), &mut simulated, &SimOptions::default())
                .unwrap_or_else(|e| panic!("scale(n = {n}) in the simulator: {e}"));
            let s = simulated[3].buffer().expect("y is a buffer").to_f32();
            if let Some(i) = (0..n).find(|&i| s[i].to_bits() != y[i].to_bits()) {
                panic!(
                    "scale(n = {n}): y[{i}] = {} on {device}, {} in the simulator",
                    y[i], s[i]
                );
            }
        }
    }
}

/// One launch of `k` over `n` elements, in seconds by the GPU's own
/// clock: `oxmera_cuda::time_launch` uploads the arguments first, untimed,
/// and reads two CUDA events recorded just before and just after the
/// launch, so the time is the kernel's and not the trip over the bus.
fn time_one(device: Device, k: &'static oxmera_kernel::ir::Kernel, n: usize, a: &[Arg]) -> f64 {
    oxmera_cuda::time_launch(device, k, launch(n), a)
        .unwrap_or_else(|e| panic!("{} over {n} on {device}: {e}", k.name))
        .as_secs_f64()
}

/// `runs` rounds of one launch each of `kernels`, the order rotated every
/// round (as oxmera's bench does, `crates/oxmera-bench/src/measure.rs`),
/// so a slow drift of the machine lands on all of them alike; the times,
/// one list per kernel.
fn time_interleaved(
    device: Device,
    n: usize,
    runs: usize,
    kernels: &[&'static oxmera_kernel::ir::Kernel],
) -> Vec<Vec<f64>> {
    let a = args(n);
    let mut times = vec![Vec::new(); kernels.len()];
    for round in 0..runs {
        for k in 0..kernels.len() {
            let which = (round + k) % kernels.len();
            times[which].push(time_one(device, kernels[which], n, &a));
        }
    }
    times
}

#[test]
fn the_kernel_keeps_up_with_a_copy_of_the_same_bytes() {
    let (device, name) = gpu();
    let n = 1 << 24;
    let (runs, warmup) = (9, 2);
    let times = time_interleaved(device, n, runs, &[copy(), scale()]);
    let typical_of = |t: &[f64]| typical(t, warmup).expect("runs are left after the warm-up");
    let (copy_t, scale_t) = (typical_of(&times[0]), typical_of(&times[1]));
    let bytes = bytes_moved(n as u64);
    // Both times are the kernels' own, by CUDA events on the GPU: the
    // 64 MiB each way over the bus is not in them, so a kernel that wastes
    // the memory's bandwidth (an uncoalesced access, one block for the
    // whole GPU) shows against the copy instead of hiding in the trip.
    eprintln!(
        "on {device} ({name}), {n} elements, median of {} runs after {warmup} warm-up, by CUDA \
         events: scale {:.3} ms, copy {:.3} ms ({:.2}x); scale {:.1} GB/s, copy {:.1} GB/s \
         by bytes_moved",
        runs - warmup,
        scale_t * 1e3,
        copy_t * 1e3,
        scale_t / copy_t,
        gb_per_s(bytes, scale_t),
        gb_per_s(bytes, copy_t),
    );
    assert!(
        scale_t <= 1.5 * copy_t,
        "scale takes {:.3} ms on the GPU, the copy of the same bytes {:.3} ms ({:.2}x): a kernel \
         that reads and writes each element once should cost what a copy costs; neighbouring \
         threads should touch neighbouring elements (coalesced), and the grid should fill the GPU",
        scale_t * 1e3,
        copy_t * 1e3,
        scale_t / copy_t
    );
}
