//! The aarch64 micro-kernel: NEON, `f32`, 8 × 8.
//!
//! NEON registers hold four `f32`, and there are 32 of them: the 8 × 8
//! tile takes 16 accumulators, a step's B row 2 registers and its A column
//! 2 more, from which `vfmaq_laneq_f32` takes each value by lane — no
//! separate broadcast needed.

#![allow(unsafe_code)]

use std::arch::aarch64::*;

use super::Kernel;

/// NEON, `f32`, 8 × 8.
pub(super) const NEON_F32: Kernel<f32> = Kernel {
    mr: 8,
    nr: 8,
    run: neon_f32,
    direct: None,
};

fn neon_f32(kc: usize, a: &[f32], b: &[f32], c: &mut [f32], ldc: usize, add: bool) {
    assert!(
        std::arch::is_aarch64_feature_detected!("neon"),
        "the NEON kernel needs NEON"
    );
    assert!(
        a.len() >= kc * 8 && b.len() >= kc * 8 && c.len() >= 7 * ldc + 8,
        "micro-kernel: panels or tile too short"
    );
    // SAFETY: NEON is present (asserted), and the lengths asserted cover
    // a[..kc*8], b[..kc*8] and c[i*ldc..i*ldc+8] for i < 8: everything
    // the kernel reads and writes.
    unsafe { inner(kc, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), ldc, add) }
}

/// One FMA of B row `b` scaled by lane `L` of `a` into `acc`.
macro_rules! lane_fma {
    ($acc:expr, $b:expr, $a:expr, $lane:literal) => {
        $acc[0] = vfmaq_laneq_f32::<$lane>($acc[0], $b[0], $a);
        $acc[1] = vfmaq_laneq_f32::<$lane>($acc[1], $b[1], $a);
    };
}

#[target_feature(enable = "neon")]
unsafe fn inner(kc: usize, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, add: bool) {
    // SAFETY: the caller checked NEON and the slice lengths; p < kc and
    // i < 8 keep every offset below within them.
    unsafe {
        let mut acc = [[vdupq_n_f32(0.0); 2]; 8];
        for p in 0..kc {
            let bp = b.add(p * 8);
            let brow = [vld1q_f32(bp), vld1q_f32(bp.add(4))];
            let ap = a.add(p * 8);
            let (lo, hi) = (vld1q_f32(ap), vld1q_f32(ap.add(4)));
            lane_fma!(acc[0], brow, lo, 0);
            lane_fma!(acc[1], brow, lo, 1);
            lane_fma!(acc[2], brow, lo, 2);
            lane_fma!(acc[3], brow, lo, 3);
            lane_fma!(acc[4], brow, hi, 0);
            lane_fma!(acc[5], brow, hi, 1);
            lane_fma!(acc[6], brow, hi, 2);
            lane_fma!(acc[7], brow, hi, 3);
        }
        for (i, row) in acc.iter().enumerate() {
            let ci = c.add(i * ldc);
            if add {
                vst1q_f32(ci, vaddq_f32(vld1q_f32(ci), row[0]));
                vst1q_f32(ci.add(4), vaddq_f32(vld1q_f32(ci.add(4)), row[1]));
            } else {
                vst1q_f32(ci, row[0]);
                vst1q_f32(ci.add(4), row[1]);
            }
        }
    }
}
