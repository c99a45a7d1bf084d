//! Work shared between the calling thread and helpers spawned on the pool
//! ([`super::for_each_task`] from outside the pool).
//!
//! The items stay in the caller's frame; the helpers reach them through
//! one pointer to the caller's closure, valid for exactly as long as the
//! caller waits. Everything a helper touches after the caller may have
//! returned — the claim counter, the count of unfinished items, a panic
//! payload — lives in an `Arc` the helper co-owns.

#![allow(unsafe_code)]

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A spawned job, as the pool's `spawn` takes it.
type Job = Box<dyn FnOnce() + Send + 'static>;

/// Spins before the waiting caller parks until the last item's finisher
/// wakes it: a helper's last item usually ends within microseconds of the
/// caller's. Parking rather than yielding in a loop: a caller that kept
/// calling `sched_yield` through a helper's last long item made four
/// times the context switches and seven times the migrations of the
/// pool's own path, and 1024³ products 6–8% slower (2-vCPU Zen 4).
const SPINS_BEFORE_PARK: u32 = 1 << 12;

/// Runs `f` on every item, the caller and up to `threads - 1` helpers
/// (started with `spawn`) claiming items in turn.
pub(super) fn run<T: Send>(
    items: Vec<T>,
    f: &(dyn Fn(T) + Sync),
    threads: usize,
    spawn: impl Fn(Job),
) {
    let n = items.len();
    // One slot per item: whoever claims index `i` takes item `i` out.
    let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let one = |i: usize| {
        let item = slots[i].lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(item) = item {
            f(item);
        }
    };
    let claims = Arc::new(Claims {
        next: AtomicUsize::new(0),
        left: AtomicUsize::new(n),
        panic: Mutex::new(None),
        n,
        caller: std::thread::current(),
    });
    let one: *const (dyn Fn(usize) + Sync + '_) = &one;
    // SAFETY: only the lifetime changes (the pointer's layout is the
    // same); `Claims::work` says why the closure outlives every use.
    let job = ItemFn(unsafe {
        std::mem::transmute::<
            *const (dyn Fn(usize) + Sync + '_),
            *const (dyn Fn(usize) + Sync + 'static),
        >(one)
    });
    for _ in 1..threads.min(n) {
        let claims = Arc::clone(&claims);
        spawn(Box::new(move || claims.work(job)));
    }
    claims.work(job);
    // Every item is claimed now; wait for the helpers' last ones.
    let mut spins = 0u32;
    while claims.left.load(Ordering::Acquire) != 0 {
        if spins < SPINS_BEFORE_PARK {
            std::hint::spin_loop();
            spins += 1;
        } else {
            // Woken by whoever finishes the last item (or spuriously:
            // the loop checks again).
            std::thread::park();
        }
    }
    let payload = claims
        .panic
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    if let Some(payload) = payload {
        resume_unwind(payload);
    }
}

/// The caller's per-item closure with its lifetime erased, so that a
/// spawned (`'static`) job can carry it.
#[derive(Clone, Copy)]
struct ItemFn(*const (dyn Fn(usize) + Sync + 'static));

// SAFETY: the pointee is `Sync`, so calling it from any thread is sound;
// the pointer is only dereferenced while the caller that owns the closure
// is inside `run` (see `Claims::work`).
unsafe impl Send for ItemFn {}

/// What the caller and its helpers share.
struct Claims {
    /// The next unclaimed item.
    next: AtomicUsize,
    /// Items not yet finished; the caller returns when it reaches 0.
    left: AtomicUsize,
    /// The first panic of an item, handed to the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// How many items there are.
    n: usize,
    /// The calling thread, unparked when the last item finishes.
    caller: std::thread::Thread,
}

impl Claims {
    /// Claims and runs items until none is left.
    fn work(&self, job: ItemFn) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.n {
                return;
            }
            {
                // SAFETY: item `i` is claimed and not finished, so `left`
                // is above 0 and the caller is still inside `run`,
                // waiting, with the closure alive. It stays so until the
                // `fetch_sub` below; the reference ends with this block.
                let f = unsafe { &*job.0 };
                if let Err(payload) = catch_unwind(AssertUnwindSafe(|| f(i))) {
                    let mut first = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                    first.get_or_insert(payload);
                }
            }
            // Release: the item's writes are seen by the caller that
            // reads `left` as 0 (Acquire). The last finisher wakes the
            // caller in case it parked (a caller that has already moved
            // on just keeps a wake-up token, which `park` allows).
            if self.left.fetch_sub(1, Ordering::Release) == 1 {
                self.caller.unpark();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::run;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Every item runs exactly once, whichever thread takes it, with the
    /// spawned helpers on a real pool.
    #[test]
    fn every_item_runs_once() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for n in [2usize, 3, 7, 100] {
            let mut out = vec![0usize; n];
            let calls = AtomicUsize::new(0);
            let items: Vec<(usize, &mut usize)> = out.iter_mut().enumerate().collect();
            run(
                items,
                &|(i, o): (usize, &mut usize)| {
                    *o += i + 1;
                    calls.fetch_add(1, Ordering::Relaxed);
                },
                3,
                |job| pool.spawn(job),
            );
            assert_eq!(calls.load(Ordering::Relaxed), n);
            assert_eq!(out, (1..=n).collect::<Vec<_>>());
        }
    }

    /// Helpers that never start (a spawn that drops its job) leave the
    /// caller to do every item, and it does not wait for them.
    #[test]
    fn the_caller_alone_finishes_when_helpers_never_start() {
        let mut out = vec![0u8; 5];
        let items: Vec<&mut u8> = out.iter_mut().collect();
        run(items, &|o: &mut u8| *o = 1, 4, drop);
        assert_eq!(out, [1; 5]);
    }

    /// A panicking item reaches the caller after every other item ran.
    #[test]
    fn a_panic_reaches_the_caller_after_the_rest() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let done = AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(
                (0..16).collect(),
                &|i: usize| {
                    if i == 3 {
                        panic!("item 3");
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                },
                2,
                |job| pool.spawn(job),
            )
        }));
        let msg = caught.expect_err("the panic comes back");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"item 3"));
        assert_eq!(done.load(Ordering::Relaxed), 15);
    }
}
