//! The training loop: epochs of steps, evaluation, checkpoints, resuming.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use oxmera::{Device, Generator};
use oxmera_checkpoint::Checkpoint;
use oxmera_data::Dataset;
use oxmera_nn::{Module, Param};
use oxmera_optim::{
    ConstantLr, CosineAnnealing, LrSchedule, Optimizer, apply_schedule, clip_grad_norm,
};

use super::error::TrainError;
use super::report::{EpochMetrics, Metrics, RunConfig, Table};
use super::task::{self, Classes, Task, Text};
use super::watch::{StepRecord, Watch, grad_norm};
use super::{ScheduleKind, TrainArgs, data, model, plot};

/// The name of the checkpoint file in the output directory: the state
/// after the latest finished epoch. Each epoch's state is also kept, as
/// `epoch-N.safetensors`, so a run can be resumed from any epoch.
pub const CHECKPOINT_FILE: &str = "checkpoint.safetensors";
/// Metadata keys this loop adds to a checkpoint.
pub(super) const CONFIG_KEY: &str = "train_config";
const HISTORY_KEY: &str = "train_history";
/// Above this many epochs the run warns that it will not end soon.
const MANY_EPOCHS: u64 = 100_000;
/// The gradient norm a language model's step is clipped to: one unlucky
/// batch of text can produce a gradient many times the usual size, and a
/// transformer trained without a bound on it is known to spike.
const LM_CLIP_NORM: f64 = 1.0;

/// Trains as `args` say, on `device`; returns the figures of every epoch.
pub fn train(args: &TrainArgs, device: Device) -> Result<Metrics, TrainError> {
    if args.batch_size == 0 {
        return Err(TrainError::Usage("--batch-size must be at least 1".into()));
    }
    if args.epochs() == 0 {
        return Err(TrainError::Usage(
            "--epochs must be at least 1 (it is the total, counting the epochs of a --resume'd run)"
                .into(),
        ));
    }
    if args.epochs() > MANY_EPOCHS {
        eprintln!(
            "warning: --epochs {} is more than anyone waits for; Ctrl-C stops the run, and the \
             checkpoint of the last finished epoch is kept",
            args.epochs()
        );
    }
    if args.steps_per_epoch.is_some() && !args.model.is_language_model() {
        return Err(TrainError::Usage(
            "--steps-per-epoch is for --model transformer; a classifier's epoch is one pass \
             over its training set"
                .into(),
        ));
    }
    if args.steps_per_epoch == Some(0) {
        return Err(TrainError::Usage(
            "--steps-per-epoch must be at least 1".into(),
        ));
    }
    if !(args.lr().is_finite() && args.lr() > 0.0) {
        return Err(TrainError::Usage(format!(
            "--lr must be a positive number, got {}",
            args.lr()
        )));
    }
    let started = Instant::now();
    let config = RunConfig::from_args(args, device);
    let mut rng = Generator::new(args.seed);
    if args.model.is_language_model() {
        let text = data::load_text(args)?;
        let shape = model::transformer_config(text.vocab.len());
        let net = model::build(
            args.model,
            &[shape.context],
            text.vocab.len(),
            &mut rng,
            device,
        )?;
        let classes = text.vocab.len();
        let task = Text {
            split: text.split,
            vocab: text.vocab,
            model_config: shape.to_line(),
            context: shape.context,
            batch: args.batch_size,
            steps: args.steps_per_epoch(),
            seed: args.seed,
            device,
        };
        return run(
            args,
            device,
            config,
            text.description,
            net,
            &task,
            classes,
            started,
        );
    }
    let parts = data::load(args)?;
    let net = model::build(
        args.model,
        &parts.feature_shape,
        parts.num_classes,
        &mut rng,
        device,
    )?;
    if args.batch_size > parts.train.len() && !args.quiet {
        eprintln!(
            "note: --batch-size {} is larger than the {} training samples: each epoch is one \
             batch of {}",
            args.batch_size,
            parts.train.len(),
            parts.train.len()
        );
    }
    let task = Classes::new(
        &parts.train,
        &parts.test,
        args.batch_size,
        args.seed,
        device,
    )?;
    let description = parts.description.clone();
    run(
        args,
        device,
        config,
        description,
        net,
        &task,
        parts.num_classes,
        started,
    )
}

/// The loop itself, the same for every task: epochs of steps, an
/// evaluation and the checkpoints after each.
#[allow(clippy::too_many_arguments)]
fn run(
    args: &TrainArgs,
    device: Device,
    config: RunConfig,
    description: String,
    mut net: Box<dyn Module>,
    task: &dyn Task,
    classes: usize,
    started: Instant,
) -> Result<Metrics, TrainError> {
    let mut optimizer = model::optimizer(args, net.named_parameters())?;
    // What the language model's steps clip (the same slots the optimizer
    // holds).
    let clipped: Vec<Param> = if args.model.is_language_model() {
        optimizer.params().iter().map(|(_, p)| p.clone()).collect()
    } else {
        Vec::new()
    };
    let extra = task.metadata();
    let mut metrics = Metrics::new(config.clone(), description, net.num_parameters());
    let mut step: u64 = 0;
    if let Some(path) = &args.resume {
        let ckpt = oxmera_checkpoint::load(path, device)?;
        restore(
            &ckpt,
            path,
            &config,
            net.as_ref(),
            optimizer.as_mut(),
            &mut metrics,
        )?;
        step = ckpt.metadata_value(oxmera_checkpoint::STEP_KEY)?;
    }
    let first_epoch = metrics.epochs.len() as u64;
    if args.resume.is_some() && first_epoch > args.epochs() {
        return Err(TrainError::Usage(format!(
            "the checkpoint has {first_epoch} epochs already; --epochs is the total, so \
             pass more than {first_epoch} to train on"
        )));
    }
    // A checkpoint of the last epoch: the run it came from was killed
    // while writing its last outputs (or is simply being repeated).
    // Rerunning its command completes them rather than refusing, so that
    // the same command, run again after a kill, always finishes the run.
    let finished = args.resume.is_some() && first_epoch == args.epochs();
    if finished && !args.quiet {
        eprintln!(
            "note: the checkpoint already holds all {first_epoch} epochs: nothing is left to \
             train; writing the run's outputs to {}",
            args.out.display()
        );
    }
    std::fs::create_dir_all(&args.out).map_err(|source| TrainError::Io {
        path: args.out.clone(),
        source,
    })?;
    // A run killed mid-write left its temporary files here; its outputs
    // themselves are whole (every write is a rename).
    oxmera_checkpoint::remove_stale_temps(&args.out).map_err(|source| TrainError::Io {
        path: args.out.clone(),
        source,
    })?;
    let ckpt_path = args.out.join(CHECKPOINT_FILE);
    // The resumed state is its epoch's; a run killed inside the write of
    // that epoch's own file left none, so it is written now.
    if args.resume.is_some() && first_epoch > 0 && args.keep_epochs > 0 {
        let epoch_path = args.out.join(epoch_file(first_epoch));
        if !epoch_path.exists() {
            save(
                &epoch_path,
                net.as_ref(),
                optimizer.as_ref(),
                step,
                &metrics,
                &extra,
            )?;
            prune_epoch_files(&args.out, first_epoch, args.keep_epochs);
        }
    }
    let steps_per_epoch = task.steps_per_epoch();
    let schedule = schedule(args, steps_per_epoch)?;
    if let Some(path) = &args.resume {
        check_steps(path, step, first_epoch, steps_per_epoch as u64)?;
    }

    let mut watch = Watch::open(
        args.tensorboard.as_deref(),
        args.metrics_jsonl.as_deref(),
        args.log_every,
    )?;
    let table = Table::new(args.quiet, args.model.is_language_model());
    // The loss of this run's first step, and whether the run was already
    // told it is not learning (once is enough).
    let mut first_loss = None;
    let mut warned_stuck = false;
    let epochs = args.epochs();
    table.header(&metrics, first_epoch, epochs);
    for epoch in first_epoch..epochs {
        let epoch_start = Instant::now();
        net.train();
        let bar = progress_bar(args.quiet, steps_per_epoch, epoch, epochs);
        let (mut loss_sum, mut seen) = (0.0, 0usize);
        for (b, batch) in task.epoch(epoch, step).enumerate() {
            let batch = batch?;
            let step_start = Instant::now();
            let logits = net.forward(&batch.x)?;
            let loss = task::loss(&logits, &batch.y)?;
            let value = loss.item()?;
            if !value.is_finite() {
                bar.abandon();
                return Err(TrainError::Diverged(diverged_message(
                    value,
                    step,
                    epoch,
                    b,
                    last_good(&ckpt_path, first_epoch, &metrics, args.resume.as_deref()),
                )));
            }
            first_loss.get_or_insert(value);
            loss.backward()?;
            // The rate is a function of the optimizer's step count, which
            // a checkpoint restores, so a resumed run continues the curve.
            apply_schedule(schedule.as_ref(), optimizer.as_mut());
            // Figures for a logged step are read before the update: the
            // gradient's norm is gone after zero_grad.
            let logged = if watch.logs(step + 1) {
                let batch_accuracy = task::hits(&logits.detach(), &batch.y)?;
                Some((batch_accuracy, grad_norm(optimizer.params())?))
            } else {
                None
            };
            if !clipped.is_empty() {
                clip_grad_norm(&clipped, LM_CLIP_NORM)?;
            }
            let lr = optimizer.lr();
            optimizer.step()?;
            optimizer.zero_grad();
            step += 1;
            if let Some((batch_accuracy, norm)) = logged {
                watch.step(&StepRecord {
                    step,
                    epoch: epoch + 1,
                    loss: value,
                    accuracy: batch_accuracy,
                    lr,
                    grad_norm: norm,
                    seconds: step_start.elapsed().as_secs_f64(),
                })?;
            }
            let n = batch.samples;
            loss_sum += value * n as f64;
            seen += n;
            let rate = seen as f64 / epoch_start.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "loss {:.4} · {rate:.0} samples/s",
                loss_sum / seen as f64
            ));
            bar.inc(1);
        }
        bar.finish_and_clear();
        let train_seconds = epoch_start.elapsed().as_secs_f64();
        net.eval();
        let train_score = task.score(net.as_ref(), true)?;
        let test_score = task.score(net.as_ref(), false)?;
        let row = EpochMetrics {
            epoch: epoch + 1,
            loss: loss_sum / seen.max(1) as f64,
            train_accuracy: train_score.accuracy,
            test_accuracy: test_score.accuracy,
            test_loss: Some(test_score.loss),
            seconds: epoch_start.elapsed().as_secs_f64(),
            samples_per_second: seen as f64 / train_seconds.max(1e-9),
        };
        table.row(&row);
        if !warned_stuck && let Some(warning) = stuck(&row, first_loss, classes) {
            eprintln!("{warning}");
            warned_stuck = true;
        }
        watch.epoch(&row, step, net.as_ref())?;
        metrics.push(row);
        save(
            &ckpt_path,
            net.as_ref(),
            optimizer.as_ref(),
            step,
            &metrics,
            &extra,
        )?;
        if args.keep_epochs > 0 {
            let epoch_path = args.out.join(epoch_file(epoch + 1));
            save(
                &epoch_path,
                net.as_ref(),
                optimizer.as_ref(),
                step,
                &metrics,
                &extra,
            )?;
        }
        prune_epoch_files(&args.out, epoch + 1, args.keep_epochs);
        metrics.total_seconds += epoch_start.elapsed().as_secs_f64();
        write_outputs(&args.out, &metrics)?;
    }
    if finished {
        save(
            &ckpt_path,
            net.as_ref(),
            optimizer.as_ref(),
            step,
            &metrics,
            &extra,
        )?;
        write_outputs(&args.out, &metrics)?;
    }
    table.summary(&metrics, &args.out, started.elapsed().as_secs_f64());
    Ok(metrics)
}

/// Removes the epoch checkpoints in `out` that `--keep-epochs keep` no
/// longer covers once `newest` is written: every one, not just the one
/// that fell out of the window this epoch, so that a run killed between
/// writing an epoch's file and pruning (or resumed with a smaller
/// `--keep-epochs`) leaves no stragglers. Other files are untouched, and a
/// file that cannot be removed is left (a checkpoint too many, not an
/// error that stops training).
fn prune_epoch_files(out: &Path, newest: u64, keep: u64) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let epoch = name
            .strip_prefix("epoch-")
            .and_then(|n| n.strip_suffix(".safetensors"))
            .and_then(|n| n.parse::<u64>().ok());
        // `epoch_file` of the number gives the name back: "epoch-007..."
        // or "epoch-+7..." are someone else's files.
        if let Some(epoch) = epoch
            && epoch_file(epoch) == name
            && epoch.saturating_add(keep) <= newest
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The file name of the checkpoint written after `epoch` (1-based).
pub fn epoch_file(epoch: u64) -> String {
    format!("epoch-{epoch}.safetensors")
}

/// The learning-rate schedule `args` ask for, over `batches` steps per
/// epoch.
fn schedule(args: &TrainArgs, batches: usize) -> Result<Box<dyn LrSchedule>, TrainError> {
    Ok(match args.schedule {
        ScheduleKind::Constant => Box::new(ConstantLr::new(args.lr())?),
        ScheduleKind::Cosine => {
            let steps = (args.epochs() * batches as u64).max(1);
            Box::new(CosineAnnealing::new(args.lr(), steps, 0.0)?)
        }
    })
}

fn progress_bar(quiet: bool, batches: usize, epoch: u64, epochs: u64) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(batches as u64);
    let style = ProgressStyle::with_template(
        "epoch {prefix} [{bar:30}] {pos}/{len} batches · {msg} · eta {eta}",
    )
    .expect("the template is valid")
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(format!("{}/{epochs}", epoch + 1));
    bar
}

/// A warning when an epoch shows a run that is not learning though its
/// losses are finite (a learning rate far too large, typically): the
/// epoch's mean loss is not below the run's first loss, or, from the
/// second epoch on, the test accuracy is no better than chance.
fn stuck(row: &EpochMetrics, first_loss: Option<f64>, classes: usize) -> Option<String> {
    let chance = 1.0 / classes.max(1) as f64;
    let no_lower = first_loss.is_some_and(|first| row.loss >= first);
    let at_chance = row.epoch >= 2 && row.test_accuracy <= 1.05 * chance;
    (no_lower || at_chance).then(|| {
        format!(
            "warning: after epoch {} the run is not learning: mean loss {:.4} (first step {}), \
             test accuracy {:.2}% (chance {:.2}%). Try a smaller --lr.",
            row.epoch,
            row.loss,
            first_loss.map_or("n/a".into(), |f| format!("{f:.4}")),
            100.0 * row.test_accuracy,
            100.0 * chance
        )
    })
}

/// Where the state after the last finished epoch is, if anywhere: this
/// run's checkpoint once it has finished an epoch, else the checkpoint it
/// resumed from. (A resumed run writing to a fresh `--out` has no
/// checkpoint there until its first epoch ends.)
fn last_good<'a>(
    ckpt_path: &'a Path,
    first_epoch: u64,
    metrics: &Metrics,
    resumed_from: Option<&'a Path>,
) -> Option<(u64, &'a Path)> {
    let finished = metrics.epochs.len() as u64;
    if finished > first_epoch && ckpt_path.is_file() {
        Some((finished, ckpt_path))
    } else {
        resumed_from
            .filter(|p| p.is_file())
            .map(|p| (first_epoch, p))
    }
}

fn diverged_message(
    value: f64,
    step: u64,
    epoch: u64,
    batch: usize,
    last_good: Option<(u64, &Path)>,
) -> String {
    let kept = match last_good {
        Some((epochs, path)) => format!(
            "the last good checkpoint (after epoch {epochs}) is {}",
            path.display()
        ),
        None => "no epoch had finished, so no checkpoint was written".to_string(),
    };
    format!(
        "training stopped: the loss became {value} at step {} (epoch {}, batch {}); {kept}. \
         Try a smaller --lr.",
        step + 1,
        epoch + 1,
        batch + 1
    )
}

fn save(
    path: &Path,
    net: &dyn Module,
    optimizer: &dyn Optimizer,
    step: u64,
    metrics: &Metrics,
    extra: &BTreeMap<String, String>,
) -> Result<(), TrainError> {
    let mut tensors =
        oxmera_checkpoint::prefixed(oxmera_checkpoint::MODEL_PREFIX, &net.state_dict());
    tensors.extend(oxmera_checkpoint::prefixed(
        oxmera_checkpoint::OPTIM_PREFIX,
        &optimizer.state_dict()?,
    ));
    let mut metadata = extra.clone();
    metadata.extend([
        (oxmera_checkpoint::STEP_KEY.to_string(), step.to_string()),
        (
            oxmera_checkpoint::EPOCH_KEY.to_string(),
            metrics.epochs.len().to_string(),
        ),
        (CONFIG_KEY.to_string(), metrics.config.fingerprint()),
        (HISTORY_KEY.to_string(), metrics.history_json()),
    ]);
    oxmera_checkpoint::save(path, &tensors, &metadata)?;
    Ok(())
}

/// Loads model and optimizer state and the figures of the finished epochs
/// from `ckpt`, after checking it was written by a run with the same
/// settings (anything else could not continue bit-identically).
fn restore(
    ckpt: &Checkpoint,
    path: &Path,
    config: &super::report::RunConfig,
    net: &dyn Module,
    optimizer: &mut dyn Optimizer,
    metrics: &mut Metrics,
) -> Result<(), TrainError> {
    let saved: String = ckpt.metadata_value(CONFIG_KEY)?;
    // A checkpoint whose weights hold NaN or infinity would diverge at the
    // first step and leave nothing good behind: refuse it, naming the
    // tensor.
    for (name, t) in ckpt.with_prefix(oxmera_checkpoint::MODEL_PREFIX) {
        if t.dtype().is_float() && t.to_f64_vec()?.iter().any(|v| !v.is_finite()) {
            return Err(TrainError::Usage(format!(
                "{}: the model's {name} holds non-finite values (NaN or infinity); a run \
                 resumed from it cannot train. Resume from an earlier epoch's checkpoint.",
                path.display()
            )));
        }
    }
    if saved != config.fingerprint() {
        return Err(TrainError::Usage(format!(
            "{} was written by a run with other settings ({saved}); this run has {}. \
             Resume with the same --model, --dataset, --batch-size, --lr, --optimizer and --seed \
             (and --steps-per-epoch for the transformer).",
            path.display(),
            config.fingerprint()
        )));
    }
    net.load_state_dict(&ckpt.with_prefix(oxmera_checkpoint::MODEL_PREFIX))?;
    optimizer.load_state_dict(&ckpt.with_prefix(oxmera_checkpoint::OPTIM_PREFIX))?;
    let history: String = ckpt.metadata_value(HISTORY_KEY)?;
    metrics.restore_history(&history).map_err(|e| {
        TrainError::Usage(format!(
            "{}: unreadable training history: {e}",
            path.display()
        ))
    })?;
    // What the pieces of a checkpoint say about each other must agree; a
    // disagreement is damage (or a hand-edited file), named by its key.
    let bad = |key: &str, what: String| {
        TrainError::Usage(format!(
            "{}: {key:?} {what}; the checkpoint is inconsistent, resume from another",
            path.display()
        ))
    };
    let epochs: u64 = ckpt.metadata_value(oxmera_checkpoint::EPOCH_KEY)?;
    let numbered = metrics
        .epochs
        .iter()
        .enumerate()
        .all(|(i, e)| e.epoch == i as u64 + 1);
    if metrics.epochs.len() as u64 != epochs || !numbered {
        return Err(bad(
            HISTORY_KEY,
            format!(
                "holds {} epochs (numbered {}), but {:?} says {epochs}",
                metrics.epochs.len(),
                if numbered { "1 on" } else { "out of order" },
                oxmera_checkpoint::EPOCH_KEY
            ),
        ));
    }
    // Every parameter of these networks has a gradient at every step, so
    // after a finished epoch each has optimizer state; one without it would
    // silently start its moments afresh.
    if epochs > 0 {
        for (name, _) in optimizer.params() {
            let prefix = format!("{}{name}.", oxmera_checkpoint::OPTIM_PREFIX);
            if !ckpt.tensors.keys().any(|k| k.starts_with(&prefix)) {
                return Err(bad(
                    &prefix[..prefix.len() - 1],
                    format!("has no optimizer state after {epochs} epochs of training"),
                ));
            }
        }
    }
    Ok(())
}

/// `Err` unless a resumed run's step count is what its finished epochs of
/// `per_epoch` steps add up to (a step count of `i64::MAX` would put the
/// learning-rate schedule past its end and the logs out of reach).
fn check_steps(path: &Path, step: u64, epochs: u64, per_epoch: u64) -> Result<(), TrainError> {
    if epochs.checked_mul(per_epoch) == Some(step) {
        return Ok(());
    }
    Err(TrainError::Usage(format!(
        "{}: {:?} is {step}, but {epochs} epochs of {per_epoch} steps make {}; the \
         checkpoint is inconsistent, resume from another",
        path.display(),
        oxmera_checkpoint::STEP_KEY,
        epochs.saturating_mul(per_epoch)
    )))
}

/// Writes `metrics.json` and `curves.png`, each whole or not at all (a
/// temporary file renamed over the old one), like the checkpoint.
fn write_outputs(out: &Path, metrics: &Metrics) -> Result<(), TrainError> {
    oxmera_checkpoint::write_file_atomic(&out.join("metrics.json"), metrics.to_json().as_bytes())?;
    oxmera_checkpoint::write_via_temp(&out.join("curves.png"), |temp| {
        plot::curves(temp, metrics).map_err(std::io::Error::other)
    })?;
    Ok(())
}
