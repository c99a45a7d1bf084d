//! `oxmera eval CHECKPOINT`: a trained model's loss, accuracy and
//! confusion matrix on the test split, without training.
//!
//! The checkpoint says how it was made (its `train_config` metadata:
//! model, data set, seed), so the same network is built, the weights are
//! loaded into it, and the same seeded split gives the same test samples
//! the run was scored on; `--dataset`/`--data` evaluate on other data of
//! the same shape. The matrix is printed (rows: the true class, columns:
//! the predicted one) and drawn as `confusion.png` beside the checkpoint
//! (or in `--out`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;
use oxmera::Generator;
use oxmera::tensor::NoGradGuard;
use oxmera_data::{DataLoader, LoaderConfig};
use oxmera_nn::loss::{CrossEntropyOptions, Reduction, cross_entropy};

use super::error::TrainError;
use super::{DatasetKind, ModelKind, OptimizerKind, ScheduleKind, TrainArgs, data, model, plot};

/// Arguments of `oxmera eval`.
#[derive(Debug, Clone, clap::Args)]
pub struct EvalArgs {
    /// A checkpoint written by `oxmera train` (`checkpoint.safetensors`
    /// or an `epoch-N.safetensors`).
    pub checkpoint: PathBuf,
    /// Evaluate on this data set instead of the one the run trained on.
    #[arg(long, value_enum)]
    pub dataset: Option<DatasetKind>,
    /// The directory of IDX files, for `--dataset mnist`.
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// The device to compute on.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Where `confusion.png` goes (default: the checkpoint's directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// What an evaluation found.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Mean cross-entropy over the samples.
    pub loss: f64,
    /// The fraction classified right.
    pub accuracy: f64,
    /// `matrix[true][predicted]` counts.
    pub confusion: Vec<Vec<u64>>,
}

/// Runs `oxmera eval`: exit 0, or 2 with the error.
pub fn run(args: EvalArgs) -> ExitCode {
    match evaluate(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Writes a line to stdout, ignoring a closed pipe (`oxmera eval … | head`
/// must not panic; the exit code still says how the command went).
pub(super) fn say(text: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// The `key=value` settings of a checkpoint's `train_config`.
fn setting<'a>(config: &'a str, key: &str) -> Option<&'a str> {
    config
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// A network rebuilt from a checkpoint of `oxmera train`, with the data
/// it was trained on (or `dataset` instead).
pub struct Restored {
    /// The network, its weights loaded.
    pub net: Box<dyn oxmera_nn::Module>,
    /// Which architecture it is.
    pub kind: ModelKind,
    /// The train and test parts (the run's seeded split).
    pub parts: data::Parts,
    /// The checkpoint's `train_config`.
    pub config: String,
    /// The checkpoint, for its metadata.
    pub checkpoint: oxmera_checkpoint::Checkpoint,
}

/// Rebuilds the network a checkpoint was written by, as its
/// `train_config` says, and loads its weights.
pub fn restore(
    path: &Path,
    device: oxmera::Device,
    dataset: Option<DatasetKind>,
    data_dir: Option<PathBuf>,
) -> Result<Restored, TrainError> {
    let checkpoint = oxmera_checkpoint::load(path, device)?;
    let config: String = checkpoint.metadata_value(super::engine::CONFIG_KEY)?;
    let unknown = |what: &str| {
        TrainError::Usage(format!(
            "{}: its train_config ({config}) names no {what}; was it written by oxmera train?",
            path.display()
        ))
    };
    let kind = setting(&config, "model")
        .and_then(|m| ModelKind::from_str(m, true).ok())
        .ok_or_else(|| unknown("model"))?;
    if kind.is_language_model() {
        return Err(TrainError::Usage(format!(
            "{} holds a character-level transformer: `oxmera sample {}` continues a prompt with \
             it, `oxmera export` writes it as ONNX, and its training table has its validation \
             loss (`eval` scores classifiers)",
            path.display(),
            path.display()
        )));
    }
    let dataset = match dataset {
        Some(d) => d,
        None => setting(&config, "dataset")
            .and_then(|d| DatasetKind::from_str(d, true).ok())
            .ok_or_else(|| unknown("dataset"))?,
    };
    let seed = setting(&config, "seed")
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| unknown("seed"))?;
    let train_args = TrainArgs {
        model: kind,
        dataset: Some(dataset),
        data: data_dir,
        epochs: None,
        steps_per_epoch: None,
        batch_size: 1,
        lr: None,
        optimizer: Some(OptimizerKind::Sgd),
        schedule: ScheduleKind::Constant,
        seed,
        device: device.to_string(),
        out: PathBuf::new(),
        resume: None,
        keep_epochs: 0,
        quiet: true,
        tensorboard: None,
        metrics_jsonl: None,
        log_every: 1,
    };
    let parts = data::load(&train_args)?;
    // The initial weights are overwritten; the generator only shapes them.
    let net = model::build(
        kind,
        &parts.feature_shape,
        parts.num_classes,
        &mut Generator::new(0),
        device,
    )?;
    net.load_state_dict(&checkpoint.with_prefix(oxmera_checkpoint::MODEL_PREFIX))?;
    Ok(Restored {
        net,
        kind,
        parts,
        config,
        checkpoint,
    })
}

fn evaluate(args: &EvalArgs) -> Result<(), TrainError> {
    let device = oxmera::tensor::registry::parse_device(&args.device)?;
    let Restored {
        net,
        parts,
        config,
        checkpoint: ckpt,
        ..
    } = restore(&args.checkpoint, device, args.dataset, args.data.clone())?;
    let loader = DataLoader::new(&parts.test, LoaderConfig::new(256).on(device))?;
    let result = score(net.as_ref(), &loader, parts.num_classes)?;

    let epoch: u64 = ckpt
        .metadata_value(oxmera_checkpoint::EPOCH_KEY)
        .unwrap_or(0);
    say(format_args!(
        "{} ({config}; after epoch {epoch})",
        args.checkpoint.display()
    ));
    say(format_args!("{}", parts.description));
    let n: u64 = result.confusion.iter().flatten().sum();
    say(format_args!(
        "test loss {:.4} · accuracy {:.2}% on {n} samples",
        result.loss,
        100.0 * result.accuracy
    ));
    say(format_args!(
        "{}",
        confusion_table(&result.confusion).trim_end()
    ));
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => args
            .checkpoint
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    let png = dir.join("confusion.png");
    std::fs::create_dir_all(&dir).map_err(|source| TrainError::Io {
        path: dir.clone(),
        source,
    })?;
    oxmera_checkpoint::write_via_temp(&png, |temp| {
        plot::confusion(temp, &result.confusion).map_err(std::io::Error::other)
    })?;
    say(format_args!("wrote {}", png.display()));
    Ok(())
}

/// Loss, accuracy and confusion of `net` over `loader`.
pub fn score<D: oxmera_data::Dataset>(
    net: &dyn oxmera_nn::Module,
    loader: &DataLoader<D>,
    classes: usize,
) -> Result<Evaluation, TrainError> {
    let _no_grad = NoGradGuard::new();
    let options = CrossEntropyOptions {
        reduction: Reduction::Sum,
        ..CrossEntropyOptions::default()
    };
    let mut confusion = vec![vec![0u64; classes]; classes];
    let (mut loss_sum, mut total, mut right) = (0.0, 0u64, 0u64);
    for batch in loader.epoch(0) {
        let batch = batch?;
        let logits = net.forward(&batch.x)?;
        loss_sum += cross_entropy(&logits, &batch.y, &options)?.item()?;
        let predicted = logits.argmax(-1, false)?.to_vec::<i64>()?;
        let truth = batch.y.to_vec::<i64>()?;
        for (&t, &p) in truth.iter().zip(&predicted) {
            confusion[t as usize][p as usize] += 1;
            right += u64::from(t == p);
            total += 1;
        }
    }
    let share = |x: f64| if total == 0 { 0.0 } else { x / total as f64 };
    Ok(Evaluation {
        loss: share(loss_sum),
        accuracy: share(right as f64),
        confusion,
    })
}

/// The matrix as text: a header of predicted classes, a row per true
/// class.
pub fn confusion_table(matrix: &[Vec<u64>]) -> String {
    let width = matrix
        .iter()
        .flatten()
        .map(|c| c.to_string().len())
        .max()
        .unwrap_or(1)
        .max(matrix.len().to_string().len())
        .max(2);
    let mut out = format!("{:>w$}  predicted →\n", "", w = width + 7);
    out.push_str(&format!("{:>7}", "true ↓"));
    for p in 0..matrix.len() {
        out.push_str(&format!(" {p:>width$}"));
    }
    out.push('\n');
    for (t, row) in matrix.iter().enumerate() {
        out.push_str(&format!("{t:>7}"));
        for c in row {
            out.push_str(&format!(" {c:>width$}"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_from_the_fingerprint() {
        let c = "model=cnn dataset=digits batch_size=32 lr=0.1 optimizer=sgd schedule=cosine epochs=30 seed=7";
        assert_eq!(setting(c, "model"), Some("cnn"));
        assert_eq!(setting(c, "seed"), Some("7"));
        assert_eq!(setting(c, "mode"), None);
    }

    #[test]
    fn the_table_has_a_row_per_true_class() {
        let t = confusion_table(&[vec![5, 1], vec![0, 4]]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[2].ends_with(" 5  1"), "{t}");
        assert!(lines[3].ends_with(" 0  4"), "{t}");
    }
}
