//! Rules of the ops that move elements without arithmetic: views,
//! joining, indexing, padding, flipping, triangles; and of convolution and
//! pooling, whose backward kernels the backends provide.

use oxmera_core::{Result, Shape};

use crate::autograd::{record, record_unary};
use crate::{Conv2dParams, Pool2dParams, ScatterMode, Tensor};

/// Sums `g` down to `shape`, undoing a broadcast: leading dims that
/// broadcasting added, and dims that were stretched from 1, are summed.
pub(crate) fn sum_to_shape(g: &Tensor, shape: &Shape) -> Result<Tensor> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let lead = g.rank() - shape.rank();
    let dims: Vec<isize> = (0..g.rank())
        .filter(|&i| i < lead || (shape.dim(i - lead) == 1 && g.dims()[i] != 1))
        .map(|i| i as isize)
        .collect();
    g.sum(&dims, true)?.reshape(shape.clone())
}

/// Records a view (or copy) with the same elements in the same order
/// under another shape: reshape, view, flatten, squeeze, unsqueeze.
pub(crate) fn reshape(name: &'static str, x: &Tensor, out: Tensor) -> Tensor {
    let shape = x.shape().clone();
    record_unary(out, name, x, move |g| g.reshape(shape.clone()))
}

/// Records an op whose gradient passes through unchanged (`contiguous`).
pub(crate) fn identity(name: &'static str, x: &Tensor, out: Tensor) -> Tensor {
    record_unary(out, name, x, |g| Ok(g.clone()))
}

/// Records a permutation of dims (`perm[i]` is the source of dim `i`).
pub(crate) fn permute(name: &'static str, x: &Tensor, perm: Vec<usize>, out: Tensor) -> Tensor {
    let mut inverse = vec![0isize; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i as isize;
    }
    record_unary(out, name, x, move |g| g.permute(&inverse))
}

/// Records `broadcast_to`/`expand`: the gradient is summed back.
pub(crate) fn broadcast(name: &'static str, x: &Tensor, out: Tensor) -> Tensor {
    let shape = x.shape().clone();
    record_unary(out, name, x, move |g| sum_to_shape(g, &shape))
}

/// Records `slice(dim, start, end, step)` (and `narrow`, with step 1):
/// the gradient is put back at the kept positions, zeros elsewhere.
pub(crate) fn slice(
    name: &'static str,
    x: &Tensor,
    dim: usize,
    start: usize,
    step: usize,
    out: Tensor,
) -> Tensor {
    let shape = x.shape().clone();
    record_unary(out, name, x, move |g| unslice(g, &shape, dim, start, step))
}

/// The inverse of a stepped slice: `g` spread back into zeros of `shape`.
///
/// With step `s`, each kept element is followed by `s - 1` skipped ones, so
/// the gradient is `g` with `s - 1` zeros padded after every element along
/// `dim` (an unsqueeze, a pad and a reshape), then trimmed and padded to
/// the original extent.
fn unslice(g: &Tensor, shape: &Shape, dim: usize, start: usize, step: usize) -> Result<Tensor> {
    let n = shape.dim(dim);
    let count = g.dims()[dim];
    if count == 0 {
        return Tensor::zeros(shape.clone(), g.dtype(), g.device());
    }
    let mut spread = g.clone();
    if step > 1 {
        let mut pads = vec![(0, 0); g.rank() + 1];
        pads[dim + 1] = (0, step - 1);
        let mut dims = g.dims().to_vec();
        dims[dim] = count * step;
        spread = g
            .unsqueeze(dim as isize + 1)?
            .pad(&pads, 0.0)?
            .reshape(dims)?;
    }
    let covered = (count - 1) * step + 1;
    let spread = spread.narrow(dim as isize, 0, covered)?;
    let mut pads = vec![(0, 0); g.rank()];
    pads[dim] = (start, n - start - covered);
    spread.pad(&pads, 0.0)
}

/// Records `cat` along `dim`: each input gets its slice of the gradient.
pub(crate) fn cat(xs: &[&Tensor], dim: usize, out: Tensor) -> Tensor {
    let lens: Vec<usize> = xs.iter().map(|x| x.dims()[dim]).collect();
    record(out, "cat", xs, move |g| {
        let mut start = 0;
        let mut grads = Vec::with_capacity(lens.len());
        for &len in &lens {
            grads.push(Some(g.narrow(dim as isize, start, len)?));
            start += len;
        }
        Ok(grads)
    })
}

/// An `i64` index of `g`'s shape holding, along `dim`, the entries of the
/// rank-1 `indices` (for `index_select`'s backward, which scatters).
fn expand_index(indices: &Tensor, dim: usize, like: &Tensor) -> Result<Tensor> {
    let mut dims = vec![1; like.rank()];
    dims[dim] = indices.numel();
    indices
        .reshape(dims)?
        .broadcast_to(like.shape().clone())?
        .contiguous()
}

/// Records `index_select`: gradients of repeated indices accumulate.
pub(crate) fn index_select(x: &Tensor, dim: usize, indices: &Tensor, out: Tensor) -> Tensor {
    let shape = x.shape().clone();
    let idx = indices.detach();
    record_unary(out, "index_select", x, move |g| {
        let index = expand_index(&idx, dim, g)?;
        Tensor::zeros(shape.clone(), g.dtype(), g.device())?.scatter_add(dim as isize, &index, g)
    })
}

/// Records `gather`: gradients of repeated indices accumulate.
pub(crate) fn gather(x: &Tensor, dim: usize, index: &Tensor, out: Tensor) -> Tensor {
    let shape = x.shape().clone();
    let idx = index.detach();
    record_unary(out, "gather", x, move |g| {
        Tensor::zeros(shape.clone(), g.dtype(), g.device())?.scatter_add(dim as isize, &idx, g)
    })
}

/// Records `scatter`/`scatter_add` of (the index-shaped corner of) `src`
/// into `x`. With `Replace`, positions that were overwritten pass no
/// gradient to `x`, and each `src` element gets the gradient of the
/// position it was written to (when an index repeats, every writer gets
/// it: which one won is a backend detail the gradient does not model).
pub(crate) fn scatter(
    x: &Tensor,
    dim: usize,
    index: &Tensor,
    src: &Tensor,
    mode: ScatterMode,
    out: Tensor,
) -> Tensor {
    let idx = index.detach();
    let name = match mode {
        ScatterMode::Replace => "scatter",
        ScatterMode::Add => "scatter_add",
    };
    record(out, name, &[x, src], move |g| {
        let d = dim as isize;
        let gx = match mode {
            ScatterMode::Add => g.clone(),
            ScatterMode::Replace => {
                let zeros = Tensor::zeros(idx.shape().clone(), g.dtype(), g.device())?;
                g.scatter(d, &idx, &zeros)?
            }
        };
        Ok(vec![Some(gx), Some(g.gather(d, &idx)?)])
    })
}

/// Records `pad`: the gradient is the unpadded middle.
pub(crate) fn pad(x: &Tensor, pads: &[(usize, usize)], out: Tensor) -> Tensor {
    let before: Vec<usize> = pads.iter().map(|p| p.0).collect();
    let dims = x.dims().to_vec();
    record_unary(out, "pad", x, move |g| {
        let mut t = g.clone();
        for (d, (&b, &n)) in before.iter().zip(&dims).enumerate() {
            t = t.narrow(d as isize, b, n)?;
        }
        Ok(t)
    })
}

/// Records `flip`: the gradient is flipped back.
pub(crate) fn flip(x: &Tensor, dims: &[usize], out: Tensor) -> Tensor {
    let dims: Vec<isize> = dims.iter().map(|&d| d as isize).collect();
    record_unary(out, "flip", x, move |g| g.flip(&dims))
}

/// Records `tril`/`triu`: the gradient keeps the same triangle.
pub(crate) fn triangle(x: &Tensor, diagonal: i64, upper: bool, out: Tensor) -> Tensor {
    let name = if upper { "triu" } else { "tril" };
    record_unary(out, name, x, move |g| {
        if upper {
            g.triu(diagonal)
        } else {
            g.tril(diagonal)
        }
    })
}

/// Records `conv2d` over input, weight and optional bias.
pub(crate) fn conv2d(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    params: Conv2dParams,
    out: Tensor,
) -> Tensor {
    let (xd, wd) = (x.detach(), weight.detach());
    let has_bias = bias.is_some();
    let mut inputs = vec![x, weight];
    inputs.extend(bias);
    record(out, "conv2d", &inputs, move |g| {
        let g = g.contiguous()?;
        let (gx, gw) = xd.backend()?.conv2d_backward(&xd, &wd, &g, params)?;
        let mut grads = vec![
            Some(Tensor::from_storage(gx, xd.shape().clone())),
            Some(Tensor::from_storage(gw, wd.shape().clone())),
        ];
        if has_bias {
            // The bias gradient sums over batch and positions.
            grads.push(Some(g.sum(&[0, 2, 3], false)?));
        }
        Ok(grads)
    })
}

/// Records `max_pool2d` (`max == true`) or `avg_pool2d`.
pub(crate) fn pool2d(x: &Tensor, params: Pool2dParams, max: bool, out: Tensor) -> Tensor {
    let xd = x.detach();
    let name = if max { "max_pool2d" } else { "avg_pool2d" };
    record_unary(out, name, x, move |g| {
        let g = g.contiguous()?;
        let backend = xd.backend()?;
        let storage = if max {
            backend.max_pool2d_backward(&xd, &g, params)?
        } else {
            backend.avg_pool2d_backward(&xd, &g, params)?
        };
        Ok(Tensor::from_storage(storage, xd.shape().clone()))
    })
}
