//! GEMM — general matrix multiplication, `C = A · B` — from first
//! principles.
//!
//! # Why the naive loop is slow
//!
//! `C[i][j] += A[i][p] * B[p][j]` over three loops does `2·m·n·k` flops
//! and, written plainly, loads two numbers from memory for every
//! multiply-add. A core can do 32 `f32` multiply-adds per cycle with
//! AVX-512 (two 16-wide FMA units) but load only about two vectors per
//! cycle from L1, and far less from L2, L3 or DRAM. So the whole game is
//! **reuse**: bring a number close to the arithmetic once and use it many
//! times before it is evicted. Every level of the design below serves
//! that, from registers out to the last-level cache.
//!
//! # Level 1 — the micro-kernel (registers)
//!
//! The innermost routine computes a small `MR × NR` tile of `C` (12 × 32
//! for AVX-512 — 8 × 32 on AMD Zen 4, see `tile` —, 6 × 16 for AVX2, 8 × 8
//! for NEON, 4 × 8 portable) and keeps
//! the whole tile in vector registers for the entire inner product. Per
//! step `p` of that product it loads one row of `NR` values of `B` (two
//! AVX-512 vectors) and `MR` single values of `A`, broadcasting each to a
//! full vector, and does `MR × NR` multiply-adds: an *outer product* added
//! to the tile. With 12 × 32, each step does 24 vector FMAs for 2 vector
//! loads and 12 broadcasts: arithmetic, not memory, is now the limit. The
//! tile goes to `C` in memory only once per `KC` steps: stored over it
//! after the first depth block, added to it after the others. (Storing
//! first means `C` is never read before it is written, which matters
//! more than it seems: fresh zeroed memory read before it is written is
//! mapped to the shared zero page first, and the write then faults again
//! and flushes the other cores' TLBs.) The kernels are in `x86`, `neon`
//! and `portable`; they are the only code here with `unsafe`
//! (intrinsics), each behind a run-time feature check.
//!
//! # Level 2 — packing (contiguous, aligned streams)
//!
//! The kernel wants, for step `p`, the `MR` values `A[i..i+MR][p]` and the
//! `NR` values `B[p][j..j+NR]` adjacent in memory. In the operands they
//! are not (a column of a row-major `A` is strided; a transposed `B` has
//! strided rows; views may have any strides). So slices of `A` and `B`
//! are first copied ("packed") into buffers in exactly the order the
//! kernel reads them: an *A panel* is `MR` rows × `KC` columns stored
//! column by column, a *B panel* is `KC` rows × `NR` columns stored row by
//! row, zero-padded at the edges so the kernel never needs a remainder
//! loop. Packing is also how strided, transposed and broadcast operands
//! are handled at no extra cost: only the packing routines know strides.
//!
//! Packing is not free, though: a panel of A is copied once and then
//! read once per B panel, `n / NR` times, so for a narrow `C` the copy is
//! a large share of the work (a transformer's `[2048, 128] · [128, 128]`:
//! the copy of A is 1/4 of the kernel's four reads of each panel). The
//! `f32` x86 kernels therefore also read an operand *in place* where its
//! layout allows — A with unit column stride (the kernel walks `MR` rows
//! side by side) or unit row stride (each step's `MR` values adjacent), B
//! with unit column stride (each step's `NR` values adjacent) — when the
//! other dimension of `C` is small (`IN_PLACE_A_MAX_N`,
//! `IN_PLACE_B_MAX_M`) and the lines it reads spread over the L1's sets
//! (`spreads_over_l1`) — or, for B, A has only one or two panels
//! (`FEW_PANELS`), too few to reuse B's lines anyway. Only an edge
//! panel, fewer rows or columns than a tile, is still packed
//! (zero-padded). The kernel calls and their order are the same, so the
//! bits are too.
//!
//! # Level 3 — cache blocking (L1, L2, L3)
//!
//! The loops around the kernel choose what stays in which cache:
//!
//! ```text
//! pack all of B (up to 32 MiB at a time)    in parallel, once (L3)
//! for each row block of C (in parallel):    whole MR-row panels, one task
//!   for pc in 0..k step KC:                 depth block
//!     pack A[block rows, pc..+KC]           the task's A panels (L2)
//!     for jc in 0..n step NC:               B block KC × NC (L2)
//!       for ir in block step MR:            one A panel, KC·MR values (L1)
//!         for jr in jc..+NC step NR:
//!           kernel(A panel, B panel jr) → C[ir..+MR, jr..+NR]
//! ```
//!
//! The A panel (12 × 512 floats = 24 KiB) stays in L1 while the kernel
//! sweeps every B panel of the block; the B block (half of one core's L2:
//! 512 × 256 floats = 512 KiB where L2 is 1 MiB) stays in L2 for the
//! sweeps of all the task's A panels; `KC` is
//! large enough that each trip of `C` through memory is amortized over
//! `KC` outer products. Packing is a transpose or a fixed-size copy per
//! step (see `pack`), a few percent of the time from 512 up. A product on
//! one thread (a small one, or one image of a convolution batch whose
//! images go to threads whole) shares B with no one, so it packs each
//! `KC × NC` block of B inside the depth loop, just before the sweeps
//! that read it, and finds it still in L2; packing all of B first would
//! have left most of it in L3 by then.
//!
//! # Level 4 — threads
//!
//! Threads split `C` by rows: each task owns a block of whole `MR`-row
//! panels, so tasks write disjoint slices of `C` (plain safe Rust), pack
//! their own A and share the read-only packed B. After B is packed, tasks
//! never wait for one another: there is one join, at the end. There are
//! several tasks per thread, of even size, so that a thread slowed by
//! other work on the machine (a shared 2-vCPU machine loses a sixth of
//! its time to the host under load) leaves its tail to the other.
//! Packing buffers come from a per-thread pool, so a product allocates
//! nothing once the pool is warm.
//!
//! A `C` narrower than a tile (a classifier's 10 logits) is computed
//! transposed and split by its own rows instead (`narrow`).
//!
//! # Precision
//!
//! Each element of `C` is a sum of `k` products accumulated in the
//! operands' precision, in blocks of `KC` (with FMA where the kernel has
//! it); its error is bounded like any recursive sum's, by about
//! `KC + k / KC` roundings.

mod cache;
mod narrow;
mod pack;
mod portable;
mod scalar;
pub mod tile;

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "aarch64")]
mod neon;

use rayon::prelude::*;

use crate::Isa;
use crate::threads;
#[cfg(test)]
use narrow::narrow_block_rows;
use narrow::transposed_pads_less;
pub use scalar::Scalar;
pub use tile::{Tile, avx512_f32_kernel};

/// A read-only strided matrix view: element `(i, j)` is
/// `data[offset + i * row_stride + j * col_stride]`.
#[derive(Debug, Clone, Copy)]
pub struct MatRef<'a, T> {
    /// The storage the view reads.
    pub data: &'a [T],
    /// Position of element `(0, 0)`.
    pub offset: usize,
    /// Step between rows.
    pub row_stride: usize,
    /// Step between columns.
    pub col_stride: usize,
}

impl<T> Kernel<T> {
    /// Rows of the tile of `C` the kernel keeps in registers.
    pub fn mr(&self) -> usize {
        self.mr
    }

    /// Columns of that tile.
    pub fn nr(&self) -> usize {
        self.nr
    }
}

impl<'a, T> MatRef<'a, T> {
    /// A row-major matrix with `cols` columns.
    pub fn row_major(data: &'a [T], cols: usize) -> Self {
        MatRef {
            data,
            offset: 0,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The same matrix transposed (a view; nothing moves).
    pub fn t(self) -> Self {
        MatRef {
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }
}

/// A micro-kernel: `c[i * ldc + j] = Σ_p a[p * mr + i] * b[p * nr + j]`
/// for `i < mr`, `j < nr`, `p < kc`, with `a` an A panel and `b` a B
/// panel — added to `c`'s previous values when `add`, stored over them
/// otherwise. `c` must hold at least `(mr - 1) * ldc + nr` elements.
pub(crate) type KernelFn<T> = fn(kc: usize, a: &[T], b: &[T], c: &mut [T], ldc: usize, add: bool);

/// An A panel as a micro-kernel reads it: element `(p, i)` — step `p`
/// of the inner product, row `i` of the tile — is
/// `data[p * step + i * line]`. The kernels take two layouts: unit
/// `line` (a packed panel, `step = MR`; or a column-major A read in
/// place) and unit `step` (the rows of a row-major A read in place).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Panel<'a, T> {
    pub(crate) data: &'a [T],
    pub(crate) step: usize,
    pub(crate) line: usize,
}

impl<'a, T> Panel<'a, T> {
    /// A packed panel of `mr` rows.
    pub(crate) fn packed(data: &'a [T], mr: usize) -> Self {
        Panel {
            data,
            step: mr,
            line: 1,
        }
    }
}

/// A micro-kernel that reads A where it lies: as [`KernelFn`], with
/// `a[p * mr + i]` replaced by the [`Panel`]'s element `(p, i)` and
/// `b[p * nr + j]` by `b.0[p * b.1 + j]`.
pub(crate) type DirectFn<T> =
    fn(kc: usize, a: Panel<'_, T>, b: (&[T], usize), c: &mut [T], ldc: usize, add: bool);

/// A micro-kernel with its tile shape (built only by this crate; see
/// [`Scalar`]).
#[derive(Clone, Copy)]
pub struct Kernel<T> {
    pub(crate) mr: usize,
    pub(crate) nr: usize,
    pub(crate) run: KernelFn<T>,
    /// The same kernel reading A in place, where it has such a form.
    pub(crate) direct: Option<DirectFn<T>>,
}

impl<T> Kernel<T> {
    /// One tile: the direct form where the kernel has one (packed panels
    /// are one of its layouts), else the packed kernel on packed panels.
    /// `b` is a B panel and the distance between its rows.
    fn tile(
        &self,
        kc: usize,
        a: Panel<'_, T>,
        b: (&[T], usize),
        c: &mut [T],
        ldc: usize,
        add: bool,
    ) {
        match self.direct {
            Some(direct) => direct(kc, a, b, c, ldc, add),
            None => {
                debug_assert!(
                    a.step == self.mr && a.line == 1 && b.1 == self.nr,
                    "packed panels"
                );
                (self.run)(kc, a.data, b.0, c, ldc, add)
            }
        }
    }
}

/// Bytes of one row of A in a depth block: the block is `KC` = 2 KiB /
/// element size outer products deep (512 `f32`, 256 `f64`) per trip of a
/// `C` tile, so an A panel is `MR` × 2 KiB — 24 KiB for 12 rows, half of
/// a Zen 5 or recent Intel core's 48 KiB L1, 16 KiB for Zen 4's 8 rows in
/// its 32 KiB. Deeper blocks mean fewer trips of `C` through the caches
/// (a 1024³ product stores and reloads each tile of `C` once, not three
/// times) and fewer, larger pieces of B to pack. It was 256 `f32`. On a
/// 2-vCPU AMD EPYC Zen 5, processes taking turns (`gemm_duel`, with the
/// `gemm` crate in each as the yardstick), 512-deep blocks ran 512³ at
/// 0.83–0.92× the `gemm` crate against 0.79–0.86× for 256-deep (four
/// pairs), 1024³ at 1.00–1.05× against 0.94–1.04× (five pairs), and the
/// bench's `matmul 1024` row at 0.98–1.15× against 0.83–0.96× (four
/// pairs); the MLP step and the convolutions moved within the host's
/// noise. In the whole bench's medians that is parity with the `gemm`
/// crate at 1024 (1.00× and 0.95× in two quiet sets, from 0.93–0.99×)
/// and no change at 512. On a Zen 4, 384 and 512 had measured within 2%
/// of 256 (docs/bench.md).
const KC_BYTES: usize = 2048;

/// `KC` for elements of `T` (see [`KC_BYTES`]).
fn depth_block<T>() -> usize {
    KC_BYTES / size_of::<T>()
}

/// Bytes of packed B per block: half of one core's L2, leaving the other
/// half to the task's A panels and the lines of `C`. A block the size of
/// the whole L2 is swept cyclically by every A panel and so, evicted in
/// the order it is read, comes from L3 each time: on a Zen 5 core (1 MiB
/// L2) at 1024 and 2048 a 1 MiB block ran 3–5% slower than a 512 KiB one
/// (`gemm_duel`, three alternating runs each).
fn b_block_bytes() -> usize {
    cache::l2_bytes() / 2
}
/// Bytes of B packed in one go (larger products pack column slabs of
/// this size in turn).
const PACKED_B_BYTES: usize = 32 << 20;
/// Row blocks per thread: several, so that a thread slowed by other work
/// on the machine leaves its share to the others.
const TASKS_PER_THREAD: usize = 4;
/// Fewest panels in a task before a thread gets more than one.
const MIN_TASK_PANELS: usize = 8;
/// The most `MR`-row panels in one task's row block.
const MC_PANELS_MAX: usize = 16;
/// Below this many multiply-adds (128³; twice as many where B is packed),
/// one thread does the whole product: waking a second thread costs more
/// than it saves. It was
/// 2^22 (about 160³) while small products packed B in a fork-join of its
/// own before the one that computes (a 128³ product ran at 92 GFLOP/s on
/// one thread and 69 on two); reading both operands in place, a 128³
/// product takes 38.9 µs on one thread of a Zen 4 and 28.9–29.8 µs on
/// two (medians of 2000), 112³ 32.3 against 24.8–29.1 µs, but 96³ 17–18
/// against 34–35 µs.
pub(crate) const PARALLEL_MIN_FLOPS: usize = 1 << 21;
/// Up to this many multiply-adds (2^23: 203³) a parallel product called
/// from outside the pool shares its row blocks with the calling thread
/// ([`threads::for_each_task`]) rather than handing them all to the pool
/// and sleeping: a 128³ product from `main` went from 114 to 159 GFLOP/s
/// on a 2-vCPU Zen 4. Larger ones keep the pool's parallel iterator:
/// the shared path gains them nothing, and measured 6–10% slower at
/// 512³–1024³ while its caller yielded in a loop as it waited (parking
/// instead brought 1024³ within this host's noise, not a clear win).
const SHARED_MAX_FLOPS: usize = 1 << 23;
/// The widest `C` for which A is read in place rather than packed.
/// Packing A costs about as much as `n / NR` of the sweeps that then use
/// each panel once per B panel, so it weighs most on narrow products —
/// a transformer's `[2048, 128] · [128, 128]` layers, whose A panels were
/// 12–15% of a training step's time on a Zen 4 — and little on wide ones,
/// where the packed panel's single stream is the better read.
const IN_PLACE_A_MAX_N: usize = 256;
/// The tallest `C` for which B is read in place rather than packed: the
/// same trade with the roles swapped (a weight gradient `[128, 2048] ·
/// [2048, 128]` packs as much B as it multiplies A panels by).
const IN_PLACE_B_MAX_M: usize = 512;
/// Up to this many A panels, B is read in place whatever its row stride:
/// the lines that a stride of 2 or 4 KiB crowds into a few L1 sets evict
/// one another between A panels (see [`spreads_over_l1`]), but with one
/// or two panels there is hardly a second read to lose — while a packed
/// copy is a whole extra pass over B. The case is a narrow `C` computed
/// transposed: a weight gradient `h2ᵀ·g3` into a 10-way layer is
/// `(g3ᵀ·h2)ᵀ`, 10 rows against all of `h2`.
const FEW_PANELS: usize = 2;

/// `C = A · B` for an `m × k` matrix `A` and a `k × n` matrix `B`, into
/// the row-major `m × n` slice `c` (whose previous values are ignored),
/// with the kernels of `isa` and the crate's thread pool (one thread when
/// `parallel` is false).
///
/// ```
/// use oxmera_cpu::gemm::{MatRef, gemm};
/// let a = [1.0f32, 2.0, 3.0, 4.0]; // [[1, 2], [3, 4]]
/// let b = [5.0f32, 6.0, 7.0, 8.0]; // [[5, 6], [7, 8]]
/// let mut c = [0.0f32; 4];
/// let (a, b) = (MatRef::row_major(&a, 2), MatRef::row_major(&b, 2));
/// gemm(oxmera_cpu::isa(), 2, 2, 2, a, b, &mut c, true);
/// assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
/// ```
///
/// # Panics
/// If `c` is not `m * n` long or a view reaches outside its data.
#[allow(clippy::too_many_arguments)]
pub fn gemm<T: Scalar>(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    c: &mut [T],
    parallel: bool,
) {
    gemm_with(&T::kernel(isa), m, n, k, a, b, c, parallel);
}

/// [`gemm`] with a given micro-kernel rather than `isa`'s choice: for
/// comparing kernels on the same products (`avx512_f32_kernel` gives
/// either AVX-512 tile; the `gemm_tiles` example of `oxmera-bench` times
/// them call by call).
///
/// # Panics
/// As [`gemm`].
#[allow(clippy::too_many_arguments)]
pub fn gemm_with<T: Scalar>(
    kernel: &Kernel<T>,
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    c: &mut [T],
    parallel: bool,
) {
    assert_eq!(c.len(), m * n, "gemm: C must be m × n");
    if k == 0 {
        c.fill(T::default());
    }
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let kernel = *kernel;
    if transposed_pads_less(&kernel, m, n) {
        narrow::gemm(&kernel, (m, n, k), a, b, c, parallel);
        return;
    }
    // A packed B is one more fork-join before the product's own: the
    // threads pay from twice the size.
    let min_flops = if reads_b_in_place(&kernel, b, m) {
        PARALLEL_MIN_FLOPS
    } else {
        2 * PARALLEL_MIN_FLOPS
    };
    let parallel = parallel && m * n * k >= min_flops;
    blocked(&kernel, m, n, k, a, b, c, parallel);
}

/// The blocked loops of the module docs.
#[allow(clippy::too_many_arguments)]
fn blocked<T: Scalar>(
    kernel: &Kernel<T>,
    m: usize,
    n: usize,
    k: usize,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    c: &mut [T],
    parallel: bool,
) {
    let nr = kernel.nr;
    // Depth blocks of equal size, at most KC: a ragged last block (784 =
    // 512 + 272, or 3·256 + 16 with 256-deep blocks) would store and
    // reload every tile of C for a handful of outer products.
    let kc_max = k.div_ceil(k.div_ceil(depth_block::<T>()));
    let nc_max = (b_block_bytes() / (kc_max * size_of::<T>()))
        .max(nr)
        .next_multiple_of(nr);
    if !parallel {
        // One thread: each B block is packed just before the A panels
        // sweep it, so it is still in L2 when they do (packing all of B
        // first, as the threads must share it, would leave most of it in
        // L3 by then).
        let in_place = reads_a_in_place(kernel, a, n);
        let b_in_place = reads_b_in_place(kernel, b, m);
        let a_rows = if in_place {
            0
        } else {
            m.next_multiple_of(kernel.mr)
        };
        let b_cols = if b_in_place {
            0
        } else {
            nc_max.min(n.next_multiple_of(nr))
        };
        let mut apack = pack::Buffer::new(a_rows * kc_max);
        let mut bpack = pack::Buffer::new(kc_max * b_cols);
        let mut scratch = Scratch::new(kernel);
        for pc in (0..k).step_by(kc_max) {
            let kc = kc_max.min(k - pc);
            let ap = a_source(kernel, a, in_place, (0, m), (pc, kc), &mut apack);
            for jc in (0..n).step_by(nc_max) {
                let nc = nc_max.min(n - jc);
                let bs = if b_in_place {
                    BSource::InPlace { b, pc }
                } else {
                    let bp = bpack.slice(kc * nc.next_multiple_of(nr));
                    pack::b_block(b, pc, kc, jc, nc, nr, bp, false);
                    BSource::Packed(bp)
                };
                let sweep = Sweep { kc, add: pc > 0 };
                sweep.run(kernel, ap, bs, (jc, nc), (c, n), &mut scratch);
            }
        }
        return;
    }
    // Columns of B packed at once: all of them unless the copy would pass
    // PACKED_B_BYTES.
    let slab_max = (PACKED_B_BYTES / (k * size_of::<T>()))
        .max(nc_max)
        .next_multiple_of(nr)
        .min(n.next_multiple_of(nr));
    let threads = threads::num_threads();
    let mr = kernel.mr;
    let panels_m = m.div_ceil(mr);
    // Row blocks: several per thread where each still has MIN_TASK_PANELS
    // panels (a task streams all of B once per depth block, so tiny tasks
    // cost more than they balance), a multiple of the thread count,
    // at most MC_PANELS_MAX panels each, their sizes differing by at most
    // one panel so no thread is left with the odd large one.
    let per_thread = (panels_m / (threads * MIN_TASK_PANELS)).clamp(1, TASKS_PER_THREAD);
    let tasks = (threads * per_thread)
        .max(panels_m.div_ceil(MC_PANELS_MAX).next_multiple_of(threads))
        .min(panels_m);
    let in_place = reads_a_in_place(kernel, a, n);
    let b_in_place = reads_b_in_place(kernel, b, m);
    // B read in place is one slab of every column.
    let slab_max = if b_in_place { n } else { slab_max };
    let mut bpack = pack::Buffer::new(if b_in_place { 0 } else { k * slab_max });
    for j0 in (0..n).step_by(slab_max) {
        let w = slab_max.min(n - j0);
        let wpad = w.next_multiple_of(nr);
        let bp = bpack.slice(if b_in_place { 0 } else { k * wpad });
        // Depth block `pc` of the slab is `bp[pc * wpad..]`: `kc × nr`
        // panels side by side.
        let pack_block = |(i, out): (usize, &mut [T])| {
            let pc = i * kc_max;
            let kc = kc_max.min(k - pc);
            pack::b_block(b, pc, kc, j0, w, nr, out, true);
        };
        if !b_in_place {
            threads::for_each_chunk(bp, kc_max * wpad, true, pack_block);
        }
        let bp: &[T] = bp;
        // One task per block of rows of C: it owns those rows, packs its
        // own A panels and reads the shared packed B, so tasks never wait
        // for one another.
        let task = |(row0, c_rows): (usize, &mut [T])| {
            let rows = c_rows.len() / n;
            let a_rows = if in_place {
                0
            } else {
                rows.next_multiple_of(mr)
            };
            let mut apack = pack::Buffer::new(a_rows * kc_max);
            let mut scratch = Scratch::new(kernel);
            for pc in (0..k).step_by(kc_max) {
                let kc = kc_max.min(k - pc);
                let ap = a_source(kernel, a, in_place, (row0, rows), (pc, kc), &mut apack);
                for jc in (0..w).step_by(nc_max) {
                    let nc = nc_max.min(w - jc);
                    let bs = if b_in_place {
                        BSource::InPlace { b, pc }
                    } else {
                        BSource::Packed(&bp[pc * wpad + jc * kc..pc * wpad + kc * wpad])
                    };
                    let sweep = Sweep { kc, add: pc > 0 };
                    sweep.run(kernel, ap, bs, (j0 + jc, nc), (c_rows, n), &mut scratch);
                }
            }
        };
        let blocks = row_blocks(c, m, n, mr, tasks);
        if m * n * k <= SHARED_MAX_FLOPS {
            threads::for_each_task(blocks, task);
        } else {
            threads::run(|| blocks.into_par_iter().for_each(task));
        }
    }
}

/// Whether lines `stride` elements apart spread over enough sets of an
/// L1 data cache (64 sets of 64-byte lines, 8 ways: the x86 parts this
/// crate tunes for) to stay there: at least 8 sets. Lines 4 KiB apart all
/// fall in one set, 2 KiB apart in two; a panel read in place along such
/// lines evicts itself while it is being reused (the MLP's `[784, 512]`
/// weight, rows 2 KiB apart, read in place made its step 3–5% slower).
fn spreads_over_l1<T>(stride: usize) -> bool {
    const SETS_SPAN: usize = 4096;
    let bytes = stride * size_of::<T>();
    bytes != 0 && SETS_SPAN / gcd(bytes, SETS_SPAN) >= 8
}

/// The greatest common divisor.
fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Whether the kernel reads A's panels where they lie instead of from a
/// packed copy: when it has a direct form, A's layout is one it reads
/// (unit column or unit row stride), `C` is narrow (see
/// [`IN_PLACE_A_MAX_N`]) and the lines spread over the L1's sets (see
/// [`spreads_over_l1`]).
fn reads_a_in_place<T>(kernel: &Kernel<T>, a: MatRef<'_, T>, n: usize) -> bool {
    kernel.direct.is_some()
        && n <= IN_PLACE_A_MAX_N
        && ((a.col_stride == 1 && spreads_over_l1::<T>(a.row_stride))
            || (a.row_stride == 1 && spreads_over_l1::<T>(a.col_stride)))
}

/// Whether the kernel reads B's panels where they lie: when it has a
/// direct form, B's rows are contiguous (unit column stride) and spread
/// over the L1's sets (see [`spreads_over_l1`]) or A has few panels (see
/// [`FEW_PANELS`]), and `C` is short (see [`IN_PLACE_B_MAX_M`]).
fn reads_b_in_place<T>(kernel: &Kernel<T>, b: MatRef<'_, T>, m: usize) -> bool {
    kernel.direct.is_some()
        && m <= IN_PLACE_B_MAX_M
        && b.col_stride == 1
        && (m <= FEW_PANELS * kernel.mr || spreads_over_l1::<T>(b.row_stride))
}

/// Where a sweep reads B, depth `pc..pc + kc`.
#[derive(Clone, Copy)]
enum BSource<'a, T> {
    /// Packed `kc × nr` panels side by side, from the sweep's first column.
    Packed(&'a [T]),
    /// B itself, read in place (an edge panel is packed when reached).
    InPlace { b: MatRef<'a, T>, pc: usize },
}

/// Where the sweeps of one depth block read A: rows `row0..row0 + rows`,
/// depth `pc..pc + kc`.
#[derive(Clone, Copy)]
enum ASource<'a, T> {
    /// Packed panels, one `mr × kc` after another.
    Packed(&'a [T]),
    /// A itself, read in place (an edge panel is packed when reached).
    InPlace {
        a: MatRef<'a, T>,
        row0: usize,
        pc: usize,
    },
}

/// The block's A: in place, or packed into `buf` (one `mr × kc` panel
/// after another).
fn a_source<'b, T: Scalar>(
    kernel: &Kernel<T>,
    a: MatRef<'b, T>,
    in_place: bool,
    (row0, rows): (usize, usize),
    (pc, kc): (usize, usize),
    buf: &'b mut pack::Buffer<T>,
) -> ASource<'b, T> {
    if in_place {
        return ASource::InPlace { a, row0, pc };
    }
    let mr = kernel.mr;
    let ap = buf.slice(rows.div_ceil(mr) * mr * kc);
    for (ip, panel) in ap.chunks_mut(mr * kc).enumerate() {
        let ir = ip * mr;
        pack::a_panel(a, row0 + ir, mr.min(rows - ir), pc, kc, mr, panel);
    }
    ASource::Packed(ap)
}

/// A task's scratch space for the edges: a tile of `C`, and an A panel
/// and a B panel for edges of operands read in place (allocated when
/// first needed: most products have no such edge).
struct Scratch<T> {
    tile: Vec<T>,
    panel: Vec<T>,
    b_panel: Vec<T>,
}

impl<T: Scalar> Scratch<T> {
    fn new(kernel: &Kernel<T>) -> Self {
        Scratch {
            tile: vec![T::default(); kernel.mr * kernel.nr],
            panel: Vec::new(),
            b_panel: Vec::new(),
        }
    }
}

/// The first `len` elements of `v`, grown to that length if shorter.
fn at_least<T: Scalar>(v: &mut Vec<T>, len: usize) -> &mut [T] {
    if v.len() < len {
        v.resize(len, T::default());
    }
    &mut v[..len]
}

/// One depth block's pass of the micro-kernel.
struct Sweep {
    /// The block's depth.
    kc: usize,
    /// Whether to add to `C` (every block after the first) or store.
    add: bool,
}

impl Sweep {
    /// Every A panel of `a` against every B panel of `b` covering columns
    /// `j0..j0 + nc` of `C`, into `c_rows` (rows of `C`, each `n` long; as
    /// many as `a` has rows).
    fn run<T: Scalar>(
        &self,
        kernel: &Kernel<T>,
        a: ASource<'_, T>,
        b: BSource<'_, T>,
        (j0, nc): (usize, usize),
        (c_rows, n): (&mut [T], usize),
        scratch: &mut Scratch<T>,
    ) {
        let (mr, nr, kc, add) = (kernel.mr, kernel.nr, self.kc, self.add);
        let rows = c_rows.len() / n;
        let b_panels = nc.div_ceil(nr);
        // A B edge panel read in place is packed (zero-padded) once here.
        if let BSource::InPlace { b, pc } = b
            && nc % nr != 0
        {
            let c0 = j0 + (b_panels - 1) * nr;
            pack::b_block(
                b,
                pc,
                kc,
                c0,
                nc % nr,
                nr,
                at_least(&mut scratch.b_panel, kc * nr),
                false,
            );
        }
        for ip in 0..rows.div_ceil(mr) {
            let ir = ip * mr;
            let mr_eff = mr.min(rows - ir);
            let a_panel = match a {
                ASource::Packed(ap) => Panel::packed(&ap[ip * mr * kc..(ip + 1) * mr * kc], mr),
                ASource::InPlace { a, row0, pc } if mr_eff == mr => {
                    let first = a.offset + (row0 + ir) * a.row_stride + pc * a.col_stride;
                    let (step, line) = if a.col_stride == 1 {
                        (1, a.row_stride)
                    } else {
                        (a.col_stride, 1)
                    };
                    Panel {
                        data: &a.data[first..],
                        step,
                        line,
                    }
                }
                ASource::InPlace { a, row0, pc } => {
                    // The last rows, fewer than a tile: packed, zero-padded.
                    let panel = at_least(&mut scratch.panel, mr * kc);
                    pack::a_panel(a, row0 + ir, mr_eff, pc, kc, mr, panel);
                    Panel::packed(&*panel, mr)
                }
            };
            for jp in 0..b_panels {
                let nr_eff = nr.min(nc - jp * nr);
                let b_panel = match b {
                    BSource::Packed(bp) => (&bp[jp * kc * nr..(jp + 1) * kc * nr], nr),
                    BSource::InPlace { b, pc } if nr_eff == nr => {
                        let first = b.offset + pc * b.row_stride + j0 + jp * nr;
                        (&b.data[first..], b.row_stride)
                    }
                    BSource::InPlace { .. } => (&scratch.b_panel[..kc * nr], nr),
                };
                let at = ir * n + j0 + jp * nr;
                if mr_eff == mr && nr_eff == nr {
                    kernel.tile(kc, a_panel, b_panel, &mut c_rows[at..], n, add);
                } else {
                    // An edge tile: compute the full tile aside (a packed
                    // panel is zero-padded; an in-place one is whole here)
                    // and move its valid part.
                    let edge = &mut scratch.tile;
                    kernel.tile(kc, a_panel, b_panel, edge, nr, false);
                    for i in 0..mr_eff {
                        let dst = &mut c_rows[at + i * n..at + i * n + nr_eff];
                        for (d, &e) in dst.iter_mut().zip(&edge[i * nr..]) {
                            *d = if add { *d + e } else { e };
                        }
                    }
                }
            }
        }
    }
}

/// `c` (`m` rows of `n`) cut into `tasks` blocks of whole `mr`-row
/// panels, as even as panels allow, each with its first row.
fn row_blocks<T>(
    mut c: &mut [T],
    m: usize,
    n: usize,
    mr: usize,
    tasks: usize,
) -> Vec<(usize, &mut [T])> {
    let panels = m.div_ceil(mr);
    let mut blocks = Vec::with_capacity(tasks);
    for t in 0..tasks {
        let (r0, r1) = (
            t * panels / tasks * mr,
            ((t + 1) * panels / tasks * mr).min(m),
        );
        let (block, rest) = std::mem::take(&mut c).split_at_mut((r1 - r0) * n);
        blocks.push((r0, block));
        c = rest;
    }
    blocks
}

#[cfg(test)]
mod tests;
