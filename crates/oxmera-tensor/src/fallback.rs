//! The visible host fallback: ops a backend has no kernel for run on the
//! host, and are counted.
//!
//! Every operation of [`Backend`] has a default body that downloads its
//! operands, computes with the reference backend (the definition of
//! correct) and uploads the result. That is what lets a backend that has
//! written only upload and download run every model: slowly, but right.
//! Slow must not mean silent, so every such run is counted here per
//! device and op:
//!
//! - [`report`] returns the counts (`oxmera train` prints them at the end
//!   of a run on a device that fell back);
//! - with `OXMERA_LOG=fallback` (or `all`) in the environment, the first
//!   fallback of each op on each device is also written to standard error
//!   as it happens.
//!
//! ```
//! use oxmera_core::{DType, Device};
//! use oxmera_tensor::{Tensor, fallback};
//! # use oxmera_reference as _;
//! // The reference computes everything itself: nothing falls back.
//! let x = Tensor::ones([3], DType::F32, Device::Reference)?;
//! x.exp()?.sum_all()?;
//! assert_eq!(fallback::report().total_for(Device::Reference), 0);
//! # Ok::<(), oxmera_core::Error>(())
//! ```
//!
//! What the fallback needs: the reference backend linked into the program
//! (any crate that provides a device backend names it, so it is). Without
//! it a fallback fails with `BackendUnavailable` saying so.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use oxmera_core::{DType, Device, Error, Result};

use crate::{Backend, Storage, Support, Tensor, registry};

/// Calls that fell back, per (device, op).
fn counts() -> &'static Mutex<BTreeMap<(Device, &'static str), u64>> {
    static COUNTS: OnceLock<Mutex<BTreeMap<(Device, &'static str), u64>>> = OnceLock::new();
    COUNTS.get_or_init(Default::default)
}

/// Whether `OXMERA_LOG` asks for fallbacks to be logged (read once).
fn logging() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("OXMERA_LOG")
            .is_ok_and(|v| v.split(',').any(|w| matches!(w.trim(), "fallback" | "all")))
    })
}

/// Counts one fallback of `op` on `dev`'s device (and logs the first).
pub(crate) fn record<B: Backend + ?Sized>(dev: &B, op: &'static str) {
    let device = dev.device();
    let first = {
        let mut c = counts().lock().unwrap_or_else(|e| e.into_inner());
        let n = c.entry((device, op)).or_insert(0);
        *n += 1;
        *n == 1
    };
    if first && logging() {
        eprintln!(
            "oxmera: {op} on {device} ran on the host (download, reference, upload): \
             backend {} has no kernel for it; later fallbacks of {op} are only counted",
            dev.name()
        );
    }
}

/// A host view of a device tensor: its whole storage downloaded, seen
/// through the same layout, tagged as the reference's.
pub(crate) fn host_view<B: Backend + ?Sized>(dev: &B, x: &Tensor) -> Result<Tensor> {
    let buffer = dev.download(x.storage())?;
    let storage = Storage::host(Device::Reference, buffer);
    Ok(Tensor::from_parts(Arc::new(storage), x.layout().clone()))
}

/// `dev` as it is without its own kernels: a backend that shares `dev`'s
/// device services and capabilities and computes every op by the trait's
/// default body — on the host, through the reference, counted.
///
/// For a backend that computes some cases of an op natively (one dtype,
/// say) and hands the rest to the host, in one line:
///
/// ```ignore
/// fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
///     if let Some(s) = self.native_unary(op, x)? {
///         return Ok(s);
///     }
///     fallback::on_host(self).unary(op, x)
/// }
/// ```
pub fn on_host<B: Backend + ?Sized>(dev: &B) -> OnHost<'_, B> {
    OnHost(dev)
}

/// The backend [`on_host`] returns: `B`'s services, the defaults' ops.
#[derive(Debug)]
pub struct OnHost<'a, B: Backend + ?Sized>(&'a B);

impl<B: Backend + ?Sized> Backend for OnHost<'_, B> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn device(&self) -> Device {
        self.0.device()
    }
    fn from_host(&self, data: crate::HostBuffer) -> Result<Storage> {
        self.0.from_host(data)
    }
    fn download(&self, storage: &Storage) -> Result<crate::HostBuffer> {
        self.0.download(storage)
    }
    fn to_host(&self, x: &Tensor) -> Result<crate::HostBuffer> {
        self.0.to_host(x)
    }
    fn synchronize(&self) -> Result<()> {
        self.0.synchronize()
    }
    fn stores(&self, dtype: DType) -> bool {
        self.0.stores(dtype)
    }
    fn index_dtype(&self) -> DType {
        self.0.index_dtype()
    }
    fn checks_indices(&self) -> bool {
        self.0.checks_indices()
    }
    fn support(&self, op: &str, dtype: DType) -> Support {
        self.0.support(op, dtype)
    }
}

/// One op's run on the host on behalf of a device backend: what every
/// default op body does (a backend reaches it through [`on_host`]).
pub(crate) struct Host<'a, B: Backend + ?Sized> {
    dev: &'a B,
    reference: Arc<dyn Backend>,
}

impl<'a, B: Backend + ?Sized> Host<'a, B> {
    /// Starts a fallback of `op` on `dtype` for `dev`: refuses an op the
    /// backend declines, finds the reference, and counts the fallback.
    pub(crate) fn begin(dev: &'a B, op: &'static str, dtype: DType) -> Result<Self> {
        // The reference has nothing to fall back on; an op a backend
        // declines is refused rather than quietly run on the host.
        if dev.device() == Device::Reference || dev.support(op, dtype) == Support::Unsupported {
            return Err(Error::NotImplemented {
                op,
                backend: dev.name().to_string(),
            });
        }
        let reference =
            registry::backend(Device::Reference).map_err(|_| Error::BackendUnavailable {
                op,
                device: Device::Reference,
                reason: format!(
                    "{} falls back to the host for {op}, which needs the reference backend \
                     linked (`use oxmera_reference as _;`)",
                    dev.device()
                ),
            })?;
        record(dev, op);
        Ok(Host { dev, reference })
    }

    /// The backend that computes on the host.
    pub(crate) fn reference(&self) -> &dyn Backend {
        &*self.reference
    }

    /// An operand, on the host.
    pub(crate) fn tensor_of(&self, x: &Tensor) -> Result<Tensor> {
        host_view(self.dev, x)
    }

    /// An index operand, on the host in the reference's index dtype.
    pub(crate) fn index_of(&self, x: &Tensor) -> Result<Tensor> {
        let host = host_view(self.dev, x)?;
        let want = self.reference.index_dtype();
        if host.dtype() == want {
            return Ok(host);
        }
        let wide = self.reference.cast(&host, want)?;
        Ok(Tensor::from_storage(wide, host.shape().clone()))
    }

    /// The reference's result, uploaded to the device.
    pub(crate) fn finish(&self, out: Storage) -> Result<Storage> {
        let buffer = out
            .into_host()
            .expect("the reference backend stores on the host");
        self.dev.from_host(buffer)
    }
}

/// How often one op fell back on one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FallbackCount {
    /// The device whose backend lacked the kernel.
    pub device: Device,
    /// The op's public name.
    pub op: &'static str,
    /// How many calls ran on the host.
    pub calls: u64,
}

/// Every fallback since the process started (or the last [`reset`]),
/// ordered by device and op.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FallbackReport {
    /// One entry per (device, op) that fell back at least once.
    pub entries: Vec<FallbackCount>,
}

impl FallbackReport {
    /// Whether nothing fell back.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The calls that fell back on `device`, over every op.
    pub fn total_for(&self, device: Device) -> u64 {
        self.entries
            .iter()
            .filter(|e| e.device == device)
            .map(|e| e.calls)
            .sum()
    }

    /// The entries of `device` only.
    pub fn for_device(&self, device: Device) -> FallbackReport {
        FallbackReport {
            entries: self
                .entries
                .iter()
                .filter(|e| e.device == device)
                .cloned()
                .collect(),
        }
    }
}

/// A table: one line per op, most frequent first within each device.
impl fmt::Display for FallbackReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return writeln!(f, "no op fell back to the host");
        }
        let mut devices: Vec<Device> = self.entries.iter().map(|e| e.device).collect();
        devices.dedup();
        for device in devices {
            let mut rows: Vec<&FallbackCount> =
                self.entries.iter().filter(|e| e.device == device).collect();
            rows.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.op.cmp(b.op)));
            let total: u64 = rows.iter().map(|e| e.calls).sum();
            writeln!(
                f,
                "ops that ran on the host for {device} ({} ops, {total} calls):",
                rows.len()
            )?;
            for e in rows {
                writeln!(f, "  {:<22} {:>9}", e.op, e.calls)?;
            }
        }
        Ok(())
    }
}

/// The fallback counts so far.
pub fn report() -> FallbackReport {
    let c = counts().lock().unwrap_or_else(|e| e.into_inner());
    FallbackReport {
        entries: c
            .iter()
            .map(|(&(device, op), &calls)| FallbackCount { device, op, calls })
            .collect(),
    }
}

/// How many calls of `op` fell back on `device` so far.
pub fn count(device: Device, op: &str) -> u64 {
    let c = counts().lock().unwrap_or_else(|e| e.into_inner());
    c.iter()
        .filter(|((d, o), _)| *d == device && *o == op)
        .map(|(_, &n)| n)
        .sum()
}

/// How many calls fell back on `device` so far, over every op.
pub fn total(device: Device) -> u64 {
    let c = counts().lock().unwrap_or_else(|e| e.into_inner());
    c.iter()
        .filter(|((d, _), _)| *d == device)
        .map(|(_, &n)| n)
        .sum()
}

/// Forgets every count (a new run's report starts empty).
pub fn reset() {
    counts().lock().unwrap_or_else(|e| e.into_inner()).clear();
}
