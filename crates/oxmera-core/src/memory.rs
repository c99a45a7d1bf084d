//! Whether a result's memory can be had, asked before any work starts.
//!
//! A backend allocates its results with the infallible `Vec` calls, which
//! abort the process when the allocator refuses. So the front end asks
//! first: for a result of at least [`PROBE_MIN_BYTES`] in host memory it
//! reserves the bytes with `try_reserve_exact` and lets them go at once,
//! and a refusal is [`Error::OutOfMemory`] naming the op, the size and the
//! device. Reserving is not touching: on Linux the probe is a `mmap` and a
//! `munmap` of untouched pages, microseconds beside filling 64 MiB.
//!
//! What it can promise depends on the operating system. Linux's default
//! overcommit refuses a request larger than memory and swap together, so
//! `zeros([1 << 40])` (4 TiB of f32) is a typed error; a request that fits
//! that bound but not what is free succeeds here and may be killed when
//! its pages are first touched.
//!
//! Results on GPU devices are probed against host memory too: a backend
//! computes what it cannot do natively (and a result too large for one
//! device buffer) through the host, where an unprobed allocation would
//! abort. The cost of that caution: a GPU result larger than the host's
//! memory and swap together is refused even where the device could hold
//! it (docs/LIMITATIONS.md).

use crate::{Device, Error, Result};

/// Results smaller than this (64 MiB) are not probed: the allocator's
/// refusal of them is not a failure mode a program meets in practice, and
/// every small op would pay for the probe.
pub const PROBE_MIN_BYTES: u64 = 64 << 20;

/// `Err(OutOfMemory)` when `bytes` for `op`'s result on `device` cannot be
/// reserved in host memory (whatever the device: see the module docs);
/// `Ok` for results under [`PROBE_MIN_BYTES`].
///
/// ```
/// use oxmera_core::{Device, memory::probe_result};
/// assert!(probe_result("zeros", 1 << 10, Device::Cpu).is_ok());
/// // More than any machine has: refused, not aborted.
/// let e = probe_result("zeros", 1 << 62, Device::Cpu).unwrap_err();
/// assert_eq!(e.kind(), "OutOfMemory");
/// ```
pub fn probe_result(op: &'static str, bytes: u64, device: Device) -> Result<()> {
    if bytes < PROBE_MIN_BYTES {
        return Ok(());
    }
    let refused = || Error::OutOfMemory { op, bytes, device };
    let len = usize::try_from(bytes).map_err(|_| refused())?;
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(len).map_err(|_| refused())
}
