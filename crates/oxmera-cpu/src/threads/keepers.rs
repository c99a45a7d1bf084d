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
//! Nested `on_pool` calls start no keepers of their own.
//!
//! [`on_pool`]: super::on_pool

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a keeper spins without finding work before it leaves: far
/// longer than the serial stretches between a step's parallel ops (tens
/// of microseconds), short enough that a keeper holding up the job below
/// it on its thread's stack (see the module docs) costs little.
const IDLE_LIMIT: Duration = Duration::from_micros(500);

thread_local! {
    /// Whether this thread is running an `on_pool` closure with keepers.
    static KEPT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on this worker while every other worker of its pool keeps
/// taking work instead of sleeping; returns once `f` has returned and
/// every keeper has left.
pub(super) fn around<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    // One keeper per other worker, but never more spinning threads than
    // the machine has CPUs: a pool larger than that would have keepers
    // take turns with the closure's own thread.
    let keepers = rayon::current_num_threads().min(cpus()) - 1;
    if keepers == 0 || KEPT.with(Cell::get) {
        return f();
    }
    let owner = rayon::current_thread_index();
    let done = AtomicBool::new(false);
    rayon::scope(|s| {
        for _ in 0..keepers {
            s.spawn(|_| keep(&done, owner));
        }
        // Set `done` and clear the mark even if `f` panics, so the
        // keepers leave and the scope can hand the panic on.
        let _finish = Finish(&done);
        KEPT.with(|k| k.set(true));
        f()
    })
}

/// The CPUs this process may run on (at least 1), read once.
fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Marks the closure finished when dropped.
struct Finish<'a>(&'a AtomicBool);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        KEPT.with(|k| k.set(false));
        self.0.store(true, Ordering::Release);
    }
}

/// One keeper: runs the pool's pending jobs until `done`, or until it has
/// found none for [`IDLE_LIMIT`]. On the closure's own thread (which
/// reaches a keeper only once it has nothing else to do) it leaves at
/// once.
fn keep(done: &AtomicBool, owner: Option<usize>) {
    if rayon::current_thread_index() == owner {
        return;
    }
    let mut idle_since: Option<Instant> = None;
    while !done.load(Ordering::Acquire) {
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
