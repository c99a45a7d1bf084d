//! A cache of large host buffers: storage that one step drops serves the
//! next step's outputs of the same size, instead of going back to the
//! operating system and coming out of it again.
//!
//! # Why
//!
//! A large allocation is a fresh memory mapping. The operating system
//! supplies its pages zeroed, one fault at a time, on first write, and
//! takes them back when it is freed (unmapping flushes other cores' TLBs).
//! For one 64 MiB output that is about as much work as the elementwise op
//! that fills it: zeroing 64 MiB is a full pass over memory the op is
//! about to overwrite anyway. Training loops and benchmark loops make the
//! same shapes again and again, so a buffer dropped by one iteration is
//! exactly what the next one asks for. (This is the host-side cousin of
//! the caching allocators GPU frameworks use for device memory.)
//!
//! # Rules
//!
//! - Only buffers of at least [`MIN_BYTES`] are kept. Below that the
//!   allocator serves requests from memory it already holds (but still
//!   clears it for a zeroed request, a pass that is cheap at that size).
//! - At most a capacity of bytes in all, the oldest dropped first: 512 MiB
//!   unless the environment variable `OXMERA_HOST_CACHE_MB` says otherwise
//!   (read once; `0` turns the cache off).
//! - A request is served only by a buffer of exactly the dtype and length
//!   asked for, so a cached buffer never pins more memory than it serves.
//! - A served buffer's contents are stale: a backend takes one ([`take`])
//!   only for an output it overwrites entirely. In debug builds the
//!   contents are overwritten with a poison value first (NaN for floats),
//!   so that an op which leaves an element unwritten fails its tests
//!   instead of returning an earlier tensor's numbers.
//! - [`clear`] hands everything back to the operating system.
//!
//! Every [`Storage`](crate::Storage) in host memory offers its buffer here
//! when it is dropped; whether a backend takes buffers from here is its
//! own choice (the reference backend does not, to stay plain).

use std::sync::{Mutex, OnceLock};

use oxmera_core::DType;

use crate::{Element, HostBuffer, with_host_buffer};

/// Smallest buffer worth keeping, in bytes.
pub const MIN_BYTES: usize = 128 << 10;

/// Capacity when `OXMERA_HOST_CACHE_MB` is unset, in MiB.
const DEFAULT_CAPACITY_MB: usize = 512;

/// The cached buffers, oldest first, and their total size in bytes.
struct Cache {
    buffers: Vec<HostBuffer>,
    bytes: usize,
}

impl Cache {
    const fn new() -> Cache {
        Cache {
            buffers: Vec::new(),
            bytes: 0,
        }
    }

    /// The newest buffer of exactly `dtype` and `len`, removed.
    fn take(&mut self, dtype: DType, len: usize) -> Option<HostBuffer> {
        let at = self
            .buffers
            .iter()
            .rposition(|b| b.dtype() == dtype && b.len() == len)?;
        let buf = self.buffers.remove(at);
        self.bytes -= held_bytes(&buf);
        Some(buf)
    }

    /// Keeps `buf` within `cap` bytes in all, evicting the oldest
    /// buffers; returns what it did not keep (to be freed by the caller,
    /// outside any lock).
    fn give(&mut self, buf: HostBuffer, cap: usize) -> Vec<HostBuffer> {
        let bytes = held_bytes(&buf);
        if bytes < MIN_BYTES || bytes > cap {
            return vec![buf];
        }
        let mut evicted = Vec::new();
        while self.bytes + bytes > cap {
            let old = self.buffers.remove(0);
            self.bytes -= held_bytes(&old);
            evicted.push(old);
        }
        self.bytes += bytes;
        self.buffers.push(buf);
        evicted
    }
}

static CACHE: Mutex<Cache> = Mutex::new(Cache::new());

/// The capacity in bytes: `OXMERA_HOST_CACHE_MB` (in MiB) or the default.
fn capacity() -> usize {
    static CAPACITY: OnceLock<usize> = OnceLock::new();
    *CAPACITY.get_or_init(|| {
        let mb = std::env::var("OXMERA_HOST_CACHE_MB")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(DEFAULT_CAPACITY_MB);
        mb.saturating_mul(1 << 20)
    })
}

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    // A panic while the lock was held cannot leave the list inconsistent
    // (each change is one push or remove plus its byte count), so a
    // poisoned lock is still usable.
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The memory a buffer holds, in bytes (its capacity, not its length).
fn held_bytes(buf: &HostBuffer) -> usize {
    fn size<T>(v: &Vec<T>) -> usize {
        v.capacity() * size_of::<T>()
    }
    with_host_buffer!(buf, v => size(v))
}

/// A cached vector of exactly `len` elements of `T`, if there is one. Its
/// contents are stale (poisoned in debug builds): the caller must write
/// every element before anyone reads it.
pub fn take<T: Element>(len: usize) -> Option<Vec<T>> {
    if len * size_of::<T>() < MIN_BYTES {
        return None;
    }
    let buf = lock().take(T::DTYPE, len)?;
    let mut v = T::from_buffer(buf).ok()?;
    if cfg!(debug_assertions) {
        v.fill(poison());
    }
    Some(v)
}

/// What stale contents are overwritten with in debug builds.
fn poison<T: Element>() -> T {
    if T::DTYPE.is_float() {
        T::from_f64(f64::NAN)
    } else {
        T::from_i64(0x5a)
    }
}

/// Offers a buffer that is no longer used: kept when large enough and
/// there is room (older buffers are dropped to make it), freed otherwise.
pub(crate) fn give(buf: HostBuffer) {
    if held_bytes(&buf) < MIN_BYTES {
        return;
    }
    let unkept = lock().give(buf, capacity());
    // Freeing large buffers unmaps them: done outside the lock.
    drop(unkept);
}

/// Bytes held by the cache now.
pub fn cached_bytes() -> usize {
    lock().bytes
}

/// Hands every cached buffer back to the operating system.
pub fn clear() {
    let buffers = {
        let mut cache = lock();
        cache.bytes = 0;
        std::mem::take(&mut cache.buffers)
    };
    drop(buffers);
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEN: usize = MIN_BYTES / 4;

    fn f32s(len: usize) -> HostBuffer {
        HostBuffer::F32(vec![1.0; len])
    }

    #[test]
    fn serves_exact_dtype_and_length_newest_first() {
        let mut c = Cache::new();
        assert!(c.give(f32s(LEN), usize::MAX).is_empty());
        assert!(c.give(HostBuffer::I32(vec![7; LEN]), usize::MAX).is_empty());
        assert_eq!(c.bytes, 2 * LEN * 4);
        assert!(c.take(DType::F32, LEN + 1).is_none());
        assert!(c.take(DType::F64, LEN).is_none());
        assert_eq!(c.take(DType::I32, LEN), Some(HostBuffer::I32(vec![7; LEN])));
        assert_eq!(c.take(DType::F32, LEN).map(|b| b.len()), Some(LEN));
        assert!(c.take(DType::F32, LEN).is_none(), "served once");
        assert_eq!(c.bytes, 0);
    }

    #[test]
    fn keeps_only_large_buffers_within_capacity_evicting_the_oldest() {
        let mut c = Cache::new();
        let small = c.give(f32s(16), usize::MAX);
        assert_eq!(small.len(), 1, "below MIN_BYTES: handed back to be freed");
        let cap = 2 * LEN * 4;
        assert_eq!(c.give(f32s(3 * LEN), cap).len(), 1, "larger than the cache");
        assert!(c.give(HostBuffer::I32(vec![1; LEN]), cap).is_empty());
        assert!(c.give(f32s(LEN), cap).is_empty());
        let evicted = c.give(HostBuffer::F64(vec![2.0; LEN / 2]), cap);
        assert_eq!(
            evicted,
            vec![HostBuffer::I32(vec![1; LEN])],
            "the oldest goes"
        );
        assert_eq!(c.bytes, cap);
    }

    #[test]
    fn held_bytes_counts_capacity() {
        let mut v = Vec::<f64>::with_capacity(100);
        v.push(1.0);
        assert_eq!(held_bytes(&HostBuffer::F64(v)), 800);
    }

    #[test]
    fn poison_is_nan_for_floats_and_nonzero_for_integers() {
        assert!(poison::<f32>().is_nan());
        assert_eq!(poison::<i64>(), 0x5a);
        assert!(poison::<bool>());
    }
}
