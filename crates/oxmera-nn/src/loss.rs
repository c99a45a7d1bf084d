//! Loss functions and accuracy, with PyTorch's semantics.
//!
//! Every loss is a composition of tensor ops, so its gradient comes from
//! autograd. Inputs are checked here, so a wrong shape or dtype is reported
//! under the loss's own name rather than the name of an op inside it.
//!
//! Class-index losses ([`cross_entropy`], [`nll`]) take logits (or log
//! probabilities) `[N, C]` — or `[C]` for one sample, or `[N, C, d1, …]`
//! with the class in dim 1 — and integer targets with the class dim left
//! out (`[N]`, `[]`, `[N, d1, …]`), each in `0..C`.

use oxmera_core::{DType, Error, Result, Shape, broadcast_shapes};
use oxmera_tensor::Tensor;

/// How a loss combines its per-element values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reduction {
    /// The mean (for weighted class losses, the weighted mean: see
    /// [`cross_entropy`]).
    #[default]
    Mean,
    /// The sum.
    Sum,
    /// No reduction: one value per sample (per element for elementwise
    /// losses).
    None,
}

impl Reduction {
    fn apply(self, losses: Tensor) -> Result<Tensor> {
        match self {
            Reduction::Mean => losses.mean_all(),
            Reduction::Sum => losses.sum_all(),
            Reduction::None => Ok(losses),
        }
    }
}

/// Options of [`cross_entropy`]. The default is PyTorch's: no class
/// weights, no label smoothing, mean reduction, no ignored class.
#[derive(Debug, Clone, Default)]
pub struct CrossEntropyOptions {
    /// A weight per class, `[C]`, of the logits' dtype.
    pub weight: Option<Tensor>,
    /// The mass `ε` in `[0, 1]` moved from the target class to a uniform
    /// distribution over all `C` classes.
    pub label_smoothing: f64,
    /// How per-sample losses are combined.
    pub reduction: Reduction,
    /// A target value whose samples contribute nothing (to the loss, its
    /// gradient, or the mean's denominator). Class-index targets only.
    pub ignore_index: Option<i64>,
}

/// Options of [`nll`]: [`CrossEntropyOptions`] without label smoothing.
#[derive(Debug, Clone, Default)]
pub struct NllOptions {
    /// A weight per class, `[C]`.
    pub weight: Option<Tensor>,
    /// How per-sample losses are combined.
    pub reduction: Reduction,
    /// A target value whose samples contribute nothing.
    pub ignore_index: Option<i64>,
}

/// Options of [`bce_with_logits`].
#[derive(Debug, Clone, Default)]
pub struct BceOptions {
    /// A weight per element, broadcast to the logits' shape.
    pub weight: Option<Tensor>,
    /// A weight on the positive term, broadcast to the logits' shape
    /// (typically `[C]` for `C` independent labels): above 1 favours
    /// recall, below 1 precision.
    pub pos_weight: Option<Tensor>,
    /// How per-element losses are combined.
    pub reduction: Reduction,
}

/// Cross-entropy between logits and targets, from logits (the log-softmax
/// is taken here, stably).
///
/// With class-index targets `y`, class weights `w` (all 1 by default),
/// label smoothing `ε` and `C` classes, sample `i` costs
///
/// `ℓᵢ = (1 − ε) · w[yᵢ] · (−log pᵢ[yᵢ]) + (ε / C) · Σ_c w[c] · (−log pᵢ[c])`
///
/// and the mean reduction is **PyTorch's weighted mean**,
/// `Σ ℓᵢ / Σ w[yᵢ]` — both terms divided by the total weight of the
/// targets, not by `N` (without weights, that is `N`). Ignored samples
/// count in neither sum. With `None` the result has the targets' shape.
/// If every sample is ignored, the mean is 0/0 = NaN, as in PyTorch.
///
/// Targets may instead be probabilities of the logits' shape and dtype
/// (soft labels): then `ℓᵢ = −Σ_c w[c] · qᵢ[c] · log pᵢ[c]` with
/// `q = (1 − ε) · target + ε / C`, and the mean divides by the number of
/// samples.
///
/// Errors: [`Error::UnsupportedDType`] for non-float logits or targets
/// that are neither integers nor the logits' float dtype;
/// [`Error::RankMismatch`] for rank-0 logits; [`Error::ShapeMismatch`]
/// for targets or a weight of the wrong shape; [`Error::DTypeMismatch`] /
/// [`Error::DeviceMismatch`] for a weight that differs;
/// [`Error::IndexOutOfBounds`] for a class outside `0..C`;
/// [`Error::InvalidArgument`] for `ε` outside `[0, 1]` or an
/// `ignore_index` with probability targets. Each names `"cross_entropy"`.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::Device;
/// use oxmera_nn::loss::{cross_entropy, CrossEntropyOptions};
/// use oxmera_tensor::Tensor;
/// // Two equal logits: each class has probability 1/2.
/// let logits = Tensor::from_vec(vec![0.0f64, 0.0, 3.0, 3.0], [2, 2], Device::Reference)?;
/// let targets = Tensor::from_vec(vec![0i64, 1], [2], Device::Reference)?;
/// let loss = cross_entropy(&logits, &targets, &CrossEntropyOptions::default())?;
/// assert!((loss.item()? - 2f64.ln()).abs() < 1e-15);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn cross_entropy(
    logits: &Tensor,
    targets: &Tensor,
    opts: &CrossEntropyOptions,
) -> Result<Tensor> {
    const OP: &str = "cross_entropy";
    let eps = opts.label_smoothing;
    if !(0.0..=1.0).contains(&eps) {
        return Err(Error::invalid(
            OP,
            "label_smoothing",
            format!("must lie in [0, 1], got {eps}"),
        ));
    }
    need_float(OP, logits)?;
    if targets.dtype() == logits.dtype() && targets.shape() == logits.shape() {
        if opts.ignore_index.is_some() {
            return Err(Error::invalid(
                OP,
                "ignore_index",
                "applies to class-index targets only, not to probabilities",
            ));
        }
        return soft_cross_entropy(logits, targets, opts);
    }
    let rows = ClassRows::new(OP, logits, targets)?;
    let logp = rows.scores.log_softmax(1)?;
    class_loss(
        OP,
        &rows,
        &logp,
        opts.weight.as_ref(),
        eps,
        opts.ignore_index,
        opts.reduction,
    )
}

/// Negative log-likelihood of class-index targets under log
/// probabilities (the output of a `log_softmax`):
/// `ℓᵢ = −w[yᵢ] · log_probs[i][yᵢ]`, with the weighted mean
/// `Σ ℓᵢ / Σ w[yᵢ]` as [`cross_entropy`] (which is `nll` of
/// `log_softmax`, plus smoothing). Same shapes and errors, named `"nll"`.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::Device;
/// use oxmera_nn::loss::{nll, NllOptions};
/// use oxmera_tensor::Tensor;
/// let logp = Tensor::from_vec(vec![-0.5f64, -2.0, -1.0, -3.0], [2, 2], Device::Reference)?;
/// let y = Tensor::from_vec(vec![1i64, 0], [2], Device::Reference)?;
/// assert_eq!(nll(&logp, &y, &NllOptions::default())?.item()?, 1.5);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn nll(log_probs: &Tensor, targets: &Tensor, opts: &NllOptions) -> Result<Tensor> {
    const OP: &str = "nll";
    need_float(OP, log_probs)?;
    let rows = ClassRows::new(OP, log_probs, targets)?;
    let logp = rows.scores.clone();
    class_loss(
        OP,
        &rows,
        &logp,
        opts.weight.as_ref(),
        0.0,
        opts.ignore_index,
        opts.reduction,
    )
}

/// Mean squared error, `(prediction − target)²` per element. Both of one
/// float dtype and one shape ([`Error::ShapeMismatch`] otherwise: no
/// silent broadcasting, which is the usual way a regression loss goes
/// wrong).
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::Device;
/// use oxmera_nn::loss::{mse, Reduction};
/// use oxmera_tensor::Tensor;
/// let p = Tensor::from_vec(vec![1.0f64, 2.0, 4.0], [3], Device::Reference)?;
/// let t = Tensor::from_vec(vec![1.0f64, 0.0, 1.0], [3], Device::Reference)?;
/// assert_eq!(mse(&p, &t, Reduction::Mean)?.item()?, (0.0 + 4.0 + 9.0) / 3.0);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn mse(prediction: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    same_float_shape("mse", prediction, target)?;
    reduction.apply(prediction.sub(target)?.square()?)
}

/// Mean absolute error, `|prediction − target|` per element; same rules
/// as [`mse`]. Its gradient at a zero difference is 0.
pub fn l1(prediction: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    same_float_shape("l1", prediction, target)?;
    reduction.apply(prediction.sub(target)?.abs()?)
}

/// Binary cross-entropy from logits: with `σ` the sigmoid, target `y`,
/// positive weight `p` (1 by default) and weight `w` (1 by default),
///
/// `ℓ = w · (p · y · (−log σ(x)) + (1 − y) · (−log(1 − σ(x))))
///    = w · (p · y · softplus(−x) + (1 − y) · softplus(x))`.
///
/// The second form is how it is computed: `softplus` is evaluated without
/// overflow, and for targets in `[0, 1]` both terms are non-negative, so
/// nothing cancels. At `x = 100, y = 1` the loss is `e^-100` (not 0, not
/// NaN); at `x = -100, y = 1` it is 100. Its gradient, `w · (σ(x)(1 − y +
/// p·y) − p·y)`, is exact everywhere, including `x = 0`.
///
/// Logits and targets share a float dtype and a shape; `weight` and
/// `pos_weight` broadcast to it. Errors as for [`mse`], plus
/// [`Error::BroadcastIncompatible`] for a weight that does not broadcast,
/// all named `"bce_with_logits"`.
pub fn bce_with_logits(logits: &Tensor, targets: &Tensor, opts: &BceOptions) -> Result<Tensor> {
    const OP: &str = "bce_with_logits";
    same_float_shape(OP, logits, targets)?;
    for w in [&opts.weight, &opts.pos_weight].into_iter().flatten() {
        same_dtype_device(OP, logits, w)?;
        let joint = broadcast_shapes(OP, logits.shape(), w.shape())?;
        if &joint != logits.shape() {
            return Err(Error::ExpandIncompatible {
                op: OP,
                from: w.shape().clone(),
                to: logits.shape().clone(),
            });
        }
    }
    let positive = targets.mul(&logits.neg()?.softplus()?)?;
    let positive = match &opts.pos_weight {
        Some(p) => positive.mul(p)?,
        None => positive,
    };
    let negative = targets.rsub_scalar(1.0)?.mul(&logits.softplus()?)?;
    let losses = positive.add(&negative)?;
    let losses = match &opts.weight {
        Some(w) => losses.mul(w)?,
        None => losses,
    };
    opts.reduction.apply(losses)
}

/// The fraction of samples whose largest logit is at the target class, in
/// `[0, 1]`. Shapes as for [`cross_entropy`] with class-index targets
/// (ties go to the lowest class index, as `argmax`). No gradient.
///
/// Errors as [`cross_entropy`]'s, named `"accuracy"`, plus
/// [`Error::InvalidArgument`] for an empty batch (whose accuracy is
/// undefined).
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::Device;
/// use oxmera_nn::loss::accuracy;
/// use oxmera_tensor::Tensor;
/// let logits = Tensor::from_vec(vec![0.9f32, 0.1, 0.2, 0.8, 0.6, 0.4], [3, 2], Device::Reference)?;
/// let y = Tensor::from_vec(vec![0i64, 1, 1], [3], Device::Reference)?;
/// assert_eq!(accuracy(&logits, &y)?, 2.0 / 3.0);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn accuracy(logits: &Tensor, targets: &Tensor) -> Result<f64> {
    const OP: &str = "accuracy";
    let rows = ClassRows::new(OP, logits, targets)?;
    let m = rows.targets.numel();
    if m == 0 {
        return Err(Error::invalid(
            OP,
            "targets",
            "an empty batch has no accuracy",
        ));
    }
    let hits = rows
        .scores
        .detach()
        .argmax(1, false)?
        .eq(&rows.targets)?
        .sum_all()?
        .item()?;
    Ok(hits / m as f64)
}

/// Logits (or log probabilities) flattened to `[M, C]` with their class
/// targets flattened to `[M]` (`i64`), and the shape a per-sample result
/// takes.
struct ClassRows {
    scores: Tensor,
    targets: Tensor,
    sample_shape: Shape,
    classes: usize,
}

impl ClassRows {
    fn new(op: &'static str, scores: &Tensor, targets: &Tensor) -> Result<ClassRows> {
        if scores.rank() == 0 {
            return Err(Error::RankMismatch {
                op,
                expected: 1,
                shape: scores.shape().clone(),
            });
        }
        if !matches!(targets.dtype(), DType::I64 | DType::I32) {
            return Err(Error::UnsupportedDType {
                op,
                dtype: targets.dtype(),
                hint: "targets are class indices (i64 or i32), or probabilities of the logits' shape and dtype",
            });
        }
        if targets.device() != scores.device() {
            return Err(Error::DeviceMismatch {
                op,
                lhs: scores.device(),
                rhs: targets.device(),
            });
        }
        let mut sample = scores.dims().to_vec();
        let classes = if scores.rank() == 1 {
            sample.remove(0)
        } else {
            sample.remove(1)
        };
        let sample_shape = Shape::from(sample);
        if targets.shape() != &sample_shape {
            return Err(Error::ShapeMismatch {
                op,
                lhs: targets.shape().clone(),
                rhs: sample_shape,
            });
        }
        let targets = targets
            .to_dtype(DType::I64)?
            .reshape([sample_shape.numel()])?;
        Ok(ClassRows {
            scores: class_last(scores)?,
            targets,
            sample_shape,
            classes,
        })
    }
}

/// `[C]` → `[1, C]`; `[N, C, d1, …]` → `[N·d1·…, C]`.
fn class_last(x: &Tensor) -> Result<Tensor> {
    match x.rank() {
        1 => x.unsqueeze(0),
        2 => Ok(x.clone()),
        r => {
            let mut perm: Vec<isize> = vec![0];
            perm.extend(2..r as isize);
            perm.push(1);
            let c = x.dims()[1];
            x.permute(&perm)?.reshape([x.numel() / c.max(1), c])
        }
    }
}

/// The shared body of `cross_entropy` and `nll` over rows of log
/// probabilities `logp` `[M, C]`.
fn class_loss(
    op: &'static str,
    rows: &ClassRows,
    logp: &Tensor,
    weight: Option<&Tensor>,
    eps: f64,
    ignore_index: Option<i64>,
    reduction: Reduction,
) -> Result<Tensor> {
    let c = rows.classes;
    let dtype = logp.dtype();
    if let Some(w) = weight {
        same_dtype_device(op, logp, w)?;
        if w.dims() != [c] {
            return Err(Error::ShapeMismatch {
                op,
                lhs: w.shape().clone(),
                rhs: Shape::from([c]),
            });
        }
    }
    let ignored = match ignore_index {
        Some(i) => Some(rows.targets.eq_scalar(i as f64)?),
        None => None,
    };
    // Ignored samples get class 0 so that gathering stays in range; their
    // terms are zeroed by `kept` below.
    let safe = match &ignored {
        Some(mask) => rows.targets.masked_fill(mask, 0.0)?,
        None => rows.targets.clone(),
    };
    let host = safe.to_vec::<i64>()?;
    if let Some(&bad) = host.iter().find(|&&t| t < 0 || t as usize >= c) {
        return Err(Error::IndexOutOfBounds {
            op,
            index: bad,
            dim: 1,
            size: c,
        });
    }
    // The per-sample weight w[yᵢ] (0 for ignored samples), or None when
    // every sample weighs 1.
    let kept = match &ignored {
        Some(mask) => Some(mask.logical_not()?.to_dtype(dtype)?),
        None => None,
    };
    let sample_weight = match (weight, kept) {
        (Some(w), Some(k)) => Some(w.index_select(0, &safe)?.mul(&k)?),
        (Some(w), None) => Some(w.index_select(0, &safe)?),
        (None, k) => k,
    };
    let picked = logp.gather(1, &safe.unsqueeze(1)?)?.squeeze(1)?.neg()?;
    let mut losses = match &sample_weight {
        Some(sw) => picked.mul(sw)?,
        None => picked,
    };
    if eps > 0.0 {
        let spread = match weight {
            Some(w) => logp.mul(w)?,
            None => logp.clone(),
        };
        let mut smooth = spread.sum(&[1], false)?.neg()?;
        if let Some(mask) = &ignored {
            smooth = smooth.masked_fill(mask, 0.0)?;
        }
        losses = losses
            .mul_scalar(1.0 - eps)?
            .add(&smooth.mul_scalar(eps / c as f64)?)?;
    }
    match reduction {
        Reduction::None => losses.reshape(rows.sample_shape.clone()),
        Reduction::Sum => losses.sum_all(),
        Reduction::Mean => match &sample_weight {
            Some(sw) => losses.sum_all()?.div(&sw.sum_all()?),
            None => losses.mean_all(),
        },
    }
}

/// Cross-entropy against probability targets of the logits' shape.
fn soft_cross_entropy(
    logits: &Tensor,
    targets: &Tensor,
    opts: &CrossEntropyOptions,
) -> Result<Tensor> {
    const OP: &str = "cross_entropy";
    if logits.rank() == 0 {
        return Err(Error::RankMismatch {
            op: OP,
            expected: 1,
            shape: logits.shape().clone(),
        });
    }
    let class_dim = if logits.rank() == 1 { 0 } else { 1 };
    let c = logits.dims()[class_dim];
    let logp = class_last(&logits.log_softmax(class_dim as isize)?)?;
    let mut q = class_last(targets)?;
    let eps = opts.label_smoothing;
    if eps > 0.0 {
        q = q.mul_scalar(1.0 - eps)?.add_scalar(eps / c as f64)?;
    }
    if let Some(w) = &opts.weight {
        same_dtype_device(OP, logits, w)?;
        if w.dims() != [c] {
            return Err(Error::ShapeMismatch {
                op: OP,
                lhs: w.shape().clone(),
                rhs: Shape::from([c]),
            });
        }
        q = q.mul(w)?;
    }
    let losses = logp.mul(&q)?.sum(&[1], false)?.neg()?;
    let mut sample = logits.dims().to_vec();
    sample.remove(class_dim);
    match opts.reduction {
        Reduction::None => losses.reshape(sample),
        other => other.apply(losses),
    }
}

fn need_float(op: &'static str, x: &Tensor) -> Result<()> {
    if x.dtype().is_float() {
        Ok(())
    } else {
        Err(Error::UnsupportedDType {
            op,
            dtype: x.dtype(),
            hint: "losses take float inputs",
        })
    }
}

fn same_dtype_device(op: &'static str, x: &Tensor, y: &Tensor) -> Result<()> {
    if x.dtype() != y.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            lhs: x.dtype(),
            rhs: y.dtype(),
        });
    }
    if x.device() != y.device() {
        return Err(Error::DeviceMismatch {
            op,
            lhs: x.device(),
            rhs: y.device(),
        });
    }
    Ok(())
}

fn same_float_shape(op: &'static str, x: &Tensor, y: &Tensor) -> Result<()> {
    need_float(op, x)?;
    same_dtype_device(op, x, y)?;
    if x.shape() != y.shape() {
        return Err(Error::ShapeMismatch {
            op,
            lhs: x.shape().clone(),
            rhs: y.shape().clone(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use oxmera_tensor::Generator;
    use proptest::prelude::*;

    /// The losses below chain about ten f64 operations on values below 8,
    /// each rounding by at most half an ulp (4.4e-16 at 4): 1e-14 covers
    /// that with room, and is far below any formula mistake.
    const TOL: f64 = 1e-14;

    const LN3: f64 = 1.0986122886681098;
    const LN4: f64 = 1.3862943611198906;

    /// Logits whose softmax rows are [1/4, 3/4] and [3/4, 1/4].
    fn quarter_logits() -> Tensor {
        t64(&[0.0, LN3, LN3, 0.0], [2, 2])
    }

    fn ce(logits: &Tensor, targets: &Tensor, opts: &CrossEntropyOptions) -> Tensor {
        cross_entropy(logits, targets, opts).unwrap()
    }

    #[test]
    fn weighted_smoothed_cross_entropy_matches_hand_values() {
        // Targets 1 and 1, class weights [1, 2], ε = 0.2, C = 2.
        // log p: row 0 = [-ln4, ln3 - ln4], row 1 = [ln3 - ln4, -ln4].
        let nll0 = 2.0 * (LN4 - LN3);
        let nll1 = 2.0 * LN4;
        let smooth0 = LN4 + 2.0 * (LN4 - LN3);
        let smooth1 = (LN4 - LN3) + 2.0 * LN4;
        let l0 = 0.8 * nll0 + 0.1 * smooth0;
        let l1 = 0.8 * nll1 + 0.1 * smooth1;
        let mut opts = CrossEntropyOptions {
            weight: Some(t64(&[1.0, 2.0], [2])),
            label_smoothing: 0.2,
            ..Default::default()
        };
        let y = ti(&[1, 1], [2]);
        // PyTorch's weighted mean divides by Σ w[yᵢ] = 4, not by N = 2.
        assert_close(
            &[ce(&quarter_logits(), &y, &opts).item().unwrap()],
            &[(l0 + l1) / 4.0],
            TOL,
        );
        opts.reduction = Reduction::Sum;
        assert_close(
            &[ce(&quarter_logits(), &y, &opts).item().unwrap()],
            &[l0 + l1],
            TOL,
        );
        opts.reduction = Reduction::None;
        let per = ce(&quarter_logits(), &y, &opts);
        assert_eq!(per.dims(), &[2]);
        assert_close(&per.to_f64_vec().unwrap(), &[l0, l1], TOL);
    }

    #[test]
    fn smoothed_cross_entropy_without_weights_divides_by_n() {
        let opts = CrossEntropyOptions {
            label_smoothing: 0.2,
            ..Default::default()
        };
        let y = ti(&[1, 0], [2]);
        // Row 0 target 1: -log p = ln4 - ln3; row 1 target 0: ln4 - ln3.
        // Smoothing term per row: Σ_c -log p[c] = ln4 + (ln4 - ln3).
        let l = 0.8 * (LN4 - LN3) + 0.1 * (2.0 * LN4 - LN3);
        assert_close(
            &[ce(&quarter_logits(), &y, &opts).item().unwrap()],
            &[l],
            TOL,
        );
    }

    #[test]
    fn cross_entropy_gradient_is_softmax_minus_one_hot() {
        let logits = t64(&[0.0, LN3], [1, 2]).with_requires_grad(true).unwrap();
        let loss = ce(&logits, &ti(&[1], [1]), &CrossEntropyOptions::default());
        loss.backward().unwrap();
        assert_close(
            &logits.grad().unwrap().to_f64_vec().unwrap(),
            &[0.25, -0.25],
            1e-15,
        );
    }

    #[test]
    fn cross_entropy_gradients_pass_gradcheck() {
        let logits = Generator::new(21).randn([4, 3], DType::F64, DEV).unwrap();
        let y = ti(&[2, 0, -1, 1], [4]);
        let opts = CrossEntropyOptions {
            weight: Some(t64(&[0.5, 2.0, 1.5], [3])),
            label_smoothing: 0.1,
            ignore_index: Some(-1),
            reduction: Reduction::Mean,
        };
        check_grad(
            |xs| cross_entropy(&xs[0], &y, &opts),
            std::slice::from_ref(&logits),
        );
        let probs = Generator::new(22).rand([4, 3], DType::F64, DEV).unwrap();
        let probs = probs.div(&probs.sum(&[1], true).unwrap()).unwrap();
        let soft = CrossEntropyOptions {
            label_smoothing: 0.1,
            ..Default::default()
        };
        check_grad(|xs| cross_entropy(&xs[0], &probs, &soft), &[logits]);
    }

    #[test]
    fn ignored_samples_count_nowhere() {
        let logits = t64(&[0.0, LN3, 5.0, -5.0, LN3, 0.0], [3, 2])
            .with_requires_grad(true)
            .unwrap();
        let opts = CrossEntropyOptions {
            ignore_index: Some(-100),
            weight: Some(t64(&[1.0, 2.0], [2])),
            ..Default::default()
        };
        let loss = ce(&logits, &ti(&[1, -100, 1], [3]), &opts);
        // The two kept rows, as in the weighted test: (2(ln4 - ln3) + 2 ln4) / 4.
        let want = (2.0 * (LN4 - LN3) + 2.0 * LN4) / 4.0;
        assert_close(&[loss.item().unwrap()], &[want], TOL);
        loss.backward().unwrap();
        let g = logits.grad().unwrap().to_f64_vec().unwrap();
        assert_eq!(&g[2..4], &[0.0, 0.0]);
        // Everything ignored: the weighted mean is 0/0.
        let none = ce(&logits.detach(), &ti(&[-100; 3], [3]), &opts);
        assert!(none.item().unwrap().is_nan());
    }

    #[test]
    fn class_dim_is_dim_one_for_higher_ranks_and_zero_for_one_sample() {
        // [N=1, C=2, d=2], stored [n][c][d].
        let logits = t64(&[0.0, LN3, LN3, 0.0], [1, 2, 2]);
        let opts = CrossEntropyOptions {
            reduction: Reduction::None,
            ..Default::default()
        };
        let per = ce(&logits, &ti(&[1, 1], [1, 2]), &opts);
        assert_eq!(per.dims(), &[1, 2]);
        // Reading down dim 1: position 0 has logits [0, ln3] (target 1:
        // ln4 − ln3), position 1 has [ln3, 0] (target 1: ln4).
        assert_close(&per.to_f64_vec().unwrap(), &[LN4 - LN3, LN4], TOL);
        let one = ce(&t64(&[0.0, LN3], [2]), &ti(&[0], []), &opts);
        assert_eq!(one.dims(), &[] as &[usize]);
        assert_close(&[one.item().unwrap()], &[LN4], TOL);
    }

    #[test]
    fn cross_entropy_errors_are_typed_and_named() {
        let logits = quarter_logits();
        let d = CrossEntropyOptions::default();
        let err = cross_entropy(&logits, &ti(&[0, 2], [2]), &d).unwrap_err();
        assert_eq!(
            err,
            Error::IndexOutOfBounds {
                op: "cross_entropy",
                index: 2,
                dim: 1,
                size: 2
            }
        );
        let err = cross_entropy(&logits, &ti(&[-1, 0], [2]), &d).unwrap_err();
        assert!(
            matches!(err, Error::IndexOutOfBounds { index: -1, .. }),
            "{err}"
        );
        let err = cross_entropy(&logits, &ti(&[0, 1, 0], [3]), &d).unwrap_err();
        assert!(
            matches!(
                err,
                Error::ShapeMismatch {
                    op: "cross_entropy",
                    ..
                }
            ),
            "{err}"
        );
        let err = cross_entropy(&logits, &t64(&[0.0, 1.0], [2]), &d).unwrap_err();
        assert!(matches!(
            err,
            Error::UnsupportedDType {
                op: "cross_entropy",
                dtype: DType::F64,
                ..
            }
        ));
        let err = cross_entropy(&ti(&[0, 1], [1, 2]), &ti(&[0], [1]), &d).unwrap_err();
        assert!(matches!(
            err,
            Error::UnsupportedDType {
                op: "cross_entropy",
                dtype: DType::I64,
                ..
            }
        ));
        let bad_weight = CrossEntropyOptions {
            weight: Some(t64(&[1.0, 1.0, 1.0], [3])),
            ..Default::default()
        };
        let err = cross_entropy(&logits, &ti(&[0, 1], [2]), &bad_weight).unwrap_err();
        assert!(
            matches!(
                err,
                Error::ShapeMismatch {
                    op: "cross_entropy",
                    ..
                }
            ),
            "{err}"
        );
        let f32_weight = CrossEntropyOptions {
            weight: Some(t32(&[1.0, 1.0], [2])),
            ..Default::default()
        };
        let err = cross_entropy(&logits, &ti(&[0, 1], [2]), &f32_weight).unwrap_err();
        assert!(
            matches!(
                err,
                Error::DTypeMismatch {
                    op: "cross_entropy",
                    ..
                }
            ),
            "{err}"
        );
        for eps in [-0.1, 1.5, f64::NAN] {
            let opts = CrossEntropyOptions {
                label_smoothing: eps,
                ..Default::default()
            };
            let err = cross_entropy(&logits, &ti(&[0, 1], [2]), &opts).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::InvalidArgument {
                        name: "label_smoothing",
                        ..
                    }
                ),
                "{err}"
            );
        }
        let opts = CrossEntropyOptions {
            ignore_index: Some(0),
            ..Default::default()
        };
        let err = cross_entropy(&logits, &logits, &opts).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    name: "ignore_index",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn weighted_nll_matches_hand_values() {
        let logp = t64(&[-1.0, -2.0, -3.0, -4.0], [2, 2]);
        let opts = NllOptions {
            weight: Some(t64(&[2.0, 3.0], [2])),
            ..Default::default()
        };
        // ℓ = [2 · 1, 3 · 4], divided by 2 + 3.
        let loss = nll(&logp, &ti(&[0, 1], [2]), &opts).unwrap();
        assert_eq!(loss.item().unwrap(), 14.0 / 5.0);
        let err = nll(&logp, &ti(&[0, 5], [2]), &opts).unwrap_err();
        assert!(matches!(
            err,
            Error::IndexOutOfBounds {
                op: "nll",
                index: 5,
                ..
            }
        ));
    }

    #[test]
    fn mse_and_l1_match_hand_values() {
        let p = t64(&[1.0, 2.0, 4.0], [3]).with_requires_grad(true).unwrap();
        let t = t64(&[1.0, 0.0, 5.0], [3]);
        assert_eq!(mse(&p, &t, Reduction::Sum).unwrap().item().unwrap(), 5.0);
        let per = mse(&p, &t, Reduction::None).unwrap().to_f64_vec().unwrap();
        assert_eq!(per, vec![0.0, 4.0, 1.0]);
        let loss = l1(&p, &t, Reduction::Mean).unwrap();
        assert_eq!(loss.item().unwrap(), 1.0);
        loss.backward().unwrap();
        // sign(p - t) / 3, and 0 where p == t.
        assert_close(
            &p.grad().unwrap().to_f64_vec().unwrap(),
            &[0.0, 1.0 / 3.0, -1.0 / 3.0],
            1e-15,
        );
        let err = mse(&p, &t64(&[1.0], [1]), Reduction::Mean).unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { op: "mse", .. }),
            "{err}"
        );
        let err = l1(&p, &t32(&[1.0, 0.0, 5.0], [3]), Reduction::Mean).unwrap_err();
        assert!(
            matches!(err, Error::DTypeMismatch { op: "l1", .. }),
            "{err}"
        );
    }

    #[test]
    fn bce_with_logits_is_stable_at_large_logits() {
        let x = t64(&[100.0, -100.0, 0.0, -100.0], [4])
            .with_requires_grad(true)
            .unwrap();
        let y = t64(&[1.0, 1.0, 0.5, 0.0], [4]);
        let opts = BceOptions {
            reduction: Reduction::None,
            ..Default::default()
        };
        let per = bce_with_logits(&x, &y, &opts).unwrap();
        let e = (-100f64).exp();
        let got = per.to_f64_vec().unwrap();
        // -log σ(100) = log(1 + e^-100) ≈ e^-100: kept to full relative
        // accuracy, not rounded to 0.
        assert!((got[0] - e).abs() <= 1e-15 * e, "{}", got[0]);
        assert_close(&got[1..], &[100.0, 2f64.ln(), e], 1e-13);
        per.sum_all().unwrap().backward().unwrap();
        // d/dx = σ(x) − y.
        let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
        let want = [sig(100.0) - 1.0, sig(-100.0) - 1.0, 0.0, sig(-100.0)];
        assert_close(&x.grad().unwrap().to_f64_vec().unwrap(), &want, 1e-15);

        // In f32, e^-100 is below the smallest normal: finite and tiny.
        let x32 = t32(&[100.0, -100.0], [2]);
        let y32 = t32(&[1.0, 1.0], [2]);
        let per32 = bce_with_logits(&x32, &y32, &opts)
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        assert!(per32[0].is_finite() && (0.0..1e-40).contains(&per32[0]));
        assert_eq!(per32[1], 100.0);
    }

    #[test]
    fn bce_weights_match_hand_values() {
        // At x = 0, softplus(±0) = ln 2: y = 1 costs w·p·ln2, y = 0 costs w·ln2.
        let x = t64(&[0.0, 0.0], [2]).with_requires_grad(true).unwrap();
        let y = t64(&[1.0, 0.0], [2]);
        let opts = BceOptions {
            weight: Some(t64(&[2.0], [1])),
            pos_weight: Some(t64(&[3.0], [1])),
            reduction: Reduction::Mean,
        };
        let loss = bce_with_logits(&x, &y, &opts).unwrap();
        let ln2 = 2f64.ln();
        assert_close(
            &[loss.item().unwrap()],
            &[(6.0 * ln2 + 2.0 * ln2) / 2.0],
            1e-15,
        );
        loss.backward().unwrap();
        // w · (σ(x)(1 − y + p·y) − p·y) / 2 at σ = 1/2.
        assert_close(
            &x.grad().unwrap().to_f64_vec().unwrap(),
            &[2.0 * (0.5 * 3.0 - 3.0) / 2.0, 2.0 * 0.5 / 2.0],
            1e-15,
        );
        let bad = BceOptions {
            pos_weight: Some(t64(&[1.0, 2.0, 3.0], [3])),
            ..Default::default()
        };
        let err = bce_with_logits(&x, &y, &bad).unwrap_err();
        assert!(
            matches!(
                err,
                Error::BroadcastIncompatible {
                    op: "bce_with_logits",
                    ..
                }
            ),
            "{err}"
        );
        let wide = BceOptions {
            weight: Some(t64(&[1.0, 2.0, 3.0, 4.0], [2, 2])),
            ..Default::default()
        };
        let err = bce_with_logits(&x, &y, &wide).unwrap_err();
        assert!(
            matches!(
                err,
                Error::ExpandIncompatible {
                    op: "bce_with_logits",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn bce_gradient_passes_gradcheck() {
        let x = Generator::new(23)
            .randn([3, 2], DType::F64, DEV)
            .unwrap()
            .mul_scalar(3.0)
            .unwrap();
        let y = Generator::new(24).rand([3, 2], DType::F64, DEV).unwrap();
        let opts = BceOptions {
            pos_weight: Some(t64(&[0.5, 2.0], [2])),
            ..Default::default()
        };
        check_grad(|xs| bce_with_logits(&xs[0], &y, &opts), &[x]);
    }

    #[test]
    fn accuracy_counts_argmax_hits() {
        // A tie goes to the lowest class.
        let logits = t64(&[1.0, 1.0, 0.0, 2.0], [2, 2]);
        assert_eq!(accuracy(&logits, &ti(&[0, 1], [2])).unwrap(), 1.0);
        assert_eq!(accuracy(&logits, &ti(&[1, 0], [2])).unwrap(), 0.0);
        let err = accuracy(&t64(&[], [0, 2]), &ti(&[], [0])).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { op: "accuracy", .. }),
            "{err}"
        );
        let err = accuracy(&logits, &ti(&[0], [1])).unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { op: "accuracy", .. }),
            "{err}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Label smoothing is cross-entropy against the smoothed one-hot
        /// distribution, and without smoothing cross-entropy is NLL of the
        /// log-softmax.
        #[test]
        fn smoothing_is_a_soft_target(
            n in 1usize..4,
            c in 2usize..5,
            eps in 0.0f64..1.0,
            seed in any::<u64>(),
        ) {
            let mut rng = Generator::new(seed);
            let logits = rng.randn([n, c], DType::F64, DEV).unwrap().mul_scalar(2.0).unwrap();
            let y = rng.randint([n], 0, c as i64, DType::I64, DEV).unwrap();
            let hard = cross_entropy(&logits, &y, &CrossEntropyOptions {
                label_smoothing: eps,
                ..Default::default()
            }).unwrap().item().unwrap();
            let q = y.one_hot(c).unwrap().to_dtype(DType::F64).unwrap();
            let soft = cross_entropy(&logits, &q, &CrossEntropyOptions {
                label_smoothing: eps,
                ..Default::default()
            }).unwrap().item().unwrap();
            prop_assert!((hard - soft).abs() <= 1e-12 * (1.0 + hard.abs()), "{hard} vs {soft}");
            let plain = cross_entropy(&logits, &y, &CrossEntropyOptions::default()).unwrap().item().unwrap();
            let via_nll = nll(&logits.log_softmax(1).unwrap(), &y, &NllOptions::default()).unwrap().item().unwrap();
            prop_assert_eq!(plain, via_nll);
        }
    }
}
