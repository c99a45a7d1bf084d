//! The portable micro-kernel: plain Rust over fixed-size arrays, which
//! the compiler keeps in registers and vectorizes for the target's
//! baseline (SSE2 on x86-64). It serves every processor without a
//! dedicated kernel, and `f64` on those.

use super::{Kernel, Scalar};

/// `f32`: 4 × 8 (eight SSE registers of accumulators).
pub(super) const F32: Kernel<f32> = Kernel {
    mr: 4,
    nr: 8,
    run: kernel::<f32, 4, 8>,
    direct: None,
};

/// `f64`: 4 × 4.
pub(super) const F64: Kernel<f64> = Kernel {
    mr: 4,
    nr: 4,
    run: kernel::<f64, 4, 4>,
    direct: None,
};

/// `c[i * ldc + j] (+)= Σ_p a[p * MR + i] * b[p * NR + j]`.
fn kernel<T: Scalar, const MR: usize, const NR: usize>(
    kc: usize,
    a: &[T],
    b: &[T],
    c: &mut [T],
    ldc: usize,
    add: bool,
) {
    let mut acc = [[T::default(); NR]; MR];
    for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)).take(kc) {
        for i in 0..MR {
            for j in 0..NR {
                acc[i][j] = acc[i][j] + ap[i] * bp[j];
            }
        }
    }
    for (i, row) in acc.iter().enumerate() {
        for (d, &v) in c[i * ldc..i * ldc + NR].iter_mut().zip(row) {
            *d = if add { *d + v } else { v };
        }
    }
}
