//! A character-level transformer: the decoder-only model of GPT, small
//! enough to train on two CPU cores in minutes.
//!
//! Characters become vectors (a token embedding plus a learned position
//! embedding), pass through `layers` blocks, and come out as one logit per
//! vocabulary entry at every position: the model's guess at the next
//! character. Each block is
//!
//! ```text
//! x = x + attention(layer_norm(x))      causal: position t sees 0..=t
//! x = x + mlp(layer_norm(x))            width → 4·width → GELU → width
//! ```
//!
//! (the "pre-norm" arrangement: the residual stream is never normalized
//! itself, which keeps deep stacks trainable without warm-up tricks).
//! Weights start as GPT-2's do: `N(0, 0.02)`, the projections that write
//! into the residual stream scaled down by `√(2·layers)` so the stream's
//! variance does not grow with depth, biases zero.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::{AttentionOptions, Generator, NoGradGuard, Tensor};

use crate::loss::{CrossEntropyOptions, cross_entropy};
use crate::{
    Dropout, Embedding, LayerNorm, LearnedPositionalEmbedding, Linear, Module, MultiheadAttention,
    Param,
};

/// The standard deviation of GPT-2's initial weights.
const INIT_STD: f64 = 0.02;

/// The shape of a [`CharTransformer`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransformerConfig {
    /// Distinct characters (the logits' width).
    pub vocab_size: usize,
    /// The longest sequence the model reads (its position table's length).
    pub context: usize,
    /// The width of the residual stream.
    pub width: usize,
    /// Attention heads per block (they divide `width`).
    pub heads: usize,
    /// Blocks.
    pub layers: usize,
    /// Dropout after attention and the MLP, in training.
    pub dropout: f64,
}

impl TransformerConfig {
    /// The defaults `oxmera train --model transformer` uses: context 64,
    /// width 128, 4 heads, 4 layers, no dropout — 0.82 M parameters for
    /// a 76-character vocabulary.
    pub fn new(vocab_size: usize) -> Self {
        TransformerConfig {
            vocab_size,
            context: 64,
            width: 128,
            heads: 4,
            layers: 4,
            dropout: 0.0,
        }
    }

    /// The configuration as one line of `key=value` pairs (what a
    /// checkpoint stores; [`TransformerConfig::parse`] reads it back).
    pub fn to_line(&self) -> String {
        format!(
            "vocab_size={} context={} width={} heads={} layers={} dropout={}",
            self.vocab_size, self.context, self.width, self.heads, self.layers, self.dropout
        )
    }

    /// Reads [`TransformerConfig::to_line`]'s format; every key must be
    /// present ([`Error::InvalidArgument`] naming what is wrong otherwise).
    pub fn parse(line: &str) -> Result<Self> {
        let bad = |what: String| Error::invalid("TransformerConfig", "line", what);
        let get = |key: &str| -> Result<&str> {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                .ok_or_else(|| bad(format!("{key:?} is missing from {line:?}")))
        };
        let int = |key: &str| -> Result<usize> {
            let v = get(key)?;
            v.parse()
                .map_err(|_| bad(format!("{key}={v} is not a whole number")))
        };
        let dropout = get("dropout")?;
        Ok(TransformerConfig {
            vocab_size: int("vocab_size")?,
            context: int("context")?,
            width: int("width")?,
            heads: int("heads")?,
            layers: int("layers")?,
            dropout: dropout
                .parse()
                .map_err(|_| bad(format!("dropout={dropout} is not a number")))?,
        })
    }
}

/// The loss a character model trains with: the mean cross-entropy of
/// logits `[B, T, V]` against the next characters `[B, T]`, every
/// position one prediction (the logits seen as `[B·T, V]`).
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::models::next_char_loss;
/// use oxmera_tensor::Tensor;
/// // Equal logits over 4 characters: ln 4 per prediction.
/// let logits = Tensor::zeros([2, 3, 4], DType::F64, Device::Reference)?;
/// let next = Tensor::zeros([2, 3], DType::I64, Device::Reference)?;
/// assert!((next_char_loss(&logits, &next)?.item()? - 4f64.ln()).abs() < 1e-15);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn next_char_loss(logits: &Tensor, targets: &Tensor) -> Result<Tensor> {
    let (flat, next) = flatten_positions(logits, targets)?;
    cross_entropy(&flat, &next, &CrossEntropyOptions::default())
}

/// Logits `[B, T, V]` and targets `[B, T]` as `[B·T, V]` and `[B·T]`
/// (other ranks unchanged): every position one prediction.
pub fn flatten_positions(logits: &Tensor, targets: &Tensor) -> Result<(Tensor, Tensor)> {
    if logits.rank() != 3 {
        return Ok((logits.clone(), targets.clone()));
    }
    if targets.dims() != &logits.dims()[..2] {
        return Err(Error::ShapeMismatch {
            op: "next_char_loss",
            lhs: logits.shape().clone(),
            rhs: targets.shape().clone(),
        });
    }
    let v = logits.dims()[2];
    let n = logits.numel() / v.max(1);
    Ok((logits.reshape([n, v])?, targets.reshape([n])?))
}

/// One pre-norm block: causal self-attention, then an MLP, each added to
/// the residual stream.
#[derive(Debug, crate::Module)]
#[module(crate = "crate")]
struct Block {
    ln1: LayerNorm,
    attn: MultiheadAttention,
    ln2: LayerNorm,
    mlp_in: Linear,
    mlp_out: Linear,
    drop: Dropout,
}

impl Module for Block {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let causal = AttentionOptions::new().causal(true);
        let a = self.attn.self_attend(&self.ln1.forward(x)?, &causal)?;
        let x = x.add(&self.drop.forward(&a)?)?;
        let hidden = self.mlp_in.forward(&self.ln2.forward(&x)?)?.gelu()?;
        x.add(&self.drop.forward(&self.mlp_out.forward(&hidden)?)?)
    }
}

/// The character-level transformer: token ids `[B, T]` (`T <= context`)
/// in, next-character logits `[B, T, vocab_size]` out. State-dict names
/// are plain paths (`tok_emb.weight`, `blocks.0.attn.in_proj_weight`, …)
/// that a PyTorch twin of the same fields loads as they are.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::Module;
/// use oxmera_nn::models::{CharTransformer, TransformerConfig};
/// use oxmera_tensor::{Generator, Tensor};
/// let config = TransformerConfig { context: 8, width: 16, heads: 2, layers: 1, ..TransformerConfig::new(5) };
/// let model = CharTransformer::new(config, &mut Generator::new(0), DType::F32, Device::Reference)?;
/// let ids = Tensor::from_vec(vec![0i64, 1, 2, 3, 4, 0], [2, 3], Device::Reference)?;
/// assert_eq!(model.forward(&ids)?.dims(), &[2, 3, 5]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, crate::Module)]
#[module(crate = "crate")]
pub struct CharTransformer {
    tok_emb: Embedding,
    pos_emb: LearnedPositionalEmbedding,
    blocks: Vec<Block>,
    ln_f: LayerNorm,
    head: Linear,
    #[module(skip)]
    config: TransformerConfig,
}

impl CharTransformer {
    /// A model of `config`'s shape with GPT-2's initialization, drawn from
    /// `rng`. [`Error::InvalidArgument`] for a zero size, heads that do not
    /// divide the width, or a dropout outside `[0, 1]`.
    #[track_caller]
    pub fn new(
        config: TransformerConfig,
        rng: &mut Generator,
        dtype: DType,
        device: Device,
    ) -> Result<CharTransformer> {
        let c = config;
        if c.vocab_size == 0 || c.context == 0 || c.width == 0 || c.layers == 0 {
            return Err(Error::invalid(
                "CharTransformer",
                "config",
                format!("every size must be at least 1: {}", c.to_line()),
            ));
        }
        let w = c.width;
        let normal = |rng: &mut Generator, p: &Param, std: f64| -> Result<()> {
            p.set(
                rng.randn(p.tensor().shape().clone(), dtype, device)?
                    .mul_scalar(std)?,
            )
        };
        let zero_bias = |l: &Linear| -> Result<()> {
            match l.bias() {
                Some(b) => b.set(Tensor::zeros(
                    [l.weight().tensor().dims()[0]],
                    dtype,
                    device,
                )?),
                None => Ok(()),
            }
        };
        // Projections into the residual stream add up over 2·layers
        // writes; this keeps the stream's variance at init independent of
        // depth (GPT-2's rule).
        let residual_std = INIT_STD / ((2 * c.layers) as f64).sqrt();
        let mut blocks = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let attn = MultiheadAttention::new(w, c.heads, rng, dtype, device)?;
            normal(rng, attn.in_proj_weight(), INIT_STD)?;
            normal(rng, attn.out_proj().weight(), residual_std)?;
            let mlp_in = Linear::new(w, 4 * w, true, rng, dtype, device)?;
            let mlp_out = Linear::new(4 * w, w, true, rng, dtype, device)?;
            normal(rng, mlp_in.weight(), INIT_STD)?;
            normal(rng, mlp_out.weight(), residual_std)?;
            zero_bias(&mlp_in)?;
            zero_bias(&mlp_out)?;
            blocks.push(Block {
                ln1: LayerNorm::new([w], dtype, device)?,
                attn,
                ln2: LayerNorm::new([w], dtype, device)?,
                mlp_in,
                mlp_out,
                // Each block's dropout draws from its own stream.
                drop: Dropout::new(c.dropout, Generator::new(rng.seed() ^ (0xd0 + i as u64)))?,
            });
        }
        let tok_emb = Embedding::new(c.vocab_size, w, rng, dtype, device)?;
        normal(rng, tok_emb.weight(), INIT_STD)?;
        let head = Linear::new(w, c.vocab_size, true, rng, dtype, device)?;
        normal(rng, head.weight(), INIT_STD)?;
        zero_bias(&head)?;
        Ok(CharTransformer {
            tok_emb,
            pos_emb: LearnedPositionalEmbedding::new(c.context, w, INIT_STD, rng, dtype, device)?,
            blocks,
            ln_f: LayerNorm::new([w], dtype, device)?,
            head,
            config: c,
        })
    }

    /// The model's shape.
    pub fn config(&self) -> TransformerConfig {
        self.config
    }

    /// Continues `prompt` (token ids, at least one) by `options.tokens`
    /// sampled ids, each drawn from the softmax of the last position's
    /// logits divided by the temperature, among the `top_k` likeliest
    /// (all when `None`). The model reads at most its last `context` ids.
    /// Deterministic for a given `rng`. Call [`Module::eval`] first if the
    /// model has dropout.
    pub fn generate(
        &self,
        prompt: &[i64],
        options: &SampleOptions,
        rng: &mut Generator,
    ) -> Result<Vec<i64>> {
        self.generate_each(prompt, options, rng, |_| {})
    }

    /// [`CharTransformer::generate`], calling `each` with every new id as
    /// soon as it is drawn (to print a sample as it grows).
    pub fn generate_each(
        &self,
        prompt: &[i64],
        options: &SampleOptions,
        rng: &mut Generator,
        mut each: impl FnMut(i64),
    ) -> Result<Vec<i64>> {
        let bad = |name: &'static str, what: String| Error::invalid("generate", name, what);
        if prompt.is_empty() {
            return Err(bad("prompt", "needs at least one token".into()));
        }
        if !(options.temperature.is_finite() && options.temperature > 0.0) {
            return Err(bad(
                "temperature",
                format!("must be a positive number, got {}", options.temperature),
            ));
        }
        if options.top_k == Some(0) {
            return Err(bad("top_k", "must be at least 1".into()));
        }
        let _no_grad = NoGradGuard::new();
        let device = self.head.weight().tensor().device();
        let mut ids = prompt.to_vec();
        for _ in 0..options.tokens {
            let window = &ids[ids.len().saturating_sub(self.config.context)..];
            let x = Tensor::from_vec(window.to_vec(), [1, window.len()], device)?;
            let logits = self.forward(&x)?.select(1, -1)?.to_f64_vec()?;
            let id = sample(&logits, options, rng, device)?;
            each(id);
            ids.push(id);
        }
        Ok(ids)
    }
}

/// How [`CharTransformer::generate`] draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleOptions {
    /// Ids to add.
    pub tokens: usize,
    /// Divides the logits: below 1 sharpens, above 1 flattens.
    pub temperature: f64,
    /// Draw only among the `k` likeliest ids.
    pub top_k: Option<usize>,
}

impl Default for SampleOptions {
    /// 500 ids at temperature 1, among all.
    fn default() -> Self {
        SampleOptions {
            tokens: 500,
            temperature: 1.0,
            top_k: None,
        }
    }
}

/// One id drawn from `logits` as `options` say: the top `k` kept (ties at
/// the k-th value kept too, so the draw does not depend on a sort's
/// order), softmax at the temperature, then the inverse of the cumulative
/// distribution at one uniform draw.
fn sample(
    logits: &[f64],
    options: &SampleOptions,
    rng: &mut Generator,
    device: Device,
) -> Result<i64> {
    let mut scaled: Vec<f64> = logits.iter().map(|l| l / options.temperature).collect();
    if let Some(k) = options.top_k
        && k < scaled.len()
    {
        let mut sorted = scaled.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        let cut = sorted[k - 1];
        for s in &mut scaled {
            if *s < cut {
                *s = f64::NEG_INFINITY;
            }
        }
    }
    let max = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = scaled.iter().map(|s| (s - max).exp()).collect();
    let total: f64 = weights.iter().sum();
    // Drawn where the model is (every device has f32 uniforms).
    let u = f64::from(rng.rand([1], DType::F32, device)?.to_vec::<f32>()?[0]) * total;
    let mut acc = 0.0;
    for (i, w) in weights.iter().enumerate() {
        acc += w;
        if u < acc {
            return Ok(i as i64);
        }
    }
    // Rounding can leave u at the very top: the last id with weight.
    Ok(weights.iter().rposition(|&w| w > 0.0).unwrap_or(0) as i64)
}

impl Module for CharTransformer {
    /// `x` `[B, T]` of `i64`/`i32` ids below `vocab_size`, `T <=
    /// context`; logits `[B, T, vocab_size]`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if x.rank() != 2 || x.dims()[1] > self.config.context {
            return Err(Error::ShapeMismatch {
                op: "CharTransformer",
                lhs: x.shape().clone(),
                rhs: oxmera_core::Shape::from([0, self.config.context]),
            });
        }
        let mut h = self.pos_emb.forward(&self.tok_emb.forward(x)?)?;
        for block in &self.blocks {
            h = block.forward(&h)?;
        }
        self.head.forward(&self.ln_f.forward(&h)?)
    }
}
