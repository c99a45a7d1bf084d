//! What a run reports: the per-epoch table on the terminal, `metrics.json`,
//! and the settings a checkpoint must match to be resumed.

use std::path::Path;

use oxmera::Device;
use serde::{Deserialize, Serialize};

use super::TrainArgs;

/// The settings that determine a run's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub model: String,
    pub dataset: String,
    pub epochs: u64,
    pub batch_size: usize,
    pub lr: f64,
    pub optimizer: String,
    pub schedule: String,
    pub seed: u64,
    pub device: String,
    /// Steps per epoch, for the language model (whose epoch is a number
    /// of steps, not a pass over the data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_epoch: Option<usize>,
}

impl RunConfig {
    pub fn from_args(args: &TrainArgs, device: Device) -> RunConfig {
        let name = |v: &dyn std::fmt::Debug| format!("{v:?}").to_lowercase();
        RunConfig {
            model: name(&args.model),
            dataset: name(&args.dataset()),
            epochs: args.epochs(),
            batch_size: args.batch_size,
            lr: args.lr(),
            optimizer: name(&args.optimizer()),
            schedule: name(&args.schedule),
            seed: args.seed,
            device: device.to_string(),
            steps_per_epoch: args
                .model
                .is_language_model()
                .then(|| args.steps_per_epoch()),
        }
    }

    /// The settings a resumed run must share with the run that wrote the
    /// checkpoint. Under a constant rate the epoch count is not among them
    /// (resuming to train longer is the point); under cosine decay it is,
    /// because it sets the rate of every step. The device is not either:
    /// the reference and the CPU backend agree within tolerance, not bit
    /// for bit, so a resumed run on another device continues correctly but
    /// not identically.
    pub fn fingerprint(&self) -> String {
        let horizon = if self.schedule == "constant" {
            String::new()
        } else {
            format!(" epochs={}", self.epochs)
        };
        // Only a language model's runs name it: a classifier's fingerprint
        // stays what its older checkpoints hold.
        let steps = self
            .steps_per_epoch
            .map_or(String::new(), |n| format!(" steps_per_epoch={n}"));
        format!(
            "model={} dataset={} batch_size={} lr={} optimizer={} schedule={}{horizon}{steps} seed={}",
            self.model,
            self.dataset,
            self.batch_size,
            self.lr,
            self.optimizer,
            self.schedule,
            self.seed
        )
    }
}

/// The figures of one epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    /// 1-based.
    pub epoch: u64,
    /// Mean training loss over the epoch's samples.
    pub loss: f64,
    /// Accuracy on the training set after the epoch (eval mode).
    pub train_accuracy: f64,
    /// Accuracy on the test set after the epoch (eval mode); for a
    /// language model, next-character accuracy on the validation text.
    pub test_accuracy: f64,
    /// Mean loss on the test set (the validation text) after the epoch.
    /// Absent from histories written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_loss: Option<f64>,
    /// Wall time of the epoch, training and evaluation.
    pub seconds: f64,
    /// Training throughput.
    pub samples_per_second: f64,
}

/// Everything `metrics.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub config: RunConfig,
    pub data: String,
    pub parameters: usize,
    pub epochs: Vec<EpochMetrics>,
    pub final_test_accuracy: Option<f64>,
    /// The last epoch's test (validation) loss.
    #[serde(default)]
    pub final_test_loss: Option<f64>,
    pub total_seconds: f64,
}

impl Metrics {
    pub fn new(config: RunConfig, data: String, parameters: usize) -> Metrics {
        Metrics {
            config,
            data,
            parameters,
            epochs: Vec::new(),
            final_test_accuracy: None,
            final_test_loss: None,
            total_seconds: 0.0,
        }
    }

    pub fn push(&mut self, row: EpochMetrics) {
        self.final_test_accuracy = Some(row.test_accuracy);
        self.final_test_loss = row.test_loss;
        self.epochs.push(row);
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("metrics serialize") + "\n"
    }

    /// The finished epochs, for a checkpoint's metadata.
    pub fn history_json(&self) -> String {
        serde_json::to_string(&(&self.epochs, self.total_seconds)).expect("history serializes")
    }

    pub fn restore_history(&mut self, json: &str) -> Result<(), serde_json::Error> {
        let (epochs, total): (Vec<EpochMetrics>, f64) = serde_json::from_str(json)?;
        self.epochs.clear();
        for row in epochs {
            self.push(row);
        }
        self.total_seconds = total;
        Ok(())
    }
}

/// The per-epoch table on stdout (silent when quiet). A language model's
/// table shows the validation loss and next-character accuracy.
pub struct Table {
    quiet: bool,
    text: bool,
}

impl Table {
    pub fn new(quiet: bool, text: bool) -> Table {
        Table { quiet, text }
    }

    pub fn header(&self, metrics: &Metrics, first_epoch: u64, epochs: u64) {
        if self.quiet {
            return;
        }
        let c = &metrics.config;
        println!(
            "training {} on {} · {} parameters · {} (lr {}, {}, batch {}) · seed {} · device {}",
            c.model,
            metrics.data,
            metrics.parameters,
            c.optimizer,
            c.lr,
            c.schedule,
            c.batch_size,
            c.seed,
            c.device
        );
        if first_epoch > 0 {
            println!("resuming after epoch {first_epoch} of {epochs}");
        }
        if self.text {
            println!(
                "{:>5}  {:>10}  {:>10}  {:>9}  {:>7}  {:>10}",
                "epoch", "train loss", "valid loss", "valid acc", "time", "windows/s"
            );
            return;
        }
        println!(
            "{:>5}  {:>9}  {:>9}  {:>9}  {:>7}  {:>10}",
            "epoch", "loss", "train acc", "test acc", "time", "samples/s"
        );
    }

    pub fn row(&self, r: &EpochMetrics) {
        if self.quiet {
            return;
        }
        if self.text {
            println!(
                "{:>5}  {:>10.4}  {:>10.4}  {:>8.2}%  {:>6.1}s  {:>10.1}",
                r.epoch,
                r.loss,
                r.test_loss.unwrap_or(f64::NAN),
                100.0 * r.test_accuracy,
                r.seconds,
                r.samples_per_second
            );
            return;
        }
        println!(
            "{:>5}  {:>9.4}  {:>8.2}%  {:>8.2}%  {:>6.2}s  {:>10.0}",
            r.epoch,
            r.loss,
            100.0 * r.train_accuracy,
            100.0 * r.test_accuracy,
            r.seconds,
            r.samples_per_second
        );
    }

    pub fn summary(&self, metrics: &Metrics, out: &Path, seconds: f64) {
        let acc = metrics
            .final_test_accuracy
            .map_or("n/a".to_string(), |a| format!("{:.2}%", 100.0 * a));
        // Only the files that are there (a run stopped by an error before
        // its first epoch ended wrote none).
        let written: Vec<&str> = ["checkpoint.safetensors", "metrics.json", "curves.png"]
            .into_iter()
            .filter(|f| out.join(f).is_file())
            .collect();
        let headline = match (self.text, metrics.final_test_loss) {
            (true, Some(loss)) => format!(
                "validation loss {loss:.4} nats per character (next-character accuracy {acc})"
            ),
            _ => format!("test accuracy {acc}"),
        };
        println!(
            "{headline} after {} epochs in {seconds:.1}s · wrote {}/{{{}}}",
            metrics.epochs.len(),
            out.display(),
            written.join(", ")
        );
    }
}
