//! Packing: copying blocks of `A` and `B` into the order the micro-kernel
//! reads them, zero-padded to whole panels. The only code in the GEMM
//! that knows the operands' strides.

use rayon::prelude::*;

use super::{MatRef, Scalar};

/// A scratch buffer whose slices start on a 64-byte boundary (one cache
/// line, one AVX-512 vector), so that no vector load of a packed panel
/// straddles two lines.
///
/// The storage is borrowed from a per-thread pool and returned to it on
/// drop: a packed B is up to 32 MiB, and asking the allocator for it
/// afresh on every product means the operating system maps and zeroes
/// those pages each time (one fault per 4 KiB page). The cost is memory
/// held: after a large product each thread that ran it keeps its largest
/// buffers. The pool keeps at most [`POOL_BUFFERS`] buffers per
/// thread; their contents are stale, which is harmless because packing
/// writes every element the kernel reads.
pub(crate) struct Buffer<T: Scalar> {
    data: Vec<T>,
}

const ALIGN: usize = 64;

/// Buffers kept per thread (a thread holds at most two at once: a B
/// slab and, when it also runs tasks, an A block).
pub(crate) const POOL_BUFFERS: usize = 2;

impl<T: Scalar> Buffer<T> {
    /// Room for a slice of `len` elements.
    pub(crate) fn new(len: usize) -> Self {
        let need = len + ALIGN / size_of::<T>();
        let mut data = T::with_pool(|pool| {
            // The smallest buffer that is large enough, else the largest.
            let fits = (0..pool.len())
                .filter(|&i| pool[i].len() >= need)
                .min_by_key(|&i| pool[i].len());
            let pick = fits.or_else(|| (0..pool.len()).max_by_key(|&i| pool[i].len()));
            pick.map(|i| pool.swap_remove(i)).unwrap_or_default()
        });
        if data.len() < need {
            data.resize(need, T::default());
        }
        Buffer { data }
    }

    /// An aligned slice of `len` elements (at most the `len` of `new`).
    pub(crate) fn slice(&mut self, len: usize) -> &mut [T] {
        let off = self.data.as_ptr().align_offset(ALIGN);
        let off = if off + len <= self.data.len() { off } else { 0 };
        &mut self.data[off..off + len]
    }
}

impl<T: Scalar> Drop for Buffer<T> {
    fn drop(&mut self) {
        let data = std::mem::take(&mut self.data);
        T::with_pool(|pool| {
            if pool.len() < POOL_BUFFERS {
                pool.push(data);
            }
        });
    }
}

/// Packs the A panel of rows `row0..row0 + rows` (`rows <= mr`) and
/// columns `col0..col0 + kc`: `out[p * mr + i] = A[row0 + i][col0 + p]`,
/// zero for `i >= rows`.
pub(crate) fn a_panel<T: Scalar>(
    a: MatRef<'_, T>,
    row0: usize,
    rows: usize,
    col0: usize,
    kc: usize,
    mr: usize,
    out: &mut [T],
) {
    let first = a.offset + row0 * a.row_stride + col0 * a.col_stride;
    let lines = Lines {
        first,
        across: a.row_stride,
        along: a.col_stride,
        count: rows,
    };
    panel(a.data, lines, kc, mr, out);
}

/// Packs the B block of rows `row0..row0 + kc` and columns
/// `col0..col0 + nc` as consecutive panels of `nr` columns:
/// `out[jp * kc * nr + p * nr + j] = B[row0 + p][col0 + jp * nr + j]`,
/// zero past column `nc`. Panels are packed in parallel when asked.
#[allow(clippy::too_many_arguments)]
pub(crate) fn b_block<T: Scalar>(
    b: MatRef<'_, T>,
    row0: usize,
    kc: usize,
    col0: usize,
    nc: usize,
    nr: usize,
    out: &mut [T],
    parallel: bool,
) {
    let one = |(jp, dst): (usize, &mut [T])| {
        let c0 = col0 + jp * nr;
        let lines = Lines {
            first: b.offset + row0 * b.row_stride + c0 * b.col_stride,
            across: b.col_stride,
            along: b.row_stride,
            count: nr.min(col0 + nc - c0),
        };
        panel(b.data, lines, kc, nr, dst);
    };
    if parallel && kc * nc >= 1 << 15 {
        out.par_chunks_mut(kc * nr)
            .take(nc.div_ceil(nr))
            .enumerate()
            .for_each(one);
    } else {
        out.chunks_mut(kc * nr)
            .take(nc.div_ceil(nr))
            .enumerate()
            .for_each(one);
    }
}

/// `count` lines of an operand that a panel interleaves: rows of A or
/// columns of B. Element `p` of line `i` is
/// `data[first + i * across + p * along]`.
#[derive(Clone, Copy)]
struct Lines {
    first: usize,
    across: usize,
    along: usize,
    count: usize,
}

/// The one packing routine both operands share:
/// `out[p * w + i] = line i, element p` for `p < kc`, `i < count`, and
/// zero for `count <= i < w`.
///
/// Two layouts are common enough to earn a fast path with the panel
/// width `w` fixed at compile time (so the copies unroll and the bounds
/// checks go): each step's `w` values adjacent in the source (a
/// row-major B, a transposed A) is one fixed-size copy per step; lines
/// contiguous along `p` (a row-major A, a transposed B) is a transpose,
/// done in strips of [`STRIP`] steps so each line is read as a short
/// contiguous run.
fn panel<T: Scalar>(data: &[T], l: Lines, kc: usize, w: usize, out: &mut [T]) {
    let out = &mut out[..kc * w];
    if l.count == w {
        macro_rules! fixed {
            ($($w:literal)*) => {
                match w {
                    $($w if l.across == 1 => return adjacent::<T, $w>(data, l, out),
                    $w if l.along == 1 => return transpose::<T, $w>(data, l, kc, out),)*
                    _ => {}
                }
            };
        }
        fixed!(4 6 8 12 16 32);
    } else {
        out.fill(T::default());
    }
    for p in 0..kc {
        for i in 0..l.count {
            out[p * w + i] = data[l.first + i * l.across + p * l.along];
        }
    }
}

/// Steps per strip in [`transpose`].
const STRIP: usize = 8;

/// `panel` when the `W` values of a step are adjacent in the source.
fn adjacent<T: Scalar, const W: usize>(data: &[T], l: Lines, out: &mut [T]) {
    for (p, dst) in out.chunks_exact_mut(W).enumerate() {
        let at = l.first + p * l.along;
        dst.copy_from_slice(&data[at..at + W]);
    }
}

/// `panel` when each line is contiguous along the steps.
fn transpose<T: Scalar, const W: usize>(data: &[T], l: Lines, kc: usize, out: &mut [T]) {
    if T::transpose_panel(data, l.first, l.across, kc, W, out) {
        return;
    }
    let whole = kc / STRIP * STRIP;
    let (body, tail) = out.split_at_mut(whole * W);
    for (s, dst) in body.chunks_exact_mut(STRIP * W).enumerate() {
        for i in 0..W {
            let at = l.first + i * l.across + s * STRIP;
            let src = &data[at..at + STRIP];
            for (q, &v) in src.iter().enumerate() {
                dst[q * W + i] = v;
            }
        }
    }
    for (q, dst) in tail.chunks_exact_mut(W).enumerate() {
        for (i, d) in dst.iter_mut().enumerate() {
            *d = data[l.first + i * l.across + whole + q];
        }
    }
}
