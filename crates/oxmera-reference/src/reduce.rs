//! Reductions, softmax and layer normalization.
//!
//! All three start the same way: the input's elements are partitioned into
//! *groups*, one per element of the keepdim-shaped output, each listing the
//! input positions that reduce into it in row-major order. A reduction then
//! folds each group; a softmax or a layer normalization normalises each
//! group and writes the results back to the positions it came from.
//! Floats are folded in `f64` and rounded once at the end; integers in
//! `i64`, wrapping.

use oxmera_core::{DType, Error, Result, Shape};
use oxmera_tensor::{ReduceOp, ScanOp, Storage, Tensor, keepdim_shape};

use crate::read;

/// Reduces `x` over `dims` into a keepdim-shaped result of `out`.
///
/// The front end has rejected float-only ops on integers and empty extents
/// for ops without an identity, so the `expect`s below guard invariants.
pub(crate) fn reduce(op: ReduceOp, x: &Tensor, dims: &[usize], out: DType) -> Result<Storage> {
    let groups = groups(x.shape(), dims);
    if read::is_float(x) {
        reduce_f64(op, &read::f64s(x)?, &groups, out)
    } else {
        Ok(reduce_i64(op, &read::i64s(x)?, &groups, out))
    }
}

/// Softmax (or log-softmax) of each slice of `x` along `dim`.
pub(crate) fn softmax(x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
    let xs = read::f64s(x)?;
    let mut out = vec![0.0; xs.len()];
    for group in element_groups(x.shape(), &[dim]) {
        // Shifting by the maximum makes the largest exponent exp(0) = 1, so
        // nothing overflows and at least one term of the sum is 1. A slice
        // of only -inf has max -inf and -inf - -inf = NaN: the result is
        // NaN there, which is PyTorch's answer too.
        let m = max_f64(group.iter().map(|&i| xs[i])).unwrap_or(f64::NEG_INFINITY);
        let sum: f64 = group.iter().map(|&i| (xs[i] - m).exp()).sum();
        for &i in &group {
            out[i] = if log {
                (xs[i] - m) - sum.ln()
            } else {
                (xs[i] - m).exp() / sum
            };
        }
    }
    Ok(read::store_f64(x.dtype(), out))
}

/// The inclusive scan of each slice of `x` along `dim`, into `out`:
/// floats folded in `f64` in order, each prefix rounded once; integers and
/// bool in `i64`, wrapping on store. `logcumsumexp` is defined for floats
/// only ([`Error::UnsupportedDType`] otherwise).
pub(crate) fn scan(op: ScanOp, x: &Tensor, dim: usize, out: DType) -> Result<Storage> {
    if op == ScanOp::LogSumExp && !read::is_float(x) {
        return Err(Error::UnsupportedDType {
            op: op.name(),
            dtype: x.dtype(),
            hint: "cast to a float dtype first",
        });
    }
    let groups = element_groups(x.shape(), &[dim]);
    if read::is_float(x) {
        let xs = read::f64s(x)?;
        let mut ys = vec![0.0; xs.len()];
        for group in groups {
            let mut acc = scan_identity(op);
            for i in group {
                acc = scan_step(op, acc, xs[i]);
                ys[i] = acc;
            }
        }
        Ok(read::store_f64(out, ys))
    } else {
        let xs = read::i64s(x)?;
        let mut ys = vec![0; xs.len()];
        for group in groups {
            let mut acc: i64 = if op == ScanOp::Sum { 0 } else { 1 };
            for i in group {
                acc = match op {
                    ScanOp::Sum => acc.wrapping_add(xs[i]),
                    ScanOp::Prod => acc.wrapping_mul(xs[i]),
                    ScanOp::LogSumExp => unreachable!("rejected above"),
                };
                ys[i] = acc;
            }
        }
        Ok(read::store_i64(out, ys))
    }
}

/// The value a float scan starts from: 0, 1, or `-inf` (the log of an
/// empty sum).
pub fn scan_identity(op: ScanOp) -> f64 {
    match op {
        ScanOp::Sum => 0.0,
        ScanOp::Prod => 1.0,
        ScanOp::LogSumExp => f64::NEG_INFINITY,
    }
}

/// One step of a float scan: the running value `acc` with `x` folded in.
pub fn scan_step(op: ScanOp, acc: f64, x: f64) -> f64 {
    match op {
        ScanOp::Sum => acc + x,
        ScanOp::Prod => acc * x,
        ScanOp::LogSumExp => log_add_exp(acc, x),
    }
}

/// `log(exp(a) + exp(b))` without overflow, as PyTorch's logcumsumexp
/// step: `max + log1p(exp(min - max))`. NaN propagates; two infinities of
/// the same sign give that infinity (where `min - max` would be NaN), so
/// `-inf` is the identity and a slice of `-inf` stays `-inf`.
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if lo == hi && lo.is_infinite() {
        return a;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// Layer normalization of each slice of `x` over its last `dims` dims:
/// the mean, then the variance as the mean of squared deviations from it
/// (two passes, as the definition reads), then `(x - mean) / sqrt(var + eps)`.
pub(crate) fn layer_norm(x: &Tensor, dims: usize, eps: f64) -> Result<Storage> {
    let xs = read::f64s(x)?;
    let mut out = vec![0.0; xs.len()];
    let rank = x.rank();
    let over: Vec<usize> = (rank - dims..rank).collect();
    for group in element_groups(x.shape(), &over) {
        let n = group.len() as f64;
        let mean = group.iter().map(|&i| xs[i]).sum::<f64>() / n;
        let var = group.iter().map(|&i| (xs[i] - mean).powi(2)).sum::<f64>() / n;
        let std = (var + eps).sqrt();
        for &i in &group {
            out[i] = (xs[i] - mean) / std;
        }
    }
    Ok(read::store_f64(x.dtype(), out))
}

/// For each element of the keepdim-shaped output of reducing `shape` over
/// `dims`, the row-major positions of the input elements that reduce into
/// it. Within a group the positions are increasing, so an element's place
/// in its group is its row-major index within the reduced sub-block (which
/// is what `argmax` reports).
fn groups(shape: &Shape, dims: &[usize]) -> Vec<Vec<usize>> {
    let kept = keepdim_shape(shape, dims);
    let mut groups = vec![Vec::new(); kept.numel()];
    for linear in 0..shape.numel() {
        let mut index = shape.unravel(linear);
        for &d in dims {
            index[d] = 0;
        }
        groups[kept.ravel(&index)].push(linear);
    }
    groups
}

/// [`groups`] for ops that write each input element's own result
/// (softmax, scans, layer normalization): none at all for a tensor with no
/// elements, whose groups would all be empty however many the other dims
/// make — `[2^40, 0]` would otherwise build 2^40 empty lists.
fn element_groups(shape: &Shape, dims: &[usize]) -> Vec<Vec<usize>> {
    if shape.numel() == 0 {
        Vec::new()
    } else {
        groups(shape, dims)
    }
}

fn reduce_f64(op: ReduceOp, xs: &[f64], groups: &[Vec<usize>], out: DType) -> Result<Storage> {
    let values = |g: &Vec<usize>| g.iter().map(|&i| xs[i]).collect::<Vec<f64>>();
    let per_group =
        |f: &dyn Fn(&[f64]) -> f64| -> Vec<f64> { groups.iter().map(|g| f(&values(g))).collect() };
    const NONEMPTY: &str = "the front end rejects empty extents for ops without identity";
    let result = match op {
        ReduceOp::Sum => per_group(&|v| v.iter().sum()),
        ReduceOp::Prod => per_group(&|v| v.iter().product()),
        ReduceOp::Mean => per_group(&|v| v.iter().sum::<f64>() / v.len() as f64),
        ReduceOp::Max => per_group(&|v| max_f64(v.iter().copied()).expect(NONEMPTY)),
        ReduceOp::Min => per_group(&|v| min_f64(v.iter().copied()).expect(NONEMPTY)),
        ReduceOp::ArgMax => {
            let idx = groups
                .iter()
                .map(|g| first_index(&values(g), nan_first(|x, b| x > b)));
            return Ok(read::store_i64(
                out,
                idx.map(|i| i.expect(NONEMPTY)).collect(),
            ));
        }
        ReduceOp::ArgMin => {
            let idx = groups
                .iter()
                .map(|g| first_index(&values(g), nan_first(|x, b| x < b)));
            return Ok(read::store_i64(
                out,
                idx.map(|i| i.expect(NONEMPTY)).collect(),
            ));
        }
        ReduceOp::Var { correction } => per_group(&|v| variance(v, correction)),
        ReduceOp::Std { correction } => per_group(&|v| variance(v, correction).sqrt()),
        ReduceOp::LogSumExp => per_group(&logsumexp),
        ReduceOp::All => per_group(&|v| bool_f64(v.iter().all(|&x| x != 0.0))),
        ReduceOp::Any => per_group(&|v| bool_f64(v.iter().any(|&x| x != 0.0))),
    };
    Ok(read::store_f64(out, result))
}

fn reduce_i64(op: ReduceOp, xs: &[i64], groups: &[Vec<usize>], out: DType) -> Storage {
    let per_group = |f: &dyn Fn(&[i64]) -> i64| -> Vec<i64> {
        groups
            .iter()
            .map(|g| f(&g.iter().map(|&i| xs[i]).collect::<Vec<i64>>()))
            .collect()
    };
    const NONEMPTY: &str = "the front end rejects empty extents for ops without identity";
    let result = match op {
        ReduceOp::Sum => per_group(&|v| v.iter().fold(0, |a, &x| a.wrapping_add(x))),
        ReduceOp::Prod => per_group(&|v| v.iter().fold(1, |a, &x| a.wrapping_mul(x))),
        ReduceOp::Max => per_group(&|v| *v.iter().max().expect(NONEMPTY)),
        ReduceOp::Min => per_group(&|v| *v.iter().min().expect(NONEMPTY)),
        ReduceOp::ArgMax => per_group(&|v| first_index(v, |x, best| x > best).expect(NONEMPTY)),
        ReduceOp::ArgMin => per_group(&|v| first_index(v, |x, best| x < best).expect(NONEMPTY)),
        ReduceOp::All => per_group(&|v| i64::from(v.iter().all(|&x| x != 0))),
        ReduceOp::Any => per_group(&|v| i64::from(v.iter().any(|&x| x != 0))),
        ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. } | ReduceOp::LogSumExp => {
            unreachable!("the front end rejects {} on integer dtypes", op.name())
        }
    };
    read::store_i64(out, result)
}

fn bool_f64(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// The maximum, with NaN propagating (`f64::max` would drop it).
fn max_f64(values: impl Iterator<Item = f64>) -> Option<f64> {
    values.reduce(|a, b| if a.is_nan() || a >= b { a } else { b })
}

/// The minimum, with NaN propagating.
fn min_f64(values: impl Iterator<Item = f64>) -> Option<f64> {
    values.reduce(|a, b| if a.is_nan() || a <= b { a } else { b })
}

/// The index of the element that wins: a later element replaces the best
/// so far only if it strictly `beats` it, so ties go to the first index.
fn first_index<T: Copy>(values: &[T], beats: impl Fn(T, T) -> bool) -> Option<i64> {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate().skip(1) {
        if beats(v, values[best]) {
            best = i;
        }
    }
    (!values.is_empty()).then_some(best as i64)
}

/// `beats` for float argmax/argmin: NaN beats every number and nothing
/// beats a NaN, so the first NaN wins (PyTorch and NumPy agree).
fn nan_first(better: impl Fn(f64, f64) -> bool) -> impl Fn(f64, f64) -> bool {
    move |x, best| !best.is_nan() && (x.is_nan() || better(x, best))
}

/// Two-pass variance: the mean first, then the squared deviations from it,
/// which avoids the cancellation of `E[x²] - E[x]²`. The divisor is clamped
/// at 0 so that `correction >= N` gives NaN (0/0) or +inf, as in PyTorch.
fn variance(v: &[f64], correction: f64) -> f64 {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let squares: f64 = v.iter().map(|x| (x - mean) * (x - mean)).sum();
    squares / (n - correction).max(0.0)
}

/// `m + log(Σ exp(x - m))`; an infinite `m` is not subtracted (it would
/// turn `inf - inf` into NaN), so all `-inf` gives `-inf` and any `+inf`
/// gives `+inf`. An empty slice is `log(0) = -inf`.
fn logsumexp(v: &[f64]) -> f64 {
    let m = max_f64(v.iter().copied()).unwrap_or(f64::NEG_INFINITY);
    let shift = if m.is_infinite() { 0.0 } else { m };
    let sum: f64 = v.iter().map(|x| (x - shift).exp()).sum();
    shift + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_partition_by_kept_index() {
        // [[0, 1, 2], [3, 4, 5]]: reducing dim 1 groups rows, dim 0 columns.
        let s = Shape::from([2, 3]);
        assert_eq!(groups(&s, &[1]), vec![vec![0, 1, 2], vec![3, 4, 5]]);
        assert_eq!(groups(&s, &[0]), vec![vec![0, 3], vec![1, 4], vec![2, 5]]);
        assert_eq!(groups(&s, &[0, 1]), vec![vec![0, 1, 2, 3, 4, 5]]);
        assert_eq!(groups(&s, &[]).len(), 6);
        // A zero-size reduced dim leaves empty groups; a zero-size kept dim none.
        assert_eq!(groups(&Shape::from([2, 0]), &[1]), vec![vec![], vec![]]);
        assert!(groups(&Shape::from([0, 2]), &[1]).is_empty());
    }

    #[test]
    fn nan_rules() {
        let v = [1.0, f64::NAN, 3.0, f64::NAN];
        assert!(max_f64(v.iter().copied()).unwrap().is_nan());
        assert!(min_f64(v.iter().copied()).unwrap().is_nan());
        assert_eq!(first_index(&v, nan_first(|x, b| x > b)), Some(1));
        assert_eq!(first_index(&v, nan_first(|x, b| x < b)), Some(1));
        assert_eq!(
            first_index(&[2.0, 5.0, 5.0], nan_first(|x, b| x > b)),
            Some(1)
        );
        assert_eq!(
            first_index(&[f64::NAN, 9.0], nan_first(|x, b| x > b)),
            Some(0)
        );
        assert_eq!(first_index(&[3, 1, 1], |x: i64, b| x < b), Some(1));
        assert_eq!(first_index::<f64>(&[], |x, b| x > b), None);
    }

    #[test]
    fn variance_divisor_clamps() {
        assert_eq!(variance(&[1.0, 3.0], 1.0), 2.0);
        assert_eq!(variance(&[1.0, 3.0], 0.0), 1.0);
        assert_eq!(variance(&[1.0, 3.0], 2.0), f64::INFINITY);
        assert!(variance(&[4.0], 1.0).is_nan());
        assert!(variance(&[], 0.0).is_nan());
    }

    #[test]
    fn logsumexp_infinities() {
        assert_eq!(logsumexp(&[f64::NEG_INFINITY; 3]), f64::NEG_INFINITY);
        assert_eq!(logsumexp(&[1.0, f64::INFINITY]), f64::INFINITY);
        assert_eq!(logsumexp(&[]), f64::NEG_INFINITY);
        assert!((logsumexp(&[1000.0, 1000.0]) - (1000.0 + 2f64.ln())).abs() < 1e-12);
    }
}
