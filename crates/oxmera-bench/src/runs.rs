//! `--runs N`: the whole interleaved run repeated, and each figure and
//! ratio summarized as its median and range over the runs.
//!
//! One run's medians over rounds absorb a disturbed round; they cannot
//! absorb a disturbed run (a neighbour's build, a burst of steal lasting
//! longer than a benchmark). Medians over whole runs can, and the range
//! says how far the runs disagreed.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::Row;
use crate::machine::Steal;
use crate::measure::median;

/// The median, smallest and largest of some figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`, or `None` for none.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        let m = median(&mut v);
        // `median` sorted it.
        Some(Spread {
            median: m,
            min: v[0],
            max: v[v.len() - 1],
        })
    }
}

/// One benchmark against one peer over all runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The benchmark.
    pub name: String,
    /// The peer.
    pub peer: String,
    /// The unit of both figures.
    pub unit: String,
    /// oxmera's figure.
    pub oxmera: Spread,
    /// The peer's figure.
    pub peer_value: Spread,
    /// oxmera over the peer, oriented so that above 1 means oxmera is
    /// faster: the median of each run's ratio (not the ratio of the
    /// medians, so that a run's own pairing is kept).
    pub ratio: Spread,
    /// Runs that produced this row (a peer may fail in some).
    pub runs: usize,
}

/// What one run of the whole bench measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Time the hypervisor stole during the run; `None` where
    /// `/proc/stat` cannot be read.
    pub steal: Option<Steal>,
    /// Wall-clock seconds the run took.
    pub seconds: f64,
    /// The one-minute load average before and after the run, where
    /// `/proc/loadavg` can be read: above the thread count, other work
    /// shared the cores (which steal does not show).
    pub load: Option<(f64, f64)>,
    /// The machine's copy bandwidth in this run, GB/s: the median of the
    /// `memcpy` contender's figures, which every streaming benchmark
    /// measures alongside.
    pub copy_gbs: Option<f64>,
    /// The rows.
    pub rows: Vec<Row>,
}

impl RunRecord {
    /// `540.2 s; steal: 0.90 s of vCPU time (0.1%); load average 10.50
    /// before, 10.65 after (2 threads); copy bandwidth (memcpy): 6.089
    /// GB/s`.
    pub fn describe(&self, threads: usize) -> String {
        let steal = self
            .steal
            .map_or("not readable here (/proc/stat)".to_string(), |s| {
                s.to_string()
            });
        let load = self.load.map_or("not readable here".to_string(), |(a, b)| {
            format!("{a:.2} before, {b:.2} after ({threads} threads)")
        });
        let copy = self.copy_gbs.map_or("not measured".to_string(), |g| {
            format!("{} GB/s", crate::fmt(g))
        });
        format!(
            "{:.1} s; steal: {steal}; load average {load}; copy bandwidth (memcpy): {copy}",
            self.seconds
        )
    }
}

/// Each (benchmark, peer) pair of `runs`, in the order of first
/// appearance, summarized over the runs that measured it.
pub fn summarize(runs: &[Vec<Row>]) -> Vec<Summary> {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for r in runs.iter().flatten() {
        let key = (r.name.as_str(), r.peer.as_str(), r.unit.as_str());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .filter_map(|(name, peer, unit)| {
            let same: Vec<&Row> = runs
                .iter()
                .flatten()
                .filter(|r| r.name == name && r.peer == peer && r.unit == unit)
                .collect();
            let pick =
                |f: fn(&Row) -> f64| Spread::of(&same.iter().map(|r| f(r)).collect::<Vec<_>>());
            Some(Summary {
                name: name.to_string(),
                peer: peer.to_string(),
                unit: unit.to_string(),
                oxmera: pick(|r| r.oxmera)?,
                peer_value: pick(|r| r.peer_value)?,
                ratio: pick(|r| r.ratio)?,
                runs: same.len(),
            })
        })
        .collect()
}

/// The median of the `memcpy` contender's figures in `rows`.
pub fn copy_bandwidth(rows: &[Row]) -> Option<f64> {
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| r.peer == "memcpy")
        .map(|r| r.peer_value)
        .collect();
    Spread::of(&v).map(|s| s.median)
}

/// The summary table: each figure as `median (min–max)`.
pub fn table(summaries: &[Summary], runs: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "medians over {runs} runs (min–max); ratio: the median of each run's ratio"
    );
    let _ = writeln!(
        s,
        "{:<36} {:>7}  {:<24} {:<14} {:<24} ratio",
        "benchmark", "unit", "oxmera", "peer", "peer"
    );
    let mut last = "";
    for m in summaries {
        // oxmera's figures are the same for every peer of a benchmark:
        // shown on its first line only, as in each run's table.
        let first = m.name != last;
        let label = if first { m.name.as_str() } else { "" };
        let ox = if first {
            spread(m.oxmera, crate::fmt)
        } else {
            String::new()
        };
        last = &m.name;
        let partial = if m.runs < runs {
            format!("  ({} of {runs} runs)", m.runs)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "{label:<36} {:>7}  {:<24} {:<14} {:<24} {}{partial}",
            m.unit,
            ox,
            m.peer,
            spread(m.peer_value, crate::fmt),
            spread(m.ratio, |v| format!("{v:.2}x")),
        );
    }
    s
}

fn spread(s: Spread, f: impl Fn(f64) -> String) -> String {
    format!("{} ({}–{})", f(s.median), f(s.min), f(s.max))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, peer: &str, ox: f64, pv: f64) -> Row {
        Row {
            name: name.into(),
            oxmera: ox,
            peer: peer.into(),
            peer_value: pv,
            unit: "ms".into(),
            ratio: pv / ox,
        }
    }

    #[test]
    fn spread_of_odd_even_and_empty() {
        assert_eq!(
            Spread::of(&[3.0, 1.0, 2.0]),
            Some(Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0
            })
        );
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn summaries_pair_rows_by_name_and_peer_across_runs() {
        let runs = vec![
            vec![row("a", "torch", 1.0, 2.0), row("a", "numpy", 1.0, 4.0)],
            vec![row("a", "torch", 2.0, 2.0), row("a", "numpy", 2.0, 3.0)],
            // torch failed in the third run.
            vec![row("a", "numpy", 4.0, 2.0)],
        ];
        let s = summarize(&runs);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].peer.as_str(), s[0].runs), ("torch", 2));
        assert_eq!(s[0].oxmera.median, 1.5);
        // Ratios 2, 1: the median of the ratios, not 2/1.5.
        assert_eq!(s[0].ratio.median, 1.5);
        assert_eq!((s[1].peer.as_str(), s[1].runs), ("numpy", 3));
        assert_eq!(
            s[1].ratio,
            Spread {
                median: 1.5,
                min: 0.5,
                max: 4.0
            }
        );
        let t = table(&s, 3);
        assert!(t.contains("1.500 (1.000–2.000)"), "{t}");
        assert!(t.contains("(2 of 3 runs)"), "{t}");
    }

    #[test]
    fn a_run_describes_its_conditions() {
        let mut r = RunRecord {
            steal: Some(Steal {
                seconds: 0.9,
                fraction: 0.001,
            }),
            seconds: 540.24,
            load: Some((10.5, 10.65)),
            copy_gbs: Some(6.089),
            rows: Vec::new(),
        };
        assert_eq!(
            r.describe(2),
            "540.2 s; steal: 0.90 s of vCPU time (0.1%); load average 10.50 before, \
             10.65 after (2 threads); copy bandwidth (memcpy): 6.089 GB/s"
        );
        (r.steal, r.load, r.copy_gbs) = (None, None, None);
        assert_eq!(
            r.describe(2),
            "540.2 s; steal: not readable here (/proc/stat); load average not readable \
             here; copy bandwidth (memcpy): not measured"
        );
    }

    #[test]
    fn copy_bandwidth_is_the_median_memcpy_figure() {
        let rows = vec![
            row("add", "memcpy", 1.0, 30.0),
            row("add", "torch", 1.0, 5.0),
            row("sum", "memcpy", 1.0, 10.0),
            row("fused", "memcpy", 1.0, 20.0),
        ];
        assert_eq!(copy_bandwidth(&rows), Some(20.0));
        assert_eq!(copy_bandwidth(&rows[1..2]), None);
    }
}
