//! x86-64 micro-kernels: AVX2+FMA (`f32` 6 × 16, `f64` 6 × 8) and AVX-512
//! (`f32` 12 × 32).
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

use super::Kernel;

/// Checks a kernel call's slice lengths: every offset the kernel touches
/// is then in bounds.
#[inline(always)]
fn check(kc: usize, mr: usize, nr: usize, a: usize, b: usize, c: usize, ldc: usize) {
    assert!(
        a >= kc * mr && b >= kc * nr && c >= (mr - 1) * ldc + nr,
        "micro-kernel: panels of {a} and {b} or tile of {c} too short for kc = {kc}, {mr} × {nr}, ldc = {ldc}"
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
};

fn avx2_f32(kc: usize, a: &[f32], b: &[f32], c: &mut [f32], ldc: usize, add: bool) {
    assert!(has_avx2_fma(), "the AVX2 kernel needs AVX2 and FMA");
    check(kc, 6, 16, a.len(), b.len(), c.len(), ldc);
    // SAFETY: AVX2 and FMA are present (asserted above), and `check`
    // proved that a[..kc*6], b[..kc*16] and c[i*ldc..i*ldc+16] for i < 6
    // are in bounds — exactly the elements the kernel reads and writes.
    unsafe { avx2_f32_inner(kc, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), ldc, add) }
}

#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_f32_inner(
    kc: usize,
    a: *const f32,
    b: *const f32,
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
            // p < kc, so these read a[p*6..p*6+6] and b[p*16..p*16+16],
            // within the lengths the caller checked.
            {
                let bp = b.add(p * 16);
                let (b0, b1) = (_mm256_loadu_ps(bp), _mm256_loadu_ps(bp.add(8)));
                let ap = a.add(p * MR);
                for (i, row) in acc.iter_mut().enumerate() {
                    let ai = _mm256_broadcast_ss(&*ap.add(i));
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
pub(super) use avx512::AVX512_F32;

/// AVX-512 needs Rust 1.89 for its intrinsics; `build.rs` sets
/// `oxmera_avx512` only on such a compiler, so on an older one this module
/// is absent and the AVX2 kernel serves instead.
#[cfg(oxmera_avx512)]
#[allow(clippy::incompatible_msrv)]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{Kernel, check};

    /// AVX-512F, `f32`, 12 × 32.
    pub(in crate::gemm) const AVX512_F32: Kernel<f32> = Kernel {
        mr: 12,
        nr: 32,
        run: avx512_f32::<12, 2>,
    };

    /// AVX-512F, `f32`, `MR` rows of `V` vectors (`NR = 16·V`).
    fn avx512_f32<const MR: usize, const V: usize>(
        kc: usize,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
        ldc: usize,
        add: bool,
    ) {
        assert!(
            is_x86_feature_detected!("avx512f"),
            "the AVX-512 kernel needs AVX-512F"
        );
        check(kc, MR, 16 * V, a.len(), b.len(), c.len(), ldc);
        // SAFETY: AVX-512F is present (asserted above), and `check` proved
        // a[..kc*MR], b[..kc*16V] and c[i*ldc..i*ldc+16V] for i < MR are in
        // bounds — exactly what the kernel reads and writes.
        unsafe { inner::<MR, V>(kc, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), ldc, add) }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn inner<const MR: usize, const V: usize>(
        kc: usize,
        a: *const f32,
        b: *const f32,
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
                // p < kc: reads a[p*MR..p*MR+MR] and b[p*16V..p*16V+16V].
                let bp = b.add(p * 16 * V);
                let mut bv = [_mm512_setzero_ps(); V];
                for (v, slot) in bv.iter_mut().enumerate() {
                    *slot = _mm512_loadu_ps(bp.add(16 * v));
                }
                let ap = a.add(p * MR);
                for (i, row) in acc.iter_mut().enumerate() {
                    let ai = _mm512_set1_ps(*ap.add(i));
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
