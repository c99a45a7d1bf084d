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
//! Only Linux has the call; elsewhere [`advise_huge`] does nothing. The
//! declaration and the constant come from the `libc` crate (a Linux-only
//! dependency), whose bindings are generated and checked against each
//! platform's headers, rather than a hand-written `extern` block whose
//! signature or advice number nothing would check.

#![allow(unsafe_code)]

/// Below this many bytes the faults are too few to matter.
const MIN_BYTES: usize = 4 << 20;

/// Hints that the 2 MiB-aligned pages inside `buf` be backed by huge
/// pages. Call before the first write to `buf`.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge<T>(buf: &mut [T]) {
    const HUGE: usize = 2 << 20;
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
            libc::madvise(
                first as *mut libc::c_void,
                last - first,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

/// No huge-page hint off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge<T>(_buf: &mut [T]) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice is a hint about the mapping: whatever the kernel does
    /// with it, the buffer reads back exactly as it was written, both for a
    /// buffer large enough to be advised and one below the threshold.
    #[test]
    fn advice_never_changes_contents() {
        for len in [MIN_BYTES / 8 - 3, 3 * MIN_BYTES / 8 + 5] {
            let mut buf: Vec<u64> = (0..len as u64).collect();
            advise_huge(&mut buf);
            assert!(buf.iter().enumerate().all(|(i, &x)| x == i as u64));
            buf.iter_mut().for_each(|x| *x = !*x);
            assert!(buf.iter().enumerate().all(|(i, &x)| x == !(i as u64)));
        }
    }
}
