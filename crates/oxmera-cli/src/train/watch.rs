//! What a running `oxmera train` shows outside its terminal: TensorBoard
//! event files (`--tensorboard DIR`) and a JSON-lines metrics stream
//! (`--metrics-jsonl FILE`), both written as the run goes, every
//! `--log-every` steps and at each epoch's end.
//!
//! Both survive a resume: the stream is appended to, and TensorBoard gets
//! a new event file in the same directory whose steps continue the old
//! one's. Each line and each event is flushed whole, so `tail -f` and
//! TensorBoard follow the run, and a killed run leaves readable files.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use oxmera::tensor::no_grad;
use oxmera_nn::{Module, Param};
use oxmera_tensorboard::SummaryWriter;

use super::error::TrainError;
use super::report::EpochMetrics;

/// One logged training step (a line of the stream, as it is serialized).
#[derive(serde::Serialize)]
pub struct StepRecord {
    /// The optimizer step just taken (1-based, continuing across resumes).
    pub step: u64,
    /// The epoch it belongs to (1-based).
    pub epoch: u64,
    /// The batch's mean loss.
    pub loss: f64,
    /// The batch's accuracy.
    pub accuracy: f64,
    /// The learning rate the step used.
    pub lr: f64,
    /// The L2 norm of every parameter's gradient, before the step.
    pub grad_norm: f64,
    /// Seconds the step took (forward, backward, update).
    pub seconds: f64,
}

/// The open outputs; each is optional.
pub struct Watch {
    board: Option<SummaryWriter>,
    stream: Option<(BufWriter<File>, PathBuf)>,
    every: u64,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> TrainError + '_ {
    move |source| TrainError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Watch {
    /// Opens what was asked for; `every` is `--log-every` (at least 1).
    pub fn open(
        tensorboard: Option<&Path>,
        jsonl: Option<&Path>,
        every: u64,
    ) -> Result<Watch, TrainError> {
        if every == 0 {
            return Err(TrainError::Usage("--log-every must be at least 1".into()));
        }
        let board = match tensorboard {
            Some(dir) => Some(SummaryWriter::create(dir).map_err(io_error(dir))?),
            None => None,
        };
        let stream = match jsonl {
            Some(path) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(io_error(parent))?;
                }
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(io_error(path))?;
                Some((BufWriter::new(file), path.to_path_buf()))
            }
            None => None,
        };
        Ok(Watch {
            board,
            stream,
            every,
        })
    }

    /// Whether step `step` (1-based) is logged: every `every`-th, and the
    /// first, so that a short run shows something at once.
    pub fn logs(&self, step: u64) -> bool {
        (self.board.is_some() || self.stream.is_some()) && (step == 1 || step % self.every == 0)
    }

    /// Writes one step's figures.
    pub fn step(&mut self, r: &StepRecord) -> Result<(), TrainError> {
        if let Some(board) = &mut self.board {
            let path = board.path().to_path_buf();
            board
                .add_scalars(
                    &[
                        ("train/loss", r.loss),
                        ("train/accuracy", r.accuracy),
                        ("train/lr", r.lr),
                        ("train/grad_norm", r.grad_norm),
                        ("train/step_seconds", r.seconds),
                    ],
                    r.step,
                )
                .map_err(io_error(&path))?;
        }
        self.line("step", None, r)
    }

    /// Writes an epoch's figures (at the step the epoch ended on) and, to
    /// TensorBoard, a histogram of every parameter.
    pub fn epoch(
        &mut self,
        row: &EpochMetrics,
        step: u64,
        net: &dyn Module,
    ) -> Result<(), TrainError> {
        if let Some(board) = &mut self.board {
            let path = board.path().to_path_buf();
            let mut scalars = vec![
                ("epoch/loss", row.loss),
                ("epoch/train_accuracy", row.train_accuracy),
                ("epoch/test_accuracy", row.test_accuracy),
                ("epoch/seconds", row.seconds),
            ];
            // The held-out loss: a language model's headline figure.
            if let Some(loss) = row.test_loss {
                scalars.push(("epoch/test_loss", loss));
            }
            board.add_scalars(&scalars, step).map_err(io_error(&path))?;
            // The parameters are listed only when TensorBoard is written to.
            for (name, param) in net.named_parameters() {
                let values = param.tensor().to_f64_vec()?;
                board
                    .add_histogram(&format!("params/{name}"), &values, step)
                    .map_err(io_error(&path))?;
            }
        }
        self.line("epoch", Some(step), row)
    }

    /// Appends `{"kind": KIND, ["step": STEP,] ...record's fields}` to the
    /// stream (serde_json writes a non-finite number as `null`, which JSON
    /// lacks).
    fn line(
        &mut self,
        kind: &str,
        step: Option<u64>,
        record: &impl serde::Serialize,
    ) -> Result<(), TrainError> {
        #[derive(serde::Serialize)]
        struct Line<'a, T> {
            kind: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            step: Option<u64>,
            #[serde(flatten)]
            record: &'a T,
        }
        if let Some((file, path)) = &mut self.stream {
            serde_json::to_string(&Line { kind, step, record })
                .map_err(std::io::Error::other)
                .and_then(|line| writeln!(file, "{line}"))
                .and_then(|()| file.flush())
                .map_err(io_error(path))?;
        }
        Ok(())
    }
}

/// The L2 norm of all the gradients of `params` (those that have one).
pub fn grad_norm(params: &[(String, Param)]) -> Result<f64, TrainError> {
    no_grad(|| {
        let mut sum = 0.0;
        for (_, p) in params {
            if let Some(g) = p.grad() {
                sum += g.square()?.sum_all()?.item()?;
            }
        }
        Ok(sum.sqrt())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_json_cannot_hold_become_null() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        let mut watch = Watch::open(None, Some(&path), 1).unwrap();
        let record = StepRecord {
            step: 1,
            epoch: 1,
            loss: f64::NAN,
            accuracy: 0.5,
            lr: f64::INFINITY,
            grad_norm: 0.0,
            seconds: 0.25,
        };
        watch.step(&record).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"kind\":\"step\",\"step\":1,\"epoch\":1,\"loss\":null,\"accuracy\":0.5,\"lr\":null,\"grad_norm\":0.0,\"seconds\":0.25}\n"
        );
    }
}
