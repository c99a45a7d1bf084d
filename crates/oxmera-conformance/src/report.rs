//! The report: a matrix of op × dtype × layout class, and the failures.

use std::collections::BTreeMap;
use std::fmt;

use oxmera_core::{DType, Device};

use crate::layout::LayoutClass;

/// Pass/fail counts and the worst error ratio of a set of comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tally {
    /// Comparisons made.
    pub checked: usize,
    /// Comparisons that failed.
    pub failed: usize,
    /// The largest error ÷ tolerance seen (0 when every element matched
    /// exactly; infinite for a mismatch of kind or an error).
    pub worst: f64,
}

impl Tally {
    pub(crate) fn add(&mut self, ratio: f64, passed: bool) {
        self.checked += 1;
        if !passed {
            self.failed += 1;
        }
        // NaN never arises from the comparison, but an error does count
        // as infinitely bad.
        if ratio > self.worst || ratio.is_nan() {
            self.worst = if ratio.is_nan() { f64::INFINITY } else { ratio };
        }
    }

    /// Whether nothing failed.
    pub fn passed(&self) -> bool {
        self.failed == 0
    }
}

/// One cell group of the matrix: every run of one op in one dtype and
/// layout class.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The op's name.
    pub op: &'static str,
    /// The dtype of the runs.
    pub dtype: DType,
    /// The layout class of the runs.
    pub layout: LayoutClass,
    /// How many runs (case × dtype × layout) fell in this row.
    pub runs: usize,
    /// The forward comparisons.
    pub forward: Tally,
    /// The gradient comparisons (one per input with a gradient), when any
    /// run had them.
    pub backward: Option<Tally>,
    /// How many of the runs had an op of the device fall back to the host
    /// (the rest ran natively).
    pub fallback: usize,
}

impl Row {
    /// Whether every comparison of the row passed.
    pub fn passed(&self) -> bool {
        self.forward.passed() && self.backward.is_none_or(|b| b.passed())
    }
}

/// Which comparison failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The op's output.
    Forward,
    /// The gradient of input `input` (its position in the case).
    Backward {
        /// The input's position.
        input: usize,
    },
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Forward => f.write_str("forward"),
            Phase::Backward { input } => write!(f, "backward (gradient of input {input})"),
        }
    }
}

/// One failed comparison, with enough detail to reproduce it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The case's id.
    pub case: String,
    /// The op's name.
    pub op: &'static str,
    /// The dtype of the run.
    pub dtype: DType,
    /// The layout class of the run.
    pub layout: LayoutClass,
    /// Forward or which gradient.
    pub phase: Phase,
    /// What went wrong: the worst element and its bound, or the error
    /// the device returned, or why the run could not be made.
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{} {} {}] {}: {}",
            self.case, self.op, self.dtype, self.layout, self.phase, self.message
        )
    }
}

/// A case the device declined in one dtype: listed, never run, never
/// counted as a pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Declined {
    /// The case's id.
    pub case: String,
    /// The op's name.
    pub op: &'static str,
    /// The dtype of the runs declined.
    pub dtype: DType,
    /// How many runs (layout classes) were not made.
    pub runs: usize,
    /// Why, as the device's capabilities say.
    pub reason: String,
}

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{} {}] {} runs: {}",
            self.case, self.op, self.dtype, self.runs, self.reason
        )
    }
}

/// The outcome of running a corpus on a device against the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    device: Device,
    cases: usize,
    runs: usize,
    rows: Vec<Row>,
    failures: Vec<Failure>,
    declined: Vec<Declined>,
}

impl Report {
    /// The device that was checked.
    pub fn device(&self) -> Device {
        self.device
    }

    /// How many cases matched the filter.
    pub fn cases(&self) -> usize {
        self.cases
    }

    /// How many runs (case × dtype × layout class) were made.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// The matrix, ordered by op (in corpus order), dtype and class.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Every failed comparison, in the order they happened.
    pub fn failures(&self) -> &[Failure] {
        &self.failures
    }

    /// Whether every comparison made passed (vacuously true for no runs).
    /// Declined cases were not run: see [`Report::declined`].
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// The cases the device declined, by dtype, with the reason.
    pub fn declined(&self) -> &[Declined] {
        &self.declined
    }

    /// How many runs were declined (not made).
    pub fn declined_runs(&self) -> usize {
        self.declined.iter().map(|d| d.runs).sum()
    }

    /// How many runs had some op fall back to the host.
    pub fn fallback_runs(&self) -> usize {
        self.rows.iter().map(|r| r.fallback).sum()
    }

    /// How many runs computed every op natively on the device.
    pub fn native_runs(&self) -> usize {
        self.runs - self.fallback_runs()
    }

    /// The names of the ops with at least one failure, each once.
    pub fn failed_ops(&self) -> Vec<&'static str> {
        let mut ops: Vec<&'static str> = Vec::new();
        for f in &self.failures {
            if !ops.contains(&f.op) {
                ops.push(f.op);
            }
        }
        ops
    }
}

/// Collects rows and failures as the runner goes.
#[derive(Debug)]
pub(crate) struct Builder {
    device: Device,
    cases: usize,
    runs: usize,
    op_order: Vec<&'static str>,
    rows: BTreeMap<(usize, DType, LayoutClass), Row>,
    failures: Vec<Failure>,
    declined: Vec<Declined>,
}

impl Builder {
    pub(crate) fn new(device: Device) -> Self {
        Builder {
            device,
            cases: 0,
            runs: 0,
            op_order: Vec::new(),
            rows: BTreeMap::new(),
            failures: Vec::new(),
            declined: Vec::new(),
        }
    }

    pub(crate) fn case(&mut self) {
        self.cases += 1;
    }

    /// The row of a run, created on first use; counts the run.
    pub(crate) fn row(&mut self, op: &'static str, dtype: DType, layout: LayoutClass) -> &mut Row {
        self.runs += 1;
        let i = match self.op_order.iter().position(|o| *o == op) {
            Some(i) => i,
            None => {
                self.op_order.push(op);
                self.op_order.len() - 1
            }
        };
        let row = self.rows.entry((i, dtype, layout)).or_insert(Row {
            op,
            dtype,
            layout,
            runs: 0,
            forward: Tally::default(),
            backward: None,
            fallback: 0,
        });
        row.runs += 1;
        row
    }

    pub(crate) fn fail(&mut self, failure: Failure) {
        self.failures.push(failure);
    }

    pub(crate) fn decline(&mut self, declined: Declined) {
        self.declined.push(declined);
    }

    pub(crate) fn finish(self) -> Report {
        Report {
            device: self.device,
            cases: self.cases,
            runs: self.runs,
            rows: self.rows.into_values().collect(),
            failures: self.failures,
            declined: self.declined,
        }
    }
}

/// An error ratio for a table cell: `0` for exact agreement, two
/// significant digits otherwise.
fn ratio(r: f64) -> String {
    if r == 0.0 {
        "0".into()
    } else if r.is_infinite() {
        "inf".into()
    } else if (0.01..1000.0).contains(&r) {
        format!("{r:.2}")
    } else {
        format!("{r:.1e}")
    }
}

fn cell(t: &Tally) -> String {
    let verdict = if t.passed() {
        "ok".to_string()
    } else {
        format!("FAIL {}/{}", t.failed, t.checked)
    };
    format!("{verdict:<10} {:>7}", ratio(t.worst))
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed_rows = self.rows.iter().filter(|r| !r.passed()).count();
        writeln!(
            f,
            "conformance of {} against the reference: {} cases, {} runs, {} of {} rows failed",
            self.device,
            self.cases,
            self.runs,
            failed_rows,
            self.rows.len()
        )?;
        writeln!(
            f,
            "runs: {} native, {} through the host fallback, {} declined as unsupported",
            self.native_runs(),
            self.fallback_runs(),
            self.declined_runs()
        )?;
        writeln!(
            f,
            "(each cell: verdict, then the worst error ÷ tolerance; at most 1 passes, 0 is bit-exact;"
        )?;
        writeln!(
            f,
            " via: where the runs computed — native, host (the fallback), or how many of them fell back)"
        )?;
        writeln!(f)?;
        let op_width = self
            .rows
            .iter()
            .map(|r| r.op.len())
            .max()
            .unwrap_or(2)
            .max(2);
        writeln!(
            f,
            "{:<op_width$}  {:<5}  {:<10}  {:>4}  {:<6}  {:<18}  backward",
            "op", "dtype", "layout", "runs", "via", "forward"
        )?;
        for r in &self.rows {
            let back = match &r.backward {
                Some(t) => cell(t),
                None => "-".into(),
            };
            let via = match r.fallback {
                0 => "native".to_string(),
                n if n == r.runs => "host".to_string(),
                n => format!("{n}/{} host", r.runs),
            };
            writeln!(
                f,
                "{:<op_width$}  {:<5}  {:<10}  {:>4}  {:<6}  {:<18}  {}",
                r.op,
                r.dtype.name(),
                r.layout.name(),
                r.runs,
                via,
                cell(&r.forward),
                back
            )?;
        }
        if !self.declined.is_empty() {
            writeln!(
                f,
                "\n{} cases declined by {} (not run, not passed):",
                self.declined.len(),
                self.device
            )?;
            for d in &self.declined {
                writeln!(f, "  {d}")?;
            }
        }
        if self.failures.is_empty() {
            writeln!(f, "\nevery comparison passed")?;
        } else {
            writeln!(f, "\n{} failures:", self.failures.len())?;
            for fail in &self.failures {
                writeln!(f, "  {fail}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_group_runs_and_render() {
        let mut b = Builder::new(Device::Cpu);
        b.case();
        b.row("exp", DType::F32, LayoutClass::Contiguous)
            .forward
            .add(0.5, true);
        b.row("exp", DType::F32, LayoutClass::Contiguous)
            .forward
            .add(0.25, true);
        let row = b.row("add", DType::F16, LayoutClass::Sliced);
        row.forward.add(f64::INFINITY, false);
        row.backward = Some(Tally::default());
        b.fail(Failure {
            case: "add/x".into(),
            op: "add",
            dtype: DType::F16,
            layout: LayoutClass::Sliced,
            phase: Phase::Forward,
            message: "element 0: got 1, want 2".into(),
        });
        b.row("exp", DType::F32, LayoutClass::Contiguous).fallback += 1;
        b.decline(Declined {
            case: "exp/f64".into(),
            op: "exp",
            dtype: DType::F64,
            runs: 4,
            reason: "cpu does not store f64".into(),
        });
        let r = b.finish();
        assert_eq!(r.runs(), 4);
        assert_eq!(
            (r.native_runs(), r.fallback_runs(), r.declined_runs()),
            (3, 1, 4)
        );
        assert_eq!(r.rows().len(), 2);
        assert_eq!(r.rows()[0].op, "exp");
        assert_eq!(r.rows()[0].runs, 3);
        assert_eq!(r.rows()[0].forward.worst, 0.5);
        assert!(!r.passed());
        assert_eq!(r.failed_ops(), vec!["add"]);
        let text = r.to_string();
        assert!(text.contains("1 of 2 rows failed"), "{text}");
        assert!(text.contains("FAIL 1/1"), "{text}");
        assert!(
            text.contains("3 native, 1 through the host fallback, 4 declined"),
            "{text}"
        );
        assert!(text.contains("1/3 host"), "{text}");
        assert!(
            text.contains("exp/f64 [exp f64] 4 runs: cpu does not store f64"),
            "{text}"
        );
        assert!(
            text.contains("add/x [add f16 sliced] forward: element 0"),
            "{text}"
        );
    }

    #[test]
    fn ratios_print_compactly() {
        assert_eq!(ratio(0.0), "0");
        assert_eq!(ratio(0.5), "0.50");
        assert_eq!(ratio(0.00012), "1.2e-4");
        assert_eq!(ratio(f64::INFINITY), "inf");
    }
}
