//! What a program sees on a machine with no CUDA driver (CI's machine), or
//! in a build without the `cuda` feature: typed errors that say what is
//! missing, from every entry point, and never a panic. On a machine with a
//! GPU these tests have nothing to show and return early.

use oxmera_core::{DType, Device, Error};
use oxmera_cuda::{ENABLED, identity, probe, run, target, time_launch};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{Arg, Buffer};
use oxmera_tensor::Tensor;

/// True where a driver lists a GPU: nothing below applies there.
fn gpu_present() -> bool {
    probe().is_ok_and(|gpus| !gpus.is_empty())
}

fn assert_says_what_is_missing(err: Error) {
    match err {
        Error::BackendUnavailable { reason, device, .. } => {
            assert!(matches!(device, Device::Cuda(_)), "{device}");
            let expected = if ENABLED {
                "no CUDA driver"
            } else {
                "--features cuda"
            };
            assert!(reason.contains(expected), "{reason}");
        }
        other => panic!("expected BackendUnavailable, got {other:?}"),
    }
}

#[test]
fn every_entry_point_is_a_typed_error_without_a_driver() {
    if gpu_present() {
        return;
    }
    assert_says_what_is_missing(probe().unwrap_err());
    assert_says_what_is_missing(target(Device::Cuda(0)).unwrap_err());
    assert_says_what_is_missing(Tensor::zeros([3], DType::F32, Device::Cuda(1)).unwrap_err());
    let t = Tensor::from_vec(vec![1.0f32, 2.0], [2], Device::Reference).unwrap();
    assert_says_what_is_missing(t.to_device(Device::Cuda(0)).unwrap_err());
    let k = oxmera_kernel::library::add();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&[1.0; 4])),
        Arg::Buffer(Buffer::from_f32(&[2.0; 4])),
        Arg::Buffer(Buffer::from_f32(&[0.0; 4])),
        Arg::Scalar(oxmera_kernel::ir::Value::U32(4)),
    ];
    let launch = LaunchConfig::linear(1, 64);
    assert_says_what_is_missing(run(Device::Cuda(0), k, launch, &mut args).unwrap_err());
    // The tuner's two: a timed launch and the cache's identity.
    assert_says_what_is_missing(time_launch(Device::Cuda(0), k, launch, &args).unwrap_err());
    assert_says_what_is_missing(identity(Device::Cuda(2)).unwrap_err());
}

#[test]
fn arguments_are_checked_before_any_driver_is_touched() {
    // The wrong arguments are the caller's error on every machine.
    let k = oxmera_kernel::library::add();
    let mut args = vec![Arg::Buffer(Buffer::from_f32(&[1.0; 4]))];
    match run(Device::Cuda(0), k, LaunchConfig::linear(1, 64), &mut args) {
        Err(Error::InvalidArgument { message, .. }) => {
            assert!(message.contains("takes 4 arguments"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}
