//! Which backend computes for which device: providers, opened lazily.
//!
//! A backend crate announces a [`Provider`]: the device kind it serves
//! (`"cpu"`, `"wgpu"`, `"loopback"`) and a function that opens one device
//! of that kind. It does so either at link time, by adding the provider to
//! [`BACKEND_PROVIDERS`] (so that merely linking the crate makes its device
//! usable), or at run time with [`register_provider`].
//!
//! Linking opens nothing. The first lookup of a device — the first tensor
//! made on it — calls the provider's `open`, once; a device that cannot be
//! opened (no driver, no adapter) is [`Error::BackendUnavailable`] with the
//! provider's reason, and a provider that panics is caught and reported
//! the same way. A failed open is not remembered: the next lookup tries
//! again (opening is rare, and the cause may have gone away).
//!
//! [`register`] installs an already-open backend for its device directly,
//! replacing any earlier one (tests use it for deliberately broken
//! backends).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

use oxmera_core::{Device, Error, Result};

use crate::Backend;

/// How a backend crate makes its devices available.
#[derive(Clone, Copy)]
pub struct Provider {
    /// The device kind it serves ([`Device::kind`]): a built-in name, or a
    /// custom one (then `"name:N"` parses to [`Device::Custom`]).
    pub kind: &'static str,
    /// Opens the device of that kind with the given ordinal, or says why
    /// it cannot.
    pub open: fn(Device) -> Result<Arc<dyn Backend>>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("kind", &self.kind)
            .finish()
    }
}

/// Link-time list of backend providers. A backend crate adds one with
/// `#[linkme::distributed_slice(oxmera_tensor::BACKEND_PROVIDERS)]`.
#[linkme::distributed_slice]
pub static BACKEND_PROVIDERS: [Provider];

/// The providers known, the link-time ones first.
fn providers() -> &'static RwLock<Vec<Provider>> {
    static PROVIDERS: OnceLock<RwLock<Vec<Provider>>> = OnceLock::new();
    PROVIDERS.get_or_init(|| {
        let mut all: Vec<Provider> = Vec::new();
        for p in BACKEND_PROVIDERS {
            if !all.iter().any(|q| q.kind == p.kind) {
                intern(p.kind);
                all.push(*p);
            }
        }
        RwLock::new(all)
    })
}

/// Makes a custom kind's name known to `Device`'s parser.
fn intern(kind: &str) {
    // A built-in kind needs nothing; a custom one becomes parsable once
    // made. A malformed custom name is refused here and again at open.
    let _ = Device::custom(kind, 0);
}

/// The devices opened so far.
fn opened() -> &'static RwLock<BTreeMap<Device, Arc<dyn Backend>>> {
    static OPENED: OnceLock<RwLock<BTreeMap<Device, Arc<dyn Backend>>>> = OnceLock::new();
    OPENED.get_or_init(Default::default)
}

/// The backend of `device` if it is open.
fn already_open(device: Device) -> Option<Arc<dyn Backend>> {
    let t = opened().read().unwrap_or_else(|e| e.into_inner());
    t.get(&device).cloned()
}

/// Serializes opening, so two threads making a first tensor at once open
/// a device once.
fn opening() -> &'static Mutex<()> {
    static OPENING: Mutex<()> = Mutex::new(());
    &OPENING
}

thread_local! {
    /// Whether this thread is inside a provider's `open` already: a
    /// provider may itself use another device (make a reference tensor to
    /// warm up, say), and taking the lock again would deadlock.
    static OPENING_HERE: Cell<bool> = const { Cell::new(false) };
}

/// Holds the opening lock, unless this thread holds it already, and marks
/// the thread as opening until dropped.
/// The lock is `None` for a nested opening on the thread that holds it.
struct OpeningGuard(Option<MutexGuard<'static, ()>>);

impl OpeningGuard {
    fn take() -> OpeningGuard {
        let nested = OPENING_HERE.with(Cell::get);
        let lock = (!nested).then(|| opening().lock().unwrap_or_else(|e| e.into_inner()));
        OPENING_HERE.with(|c| c.set(true));
        OpeningGuard(lock)
    }
}

impl Drop for OpeningGuard {
    fn drop(&mut self) {
        // Only the outermost opening clears the mark.
        if self.0.is_some() {
            OPENING_HERE.with(|c| c.set(false));
        }
    }
}

/// Adds a provider at run time (a custom device made by a program, a
/// learner's backend). A provider for a kind already served replaces the
/// earlier one for devices not yet opened.
pub fn register_provider(provider: Provider) {
    intern(provider.kind);
    let mut p = providers().write().unwrap_or_else(|e| e.into_inner());
    p.retain(|q| q.kind != provider.kind);
    p.push(provider);
}

/// Makes `backend` the one that computes for its device, opened already.
pub fn register(backend: Arc<dyn Backend>) {
    let mut t = opened().write().unwrap_or_else(|e| e.into_inner());
    t.insert(backend.device(), backend);
}

/// The backend for `device`, opening it on first use, or
/// [`Error::BackendUnavailable`] saying why there is none.
pub fn backend(device: Device) -> Result<Arc<dyn Backend>> {
    if let Some(b) = already_open(device) {
        return Ok(b);
    }
    let _one_at_a_time = OpeningGuard::take();
    // Another thread may have opened it while this one waited.
    if let Some(b) = already_open(device) {
        return Ok(b);
    }
    let provider = providers()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|p| p.kind == device.kind())
        .copied();
    let Some(provider) = provider else {
        let kind = device.kind();
        return Err(unavailable(
            device,
            format!(
                "no linked backend provides {kind} devices (kinds provided: [{}]); link the \
                 crate that does and name it once in the program, e.g. `use oxmera_{} as _;`",
                kinds().join(", "),
                kind.replace('-', "_"),
            ),
        ));
    };
    let backend = match catch_unwind(AssertUnwindSafe(|| (provider.open)(device))) {
        Ok(Ok(b)) => b,
        Ok(Err(Error::BackendUnavailable { reason, .. })) => {
            return Err(unavailable(device, reason));
        }
        Ok(Err(e)) => return Err(unavailable(device, e.to_string())),
        Err(panic) => {
            let what = panic_message(&*panic);
            return Err(unavailable(
                device,
                format!("its provider panicked while opening it: {what}"),
            ));
        }
    };
    if backend.device() != device {
        return Err(unavailable(
            device,
            format!(
                "its provider opened a backend for {} instead",
                backend.device()
            ),
        ));
    }
    let mut t = opened().write().unwrap_or_else(|e| e.into_inner());
    Ok(t.entry(device).or_insert(backend).clone())
}

fn unavailable(device: Device, reason: String) -> Error {
    Error::BackendUnavailable {
        op: "backend",
        device,
        reason,
    }
}

/// The device kinds that some linked or registered provider serves, in
/// registration order.
pub fn kinds() -> Vec<&'static str> {
    let p = providers().read().unwrap_or_else(|e| e.into_inner());
    p.iter().map(|p| p.kind).collect()
}

/// The devices opened so far (by a first tensor or by [`register`]).
pub fn devices() -> Vec<Device> {
    let t = opened().read().unwrap_or_else(|e| e.into_inner());
    t.keys().copied().collect()
}

/// Parses a device name, knowing every linked provider's custom kind
/// (which `Device`'s own parser learns only once the registry lists it).
pub fn parse_device(name: &str) -> Result<Device> {
    providers();
    name.parse()
}

/// The message a caught panic carried (`panic!("…")` payloads are a `&str`
/// or a `String`), or `(no message)`: what a provider, a backend or a test
/// runner reports when it turns a panic into an error.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
