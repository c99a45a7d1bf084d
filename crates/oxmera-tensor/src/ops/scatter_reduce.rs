//! Front end: `scatter_reduce`, as PyTorch's `x.scatter_reduce(dim, index,
//! src, reduce, include_self)` with `reduce` one of sum, prod, mean, amax
//! and amin — deterministic on every backend.
//!
//! A composite over the flattened tensors. The index is read to the host
//! (as `sort` reads its keys) to find each source's target position; the
//! positions do not depend on the values.
//!
//! - `sum` is `scatter_add` (onto `self`, or onto `self` with the targets
//!   zeroed when `include_self` is false); `mean` divides the targets by
//!   their counts (floor division for integers, as PyTorch).
//! - `prod`, `amax` and `amin` sort the sources by target (stably, on the
//!   host) and combine each target's run pairwise, `⌈log2(run)⌉` rounds of
//!   `index_select` and `mul`/`maximum`/`minimum`, then with `self`'s
//!   value, and `scatter` the results (distinct targets, so the order of
//!   writes does not matter).
//!
//! The gradients of sum, mean and prod are their parts' (prod's is the
//! product rule through the pairs: exact at zeros, no division). amax and
//! amin record PyTorch's rule instead — the gradient shared evenly among
//! the elements equal to the result — so ties match PyTorch's.

use oxmera_core::{DType, Error, Result, Shape};

use crate::{Tensor, no_grad};

const NAME: &str = "scatter_reduce";

/// The reduction of [`Tensor::scatter_reduce`], as PyTorch's `reduce`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterReduce {
    /// `"sum"`.
    Sum,
    /// `"prod"`.
    Prod,
    /// `"mean"`: the sum over the count (with `self` when included).
    Mean,
    /// `"amax"`: the largest; NaN propagates.
    Amax,
    /// `"amin"`: the smallest; NaN propagates.
    Amin,
}

impl ScatterReduce {
    /// PyTorch's name (`"sum"`, `"prod"`, `"mean"`, `"amax"`, `"amin"`).
    pub fn name(self) -> &'static str {
        match self {
            ScatterReduce::Sum => "sum",
            ScatterReduce::Prod => "prod",
            ScatterReduce::Mean => "mean",
            ScatterReduce::Amax => "amax",
            ScatterReduce::Amin => "amin",
        }
    }

    /// The reduction PyTorch calls `name`, if any.
    pub fn from_name(name: &str) -> Option<ScatterReduce> {
        use ScatterReduce::*;
        [Sum, Prod, Mean, Amax, Amin]
            .into_iter()
            .find(|r| r.name() == name)
    }

    fn combine(self, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        match self {
            ScatterReduce::Prod => a.mul(b),
            ScatterReduce::Amax => a.maximum(b),
            ScatterReduce::Amin => a.minimum(b),
            ScatterReduce::Sum | ScatterReduce::Mean => a.add(b),
        }
    }
}

/// Where the flattened sources go: `targets[p]` is the flat position in
/// `self` of index element `p` (row-major); `hits` the distinct targets in
/// ascending order with the sources of each, in source order.
struct Plan {
    targets: Vec<i64>,
    hits: Vec<i64>,
    runs: Vec<Vec<i64>>,
}

fn plan(x: &Tensor, d: usize, index: &Tensor) -> Result<Plan> {
    let idx = index.to_dtype(DType::I64)?.to_vec::<i64>()?;
    let (xd, id) = (x.dims(), index.dims());
    let mut stride = vec![1usize; xd.len()];
    for k in (0..xd.len().saturating_sub(1)).rev() {
        stride[k] = stride[k + 1] * xd[k + 1];
    }
    let mut coord = vec![0usize; id.len()];
    let mut targets = Vec::with_capacity(idx.len());
    for &v in &idx {
        let t: usize = (0..id.len())
            .map(|k| if k == d { v as usize } else { coord[k] } * stride[k])
            .sum();
        targets.push(t as i64);
        for k in (0..id.len()).rev() {
            coord[k] += 1;
            if coord[k] < id[k] {
                break;
            }
            coord[k] = 0;
        }
    }
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&p| targets[p]);
    let (mut hits, mut runs): (Vec<i64>, Vec<Vec<i64>>) = (Vec::new(), Vec::new());
    for p in order {
        if hits.last() != Some(&targets[p]) {
            hits.push(targets[p]);
            runs.push(Vec::new());
        }
        runs.last_mut().expect("pushed above").push(p as i64);
    }
    Ok(Plan {
        targets,
        hits,
        runs,
    })
}

impl Tensor {
    /// `self` with the values of `src` reduced into the positions `index`
    /// names along `dim`, as `x.scatter_reduce(dim, index, src, reduce,
    /// include_self)`: for `dim == 0` of a 2-D tensor, `src[i][j]` joins
    /// the reduction at `out[index[i][j]][j]`. With `include_self` the
    /// value of `self` there joins too; without, a position some source
    /// reaches holds only the sources' reduction. Positions no source
    /// reaches keep `self`'s value. `mean` divides by the count (floor
    /// division for integers); `amax`/`amin` propagate NaN.
    ///
    /// The shapes, index dtypes (`i64`/`i32`) and ranges are
    /// [`Tensor::scatter`]'s, with its errors named `scatter_reduce`; bool
    /// is [`Error::UnsupportedDType`]. The result is the same on every
    /// backend and run (the index is read to the host to plan it).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{ScatterReduce, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], Device::Reference)?;
    /// let i = Tensor::from_vec(vec![0i64, 2, 0, 2], [4], Device::Reference)?;
    /// let s = Tensor::from_vec(vec![4.0f32, 5.0, 6.0, 7.0], [4], Device::Reference)?;
    /// let r = |reduce, include_self| x.scatter_reduce(0, &i, &s, reduce, include_self)?.to_vec::<f32>();
    /// assert_eq!(r(ScatterReduce::Sum, true)?, [11.0, 2.0, 15.0]);
    /// assert_eq!(r(ScatterReduce::Prod, false)?, [24.0, 2.0, 35.0]);
    /// assert_eq!(r(ScatterReduce::Mean, true)?, [11.0 / 3.0, 2.0, 5.0]);
    /// assert_eq!(r(ScatterReduce::Amax, true)?, [6.0, 2.0, 7.0]);
    /// assert_eq!(r(ScatterReduce::Amin, false)?, [4.0, 2.0, 5.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn scatter_reduce(
        &self,
        dim: isize,
        index: &Tensor,
        src: &Tensor,
        reduce: ScatterReduce,
        include_self: bool,
    ) -> Result<Tensor> {
        let (d, index, block) = self.scatter_checks(NAME, dim, index, src)?;
        if self.dtype() == DType::Bool {
            return Err(Error::UnsupportedDType {
                op: NAME,
                dtype: DType::Bool,
                hint: "cast to an integer or float dtype first",
            });
        }
        if index.numel() == 0 {
            return Ok(self.clone());
        }
        let plan = plan(self, d, &index)?;
        let device = self.device();
        let n = plan.targets.len();
        let x_f = self.reshape([self.numel()])?;
        let s_f = block.reshape([n])?;
        let hits = Tensor::from_vec(plan.hits.clone(), [plan.hits.len()], device)?;
        let targets = Tensor::from_vec(plan.targets.clone(), [n], device)?;
        match reduce {
            ScatterReduce::Sum | ScatterReduce::Mean => {
                let base = if include_self {
                    x_f.clone()
                } else {
                    let zeros = Tensor::zeros([plan.hits.len()], self.dtype(), device)?;
                    x_f.scatter(0, &hits, &zeros)?
                };
                let sum = base.scatter_add(0, &targets, &s_f)?;
                let out = if reduce == ScatterReduce::Mean {
                    let counts: Vec<f64> = plan
                        .runs
                        .iter()
                        .map(|r| (r.len() + usize::from(include_self)) as f64)
                        .collect();
                    let counts =
                        super::host_floats(counts, [plan.hits.len()], self.dtype(), device)?;
                    let means = sum.index_select(0, &hits)?.div(&counts)?;
                    sum.scatter(0, &hits, &means)?
                } else {
                    sum
                };
                out.reshape(self.shape().clone())
            }
            ScatterReduce::Prod => pairwise(&x_f, &s_f, &hits, &plan, reduce, include_self)?
                .reshape(self.shape().clone()),
            ScatterReduce::Amax | ScatterReduce::Amin => {
                let out = no_grad(|| pairwise(&x_f, &s_f, &hits, &plan, reduce, include_self))?;
                let out = out.reshape(self.shape().clone())?;
                Ok(extreme_grad(
                    self,
                    src,
                    &block,
                    &targets,
                    &hits,
                    include_self,
                    out,
                ))
            }
        }
    }
}

/// `x_f` with each hit position set to the reduction of its run of
/// sources (and of `x_f`'s own value with `include_self`), combining the
/// run pairwise.
fn pairwise(
    x_f: &Tensor,
    s_f: &Tensor,
    hits: &Tensor,
    plan: &Plan,
    reduce: ScatterReduce,
    include_self: bool,
) -> Result<Tensor> {
    let device = x_f.device();
    let order: Vec<i64> = plan.runs.iter().flatten().copied().collect();
    let mut v = s_f.index_select(0, &Tensor::from_vec(order.clone(), [order.len()], device)?)?;
    let mut lens: Vec<usize> = plan.runs.iter().map(Vec::len).collect();
    while lens.iter().any(|&l| l > 1) {
        let (mut left, mut right, mut pair) = (Vec::new(), Vec::new(), Vec::new());
        let mut start = 0;
        for l in &mut lens {
            for j in 0..l.div_ceil(2) {
                let a = start + 2 * j;
                let two = 2 * j + 1 < *l;
                left.push(a as i64);
                right.push(if two { a + 1 } else { a } as i64);
                pair.push(two);
            }
            start += *l;
            *l = l.div_ceil(2);
        }
        let m = left.len();
        let a = v.index_select(0, &Tensor::from_vec(left, [m], device)?)?;
        let b = v.index_select(0, &Tensor::from_vec(right, [m], device)?)?;
        let pair = Tensor::from_vec(pair, [m], device)?;
        v = Tensor::where_(&pair, &reduce.combine(&a, &b)?, &a)?;
    }
    if include_self {
        v = reduce.combine(&x_f.index_select(0, hits)?, &v)?;
    }
    x_f.scatter(0, hits, &v)
}

/// Records PyTorch's amax/amin rule on `out`: the gradient of each output
/// shared evenly among the elements equal to it — `self`'s own (when
/// included) and the sources' — and `self`'s gradient passed through where
/// no source reaches. (PyTorch also counts an excluded `self` that happens
/// to equal the result, halving the sources' share; here it does not.)
fn extreme_grad(
    x: &Tensor,
    src: &Tensor,
    block: &Tensor,
    targets: &Tensor,
    hits: &Tensor,
    include_self: bool,
    out: Tensor,
) -> Tensor {
    let (xd, bd, od) = (x.detach(), block.detach(), out.detach());
    let (targets, hits) = (targets.clone(), hits.clone());
    let (x_shape, src_dims) = (x.shape().clone(), src.dims().to_vec());
    let block_dims = block.dims().to_vec();
    crate::autograd::record(out, NAME, &[x, src], move |g| {
        let dtype = xd.dtype();
        let x_f = xd.reshape([xd.numel()])?;
        let o_f = od.reshape([od.numel()])?;
        let s_f = bd.reshape([bd.numel()])?;
        let g_f = g.reshape([g.numel()])?;
        let mut self_is = x_f.eq(&o_f)?.to_dtype(dtype)?;
        if !include_self {
            let zeros = Tensor::zeros([hits.numel()], dtype, xd.device())?;
            self_is = self_is.scatter(0, &hits, &zeros)?;
        }
        let src_is = s_f.eq(&o_f.index_select(0, &targets)?)?.to_dtype(dtype)?;
        let count = self_is.scatter_add(0, &targets, &src_is)?;
        let share = g_f.div(&count)?;
        let g_self = self_is.mul(&share)?.reshape(x_shape.clone())?;
        let g_block = src_is
            .mul(&share.index_select(0, &targets)?)?
            .reshape(Shape::from(block_dims.clone()))?;
        let pads: Vec<(usize, usize)> = src_dims
            .iter()
            .zip(&block_dims)
            .map(|(&s, &b)| (0, s - b))
            .collect();
        let g_src = if pads.iter().all(|p| p.1 == 0) {
            g_block
        } else {
            g_block.pad(&pads, 0.0)?
        };
        Ok(vec![Some(g_self), Some(g_src)])
    })
}
