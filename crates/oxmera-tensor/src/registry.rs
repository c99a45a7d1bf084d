//! Which backend computes for which device.
//!
//! Backends announce themselves in two ways. A backend crate may add a
//! provider to [`BACKEND_PROVIDERS`] (a link-time list), so that merely
//! linking it makes its device usable — this is how the reference backend
//! is registered by default when the `oxmera` crate is used. Or code may
//! call [`register`] at run time, which also replaces an earlier backend
//! for the same device.

use std::sync::{Arc, OnceLock, RwLock};

use oxmera_core::{Device, Error, Result};

use crate::Backend;

/// Link-time list of backend constructors. A backend crate adds one with
/// `#[linkme::distributed_slice(oxmera_tensor::BACKEND_PROVIDERS)]`.
#[linkme::distributed_slice]
pub static BACKEND_PROVIDERS: [fn() -> Arc<dyn Backend>];

fn table() -> &'static RwLock<Vec<Arc<dyn Backend>>> {
    static TABLE: OnceLock<RwLock<Vec<Arc<dyn Backend>>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut backends: Vec<Arc<dyn Backend>> = Vec::new();
        for provide in BACKEND_PROVIDERS {
            let b = provide();
            if !backends.iter().any(|x| x.device() == b.device()) {
                backends.push(b);
            }
        }
        RwLock::new(backends)
    })
}

/// Makes `backend` the one that computes for its device.
pub fn register(backend: Arc<dyn Backend>) {
    let mut t = table().write().unwrap_or_else(|e| e.into_inner());
    t.retain(|b| b.device() != backend.device());
    t.push(backend);
}

/// The backend for `device`, or [`Error::BackendUnavailable`].
pub fn backend(device: Device) -> Result<Arc<dyn Backend>> {
    let t = table().read().unwrap_or_else(|e| e.into_inner());
    t.iter()
        .find(|b| b.device() == device)
        .cloned()
        .ok_or_else(|| Error::BackendUnavailable {
            op: "backend",
            device,
            reason: format!(
                "registered: [{}]; name the crate that provides it somewhere in the program, e.g. `use oxmera_reference as _;` (the `oxmera` crate does this for the reference backend)",
                t.iter()
                    .map(|b| b.device().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

/// The devices that have a backend, in registration order.
pub fn devices() -> Vec<Device> {
    let t = table().read().unwrap_or_else(|e| e.into_inner());
    t.iter().map(|b| b.device()).collect()
}
