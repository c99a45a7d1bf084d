//! Turning a [`Report`] into text. Pure: the same report and paint give
//! the same bytes, which the golden tests rely on.

use super::Report;
use crate::style::{Paint, pad, wrap};

const LABEL: usize = 14;

/// The report fits an 80-column terminal; the golden tests hold it to that.
const WIDTH: usize = 80;

/// Renders a report; the next step it suggests is spelled for a front end
/// run as `prog`.
pub fn render(report: &Report, paint: Paint, prog: &str) -> String {
    let mut out = String::new();
    let line = |out: &mut String, label: &str, value: &str| {
        out.push_str(&format!("  {}{value}\n", pad(label, LABEL)));
    };
    out.push_str(&format!("{}\n", paint.bold("oxmera doctor")));

    out.push_str(&format!("\n{}\n", paint.bold("Host")));
    line(&mut out, "os", &report.host.os);
    line(&mut out, "arch", &report.host.arch);
    let (have, lack): (Vec<_>, Vec<_>) = report.host.cpu_features.iter().partition(|f| f.present);
    let names = |fs: &[&super::CpuFeature]| {
        fs.iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut features = if have.is_empty() {
        "none of those probed".to_string()
    } else {
        names(&have)
    };
    if !lack.is_empty() {
        features.push_str(&paint.dim(&format!("  (not: {})", names(&lack))));
    }
    line(&mut out, "cpu features", &features);

    out.push_str(&format!("\n{}\n", paint.bold("Toolchain")));
    let t = &report.toolchain;
    let rustc = match (&t.rustc, t.meets_msrv) {
        (Some(v), Some(true)) => format!("{v}  {}", paint.green(&format!("✓ ≥ {}", t.msrv))),
        (Some(v), Some(false)) => format!("{v}  {}", paint.red(&format!("✗ needs ≥ {}", t.msrv))),
        (Some(v), None) => v.clone(),
        (None, _) => paint.red("not found: install Rust from https://rustup.rs"),
    };
    line(&mut out, "rustc", &rustc);
    let cargo = t
        .cargo
        .clone()
        .unwrap_or_else(|| paint.red("not found: install Rust from https://rustup.rs"));
    line(&mut out, "cargo", &cargo);

    out.push_str(&format!("\n{}\n", paint.bold("Backends")));
    for b in &report.backends {
        let mark = if b.available {
            paint.green("✓")
        } else {
            paint.yellow("–")
        };
        let indent = " ".repeat(4 + LABEL - 2);
        for (i, l) in wrap(&b.detail, WIDTH - indent.len()).iter().enumerate() {
            if i == 0 {
                out.push_str(&format!("  {mark} {}{l}\n", pad(&b.name, LABEL - 2)));
            } else {
                out.push_str(&format!("{indent}{l}\n"));
            }
        }
        if b.checked != "nothing to check" {
            for l in wrap(&format!("checked: {}", b.checked), WIDTH - indent.len()) {
                out.push_str(&format!("{indent}{}\n", paint.dim(&l)));
            }
        }
    }

    out.push_str(&format!(
        "\n{}\n",
        paint.bold("Ladder tiers on this machine")
    ));
    if report.tiers.is_empty() {
        out.push_str("  no exercises/ found (run from inside an oxmera checkout)\n");
    }
    for tier in &report.tiers {
        let mark = if tier.open {
            paint.green("✓")
        } else {
            paint.yellow("–")
        };
        let state = if tier.open {
            "open".to_string()
        } else {
            format!("needs {}", tier.missing.join(" and "))
        };
        let built = if tier.built == 0 {
            format!("{} planned", tier.rungs)
        } else {
            format!("{} of {} rungs built", tier.built, tier.rungs)
        };
        out.push_str(&format!(
            "  {mark} {}  {}{}{}\n",
            tier.id,
            pad(&tier.name, 30),
            pad(&state, 22),
            paint.dim(&built)
        ));
    }

    out.push_str(&format!("\n{}\n", paint.bold("Ladder progress")));
    match &report.ladder {
        None => out.push_str("  no exercises/ found\n"),
        Some(l) => {
            out.push_str(&format!("  {} of {} built rungs done", l.done, l.built));
            match &l.current {
                Some(c) => {
                    let id = c.split_whitespace().next().unwrap_or(c);
                    out.push_str(&format!(
                        "; current: {c}\n  next: {}\n",
                        paint.cyan(&format!("{prog} ladder check {id}"))
                    ));
                }
                None if l.done < l.built => out.push_str(
                    "; the rest need hardware this machine lacks (the tiers above say which)\n",
                ),
                None => out.push_str("; every built rung is done\n"),
            }
        }
    }

    let can = report.backends.iter().filter(|b| b.available).count();
    out.push_str(&format!(
        "\n{} of {} backends can run here.\n",
        can,
        report.backends.len()
    ));
    out
}
