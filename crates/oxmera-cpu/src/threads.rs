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

/// Runs `f` where the kernels' parallel iterators use the chosen pool.
pub(crate) fn run<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match current_pool() {
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

/// Elements per parallel task in memory-bound loops: large enough that a
/// task's work (tens of microseconds) dwarfs the cost of handing it out,
/// small enough that several tasks per thread balance the load.
pub(crate) const CHUNK: usize = 1 << 15;

/// Whether a loop over `n` elements is worth splitting across threads.
pub(crate) fn worth_splitting(n: usize) -> bool {
    n >= 2 * CHUNK
}
