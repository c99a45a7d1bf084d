//! oxmera's half of a side-by-side run with PyTorch: the character-level
//! transformer of the `shakespeare` example, started from weights and fed
//! batches that someone else chose, so that another framework can train
//! the very same model on the very same data and the two can be compared.
//!
//! `scripts/pytorch/transformer_parity.py` is the other half: it builds
//! the PyTorch twin, writes its initial weights and the batch order to two
//! safetensors files, trains, runs this program on the same files and
//! prints both validation curves and step times. To run this half alone:
//!
//! ```text
//! cargo run --release -p oxmera --example transformer_parity -- \
//!     --init INIT.safetensors --batches BATCHES.safetensors \
//!     --out RESULT.json [--threads N]
//! ```
//!
//! - `INIT.safetensors` holds the model's state dict under oxmera's (and
//!   PyTorch's) names: `tok_emb.weight`, `blocks.0.attn.in_proj_weight`, …
//! - `BATCHES.safetensors` holds `train_starts` (`i64` `[steps, batch]`,
//!   where each training window begins in the training text),
//!   `valid_starts` (`i64` `[n]`, the same for the validation text) and
//!   the metadata `eval_every`.
//! - `RESULT.json` receives `{"evals": [[step, loss], ...],
//!   "step_seconds": [...], "threads": N, "cpu": "..."}`.
//!
//! Training is the `shakespeare` example's: AdamW with its defaults (lr
//! 1e-3, no schedule), gradients clipped to norm 1, cross-entropy over
//! every position. The model has no dropout, so both frameworks compute
//! the same function.

use std::path::PathBuf;
use std::time::Instant;

use oxmera::data::{CharVocab, TextSplit, shakespeare};
use oxmera::nn::models::{CharTransformer, TransformerConfig, next_char_loss};
use oxmera::optim::{AdamW, AdamWConfig, clip_grad_norm};
use oxmera::prelude::*;
use oxmera::tensor::no_grad;

/// How many validation windows go through the model at once.
const EVAL_BATCH: usize = 64;

/// The command line.
struct Args {
    init: PathBuf,
    batches: PathBuf,
    out: PathBuf,
    threads: Option<usize>,
}

fn parse_args() -> Result<Args> {
    let bad = |what: String| Error::invalid("transformer_parity", "arguments", what);
    let usage = "usage: transformer_parity --init INIT.safetensors \
                 --batches BATCHES.safetensors --out RESULT.json [--threads N]";
    let (mut init, mut batches, mut out, mut threads) = (None, None, None, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| bad(format!("{flag} needs a value; {usage}")))?;
        match flag.as_str() {
            "--init" => init = Some(PathBuf::from(value)),
            "--batches" => batches = Some(PathBuf::from(value)),
            "--out" => out = Some(PathBuf::from(value)),
            "--threads" => {
                let n = value
                    .parse()
                    .map_err(|_| bad(format!("--threads {value:?} is not a whole number")))?;
                threads = Some(n);
            }
            _ => return Err(bad(format!("unknown option {flag:?}; {usage}"))),
        }
    }
    let need = |v: Option<PathBuf>, flag: &str| {
        v.ok_or_else(|| bad(format!("{flag} is required; {usage}")))
    };
    Ok(Args {
        init: need(init, "--init")?,
        batches: need(batches, "--batches")?,
        out: need(out, "--out")?,
        threads,
    })
}

/// The windows of `ids` that begin at `starts`: inputs `x` and targets `y`
/// (the next character at every position), both `[starts.len(), context]`.
fn windows(ids: &[i64], starts: &[i64], context: usize) -> Result<(Tensor, Tensor)> {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &s in starts {
        let s = usize::try_from(s)
            .ok()
            .filter(|s| s + context < ids.len())
            .ok_or_else(|| {
                Error::invalid(
                    "transformer_parity",
                    "starts",
                    format!("window start {s} does not fit a text of {}", ids.len()),
                )
            })?;
        x.extend_from_slice(&ids[s..s + context]);
        y.extend_from_slice(&ids[s + 1..s + context + 1]);
    }
    let shape = [starts.len(), context];
    Ok((
        Tensor::from_vec(x, shape, Device::Cpu)?,
        Tensor::from_vec(y, shape, Device::Cpu)?,
    ))
}

/// The mean loss over every validation window (each window weighs the
/// same), in evaluation mode and without recording a graph.
fn validate(model: &mut CharTransformer, valid: &[i64], starts: &[i64]) -> Result<f64> {
    let context = model.config().context;
    model.eval();
    let total = no_grad(|| -> Result<f64> {
        let mut total = 0.0;
        for chunk in starts.chunks(EVAL_BATCH) {
            let (x, y) = windows(valid, chunk, context)?;
            total += next_char_loss(&model.forward(&x)?, &y)?.item()? * chunk.len() as f64;
        }
        Ok(total)
    })?;
    model.train();
    Ok(total / starts.len() as f64)
}

/// The processor's name, as Linux reports it ("unknown" elsewhere).
fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn main() -> AnyResult<()> {
    let args = parse_args()?;
    if let Some(n) = args.threads {
        oxmera::cpu::set_num_threads(n)?;
    }

    // The text, split as the `shakespeare` example splits it: the window
    // starts in BATCHES index into these two parts.
    let text = shakespeare()?;
    let vocab = CharVocab::from_text(&text);
    let data = TextSplit::new(vocab.encode(&text)?, 0.1)?;

    let config = TransformerConfig::new(vocab.len());
    let mut model = CharTransformer::new(config, &mut Generator::new(0), DType::F32, Device::Cpu)?;
    // Every parameter is replaced; a missing or extra name is an error.
    model.load_state_dict(&oxmera::checkpoint::load(&args.init, Device::Cpu)?.tensors)?;

    let batches = oxmera::checkpoint::load(&args.batches, Device::Cpu)?;
    let train_starts = batches.tensor("train_starts")?;
    let (steps, batch) = (train_starts.dims()[0], train_starts.dims()[1]);
    let train_starts = train_starts.to_vec::<i64>()?;
    let valid_starts = batches.tensor("valid_starts")?.to_vec::<i64>()?;
    let eval_every: usize = batches.metadata_value("eval_every")?;
    if eval_every == 0 || batch == 0 {
        return Err(Error::invalid(
            "transformer_parity",
            "BATCHES",
            format!("eval_every ({eval_every}) and the batch size ({batch}) must be at least 1"),
        )
        .into());
    }

    let params = model.named_parameters();
    let handles: Vec<_> = params.iter().map(|(_, p)| p.clone()).collect();
    let mut opt = AdamW::new(params, AdamWConfig::default())?;

    let mut evals = vec![(0, validate(&mut model, &data.valid, &valid_starts)?)];
    let mut step_seconds = Vec::with_capacity(steps);
    // The loop runs on one of the CPU backend's worker threads, so each
    // op splits its work in place instead of waking the pool and sleeping
    // until it is done (`oxmera::cpu::on_pool`): PyTorch's OpenMP threads
    // work the same way, its calling thread taking a share.
    oxmera::cpu::on_pool(|| -> Result<()> {
        for (step, starts) in train_starts.chunks(batch).enumerate() {
            let started = Instant::now();
            let (x, y) = windows(&data.train, starts, config.context)?;
            next_char_loss(&model.forward(&x)?, &y)?.backward()?;
            clip_grad_norm(&handles, 1.0)?;
            opt.step()?;
            opt.zero_grad();
            step_seconds.push(started.elapsed().as_secs_f64());

            let done = step + 1;
            if done % eval_every == 0 || done == steps {
                evals.push((done, validate(&mut model, &data.valid, &valid_starts)?));
            }
        }
        Ok(())
    })?;

    let evals: Vec<String> = evals
        .iter()
        .map(|(step, loss)| format!("[{step}, {loss}]"))
        .collect();
    let seconds: Vec<String> = step_seconds.iter().map(f64::to_string).collect();
    let json = format!(
        "{{\"evals\": [{}], \"step_seconds\": [{}], \"threads\": {}, \"cpu\": {:?}}}\n",
        evals.join(", "),
        seconds.join(", "),
        oxmera::cpu::num_threads(),
        cpu_name(),
    );
    std::fs::write(&args.out, json).map_err(|e| {
        Error::invalid(
            "transformer_parity",
            "--out",
            format!("{}: {e}", args.out.display()),
        )
    })?;
    Ok(())
}
