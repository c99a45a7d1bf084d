//! oxmera's stateful layers against PyTorch, both ways.
//!
//! **PyTorch → oxmera.** `tests/fixtures/pytorch/<layer>.safetensors` were
//! written by `scripts/pytorch/make_layer_fixtures.py`: a PyTorch module's
//! state dict (`state.<name>`, PyTorch's own names), an input, the eval-mode
//! output and the gradients of `(output * upstream).sum()`. Each test loads
//! the state dict strictly into the oxmera layer, runs the input, and
//! compares the output and every gradient within the f32 error bound below.
//!
//! **oxmera → PyTorch.** Each test also builds the layer from its own seeded
//! initialization and checks that its state dict has exactly the fixture's
//! names, shapes and dtypes (this runs everywhere, CI included). With
//! `OXMERA_PYTORCH_BACK_DIR` set, it also writes that state dict with an
//! input and oxmera's output into the directory, and
//! `scripts/pytorch/check_back.py DIR` loads each file into PyTorch
//! (strictly) and checks that PyTorch computes the same output. The
//! fixtures' README records the last such run.
//!
//! All on `Device::Cpu`, the backend a user runs.
//!
//! # Tolerance
//!
//! A value computed in f32 through `n` roundings (a length-`k` sum or dot
//! product counts `k`, each elementwise op counts 1) is within
//! `n · u · Σ|terms|` of the exact value (`u = ε/2`, Higham's γₙ bound to
//! first order). oxmera and PyTorch each make such an error, in different
//! orders, so they differ by at most `n · ε · Σ|terms|`. The data are unit
//! normal draws and the layers are built so that intermediates stay of
//! order one, so `Σ|terms|` is a small multiple of `1 + |result|`; we take
//! that multiple to be 4 ([`SLACK`]). The check is therefore
//! `|oxmera − pytorch| ≤ 4 · n · ε · (1 + |pytorch|)` elementwise, with `n`
//! counted per layer at each call (forward path; a gradient's count adds
//! the backward path's reductions to the forward's, whose intermediates it
//! reuses). Each comparison prints its worst element as a fraction of the
//! bound, visible with `--nocapture`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oxmera::checkpoint::{self, Checkpoint};
use oxmera::nn::{
    BatchNorm1d, BatchNorm2d, Conv2d, Embedding, GroupNorm, LayerNorm, Linear, MultiheadAttention,
    RMSNorm,
};
use oxmera::prelude::*;
use oxmera::tensor::AttentionOptions;

/// The backend every comparison runs on.
const DEV: Device = Device::Cpu;

/// The environment variable naming the directory for the oxmera → PyTorch
/// files; unset, nothing is written.
const BACK_DIR: &str = "OXMERA_PYTORCH_BACK_DIR";

/// How many times `1 + |result|` the sum of the absolute terms may be (see
/// the module docs).
const SLACK: f64 = 4.0;

/// The fixture directory, next to this file.
fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pytorch")
}

/// Loads `tests/fixtures/pytorch/<stem>.safetensors` onto [`DEV`].
fn fixture(stem: &str) -> AnyResult<Checkpoint> {
    let path = fixture_dir().join(format!("{stem}.safetensors"));
    Ok(checkpoint::load(path, DEV)?)
}

/// The fixture's tensor `name`.
fn get(ck: &Checkpoint, name: &str) -> AnyResult<Tensor> {
    Ok(ck.tensor(name)?.clone())
}

/// The fixture's tensor `name` as a fresh leaf that collects a gradient.
fn leaf(ck: &Checkpoint, name: &str) -> AnyResult<Tensor> {
    Ok(get(ck, name)?.with_requires_grad(true)?)
}

/// Asserts `|got − want| ≤ SLACK · n · ε · (1 + |want|)` elementwise (the
/// module docs derive it) and equal shapes; prints the largest absolute
/// difference and the worst element's share of its bound.
fn check(what: &str, got: &Tensor, want: &Tensor, n: usize) -> AnyResult<()> {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let tol = SLACK * n as f64 * f64::from(f32::EPSILON);
    let got = got.to_dtype(DType::F32)?.to_vec::<f32>()?;
    let want = want.to_vec::<f32>()?;
    let (mut max_abs, mut worst, mut at) = (0.0f64, 0.0f64, 0usize);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let (g, w) = (f64::from(g), f64::from(w));
        let diff = (g - w).abs();
        // A NaN on either side is a failure (the ratio is NaN, not <= 1).
        let ratio = if diff == 0.0 {
            0.0
        } else {
            diff / (tol * (1.0 + w.abs()))
        };
        max_abs = max_abs.max(diff);
        // The first NaN stays the worst element, and fails the assert.
        if !worst.is_nan() && (ratio.is_nan() || ratio > worst) {
            (worst, at) = (ratio, i);
        }
    }
    eprintln!(
        "{what}: max |Δ| = {max_abs:.3e}; worst element {:.3} of its bound (n = {n})",
        worst
    );
    assert!(
        worst <= 1.0,
        "{what}: element {at} is {} in oxmera and {} in PyTorch, {worst:.2} times the bound \
         {SLACK} · {n} · ε · (1 + |pytorch|)",
        got[at],
        want[at],
    );
    Ok(())
}

/// Runs `(out * upstream).sum()` backward and compares the gradient of
/// each fixture `grad.<name>` tensor: `grad.input` against `input`'s
/// (when given) and `grad.state.<name>` against the layer's parameter
/// `<name>`, whose names must be exactly the fixture's.
fn check_backward(
    stem: &str,
    layer: &impl Module,
    input: Option<&Tensor>,
    out: &Tensor,
    ck: &Checkpoint,
    n: usize,
) -> AnyResult<()> {
    out.mul(&get(ck, "upstream")?)?.sum_all()?.backward()?;
    if let Some(x) = input {
        let grad = x.grad().expect("the input collects a gradient");
        check(
            &format!("{stem} grad.input"),
            &grad,
            &get(ck, "grad.input")?,
            n,
        )?;
    }
    let want = ck.with_prefix("grad.state.");
    // named_parameters() lists in declaration order; the fixture's map is
    // sorted.
    let mut params = layer.named_parameters();
    params.sort_by(|a, b| a.0.cmp(&b.0));
    let names: Vec<&String> = params.iter().map(|(name, _)| name).collect();
    assert_eq!(
        names,
        want.keys().collect::<Vec<_>>(),
        "{stem}: trainable parameters"
    );
    for (name, p) in &params {
        let grad = p.grad().expect("every parameter takes part");
        check(&format!("{stem} grad.{name}"), &grad, &want[name], n)?;
    }
    Ok(())
}

/// `(name, dims, dtype)` of every entry: what must agree between oxmera's
/// state dict and PyTorch's for a strict load either way.
fn signature(dict: &BTreeMap<String, Tensor>) -> Vec<(String, Vec<usize>, DType)> {
    dict.iter()
        .map(|(name, t)| (name.clone(), t.dims().to_vec(), t.dtype()))
        .collect()
}

/// Asserts that a freshly built oxmera layer's state dict has exactly the
/// names, shapes and dtypes of PyTorch's: the half of the oxmera → PyTorch
/// direction that needs no PyTorch.
fn check_structure(stem: &str, fresh: &impl Module, ck: &Checkpoint) {
    assert_eq!(
        signature(&fresh.state_dict()),
        signature(&ck.with_prefix("state.")),
        "{stem}: oxmera's state dict against PyTorch's"
    );
}

/// Overwrites the named parameters with standard normal draws: oxmera,
/// like PyTorch, starts norm gains at one and several biases at zero, and a
/// check of where they enter needs values that are neither.
fn randomize(layer: &impl Module, names: &[&str], rng: &mut Generator) -> AnyResult<()> {
    for (name, p) in layer.named_parameters() {
        if names.contains(&name.as_str()) {
            let shape = p.tensor().shape().clone();
            p.set(rng.randn(shape, DType::F32, DEV)?)?;
        }
    }
    Ok(())
}

/// `x` with the elements whose flat (row-major) index satisfies `pick`
/// scaled by `factor`: one row, group or channel brought down to a
/// variance of eps's order, where eps changes a normalizing layer's output
/// by far more than the f32 bound (at unit scale it would not show). The
/// PyTorch fixtures shrink one slice the same way.
fn shrink(x: Tensor, pick: impl Fn(usize) -> bool, factor: f32) -> AnyResult<Tensor> {
    let mut values = x.to_vec::<f32>()?;
    for (i, v) in values.iter_mut().enumerate() {
        if pick(i) {
            *v *= factor;
        }
    }
    Ok(Tensor::from_vec(values, x.dims().to_vec(), DEV)?)
}

/// Writes `<stem>.safetensors` for `check_back.py` into
/// `$OXMERA_PYTORCH_BACK_DIR` (nothing when unset): the layer's state dict
/// as `state.<name>`, the given `tensors`, and the fixture's configuration
/// metadata, so that PyTorch builds the same module.
fn write_back(
    stem: &str,
    ck: &Checkpoint,
    layer: Option<&dyn Fn() -> BTreeMap<String, Tensor>>,
    tensors: &[(&str, &Tensor)],
    seed: u64,
) -> AnyResult<()> {
    let Some(dir) = std::env::var_os(BACK_DIR) else {
        return Ok(());
    };
    let mut all = match layer {
        Some(state) => checkpoint::prefixed("state.", &state()),
        None => BTreeMap::new(),
    };
    for (name, t) in tensors {
        all.insert(name.to_string(), t.detach());
    }
    let mut metadata: BTreeMap<String, String> = ck
        .metadata
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "torch" | "seed"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    metadata.insert("oxmera_seed".into(), seed.to_string());
    std::fs::create_dir_all(&dir)?;
    checkpoint::save(
        Path::new(&dir).join(format!("{stem}.safetensors")),
        &all,
        &metadata,
    )?;
    Ok(())
}

/// The oxmera → PyTorch half for a layer taking one tensor: structure
/// check, then (when asked) its own output on `x` written for PyTorch.
fn back_direction(
    stem: &str,
    ck: &Checkpoint,
    layer: &impl Module,
    x: &Tensor,
    seed: u64,
) -> AnyResult<()> {
    check_structure(stem, layer, ck);
    let y = layer.forward(x)?;
    write_back(
        stem,
        ck,
        Some(&|| layer.state_dict()),
        &[("input", x), ("output", &y)],
        seed,
    )
}

#[test]
fn every_fixture_has_a_test() {
    let mut stems: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".safetensors").map(str::to_string)
        })
        .collect();
    stems.sort();
    assert_eq!(
        stems,
        [
            "batch_norm1d",
            "batch_norm2d",
            "conv2d",
            "embedding",
            "group_norm",
            "layer_norm",
            "linear",
            "mha",
            "rms_norm",
            "rms_norm_eps",
            "sdpa",
        ]
    );
}

#[test]
fn linear() -> AnyResult<()> {
    let ck = fixture("linear")?;
    let (fan_in, fan_out) = (
        ck.metadata_value::<usize>("in_features")?,
        ck.metadata_value::<usize>("out_features")?,
    );
    let seed = 101;
    let mut rng = Generator::new(seed);
    let layer = Linear::new(fan_in, fan_out, true, &mut rng, DType::F32, DEV)?;
    let x = rng.randn([3, 4, fan_in], DType::F32, DEV)?;
    back_direction("linear", &ck, &layer, &x, seed)?;

    layer.load_state_dict(&ck.with_prefix("state."))?;
    let x = leaf(&ck, "input")?;
    let y = layer.forward(&x)?;
    // A dot product of 6 plus the bias.
    check("linear output", &y, &get(&ck, "output")?, fan_in + 1)?;
    // The weight's gradient sums over the 3 · 4 rows.
    check_backward("linear", &layer, Some(&x), &y, &ck, fan_in + 1 + 12)
}

#[test]
fn embedding() -> AnyResult<()> {
    let ck = fixture("embedding")?;
    let (rows, dim) = (
        ck.metadata_value::<usize>("num_embeddings")?,
        ck.metadata_value::<usize>("embedding_dim")?,
    );
    let seed = 102;
    let mut rng = Generator::new(seed);
    let layer = Embedding::new(rows, dim, &mut rng, DType::F32, DEV)?;
    let ids = rng.randint([2, 5], 0, rows as i64, DType::I64, DEV)?;
    back_direction("embedding", &ck, &layer, &ids, seed)?;

    layer.load_state_dict(&ck.with_prefix("state."))?;
    let y = layer.forward(&get(&ck, "input")?)?;
    // A lookup copies rows: exact.
    check("embedding output", &y, &get(&ck, "output")?, 0)?;
    // One row is looked up twice, so its gradient is a sum of two.
    check_backward("embedding", &layer, None, &y, &ck, 2)
}

#[test]
fn layer_norm() -> AnyResult<()> {
    let ck = fixture("layer_norm")?;
    let d = ck.metadata_value::<usize>("normalized_shape")?;
    let eps = ck.metadata_value::<f64>("eps")?;
    let seed = 103;
    let mut rng = Generator::new(seed);
    let layer = LayerNorm::new([d], DType::F32, DEV)?.eps(eps)?;
    randomize(&layer, &["weight", "bias"], &mut rng)?;
    let x = shrink(rng.randn([2, 3, d], DType::F32, DEV)?, |i| i / d == 5, 3e-3)?;
    back_direction("layer_norm", &ck, &layer, &x, seed)?;

    layer.load_state_dict(&ck.with_prefix("state."))?;
    let x = leaf(&ck, "input")?;
    let y = layer.forward(&x)?;
    // Mean and variance over 8, then subtract, add eps, rsqrt, multiply
    // and the affine pair.
    let fwd = d + d + 4 + 2;
    check("layer_norm output", &y, &get(&ck, "output")?, fwd)?;
    // The input gradient's two row reductions over 8; the gain's and
    // bias's sum over the 2 · 3 rows.
    check_backward("layer_norm", &layer, Some(&x), &y, &ck, fwd + 2 * d + 6)
}

#[test]
fn group_norm() -> AnyResult<()> {
    let ck = fixture("group_norm")?;
    let (groups, channels) = (
        ck.metadata_value::<usize>("num_groups")?,
        ck.metadata_value::<usize>("num_channels")?,
    );
    let eps = ck.metadata_value::<f64>("eps")?;
    let seed = 104;
    let mut rng = Generator::new(seed);
    let layer = GroupNorm::new(groups, channels, DType::F32, DEV)?.eps(eps)?;
    randomize(&layer, &["weight", "bias"], &mut rng)?;
    // A group is 2 channels of 4 · 3 = 24 values. Sample 1's second group
    // is shrunk, as in the fixture.
    let group = channels / groups * 4 * 3;
    let x = rng.randn([2, channels, 4, 3], DType::F32, DEV)?;
    let x = shrink(x, |i| i / group == groups + 1, 3e-3)?;
    back_direction("group_norm", &ck, &layer, &x, seed)?;

    layer.load_state_dict(&ck.with_prefix("state."))?;
    let x = leaf(&ck, "input")?;
    let y = layer.forward(&x)?;
    // Mean and variance over the group, then as in LayerNorm.
    let fwd = 2 * group + 4 + 2;
    check("group_norm output", &y, &get(&ck, "output")?, fwd)?;
    // Two reductions over the group; the affine gradients sum over the
    // batch and the 4 · 3 positions.
    check_backward(
        "group_norm",
        &layer,
        Some(&x),
        &y,
        &ck,
        fwd + 2 * group + 2 * 4 * 3,
    )
}

/// RMSNorm in both its eps settings: PyTorch's default (`None`: the
/// dtype's machine epsilon) and an explicit one.
fn rms_norm_case(stem: &str, seed: u64) -> AnyResult<()> {
    let ck = fixture(stem)?;
    let d = ck.metadata_value::<usize>("normalized_shape")?;
    let eps = match ck.metadata_value::<String>("eps")?.as_str() {
        "none" => None,
        _ => Some(ck.metadata_value::<f64>("eps")?),
    };
    let mut rng = Generator::new(seed);
    let layer = RMSNorm::new([d], DType::F32, DEV)?.eps(eps)?;
    randomize(&layer, &["weight"], &mut rng)?;
    let factor = if eps.is_none() { 3e-4 } else { 3e-3 };
    let x = shrink(
        rng.randn([2, 3, d], DType::F32, DEV)?,
        |i| i / d == 5,
        factor,
    )?;
    back_direction(stem, &ck, &layer, &x, seed)?;

    layer.load_state_dict(&ck.with_prefix("state."))?;
    let x = leaf(&ck, "input")?;
    let y = layer.forward(&x)?;
    // Mean of squares over 8, add eps, rsqrt, multiply, the gain.
    let fwd = d + 4;
    check(&format!("{stem} output"), &y, &get(&ck, "output")?, fwd)?;
    // One row reduction over 8; the gain's gradient sums 2 · 3 rows.
    check_backward(stem, &layer, Some(&x), &y, &ck, fwd + d + 6)
}

#[test]
fn rms_norm_default_eps() -> AnyResult<()> {
    rms_norm_case("rms_norm", 105)
}

#[test]
fn rms_norm_explicit_eps() -> AnyResult<()> {
    rms_norm_case("rms_norm_eps", 106)
}

/// BatchNorm's three checks: eval mode (running statistics) with
/// gradients, one train-mode step (batch statistics) and the running
/// statistics that step leaves. `n` is the number of values per channel.
///
/// The oxmera → PyTorch file records a train-mode step too: the state
/// before it (`before_train.<name>`), its input and output, then the
/// state after it and an eval-mode output, so `check_back.py` replays the
/// step in PyTorch.
fn batch_norm_case<B: Module>(
    stem: &str,
    build: impl Fn() -> AnyResult<B>,
    shape: &[usize],
    seed: u64,
) -> AnyResult<()> {
    let ck = fixture(stem)?;
    let per_channel = shape.iter().product::<usize>() / shape[1];

    let mut rng = Generator::new(seed);
    let mut layer = build()?;
    check_structure(stem, &layer, &ck);
    randomize(&layer, &["weight", "bias"], &mut rng)?;
    let before = layer.state_dict();
    // Channel 1's batch variance of eps's order, as in the fixture.
    let inner = per_channel / shape[0];
    let x_train = rng.randn(shape.to_vec(), DType::F32, DEV)?;
    let x_train = shrink(x_train, |i| (i / inner) % shape[1] == 1, 3e-3)?;
    layer.train();
    let y_train = layer.forward(&x_train)?;
    layer.eval();
    let x = rng.randn(shape.to_vec(), DType::F32, DEV)?;
    let y = layer.forward(&x)?;
    let mut tensors = checkpoint::prefixed("before_train.", &before);
    tensors.insert("input_train".into(), x_train);
    tensors.insert("output_train".into(), y_train);
    let extra: Vec<(&str, &Tensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut all = extra;
    all.push(("input", &x));
    all.push(("output", &y));
    write_back(stem, &ck, Some(&|| layer.state_dict()), &all, seed)?;

    // PyTorch → oxmera, eval mode.
    let mut layer = build()?;
    layer.load_state_dict(&ck.with_prefix("state."))?;
    layer.eval();
    let x = leaf(&ck, "input")?;
    let y = layer.forward(&x)?;
    // Subtract, add eps, rsqrt, multiply, the affine pair.
    let fwd = 6;
    check(&format!("{stem} output"), &y, &get(&ck, "output")?, fwd)?;
    // The affine gradients sum over the values of a channel.
    check_backward(stem, &layer, Some(&x), &y, &ck, fwd + per_channel)?;

    // One train-mode step on a fresh copy of the loaded state.
    let mut layer = build()?;
    layer.load_state_dict(&ck.with_prefix("state."))?;
    layer.train();
    let y = layer.forward(&get(&ck, "input")?)?;
    // Batch mean and variance over the channel's values, then as in eval.
    let train = 2 * per_channel + fwd;
    check(
        &format!("{stem} output_train"),
        &y,
        &get(&ck, "output_train")?,
        train,
    )?;
    let state = layer.state_dict();
    for name in ["running_mean", "running_var"] {
        // The batch statistic, the unbiased correction, and the momentum
        // blend (two products and a sum).
        check(
            &format!("{stem} after_train.{name}"),
            &state[name],
            &get(&ck, &format!("after_train.{name}"))?,
            2 * per_channel + 4,
        )?;
    }
    assert_eq!(
        state["num_batches_tracked"].to_vec::<i64>()?,
        get(&ck, "after_train.num_batches_tracked")?.to_vec::<i64>()?,
        "{stem}: num_batches_tracked after one step"
    );
    Ok(())
}

#[test]
fn batch_norm1d() -> AnyResult<()> {
    let ck = fixture("batch_norm1d")?;
    let c = ck.metadata_value::<usize>("num_features")?;
    let eps = ck.metadata_value::<f64>("eps")?;
    let momentum = ck.metadata_value::<f64>("momentum")?;
    let build = || -> AnyResult<BatchNorm1d> {
        Ok(BatchNorm1d::new(c, DType::F32, DEV)?
            .eps(eps)?
            .momentum(Some(momentum))?)
    };
    batch_norm_case("batch_norm1d", build, &[4, c], 107)
}

#[test]
fn batch_norm2d() -> AnyResult<()> {
    let ck = fixture("batch_norm2d")?;
    let c = ck.metadata_value::<usize>("num_features")?;
    let eps = ck.metadata_value::<f64>("eps")?;
    let momentum = ck.metadata_value::<f64>("momentum")?;
    let build = || -> AnyResult<BatchNorm2d> {
        Ok(BatchNorm2d::new(c, DType::F32, DEV)?
            .eps(eps)?
            .momentum(Some(momentum))?)
    };
    batch_norm_case("batch_norm2d", build, &[2, c, 4, 4], 108)
}

#[test]
fn conv2d() -> AnyResult<()> {
    let ck = fixture("conv2d")?;
    let (c_in, c_out, k, pad) = (
        ck.metadata_value::<usize>("in_channels")?,
        ck.metadata_value::<usize>("out_channels")?,
        ck.metadata_value::<usize>("kernel_size")?,
        ck.metadata_value::<usize>("padding")?,
    );
    let seed = 109;
    let mut rng = Generator::new(seed);
    let layer = Conv2d::new(c_in, c_out, (k, k), &mut rng, DType::F32, DEV)?.padding((pad, pad));
    let x = rng.randn([2, c_in, 5, 5], DType::F32, DEV)?;
    back_direction("conv2d", &ck, &layer, &x, seed)?;

    layer.load_state_dict(&ck.with_prefix("state."))?;
    let x = leaf(&ck, "input")?;
    let y = layer.forward(&x)?;
    // A window of 2 · 3 · 3 plus the bias.
    let fwd = c_in * k * k + 1;
    check("conv2d output", &y, &get(&ck, "output")?, fwd)?;
    // The weight's gradient sums over the batch and the 5 · 5 positions.
    check_backward("conv2d", &layer, Some(&x), &y, &ck, fwd + 2 * 5 * 5)
}

#[test]
fn multihead_attention() -> AnyResult<()> {
    let ck = fixture("mha")?;
    let (e, heads) = (
        ck.metadata_value::<usize>("embed_dim")?,
        ck.metadata_value::<usize>("num_heads")?,
    );
    let (t, s) = (5, 5);
    // In-projection (16 + bias), scores over the head's 4 dims and the
    // scale, softmax over 5 keys (exp, sum, divide), the weighted sum of
    // 5 values, the out-projection (16 + bias).
    let fwd = (e + 1) + (e / heads + 1) + (s + 2) + s + (e + 1);
    // Backward: the out-projection's input gradient over 16, the
    // probabilities' over 4, the softmax row sum over 5, the query's over
    // 5 keys, the in-projection's input gradient over 3 · 16.
    let bwd = fwd + e + e / heads + s + s + 3 * e;

    let seed = 110;
    let mut rng = Generator::new(seed);
    let layer = MultiheadAttention::new(e, heads, &mut rng, DType::F32, DEV)?;
    check_structure("mha", &layer, &ck);
    randomize(&layer, &["in_proj_bias", "out_proj.bias"], &mut rng)?;
    let x = rng.randn([2, t, e], DType::F32, DEV)?;
    let (q, k, v) = (
        rng.randn([2, 3, e], DType::F32, DEV)?,
        rng.randn([2, s, e], DType::F32, DEV)?,
        rng.randn([2, s, e], DType::F32, DEV)?,
    );
    let y = layer.forward(&x)?;
    let causal = AttentionOptions::new().causal(true);
    let y_causal = layer.attend(&x, &x, &x, &causal)?;
    let y_cross = layer.attend(&q, &k, &v, &AttentionOptions::new())?;
    write_back(
        "mha",
        &ck,
        Some(&|| layer.state_dict()),
        &[
            ("input", &x),
            ("output", &y),
            ("output_causal", &y_causal),
            ("query", &q),
            ("key", &k),
            ("value", &v),
            ("output_cross", &y_cross),
        ],
        seed,
    )?;

    layer.load_state_dict(&ck.with_prefix("state."))?;
    let x = get(&ck, "input")?;
    // The causal case both ways: PyTorch's float mask, and the flag.
    let mask = get(&ck, "causal_mask")?;
    let want = get(&ck, "output_causal")?;
    let by_mask = layer.attend(&x, &x, &x, &AttentionOptions::new().mask(mask))?;
    check("mha output_causal (float mask)", &by_mask, &want, fwd)?;
    let by_flag = layer.attend(&x, &x, &x, &causal)?;
    check("mha output_causal (causal flag)", &by_flag, &want, fwd)?;
    // self_attend fuses the three projections into one product.
    let fused = layer.self_attend(&x, &causal)?;
    check("mha output_causal (self_attend)", &fused, &want, fwd)?;
    let cross = layer.attend(
        &get(&ck, "query")?,
        &get(&ck, "key")?,
        &get(&ck, "value")?,
        &AttentionOptions::new(),
    )?;
    check("mha output_cross", &cross, &get(&ck, "output_cross")?, fwd)?;

    let x = leaf(&ck, "input")?;
    let y = layer.forward(&x)?;
    check("mha output", &y, &get(&ck, "output")?, fwd)?;
    check_backward("mha", &layer, Some(&x), &y, &ck, bwd)
}

#[test]
fn scaled_dot_product_attention() -> AnyResult<()> {
    let ck = fixture("sdpa")?;
    let (q, k, v) = (get(&ck, "query")?, get(&ck, "key")?, get(&ck, "value")?);
    let (e, s) = (q.dims()[3], k.dims()[2]);
    // Scores over 8 dims and the scale, the mask's add, softmax over 6
    // keys (exp, sum, divide), the weighted sum of 6 values.
    let fwd = (e + 1) + 1 + (s + 2) + s;
    let sdpa = |options: AttentionOptions| q.scaled_dot_product_attention(&k, &v, &options);
    check(
        "sdpa output",
        &sdpa(AttentionOptions::new())?,
        &get(&ck, "output")?,
        fwd,
    )?;
    check(
        "sdpa output_masked (float mask)",
        &sdpa(AttentionOptions::new().mask(get(&ck, "attn_mask")?))?,
        &get(&ck, "output_masked")?,
        fwd,
    )?;
    check(
        "sdpa output_bool (bool mask)",
        &sdpa(AttentionOptions::new().mask(get(&ck, "bool_mask")?))?,
        &get(&ck, "output_bool")?,
        fwd,
    )?;

    // The causal case (L = 4 < S = 6, top-left aligned) with gradients.
    let (ql, kl, vl) = (leaf(&ck, "query")?, leaf(&ck, "key")?, leaf(&ck, "value")?);
    let y = ql.scaled_dot_product_attention(&kl, &vl, &AttentionOptions::new().causal(true))?;
    check("sdpa output_causal", &y, &get(&ck, "output_causal")?, fwd)?;
    y.mul(&get(&ck, "upstream")?)?.sum_all()?.backward()?;
    // Backward: the probabilities' gradient over 5 value dims, the
    // softmax row sum over 6, the query's over 6 keys.
    let ev = v.dims()[3];
    let bwd = fwd + ev + s + s;
    for (name, t) in [("query", &ql), ("key", &kl), ("value", &vl)] {
        let grad = t.grad().expect("each operand collects a gradient");
        check(
            &format!("sdpa grad.{name}"),
            &grad,
            &get(&ck, &format!("grad.{name}"))?,
            bwd,
        )?;
    }

    // oxmera → PyTorch: oxmera's own draws and outputs, every case.
    let seed = 111;
    let mut rng = Generator::new(seed);
    let (q, k, v) = (
        rng.randn(q.dims().to_vec(), DType::F32, DEV)?,
        rng.randn(k.dims().to_vec(), DType::F32, DEV)?,
        rng.randn(v.dims().to_vec(), DType::F32, DEV)?,
    );
    let attn_mask = rng.randn([4, 6], DType::F32, DEV)?;
    // Row i keeps key i (so no row is empty) and every key drawn above 0.
    let diagonal: Vec<bool> = (0..4 * 6).map(|i| i / 6 == i % 6).collect();
    let diagonal = Tensor::from_vec(diagonal, [4, 6], DEV)?;
    let bool_mask = rng
        .randn([4, 6], DType::F32, DEV)?
        .gt_scalar(0.0)?
        .logical_or(&diagonal)?;
    let sdpa = |options: AttentionOptions| q.scaled_dot_product_attention(&k, &v, &options);
    let output = sdpa(AttentionOptions::new())?;
    let causal = sdpa(AttentionOptions::new().causal(true))?;
    let masked = sdpa(AttentionOptions::new().mask(attn_mask.clone()))?;
    let boolean = sdpa(AttentionOptions::new().mask(bool_mask.clone()))?;
    write_back(
        "sdpa",
        &ck,
        None,
        &[
            ("query", &q),
            ("key", &k),
            ("value", &v),
            ("attn_mask", &attn_mask),
            ("bool_mask", &bool_mask),
            ("output", &output),
            ("output_causal", &causal),
            ("output_masked", &masked),
            ("output_bool", &boolean),
        ],
        seed,
    )
}
