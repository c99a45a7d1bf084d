//! Asking the operating system for huge pages under large outputs.
//!
//! Every op returns fresh storage, and a large fresh allocation is a new
//! memory mapping whose pages the kernel supplies (zeroed) one fault at a
//! time, on first write. For a 64 MiB output that is 16 384 faults of
//! 4 KiB pages, and it was measured to cost several times as long as
//! writing the data itself. Marking the mapping for transparent huge pages
//! (`madvise(MADV_HUGEPAGE)`, as NumPy does for its large arrays) lets the
//! kernel fault in 2 MiB at a time: 512 times fewer faults. The advice is
//! only a hint — it never changes the contents — and where it is refused
//! or the system has huge pages turned off, nothing changes.
//!
//! Only Linux has the call; elsewhere [`advise_huge`] does nothing.

#![allow(unsafe_code)]

/// Below this many bytes the faults are too few to matter.
const MIN_BYTES: usize = 4 << 20;

/// Hints that the 2 MiB-aligned pages inside `buf` be backed by huge
/// pages. Call before the first write to `buf`.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge<T>(buf: &mut [T]) {
    const HUGE: usize = 2 << 20;
    const MADV_HUGEPAGE: i32 = 14;
    unsafe extern "C" {
        fn madvise(addr: *mut core::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    let bytes = std::mem::size_of_val(buf);
    if bytes < MIN_BYTES {
        return;
    }
    let start = buf.as_mut_ptr() as usize;
    let first = start.next_multiple_of(HUGE);
    let last = (start + bytes) / HUGE * HUGE;
    if last > first {
        // SAFETY: [first, last) lies inside `buf`, memory this process
        // owns and holds a unique borrow of; MADV_HUGEPAGE only sets a
        // flag on the mapping and never alters or frees its contents, so
        // no Rust invariant can be affected. A failure (EINVAL where huge
        // pages are unsupported) is harmless and ignored.
        unsafe {
            madvise(first as *mut core::ffi::c_void, last - first, MADV_HUGEPAGE);
        }
    }
}

/// No huge-page hint off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge<T>(_buf: &mut [T]) {}
