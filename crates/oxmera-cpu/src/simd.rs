//! The vectorizable loops of `vmath`, compiled once per instruction set
//! and chosen at run time.
//!
//! Each function in the `avx2` and `avx512` modules below is the same
//! generic body, inlined into a function carrying
//! `#[target_feature(enable = ...)]`: the compiler then vectorizes it with
//! 256- or 512-bit registers and fuses `mul_add` into FMA instructions.
//! Calling such a function is `unsafe` (on a processor without the
//! feature it would fault), which is why this module — and the GEMM's
//! micro-kernel modules — are the only places where this crate allows
//! `unsafe`: every call is preceded by the run-time check that makes it
//! sound.

#![allow(unsafe_code)]

use crate::backward::kernels;
use crate::isa::Isa;
use crate::vmath;

/// `out[i] = e^x[i]` with the kernels of `isa`.
pub(crate) fn exp_slice(isa: Isa, x: &[f32], out: &mut [f32]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::exp_slice(x, out) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::exp_slice(x, out) }
        }
        Isa::Neon => vmath::exp_slice::<true>(x, out),
        _ => vmath::exp_slice::<false>(x, out),
    }
}

/// The softmax (or log-softmax) of one row with the kernels of `isa`.
pub(crate) fn softmax_row(isa: Isa, x: &[f32], out: &mut [f32], log: bool) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::softmax_row(x, out, log) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::softmax_row(x, out, log) }
        }
        // aarch64 always has FMA, which `mul_add` compiles to there.
        Isa::Neon => vmath::softmax_row::<true>(x, out, log),
        _ => vmath::softmax_row::<false>(x, out, log),
    }
}

/// The layer normalization of one row with the kernels of `isa`.
pub(crate) fn layer_norm_row(isa: Isa, x: &[f32], out: &mut [f32], eps: f64) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::layer_norm_row(x, out, eps) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::layer_norm_row(x, out, eps) }
        }
        _ => vmath::layer_norm_row(x, out, eps),
    }
}

/// The blocked sum of `x` (see `vmath::sum_f32`) with the kernels of `isa`.
pub(crate) fn sum_f32(isa: Isa, x: &[f32]) -> f64 {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::sum_f32(x) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::sum_f32(x) }
        }
        _ => vmath::sum_f32(x),
    }
}

/// The maximum of a non-empty `x` with the kernels of `isa`.
pub(crate) fn max_f32(isa: Isa, x: &[f32]) -> f32 {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::max_f32(x) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::max_f32(x) }
        }
        _ => vmath::max_f32(x),
    }
}

/// Exact GELU of a run with the kernels of `isa`.
pub(crate) fn gelu_run(isa: Isa, x: &[f32], out: &mut [f32]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::gelu_run(x, out) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::gelu_run(x, out) }
        }
        Isa::Neon => vmath::gelu_run::<true>(x, out),
        _ => vmath::gelu_run::<false>(x, out),
    }
}

/// `out[i] = g[i] · gelu'(x[i])` (exact GELU) with the kernels of `isa`.
pub(crate) fn gelu_grad_run(isa: Isa, x: &[f32], g: &[f32], out: &mut [f32]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::gelu_grad_run(x, g, out) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::gelu_grad_run(x, g, out) }
        }
        Isa::Neon => kernels::gelu_grad_run::<true>(x, g, out),
        _ => kernels::gelu_grad_run::<false>(x, g, out),
    }
}

/// One row of softmax's (log-softmax's when `log`) backward with the
/// kernels of `isa`.
pub(crate) fn softmax_grad_row(isa: Isa, y: &[f32], g: &[f32], out: &mut [f32], log: bool) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::softmax_grad_row(y, g, out, log) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::softmax_grad_row(y, g, out, log) }
        }
        Isa::Neon => kernels::softmax_grad_row::<true>(y, g, out, log),
        _ => kernels::softmax_grad_row::<false>(y, g, out, log),
    }
}

/// One row of layer normalization's backward with the kernels of `isa`.
pub(crate) fn layer_norm_grad_row(
    isa: Isa,
    x: &[f32],
    y: &[f32],
    g: &[f32],
    out: &mut [f32],
    eps: f64,
) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2Fma if Isa::Avx2Fma.is_available() => {
            // SAFETY: the processor has AVX2 and FMA (checked just above).
            unsafe { avx2::layer_norm_grad_row(x, y, g, out, eps) }
        }
        #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
        Isa::Avx512 if Isa::Avx512.is_available() => {
            // SAFETY: the processor has AVX-512F, AVX2 and FMA (checked).
            unsafe { avx512::layer_norm_grad_row(x, y, g, out, eps) }
        }
        _ => kernels::layer_norm_grad_row(x, y, g, out, eps),
    }
}

/// Generates the target-feature wrappers of one instruction set.
#[cfg(target_arch = "x86_64")]
macro_rules! wrappers {
    ($features:literal) => {
        use crate::backward::kernels;
        use crate::vmath;

        #[target_feature(enable = $features)]
        pub(super) unsafe fn exp_slice(x: &[f32], out: &mut [f32]) {
            vmath::exp_slice::<true>(x, out)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn softmax_row(x: &[f32], out: &mut [f32], log: bool) {
            vmath::softmax_row::<true>(x, out, log)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn layer_norm_row(x: &[f32], out: &mut [f32], eps: f64) {
            vmath::layer_norm_row(x, out, eps)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn sum_f32(x: &[f32]) -> f64 {
            vmath::sum_f32(x)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn max_f32(x: &[f32]) -> f32 {
            vmath::max_f32(x)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn gelu_run(x: &[f32], out: &mut [f32]) {
            vmath::gelu_run::<true>(x, out)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn gelu_grad_run(x: &[f32], g: &[f32], out: &mut [f32]) {
            kernels::gelu_grad_run::<true>(x, g, out)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn softmax_grad_row(y: &[f32], g: &[f32], out: &mut [f32], log: bool) {
            kernels::softmax_grad_row::<true>(y, g, out, log)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn layer_norm_grad_row(
            x: &[f32],
            y: &[f32],
            g: &[f32],
            out: &mut [f32],
            eps: f64,
        ) {
            kernels::layer_norm_grad_row(x, y, g, out, eps)
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    wrappers!("avx2,fma");
}

#[cfg(all(target_arch = "x86_64", oxmera_avx512))]
mod avx512 {
    wrappers!("avx512f,avx2,fma");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every available instruction set gives the portable answer (up to
    /// FMA's single rounding) on lengths around the lane count.
    #[test]
    fn every_isa_agrees_with_the_portable_loops() {
        for isa in Isa::available() {
            for len in [0usize, 1, 7, 15, 16, 17, 33, 100, 1000, 1537] {
                let x: Vec<f32> = (0..len)
                    .map(|i| ((i * 7919) % 997) as f32 * 0.03 - 15.0)
                    .collect();
                let mut got = vec![0.0; len];
                let mut want = vec![0.0; len];
                exp_slice(isa, &x, &mut got);
                vmath::exp_slice::<false>(&x, &mut want);
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() <= 2.5e-7 * w.abs(), "{isa} exp: {g} vs {w}");
                }
                // The same additions in the same order: the same bits.
                assert_eq!(sum_f32(isa, &x), vmath::sum_f32(&x), "{isa} sum");
                if len > 0 {
                    assert_eq!(max_f32(isa, &x), vmath::max_f32(&x), "{isa} max");
                    layer_norm_row(isa, &x, &mut got, 1e-5);
                    vmath::layer_norm_row(&x, &mut want, 1e-5);
                    for (g, w) in got.iter().zip(&want) {
                        assert!((g - w).abs() <= 1e-6 * (1.0 + w.abs()), "{isa} layer_norm");
                    }
                    for log in [false, true] {
                        softmax_row(isa, &x, &mut got, log);
                        vmath::softmax_row::<false>(&x, &mut want, log);
                        for (g, w) in got.iter().zip(&want) {
                            assert!((g - w).abs() <= 1e-6 * (1.0 + w.abs()), "{isa} softmax");
                        }
                    }
                }
            }
        }
    }
}
