//! `oxmera sample`: continue a prompt with a transformer trained by
//! `oxmera train --model transformer`. The checkpoint carries the model's
//! shape and its vocabulary, so no flag has to repeat the training run's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use oxmera::Generator;
use oxmera_data::CharVocab;
use oxmera_nn::Module;
use oxmera_nn::models::{CharTransformer, SampleOptions, TransformerConfig};

use super::error::TrainError;
use super::task::{MODEL_CONFIG_KEY, VOCAB_KEY};

/// Arguments of `oxmera sample`.
#[derive(Debug, Clone, clap::Args)]
pub struct SampleArgs {
    /// A checkpoint written by `oxmera train --model transformer`
    /// (`runs/latest/checkpoint.safetensors`, or an epoch's file).
    pub checkpoint: PathBuf,
    /// The text to continue (every character must be in the training
    /// text's vocabulary).
    #[arg(long, default_value = "ROMEO:")]
    pub prompt: String,
    /// Characters to add.
    #[arg(long, default_value_t = 500)]
    pub tokens: usize,
    /// Divides the logits before the softmax: below 1 is more
    /// conservative, above 1 more adventurous.
    #[arg(long, default_value_t = 0.8)]
    pub temperature: f64,
    /// Draw only among the K likeliest characters at each step.
    #[arg(long, value_name = "K")]
    pub top_k: Option<usize>,
    /// The seed of the draws: the same seed gives the same text.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The device to run the model on.
    #[arg(long, default_value = "cpu")]
    pub device: String,
}

/// Runs `oxmera sample`: 0 on success, 2 on a bad checkpoint or argument.
pub fn run(args: SampleArgs) -> ExitCode {
    match sample(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The transformer a checkpoint of `oxmera train --model transformer`
/// holds, in eval mode, with its vocabulary: the model's shape and the
/// characters come from the checkpoint's metadata, so no flag repeats
/// them. A usage error names what is missing from any other checkpoint.
pub(super) fn transformer_from(
    ckpt: &oxmera_checkpoint::Checkpoint,
    path: &Path,
    device: oxmera::Device,
) -> Result<(CharTransformer, CharVocab), TrainError> {
    let not_ours = |key: &str| {
        TrainError::Usage(format!(
            "{} has no {key:?} entry: it was not written by `oxmera train --model transformer`",
            path.display()
        ))
    };
    let line: String = ckpt
        .metadata_value(MODEL_CONFIG_KEY)
        .map_err(|_| not_ours(MODEL_CONFIG_KEY))?;
    let chars: String = ckpt
        .metadata_value(VOCAB_KEY)
        .map_err(|_| not_ours(VOCAB_KEY))?;
    let config = TransformerConfig::parse(&line)?;
    let vocab = CharVocab::from_chars(&chars)?;
    if vocab.len() != config.vocab_size {
        return Err(TrainError::Usage(format!(
            "{}: the vocabulary has {} characters but the model {}; the checkpoint is damaged",
            path.display(),
            vocab.len(),
            config.vocab_size
        )));
    }
    let mut model =
        CharTransformer::new(config, &mut Generator::new(0), oxmera::DType::F32, device)?;
    model.load_state_dict(&ckpt.with_prefix(oxmera_checkpoint::MODEL_PREFIX))?;
    model.eval();
    Ok((model, vocab))
}

fn sample(args: &SampleArgs) -> Result<(), TrainError> {
    let device = oxmera::tensor::registry::parse_device(&args.device)?;
    let ckpt = oxmera_checkpoint::load(&args.checkpoint, device)?;
    let (model, vocab) = transformer_from(&ckpt, &args.checkpoint, device)?;
    if args.prompt.is_empty() {
        return Err(TrainError::Usage(
            "--prompt needs at least one character".into(),
        ));
    }
    let prompt = vocab.encode(&args.prompt)?;
    let options = SampleOptions {
        tokens: args.tokens,
        temperature: args.temperature,
        top_k: args.top_k,
    };
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{}", args.prompt);
    let mut rng = Generator::new(args.seed);
    model.generate_each(&prompt, &options, &mut rng, |id| {
        // A closed pipe (`| head`) only ends the printing.
        let _ = write!(out, "{}", vocab.decode(&[id]));
        let _ = out.flush();
    })?;
    let _ = writeln!(out);
    Ok(())
}
