//! The tuner's report as text: the table, the refused-but-faster section,
//! and each refusal's finding in full (once per distinct finding).

use std::fmt::Write;

use super::{Row, TuneReport, Verdict};

fn verdict(row: &Row) -> String {
    match &row.verdict {
        Verdict::Safe => "safe".into(),
        Verdict::Refused(r) => match r.code {
            Some(code) if !r.at.is_empty() => format!("refused {code} at {}", r.at),
            Some(code) => format!("refused {code}"),
            None => "refused: cannot launch".into(),
        },
        Verdict::Wrong { on, index, .. } => format!("wrong result ({on}) at [{index}]"),
        Verdict::Failed(_) => "failed".into(),
    }
}

fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn measure(report: &TuneReport, row: &Row) -> String {
    match (&report.device, &row.timing, &row.cost) {
        (Some(_), Some(t), _) => {
            let (lo, hi) = t.range();
            format!("{} ({}–{})", seconds(t.median()), seconds(lo), seconds(hi))
        }
        (None, _, Some(c)) if matches!(row.verdict, Verdict::Refused(_)) => {
            format!("({} units)", c.units())
        }
        (None, _, Some(c)) => format!("{} units", c.units()),
        _ => "—".into(),
    }
}

/// The report as `oxmera kernel tune` prints it.
pub fn render(report: &TuneReport) -> String {
    let mut out = String::new();
    let t = report.target;
    let _ = writeln!(
        out,
        "tune `{}` for target {t} (warps of {})",
        report.kernel,
        t.warp_width()
    );
    match &report.device {
        Some(d) => {
            let _ = writeln!(
                out,
                "measure: median launch time on {d} (fastest–slowest), launches interleaved across configurations"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "measure: the simulator's cost model (warp instructions + barrier waits) — a model, not a time"
            );
        }
    }
    let _ = writeln!(out, "problem: {}\n", report.problem);
    let best = report.best();
    let width = report
        .rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0)
        .max("configuration".len());
    let measure_head = if report.device.is_some() {
        "time"
    } else {
        "cost"
    };
    let rows: Vec<(String, String, String)> = report
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let ratio = match report.ratio(r) {
                Some(x) if r.verdict == Verdict::Safe => format!("{x:.2}"),
                _ => String::new(),
            };
            let mark = match (Some(i) == best, Some(i) == report.default) {
                (true, true) => "  best, default",
                (true, false) => "  best",
                (false, true) => "  default",
                (false, false) => "",
            };
            (verdict(r), measure(report, r), format!("{ratio}{mark}"))
        })
        .collect();
    let vw = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let mw = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let _ = writeln!(
        out,
        "  {:<width$}  {:<vw$}  {:>mw$}  ratio",
        "configuration", "verdict", measure_head
    );
    for (r, (v, m, ratio)) in report.rows.iter().zip(&rows) {
        let line = format!("  {:<width$}  {v:<vw$}  {m:>mw$}  {ratio}", r.label);
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let safe = report
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Safe)
        .count();
    let _ = writeln!(
        out,
        "\n{} configurations: {safe} safe, {} refused by proof, {} wrong or failed",
        report.rows.len(),
        report
            .rows
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Refused(_)))
            .count(),
        report
            .rows
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Wrong { .. } | Verdict::Failed(_)))
            .count()
    );
    if let (Some(b), Some(d)) = (best, report.default) {
        if let (Some(tuned), Some(fixed)) = (
            report.measure(&report.rows[b]),
            report.measure(&report.rows[d]),
        ) {
            if b == d {
                let _ = writeln!(
                    out,
                    "the default, {}, is the best safe configuration in this run",
                    report.rows[d].label
                );
            } else {
                let _ = writeln!(
                    out,
                    "tuned {} against the default {}: {:.2} of the default's {}, in this run",
                    report.rows[b].label,
                    report.rows[d].label,
                    tuned / fixed,
                    if report.device.is_some() {
                        "median time"
                    } else {
                        "cost"
                    }
                );
            }
        }
    }
    let faster = report.refused_but_faster();
    if let (Some(b), false) = (best, faster.is_empty()) {
        let best_units = report.rows[b].cost.map_or(0, |c| c.units());
        let _ = writeln!(
            out,
            "\nrefused but faster — the cost model says these would beat the best safe one ({}, {best_units} units); each is unsafe:",
            report.rows[b].label
        );
        for r in faster {
            let units = r.cost.map_or(0, |c| c.units());
            let why = match &r.verdict {
                Verdict::Refused(x) => format!(
                    "{} {}{}",
                    x.code.unwrap_or("launch"),
                    x.message,
                    if x.snippet.is_empty() {
                        String::new()
                    } else {
                        format!(" (at {} `{}`)", x.at, x.snippet)
                    }
                ),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "  {}: {units} units, {:.2} of the best — {why}",
                r.label,
                units as f64 / best_units.max(1) as f64
            );
        }
    }
    details(report, &mut out);
    out
}

/// Each refusal's finding in full, once per distinct finding, and each
/// wrong or failed configuration's evidence.
fn details(report: &TuneReport, out: &mut String) {
    let mut shown: Vec<(Option<&str>, &str, &str)> = Vec::new();
    for r in &report.rows {
        match &r.verdict {
            Verdict::Refused(x) => {
                let key = (x.code, x.at.as_str(), x.message.as_str());
                if let Some(first) = shown.iter().position(|k| *k == key) {
                    let _ = writeln!(
                        out,
                        "\n{}: refused, the same finding as above (#{})",
                        r.label,
                        first + 1
                    );
                    continue;
                }
                shown.push(key);
                let _ = writeln!(
                    out,
                    "\n#{} {}: refused at launch {}\n{}",
                    shown.len(),
                    r.label,
                    r.launch,
                    x.rendered.trim_end()
                );
            }
            Verdict::Wrong {
                on,
                index,
                got,
                expected,
            } => {
                let _ = writeln!(
                    out,
                    "\n{}: wrong result on the {on} at launch {} with no analysis finding: element [{index}] is {got} where the host computed {expected}",
                    r.label, r.launch
                );
            }
            Verdict::Failed(why) => {
                let _ = writeln!(out, "\n{}: {}", r.label, why.trim_end());
            }
            Verdict::Safe => {}
        }
    }
}
