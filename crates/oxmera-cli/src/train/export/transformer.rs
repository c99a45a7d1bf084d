//! The character-level transformer of `oxmera train --model transformer`
//! as an ONNX graph: token ids `input` `[batch, tokens]` (`int64`,
//! `tokens` up to the model's context) in, next-character `logits`
//! `[batch, tokens, vocab]` out.
//!
//! Each layer of [`CharTransformer`] becomes the few ONNX operators that
//! compute it, in the order its `forward` runs them, and every weight keeps
//! its state-dict name as an initializer (`blocks.0.attn.in_proj_weight`,
//! …), so the graph reads beside `oxmera_nn::models`:
//!
//! - `Embedding` → `Gather` of `tok_emb.weight` rows; the learned positions
//!   → `Slice` of `pos_emb.weight`'s first `tokens` rows (the count read by
//!   `Shape` from the input), added.
//! - `LayerNorm` → `LayerNormalization` (opset 17) over the last axis.
//! - `Linear` → `MatMul` by the `Transpose`d weight, then `Add` of the
//!   bias (`Gemm` takes only matrices).
//! - `MultiheadAttention` with a causal mask → the in-projection as one
//!   product, `Split` into q, k, v; heads by `Reshape`/`Transpose`;
//!   `MatMul`, `Mul` by 1/√head_dim, `Add` of the causal mask (0 on and
//!   below the diagonal, −∞ above; a `[context, context]` initializer cut
//!   to `[tokens, tokens]`), `Softmax`, `MatMul`; heads joined; the out
//!   projection.
//! - Exact GELU → `x · (1 + erf(x/√2)) / 2` with `Erf` (`Gelu` is opset 20,
//!   newer than most runtimes in use).
//!
//! Opset 17 (ONNX 1.12, ONNX Runtime 1.12 and later) for
//! `LayerNormalization`; IR version 8.

use oxmera::Tensor;
use oxmera_data::{CharVocab, TextPart, TextSplit};
use oxmera_nn::Module;
use oxmera_nn::models::CharTransformer;
use oxmera_tensorboard::wire::Message;

use super::{
    Dim, ExportArgs, FLOAT, INT64, Opset, attr_float, attr_int, attr_ints, initializer,
    model_bytes, node, node_outputs, raw_initializer, value_info, write_sample, wrote,
};
use crate::train::error::TrainError;

/// `LayerNormalization` is in opset 17; IR 8 goes with it.
const TRANSFORMER_OPSET: Opset = Opset {
    version: 17,
    ir_version: 8,
};

/// The `eps` of every `LayerNorm` `CharTransformer::new` builds
/// (`LayerNorm::new`'s default; CI's ONNX Runtime comparison would catch
/// a change).
const LAYER_NORM_EPS: f32 = 1e-5;

/// A graph under construction: nodes whose outputs get fresh names.
struct Graph {
    message: Message,
    names: usize,
}

impl Graph {
    /// Adds a node of `op` and returns its output's name.
    fn op(&mut self, op: &str, inputs: &[&str], attributes: &[Message]) -> String {
        self.names += 1;
        let out = format!("{}_{}", op.to_lowercase(), self.names);
        self.message.message(1, &node(op, inputs, &out, attributes));
        out
    }

    /// Adds the weight `name` of `state` as an initializer.
    fn weight(&mut self, state: &State, name: &str) -> Result<String, TrainError> {
        let t = state.get(name).ok_or_else(|| {
            TrainError::Usage(format!(
                "the checkpoint's transformer has no {name}: not a model oxmera train wrote"
            ))
        })?;
        self.message.message(5, &initializer(name, t)?);
        Ok(name.to_string())
    }

    /// A constant initializer of `i64` values.
    fn ints(&mut self, name: &str, dims: &[usize], values: &[i64]) -> String {
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.message
            .message(5, &raw_initializer(name, dims, INT64, &raw));
        name.to_string()
    }

    /// A constant initializer of `f32` values.
    fn floats(&mut self, name: &str, dims: &[usize], values: &[f32]) -> String {
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.message
            .message(5, &raw_initializer(name, dims, FLOAT, &raw));
        name.to_string()
    }

    /// `LayerNorm` `prefix` over the last axis.
    fn layer_norm(&mut self, state: &State, x: &str, prefix: &str) -> Result<String, TrainError> {
        let w = self.weight(state, &format!("{prefix}.weight"))?;
        let b = self.weight(state, &format!("{prefix}.bias"))?;
        Ok(self.op(
            "LayerNormalization",
            &[x, &w, &b],
            &[attr_int("axis", -1), attr_float("epsilon", LAYER_NORM_EPS)],
        ))
    }

    /// `x · weightᵀ + bias` for a `[out, in]` weight.
    fn linear(&mut self, x: &str, weight: &str, bias: &str) -> String {
        let wt = self.op("Transpose", &[weight], &[attr_ints("perm", &[1, 0])]);
        let y = self.op("MatMul", &[x, &wt], &[]);
        self.op("Add", &[&y, bias], &[])
    }

    /// `Linear` `prefix` (its `weight` and `bias`).
    fn linear_layer(&mut self, state: &State, x: &str, prefix: &str) -> Result<String, TrainError> {
        let w = self.weight(state, &format!("{prefix}.weight"))?;
        let b = self.weight(state, &format!("{prefix}.bias"))?;
        Ok(self.linear(x, &w, &b))
    }
}

type State = std::collections::BTreeMap<String, Tensor>;

/// The constants every block reads.
struct Shared {
    /// `[tokens, tokens]`: 0 where a position may look, −∞ where not.
    mask: String,
    /// `[1]`: 1/√head_dim.
    scale: String,
    /// `[0, 0, heads, head_dim]` and `[0, 0, width]` (`Reshape` keeps a
    /// 0's dim).
    split_heads: String,
    join_heads: String,
    /// `[width, width, width]`: the in-projection's three parts.
    thirds: String,
    /// `[1]` constants of GELU.
    sqrt2: String,
    one: String,
    half: String,
}

/// One pre-norm block `blocks.{i}`, as `Block::forward` runs it.
fn block(
    g: &mut Graph,
    state: &State,
    c: &Shared,
    h: &str,
    i: usize,
) -> Result<String, TrainError> {
    let p = format!("blocks.{i}");
    let a = g.layer_norm(state, h, &format!("{p}.ln1"))?;
    let w = g.weight(state, &format!("{p}.attn.in_proj_weight"))?;
    let b = g.weight(state, &format!("{p}.attn.in_proj_bias"))?;
    let qkv = g.linear(&a, &w, &b);
    let (q, k, v) = (format!("q_{i}"), format!("k_{i}"), format!("v_{i}"));
    g.message.message(
        1,
        &node_outputs(
            "Split",
            &[&qkv, &c.thirds],
            &[&q, &k, &v],
            &[attr_int("axis", 2)],
        ),
    );
    // [B, T, E] → [B, H, T, D]; k goes on to [B, H, D, T].
    let heads = |g: &mut Graph, x: &str, perm: &[i64]| {
        let r = g.op("Reshape", &[x, &c.split_heads], &[]);
        g.op("Transpose", &[&r], &[attr_ints("perm", perm)])
    };
    let (qh, kt, vh) = (
        heads(g, &q, &[0, 2, 1, 3]),
        heads(g, &k, &[0, 2, 3, 1]),
        heads(g, &v, &[0, 2, 1, 3]),
    );
    let scores = g.op("MatMul", &[&qh, &kt], &[]);
    let scaled = g.op("Mul", &[&scores, &c.scale], &[]);
    let masked = g.op("Add", &[&scaled, &c.mask], &[]);
    let probs = g.op("Softmax", &[&masked], &[attr_int("axis", -1)]);
    let o = g.op("MatMul", &[&probs, &vh], &[]);
    let o = g.op("Transpose", &[&o], &[attr_ints("perm", &[0, 2, 1, 3])]);
    let o = g.op("Reshape", &[&o, &c.join_heads], &[]);
    let o = g.linear_layer(state, &o, &format!("{p}.attn.out_proj"))?;
    let h = g.op("Add", &[h, &o], &[]);

    let m = g.layer_norm(state, &h, &format!("{p}.ln2"))?;
    let m = g.linear_layer(state, &m, &format!("{p}.mlp_in"))?;
    let e = g.op("Div", &[&m, &c.sqrt2], &[]);
    let e = g.op("Erf", &[&e], &[]);
    let e = g.op("Add", &[&e, &c.one], &[]);
    let m = g.op("Mul", &[&m, &e], &[]);
    let m = g.op("Mul", &[&m, &c.half], &[]);
    let m = g.linear_layer(state, &m, &format!("{p}.mlp_out"))?;
    Ok(g.op("Add", &[&h, &m], &[]))
}

/// The ONNX model of `model`.
fn onnx_model(model: &CharTransformer) -> Result<Vec<u8>, TrainError> {
    let config = model.config();
    let state = model.state_dict();
    let (ctx, width) = (config.context, config.width);
    let head_dim = width / config.heads;
    let mut g = Graph {
        message: Message::new(),
        names: 0,
    };
    let mask: Vec<f32> = (0..ctx * ctx)
        .map(|i| {
            if i % ctx > i / ctx {
                f32::NEG_INFINITY
            } else {
                0.0
            }
        })
        .collect();
    let causal = g.floats("causal_mask", &[ctx, ctx], &mask);
    let zero = g.ints("zero", &[1], &[0]);
    let zeros2 = g.ints("zeros2", &[2], &[0, 0]);
    let axes01 = g.ints("axes01", &[2], &[0, 1]);
    // `tokens`, as a one-element shape read from the input.
    let tokens = g.op(
        "Shape",
        &["input"],
        &[attr_int("start", 1), attr_int("end", 2)],
    );
    let tokens2 = g.op("Concat", &[&tokens, &tokens], &[attr_int("axis", 0)]);
    let heads = config.heads as i64;
    let shared = Shared {
        mask: g.op("Slice", &[&causal, &zeros2, &tokens2, &axes01], &[]),
        scale: g.floats("scale", &[1], &[1.0 / (head_dim as f32).sqrt()]),
        split_heads: g.ints("split_heads", &[4], &[0, 0, heads, head_dim as i64]),
        join_heads: g.ints("join_heads", &[3], &[0, 0, width as i64]),
        thirds: g.ints("thirds", &[3], &[width as i64; 3]),
        sqrt2: g.floats("sqrt2", &[1], &[std::f32::consts::SQRT_2]),
        one: g.floats("one", &[1], &[1.0]),
        half: g.floats("half", &[1], &[0.5]),
    };

    let tok_table = g.weight(&state, "tok_emb.weight")?;
    let tok = g.op("Gather", &[&tok_table, "input"], &[attr_int("axis", 0)]);
    let pos_table = g.weight(&state, "pos_emb.weight")?;
    let pos = g.op("Slice", &[&pos_table, &zero, &tokens, &zero], &[]);
    let mut h = g.op("Add", &[&tok, &pos], &[]);
    for i in 0..config.layers {
        h = block(&mut g, &state, &shared, &h, i)?;
    }
    let f = g.layer_norm(&state, &h, "ln_f")?;
    let w = g.weight(&state, "head.weight")?;
    let b = g.weight(&state, "head.bias")?;
    let wt = g.op("Transpose", &[&w], &[attr_ints("perm", &[1, 0])]);
    let y = g.op("MatMul", &[&f, &wt], &[]);
    // The last node writes the graph's output under its own name.
    g.message.message(1, &node("Add", &[&y, &b], "logits", &[]));

    g.message.string(2, "oxmera-transformer");
    let tokens_dims = [Dim::Named("batch"), Dim::Named("tokens")];
    g.message
        .message(11, &value_info("input", INT64, &tokens_dims));
    let logits_dims = [
        Dim::Named("batch"),
        Dim::Named("tokens"),
        Dim::Size(config.vocab_size),
    ];
    g.message
        .message(12, &value_info("logits", FLOAT, &logits_dims));
    Ok(model_bytes(&g.message, TRANSFORMER_OPSET))
}

/// `oxmera export` of a transformer checkpoint; `--sample N` takes N
/// context-long windows spread over the validation text (the windows the
/// run's validation loss reads first).
pub(super) fn export(
    args: &ExportArgs,
    model: &CharTransformer,
    vocab: &CharVocab,
) -> Result<(), TrainError> {
    let bytes = onnx_model(model)?;
    let config = model.config();
    wrote(
        args,
        &bytes,
        TRANSFORMER_OPSET,
        &format!(
            "input token ids [batch, tokens <= {}] int64, output logits [batch, tokens, {}]",
            config.context, config.vocab_size
        ),
    )?;
    if let Some(n) = args.sample {
        let text = oxmera_data::shakespeare()?;
        let split = TextSplit::new(vocab.encode(&text)?, crate::train::data::VALID_FRACTION)?;
        let n = n.max(1);
        let (x, _) = split
            .spread_batch(
                TextPart::Valid,
                0,
                n,
                n,
                config.context,
                model_device(model),
            )?
            .ok_or_else(|| TrainError::Usage("the validation text is empty".into()))?;
        let logits = oxmera::tensor::no_grad(|| model.forward(&x))?;
        write_sample(args, &x, &logits)?;
    }
    Ok(())
}

/// The device the model's weights live on.
fn model_device(model: &CharTransformer) -> oxmera::Device {
    model
        .parameters()
        .first()
        .map_or(oxmera::Device::Cpu, |p| p.tensor().device())
}

#[cfg(test)]
mod tests {
    use oxmera::{DType, Device, Generator};
    use oxmera_nn::models::TransformerConfig;

    use super::*;

    /// Every parameter goes into the graph as an initializer under its
    /// state-dict name: a layer the export forgot would leave its weight
    /// out (and the ONNX Runtime comparison in CI would fail on its
    /// output).
    #[test]
    fn every_parameter_is_an_initializer() {
        let config = TransformerConfig {
            context: 8,
            width: 16,
            heads: 2,
            layers: 2,
            ..TransformerConfig::new(11)
        };
        let model =
            CharTransformer::new(config, &mut Generator::new(0), DType::F32, Device::Cpu).unwrap();
        let bytes = onnx_model(&model).unwrap();
        let has = |name: &str| bytes.windows(name.len()).any(|w| w == name.as_bytes());
        for name in model.state_dict().keys() {
            assert!(has(name), "{name} is not in the graph");
        }
        // IR version 8 comes first (field 1, varint).
        assert_eq!(&bytes[..2], &[0x08, 8]);
        assert!(has("LayerNormalization") && has("Softmax") && has("Erf"));
        let weights: usize = model.state_dict().values().map(|t| 4 * t.numel()).sum();
        assert!(bytes.len() > weights + 4 * 8 * 8);
    }
}
