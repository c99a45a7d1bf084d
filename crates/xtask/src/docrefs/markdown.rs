//! Cutting a doc into lines that know where they stand.
//!
//! A reference means different things in prose, in a code span, in a shell
//! block and in an output block, so every line is first given its context:
//! prose (where markdown links live, and code spans), a command (a line of
//! a shell-like fenced block, where `cargo -p` and `oxmera SUB` are
//! commands), or other code (Rust, TOML, output). A `//!` doc is markdown
//! too, read the way rustdoc reads it: a bare fence there is Rust.

/// Where a line stands in its doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Running text (code spans included).
    Prose,
    /// A command in a shell-like fenced block.
    Command,
    /// Any other line of a fenced block: code, configuration or output.
    Code,
}

/// One logical line of a doc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocLine {
    /// 1-based line number in the file where the logical line starts.
    pub line: usize,
    /// Its text: wrapped code spans and `\` continuations joined into one.
    pub text: String,
    /// Its context.
    pub context: Context,
}

/// Fence languages whose lines are commands (or, in a block with `$ `
/// prompts, whose prompted lines are). `text` is among them because the
/// docs show a session as `text` (a prompt, then output); in a block
/// without prompts every line counts as a command.
const SHELL_LIKE: &[&str] = &["sh", "bash", "shell", "console", "zsh", "text"];

/// The lines of a markdown file.
pub fn markdown(text: &str) -> Vec<DocLine> {
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect();
    split(lines, false)
}

/// The `//!` lines of a Rust file, with the file's line numbers.
pub fn rust_docs(text: &str) -> Vec<DocLine> {
    let lines = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let doc = l.trim_start().strip_prefix("//!")?;
            Some((i + 1, doc.strip_prefix(' ').unwrap_or(doc).to_string()))
        })
        .collect();
    split(lines, true)
}

fn split(lines: Vec<(usize, String)>, bare_fence_is_rust: bool) -> Vec<DocLine> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (no, line) = &lines[i];
        if let Some((marker, lang)) = fence_open(line) {
            // Gather the block up to its closing fence (or the end).
            let mut block = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].1.trim_start().starts_with(marker) {
                block.push(lines[i].clone());
                i += 1;
            }
            i += 1;
            let lang = if lang.is_empty() && bare_fence_is_rust {
                "rust"
            } else {
                lang.as_str()
            };
            out.extend(fenced(block, lang.is_empty() || SHELL_LIKE.contains(&lang)));
            continue;
        }
        // A code span may wrap onto the next line: join until the
        // backticks pair up, so the span is read whole.
        let mut text = line.clone();
        while text.matches('`').count() % 2 == 1
            && i + 1 < lines.len()
            && fence_open(&lines[i + 1].1).is_none()
            && !lines[i + 1].1.trim().is_empty()
        {
            i += 1;
            text.push(' ');
            text.push_str(lines[i].1.trim());
        }
        out.push(DocLine {
            line: *no,
            text,
            context: Context::Prose,
        });
        i += 1;
    }
    out
}

/// The fence marker and language of an opening fence line.
fn fence_open(line: &str) -> Option<(&'static str, String)> {
    let t = line.trim_start();
    let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m))?;
    let lang = t.trim_start_matches(marker.chars().next()?).trim();
    // `rust,ignore` and `{.sh}` name the language first.
    let lang = lang
        .trim_matches(|c| c == '{' || c == '}' || c == '.')
        .split([',', ' '])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    Some((marker, lang))
}

/// The lines of one fenced block; `shell` says whether it holds commands.
fn fenced(block: Vec<(usize, String)>, shell: bool) -> Vec<DocLine> {
    let prompted = |l: &str| l.trim_start().starts_with("$ ");
    // A block with prompts is a session: the prompted lines are commands,
    // the rest is what they printed.
    let session = block.iter().any(|(_, l)| prompted(l));
    let mut out: Vec<DocLine> = Vec::new();
    let mut continued = false;
    for (no, line) in block {
        let is_command = shell && (!session || prompted(&line) || continued);
        let text = if prompted(&line) && shell {
            line.trim_start()[2..].to_string()
        } else {
            line.clone()
        };
        if continued && is_command {
            // A `\` continuation belongs to the command above it.
            let last = out.last_mut().expect("a continued line follows a command");
            last.text.push(' ');
            last.text.push_str(text.trim());
        } else {
            let context = if is_command {
                Context::Command
            } else {
                Context::Code
            };
            out.push(DocLine {
                line: no,
                text,
                context,
            });
        }
        continued = is_command && line.trim_end().ends_with('\\');
        if continued {
            let last = out.last_mut().expect("just pushed");
            let trimmed = last
                .text
                .trim_end()
                .trim_end_matches('\\')
                .trim_end()
                .to_string();
            last.text = trimmed;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contexts(lines: &[DocLine]) -> Vec<(usize, &str, Context)> {
        lines
            .iter()
            .map(|l| (l.line, l.text.as_str(), l.context))
            .collect()
    }

    #[test]
    fn sessions_prose_and_continuations() {
        let doc = "See `cargo run\n-p x`.\n\n```text\n$ oxmera ladder\noxmera ladder  0 of 6\n```\n```sh\ncargo build \\\n  -p a\nls\n```\n```rust\nfn main() {}\n```\n";
        let lines = markdown(doc);
        assert_eq!(
            contexts(&lines),
            [
                (1, "See `cargo run -p x`.", Context::Prose),
                (3, "", Context::Prose),
                (5, "oxmera ladder", Context::Command),
                (6, "oxmera ladder  0 of 6", Context::Code),
                (9, "cargo build -p a", Context::Command),
                (11, "ls", Context::Command),
                (14, "fn main() {}", Context::Code),
            ]
        );
    }

    #[test]
    fn rust_docs_keep_line_numbers_and_bare_fences_are_rust() {
        let src =
            "//! Top `a`.\n//!\n//! ```\n//! oxmera train\n//! ```\nfn f() {}\n/// item doc\n";
        let lines = rust_docs(src);
        assert_eq!(
            contexts(&lines),
            [
                (1, "Top `a`.", Context::Prose),
                (2, "", Context::Prose),
                (4, "oxmera train", Context::Code),
            ]
        );
    }
}
