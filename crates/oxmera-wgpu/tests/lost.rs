//! The device's own faults as typed errors. A lost device (a driver
//! reset, an unplugged GPU; here `destroy`) makes every later operation a
//! typed `DeviceFault` naming the loss, never a panic or a hang, and
//! leaves other devices alone. Its own test binary: the loss is permanent
//! for the process. Device memory running out is a `DeviceFault` too, in
//! a child process (the fault is permanent for its device as well).
#![cfg(feature = "wgpu")]

use oxmera_core::{DType, Device, Error};
use oxmera_tensor::Tensor;

mod common;
use common::gpu;

// The API tests' runner of a test in a child under `ulimit -v`.
#[path = "../../oxmera/tests/limited/mod.rs"]
mod limited;

/// The child's address space, in KiB (3 GiB): room for the driver and
/// its compiler, and a ceiling the test's allocations reach in seconds.
const LIMIT_KIB: u64 = 3 << 20;

/// lavapipe's device memory is host memory, so under an address-space
/// limit the driver's own allocation fails as a discrete GPU's does when
/// its memory is full. Tensors of 32 MiB are held until it does: each is
/// under the front end's 64 MiB host probe, so what refuses is the
/// device's allocation (wgpu reports it asynchronously), not the probe.
/// It surfaces as a `DeviceFault` at the next read-back — not a panic, an
/// abort (the child dying of a signal fails the test) or a hang — and the
/// host goes on computing.
#[test]
fn running_out_of_device_memory_is_a_typed_error() {
    if !limited::in_child() {
        if gpu().is_some() {
            let said =
                limited::run_limited("running_out_of_device_memory_is_a_typed_error", LIMIT_KIB);
            eprintln!("{said}");
        }
        return;
    }
    let d = gpu().expect("the parent opened the adapter");
    let mut held = Vec::new();
    let most = (LIMIT_KIB << 10) / (32 << 20) + 8;
    for k in 0..most {
        let t = Tensor::full([8 << 20], 1.0, DType::F32, d)
            .and_then(|t| t.sum_all()?.to_vec::<f32>().map(|s| (t, s)));
        match t {
            Ok((t, s)) => {
                assert_eq!(s, vec![(8 << 20) as f32]);
                held.push(t);
            }
            Err(Error::DeviceFault { reason, device, .. }) => {
                assert_eq!(device, d);
                assert!(reason.to_lowercase().contains("memory"), "{reason}");
                eprintln!("after {k} tensors of 32 MiB: {reason}");
                // The faulted device takes no more work; the host does.
                assert!(
                    Tensor::zeros([4], DType::F32, d)
                        .and_then(|t| t.to_vec::<f32>())
                        .is_err()
                );
                let h = Tensor::from_vec(vec![2.0f32], [1], Device::Reference).unwrap();
                assert_eq!(h.exp().unwrap().to_vec::<f32>().unwrap()[0], 2f32.exp());
                return;
            }
            Err(other) => panic!("after {k} tensors: expected a DeviceFault, got {other:?}"),
        }
    }
    panic!("{most} tensors of 32 MiB fit under a {LIMIT_KIB} KiB address space");
}

#[test]
fn a_lost_device_fails_every_later_call_with_a_typed_error() {
    let Some(d) = gpu() else { return };
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], d).unwrap();
    let y = x.exp().unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap()[0], 1f32.exp());
    assert!(oxmera_wgpu::destroy(d));
    let lost = |e: Error| match e {
        Error::DeviceFault { reason, device, .. } => {
            assert_eq!(device, d);
            assert!(reason.contains("lost"), "{reason}");
        }
        other => panic!("expected a DeviceFault, got {other:?}"),
    };
    // A read-back of a tensor it held, a new op on it, a new tensor.
    lost(y.to_vec::<f32>().unwrap_err());
    lost(x.exp().and_then(|t| t.to_vec::<f32>()).unwrap_err());
    lost(
        Tensor::zeros([4], DType::F32, d)
            .and_then(|t| t.to_vec::<f32>())
            .unwrap_err(),
    );
    lost(x.to_device(Device::Reference).unwrap_err());
    // The host is untouched.
    let h = Tensor::from_vec(vec![1.0f32], [1], Device::Reference).unwrap();
    assert_eq!(h.exp().unwrap().to_vec::<f32>().unwrap()[0], 1f32.exp());
    assert!(!oxmera_wgpu::destroy(Device::Wgpu(7)));
}
