//! What the wgpu integration tests share.

use oxmera_core::{DType, Device};
use oxmera_tensor::Tensor;

/// `wgpu:0` if an adapter opens; `None` (and a note) where none can —
/// a failure instead when `OXMERA_REQUIRE_GPU=1` (CI, after installing
/// lavapipe), so a missing driver there cannot pass as a skip. The tuning
/// cache is off for the test process first: the tests check the backend's
/// documented defaults, never what the user's cache holds for the adapter.
pub fn gpu() -> Option<Device> {
    oxmera_kernel::tune::cache::disable();
    let d = Device::Wgpu(0);
    match Tensor::zeros([1], DType::F32, d) {
        Ok(_) => Some(d),
        Err(e) => {
            assert!(
                std::env::var("OXMERA_REQUIRE_GPU").as_deref() != Ok("1"),
                "OXMERA_REQUIRE_GPU=1 but wgpu:0 did not open: {e}"
            );
            eprintln!("skipped: no wgpu adapter ({e})");
            None
        }
    }
}
