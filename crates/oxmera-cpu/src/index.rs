//! Indexing: `index_select` (embedding lookups), `gather` (picking the
//! target class's log-probability) and `scatter` (their gradients), for
//! every dtype.
//!
//! `index_select` copies whole contiguous runs. `gather` and `scatter`
//! walk the index tensor's shape over the input's strides with the
//! indexed dim's stride set to 0 (so the walk yields the position of each
//! element's slice), then add `index × stride`. `scatter` runs in the
//! index's row-major order on one thread, which is what makes "the last
//! colliding write wins" and the order of colliding additions exactly the
//! reference's; its additions are carried in `f64` (floats) or wrapping
//! `i64` (integers) and rounded once, as the reference does.

use oxmera_core::{Layout, Result};
use oxmera_tensor::{Element, ScatterMode, Storage, Tensor};
use rayon::prelude::*;

use crate::strided::{self, Walk};
use crate::{host, threads};

pub(crate) fn index_select(x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
    let picks = host::read::<i64>(indices)?;
    by_dtype!(x.dtype(), T => Ok(host::store(select::<T>(x, dim, &picks)?)))
}

fn select<T: Element>(x: &Tensor, dim: usize, picks: &[i64]) -> Result<Vec<T>> {
    let values = host::read::<T>(x)?;
    let dims = x.dims();
    let outer: usize = dims[..dim].iter().product();
    let (extent, inner): (usize, usize) = (dims[dim], dims[dim + 1..].iter().product());
    let mut out = strided::output::<T>(outer * picks.len() * inner);
    if out.is_empty() {
        return Ok(out);
    }
    // Output row r is input row (r / picks, picks[r % picks]).
    let rows_per_task = (threads::CHUNK / inner).max(1);
    let task = |(t, chunk): (usize, &mut [T])| {
        for (i, dst) in chunk.chunks_mut(inner).enumerate() {
            let r = t * rows_per_task + i;
            let (o, p) = (r / picks.len(), picks[r % picks.len()] as usize);
            let start = (o * extent + p) * inner;
            dst.copy_from_slice(&values[start..start + inner]);
        }
    };
    if threads::worth_splitting(out.len()) {
        threads::run(|| {
            out.par_chunks_mut(rows_per_task * inner)
                .enumerate()
                .for_each(task)
        });
    } else {
        out.chunks_mut(rows_per_task * inner)
            .enumerate()
            .for_each(task);
    }
    Ok(out)
}

/// The layout that walks `index`'s shape over `x`'s strides with `dim`'s
/// stride zeroed, and `x`'s stride of `dim`.
fn slice_walk(x: &Layout, index: &Tensor, dim: usize) -> (Layout, usize) {
    let mut strides = x.strides().as_slice().to_vec();
    let along = strides[dim];
    strides[dim] = 0;
    (
        Layout::new(index.shape().clone(), strides, x.offset()),
        along,
    )
}

pub(crate) fn gather(x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
    by_dtype!(x.dtype(), T => Ok(host::store(gather_as::<T>(x, dim, index)?)))
}

fn gather_as<T: Element>(x: &Tensor, dim: usize, index: &Tensor) -> Result<Vec<T>> {
    let values = host::buffer::<T>(x)?;
    let picks = host::buffer::<i64>(index)?;
    let (base, along) = slice_walk(x.layout(), index, dim);
    Ok(gather_walk(values, picks, &base, index.layout(), along))
}

/// `out[i] = values[base(i) + index(i) * along]` over the index's shape.
fn gather_walk<T: Element>(
    values: &[T],
    picks: &[i64],
    base: &Layout,
    index: &Layout,
    along: usize,
) -> Vec<T> {
    let mut out = strided::output::<T>(index.numel());
    let walk = Walk::new([base, index]);
    let [sb, si] = walk.inner_strides();
    strided::fill(&mut out, |start, chunk| {
        walk.runs(start, start + chunk.len(), |pos, len, [ob, oi]| {
            for (t, d) in chunk[pos - start..pos - start + len].iter_mut().enumerate() {
                let p = picks[oi + t * si] as usize;
                *d = values[ob + t * sb + p * along];
            }
        });
    });
    out
}

pub(crate) fn scatter(
    x: &Tensor,
    dim: usize,
    index: &Tensor,
    src: &Tensor,
    mode: ScatterMode,
) -> Result<Storage> {
    by_dtype!(x.dtype(), T => Ok(host::store(scatter_as::<T>(x, dim, index, src, mode)?)))
}

fn scatter_as<T: Element>(
    x: &Tensor,
    dim: usize,
    index: &Tensor,
    src: &Tensor,
    mode: ScatterMode,
) -> Result<Vec<T>> {
    let mut out = host::read::<T>(x)?.into_owned();
    let target = Layout::contiguous(x.shape().clone());
    let (base, along) = slice_walk(&target, index, dim);
    let picks = host::buffer::<i64>(index)?;
    let sources = host::buffer::<T>(src)?;
    let walk = Walk::new([&base, index.layout(), src.layout()]);
    let [sb, si, ss] = walk.inner_strides();
    let visit = |mut f: Box<dyn FnMut(usize, T) + '_>| {
        walk.runs(0, index.numel(), |_, len, [ob, oi, os]| {
            for t in 0..len {
                let at = ob + t * sb + picks[oi + t * si] as usize * along;
                f(at, sources[os + t * ss]);
            }
        });
    };
    match mode {
        ScatterMode::Replace => visit(Box::new(|at, v| out[at] = v)),
        ScatterMode::Add if T::DTYPE.is_float() => {
            let mut wide: Vec<f64> = out.iter().map(|v| v.to_f64()).collect();
            visit(Box::new(|at, v| wide[at] += v.to_f64()));
            out = wide.into_iter().map(T::from_f64).collect();
        }
        ScatterMode::Add => {
            let mut wide: Vec<i64> = out.iter().map(|v| v.to_i64()).collect();
            visit(Box::new(|at, v| {
                wide[at] = wide[at].wrapping_add(v.to_i64())
            }));
            out = wide.into_iter().map(T::from_i64).collect();
        }
    }
    Ok(out)
}

/// `x` inside a border of `value`: `pads[d] = (before, after)` per dim.
/// Every element of the result is written once — the border filled, then
/// each innermost row of `x` copied to its place — where the reference
/// computes a coordinate per element.
pub(crate) fn pad(x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage> {
    by_dtype!(x.dtype(), T => Ok(host::store(pad_t::<T>(x, pads, value)?)))
}

fn pad_t<T: Element>(x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Vec<T>> {
    let values = host::read::<T>(x)?;
    let dims = x.dims();
    let out_dims: Vec<usize> = dims
        .iter()
        .zip(pads)
        .map(|(&d, &(before, after))| before + d + after)
        .collect();
    let mut out = vec![T::from_f64(value); out_dims.iter().product()];
    let Some(&row) = dims.last() else {
        // Rank 0: nothing to pad around.
        return Ok(values.into_owned());
    };
    if values.is_empty() || row == 0 {
        return Ok(out);
    }
    // Row-major strides of the output, and where x's first element lands.
    let mut strides = vec![1usize; out_dims.len()];
    for d in (0..out_dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * out_dims[d + 1];
    }
    let base: usize = pads.iter().zip(&strides).map(|(p, s)| p.0 * s).sum();
    let lead = &dims[..dims.len() - 1];
    let mut index = vec![0usize; lead.len()];
    for src in values.chunks_exact(row) {
        let at = base
            + index
                .iter()
                .zip(&strides)
                .map(|(i, s)| i * s)
                .sum::<usize>();
        out[at..at + row].copy_from_slice(src);
        // The next row's coordinates: an odometer over the leading dims.
        for d in (0..lead.len()).rev() {
            index[d] += 1;
            if index[d] < lead[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(out)
}
