//! How many threads the kernels use, and how work is handed to them.
//!
//! By default the kernels run on rayon's global pool, whose size follows
//! `RAYON_NUM_THREADS` (or the number of logical CPUs). [`set_num_threads`]
//! swaps in a pool of a chosen size for the whole process. Every parallel
//! kernel enters through [`run`], so one switch governs them all.

use std::sync::{Arc, RwLock};

use oxmera_core::{Error, Result};
use rayon::prelude::*;

static POOL: RwLock<Option<Arc<rayon::ThreadPool>>> = RwLock::new(None);

/// Makes the CPU backend use `n` threads from now on; `0` returns to the
/// default (rayon's global pool, sized by `RAYON_NUM_THREADS`).
///
/// Errors: [`Error::InvalidArgument`] if the operating system refuses to
/// start the threads.
///
/// ```
/// oxmera_cpu::set_num_threads(1)?;
/// assert_eq!(oxmera_cpu::num_threads(), 1);
/// oxmera_cpu::set_num_threads(0)?;
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn set_num_threads(n: usize) -> Result<()> {
    let pool = if n == 0 {
        None
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("oxmera-cpu-{i}"))
            .build()
            .map_err(|e| Error::invalid("set_num_threads", "n", e.to_string()))?;
        Some(Arc::new(pool))
    };
    *POOL.write().unwrap_or_else(|e| e.into_inner()) = pool;
    Ok(())
}

/// The number of threads the kernels use now.
pub fn num_threads() -> usize {
    match current_pool() {
        Some(p) => p.current_num_threads(),
        None => rayon::current_num_threads(),
    }
}

fn current_pool() -> Option<Arc<rayon::ThreadPool>> {
    POOL.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Which pool `pool` (from [`current_pool`]) is, as a number: its
/// address, 0 for rayon's global pool. Only compared, never followed.
fn pool_id(pool: Option<&Arc<rayon::ThreadPool>>) -> usize {
    pool.map_or(0, |p| Arc::as_ptr(p) as usize)
}

/// Runs `f` — a training loop, a whole step, any stretch of many ops —
/// on one of the backend's own worker threads, and returns its result.
///
/// Why it matters: an op called from a thread outside the pool (a
/// program's `main`, say) hands its parallel work to the pool, and most
/// ops then sleep until the workers are done, so such an op costs a
/// wake-up of a worker and then a wake-up of the caller, each a trip
/// through the operating system's scheduler, both on the critical path.
/// (Small matrix products share their work with the caller instead —
/// see `for_each_task` — but still wake a worker.) Called from a worker,
/// an op splits its work in place: the worker starts on its own half at
/// once, the other half goes to whichever thread takes it first
/// (the worker itself, if the others are still waking), and nobody
/// sleeps. On a 2-vCPU AMD EPYC (Zen 4) the character transformer's
/// training step took 105–106 ms this way against 114–126 ms called from
/// `main`, with a fifth as many context switches (`docs/transformer.md`).
/// Results are the same to the bit: the work is cut into the same pieces
/// either way.
///
/// While `f` runs, the pool's other workers do not fall asleep between
/// ops: each spins, taking the ops' work as it appears, until `f` returns
/// or it has found nothing to do for half a millisecond, and starts again
/// at `f`'s next parallel op (see `threads::keepers`; an MLP step's
/// median about 2% lower on the Zen 4). So `f` keeps the machine's CPUs
/// busy while it runs, as OpenMP runtimes do after a parallel region —
/// never more threads than there are CPUs.
///
/// `oxmera train`, the transformer examples and the bench run their
/// steps through it. Nested calls are free (a worker runs `f` directly),
/// and [`set_num_threads`] inside `f` is allowed: later ops use the new
/// pool, entered from this one. Thread-local state is the worker's, not
/// the caller's: a `no_grad` guard held by the caller does not reach into
/// `f` — take it inside.
///
/// ```
/// use oxmera_cpu::on_pool;
/// let sum = on_pool(|| (1..=10).sum::<i32>());
/// assert_eq!(sum, 55);
/// ```
pub fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match current_pool() {
        Some(p) => p.install(|| keepers::around(pool_id(Some(&p)), f)),
        // The global pool has no `install`; a `join` entered from outside
        // it runs both closures on its workers, `f` first.
        None if rayon::current_thread_index().is_none() => {
            rayon::join(|| keepers::around(pool_id(None), f), || ()).0
        }
        None => f(),
    }
}

/// Runs `f` where the kernels' parallel iterators use the chosen pool.
pub(crate) fn run<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let pool = current_pool();
    keepers::rearm(pool_id(pool.as_ref()));
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// Calls `f((i, chunk))` for each `size`-long chunk of `out` (the last
/// may be shorter), on the chosen pool's threads when `parallel`, else in
/// order on this thread. The chunks are the same either way, so a result
/// never depends on which.
pub(crate) fn for_each_chunk<T: Send>(
    out: &mut [T],
    size: usize,
    parallel: bool,
    f: impl Fn((usize, &mut [T])) + Sync + Send,
) {
    if parallel {
        run(|| out.par_chunks_mut(size).enumerate().for_each(f));
    } else {
        out.chunks_mut(size).enumerate().for_each(f);
    }
}

/// Calls `f(item)` once for every item, on the chosen pool's threads.
///
/// Called from one of the pool's workers it is a parallel iterator: the
/// worker starts at once and idle workers steal the rest. Called from
/// outside the pool — a program's `main`, a test — the calling thread
/// works too, where a parallel iterator would hand everything to the pool
/// and put the caller to sleep until a worker wakes it: helpers are
/// spawned on the pool for the other threads, every thread (the caller
/// included) claims the next unclaimed item, and the caller returns once
/// every claimed item is finished. A helper the scheduler starts late
/// finds nothing left and returns; the caller never waits for it.
///
/// What it is for: short work called from `main`. On a 2-vCPU Zen 4 a
/// 128³ product called from `main` took about one thread's time through a
/// parallel iterator (the caller's own sleep and wake-up cost as much as
/// the second thread saved) and 159 GFLOP/s this way, against 114
/// (docs/bench.md). Long work gains nothing from it (and measured 6–10%
/// slower at 512³–1024³ from `main` while the waiting caller yielded in
/// a loop; it parks now), so the GEMM uses it only up to
/// `gemm::SHARED_MAX_FLOPS`.
///
/// Which thread runs which item differs from run to run; what an item
/// computes must not depend on it (each writes its own part of the
/// result). A panic in `f` reaches the caller once every claimed item
/// has finished.
pub(crate) fn for_each_task<T: Send>(items: Vec<T>, f: impl Fn(T) + Sync + Send) {
    if items.len() <= 1 {
        items.into_iter().for_each(f);
        return;
    }
    match current_pool() {
        Some(p) if p.current_thread_index().is_none() => {
            shared::run(items, &f, p.current_num_threads(), |job| p.spawn(job))
        }
        None if rayon::current_thread_index().is_none() => {
            shared::run(items, &f, rayon::current_num_threads(), rayon::spawn)
        }
        // On a worker: `run` enters the chosen pool (a no-op from its own).
        _ => run(|| items.into_par_iter().for_each(f)),
    }
}

/// Elements per parallel task in memory-bound loops: large enough that a
/// task's work (tens of microseconds) dwarfs the cost of handing it out,
/// small enough that several tasks per thread balance the load.
pub(crate) const CHUNK: usize = 1 << 15;

/// Whether a loop over `n` elements is worth splitting across threads.
pub(crate) fn worth_splitting(n: usize) -> bool {
    n >= 2 * CHUNK
}

mod keepers;
mod shared;

#[cfg(test)]
mod tests {
    use super::on_pool;

    /// `f` runs on a worker of the pool (the global one or a chosen one),
    /// nested calls run in place, and the result comes back.
    #[test]
    fn on_pool_runs_on_a_worker_and_nests() {
        assert!(on_pool(|| rayon::current_thread_index().is_some()));
        let nested = on_pool(|| {
            let outer = std::thread::current().id();
            on_pool(|| (std::thread::current().id() == outer, 7))
        });
        assert_eq!(nested, (true, 7));
    }
}
