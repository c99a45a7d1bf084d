//! A lost device (a driver reset, an unplugged GPU; here `destroy`) makes
//! every later operation a typed `DeviceFault` naming the loss, never a
//! panic or a hang, and leaves other devices alone. Its own test binary:
//! the loss is permanent for the process.
#![cfg(feature = "wgpu")]

use oxmera_core::{DType, Device, Error};
use oxmera_tensor::Tensor;

mod common;
use common::gpu;

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
