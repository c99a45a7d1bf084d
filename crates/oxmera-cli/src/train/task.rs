//! What a run learns: where its batches come from and how it is scored.
//!
//! The training loop in `engine` is one loop for every model; a [`Task`]
//! supplies the rest. A classifier's batches come from data loaders over
//! a data set's train and test parts, one epoch a shuffled pass; a
//! language model's are windows of text drawn at random offsets (a pure
//! function of the seed and the step), an epoch a fixed number of steps,
//! and every position of a window is one prediction.

use std::collections::BTreeMap;

use oxmera::{Device, Tensor};
use oxmera_data::{
    CharVocab, DataLoader, LoaderConfig, Subset, TensorDataset, TextPart, TextSplit,
};
use oxmera_nn::Module;
use oxmera_nn::loss::accuracy;
use oxmera_nn::models::{flatten_positions, next_char_loss};

use super::error::TrainError;

/// Samples per batch when evaluating (no gradients, so larger is fine).
const EVAL_BATCH: usize = 256;
/// Windows of text each evaluation scores, spread evenly over the part
/// (16,384 predictions: the validation loss's sampling error is about
/// 0.01 nats, well below what the curves show).
const TEXT_EVAL_WINDOWS: usize = 256;
/// Windows per evaluation batch of text.
const TEXT_EVAL_BATCH: usize = 64;
/// Checkpoint metadata: the transformer's shape and its vocabulary, so
/// `oxmera sample` needs nothing but the checkpoint.
pub const MODEL_CONFIG_KEY: &str = "model_config";
/// See [`MODEL_CONFIG_KEY`].
pub const VOCAB_KEY: &str = "vocab";

/// One optimizer step's inputs and targets.
pub struct StepBatch {
    /// The inputs (features, or windows of ids).
    pub x: Tensor,
    /// The targets (classes, or the next ids).
    pub y: Tensor,
    /// Samples in the batch (for a text batch, windows).
    pub samples: usize,
}

/// A model's loss and accuracy on one part of the data.
#[derive(Debug, Clone, Copy)]
pub struct Score {
    /// The mean loss per prediction.
    pub loss: f64,
    /// The fraction of predictions right.
    pub accuracy: f64,
}

/// Batches, scores and the metadata a checkpoint of this task carries.
pub trait Task {
    /// Optimizer steps in one epoch.
    fn steps_per_epoch(&self) -> usize;
    /// The batches of epoch `epoch` (0-based), whose first step is number
    /// `first_step` overall.
    fn epoch(
        &self,
        epoch: u64,
        first_step: u64,
    ) -> Box<dyn Iterator<Item = Result<StepBatch, TrainError>> + '_>;
    /// The model's loss and accuracy on the training part (`train`) or the
    /// test/validation part, in evaluation mode.
    fn score(&self, net: &dyn Module, train: bool) -> Result<Score, TrainError>;
    /// Metadata a checkpoint of this task needs beyond the loop's own.
    fn metadata(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
}

/// The loss of `logits` against `targets`: `[N, C]` against `[N]`, or a
/// sequence's `[B, T, C]` against `[B, T]`, every position a prediction
/// ([`next_char_loss`]).
pub fn loss(logits: &Tensor, targets: &Tensor) -> oxmera::Result<Tensor> {
    next_char_loss(logits, targets)
}

/// The fraction of predictions whose highest logit is the target, with
/// [`loss`]'s shapes.
pub fn hits(logits: &Tensor, targets: &Tensor) -> oxmera::Result<f64> {
    let (l, t) = flatten_positions(logits, targets)?;
    accuracy(&l, &t)
}

/// A classifier on a data set's train and test parts.
pub struct Classes<'a> {
    train: DataLoader<&'a Subset<TensorDataset>>,
    train_eval: DataLoader<&'a Subset<TensorDataset>>,
    test_eval: DataLoader<&'a Subset<TensorDataset>>,
}

impl<'a> Classes<'a> {
    /// Loaders over `train` (shuffled by `seed`, `batch` samples a step)
    /// and both parts for scoring, on `device`.
    pub fn new(
        train: &'a Subset<TensorDataset>,
        test: &'a Subset<TensorDataset>,
        batch: usize,
        seed: u64,
        device: Device,
    ) -> Result<Self, TrainError> {
        Ok(Classes {
            train: DataLoader::new(train, LoaderConfig::new(batch).shuffled(seed).on(device))?,
            train_eval: DataLoader::new(train, LoaderConfig::new(EVAL_BATCH).on(device))?,
            test_eval: DataLoader::new(test, LoaderConfig::new(EVAL_BATCH).on(device))?,
        })
    }
}

impl Task for Classes<'_> {
    fn steps_per_epoch(&self) -> usize {
        self.train.num_batches()
    }

    fn epoch(
        &self,
        epoch: u64,
        _first_step: u64,
    ) -> Box<dyn Iterator<Item = Result<StepBatch, TrainError>> + '_> {
        Box::new(self.train.epoch(epoch).map(|batch| {
            let batch = batch?;
            Ok(StepBatch {
                samples: batch.indices.len(),
                x: batch.x,
                y: batch.y,
            })
        }))
    }

    fn score(&self, net: &dyn Module, train: bool) -> Result<Score, TrainError> {
        let loader = if train {
            &self.train_eval
        } else {
            &self.test_eval
        };
        let _no_grad = oxmera::tensor::NoGradGuard::new();
        let (mut loss_sum, mut correct, mut total) = (0.0, 0.0, 0usize);
        for batch in loader.epoch(0) {
            let batch = batch?;
            let logits = net.forward(&batch.x)?;
            let n = batch.indices.len();
            loss_sum += loss(&logits, &batch.y)?.item()? * n as f64;
            correct += hits(&logits, &batch.y)? * n as f64;
            total += n;
        }
        let per = |v: f64| if total == 0 { 0.0 } else { v / total as f64 };
        Ok(Score {
            loss: per(loss_sum),
            accuracy: per(correct),
        })
    }
}

/// A character-level language model on a text split: batches of `batch`
/// windows of `context` characters, `steps` an epoch, drawn under `seed`.
pub struct Text {
    /// The text as ids, training and validation parts.
    pub split: TextSplit,
    /// The characters the ids stand for (recorded in checkpoints).
    pub vocab: CharVocab,
    /// The transformer's shape, as its checkpoint records it.
    pub model_config: String,
    /// Characters per window.
    pub context: usize,
    /// Windows per step.
    pub batch: usize,
    /// Steps per epoch.
    pub steps: usize,
    /// The seed the windows' offsets are drawn under.
    pub seed: u64,
    /// Where batches are made.
    pub device: Device,
}

impl Task for Text {
    fn steps_per_epoch(&self) -> usize {
        self.steps
    }

    fn epoch(
        &self,
        _epoch: u64,
        first_step: u64,
    ) -> Box<dyn Iterator<Item = Result<StepBatch, TrainError>> + '_> {
        Box::new((0..self.steps as u64).map(move |i| {
            let (x, y) = self.split.train_batch(
                self.seed,
                first_step + i,
                self.batch,
                self.context,
                self.device,
            )?;
            Ok(StepBatch {
                x,
                y,
                samples: self.batch,
            })
        }))
    }

    fn score(&self, net: &dyn Module, train: bool) -> Result<Score, TrainError> {
        let part = if train {
            TextPart::Train
        } else {
            TextPart::Valid
        };
        let _no_grad = oxmera::tensor::NoGradGuard::new();
        let (mut loss_sum, mut correct, mut windows) = (0.0, 0.0, 0usize);
        while let Some((x, y)) = self.split.spread_batch(
            part,
            windows,
            TEXT_EVAL_BATCH,
            TEXT_EVAL_WINDOWS,
            self.context,
            self.device,
        )? {
            let logits = net.forward(&x)?;
            let n = x.dims()[0];
            loss_sum += loss(&logits, &y)?.item()? * n as f64;
            correct += hits(&logits, &y)? * n as f64;
            windows += n;
        }
        Ok(Score {
            loss: loss_sum / windows.max(1) as f64,
            accuracy: correct / windows.max(1) as f64,
        })
    }

    fn metadata(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (MODEL_CONFIG_KEY.to_string(), self.model_config.clone()),
            (VOCAB_KEY.to_string(), self.vocab.chars()),
        ])
    }
}
