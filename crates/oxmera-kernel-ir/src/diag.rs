//! Renders findings like rustc diagnostics.

use std::fmt::Write;

use crate::analysis::{Finding, Rule};
use crate::ir::Kernel;
use crate::target::Target;

/// The launch, and the target unless it is the generic default (whose
/// findings read as they did before targets existed).
fn where_(f: &Finding) -> String {
    if f.target == Target::generic() {
        f.launch.to_string()
    } else {
        format!(
            "{} on target {} (warps of {})",
            f.launch,
            f.target,
            f.target.warp_width()
        )
    }
}

/// Renders one finding: header, location, source line with carets,
/// provenance notes, lane map and help.
pub fn render(k: &Kernel, f: &Finding) -> String {
    let mut out = String::new();
    // A confirmed finding happens at this launch whatever the data; a
    // possible one depends on data the analysis cannot see.
    let severity = if f.confirmed { "error" } else { "warning" };
    let _ = writeln!(out, "{severity}[{}]: {}", f.rule.code(), f.message);
    let sp = k.span(f.span);
    let gutter = sp.line.max(sp.end_line).to_string().len().max(2);
    let pad = " ".repeat(gutter);
    if sp.line > 0 {
        let _ = writeln!(out, "{pad}--> {}:{}:{}", k.source.file, sp.line, sp.column);
        let _ = writeln!(out, "{pad} |");
        let text = k
            .source
            .line(sp.line)
            .unwrap_or_else(|| k.snippet(f.span).to_string());
        let _ = writeln!(out, "{:>gutter$} | {}", sp.line, text.trim_end());
        let start = sp.column.max(1) as usize - 1;
        let end = if sp.end_line == sp.line && sp.end_column > sp.column {
            sp.end_column as usize - 1
        } else {
            text.trim_end().len().max(start + 1)
        };
        let _ = writeln!(
            out,
            "{pad} | {}{} {}",
            " ".repeat(start),
            "^".repeat(end - start),
            f.label
        );
        let _ = writeln!(out, "{pad} |");
    } else {
        let _ = writeln!(out, "{pad}--> kernel `{}`: `{}`", k.name, k.snippet(f.span));
    }
    let _ = writeln!(out, "{pad} = note: at launch {}", where_(f));
    if !f.confirmed {
        let _ = writeln!(
            out,
            "{pad} = note: possible, not confirmed: whether it happens depends on data the analysis cannot see"
        );
    }
    for s in &f.notes {
        let line = k.span(s.span).line;
        if line > 0 {
            let _ = writeln!(out, "{pad} = note: line {line}: {}", s.text);
        } else {
            let _ = writeln!(out, "{pad} = note: {}", s.text);
        }
    }
    for e in &f.extra {
        let _ = writeln!(out, "{pad} = note: {e}");
    }
    if let Some(l) = &f.lanes {
        let legend = match f.rule {
            Rule::DivergentBarrier => "W waits at the barrier, . never arrives",
            _ => "W arrives, . named in the mask but never arrives, - not named",
        };
        let _ = writeln!(out, "{pad} = lanes ({legend}):");
        for r in l.rows() {
            let _ = writeln!(out, "{pad}     {r}");
        }
    }
    let _ = writeln!(out, "{pad} = help: {}", f.help);
    let rc = f
        .rule
        .reconverge()
        .map(|r| format!(" (the reconverge rule {r})"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{pad} = explain: oxmera kernel explain {}{rc}",
        f.rule.code()
    );
    out
}

/// A compact, location-free form for `compile_error!`: rustc already points
/// at the span, so only the reasoning and the lane map are added.
pub fn render_compact(k: &Kernel, f: &Finding) -> String {
    let mut out = format!(
        "[{}] {} (at launch {})",
        f.rule.code(),
        f.message,
        where_(f)
    );
    for s in &f.notes {
        let _ = write!(out, "\n  note: {}", s.text);
    }
    for e in &f.extra {
        let _ = write!(out, "\n  note: {e}");
    }
    if let Some(l) = &f.lanes {
        out.push_str("\n  lanes (W arrives, . never arrives):");
        for r in l.rows() {
            let _ = write!(out, "\n    {r}");
        }
    }
    let _ = write!(out, "\n  help: {}", f.help);
    let _ = k;
    out
}
