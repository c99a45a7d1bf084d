//! Batched matrix products on the GEMM.
//!
//! Each batch entry is a [`gemm`] call on views of the operands: the
//! batch offsets come from the batch dims' strides (0 for a broadcast
//! operand, so nothing is copied), and the matrices' own strides go to
//! the packing routines (so a transposed operand is not copied either).
//! Many small products run one per thread; a few large ones each use all
//! threads.

use half::{bf16, f16};
use oxmera_core::{DType, Layout, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{Backend, Element, Storage, Tensor};
use rayon::prelude::*;

use crate::gemm::{MatRef, PARALLEL_MIN_FLOPS, Scalar, gemm};
use crate::host::Computed;
use crate::{Isa, delegated, host, isa, strided, threads};

pub(crate) fn matmul(a: &Tensor, b: &Tensor) -> Result<Storage> {
    let isa = isa();
    match a.dtype() {
        DType::F32 => Ok(host::store(batched::<f32>(
            isa,
            (host::buffer(a)?, a.layout()),
            (host::buffer(b)?, b.layout()),
        ))),
        DType::F64 => Ok(host::store(batched::<f64>(
            isa,
            (host::buffer(a)?, a.layout()),
            (host::buffer(b)?, b.layout()),
        ))),
        DType::F16 => Ok(host::store(via_f32::<f16>(isa, a, b)?)),
        DType::BF16 => Ok(host::store(via_f32::<bf16>(isa, a, b)?)),
        _ => delegated(Reference.matmul(a, b)),
    }
}

/// Half-precision products in `f32`, rounded once at the end.
fn via_f32<T: Computed<In = f32>>(isa: Isa, a: &Tensor, b: &Tensor) -> Result<Vec<T>> {
    let (wa, wb) = (T::load(a)?, T::load(b)?);
    let (la, lb) = (
        Layout::contiguous(a.shape().clone()),
        Layout::contiguous(b.shape().clone()),
    );
    let out = batched::<f32>(isa, (&wa, &la), (&wb, &lb));
    Ok(T::finish(out))
}

/// `[..., m, k] @ [..., k, n]` with identical batch dims, as views.
pub(crate) fn batched<T: Scalar + Element>(
    isa: Isa,
    (a, la): (&[T], &Layout),
    (b, lb): (&[T], &Layout),
) -> Vec<T> {
    let rank = la.rank();
    let (m, k, n) = (
        la.dims()[rank - 2],
        la.dims()[rank - 1],
        lb.dims()[rank - 1],
    );
    let batch: usize = la.dims()[..rank - 2].iter().product();
    let mut out = strided::output::<T>(batch * m * n);
    if m * n == 0 {
        return out;
    }
    let one = |(bi, c): (usize, &mut [T]), parallel: bool| {
        let (va, vb) = (view(a, la, bi), view(b, lb, bi));
        gemm(isa, m, n, k, va, vb, c, parallel);
    };
    // Small products go to threads whole, one per batch element: no
    // fork-join per product. Twice the GEMM's own threshold, which it
    // was before operands read in place made threads pay from 128³ (a
    // batch of such products still splits better by entries).
    let small = m * n * k < 2 * PARALLEL_MIN_FLOPS;
    if batch > 1 && small && threads::worth_splitting(batch * m * n * k / 8) {
        threads::run(|| {
            out.par_chunks_mut(m * n)
                .enumerate()
                .for_each(|job| one(job, false))
        });
    } else {
        out.chunks_mut(m * n)
            .enumerate()
            .for_each(|job| one(job, true));
    }
    out
}

/// Batch entry `bi` of the matrices `(data, l)` describes (the last two
/// dims are the matrix, the others the batch).
fn view<'d, T>(data: &'d [T], l: &Layout, bi: usize) -> MatRef<'d, T> {
    let (dims, s) = (l.dims(), l.strides().as_slice());
    let rank = dims.len();
    let mut rest = bi;
    let mut offset = l.offset();
    for d in (0..rank - 2).rev() {
        offset += (rest % dims[d]) * s[d];
        rest /= dims[d];
    }
    MatRef {
        data,
        offset,
        row_stride: s[rank - 2],
        col_stride: s[rank - 1],
    }
}
