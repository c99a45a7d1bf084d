//! The rules of the module doc, applied to one doc's lines.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::markdown::{Context, DocLine};
use super::{Facts, Finding, IGNORE_LINE, Report};

/// Where findings of one doc go, each reported once per line.
struct Sink<'a> {
    file: String,
    report: &'a mut Report,
    seen: BTreeSet<(usize, String)>,
}

impl Sink<'_> {
    fn checked(&mut self) {
        self.report.references += 1;
    }

    fn broken(&mut self, line: usize, reference: &str, why: String) {
        if self.seen.insert((line, reference.to_string())) {
            self.report.findings.push(Finding {
                file: self.file.clone(),
                line,
                reference: reference.to_string(),
                why,
            });
        }
    }
}

/// Applies every rule to the lines of the doc at `rel`. `links_only` is
/// the changelog's rule; `rust` says the lines are a `//!` doc.
pub fn scan(
    facts: &Facts,
    rel: &Path,
    lines: &[DocLine],
    links_only: bool,
    rust: bool,
    report: &mut Report,
) {
    let file = rel.to_string_lossy().replace('\\', "/");
    let mut sink = Sink {
        file,
        report,
        seen: BTreeSet::new(),
    };
    let dir = rel.parent().unwrap_or(Path::new(""));
    for dl in lines {
        if dl.text.contains(IGNORE_LINE) {
            continue;
        }
        let text = strip_urls(&dl.text);
        if dl.context == Context::Prose {
            let (outside, spans) = code_spans(&dl.text);
            links(facts, dir, dl.line, &outside, rust, &mut sink);
            if !links_only {
                for span in spans {
                    commands(facts, dl.line, &span, &mut sink);
                }
            }
        }
        if links_only {
            continue;
        }
        if dl.context == Context::Command {
            commands(facts, dl.line, &text, &mut sink);
        }
        paths_and_doc_names(facts, dl.line, &text, &mut sink);
        crate_names(facts, dl.line, &text, &mut sink);
    }
}

/// Blanks out every `scheme://…`, so no part of a URL reads as a path or a name.
fn strip_urls(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(at) = out.find("://") {
        let bytes = out.as_bytes();
        let mut start = at;
        while start > 0
            && (bytes[start - 1].is_ascii_alphanumeric() || b"+.-".contains(&bytes[start - 1]))
        {
            start -= 1;
        }
        let end = out[at..]
            .find(|c: char| c.is_whitespace() || ")>]`\"'".contains(c))
            .map_or(out.len(), |e| at + e);
        out.replace_range(start..end, &" ".repeat(end - start));
    }
    out
}

/// The text outside code spans, and the spans' contents.
fn code_spans(text: &str) -> (String, Vec<String>) {
    let mut outside = String::new();
    let mut spans = Vec::new();
    for (i, piece) in text.split('`').enumerate() {
        if i % 2 == 0 {
            outside.push_str(piece);
            outside.push(' ');
        } else if !piece.trim().is_empty() {
            spans.push(piece.to_string());
        }
    }
    (outside, spans)
}

/// Markdown link targets, inline `](target)` and reference `[id]: target`.
fn links(facts: &Facts, dir: &Path, line: usize, prose: &str, rust: bool, sink: &mut Sink) {
    let mut targets = Vec::new();
    let mut rest = prose;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let close = after.find(')').unwrap_or(after.len());
        targets.push(after[..close].to_string());
        rest = &after[close..];
    }
    let t = prose.trim_start();
    if let Some(def) = t.strip_prefix('[').and_then(|d| d.split_once("]:")) {
        targets.push(def.1.to_string());
    }
    for target in targets {
        // `<target>` and a `"title"` after it are markdown, not the path.
        let target = target.trim().trim_start_matches('<');
        let target = target.split(['>', ' ']).next().unwrap_or("");
        let target = target.split(['#', '?']).next().unwrap_or("");
        let has_scheme = target.split_once(':').is_some_and(|(s, _)| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        });
        if target.is_empty() || has_scheme || target.contains("::") {
            continue;
        }
        if rust && !(target.contains('/') || target.ends_with(".md")) {
            continue;
        }
        let joined = match target.strip_prefix('/') {
            Some(from_root) => PathBuf::from(from_root),
            None => dir.join(target),
        };
        // A link that leaves the repository is not the repository's to check.
        let Some(resolved) = normalize(&joined) else {
            continue;
        };
        if facts.ignored(&resolved) {
            continue;
        }
        sink.checked();
        if !facts.root.join(&resolved).exists() {
            let why = format!(
                "link target does not exist (resolves to {})",
                resolved.display()
            );
            sink.broken(line, target, why);
        }
    }
}

/// `a/./b/../c` as `a/c`; `None` if it climbs above the root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The characters a path word is made of. Placeholder and glob characters
/// are included so such a word is read whole, then recognized and skipped.
fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.-/*?<>{}~+$@%…".contains(c)
}

fn placeholder(word: &str) -> bool {
    word.contains(['<', '>', '{', '}', '*', '?', '$', '…']) || word.contains("...")
}

/// A missing path naming a metavariable: a component with a piece in
/// capitals (`FILE.rs`, `DIR`, `lib.rs.N`); never a `.md`, since docs are
/// not spelled as metavariables.
fn metavariable(path: &str) -> bool {
    !path.ends_with(".md")
        && path.split('/').any(|component| {
            component
                .split(['.', '-', '_'])
                .any(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_uppercase()))
        })
}

/// Root-relative paths, and bare `NAME.md` doc names.
fn paths_and_doc_names(facts: &Facts, line: usize, text: &str, sink: &mut Sink) {
    for raw in text
        .split(|c: char| !path_char(c))
        .filter(|w| !w.is_empty())
    {
        let word = raw.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '*', '\'', '"']);
        let word = word.strip_prefix("./").unwrap_or(word);
        if word.is_empty() || placeholder(word) {
            continue;
        }
        if !word.contains('/') {
            if word.ends_with(".md") && word.len() > 3 {
                sink.checked();
                if !facts.doc_names.contains(word) {
                    sink.broken(line, word, "no file of this name in the repository".into());
                }
            }
            continue;
        }
        let first = word.split('/').next().unwrap_or("");
        if !facts.roots.contains(first) {
            // Outside the tree (`/tmp`, `~`, `..`) or relative to something
            // only the prose names.
            continue;
        }
        let rel = Path::new(word);
        if facts.ignored(rel) {
            continue;
        }
        sink.checked();
        if !facts.root.join(rel).exists() && !metavariable(word) {
            sink.broken(
                line,
                word,
                "no such file or directory in the repository".into(),
            );
        }
    }
}

/// The `oxmera-…` / `oxmera_…` names in a line, with their byte offsets.
pub fn oxmera_names(line: &str) -> Vec<(usize, &str)> {
    let bytes = line.as_bytes();
    let word = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = line[from..].find("oxmera") {
        let at = from + pos;
        from = at + "oxmera".len();
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || b"_-".contains(&bytes[at - 1])) {
            continue;
        }
        let mut end = from;
        // One or more `-word` / `_word` parts.
        while end + 1 < bytes.len() && b"-_".contains(&bytes[end]) && word(bytes[end + 1]) {
            end += 1;
            while end < bytes.len() && word(bytes[end]) {
                end += 1;
            }
        }
        if end > from {
            out.push((at, &line[at..end]));
            from = end;
        }
    }
    out
}

/// Crate names: a package of the repository or a name its code uses.
fn crate_names(facts: &Facts, line: usize, text: &str, sink: &mut Sink) {
    for (at, name) in oxmera_names(text) {
        if text[..at].ends_with('/') {
            continue;
        }
        let canonical = name.replace('_', "-");
        sink.checked();
        let known = facts
            .packages
            .iter()
            .any(|p| p.replace('_', "-") == canonical)
            || facts.code_names.contains(&canonical);
        if !known {
            let why =
                "no Cargo.toml in the repository defines this crate, and no code uses the name";
            sink.broken(line, name, why.into());
        }
    }
}

/// Lower-case kebab words: what a package or subcommand name looks like.
/// Anything else in that place (`PACKAGE`, `<crate>`) is a placeholder.
fn kebab_word(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && w.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// `cargo … -p X` and `oxmera SUB …` in a command line or a code span.
fn commands(facts: &Facts, line: usize, text: &str, sink: &mut Sink) {
    let text = text.replace("&&", ";").replace("||", ";");
    for simple in text.split([';', '|', '(', ')']) {
        let words: Vec<&str> = simple
            .split_whitespace()
            .map(|w| w.trim_matches(['"', '\'']))
            .skip_while(|w| *w == "$" || (w.contains('=') && !w.starts_with('-')))
            .collect();
        let Some(first) = words.first() else { continue };
        if first.rsplit('/').next() == Some(facts.cli.bin.as_str()) {
            subcommands(facts, line, &words[1..], sink);
        } else if let Some(cargo) = words.iter().position(|w| *w == "cargo") {
            cargo_command(facts, line, &words[cargo + 1..], sink);
        }
    }
}

fn cargo_command(facts: &Facts, line: usize, args: &[&str], sink: &mut Sink) {
    let mut runs_cli = false;
    let mut i = 0;
    while i < args.len() {
        let (flag, value) = match args[i].split_once('=') {
            Some((f, v)) if f == "--package" => (f, Some(v)),
            _ => (args[i], args.get(i + 1).copied()),
        };
        if args[i] == "--" {
            break;
        }
        if args[i] == "--bin" && value == Some(facts.cli.bin.as_str()) {
            runs_cli = true;
        }
        if matches!(flag, "-p" | "--package") {
            if let Some(package) = value.filter(|v| kebab_word(v)) {
                sink.checked();
                if package == facts.cli.package {
                    runs_cli = true;
                }
                if !facts.packages.contains(package) {
                    let why = "no Cargo.toml in the repository defines this package".into();
                    sink.broken(line, &format!("-p {package}"), why);
                }
            }
        }
        i += 1;
    }
    // `cargo run -p oxmera-cli -- SUB` runs the CLI with SUB.
    if args.first() == Some(&"run") && runs_cli {
        if let Some(dash) = args.iter().position(|w| *w == "--") {
            subcommands(facts, line, &args[dash + 1..], sink);
        }
    }
}

/// Walks the subcommand words after the binary, level by level.
fn subcommands(facts: &Facts, line: usize, words: &[&str], sink: &mut Sink) {
    let mut level = &facts.cli.top;
    let mut said = facts.cli.bin.clone();
    for w in words {
        if !kebab_word(w) {
            return;
        }
        said.push(' ');
        said.push_str(w);
        sink.checked();
        match level.subs.get(*w) {
            None => {
                let known: Vec<&str> = level.subs.keys().map(String::as_str).collect();
                let why = format!(
                    "the CLI declares no such subcommand (it has: {}; read from {}/src)",
                    known.join(", "),
                    super::cli::CLI_DIR
                );
                sink.broken(line, &said, why);
                return;
            }
            Some(Some(below)) => level = below,
            Some(None) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_blanked() {
        let s = strip_urls("see https://github.com/x/docs/y.md (and docs/z.md)");
        assert!(!s.contains("github"));
        assert!(s.contains("docs/z.md"));
    }

    #[test]
    fn names_are_found_whole() {
        let names: Vec<_> =
            oxmera_names("`oxmera-kernel-ir`'s, oxmera_core::x, OXMERA_LOG, xoxmera-a, oxmera-")
                .into_iter()
                .map(|(_, n)| n)
                .collect();
        assert_eq!(names, ["oxmera-kernel-ir", "oxmera_core"]);
    }

    #[test]
    fn metavariables_and_placeholders() {
        assert!(metavariable("crates/x/FILE.rs"));
        assert!(metavariable("DIR/bench.json"));
        assert!(metavariable("exercises/a1/.backup/lib.rs.N"));
        assert!(!metavariable("crates/x/src/OXK006.md"));
        assert!(!metavariable("docs/README.md"));
        assert!(placeholder("crates/oxmera-tensor/src/ops/<family>.rs"));
        assert!(placeholder("scripts/gpu-check.d/*.sh"));
        assert!(!placeholder("docs/bench.md"));
    }

    #[test]
    fn spans_and_links() {
        let (outside, spans) = code_spans("a `b c` d `e`");
        assert_eq!(spans, ["b c", "e"]);
        assert!(outside.contains('a') && outside.contains('d') && !outside.contains('b'));
        assert_eq!(
            normalize(Path::new("docs/../README.md")),
            Some(PathBuf::from("README.md"))
        );
        assert_eq!(normalize(Path::new("../shared/DESIGN.md")), None);
    }
}
