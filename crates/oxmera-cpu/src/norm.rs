//! Layer normalization, fused: one kernel per slice reads it for the mean,
//! again for the variance, and a third time to write the result — the
//! slice stays in cache, so memory sees one read and one write instead of
//! the composed form's five passes and four temporaries. Slices are the
//! trailing dims, so after one copy of a strided input they are runs of
//! consecutive elements, which go to threads.

use oxmera_core::{DType, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{Backend, Storage, Tensor};

use crate::{delegated, host, isa, reduce, simd, softmax::rows};

pub(crate) fn layer_norm(x: &Tensor, dims: usize, eps: f64) -> Result<Storage> {
    if x.numel() == 0 {
        return delegated(Reference.layer_norm(x, dims, eps));
    }
    let len: usize = x.dims()[x.rank() - dims..].iter().product();
    match x.dtype() {
        DType::F32 => {
            let isa = isa();
            let row = move |r: &[f32], o: &mut [f32]| simd::layer_norm_row(isa, r, o, eps);
            Ok(host::store(rows(&host::read::<f32>(x)?, len, &row)))
        }
        DType::F64 => {
            let row = move |r: &[f64], o: &mut [f64]| row_f64(r, o, eps);
            Ok(host::store(rows(&host::read::<f64>(x)?, len, &row)))
        }
        _ => delegated(Reference.layer_norm(x, dims, eps)),
    }
}

/// The `f64` row: the reference's formulas, with pairwise sums (the
/// squared deviations are staged in `out`, which the last pass overwrites).
fn row_f64(x: &[f64], out: &mut [f64], eps: f64) {
    let n = x.len() as f64;
    let mean = reduce::pairwise_sum(x) / n;
    for (o, &v) in out.iter_mut().zip(x) {
        *o = (v - mean) * (v - mean);
    }
    let std = (reduce::pairwise_sum(out) / n + eps).sqrt();
    for (o, &v) in out.iter_mut().zip(x) {
        *o = (v - mean) / std;
    }
}
