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
    let chain = k.call_chain(f.span);
    // Inside a helper the finding is reported at the kernel's own call, the
    // place the caller can see (a divergent branch around the call, say),
    // and shown a second time where it happens inside the helper.
    let primary = chain.last().map_or(f.span, |c| c.call);
    let lines = [k.span(primary), k.span(f.span)];
    let widest = lines
        .iter()
        .map(|s| s.line.max(s.end_line))
        .max()
        .unwrap_or(0);
    let gutter = widest.to_string().len().max(2);
    let pad = " ".repeat(gutter);
    if chain.is_empty() {
        location(&mut out, k, f.span, &f.label, gutter);
    } else {
        let path: Vec<String> = chain.iter().map(|c| format!("`{}`", c.helper)).collect();
        let label = format!(
            "in this call: {} (inside {})",
            f.label,
            path.join(" called by ")
        );
        location(&mut out, k, primary, &label, gutter);
        let _ = writeln!(out, "{pad} = note: inside helper {}:", path[0]);
        location(&mut out, k, f.span, &f.label, gutter);
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

/// One source location, as rustc prints it: the `-->` line, the source
/// line and carets under the span with `label`; a span with no position
/// shows its snippet. The simulator's reports print theirs with it too.
pub fn location(out: &mut String, k: &Kernel, span: u32, label: &str, gutter: usize) {
    let pad = " ".repeat(gutter);
    let sp = k.span(span);
    if sp.line == 0 {
        let _ = writeln!(out, "{pad}--> kernel `{}`: `{}`", k.name, k.snippet(span));
        return;
    }
    let _ = writeln!(out, "{pad}--> {}:{}:{}", k.source.file, sp.line, sp.column);
    let _ = writeln!(out, "{pad} |");
    let text = k
        .source
        .line(sp.line)
        .unwrap_or_else(|| k.snippet(span).to_string());
    let _ = writeln!(out, "{:>gutter$} | {}", sp.line, text.trim_end());
    let start = sp.column.max(1) as usize - 1;
    let end = if sp.end_line == sp.line && sp.end_column > sp.column {
        sp.end_column as usize - 1
    } else {
        text.trim_end().len().max(start + 1)
    };
    let carets = format!("{}{} {label}", " ".repeat(start), "^".repeat(end - start));
    let _ = writeln!(out, "{pad} | {}", carets.trim_end());
    let _ = writeln!(out, "{pad} |");
}

/// The helper calls a span lies inside, as notes naming each call's line
/// and text, innermost first; nothing for a span of the kernel's own body.
pub fn call_notes(out: &mut String, k: &Kernel, span: u32, gutter: usize) {
    let pad = " ".repeat(gutter);
    for text in call_note_texts(k, span) {
        let _ = writeln!(out, "{pad} = note: {text}");
    }
}

/// The text of each call note, innermost call first.
fn call_note_texts(k: &Kernel, span: u32) -> Vec<String> {
    k.call_chain(span)
        .iter()
        .map(|c| {
            let line = k.span(c.call).line;
            let at = if line > 0 {
                format!(" at line {line}")
            } else {
                String::new()
            };
            format!(
                "inside the helper `{}`, from the call `{}`{at}",
                c.helper,
                k.snippet(c.call)
            )
        })
        .collect()
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
    for text in call_note_texts(k, f.span) {
        let _ = write!(out, "\n  note: {text}");
    }
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
    out
}
