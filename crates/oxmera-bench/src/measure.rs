//! Interleaved timing and medians.
//!
//! Contenders in one benchmark are run in rounds: each round runs every
//! contender once (a few repetitions for the fast ones), starting from a
//! different contender each round. A slow drift of the machine — another
//! process, the clock stepping down under heat — then lands on all of them
//! alike instead of on whichever ran last, and the median over rounds
//! ignores the odd disturbed round.
//!
//! Each turn starts with untimed runs for as long as a timed turn lasts
//! (at least one run). The first run after another contender finds the
//! caches full of that contender's data, and after a settle pause (see
//! [`Contender::settle`]) the cores have idled for a quarter of a second:
//! on this project's 2-vCPU test machine an MLP step that takes 3.0 ms
//! back to back took 5–7 ms for the next 30–50 ms of work after such a
//! pause, until the cores were running at speed again. Rotation does not
//! spread that cost, because the pause belongs to one contender and so
//! always falls before the same next one. Timed cold, oxmera (which runs
//! after PyTorch's pause) measured 0.82× the `gemm` crate at 1024 instead
//! of 0.93×, and an MLP step of 5.3 ms instead of 3.1 ms.

use std::time::Instant;

/// One thing being measured: a name and a closure that performs one run
/// and returns how long it took, in seconds (so that a peer in another
/// process can report its own, start-up-free time).
pub struct Contender<'a> {
    /// Who runs: `oxmera`, `reference`, `gemm`, `numpy`, ….
    pub name: String,
    /// One run; an error means the contender cannot run here.
    pub run: Box<dyn FnMut() -> Result<f64, String> + 'a>,
    /// Seconds to leave the machine idle after this contender's turn in
    /// a round, for a library whose threads keep the cores busy after it
    /// returns (so that the next contender is not timed against them).
    pub settle: f64,
}

impl<'a> Contender<'a> {
    /// A contender timed here, around `f`.
    pub fn timed(name: &str, mut f: impl FnMut() + 'a) -> Self {
        Contender {
            name: name.to_string(),
            run: Box::new(move || {
                let start = Instant::now();
                f();
                Ok(start.elapsed().as_secs_f64())
            }),
            settle: 0.0,
        }
    }

    /// A contender that reports its own time (or why it cannot run).
    pub fn reporting(name: &str, f: impl FnMut() -> Result<f64, String> + 'a) -> Self {
        Contender {
            name: name.to_string(),
            run: Box::new(f),
            settle: 0.0,
        }
    }

    /// The same contender, followed in each round by `seconds` of idling
    /// (see [`Contender::settle`]).
    pub fn settling(self, seconds: f64) -> Self {
        Contender {
            settle: seconds,
            ..self
        }
    }
}

/// How long to measure.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Rounds; the median is taken over them.
    pub rounds: usize,
    /// Each contender repeats within a round until about this many
    /// seconds have passed (at least once).
    pub round_seconds: f64,
}

/// The median seconds per run of each contender (in the given order), or
/// why it could not run.
pub fn interleave(contenders: &mut [Contender<'_>], plan: Plan) -> Vec<Result<f64, String>> {
    let n = contenders.len();
    // A warm-up run each: first-touch page faults, thread-pool start-up,
    // and the repetition count.
    let mut reps = vec![1usize; n];
    let mut failed: Vec<Option<String>> = vec![None; n];
    for (i, c) in contenders.iter_mut().enumerate() {
        match (c.run)() {
            Ok(t) => reps[i] = ((plan.round_seconds / t.max(1e-9)).ceil() as usize).clamp(1, 1000),
            Err(e) => failed[i] = Some(e),
        }
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); n];
    for round in 0..plan.rounds {
        for j in 0..n {
            let i = (round + j) % n;
            if failed[i].is_some() {
                continue;
            }
            if let Err(e) = warm_up(&mut contenders[i], plan.round_seconds) {
                failed[i] = Some(e);
                continue;
            }
            let mut total = 0.0;
            for _ in 0..reps[i] {
                match (contenders[i].run)() {
                    Ok(t) => total += t,
                    Err(e) => {
                        failed[i] = Some(e);
                        break;
                    }
                }
            }
            if failed[i].is_none() {
                samples[i].push(total / reps[i] as f64);
            }
            if contenders[i].settle > 0.0 {
                std::thread::sleep(std::time::Duration::from_secs_f64(contenders[i].settle));
            }
        }
    }
    (0..n)
        .map(|i| match failed[i].take() {
            Some(e) => Err(e),
            None => Ok(median(&mut samples[i])),
        })
        .collect()
}

/// Untimed runs of `c` until `seconds` have passed (at least one).
fn warm_up(c: &mut Contender<'_>, seconds: f64) -> Result<(), String> {
    let start = Instant::now();
    loop {
        (c.run)()?;
        if start.elapsed().as_secs_f64() >= seconds {
            return Ok(());
        }
    }
}

/// The median (the mean of the middle two for an even count).
///
/// ```
/// assert_eq!(oxmera_bench::measure::median(&mut [3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(oxmera_bench::measure::median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
/// ```
///
/// # Panics
/// On an empty slice.
pub fn median(v: &mut [f64]) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contender_runs_in_every_round_and_failures_are_kept() {
        let mut calls = [0usize; 2];
        let (a, b) = calls.split_at_mut(1);
        let mut cs = vec![
            Contender::reporting("a", || {
                a[0] += 1;
                Ok(1.0)
            }),
            Contender::reporting("b", || {
                b[0] += 1;
                Ok(0.5)
            }),
            Contender::reporting("c", || Err("not installed".into())),
        ];
        let plan = Plan {
            rounds: 5,
            round_seconds: 0.0,
        };
        let got = interleave(&mut cs, plan);
        drop(cs);
        assert_eq!(got[0], Ok(1.0));
        assert_eq!(got[1], Ok(0.5));
        assert_eq!(got[2], Err("not installed".to_string()));
        // One warm-up, then an untimed and a timed run per round each.
        assert_eq!(calls, [11, 11]);
    }
}
