//! Counts of the host data the front end moves onto each device.
//!
//! Every tensor built from host data (`from_vec`, `from_host`,
//! `to_device`, a constructor on a backend without a fill service) is one
//! upload. On a GPU each is a transfer across the bus with a fixed cost
//! far above a small kernel's, so the count is worth watching: a training
//! step should upload its batch and nothing else. Scalars never count —
//! they travel to the backend as values (`add_scalar`, `clamp`, the
//! optimizers' hyper-parameters) — and a test holds an Adam step to zero
//! uploads.
//!
//! The fallback's own traffic (download, reference, upload) is not
//! counted here but in [`crate::fallback`].

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use oxmera_core::Device;

fn counts() -> &'static Mutex<BTreeMap<Device, u64>> {
    static COUNTS: OnceLock<Mutex<BTreeMap<Device, u64>>> = OnceLock::new();
    COUNTS.get_or_init(Default::default)
}

/// Counts one upload the front end makes to `device`.
pub(crate) fn count_upload(device: Device) {
    *counts()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(device)
        .or_insert(0) += 1;
}

/// How many host buffers the front end has uploaded to `device` so far.
///
/// ```
/// use oxmera_core::{DType, Device};
/// use oxmera_tensor::{Tensor, transfer};
/// # use oxmera_reference as _;
/// let before = transfer::uploads(Device::Reference);
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], [2], Device::Reference)?;
/// let _ = x.add_scalar(1.0)?.mul_scalar(3.0)?; // scalars travel as values
/// assert!(transfer::uploads(Device::Reference) >= before + 1);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn uploads(device: Device) -> u64 {
    counts()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&device)
        .copied()
        .unwrap_or(0)
}
