//! The docs-name-only-what-exists check: `cargo run -p xtask -- docrefs`.
//!
//! A doc that names a file, a crate, a package or a subcommand that is gone
//! sends a reader somewhere that does not exist, and nothing else fails
//! when it happens: a renamed file or a removed subcommand leaves every
//! test green. This check reads every doc and fails (exit 1) on each such
//! reference, printing `file:line: what is wrong`.
//!
//! # What is read
//!
//! Every `*.md` file in the repository, and the `//!` docs of every Rust
//! file under `crates/` (crate and module docs, tests' and examples' too),
//! skipping what git ignores (build and run output, see [`ignore`]).
//! `CHANGELOG.md` is history: its entries rightly name files, crates and
//! subcommands that were since renamed or removed, so only its markdown
//! links are checked (a link must lead somewhere whatever the entry says).
//!
//! # What is checked, and what is deliberately not
//!
//! - **Paths from the repository root**: a word containing `/` whose first
//!   component is a top-level entry of the repository (`crates/..`,
//!   `docs/..`, `scripts/..`, `exercises/..`, `.ci/..`) must exist.
//!   Relative paths such as `tests/foo.rs` are not checked: which crate
//!   they are relative to is only in the prose around them. Paths outside
//!   the tree (`../shared/..`, `/tmp/..`, `~/..`, `$out/..`) and URLs are
//!   not the repository's to check.
//! - **Markdown links** `[text](target)`, in prose, resolved from the doc's
//!   own directory, as a renderer does; `#anchors` and query strings are
//!   dropped, and a target that leaves the repository is not checked. In a
//!   `//!` doc only targets that look like files (a `/` or `.md`) count,
//!   since rustdoc's intra-doc links (`[x](crate::y)`) are the compiler's.
//! - **Doc names** written bare (`ROADMAP.md`): some file of that name
//!   must exist somewhere in the repository (which one the prose says).
//! - **Crate names** `oxmera-…` / `oxmera_…`: must be a package some
//!   `Cargo.toml` in the repository defines, or a name the Rust code itself
//!   uses outside comments (a label the bench prints, a `cfg` flag, a
//!   symbol an emitter writes): a doc that quotes what the code prints is
//!   true while the code prints it. A name right after a `/` is part of a
//!   path, which the path rule owns.
//! - **`cargo … -p PACKAGE`** (and `--package`) in a code span or a shell
//!   block: the package must be defined by a `Cargo.toml` in the
//!   repository (the exercise ladder's workspace counts).
//! - **`oxmera SUBCOMMAND …`** at the start of a command in a code span or
//!   a shell block (the binary by name or by path, `target/debug/oxmera`),
//!   and `cargo run -p oxmera-cli -- SUBCOMMAND`: each subcommand word must
//!   be one the CLI declares, at its level (`oxmera kernel check`), read
//!   from the CLI's source ([`cli`]), never from a list kept here.
//!
//! # What is not a reference
//!
//! - Placeholders: a word with `<…>`, `{…}`, `...`, `$`, or a glob
//!   (`*`, `?`) is a pattern, not a name; a missing path with a component
//!   in capitals (`FILE.rs`, `DIR/bench.json`, `lib.rs.N`) is a
//!   metavariable (a missing `*.md` is still reported: docs are never
//!   spelled as metavariables). `-p PACKAGE` and `oxmera SUB` with a word
//!   that is not lower-case kebab are placeholders too.
//! - Output: a path git ignores is something a command creates (`runs/`,
//!   `target/`); in a fenced block with `$ ` prompts only the prompted
//!   lines are commands, the rest is what they printed.
//! - A line holding `docrefs: ignore-line` (in an HTML comment, say) is not
//!   read: the one escape hatch, for a line the rules above misread. Use it
//!   with a reason beside it, and rather fix the rule if it misreads many.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

pub mod cli;
pub mod ignore;
pub mod markdown;
mod rules;

use ignore::Ignores;

/// The marker that exempts one line.
pub const IGNORE_LINE: &str = "docrefs: ignore-line";

/// One reference to something that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The doc, relative to the repository root, with `/` separators.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// The reference as written.
    pub reference: String,
    /// Why it does not resolve.
    pub why: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: `{}`: {}",
            self.file, self.line, self.reference, self.why
        )
    }
}

/// What one run read and found.
#[derive(Debug, Default)]
pub struct Report {
    /// Docs read (markdown files, and Rust files with a `//!` doc).
    pub docs: usize,
    /// References resolved (checked, whether or not they exist).
    pub references: usize,
    /// The broken ones.
    pub findings: Vec<Finding>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "docrefs ok: {} docs, {} references to files, crates, packages and subcommands checked",
            self.docs, self.references
        )
    }
}

/// What exists, gathered once from the tree: what the docs are checked against.
#[derive(Debug)]
pub struct Facts {
    /// The repository root.
    pub root: PathBuf,
    ignores: Ignores,
    /// Top-level entries that git does not ignore: what a root path starts with.
    roots: BTreeSet<String>,
    /// Every `[package] name` of a `Cargo.toml` in the tree.
    packages: BTreeSet<String>,
    /// `oxmera-…` names the Rust code uses outside comments, `_` as `-`.
    code_names: BTreeSet<String>,
    /// File names of the markdown files, for bare `NAME.md` references.
    doc_names: BTreeSet<String>,
    /// The CLI's binary, package and subcommands.
    cli: cli::Cli,
    markdown: Vec<PathBuf>,
    rust: Vec<PathBuf>,
}

/// Checks every doc under `root`; `Err` only when the tree cannot be read.
pub fn check(root: &Path) -> Result<Report, String> {
    let facts = Facts::gather(root)?;
    let mut report = Report::default();
    for rel in &facts.markdown {
        let lines = markdown::markdown(&read(root, rel)?);
        let links_only = rel == Path::new("CHANGELOG.md");
        rules::scan(&facts, rel, &lines, links_only, false, &mut report);
        report.docs += 1;
    }
    for rel in &facts.rust {
        let lines = markdown::rust_docs(&read(root, rel)?);
        if lines.is_empty() {
            continue;
        }
        rules::scan(&facts, rel, &lines, false, true, &mut report);
        report.docs += 1;
    }
    Ok(report)
}

fn read(root: &Path, rel: &Path) -> Result<String, String> {
    std::fs::read_to_string(root.join(rel)).map_err(|e| format!("{}: {e}", rel.display()))
}

impl Facts {
    /// Walks the tree at `root` once and reads the CLI's source.
    pub fn gather(root: &Path) -> Result<Facts, String> {
        let ignores = Ignores::new(root);
        let mut files = Vec::new();
        walk(root, Path::new(""), &ignores, &mut files)?;
        let roots = std::fs::read_dir(root)
            .map_err(|e| format!("{}: {e}", root.display()))?
            .filter_map(Result::ok)
            .filter(|e| !ignores.ignored(Path::new(&e.file_name()), e.path().is_dir()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let mut facts = Facts {
            root: root.to_path_buf(),
            cli: cli::read(root)?,
            ignores,
            roots,
            packages: BTreeSet::new(),
            code_names: BTreeSet::new(),
            doc_names: BTreeSet::new(),
            markdown: Vec::new(),
            rust: Vec::new(),
        };
        for rel in files {
            let name = rel
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name == "Cargo.toml" {
                if let Some(p) = cli::toml_value(&read(root, &rel)?, "[package]", "name") {
                    facts.packages.insert(p);
                }
            } else if name.ends_with(".md") {
                facts.doc_names.insert(name);
                facts.markdown.push(rel);
            } else if name.ends_with(".rs") {
                let text = read(root, &rel)?;
                for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                    for (_, n) in rules::oxmera_names(line) {
                        facts.code_names.insert(n.replace('_', "-"));
                    }
                }
                if rel.starts_with("crates") {
                    facts.rust.push(rel);
                }
            }
        }
        Ok(facts)
    }

    /// Whether `rel` is ignored by git (build or run output).
    fn ignored(&self, rel: &Path) -> bool {
        self.ignores.ignored(rel, self.root.join(rel).is_dir())
    }
}

/// Every file under `dir` that git does not ignore, sorted, relative to the root.
fn walk(root: &Path, dir: &Path, ignores: &Ignores, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let full = root.join(dir);
    let mut entries: Vec<_> = std::fs::read_dir(&full)
        .map_err(|e| format!("{}: {e}", full.display()))?
        .filter_map(Result::ok)
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let rel = dir.join(entry.file_name());
        // Symbolic links are not followed: a loop would never end.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if ignores.ignored(&rel, kind.is_dir()) {
            continue;
        }
        if kind.is_dir() {
            walk(root, &rel, ignores, out)?;
        } else if kind.is_file() {
            out.push(rel);
        }
    }
    Ok(())
}
