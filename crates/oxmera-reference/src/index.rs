//! Joining, indexing, padding and reordering.
//!
//! These ops move elements without doing arithmetic on them (scatter-add
//! aside), so each is written once, generically, over a [`Carrier`]: `f64`
//! holds every float value exactly and `i64` every integer and bool value,
//! so a value read and stored again is unchanged. Every function reads its
//! inputs in logical row-major order, computes positions with plain
//! multi-index arithmetic, and stores the result once.

use oxmera_core::{DType, Result, Shape};
use oxmera_tensor::{ScatterMode, Storage, Tensor};

use crate::read;

/// A plain element type that carries any value of a family of dtypes.
trait Carrier: Copy {
    fn read(x: &Tensor) -> Result<Vec<Self>>;
    fn store(dtype: DType, values: Vec<Self>) -> Storage;
    /// `value` (already exactly representable in the dtype) as a carrier.
    fn from_f64(value: f64) -> Self;
    /// Accumulation for scatter-add: exact in f64, wrapping in i64.
    fn accumulate(self, other: Self) -> Self;
}

impl Carrier for f64 {
    fn read(x: &Tensor) -> Result<Vec<f64>> {
        read::f64s(x)
    }
    fn store(dtype: DType, values: Vec<f64>) -> Storage {
        read::store_f64(dtype, values)
    }
    fn from_f64(value: f64) -> f64 {
        value
    }
    fn accumulate(self, other: f64) -> f64 {
        self + other
    }
}

impl Carrier for i64 {
    fn read(x: &Tensor) -> Result<Vec<i64>> {
        read::i64s(x)
    }
    fn store(dtype: DType, values: Vec<i64>) -> Storage {
        read::store_i64(dtype, values)
    }
    fn from_f64(value: f64) -> i64 {
        value as i64
    }
    fn accumulate(self, other: i64) -> i64 {
        self.wrapping_add(other)
    }
}

/// Runs the generic body with the carrier that fits `x`'s dtype.
macro_rules! by_carrier {
    ($x:expr, $f:ident ( $($arg:expr),* )) => {
        if read::is_float($x) {
            $f::<f64>($($arg),*)
        } else {
            $f::<i64>($($arg),*)
        }
    };
}

/// `(outer, extent, inner)`: the number of blocks before `dim`, its
/// extent, and the number of elements after it, for row-major data.
fn split_at_dim(dims: &[usize], dim: usize) -> (usize, usize, usize) {
    let outer = dims[..dim].iter().product();
    let inner = dims[dim + 1..].iter().product();
    (outer, dims[dim], inner)
}

pub(crate) fn cat(xs: &[&Tensor], dim: usize) -> Result<Storage> {
    debug_assert!(!xs.is_empty());
    by_carrier!(xs[0], cat_t(xs, dim))
}

fn cat_t<T: Carrier>(xs: &[&Tensor], dim: usize) -> Result<Storage> {
    let parts: Vec<Vec<T>> = xs.iter().map(|x| T::read(x)).collect::<Result<_>>()?;
    let (outer, _, inner) = split_at_dim(xs[0].dims(), dim);
    let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    // Row-major order visits, for each outer block, the members in turn;
    // each member contributes a run of `extent * inner` elements.
    for o in 0..outer {
        for (x, part) in xs.iter().zip(&parts) {
            let run = x.dims()[dim] * inner;
            out.extend_from_slice(&part[o * run..(o + 1) * run]);
        }
    }
    Ok(T::store(xs[0].dtype(), out))
}

pub(crate) fn index_select(x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
    by_carrier!(x, index_select_t(x, dim, indices))
}

fn index_select_t<T: Carrier>(x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
    let values = T::read(x)?;
    let picks = read::i64s(indices)?;
    let (outer, extent, inner) = split_at_dim(x.dims(), dim);
    let mut out = Vec::with_capacity(outer * picks.len() * inner);
    for o in 0..outer {
        for &p in &picks {
            let start = (o * extent + p as usize) * inner;
            out.extend_from_slice(&values[start..start + inner]);
        }
    }
    Ok(T::store(x.dtype(), out))
}

pub(crate) fn gather(x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
    by_carrier!(x, gather_t(x, dim, index))
}

fn gather_t<T: Carrier>(x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
    let values = T::read(x)?;
    let picks = read::i64s(index)?;
    let out_shape = index.shape();
    let mut out = Vec::with_capacity(picks.len());
    for (linear, &p) in picks.iter().enumerate() {
        // The output position, with its `dim` coordinate replaced by the
        // index found there, names the input element to copy.
        let mut at = out_shape.unravel(linear);
        at[dim] = p as usize;
        out.push(values[x.shape().ravel(&at)]);
    }
    Ok(T::store(x.dtype(), out))
}

pub(crate) fn scatter(
    x: &Tensor,
    dim: usize,
    index: &Tensor,
    src: &Tensor,
    mode: ScatterMode,
) -> Result<Storage> {
    by_carrier!(x, scatter_t(x, dim, index, src, mode))
}

fn scatter_t<T: Carrier>(
    x: &Tensor,
    dim: usize,
    index: &Tensor,
    src: &Tensor,
    mode: ScatterMode,
) -> Result<Storage> {
    debug_assert_eq!(index.dims(), src.dims());
    let mut out = T::read(x)?;
    let picks = read::i64s(index)?;
    let sources = T::read(src)?;
    // Source order is row-major over `index`, so for `Replace` the last
    // colliding write in that order is the one that stays.
    for (linear, (&p, &s)) in picks.iter().zip(&sources).enumerate() {
        let mut at = index.shape().unravel(linear);
        at[dim] = p as usize;
        let target = &mut out[x.shape().ravel(&at)];
        *target = match mode {
            ScatterMode::Replace => s,
            ScatterMode::Add => target.accumulate(s),
        };
    }
    Ok(T::store(x.dtype(), out))
}

pub(crate) fn pad(x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage> {
    by_carrier!(x, pad_t(x, pads, value))
}

fn pad_t<T: Carrier>(x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage> {
    debug_assert_eq!(pads.len(), x.rank());
    let values = T::read(x)?;
    let fill = T::from_f64(value);
    let out_shape = Shape::from(
        x.dims()
            .iter()
            .zip(pads)
            .map(|(&d, &(before, after))| before + d + after)
            .collect::<Vec<_>>(),
    );
    let out = (0..out_shape.numel())
        .map(|linear| {
            let at = out_shape.unravel(linear);
            // Shift back by the leading pad; a coordinate that falls
            // outside the input in any dim is padding.
            let inside: Option<Vec<usize>> = at
                .iter()
                .zip(pads)
                .zip(x.dims())
                .map(|((&i, &(before, _)), &d)| i.checked_sub(before).filter(|&j| j < d))
                .collect();
            inside.map_or(fill, |src| values[x.shape().ravel(&src)])
        })
        .collect();
    Ok(T::store(x.dtype(), out))
}

pub(crate) fn flip(x: &Tensor, dims: &[usize]) -> Result<Storage> {
    by_carrier!(x, flip_t(x, dims))
}

fn flip_t<T: Carrier>(x: &Tensor, dims: &[usize]) -> Result<Storage> {
    let values = T::read(x)?;
    let shape = x.shape();
    let out = (0..values.len())
        .map(|linear| {
            let mut at = shape.unravel(linear);
            for &d in dims {
                at[d] = shape.dim(d) - 1 - at[d];
            }
            values[shape.ravel(&at)]
        })
        .collect();
    Ok(T::store(x.dtype(), out))
}

pub(crate) fn triangle(x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage> {
    by_carrier!(x, triangle_t(x, diagonal, upper))
}

fn triangle_t<T: Carrier>(x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage> {
    debug_assert!(x.rank() >= 2);
    let values = T::read(x)?;
    let rank = x.rank();
    let zero = T::from_f64(0.0);
    let out = values
        .iter()
        .enumerate()
        .map(|(linear, &v)| {
            let at = x.shape().unravel(linear);
            // Element (row, col) lies on diagonal `col - row`: 0 is the main
            // diagonal, positive ones are above it.
            let offset = at[rank - 1] as i64 - at[rank - 2] as i64;
            let keep = if upper {
                offset >= diagonal
            } else {
                offset <= diagonal
            };
            if keep { v } else { zero }
        })
        .collect();
    Ok(T::store(x.dtype(), out))
}
