//! Front end: scaled dot-product attention, one fused op in the graph.
//!
//! Written as the chain of ops it is — `softmax(q·kᵀ·scale + mask) · v` —
//! autograd would keep every intermediate of that chain: the scores, the
//! masked scores and the probabilities, each `L × S` per head. The fused
//! op runs the same chain with recording off and keeps only `q`, `k`, `v`
//! and the probabilities `p`; its backward pass is the softmax Jacobian
//! written out:
//!
//! ```text
//! dv = pᵀ · g          dp = g · vᵀ
//! ds = p ⊙ (dp − Σⱼ dp ⊙ p)          (the softmax Jacobian, row by row)
//! dq = ds · k · scale  dk = dsᵀ · q · scale
//! ```
//!
//! Every step is an existing tensor op, so every backend runs attention
//! and its gradient with the kernels it already has.

use oxmera_core::{DType, Error, Result, Shape, broadcast_shapes};

use crate::Tensor;
use crate::autograd::{NoGradGuard, record_saving};

const OP: &str = "scaled_dot_product_attention";

/// How [`Tensor::scaled_dot_product_attention`] weighs its keys: an
/// optional mask, a causal mask, and the scale of the scores.
///
/// ```
/// use oxmera_tensor::AttentionOptions;
/// let options = AttentionOptions::new().causal(true).scale(0.5);
/// assert!(options.is_causal());
/// ```
#[derive(Debug, Clone, Default)]
pub struct AttentionOptions {
    mask: Option<Tensor>,
    causal: bool,
    scale: Option<f64>,
}

impl AttentionOptions {
    /// No mask, not causal, the scale `1/√E`.
    pub fn new() -> Self {
        Self::default()
    }

    /// A mask broadcast to the scores `[..., L, S]`: a bool mask keeps
    /// the keys where it is `true` (PyTorch's rule), a float mask of the
    /// query's dtype is added to the scores (`-inf` removes a key).
    pub fn mask(mut self, mask: Tensor) -> Self {
        self.mask = Some(mask);
        self
    }

    /// Whether query `i` sees only keys `j <= i` (the mask aligned to the
    /// top left, as PyTorch's `is_causal`). It combines with
    /// [`AttentionOptions::mask`] (PyTorch refuses both at once; here a
    /// key must pass both).
    pub fn causal(mut self, causal: bool) -> Self {
        self.causal = causal;
        self
    }

    /// The factor of the scores `q·kᵀ` (default `1/√E`, `E` the query's
    /// last dim).
    pub fn scale(mut self, scale: f64) -> Self {
        self.scale = Some(scale);
        self
    }

    /// Whether the causal mask is on.
    pub fn is_causal(&self) -> bool {
        self.causal
    }
}

impl Tensor {
    /// Attention of queries `self` `[..., L, E]` over keys `[..., S, E]`
    /// and values `[..., S, Ev]`: `softmax(self · keyᵀ · scale + mask) ·
    /// value`, `[..., L, Ev]`, with PyTorch's
    /// `scaled_dot_product_attention` semantics (no dropout). The batch
    /// dims `...` broadcast. Recorded as one node that keeps `q`, `k`, `v`
    /// and the `L × S` probabilities — nothing else (see
    /// [`Tensor::saved_for_backward`]).
    ///
    /// A query whose every key is masked has no distribution to take:
    /// its row is NaN, as in PyTorch's reference implementation.
    ///
    /// Errors: [`Error::UnsupportedDType`] unless the operands are floats,
    /// [`Error::DTypeMismatch`] / [`Error::DeviceMismatch`] between them or
    /// with a float mask, [`Error::RankMismatch`] below rank 2,
    /// [`Error::ShapeMismatch`] when the query's and key's last dims or
    /// the key's and value's lengths differ,
    /// [`Error::BroadcastIncompatible`] for batch dims or a mask that do
    /// not broadcast, [`Error::InvalidArgument`] for a non-finite scale.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{AttentionOptions, Tensor};
    /// let dev = Device::Reference;
    /// // Two keys; the first query matches key 0 strongly.
    /// let q = Tensor::from_vec(vec![10.0f64, 0.0, 0.0, 0.0], [2, 2], dev)?;
    /// let k = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], [2, 2], dev)?;
    /// let v = Tensor::from_vec(vec![1.0f64, 2.0], [2, 1], dev)?;
    /// let out = q.scaled_dot_product_attention(&k, &v, &AttentionOptions::new())?;
    /// let o = out.to_vec::<f64>()?;
    /// assert!((o[0] - 1.0).abs() < 1e-3); // nearly all weight on value 1
    /// assert_eq!(o[1], 1.5); // equal scores: the mean of the values
    /// // Causal: the first query sees only the first key.
    /// let causal = q.scaled_dot_product_attention(&k, &v, &AttentionOptions::new().causal(true))?;
    /// assert_eq!(causal.to_vec::<f64>()?[0], 1.0);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn scaled_dot_product_attention(
        &self,
        key: &Tensor,
        value: &Tensor,
        options: &AttentionOptions,
    ) -> Result<Tensor> {
        let (q, k, v) = (self, key, value);
        check_operands(q, k, v)?;
        let (l, e) = last_two(q);
        let (s, _) = last_two(k);
        let ev = v.dims()[v.rank() - 1];
        let batch = batch_shape(q, k, v)?;
        let with = |tail: [usize; 2]| {
            let mut d = batch.dims().to_vec();
            d.extend_from_slice(&tail);
            Shape::from(d)
        };
        // With E = 0 every score is 0 whatever the scale: take 1, not 1/√0.
        let scale = options
            .scale
            .unwrap_or(if e == 0 { 1.0 } else { 1.0 / (e as f64).sqrt() });
        if !scale.is_finite() {
            return Err(Error::invalid(
                OP,
                "scale",
                format!("must be finite, got {scale}"),
            ));
        }
        let mask = match &options.mask {
            Some(m) => Some(check_mask(m, q, &with([l, s]))?),
            None => None,
        };
        crate::tensor::probe_result(OP, &with([l, s]), q.dtype(), q.device())?;
        crate::tensor::probe_result(OP, &with([l, ev]), q.dtype(), q.device())?;
        // Broadcast views (recorded, so their gradients are summed back to
        // each operand's own shape by the broadcast rule).
        let q = q.broadcast_to(with([l, e]))?;
        let k = k.broadcast_to(with([s, e]))?;
        let v = v.broadcast_to(with([s, ev]))?;
        let (qd, kd, vd) = (q.detach(), k.detach(), v.detach());
        let (p, out) = {
            let _no_grad = NoGradGuard::new();
            let mut scores = qd.matmul(&kd.transpose(-2, -1)?)?.mul_scalar(scale)?;
            if let Some(mask) = &mask {
                scores = if mask.dtype() == DType::Bool {
                    scores.masked_fill(&mask.logical_not()?, f64::NEG_INFINITY)?
                } else {
                    scores.add(mask)?
                };
            }
            if options.causal {
                scores =
                    scores.masked_fill(&above_diagonal(l, s, q.device())?, f64::NEG_INFINITY)?;
            }
            let p = scores.softmax(-1)?;
            let out = p.matmul(&vd)?;
            (p, out)
        };
        let saved = vec![qd, kd, vd, p];
        Ok(record_saving(
            out,
            OP,
            &[&q, &k, &v],
            saved,
            move |g, saved| {
                let [q, k, v, p] = saved else {
                    unreachable!("attention saves q, k, v and p")
                };
                let dv = p.transpose(-2, -1)?.matmul(g)?;
                let dp = g.matmul(&v.transpose(-2, -1)?)?;
                // The softmax Jacobian, as softmax's own backward (one
                // fused pass where the backend has one).
                let last = p.rank() - 1;
                let ds = p.backend()?.softmax_backward(p, &dp, last, false)?;
                let ds = crate::fused_backward::tensor_like(ds, p).mul_scalar(scale)?;
                let dq = ds.matmul(k)?;
                let dk = ds.transpose(-2, -1)?.matmul(q)?;
                Ok(vec![Some(dq), Some(dk), Some(dv)])
            },
        ))
    }
}

/// `(rows, cols)` of a tensor of rank ≥ 2.
fn last_two(t: &Tensor) -> (usize, usize) {
    let r = t.rank();
    (t.dims()[r - 2], t.dims()[r - 1])
}

fn check_operands(q: &Tensor, k: &Tensor, v: &Tensor) -> Result<()> {
    for other in [k, v] {
        if other.device() != q.device() {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: q.device(),
                rhs: other.device(),
            });
        }
        if other.dtype() != q.dtype() {
            return Err(Error::DTypeMismatch {
                op: OP,
                lhs: q.dtype(),
                rhs: other.dtype(),
            });
        }
    }
    if !q.dtype().is_float() {
        return Err(Error::UnsupportedDType {
            op: OP,
            dtype: q.dtype(),
            hint: "attention needs a float dtype",
        });
    }
    for t in [q, k, v] {
        if t.rank() < 2 {
            return Err(Error::RankMismatch {
                op: OP,
                expected: 2,
                shape: t.shape().clone(),
            });
        }
    }
    // The query and the key share their width E; the key and the value
    // their length S.
    let (lhs, rhs) = if last_two(q).1 != last_two(k).1 {
        (q, k)
    } else {
        (k, v)
    };
    if last_two(q).1 != last_two(k).1 || last_two(k).0 != last_two(v).0 {
        return Err(Error::ShapeMismatch {
            op: OP,
            lhs: lhs.shape().clone(),
            rhs: rhs.shape().clone(),
        });
    }
    Ok(())
}

/// The broadcast batch dims of the three operands.
fn batch_shape(q: &Tensor, k: &Tensor, v: &Tensor) -> Result<Shape> {
    let batch = |t: &Tensor| Shape::from(&t.dims()[..t.rank() - 2]);
    let qk = broadcast_shapes(OP, &batch(q), &batch(k))?;
    broadcast_shapes(OP, &qk, &batch(v))
}

/// The mask, checked and broadcast to the scores' shape.
fn check_mask(mask: &Tensor, q: &Tensor, scores: &Shape) -> Result<Tensor> {
    if mask.device() != q.device() {
        return Err(Error::DeviceMismatch {
            op: OP,
            lhs: q.device(),
            rhs: mask.device(),
        });
    }
    if mask.dtype() != DType::Bool && mask.dtype() != q.dtype() {
        return Err(Error::DTypeMismatch {
            op: OP,
            lhs: q.dtype(),
            rhs: mask.dtype(),
        });
    }
    broadcast_shapes(OP, mask.shape(), scores)?;
    // The mask is a constant of the op: no gradient flows into it.
    mask.detach().broadcast_to(scores.clone())
}

/// `true` where key `j` lies after query `i` (`j > i`): the keys a causal
/// query must not see, `[l, s]`.
fn above_diagonal(l: usize, s: usize, device: oxmera_core::Device) -> Result<Tensor> {
    let cells: Vec<bool> = (0..l).flat_map(|i| (0..s).map(move |j| j > i)).collect();
    Tensor::from_vec(cells, [l, s], device)
}
