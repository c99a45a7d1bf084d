//! `oxmera train`: train a classifier or a character-level transformer,
//! with a progress bar, a per-epoch table, a checkpoint after every epoch,
//! `metrics.json` and a PNG of the curves; `oxmera sample` continues a
//! prompt with a trained transformer.
//!
//! Runs are deterministic: the seed fixes the split, the initial weights,
//! the shuffling of every epoch (a function of the seed and the epoch
//! number, not of the history) and dropout. A checkpoint holds everything
//! else the loop carries from one epoch to the next — weights, optimizer
//! state, the step and epoch counters, and the figures of the epochs so far
//! — so `--resume` continues exactly where the run stopped, and ends with
//! the same bits as a run that never stopped.

use std::path::PathBuf;
use std::process::ExitCode;

mod data;
mod engine;
mod error;
pub mod eval;
pub mod export;
mod model;
mod plot;
mod report;
pub mod sample;
mod task;
mod watch;

pub use error::TrainError;

/// Which network to train.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModelKind {
    /// A multi-layer perceptron: two hidden layers of 512 ReLU units.
    Mlp,
    /// A small convolutional network (two conv + pool stages, then two
    /// linear layers); needs image data (digits or mnist). Its model is
    /// `oxmera::nn::models::CnnConfig`.
    Cnn,
    /// A character-level transformer (4 layers, width 128, 4 heads,
    /// context 64: 0.82 M parameters) on the embedded Shakespeare plays;
    /// `oxmera sample` continues a prompt with it. Its model is
    /// `oxmera::nn::models::CharTransformer`.
    Transformer,
}

impl ModelKind {
    /// Whether the model reads text (and predicts every next character)
    /// rather than classifying samples.
    pub fn is_language_model(self) -> bool {
        self == ModelKind::Transformer
    }
}

/// Which data set to train on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DatasetKind {
    /// 1797 handwritten digits, 8x8, embedded in the binary (no download).
    Digits,
    /// Three interleaved spiral arms in the plane (procedural).
    Spirals,
    /// Two interleaved half-moons in the plane (procedural).
    Moons,
    /// MNIST or Fashion-MNIST from the IDX files in `--data DIR`.
    Mnist,
    /// Eight Shakespeare plays, 1 MB of text, embedded (for
    /// `--model transformer`; the last 10% validates).
    Shakespeare,
}

/// Steps in an epoch of `--model transformer` by default (the text has
/// no natural epoch: batches are windows drawn anywhere in it).
pub const TEXT_EPOCH_STEPS: usize = 250;

impl TrainArgs {
    /// The learning rate: `--lr`, or the optimizer's default (SGD with
    /// momentum tolerates, and needs, a rate about a hundred times Adam's).
    pub fn lr(&self) -> f64 {
        self.lr.unwrap_or(match self.optimizer() {
            OptimizerKind::Sgd => 0.1,
            OptimizerKind::Adam | OptimizerKind::Adamw => 1e-3,
        })
    }

    /// `--dataset`, or the model's own: digits for the classifiers,
    /// Shakespeare for the transformer.
    pub fn dataset(&self) -> DatasetKind {
        self.dataset.unwrap_or(if self.model.is_language_model() {
            DatasetKind::Shakespeare
        } else {
            DatasetKind::Digits
        })
    }

    /// `--epochs`, or the model's default: 30 for the classifiers, 10 of
    /// 250 steps for the transformer (under 10 minutes on two cores).
    pub fn epochs(&self) -> u64 {
        self.epochs.unwrap_or(if self.model.is_language_model() {
            10
        } else {
            30
        })
    }

    /// `--optimizer`, or the model's default: SGD with momentum for the
    /// classifiers, AdamW for the transformer.
    pub fn optimizer(&self) -> OptimizerKind {
        self.optimizer.unwrap_or(if self.model.is_language_model() {
            OptimizerKind::Adamw
        } else {
            OptimizerKind::Sgd
        })
    }

    /// `--steps-per-epoch`, or [`TEXT_EPOCH_STEPS`].
    pub fn steps_per_epoch(&self) -> usize {
        self.steps_per_epoch.unwrap_or(TEXT_EPOCH_STEPS)
    }
}

/// Which optimizer updates the weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OptimizerKind {
    /// Stochastic gradient descent with momentum 0.9.
    Sgd,
    /// Adam (L2 weight decay, none by default).
    Adam,
    /// AdamW (decoupled weight decay 0.01).
    Adamw,
}

/// How the learning rate moves over the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScheduleKind {
    /// `--lr` throughout.
    Constant,
    /// From `--lr` down to zero along a half cosine over all the steps of
    /// `--epochs` epochs.
    Cosine,
}

/// Arguments of `oxmera train`. With none, it trains an MLP on digits.
#[derive(Debug, Clone, clap::Args)]
pub struct TrainArgs {
    /// The network.
    #[arg(long, value_enum, default_value_t = ModelKind::Mlp)]
    pub model: ModelKind,
    /// The data set. Default: digits, or shakespeare for the transformer.
    #[arg(long, value_enum)]
    pub dataset: Option<DatasetKind>,
    /// The directory holding the IDX files, for `--dataset mnist`.
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Passes over the training data (for the transformer, rounds of
    /// --steps-per-epoch steps). Default: 30, or 10 for the transformer.
    #[arg(long)]
    pub epochs: Option<u64>,
    /// Optimizer steps in one epoch of the transformer (default 250); each
    /// epoch ends with a validation loss and a checkpoint.
    #[arg(long, value_name = "N")]
    pub steps_per_epoch: Option<usize>,
    /// Samples per optimizer step.
    #[arg(long, default_value_t = 32)]
    pub batch_size: usize,
    /// Learning rate (the peak, under a schedule). Default: 0.1 for SGD,
    /// 0.001 for Adam and AdamW.
    // Negative numbers are taken as values, so that `--lr -1` meets the
    // positive-number check rather than clap's "unexpected argument".
    #[arg(long, allow_negative_numbers = true)]
    pub lr: Option<f64>,
    /// The optimizer. Default: sgd, or adamw for the transformer.
    #[arg(long, value_enum)]
    pub optimizer: Option<OptimizerKind>,
    /// The learning-rate schedule.
    #[arg(long, value_enum, default_value_t = ScheduleKind::Cosine)]
    pub schedule: ScheduleKind,
    /// The seed for the split, the initial weights and the shuffling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The device to compute on (`cpu`, `reference`, or any device a linked
    /// backend provides, such as `loopback`, whose ops all run through
    /// the host fallback; the run then ends with the fallback report).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Where the checkpoint, metrics.json and curves.png go.
    #[arg(long, value_name = "DIR", default_value = "runs/latest")]
    pub out: PathBuf,
    /// Continue from a checkpoint written by an earlier run with the same
    /// settings (`DIR/checkpoint.safetensors`, or an epoch's
    /// `DIR/epoch-N.safetensors`): its epoch count is where this run
    /// starts, `--epochs` the total. With `--schedule constant` the total
    /// may differ from the earlier run's, to train longer. A checkpoint that
    /// already holds all `--epochs` epochs trains nothing and writes the
    /// run's outputs: the same command, rerun after a kill, finishes a run.
    #[arg(long, value_name = "CHECKPOINT")]
    pub resume: Option<PathBuf>,
    /// How many per-epoch checkpoints (`epoch-N.safetensors`) to keep, the
    /// latest ones; `checkpoint.safetensors` (the latest state) is always
    /// written.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub keep_epochs: u64,
    /// Print only the final summary (no progress bar, no table).
    #[arg(long)]
    pub quiet: bool,
    /// Write TensorBoard event files to DIR as the run goes (scalars every
    /// --log-every steps and per epoch, parameter histograms per epoch):
    /// `tensorboard --logdir DIR`. A resumed run adds a file there.
    #[arg(long, value_name = "DIR")]
    pub tensorboard: Option<PathBuf>,
    /// Append one JSON object per logged step (and per epoch) to FILE,
    /// flushed as written, for `tail -f` and scripts.
    #[arg(long, value_name = "FILE")]
    pub metrics_jsonl: Option<PathBuf>,
    /// Log a step's figures every N steps (and the first step).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub log_every: u64,
}

/// Runs `oxmera train`. Exit codes, as every `oxmera` command uses them:
/// 0 when training finished, 1 when it stopped on a non-finite loss, 2 on
/// bad arguments, bad input files or an I/O error.
pub fn run(args: TrainArgs) -> ExitCode {
    let device = match oxmera::tensor::registry::parse_device(&args.device) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // On one of the CPU backend's workers, so that each op splits its work
    // in place rather than waking the pool and sleeping until it is done
    // (`oxmera::cpu::on_pool`; a tenth off the transformer's step on two
    // cores). The whole run is there, so thread-local state (grad mode,
    // the parameters made on this thread) stays on one thread.
    let result = oxmera::cpu::on_pool(|| engine::train(&args, device));
    // Which ops the device lacked, how often: printed after the summary
    // (also on failure, where it may be why), only if any fell back.
    let fell_back = oxmera::tensor::fallback::report().for_device(device);
    if !fell_back.is_empty() {
        print!("\n{fell_back}");
    }
    // On a GPU, how its buffer pool served the run's allocations: after
    // the first steps a training loop should make no new buffer.
    #[cfg(feature = "wgpu")]
    if let Some(pool) = oxmera_wgpu::pool_stats(device)
        && !args.quiet
    {
        println!(
            "buffer pool on {device}: {} allocations, {:.2}% served by reuse ({} new buffers)",
            pool.hits + pool.misses,
            100.0 * pool.hit_rate(),
            pool.misses
        );
        if let Some(q) = oxmera_wgpu::queue_stats(device) {
            println!(
                "queue of {device}: {} kernel launches in {} submissions",
                q.launches, q.submissions
            );
        }
    }
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(TrainError::Diverged(message)) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
