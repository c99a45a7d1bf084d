//! A character-level transformer on the embedded Shakespeare plays, in one
//! page: the model is `oxmera::nn::models::CharTransformer` (open
//! crates/oxmera-nn/src/models/transformer.rs to read it), the text
//! `oxmera::data::shakespeare()`. It trains with AdamW, prints the
//! validation loss now and then, and ends with a sample.
//!
//! `cargo run --release -p oxmera --example shakespeare -- [STEPS]`
//! (default 300 steps; `oxmera train --model transformer` is the full run,
//! with checkpoints, curves and `oxmera sample`).

use oxmera::data::{CharVocab, TextPart, TextSplit, shakespeare};
use oxmera::nn::models::{CharTransformer, SampleOptions, TransformerConfig, next_char_loss};
use oxmera::optim::{AdamW, AdamWConfig, clip_grad_norm};
use oxmera::prelude::*;
use oxmera::tensor::no_grad;

fn main() -> AnyResult<()> {
    let steps: u64 = match std::env::args().nth(1) {
        None => 300,
        Some(s) => s.parse().map_err(|_| {
            Error::invalid(
                "shakespeare",
                "STEPS",
                format!("{s:?} is not a whole number"),
            )
        })?,
    };
    let text = shakespeare()?;
    let vocab = CharVocab::from_text(&text);
    let data = TextSplit::new(vocab.encode(&text)?, 0.1)?; // the last 10% validates
    let config = TransformerConfig::new(vocab.len());
    let (batch, device) = (32, Device::Cpu);

    let mut model = CharTransformer::new(config, &mut Generator::new(0), DType::F32, device)?;
    let params = model.named_parameters();
    let handles: Vec<_> = params.iter().map(|(_, p)| p.clone()).collect();
    let mut opt = AdamW::new(params, AdamWConfig::default())?;
    println!(
        "{} parameters, {} characters",
        model.num_parameters(),
        vocab.len()
    );

    let started = std::time::Instant::now();
    // The loop runs on one of the CPU backend's worker threads: each op
    // then splits its work in place instead of waking the workers and
    // sleeping until they finish (a tenth off the step on two cores).
    oxmera::cpu::on_pool(|| -> AnyResult<()> {
        for step in 0..steps {
            let (x, y) = data.train_batch(0, step, batch, config.context, device)?;
            let l = next_char_loss(&model.forward(&x)?, &y)?;
            l.backward()?;
            clip_grad_norm(&handles, 1.0)?;
            opt.step()?;
            opt.zero_grad();
            if (step + 1) % 100 == 0 || step + 1 == steps {
                model.eval();
                let valid = no_grad(|| -> AnyResult<f64> {
                    let (mut sum, mut n) = (0.0, 0.0);
                    while let Some((x, y)) = data.spread_batch(
                        TextPart::Valid,
                        n as usize * 64,
                        64,
                        256,
                        config.context,
                        device,
                    )? {
                        sum += next_char_loss(&model.forward(&x)?, &y)?.item()?;
                        n += 1.0;
                    }
                    Ok(sum / n)
                })?;
                model.train();
                let secs = started.elapsed().as_secs_f64();
                println!(
                    "step {:>5}  train {:.3}  valid {valid:.3}  {secs:.0} s",
                    step + 1,
                    l.item()?
                );
            }
        }
        Ok(())
    })?;
    model.eval();
    let prompt = vocab.encode("ROMEO:")?;
    let options = SampleOptions {
        tokens: 200,
        temperature: 0.8,
        top_k: Some(20),
    };
    let ids = model.generate(&prompt, &options, &mut Generator::new(1))?;
    println!("\n{}", vocab.decode(&ids));
    Ok(())
}
