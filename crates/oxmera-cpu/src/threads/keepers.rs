//! Keeping the pool's other workers awake while [`on_pool`]'s closure
//! runs.
//!
//! A rayon worker that finds no work yields a few dozen times and then
//! sleeps; the next op that splits its work wakes it again, through the
//! operating system — on a virtual machine, an interrupt to a halted
//! virtual CPU. A training step alternates parallel ops with short serial
//! stretches (the autograd bookkeeping, ops on a `[256, 10]` tensor), long
//! enough for the other worker to fall asleep between most of them: an
//! MLP step (784-512-512-10, batch 256) made about 8 futex calls and 270
//! `sched_yield`s on a 2-vCPU Zen 4, and an empty `on_pool` round trip,
//! two such wake-ups, took 17 µs there.
//!
//! So for the duration of the closure, every other worker runs a
//! *keeper*: a job that takes the pool's pending work itself
//! (`rayon::yield_now`) and spins between jobs rather than sleeping. The
//! step's ops are then picked up at once. Alternating steps with and
//! without keepers in one process, the step's median fell by 70–210 µs
//! (about 2%) in each of seven runs; futex calls per step 8 → 3.6.
//!
//! A keeper leaves when the closure returns, and also after
//! [`IDLE_LIMIT`] without work: a keeper can be started by a thread that
//! is itself waiting inside a job (rayon runs other jobs while a `join`
//! waits), and must then not hold that job up for longer than a moment.
//! The closure's next parallel op starts them again ([`rearm`]),
//! so a long closure — `oxmera train` runs a whole training in one —
//! keeps them across its serial stretches (data, logging, checkpoints).
//! Nested `on_pool` calls start no keepers of their own.
//!
//! [`on_pool`]: super::on_pool

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long a keeper spins without finding work before it leaves: far
/// longer than the serial stretches between a step's parallel ops (tens
/// of microseconds), short enough that a keeper holding up the job below
/// it on its thread's stack (see the module docs) costs little.
const IDLE_LIMIT: Duration = Duration::from_micros(500);

/// What an `on_pool` closure shares with its keepers.
struct Keeping {
    /// Set when the closure has returned (or panicked).
    done: AtomicBool,
    /// Keepers started and not yet gone.
    live: AtomicUsize,
    /// How many keepers the closure wants.
    wanted: usize,
    /// The closure's worker, which a keeper job it picks up itself leaves.
    owner: Option<usize>,
    /// The chosen pool the keepers run on ([`super::pool_id`]): after a
    /// `set_num_threads` inside the closure the ops run on another, and
    /// keepers on this one would only take CPU time from them.
    pool: usize,
}

thread_local! {
    /// The keeping of the `on_pool` closure this thread runs, if any.
    static KEPT: RefCell<Option<Arc<Keeping>>> = const { RefCell::new(None) };
}

/// Runs `f` on this worker of the chosen pool (`pool`, see
/// [`super::pool_id`]) while every other worker of it keeps taking work
/// instead of sleeping; the keepers leave once `f` returns.
pub(super) fn around<R: Send>(pool: usize, f: impl FnOnce() -> R + Send) -> R {
    // One keeper per other worker, but never more spinning threads than
    // the machine has CPUs: a pool larger than that would have keepers
    // take turns with the closure's own thread.
    let wanted = rayon::current_num_threads().min(cpus()) - 1;
    if wanted == 0 || KEPT.with(|k| k.borrow().is_some()) {
        return f();
    }
    let keeping = Arc::new(Keeping {
        done: AtomicBool::new(false),
        live: AtomicUsize::new(0),
        wanted,
        owner: rayon::current_thread_index(),
        pool,
    });
    KEPT.with(|k| *k.borrow_mut() = Some(Arc::clone(&keeping)));
    // Marks `f` finished even if it panics, so the keepers leave.
    let _finish = Finish;
    start(&keeping);
    f()
}

/// Starts the keepers `keeping` wants (on the pool of this thread).
fn start(keeping: &Arc<Keeping>) {
    for _ in 0..keeping.wanted {
        keeping.live.fetch_add(1, Ordering::AcqRel);
        let keeping = Arc::clone(keeping);
        rayon::spawn(move || {
            keep(&keeping);
            keeping.live.fetch_sub(1, Ordering::AcqRel);
        });
    }
}

/// Starts the keepers again where this thread runs an `on_pool` closure
/// whose keepers have all left (after [`IDLE_LIMIT`] without work) and
/// whose ops still run on the keepers' pool (`pool`, see
/// [`super::pool_id`]). Called by the parallel entry points before they
/// hand out work; a thread-local read and an atomic load otherwise.
pub(super) fn rearm(pool: usize) {
    KEPT.with(|k| {
        if let Some(keeping) = &*k.borrow()
            && keeping.pool == pool
            && keeping.live.load(Ordering::Acquire) == 0
        {
            start(keeping);
        }
    });
}

/// The CPUs this process may run on (at least 1), read once.
fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Marks this thread's closure finished when dropped.
struct Finish;

impl Drop for Finish {
    fn drop(&mut self) {
        if let Some(keeping) = KEPT.with(|k| k.borrow_mut().take()) {
            keeping.done.store(true, Ordering::Release);
        }
    }
}

/// One keeper: runs the pool's pending jobs until the closure is done,
/// or until it has found none for [`IDLE_LIMIT`]. On the closure's own
/// thread (which reaches a keeper only once it has nothing else to do) it
/// leaves at once.
fn keep(keeping: &Keeping) {
    if rayon::current_thread_index() == keeping.owner {
        return;
    }
    let mut idle_since: Option<Instant> = None;
    while !keeping.done.load(Ordering::Acquire) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_since = None;
            continue;
        }
        let now = Instant::now();
        if now.duration_since(*idle_since.get_or_insert(now)) > IDLE_LIMIT {
            return;
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job on the current pool that runs until the gate is dropped —
    /// also when an assertion fails first, so a failing test does not
    /// leave a worker spinning for the rest of the run.
    struct Gate(Arc<AtomicBool>);

    impl Gate {
        fn hold() -> Gate {
            let open = Arc::new(AtomicBool::new(false));
            let seen = Arc::clone(&open);
            rayon::spawn(move || {
                while !seen.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            });
            Gate(open)
        }
    }

    impl Drop for Gate {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }

    /// Keepers that left after idling start again at the closure's next
    /// parallel op, and every keeper leaves once the closure returns. On a
    /// pool of its own, so that its second worker is free to run them.
    #[test]
    fn keepers_leave_when_idle_start_again_and_leave_at_the_end() {
        if cpus() < 2 {
            return;
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let wait_for = |keeping: &Keeping, live: usize| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while keeping.live.load(Ordering::Acquire) != live {
                assert!(Instant::now() < deadline, "keepers never reached {live}");
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        let keeping = pool.install(|| {
            around(0, || {
                let keeping = KEPT.with(|k| k.borrow().clone()).expect("keepers started");
                assert_eq!(keeping.wanted, 1);
                // Nothing to do for far longer than IDLE_LIMIT: they leave.
                wait_for(&keeping, 0);
                // Not for ops on another pool; for the keepers' own, yes.
                rearm(keeping.pool.wrapping_add(1));
                assert_eq!(keeping.live.load(Ordering::Acquire), 0);
                // A job that runs until released holds the other worker,
                // so the keeper `rearm` starts waits behind it (counted
                // live from its spawn) and cannot idle out while the
                // checks below look at it, however long this thread is
                // descheduled under a loaded test run (longer than
                // IDLE_LIMIT made this test fail when the keeper ran).
                let gate = Gate::hold();
                rearm(keeping.pool);
                assert_eq!(keeping.live.load(Ordering::Acquire), 1);
                // A nested call starts none of its own.
                around(0, || assert_eq!(keeping.live.load(Ordering::Acquire), 1));
                drop(gate);
                keeping
            })
        });
        assert!(keeping.done.load(Ordering::Acquire));
        wait_for(&keeping, 0);
        assert!(pool.install(|| KEPT.with(|k| k.borrow().is_none())));
    }
}
