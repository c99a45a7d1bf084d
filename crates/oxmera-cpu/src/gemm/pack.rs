//! Packing: copying blocks of `A` and `B` into the order the micro-kernel
//! reads them, zero-padded to whole panels. The only code in the GEMM
//! that knows the operands' strides.

use rayon::prelude::*;

use super::{MatRef, Scalar};

/// A scratch buffer whose slices start on a 64-byte boundary (one cache
/// line, one AVX-512 vector), so that no vector load of a packed panel
/// straddles two lines.
pub(crate) struct Buffer<T> {
    data: Vec<T>,
}

const ALIGN: usize = 64;

impl<T: Scalar> Buffer<T> {
    /// Room for a slice of `len` elements.
    pub(crate) fn new(len: usize) -> Self {
        Buffer {
            data: vec![T::default(); len + ALIGN / size_of::<T>()],
        }
    }

    /// An aligned slice of `len` elements (at most the `len` of `new`).
    pub(crate) fn slice(&mut self, len: usize) -> &mut [T] {
        let off = self.data.as_ptr().align_offset(ALIGN);
        let off = if off + len <= self.data.len() { off } else { 0 };
        &mut self.data[off..off + len]
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
    let at = |i: usize, p: usize| a.offset + (row0 + i) * a.row_stride + (col0 + p) * a.col_stride;
    if rows < mr {
        out[..kc * mr].fill(T::default());
    }
    if a.row_stride == 1 {
        // Column-major A (a transposed view): each step's MR values are
        // adjacent in the source.
        for p in 0..kc {
            let src = &a.data[at(0, p)..at(0, p) + rows];
            out[p * mr..p * mr + rows].copy_from_slice(src);
        }
    } else if a.col_stride == 1 {
        for i in 0..rows {
            let src = &a.data[at(i, 0)..at(i, 0) + kc];
            for (p, &v) in src.iter().enumerate() {
                out[p * mr + i] = v;
            }
        }
    } else {
        for p in 0..kc {
            for i in 0..rows {
                out[p * mr + i] = a.data[at(i, p)];
            }
        }
    }
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
    let panel = |(jp, dst): (usize, &mut [T])| {
        let c0 = col0 + jp * nr;
        let cols = nr.min(col0 + nc - c0);
        let at =
            |p: usize, j: usize| b.offset + (row0 + p) * b.row_stride + (c0 + j) * b.col_stride;
        if cols < nr {
            dst.fill(T::default());
        }
        if b.col_stride == 1 {
            for p in 0..kc {
                dst[p * nr..p * nr + cols].copy_from_slice(&b.data[at(p, 0)..at(p, 0) + cols]);
            }
        } else if b.row_stride == 1 {
            // Column-major B: walk each source column contiguously.
            for j in 0..cols {
                let src = &b.data[at(0, j)..at(0, j) + kc];
                for (p, &v) in src.iter().enumerate() {
                    dst[p * nr + j] = v;
                }
            }
        } else {
            for p in 0..kc {
                for j in 0..cols {
                    dst[p * nr + j] = b.data[at(p, j)];
                }
            }
        }
    };
    if parallel && kc * nc >= 1 << 15 {
        out.par_chunks_mut(kc * nr)
            .take(nc.div_ceil(nr))
            .enumerate()
            .for_each(panel);
    } else {
        out.chunks_mut(kc * nr)
            .take(nc.div_ceil(nr))
            .enumerate()
            .for_each(panel);
    }
}
