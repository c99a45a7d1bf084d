//! x86-64 micro-kernels: AVX2+FMA (`f32` 6 × 16, `f64` 6 × 8) and AVX-512
//! (`f32` 12 × 32 or 8 × 32, by part: see `tile`). The `f32` kernels also read A in place (see
//! [`Panel`]); the packed layout is one case of theirs.
//!
//! Each kernel keeps its `MR × NR` tile of `C` in vector registers —
//! `MR` rows of `NR / width` vectors — and per step of the inner product
//! loads one row of the B panel (`NR / width` vector loads), broadcasts
//! each of the `MR` values of the A panel and does `MR × NR / width` FMAs.
//! AVX2 has 16 vector registers: 12 accumulators + 2 B vectors + 1
//! broadcast. AVX-512 has 32: 24 accumulators + 2 + 1.
//!
//! The `unsafe` here is of two kinds, both justified at each use: calling
//! a `#[target_feature]` function (sound because the safe wrapper checks
//! the feature at run time first) and raw-pointer loads and stores (sound
//! because the wrapper checks the slices are long enough for every offset
//! the kernel touches).

#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::{Kernel, Panel};

/// Checks a kernel call's slice lengths: every offset the kernel touches
/// is then in bounds.
#[inline(always)]
fn check(kc: usize, mr: usize, nr: usize, a: usize, b: usize, c: usize, ldc: usize) {
    assert!(
        a >= kc * mr && b >= kc * nr && c >= (mr - 1) * ldc + nr,
        "micro-kernel: panels of {a} and {b} or tile of {c} too short for kc = {kc}, {mr} × {nr}, ldc = {ldc}"
    );
}

/// Checks a direct kernel call: every A element `(p, i)`, B row `p` and
/// row `i` of the tile (`p < kc`, `i < mr`) lies in its slice. A's layout
/// must be one the kernels read: unit `step` or unit `line`.
#[inline(always)]
fn check_direct<T>(
    kc: usize,
    mr: usize,
    nr: usize,
    a: Panel<'_, T>,
    (b, b_step): (&[T], usize),
    c: usize,
    ldc: usize,
) {
    assert!(
        a.step == 1 || a.line == 1,
        "micro-kernel: an A panel needs unit step or unit line"
    );
    let last = |steps: usize, step: usize| (steps.max(1) - 1) * step;
    assert!(
        (kc == 0 || a.data.len() > last(kc, a.step) + last(mr, a.line))
            && b.len() >= last(kc, b_step) + nr
            && c >= (mr - 1) * ldc + nr,
        "micro-kernel: panels of {} and {} or tile of {c} too short for kc = {kc}, {mr} × {nr}, ldc = {ldc}",
        a.data.len(),
        b.len()
    );
}

fn has_avx2_fma() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

/// AVX2+FMA, `f32`, 6 × 16.
pub(super) const AVX2_F32: Kernel<f32> = Kernel {
    mr: 6,
    nr: 16,
    run: avx2_f32,
    direct: Some(avx2_f32_direct),
};

/// The AVX2 kernel on packed panels: the direct kernel with the packed
/// layout's strides.
fn avx2_f32(kc: usize, a: &[f32], b: &[f32], c: &mut [f32], ldc: usize, add: bool) {
    avx2_f32_direct(kc, Panel::packed(a, 6), (b, 16), c, ldc, add);
}

/// The AVX2 kernel on an A panel with either layout [`Panel`] allows and
/// B rows `b_step` apart.
fn avx2_f32_direct(
    kc: usize,
    a: Panel<'_, f32>,
    (b, b_step): (&[f32], usize),
    c: &mut [f32],
    ldc: usize,
    add: bool,
) {
    assert!(has_avx2_fma(), "the AVX2 kernel needs AVX2 and FMA");
    check_direct(kc, 6, 16, a, (b, b_step), c.len(), ldc);
    let (ap, bp, cp) = (a.data.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    // SAFETY: AVX2 and FMA are present (asserted above), and
    // `check_direct` proved that every a[p*step + i*line],
    // b[p*b_step..+16] and c[i*ldc..+16] for p < kc, i < 6 is in bounds —
    // exactly the elements the kernel reads and writes.
    unsafe {
        if a.line == 1 {
            avx2_f32_inner::<false>(kc, ap, a.step, bp, b_step, cp, ldc, add)
        } else {
            avx2_f32_inner::<true>(kc, ap, a.line, bp, b_step, cp, ldc, add)
        }
    }
}

/// `ROWS`: A's element `(p, i)` is `a[i * lda + p]`; otherwise
/// `a[p * lda + i]` (a packed panel has `lda = 6`).
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn avx2_f32_inner<const ROWS: bool>(
    kc: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    b_step: usize,
    c: *mut f32,
    ldc: usize,
    add: bool,
) {
    // SAFETY: the caller guarantees the target features (this function
    // is only reached through a wrapper that checked them) and the panel
    // and tile lengths; the comments below say which bound covers each
    // access.
    unsafe {
        const MR: usize = 6;
        let mut acc = [[_mm256_setzero_ps(); 2]; MR];
        for p in 0..kc {
            // p < kc, so these read b[p*b_step..+16] and A's element
            // (p, i) for i < 6, within the bounds the caller checked.
            {
                let bp = b.add(p * b_step);
                let (b0, b1) = (_mm256_loadu_ps(bp), _mm256_loadu_ps(bp.add(8)));
                for (i, row) in acc.iter_mut().enumerate() {
                    let at = if ROWS { i * lda + p } else { p * lda + i };
                    let ai = _mm256_broadcast_ss(&*a.add(at));
                    row[0] = _mm256_fmadd_ps(ai, b0, row[0]);
                    row[1] = _mm256_fmadd_ps(ai, b1, row[1]);
                }
            }
        }
        for (i, row) in acc.iter().enumerate() {
            // i < 6, so c[i*ldc..i*ldc+16] is in bounds (checked).
            {
                let ci = c.add(i * ldc);
                if add {
                    _mm256_storeu_ps(ci, _mm256_add_ps(_mm256_loadu_ps(ci), row[0]));
                    _mm256_storeu_ps(ci.add(8), _mm256_add_ps(_mm256_loadu_ps(ci.add(8)), row[1]));
                } else {
                    _mm256_storeu_ps(ci, row[0]);
                    _mm256_storeu_ps(ci.add(8), row[1]);
                }
            }
        }
    }
}

/// AVX2+FMA, `f64`, 6 × 8.
pub(super) const AVX2_F64: Kernel<f64> = Kernel {
    mr: 6,
    nr: 8,
    run: avx2_f64,
    direct: None,
};

fn avx2_f64(kc: usize, a: &[f64], b: &[f64], c: &mut [f64], ldc: usize, add: bool) {
    assert!(has_avx2_fma(), "the AVX2 kernel needs AVX2 and FMA");
    check(kc, 6, 8, a.len(), b.len(), c.len(), ldc);
    // SAFETY: as for `avx2_f32`: features asserted, bounds checked.
    unsafe { avx2_f64_inner(kc, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), ldc, add) }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_f64_inner(
    kc: usize,
    a: *const f64,
    b: *const f64,
    c: *mut f64,
    ldc: usize,
    add: bool,
) {
    // SAFETY: the caller guarantees the target features (this function
    // is only reached through a wrapper that checked them) and the panel
    // and tile lengths; the comments below say which bound covers each
    // access.
    unsafe {
        const MR: usize = 6;
        let mut acc = [[_mm256_setzero_pd(); 2]; MR];
        for p in 0..kc {
            // Reads a[p*6..p*6+6] and b[p*8..p*8+8], p < kc (checked).
            {
                let bp = b.add(p * 8);
                let (b0, b1) = (_mm256_loadu_pd(bp), _mm256_loadu_pd(bp.add(4)));
                let ap = a.add(p * MR);
                for (i, row) in acc.iter_mut().enumerate() {
                    let ai = _mm256_broadcast_sd(&*ap.add(i));
                    row[0] = _mm256_fmadd_pd(ai, b0, row[0]);
                    row[1] = _mm256_fmadd_pd(ai, b1, row[1]);
                }
            }
        }
        for (i, row) in acc.iter().enumerate() {
            // i < 6, so c[i*ldc..i*ldc+8] is in bounds (checked).
            {
                let ci = c.add(i * ldc);
                if add {
                    _mm256_storeu_pd(ci, _mm256_add_pd(_mm256_loadu_pd(ci), row[0]));
                    _mm256_storeu_pd(ci.add(4), _mm256_add_pd(_mm256_loadu_pd(ci.add(4)), row[1]));
                } else {
                    _mm256_storeu_pd(ci, row[0]);
                    _mm256_storeu_pd(ci.add(4), row[1]);
                }
            }
        }
    }
}

#[cfg(oxmera_avx512)]
pub(super) use avx512::{AVX512_F32, AVX512_F32_8X32};

/// AVX-512 needs Rust 1.89 for its intrinsics; `build.rs` sets
/// `oxmera_avx512` only on such a compiler, so on an older one this module
/// is absent and the AVX2 kernel serves instead.
#[cfg(oxmera_avx512)]
#[allow(clippy::incompatible_msrv)]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{Kernel, Panel, check_direct};

    /// AVX-512F, `f32`, 12 × 32.
    pub(in crate::gemm) const AVX512_F32: Kernel<f32> = Kernel {
        mr: 12,
        nr: 32,
        run: avx512_f32::<12, 2>,
        direct: Some(avx512_direct::<12, 2>),
    };

    /// AVX-512F, `f32`, 8 × 32: the same kernel with 16 accumulators.
    pub(in crate::gemm) const AVX512_F32_8X32: Kernel<f32> = Kernel {
        mr: 8,
        nr: 32,
        run: avx512_f32::<8, 2>,
        direct: Some(avx512_direct::<8, 2>),
    };

    /// AVX-512F, `f32`, `MR` rows of `V` vectors (`NR = 16·V`), on packed
    /// panels: the direct kernel with the packed layout's strides.
    fn avx512_f32<const MR: usize, const V: usize>(
        kc: usize,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
        ldc: usize,
        add: bool,
    ) {
        let a = Panel::packed(a, MR);
        avx512_direct::<MR, V>(kc, a, (b, 16 * V), c, ldc, add);
    }

    /// The kernel on an A panel with any of the two layouts [`Panel`]
    /// allows and B rows `b_step` apart.
    fn avx512_direct<const MR: usize, const V: usize>(
        kc: usize,
        a: Panel<'_, f32>,
        (b, b_step): (&[f32], usize),
        c: &mut [f32],
        ldc: usize,
        add: bool,
    ) {
        assert!(
            is_x86_feature_detected!("avx512f"),
            "the AVX-512 kernel needs AVX-512F"
        );
        check_direct(kc, MR, 16 * V, a, (b, b_step), c.len(), ldc);
        let (ap, bp, cp) = (a.data.as_ptr(), b.as_ptr(), c.as_mut_ptr());
        // SAFETY: AVX-512F is present (asserted above), and `check_direct`
        // proved that every a[p*step + i*line], b[p*b_step..+16V] and
        // c[i*ldc..+16V] for p < kc, i < MR is in bounds — exactly what the
        // kernel reads and writes.
        unsafe {
            if a.line == 1 {
                inner::<MR, V, false>(kc, ap, a.step, bp, b_step, cp, ldc, add)
            } else {
                inner::<MR, V, true>(kc, ap, a.line, bp, b_step, cp, ldc, add)
            }
        }
    }

    /// `ROWS`: A's element `(p, i)` is `a[i * lda + p]` (rows of a
    /// row-major A); otherwise `a[p * lda + i]` (a packed panel, `lda =
    /// MR`, or a column-major A).
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn inner<const MR: usize, const V: usize, const ROWS: bool>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        b_step: usize,
        c: *mut f32,
        ldc: usize,
        add: bool,
    ) {
        // SAFETY: the caller guarantees the target features (this function
        // is only reached through a wrapper that checked them) and the panel
        // and tile lengths; the comments below say which bound covers each
        // access.
        unsafe {
            let mut acc = [[_mm512_setzero_ps(); V]; MR];
            for p in 0..kc {
                // p < kc: reads b[p*b_step..+16V] and A's element (p, i)
                // for i < MR, within the bounds the caller checked.
                let bp = b.add(p * b_step);
                let mut bv = [_mm512_setzero_ps(); V];
                for (v, slot) in bv.iter_mut().enumerate() {
                    *slot = _mm512_loadu_ps(bp.add(16 * v));
                }
                for (i, row) in acc.iter_mut().enumerate() {
                    let at = if ROWS { i * lda + p } else { p * lda + i };
                    let ai = _mm512_set1_ps(*a.add(at));
                    for (r, &bj) in row.iter_mut().zip(&bv) {
                        *r = _mm512_fmadd_ps(ai, bj, *r);
                    }
                }
            }
            for (i, row) in acc.iter().enumerate() {
                // i < MR and v < V, so c[i*ldc + 16v..+16] is in bounds
                // (checked).
                let ci = c.add(i * ldc);
                for (v, &r) in row.iter().enumerate() {
                    let cv = ci.add(16 * v);
                    let sum = if add {
                        _mm512_add_ps(_mm512_loadu_ps(cv), r)
                    } else {
                        r
                    };
                    _mm512_storeu_ps(cv, sum);
                }
            }
        }
    }
}

/// Packs `w` lines of `f32` that are contiguous along the steps (a
/// row-major A, a transposed B) as a panel: `out[p * w + i] =
/// data[first + i * across + p]` for `p < kc`, `i < w`. Returns false,
/// writing nothing, where `w` is not a multiple of 4 or the processor
/// has no AVX; the caller then packs element by element.
///
/// Why: element by element the transpose is a scalar load and a scalar
/// store per value — 9% of the time of the MLP step's eight products on
/// a Zen 4 (`perf record` over `gemm_tiles`). In 8 × 8 blocks it is 8
/// vector loads, 24 shuffles and 8 vector stores per 64 values. The
/// 12-row panels of the wide AVX-512 tile (Zen 5, Intel) are one 8 × 8
/// block and one 4 × 8 block per strip: until they were, they went
/// element by element, 2% of a 1024³ product's samples on a Zen 5
/// (`perf record` over `gemm_duel`). The values are only moved, so the
/// packed panel, and every bit of the product, is the same.
pub(super) fn transpose_panel_f32(
    data: &[f32],
    first: usize,
    across: usize,
    kc: usize,
    w: usize,
    out: &mut [f32],
) -> bool {
    if w % 4 != 0 || !std::arch::is_x86_feature_detected!("avx") {
        return false;
    }
    if kc == 0 || w == 0 {
        return true;
    }
    assert!(
        first + (w - 1) * across + kc <= data.len() && out.len() >= kc * w,
        "transpose_panel_f32: {w} lines of {kc} from {first} (across {across}) in {} values, into {}",
        data.len(),
        out.len()
    );
    // SAFETY: the processor has AVX (checked above); every element read,
    // `first + i * across + p` with `i < w`, `p < kc`, is below the
    // asserted bound, and every element written, `p * w + i`, below
    // `kc * w <= out.len()`.
    unsafe { transpose_panel_avx(data.as_ptr(), first, across, kc, w, out.as_mut_ptr()) };
    true
}

/// [`transpose_panel_f32`]'s loops: 8-step strips, each cut into 8 × 8
/// blocks across the lines (and a 4 × 8 block for the last four lines
/// where `w % 8 == 4`) so the strip's `8 · w` outputs are written
/// together; the last `kc % 8` steps one value at a time.
#[target_feature(enable = "avx")]
unsafe fn transpose_panel_avx(
    data: *const f32,
    first: usize,
    across: usize,
    kc: usize,
    w: usize,
    out: *mut f32,
) {
    let whole = kc / 8 * 8;
    let blocks8 = w / 8 * 8;
    for p0 in (0..whole).step_by(8) {
        for i0 in (0..blocks8).step_by(8) {
            // SAFETY (this block): in bounds by the caller's contract.
            unsafe {
                let src = data.add(first + i0 * across + p0);
                let r: [__m256; 8] = std::array::from_fn(|r| _mm256_loadu_ps(src.add(r * across)));
                let cols = transpose_8x8(r);
                for (q, col) in cols.into_iter().enumerate() {
                    _mm256_storeu_ps(out.add((p0 + q) * w + i0), col);
                }
            }
        }
        if blocks8 < w {
            // The last four lines (w % 8 == 4).
            // SAFETY (this block): in bounds by the caller's contract.
            unsafe {
                let src = data.add(first + blocks8 * across + p0);
                let r: [__m256; 4] = std::array::from_fn(|r| _mm256_loadu_ps(src.add(r * across)));
                let cols = transpose_4x8(r);
                for (q, col) in cols.into_iter().enumerate() {
                    _mm_storeu_ps(out.add((p0 + q) * w + blocks8), col);
                }
            }
        }
    }
    for p in whole..kc {
        for i in 0..w {
            // SAFETY: in bounds by the caller's contract.
            unsafe { *out.add(p * w + i) = *data.add(first + i * across + p) };
        }
    }
}

/// The first two stages of an 8-wide transpose, on 4 rows of 8: pairs of
/// rows interleaved, then pairs of pairs. After them each 128-bit half of
/// `u[k]` is a whole column of the 4 rows: column `k` in the low half,
/// column `k + 4` in the high one.
#[inline]
#[target_feature(enable = "avx")]
fn columns_of_four(r: [__m256; 4]) -> [__m256; 4] {
    // Rows 0 and 1 interleaved: t[0] holds elements 0,1 and 4,5 of both,
    // t[1] elements 2,3 and 6,7; t[2], t[3] the same for rows 2 and 3.
    let t = [
        _mm256_unpacklo_ps(r[0], r[1]),
        _mm256_unpackhi_ps(r[0], r[1]),
        _mm256_unpacklo_ps(r[2], r[3]),
        _mm256_unpackhi_ps(r[2], r[3]),
    ];
    [
        _mm256_shuffle_ps::<0x44>(t[0], t[2]),
        _mm256_shuffle_ps::<0xEE>(t[0], t[2]),
        _mm256_shuffle_ps::<0x44>(t[1], t[3]),
        _mm256_shuffle_ps::<0xEE>(t[1], t[3]),
    ]
}

/// The transpose of a 4 × 8 block held as 4 rows of 8: its 8 columns of
/// 4, the halves of [`columns_of_four`]'s vectors.
#[inline]
#[target_feature(enable = "avx")]
fn transpose_4x8(r: [__m256; 4]) -> [__m128; 8] {
    let u = columns_of_four(r);
    [
        _mm256_castps256_ps128(u[0]),
        _mm256_castps256_ps128(u[1]),
        _mm256_castps256_ps128(u[2]),
        _mm256_castps256_ps128(u[3]),
        _mm256_extractf128_ps::<1>(u[0]),
        _mm256_extractf128_ps::<1>(u[1]),
        _mm256_extractf128_ps::<1>(u[2]),
        _mm256_extractf128_ps::<1>(u[3]),
    ]
}

/// The transpose of an 8 × 8 block held as 8 rows: the columns of rows
/// 0–3 and of rows 4–7 ([`columns_of_four`]), then their 128-bit halves
/// joined.
#[inline]
#[target_feature(enable = "avx")]
fn transpose_8x8(r: [__m256; 8]) -> [__m256; 8] {
    let top = columns_of_four([r[0], r[1], r[2], r[3]]);
    let bottom = columns_of_four([r[4], r[5], r[6], r[7]]);
    // Column c: the low halves (c < 4) or high halves (c >= 4) of the
    // rows-0-3 and rows-4-7 vectors joined.
    [
        _mm256_permute2f128_ps::<0x20>(top[0], bottom[0]),
        _mm256_permute2f128_ps::<0x20>(top[1], bottom[1]),
        _mm256_permute2f128_ps::<0x20>(top[2], bottom[2]),
        _mm256_permute2f128_ps::<0x20>(top[3], bottom[3]),
        _mm256_permute2f128_ps::<0x31>(top[0], bottom[0]),
        _mm256_permute2f128_ps::<0x31>(top[1], bottom[1]),
        _mm256_permute2f128_ps::<0x31>(top[2], bottom[2]),
        _mm256_permute2f128_ps::<0x31>(top[3], bottom[3]),
    ]
}
