//! `oxmera train` killed with SIGKILL inside its writes, at seeded points,
//! and resumed after each kill, ends as a run that was never killed.
//!
//! The kill points are exact, not timed: the `OXMERA_PAUSE_IN_WRITE` seam
//! (`oxmera_checkpoint::PAUSE_ENV`) stops the trainer inside its N-th write
//! of a named file, the temporary file complete and the target not yet
//! replaced, and says so on stderr; the test kills it there. After every
//! kill: each file in `--out` parses, the checkpoint has not gone back an
//! epoch, `--keep-epochs` holds, and the only temporary file is the one
//! that was being written. The next run removes it, resumes from the
//! checkpoint, and the last run's figures and weights are the bits of the
//! unkilled run's. Three seeds of six kills each, runs of a few epochs of
//! the moons: seconds.
//!
//! Longer: `OXMERA_KILL_SEEDS=100 cargo test -p oxmera-cli --test kill`.

#![cfg(unix)]

mod training;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use oxmera::Device;
use oxmera::checkpoint::{PAUSE_ENV, PAUSED_MESSAGE};
use training::{figures, metrics, model_bits, succeed};

const EPOCHS: u64 = 4;
const KEEP: usize = 2;

/// How a run under the seam ended.
enum Ending {
    /// Stopped inside the write of this file, then killed.
    Killed(String),
    /// Ran to its end (the write it was to stop in never came).
    Finished,
}

/// Runs `oxmera train` into `out` (resuming from its checkpoint when there
/// is one), stopping inside the `n`-th write of `file` when `stop` is
/// `Some((file, n))`.
fn run_until_paused(args: &[&str], out: &Path, stop: Option<(&str, u64)>) -> Ending {
    let checkpoint = out.join("checkpoint.safetensors");
    let mut command = Command::new(env!("CARGO_BIN_EXE_oxmera"));
    command.arg("train").args(args).arg("--out").arg(out);
    command.arg("--quiet");
    if checkpoint.exists() {
        command.arg("--resume").arg(&checkpoint);
    }
    if let Some((file, n)) = stop {
        command.env(PAUSE_ENV, format!("{file}:{n}"));
    }
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the oxmera binary runs");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut said = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix(PAUSED_MESSAGE) {
                let _ = tx.send(Some(rest.to_string()));
                return;
            }
            said.push_str(&line);
            said.push('\n');
        }
        let _ = tx.send(None);
        eprint!("{said}");
    });
    // Only a watchdog: a run of a few epochs takes about a second.
    match rx.recv_timeout(Duration::from_secs(600)) {
        Ok(Some(paused)) => {
            child.kill().expect("SIGKILL");
            child.wait().unwrap();
            Ending::Killed(paused)
        }
        Ok(None) => {
            let status = child.wait().unwrap();
            assert!(status.success(), "a run under the seam failed: {status}");
            Ending::Finished
        }
        Err(_) => {
            let _ = child.kill();
            panic!("oxmera train neither paused nor finished in 10 minutes");
        }
    }
}

/// The epoch count a checkpoint holds.
fn epoch_of(path: &Path) -> u64 {
    oxmera::checkpoint::load(path, Device::Reference)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .metadata_value(oxmera::checkpoint::EPOCH_KEY)
        .unwrap()
}

/// Checks every file a killed run left: returns the checkpoint's epoch.
fn check_what_a_kill_left(out: &Path, paused_in: &str) -> u64 {
    let mut temps = Vec::new();
    let mut epoch_files = 0;
    for entry in std::fs::read_dir(out).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let path = out.join(&name);
        if name.starts_with('.') {
            temps.push(name);
        } else if name.ends_with(".safetensors") {
            epoch_of(&path);
            epoch_files += usize::from(name.starts_with("epoch-"));
        } else if name == "metrics.json" {
            metrics(out);
        } else if name == "curves.png" {
            let png = std::fs::read(&path).unwrap();
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "curves.png head");
            assert!(png.ends_with(b"IEND\xae\x42\x60\x82"), "curves.png is cut");
        } else {
            panic!("an unexpected file in --out: {name}");
        }
    }
    assert!(epoch_files <= KEEP, "{epoch_files} epoch checkpoints kept");
    // The write that was stopped left its temporary file, and only it.
    let stem = paused_in.split(' ').next().unwrap();
    let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s);
    assert!(
        temps.len() == 1 && temps[0].starts_with(&format!(".{stem}")),
        "temporary files after a kill inside {paused_in}: {temps:?}"
    );
    let checkpoint = out.join("checkpoint.safetensors");
    if checkpoint.exists() {
        epoch_of(&checkpoint)
    } else {
        0
    }
}

/// A small deterministic generator (64-bit LCG, Knuth's constants).
struct Seeded(u64);

impl Seeded {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn a_run_killed_inside_its_writes_and_resumed_ends_as_an_unkilled_run() {
    let dir = tempfile::tempdir().unwrap();
    let epochs = EPOCHS.to_string();
    let keep = KEEP.to_string();
    let args = [
        "--dataset",
        "moons",
        "--optimizer",
        "adam",
        "--epochs",
        &epochs,
        "--keep-epochs",
        &keep,
    ];
    let whole = dir.path().join("whole");
    succeed(&args, &whole);
    let seeds: u64 = std::env::var("OXMERA_KILL_SEEDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    for seed in 0..seeds {
        let out = dir.path().join(format!("killed-{seed}"));
        std::fs::create_dir(&out).unwrap();
        let kills = kill_and_resume(&args, &out, 20261205 + seed, 6);
        eprintln!("seed {seed}: {}", kills.join(", "));
        let hidden: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(hidden.is_empty(), "temporary files left behind: {hidden:?}");
        assert_eq!(figures(&metrics(&out)), figures(&metrics(&whole)));
        assert_eq!(model_bits(&out), model_bits(&whole));
    }
}

/// Trains into `out`, killing the run `rounds` times inside a seeded
/// choice of write and resuming it each time, then lets it finish;
/// returns the writes it was killed in.
fn kill_and_resume(args: &[&str], out: &Path, seed: u64, rounds: u64) -> Vec<String> {
    let mut rng = Seeded(seed);
    let (mut kills, mut last_epoch) = (Vec::new(), 0u64);
    for _ in 0..rounds {
        // Where to stop: one of the three files every epoch writes, or
        // the epoch checkpoint the run writes next, always a write this
        // run will make. A run resumed at its last epoch writes each of
        // the three once, and no epoch checkpoint (its own is there).
        let left = EPOCHS.saturating_sub(last_epoch).max(1);
        let nth = 1 + rng.below(left.min(2));
        let choices = if last_epoch < EPOCHS { 4 } else { 3 };
        let (file, n) = match rng.below(choices) {
            0 => ("checkpoint.safetensors".to_string(), nth),
            1 => ("metrics.json".to_string(), nth),
            2 => ("curves.png".to_string(), nth),
            _ => (format!("epoch-{}.safetensors", last_epoch + 1), 1),
        };
        let Ending::Killed(paused_in) = run_until_paused(args, out, Some((&file, n))) else {
            panic!("the run finished without making write {n} of {file}");
        };
        let epoch = check_what_a_kill_left(out, &paused_in);
        assert!(
            epoch >= last_epoch,
            "the checkpoint went back from epoch {last_epoch} to {epoch}"
        );
        kills.push(format!("{paused_in} at epoch {epoch}"));
        last_epoch = epoch;
    }
    assert!(matches!(
        run_until_paused(args, out, None),
        Ending::Finished
    ));
    kills
}
