//! What a machine with an NVIDIA GPU and the `cuda` feature checks of the
//! tuner's entry points (`scripts/gpu-check.sh` runs it there): a launch
//! timed by CUDA events, and the part's identity for the tuning cache.
//! Everywhere else (CI: no driver) these tests return early; the typed
//! errors there are `no_driver.rs`'s.

use oxmera_core::Device;
use oxmera_cuda::{identity, probe, run, time_launch};
use oxmera_kernel::ir::Value;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{Arg, Buffer};

fn gpu_present() -> bool {
    probe().is_ok_and(|gpus| !gpus.is_empty())
}

fn add_args(n: usize) -> Vec<Arg> {
    vec![
        Arg::Buffer(Buffer::from_f32(&vec![1.5; n])),
        Arg::Buffer(Buffer::from_f32(&vec![2.0; n])),
        Arg::Buffer(Buffer::from_f32(&vec![0.0; n])),
        Arg::Scalar(Value::U32(n as u32)),
    ]
}

#[test]
fn a_launch_is_timed_by_events_and_leaves_the_arguments_alone() {
    if !gpu_present() {
        return;
    }
    let k = oxmera_kernel::library::add();
    let n = 1 << 20;
    let launch = LaunchConfig::linear((n as u32).div_ceil(256), 256);
    let args = add_args(n);
    // The first launch JIT-compiles; the second is the one a tuner keeps.
    let first = time_launch(Device::Cuda(0), k, launch, &args).unwrap();
    let again = time_launch(Device::Cuda(0), k, launch, &args).unwrap();
    assert!(
        first.as_nanos() > 0 && again.as_nanos() > 0,
        "{first:?} {again:?}"
    );
    // A million adds take well under a second on any part that runs PTX.
    assert!(again.as_secs_f64() < 1.0, "{again:?}");
    // The timed launch computed what `run` does.
    let mut ran = add_args(n);
    run(Device::Cuda(0), k, launch, &mut ran).unwrap();
    let Arg::Buffer(out) = &ran[2] else {
        unreachable!("argument 2 is the output buffer")
    };
    assert!(out.to_f32().iter().all(|&v| v == 3.5));
}

#[test]
fn the_identity_names_the_part_and_its_driver_not_the_ordinal() {
    if !gpu_present() {
        return;
    }
    let gpus = probe().unwrap();
    let id = identity(Device::Cuda(0)).unwrap();
    let (major, minor) = gpus[0].compute_capability;
    assert!(
        id.starts_with(&format!("cuda: {}; sm_{major}{minor}; CUDA ", gpus[0].name)),
        "{id}"
    );
    assert!(!id.contains("cuda:0"), "{id}");
}
