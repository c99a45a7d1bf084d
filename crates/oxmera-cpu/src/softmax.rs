//! Softmax and log-softmax, fused: one kernel per row reads the row, finds
//! its maximum, writes `e^(x - max)` while summing, and scales — no
//! intermediate tensors. Rows go to threads. A softmax along a dim other
//! than the last moves that dim last (one copy), runs over rows, and moves
//! it back (a second copy).

use oxmera_core::{DType, Layout, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{Backend, Element, Storage, Tensor};

use crate::{delegated, host, isa, reduce, simd, strided, threads};

pub(crate) fn softmax(x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
    match x.dtype() {
        DType::F32 => {
            let isa = isa();
            let row = move |r: &[f32], o: &mut [f32]| simd::softmax_row(isa, r, o, log);
            Ok(host::store(along::<f32>(x, dim, row)?))
        }
        DType::F64 => {
            let row = move |r: &[f64], o: &mut [f64]| row_f64(r, o, log);
            Ok(host::store(along::<f64>(x, dim, row)?))
        }
        _ => delegated(Reference.softmax(x, dim, log)),
    }
}

/// Applies `row` to every slice of `x` along `dim` (also the scans').
pub(crate) fn along<T: Element>(
    x: &Tensor,
    dim: usize,
    row: impl Fn(&[T], &mut [T]) + Sync,
) -> Result<Vec<T>> {
    let data = host::read::<T>(x)?;
    let dims = x.dims();
    let len = dims[dim];
    if x.numel() == 0 {
        return Ok(strided::zeros(0));
    }
    let inner: usize = dims[dim + 1..].iter().product();
    if inner == 1 {
        return Ok(rows(&data, len, &row));
    }
    let rank = dims.len() as isize;
    let perm: Vec<isize> = (0..rank)
        .filter(|&d| d != dim as isize)
        .chain([dim as isize])
        .collect();
    let moved_layout = Layout::contiguous(x.shape().clone()).permute("softmax", &perm)?;
    let moved = strided::gather(&data, &moved_layout);
    let result = rows(&moved, len, &row);
    // Undo the move: dim `d` of the result sits at position inv[d].
    let mut inv = vec![0isize; dims.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as isize;
    }
    let back = Layout::contiguous(moved_layout.shape().clone()).permute("softmax", &inv)?;
    Ok(strided::gather(&result, &back))
}

/// Applies `row` to each run of `len` consecutive elements, in parallel.
pub(crate) fn rows<T: Element>(
    data: &[T],
    len: usize,
    row: &(impl Fn(&[T], &mut [T]) + Sync),
) -> Vec<T> {
    let mut out = strided::output(data.len());
    for_rows(&mut out, len, |at, o| row(&data[at..at + len], o));
    out
}

/// Calls `row(start, out_row)` for each `len`-long row of `out` (`start`
/// its first element's position), rows grouped into tasks of about
/// [`threads::CHUNK`] elements, in parallel when `out` is worth splitting.
pub(crate) fn for_rows<T: Send>(
    out: &mut [T],
    len: usize,
    row: impl Fn(usize, &mut [T]) + Sync + Send,
) {
    let per_task = (threads::CHUNK / len).max(1) * len;
    let parallel = threads::worth_splitting(out.len());
    threads::for_each_chunk(out, per_task, parallel, |(t, chunk)| {
        for (i, o) in chunk.chunks_mut(len).enumerate() {
            row(t * per_task + i * len, o);
        }
    });
}

/// The `f64` row: the reference's formulas, with a pairwise sum.
fn row_f64(x: &[f64], out: &mut [f64], log: bool) {
    let m = x
        .iter()
        .copied()
        .reduce(|a, b| if a.is_nan() || a >= b { a } else { b })
        .unwrap_or(f64::NEG_INFINITY);
    for (o, &v) in out.iter_mut().zip(x) {
        *o = (v - m).exp();
    }
    let sum = reduce::pairwise_sum(out);
    if log {
        let ln_sum = sum.ln();
        for (o, &v) in out.iter_mut().zip(x) {
            *o = (v - m) - ln_sum;
        }
    } else {
        for o in out.iter_mut() {
            *o /= sum;
        }
    }
}
