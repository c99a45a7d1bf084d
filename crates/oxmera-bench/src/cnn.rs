//! The CNN's training epoch on the digits, against the same model in
//! PyTorch in the same run.
//!
//! Both sides train `oxmera train --model cnn`'s network
//! ([`CnnConfig::build`]; `peers/peer.py` writes the same layers in
//! `torch.nn`) on the same samples — the digits' training part as the CLI
//! splits it (its seed 0) — in batches of [`CNN_BATCH`], with SGD at
//! rate 0.1 and momentum 0.9 (the CLI's defaults for the classifiers),
//! cross-entropy loss, and the loss read back every step as the CLI's
//! loop does. The batches are the training part in order on both sides:
//! the CLI's per-epoch shuffle costs microseconds, and leaving it out
//! keeps the two sides on the same batches without sharing an RNG. The
//! cosine schedule changes the rate, not the work, and is left out too.
//!
//! The samples reach PyTorch through two files the bench writes before
//! starting Python (`OXMERA_BENCH_DIGITS` names them): features as
//! little-endian `f32`, labels as little-endian `i64`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use oxmera_core::{DType, Device, Error, Result};
use oxmera_data::Dataset;
use oxmera_nn::loss::{CrossEntropyOptions, cross_entropy};
use oxmera_nn::{Module, Sequential};
use oxmera_optim::{Optimizer, Sgd, SgdConfig};
use oxmera_tensor::{Generator, Tensor};

use crate::conv::{CNN_BATCH, DIGITS};
use crate::measure::Contender;
use crate::{PyPeers, Report, Sizes, Work, keep, measure_and_record, python_contender};

/// The learning rate and momentum `oxmera train` gives SGD.
const LR: f64 = 0.1;
const MOMENTUM: f64 = 0.9;
/// The CLI's held-out share and default seed.
const TEST_FRACTION: f64 = 0.2;
const SEED: u64 = 0;

/// The training samples, row-major `[n, 1, 8, 8]` and `[n]`.
pub(crate) struct Samples {
    pub x: Vec<f32>,
    pub y: Vec<i64>,
}

impl Samples {
    /// The digits' training part as `oxmera train` splits it, cut to the
    /// first `limit` samples (quick mode).
    pub fn digits(limit: Option<usize>) -> Result<Samples> {
        let data = oxmera_data::digits().map_err(data_error)?;
        let split = oxmera_data::split(data.len(), TEST_FRACTION, SEED).map_err(data_error)?;
        let features = data.features();
        let labels = data
            .labels()
            .ok_or_else(|| Error::invalid("bench", "digits", "the digits have no labels"))?;
        let per = DIGITS.channels * DIGITS.height * DIGITS.width;
        let take = limit.unwrap_or(usize::MAX).min(split.train.len());
        let order = &split.train[..take];
        Ok(Samples {
            x: order
                .iter()
                .flat_map(|&i| &features[i * per..(i + 1) * per])
                .copied()
                .collect(),
            y: order.iter().map(|&i| labels[i]).collect(),
        })
    }

    fn len(&self) -> usize {
        self.y.len()
    }

    /// Writes `dir/digits.f32` and `dir/digits.i64`; returns their common
    /// path without the extension (what `OXMERA_BENCH_DIGITS` names).
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let stem = dir.join("digits");
        let x: Vec<u8> = self.x.iter().flat_map(|v| v.to_le_bytes()).collect();
        let y: Vec<u8> = self.y.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(stem.with_extension("f32"), x)?;
        std::fs::write(stem.with_extension("i64"), y)?;
        Ok(stem)
    }
}

fn data_error(e: oxmera_data::DataError) -> Error {
    Error::invalid("bench", "digits", e.to_string())
}

/// The network, its optimizer, and the samples in tensors per batch.
struct Trainer<'a> {
    net: Sequential,
    opt: Sgd,
    samples: &'a Samples,
}

impl Trainer<'_> {
    fn new(samples: &Samples) -> Result<Trainer<'_>> {
        let net = DIGITS.build(&mut Generator::new(SEED), DType::F32, Device::Cpu)?;
        let opt = Sgd::new(
            net.named_parameters(),
            SgdConfig {
                lr: LR,
                momentum: MOMENTUM,
                ..SgdConfig::default()
            },
        )?;
        Ok(Trainer { net, opt, samples })
    }

    /// One pass over the samples; the mean loss.
    fn epoch(&mut self) -> Result<f64> {
        let per = DIGITS.channels * DIGITS.height * DIGITS.width;
        let n = self.samples.len();
        let opts = CrossEntropyOptions::default();
        let (mut sum, mut steps) = (0.0, 0);
        for start in (0..n).step_by(CNN_BATCH) {
            let b = CNN_BATCH.min(n - start);
            let shape = [b, DIGITS.channels, DIGITS.height, DIGITS.width];
            let x = Tensor::from_slice(
                &self.samples.x[start * per..(start + b) * per],
                shape,
                Device::Cpu,
            )?;
            let y = Tensor::from_slice(&self.samples.y[start..start + b], [b], Device::Cpu)?;
            let loss = cross_entropy(&self.net.forward(&x)?, &y, &opts)?;
            sum += loss.item()?;
            steps += 1;
            loss.backward()?;
            self.opt.step()?;
            self.opt.zero_grad();
        }
        Ok(sum / steps.max(1) as f64)
    }
}

/// The epoch row.
pub(crate) fn row(
    report: &mut Report,
    sizes: &Sizes,
    py: &PyPeers<'_>,
    samples: &Samples,
) -> Result<()> {
    let mut trainer = Trainer::new(samples)?;
    // The loss is checked outside the timing: an epoch that diverged is
    // reported as oxmera's failure, not timed.
    let mut cs = vec![Contender::reporting("oxmera", move || {
        let start = Instant::now();
        // On the backend's worker, as `oxmera train` runs its epochs.
        let loss = keep(oxmera_cpu::on_pool(|| trainer.epoch()))?;
        let seconds = start.elapsed().as_secs_f64();
        if loss.is_finite() {
            Ok(seconds)
        } else {
            Err(format!("the CNN diverged: mean loss {loss}"))
        }
    })];
    if py.has("torch") {
        let c = DIGITS;
        let args = vec![
            CNN_BATCH,
            c.channels,
            c.height,
            c.width,
            c.classes,
            samples.len(),
        ];
        cs.push(python_contender(py.process, "torch", "cnn_epoch", args));
    }
    let name = format!("cnn_epoch_digits_{}_b{CNN_BATCH}", samples.len());
    measure_and_record(report, sizes.plan, &name, Work::Time, cs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_the_cli_training_part_and_round_trip_through_files() {
        let all = Samples::digits(None).unwrap();
        // 1797 digits, 20% (359) held out.
        assert_eq!(all.len(), 1438);
        assert_eq!(all.x.len(), 1438 * 64);
        let few = Samples::digits(Some(40)).unwrap();
        assert_eq!(few.y, all.y[..40]);
        let dir = std::env::temp_dir().join(format!("oxmera-bench-cnn-{}", std::process::id()));
        let stem = few.write(&dir).unwrap();
        let x = std::fs::read(stem.with_extension("f32")).unwrap();
        let y = std::fs::read(stem.with_extension("i64")).unwrap();
        assert_eq!(x.len(), 40 * 64 * 4);
        assert_eq!(y[..8], few.y[0].to_le_bytes());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_epoch_trains() {
        let samples = Samples::digits(Some(96)).unwrap();
        let mut t = Trainer::new(&samples).unwrap();
        let first = t.epoch().unwrap();
        let mut last = first;
        for _ in 0..4 {
            last = t.epoch().unwrap();
        }
        assert!(last < first, "loss {first} -> {last}");
    }
}
