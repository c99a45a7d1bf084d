//! Matrix multiplication.

use oxmera_core::Result;
use oxmera_tensor::{Storage, Tensor};

use crate::read;

/// `a` is `[..., m, k]`, `b` is `[..., k, n]` with identical batch dims
/// (the front end has broadcast them, possibly with stride 0); the result
/// is `[..., m, n]`. Floats accumulate in `f64` and round once; integers
/// accumulate in `i64`, wrapping, and wrap again into the output width.
/// An empty `k` gives zeros.
pub(crate) fn matmul(a: &Tensor, b: &Tensor) -> Result<Storage> {
    let (ad, bd) = (a.dims(), b.dims());
    let rank = ad.len();
    debug_assert!(
        rank >= 2 && bd.len() == rank,
        "matmul operands {ad:?} and {bd:?}"
    );
    debug_assert_eq!(ad[..rank - 2], bd[..rank - 2], "matmul batch dims");
    let (m, k, n) = (ad[rank - 2], ad[rank - 1], bd[rank - 1]);
    let batch: usize = ad[..rank - 2].iter().product();
    if read::is_float(a) {
        let (x, y) = (read::f64s(a)?, read::f64s(b)?);
        let out = product(batch, m, k, n, |xi, yi, acc: f64| acc + x[xi] * y[yi]);
        Ok(read::store_f64(a.dtype(), out))
    } else {
        let (x, y) = (read::i64s(a)?, read::i64s(b)?);
        let out = product(batch, m, k, n, |xi, yi, acc: i64| {
            acc.wrapping_add(x[xi].wrapping_mul(y[yi]))
        });
        Ok(read::store_i64(a.dtype(), out))
    }
}

/// The triple loop of the definition, once per batch entry:
/// `out[b][i][j] = Σ_p a[b][i][p] * b[b][p][j]`, over row-major positions
/// of the logically ordered operands. `step(a_pos, b_pos, acc)` adds one term.
fn product<T: Copy + Default>(
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
    step: impl Fn(usize, usize, T) -> T,
) -> Vec<T> {
    let mut out = Vec::with_capacity(batch * m * n);
    // An empty result costs nothing, however many batches it has
    // (`[2^40, 0, 0]` would otherwise walk 2^40 empty matrices).
    if m == 0 || n == 0 {
        return out;
    }
    for bi in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let mut acc = T::default();
                for p in 0..k {
                    acc = step(bi * m * k + i * k + p, bi * k * n + p * n + j, acc);
                }
                out.push(acc);
            }
        }
    }
    out
}
