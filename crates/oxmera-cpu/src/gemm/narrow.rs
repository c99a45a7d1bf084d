//! Products whose `C` is narrower than one tile — a classifier's 10
//! logits, the weight gradient into them — computed transposed.
//!
//! A tile `NR` columns wide over `n = 10` columns of `C` does three times
//! the arithmetic that counts. `Cᵀ = Bᵀ·Aᵀ` has those 10 as *rows*,
//! against a tile's `MR` (8 or 12), so it is computed instead, into a
//! buffer, and transposed into place; each element is the same sum in the
//! same order, so the bits are the direct product's. `Cᵀ` then has only a
//! panel or two of rows, which the threaded path's row blocks cannot
//! share out, so a large one is split by `C`'s own rows: each thread
//! computes a block of them, transposed, alone.

use super::{Kernel, MatRef, Scalar, blocked};
use crate::threads;

/// Fewest multiply-adds for which a narrow product is split between
/// threads. Each multiply-add costs more here than in a full tile (tiles
/// a third to two thirds full, and a transposing copy of A), so threads
/// pay from fewer of them than `PARALLEL_MIN_FLOPS`'s cubes, but not from
/// many fewer. On a 2-vCPU Zen 4, `n = 10`, both A layouts, alternating
/// call by call (medians): 2^18.3 multiply-adds 24 µs on one thread
/// against 28 on two, 2^19.3 even (47–54 against 47–52), 2^20.3 (the
/// MLP's 10-way layer, 256 × 512) 69 against 59, 2^21.3 216 against 136.
const NARROW_PARALLEL_MIN_FLOPS: usize = 1 << 20;

/// Whether the kernel's tiles cover `C` with much less padding when it is
/// computed transposed. A `C` narrower than one tile (a layer's 10
/// logits, say: `n = 10` against `NR = 32`) fills under a third of every
/// tile; its transpose has those 10 as rows, against `MR = 12`.
pub(super) fn transposed_pads_less<T>(kernel: &Kernel<T>, m: usize, n: usize) -> bool {
    let covered = |rows: usize, cols: usize| {
        rows.next_multiple_of(kernel.mr) * cols.next_multiple_of(kernel.nr)
    };
    n < kernel.nr && 4 * covered(n, m) < 3 * covered(m, n)
}

/// `C = A·B` (`m × n`, depth `k`) for a `C` that [`transposed_pads_less`],
/// in row blocks on the pool's threads when `parallel` and large enough.
pub(super) fn gemm<T: Scalar>(
    kernel: &Kernel<T>,
    (m, n, k): (usize, usize, usize),
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    c: &mut [T],
    parallel: bool,
) {
    let per_block = narrow_block_rows(kernel, m, m * n * k, parallel);
    let task = |(i0, c_rows): (usize, &mut [T])| {
        let rows = c_rows.len() / n;
        let a_rows = MatRef {
            offset: a.offset + i0 * a.row_stride,
            ..a
        };
        transposed(kernel, (rows, n, k), a_rows, b, c_rows);
    };
    let tasks: Vec<(usize, &mut [T])> = c
        .chunks_mut(per_block * n)
        .enumerate()
        .map(|(i, rows)| (i * per_block, rows))
        .collect();
    if tasks.len() > 1 {
        threads::for_each_task(tasks, task);
    } else {
        tasks.into_iter().for_each(task);
    }
}

/// Rows of `C` per block of a narrow product of `work` multiply-adds: all
/// `m` on one thread, else one block per thread, each a whole number of
/// `Cᵀ`'s column panels.
pub(super) fn narrow_block_rows<T>(
    kernel: &Kernel<T>,
    m: usize,
    work: usize,
    parallel: bool,
) -> usize {
    let blocks = if parallel && work >= NARROW_PARALLEL_MIN_FLOPS {
        threads::num_threads().min(m / kernel.nr).max(1)
    } else {
        1
    };
    m.div_ceil(blocks).next_multiple_of(kernel.nr)
}

/// `C = A·B` on one thread, as `Cᵀ = Bᵀ·Aᵀ` into a buffer then
/// transposed into place.
fn transposed<T: Scalar>(
    kernel: &Kernel<T>,
    (m, n, k): (usize, usize, usize),
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    c: &mut [T],
) {
    let mut t = vec![T::default(); n * m];
    blocked(kernel, n, m, k, b.t(), a.t(), &mut t, false);
    for (i, row) in c.chunks_exact_mut(n).enumerate() {
        for (j, d) in row.iter_mut().enumerate() {
            *d = t[j * m + i];
        }
    }
}
