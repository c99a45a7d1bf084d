//! Attention and positions: `MultiheadAttention` with PyTorch's parameter
//! layout, and learned and sinusoidal positional embeddings.

use oxmera_core::{DType, Device, Error, Result, Shape};
use oxmera_tensor::{AttentionOptions, Generator, Tensor};

use crate::init;
use crate::{Linear, Module, ModuleState, Param, join_name};

/// Multi-head attention, batch first (`[B, T, E]`), with the parameters
/// PyTorch's `nn.MultiheadAttention(E, H, batch_first=True)` has, under
/// the same names: `in_proj_weight` `[3E, E]` (the query, key and value
/// projections stacked), `in_proj_bias` `[3E]`, `out_proj.weight`,
/// `out_proj.bias`. A PyTorch state dict loads as it is.
///
/// Each head attends with [`Tensor::scaled_dot_product_attention`] over
/// `E / H` dims. [`Module::forward`] is self-attention without a mask;
/// [`MultiheadAttention::attend`] takes separate query, key and value and
/// [`AttentionOptions`] (a causal mask, an additive or boolean mask).
///
/// One difference from PyTorch's layer, on purpose: a **bool** mask here
/// keeps the keys where it is `true`, as `scaled_dot_product_attention`
/// (and this crate's every mask) does; `nn.MultiheadAttention`'s
/// `attn_mask` marks with `true` the keys to *remove*. Float masks mean the
/// same on both sides.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Module, ModuleState, MultiheadAttention};
/// use oxmera_tensor::{AttentionOptions, Generator, Tensor};
/// let dev = Device::Reference;
/// let mha = MultiheadAttention::new(8, 2, &mut Generator::new(0), DType::F32, dev)?;
/// let x = Generator::new(1).randn([3, 5, 8], DType::F32, dev)?;
/// assert_eq!(mha.forward(&x)?.dims(), &[3, 5, 8]);
/// let causal = mha.attend(&x, &x, &x, &AttentionOptions::new().causal(true))?;
/// assert_eq!(causal.dims(), &[3, 5, 8]);
/// let names: Vec<String> = mha.state_dict().into_keys().collect();
/// assert_eq!(names, ["in_proj_bias", "in_proj_weight", "out_proj.bias", "out_proj.weight"]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct MultiheadAttention {
    in_proj_weight: Param,
    in_proj_bias: Option<Param>,
    out_proj: Linear,
    embed_dim: usize,
    num_heads: usize,
}

impl MultiheadAttention {
    /// `num_heads` heads over `embed_dim` (which they must divide;
    /// [`Error::InvalidArgument`] otherwise), with biases, initialized as
    /// PyTorch does: Xavier-uniform input projections, the output
    /// projection as a default [`Linear`], every bias zero.
    #[track_caller]
    pub fn new(
        embed_dim: usize,
        num_heads: usize,
        rng: &mut Generator,
        dtype: DType,
        device: Device,
    ) -> Result<MultiheadAttention> {
        if num_heads == 0 || embed_dim % num_heads != 0 {
            return Err(Error::invalid(
                "MultiheadAttention",
                "num_heads",
                format!("{num_heads} heads must divide embed_dim {embed_dim}"),
            ));
        }
        let weight = init::xavier_uniform([3 * embed_dim, embed_dim], 1.0, rng, dtype, device)?;
        let bias = Tensor::zeros([3 * embed_dim], dtype, device)?;
        let out_proj = Linear::new(embed_dim, embed_dim, true, rng, dtype, device)?;
        if let Some(b) = out_proj.bias() {
            b.set(Tensor::zeros([embed_dim], dtype, device)?)?;
        }
        Ok(MultiheadAttention {
            in_proj_weight: Param::new(weight)?,
            in_proj_bias: Some(Param::new(bias)?),
            out_proj,
            embed_dim,
            num_heads,
        })
    }

    /// The model width `E`.
    pub fn embed_dim(&self) -> usize {
        self.embed_dim
    }

    /// The number of heads `H`.
    pub fn num_heads(&self) -> usize {
        self.num_heads
    }

    /// The stacked query/key/value projection, `[3E, E]`.
    pub fn in_proj_weight(&self) -> &Param {
        &self.in_proj_weight
    }

    /// The output projection.
    pub fn out_proj(&self) -> &Linear {
        &self.out_proj
    }

    /// Attention of `query` `[B, L, E]` over `key` and `value` `[B, S, E]`
    /// (or unbatched `[L, E]`, `[S, E]`), `[B, L, E]` out. `options`' mask
    /// broadcasts to the scores `[B, H, L, S]`.
    pub fn attend(
        &self,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        options: &AttentionOptions,
    ) -> Result<Tensor> {
        for x in [query, key, value] {
            self.check_input(x)?;
        }
        if query.rank() == 2 {
            let batched = self.attend(
                &query.unsqueeze(0)?,
                &key.unsqueeze(0)?,
                &value.unsqueeze(0)?,
                options,
            )?;
            return batched.squeeze(0);
        }
        if query.rank() != key.rank() || key.rank() != value.rank() {
            return Err(Error::ShapeMismatch {
                op: "MultiheadAttention",
                lhs: query.shape().clone(),
                rhs: key.shape().clone(),
            });
        }
        let e = self.embed_dim as isize;
        let w = self.in_proj_weight.tensor();
        let b = self.in_proj_bias.as_ref().map(Param::tensor);
        let project = |x: &Tensor, part: isize| -> Result<Tensor> {
            let y = x.matmul(&w.narrow(0, part * e, e as usize)?.t()?)?;
            match &b {
                Some(b) => y.add(&b.narrow(0, part * e, e as usize)?),
                None => Ok(y),
            }
        };
        let (q, k, v) = (project(query, 0)?, project(key, 1)?, project(value, 2)?);
        self.heads_attend(&q, &k, &v, options)
    }

    /// `[B, T, E]` → `[B, H, T, E/H]`: the heads as a batch dim.
    fn split_heads(&self, x: &Tensor) -> Result<Tensor> {
        let (b, t) = (x.dims()[0], x.dims()[1]);
        let d = self.embed_dim / self.num_heads;
        x.reshape([b, t, self.num_heads, d])?.permute(&[0, 2, 1, 3])
    }

    /// Attention per head of projected `q`, `k`, `v`, then the heads
    /// joined and projected out.
    fn heads_attend(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        options: &AttentionOptions,
    ) -> Result<Tensor> {
        let (b, l) = (q.dims()[0], q.dims()[1]);
        let heads = self.split_heads(q)?.scaled_dot_product_attention(
            &self.split_heads(k)?,
            &self.split_heads(v)?,
            options,
        )?;
        let joined = heads
            .permute(&[0, 2, 1, 3])?
            .reshape([b, l, self.embed_dim])?;
        self.out_proj.forward(&joined)
    }

    fn check_input(&self, x: &Tensor) -> Result<()> {
        if !(x.rank() == 2 || x.rank() == 3) || x.dims()[x.rank() - 1] != self.embed_dim {
            return Err(Error::ShapeMismatch {
                op: "MultiheadAttention",
                lhs: x.shape().clone(),
                rhs: Shape::from([0, 0, self.embed_dim]),
            });
        }
        Ok(())
    }
}

impl Module for MultiheadAttention {
    /// Self-attention of `x` `[B, T, E]` (or `[T, E]`) without a mask.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.self_attend(x, &AttentionOptions::new())
    }
}

impl MultiheadAttention {
    /// Self-attention of `x` `[B, T, E]` (or `[T, E]`) with `options`:
    /// [`MultiheadAttention::attend`] with `x` as query, key and value.
    ///
    /// The three projections are three products with row blocks of
    /// `in_proj_weight`, not one product with all of it split afterwards:
    /// the same arithmetic, but the gradient of a split of the `[B, T, 3E]`
    /// activations is three zero-padded copies of that size, where the
    /// gradient of a row block of the `[3E, E]` weight is one small one
    /// (measured: 13 ms of a 250 ms training step of the Shakespeare
    /// transformer went to those copies).
    pub fn self_attend(&self, x: &Tensor, options: &AttentionOptions) -> Result<Tensor> {
        self.attend(x, x, x, options)
    }
}

impl ModuleState for MultiheadAttention {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        out.push((
            join_name(prefix, "in_proj_weight"),
            self.in_proj_weight.clone(),
        ));
        if let Some(b) = &self.in_proj_bias {
            out.push((join_name(prefix, "in_proj_bias"), b.clone()));
        }
        self.out_proj
            .visit_params(&join_name(prefix, "out_proj"), out);
    }
}

/// A learned position table `weight` `[max_len, dim]`: adds row `t` to
/// position `t` of `x` `[..., T, dim]` (`T <= max_len`). Drawn from
/// `N(0, std²)`.
#[derive(Debug, Clone)]
pub struct LearnedPositionalEmbedding {
    weight: Param,
}

impl LearnedPositionalEmbedding {
    /// A table of `max_len` positions of width `dim`, drawn from
    /// `N(0, std²)` (GPT-2 uses 0.02; PyTorch's `nn.Embedding` 1).
    #[track_caller]
    pub fn new(
        max_len: usize,
        dim: usize,
        std: f64,
        rng: &mut Generator,
        dtype: DType,
        device: Device,
    ) -> Result<LearnedPositionalEmbedding> {
        let weight = rng.randn([max_len, dim], dtype, device)?.mul_scalar(std)?;
        Ok(LearnedPositionalEmbedding {
            weight: Param::new(weight)?,
        })
    }

    /// The table, `[max_len, dim]`.
    pub fn weight(&self) -> &Param {
        &self.weight
    }
}

impl Module for LearnedPositionalEmbedding {
    /// `x` `[..., T, dim]` plus the first `T` rows ([`Error::ShapeMismatch`]
    /// for another width or `T > max_len`).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        add_positions("LearnedPositionalEmbedding", x, &self.weight.tensor())
    }
}

impl ModuleState for LearnedPositionalEmbedding {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        out.push((join_name(prefix, "weight"), self.weight.clone()));
    }
}

/// The fixed sinusoidal positions of "Attention Is All You Need":
/// `PE[t, 2i] = sin(t / 10000^(2i/dim))`, `PE[t, 2i+1] = cos(…)`, added
/// to `x` `[..., T, dim]`. Nothing to learn and nothing in the state dict:
/// the table is a function of `max_len` and `dim`.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Module, SinusoidalPositionalEmbedding};
/// use oxmera_tensor::Tensor;
/// let pe = SinusoidalPositionalEmbedding::new(4, 2, DType::F64, Device::Reference)?;
/// let x = Tensor::zeros([2, 2], DType::F64, Device::Reference)?;
/// let y = pe.forward(&x)?.to_vec::<f64>()?;
/// assert_eq!(y[..2], [0.0, 1.0]); // position 0: sin 0, cos 0
/// assert_eq!(y[2], 1f64.sin());
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SinusoidalPositionalEmbedding {
    table: Tensor,
}

impl SinusoidalPositionalEmbedding {
    /// The table for `max_len` positions of width `dim`, computed in `f64`
    /// and rounded once to `dtype`.
    pub fn new(
        max_len: usize,
        dim: usize,
        dtype: DType,
        device: Device,
    ) -> Result<SinusoidalPositionalEmbedding> {
        let mut cells = Vec::with_capacity(max_len.saturating_mul(dim));
        for t in 0..max_len {
            for j in 0..dim {
                let rate = 10000f64.powf(-((j - j % 2) as f64) / dim as f64);
                let angle = t as f64 * rate;
                cells.push(if j % 2 == 0 { angle.sin() } else { angle.cos() });
            }
        }
        let table = Tensor::from_vec(cells, [max_len, dim], device)?.to_dtype(dtype)?;
        Ok(SinusoidalPositionalEmbedding { table })
    }

    /// The table, `[max_len, dim]`.
    pub fn table(&self) -> &Tensor {
        &self.table
    }
}

impl Module for SinusoidalPositionalEmbedding {
    /// `x` `[..., T, dim]` plus the first `T` rows ([`Error::ShapeMismatch`]
    /// for another width or `T > max_len`).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        add_positions("SinusoidalPositionalEmbedding", x, &self.table)
    }
}

impl ModuleState for SinusoidalPositionalEmbedding {
    fn visit_params(&self, _prefix: &str, _out: &mut Vec<(String, Param)>) {}
}

/// `x` `[..., T, dim]` plus the first `T` rows of `table` `[max_len, dim]`.
fn add_positions(op: &'static str, x: &Tensor, table: &Tensor) -> Result<Tensor> {
    let (max_len, dim) = (table.dims()[0], table.dims()[1]);
    let fits = x.rank() >= 2 && x.dims()[x.rank() - 1] == dim && x.dims()[x.rank() - 2] <= max_len;
    if !fits {
        return Err(Error::ShapeMismatch {
            op,
            lhs: x.shape().clone(),
            rhs: table.shape().clone(),
        });
    }
    let t = x.dims()[x.rank() - 2];
    x.add(&table.narrow(0, 0, t)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
        let (a, b) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
        a.iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    /// One head at a time, by the definition: the projections' rows for
    /// head `h`, softmax(q kᵀ / √d) v, the heads side by side, the output
    /// projection.
    fn by_definition(mha: &MultiheadAttention, q: &Tensor, k: &Tensor, v: &Tensor) -> Tensor {
        let (e, h) = (mha.embed_dim(), mha.num_heads());
        let d = e / h;
        let w = mha.in_proj_weight().tensor();
        let mut heads = Vec::new();
        for i in 0..h {
            let rows = |part: usize| w.narrow(0, (part * e + i * d) as isize, d).unwrap();
            let qh = q.matmul(&rows(0).t().unwrap()).unwrap();
            let kh = k.matmul(&rows(1).t().unwrap()).unwrap();
            let vh = v.matmul(&rows(2).t().unwrap()).unwrap();
            let s = qh.matmul(&kh.transpose(-2, -1).unwrap()).unwrap();
            let p = s
                .div_scalar((d as f64).sqrt())
                .unwrap()
                .softmax(-1)
                .unwrap();
            heads.push(p.matmul(&vh).unwrap());
        }
        let joined = Tensor::cat(&heads, -1).unwrap();
        mha.out_proj().forward(&joined).unwrap()
    }

    #[test]
    fn heads_equal_the_definition_and_self_attention_is_one_product() {
        let mut rng = Generator::new(8);
        let mha = MultiheadAttention::new(6, 3, &mut rng, DType::F64, DEV).unwrap();
        // Biases are zero at init (as PyTorch); the definition above has
        // none, so the comparison holds. Make the out bias non-zero.
        mha.out_proj()
            .bias()
            .unwrap()
            .set(rng.randn([6], DType::F64, DEV).unwrap())
            .unwrap();
        let x = rng.randn([2, 4, 6], DType::F64, DEV).unwrap();
        let kv = rng.randn([2, 5, 6], DType::F64, DEV).unwrap();
        let cross = mha.attend(&x, &kv, &kv, &AttentionOptions::new()).unwrap();
        assert!(max_diff(&cross, &by_definition(&mha, &x, &kv, &kv)) < 1e-13);
        let own = mha.forward(&x).unwrap();
        assert!(max_diff(&own, &by_definition(&mha, &x, &x, &x)) < 1e-13);
        let unbatched = mha.forward(&x.select(0, 1).unwrap()).unwrap();
        assert!(max_diff(&unbatched, &own.select(0, 1).unwrap()) < 1e-15);
    }

    #[test]
    fn causal_self_attention_ignores_the_future_and_gradients_check() {
        let mut rng = Generator::new(9);
        let mha = MultiheadAttention::new(4, 2, &mut rng, DType::F64, DEV).unwrap();
        let causal = AttentionOptions::new().causal(true);
        let x = rng.randn([1, 5, 4], DType::F64, DEV).unwrap();
        let y = mha.self_attend(&x, &causal).unwrap();
        // Changing the last position changes only the last output.
        let fresh = rng.randn([1, 1, 4], DType::F64, DEV).unwrap();
        let later = Tensor::cat(&[x.narrow(1, 0, 4).unwrap(), fresh], 1).unwrap();
        let y2 = mha.self_attend(&later, &causal).unwrap();
        let first = |t: &Tensor| t.narrow(1, 0, 4).unwrap();
        assert_eq!(max_diff(&first(&y), &first(&y2)), 0.0);
        let w = rng.randn([1, 5, 4], DType::F64, DEV).unwrap();
        check_grad(
            |xs| mha.self_attend(&xs[0], &causal)?.mul(&w)?.sum_all(),
            &[x],
        );
    }

    #[test]
    fn positions_add_rows_and_refuse_long_inputs() {
        let mut rng = Generator::new(1);
        let learned =
            LearnedPositionalEmbedding::new(3, 2, 0.02, &mut rng, DType::F64, DEV).unwrap();
        let table = learned.weight().tensor().to_f64_vec().unwrap();
        let x = Tensor::zeros([2, 2, 2], DType::F64, DEV).unwrap();
        let y = learned.forward(&x).unwrap().to_f64_vec().unwrap();
        assert_eq!(y[..4], table[..4]);
        assert_eq!(y[4..], table[..4]);
        assert!(table.iter().all(|v| v.abs() < 0.2), "std 0.02: {table:?}");
        let long = Tensor::zeros([4, 2], DType::F64, DEV).unwrap();
        assert!(matches!(
            learned.forward(&long),
            Err(Error::ShapeMismatch { .. })
        ));
        let sin = SinusoidalPositionalEmbedding::new(8, 4, DType::F64, DEV).unwrap();
        let t = sin.table().to_f64_vec().unwrap();
        // Row 5, dims 2 and 3: rate 10000^(-2/4) = 0.01.
        assert_eq!(t[5 * 4 + 2], (5.0f64 * 0.01).sin());
        assert_eq!(t[5 * 4 + 3], (5.0f64 * 0.01).cos());
        assert!(sin.state_dict().is_empty());
        assert!(matches!(
            MultiheadAttention::new(6, 4, &mut rng, DType::F64, DEV),
            Err(Error::InvalidArgument { .. })
        ));
    }
}
