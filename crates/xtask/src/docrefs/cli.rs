//! The subcommands of the `oxmera` binary, read from its clap source.
//!
//! The docs are checked against the CLI's own declaration, so adding or
//! renaming a subcommand changes what the docs may say with no list here to
//! update. Why the source and not `oxmera --help`: this check runs before
//! anything else is built and must stay fast, and the derive definitions
//! are the one place the subcommands are declared.
//!
//! The reader follows the shape the CLI uses, structurally: the struct that
//! derives `Parser` names its `#[command(subcommand)]` field's type; that
//! enum's variants are the subcommands (kebab-cased, as clap does, unless
//! `#[command(name = "..")]` renames one; `alias`es count too); a tuple
//! variant's payload type is a struct whose own `#[command(subcommand)]`
//! field leads one level down, and so on. clap adds `help` at every level.
//! If the source stops matching that shape the reader fails with an error
//! instead of returning a shorter list, so the check cannot quietly stop
//! checking.

use std::collections::BTreeMap;
use std::path::Path;

/// Where the CLI crate lives, relative to the repository root.
pub const CLI_DIR: &str = "crates/oxmera-cli";

/// One level of subcommands: each name, and the level below it if any.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Level {
    /// Subcommand name to the subcommands it takes (None: it takes none).
    pub subs: BTreeMap<String, Option<Level>>,
}

/// What the docs may say about the CLI.
#[derive(Debug, Clone)]
pub struct Cli {
    /// The binary's name (`oxmera`), from the manifest's `[[bin]]`.
    pub bin: String,
    /// The package that builds it (`oxmera-cli`), for `cargo run -p`.
    pub package: String,
    /// The top-level subcommands.
    pub top: Level,
}

/// Reads the CLI crate under `root`.
pub fn read(root: &Path) -> Result<Cli, String> {
    let dir = root.join(CLI_DIR);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
        .map_err(|e| format!("{CLI_DIR}/Cargo.toml: {e}"))?;
    let package = toml_value(&manifest, "[package]", "name")
        .ok_or_else(|| format!("{CLI_DIR}/Cargo.toml: no [package] name"))?;
    // The binary may be named apart from the package (`oxmera` vs `oxmera-cli`).
    let bin = toml_value(&manifest, "[[bin]]", "name").unwrap_or_else(|| package.clone());
    let mut files = Vec::new();
    let src = dir.join("src");
    collect_rs(&src, &src, &mut files)?;
    let source = Source { files };
    // The Parser of the binary's own root file: a test module elsewhere may
    // derive one too.
    let main = toml_value(&manifest, "[[bin]]", "path").unwrap_or_else(|| "src/main.rs".into());
    let main = main.trim_start_matches("src/").trim_end_matches(".rs");
    let (file, root_struct) = source
        .parser_struct(main)
        .ok_or_else(|| format!("{CLI_DIR}/src: no struct derives clap's Parser"))?;
    let top = source
        .level_of_struct(&root_struct, file, 0)?
        .ok_or_else(|| {
            format!("{CLI_DIR}/src: {root_struct} has no #[command(subcommand)] field")
        })?;
    Ok(Cli { bin, package, top })
}

/// The value of `key = "..."` in the first `section` of a manifest.
pub fn toml_value(manifest: &str, section: &str, key: &str) -> Option<String> {
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == section;
            continue;
        }
        if !inside {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if k.trim() == key {
            let v = v.trim();
            return v
                .strip_prefix('"')
                .and_then(|v| v.split('"').next())
                .map(str::to_string);
        }
    }
    None
}

fn collect_rs(src: &Path, dir: &Path, out: &mut Vec<SourceFile>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_rs(src, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            // `kernel/mod.rs` and `kernel.rs` both hold module `kernel`.
            let rel = path.strip_prefix(src).unwrap_or(&path).with_extension("");
            let module = rel
                .to_string_lossy()
                .replace('\\', "/")
                .trim_end_matches("/mod")
                .replace('/', "::");
            out.push(SourceFile {
                module,
                lines: text.lines().map(str::to_string).collect(),
            });
        }
    }
    Ok(())
}

/// One source file of the CLI.
struct SourceFile {
    /// Its module path from the crate root (`kernel`, `doctor::probe`).
    module: String,
    lines: Vec<String>,
}

/// The CLI's source files.
struct Source {
    files: Vec<SourceFile>,
}

/// Deeper than any real CLI; stops a type that names itself from looping.
const MAX_DEPTH: usize = 6;

impl Source {
    /// The file and name of the struct under `#[derive(.. Parser ..)]`.
    /// `main_module`'s file is searched first.
    fn parser_struct(&self, main_module: &str) -> Option<(usize, String)> {
        let mut order: Vec<usize> = (0..self.files.len()).collect();
        order.sort_by_key(|&f| self.files[f].module != main_module);
        for f in order {
            let lines = &self.files[f].lines;
            for (i, line) in lines.iter().enumerate() {
                if !(line.contains("derive(") && has_word(line, "Parser")) {
                    continue;
                }
                // The struct follows its attributes and doc comments.
                for next in &lines[i + 1..] {
                    if let Some(name) = item_name(next, "struct") {
                        return Some((f, name));
                    }
                }
            }
        }
        None
    }

    /// The file and body lines (between its braces) of `struct NAME` or
    /// `enum NAME`. A type path (`kernel::KernelArgs`) is looked up in its
    /// module's file first, a bare name in `near`'s: a test module may
    /// declare a struct of the same name elsewhere.
    fn body(&self, keyword: &str, path: &str, near: usize) -> Option<(usize, Vec<String>)> {
        let name = last_segment(path);
        let module = path.rsplit_once("::").map(|(m, _)| m);
        let mut order: Vec<usize> = (0..self.files.len()).collect();
        order.sort_by_key(|&f| {
            let own = &self.files[f].module;
            let named = module.is_some_and(|m| own == m || own.ends_with(&format!("::{m}")));
            (!named, f != near)
        });
        for f in order {
            let lines = &self.files[f].lines;
            let Some(start) = lines
                .iter()
                .position(|l| item_name(l, keyword).as_deref() == Some(name))
            else {
                continue;
            };
            let mut depth = 0i32;
            let mut body = Vec::new();
            for line in &lines[start..] {
                let code = strip_comment(line);
                let opened = depth > 0;
                depth += code.matches('{').count() as i32 - code.matches('}').count() as i32;
                if opened && depth > 0 {
                    body.push(line.clone());
                }
                if opened && depth <= 0 {
                    return Some((f, body));
                }
                // A one-line item: its body is what its braces hold.
                if !opened && depth == 0 && code.contains('{') {
                    let inner = &code[code.find('{')? + 1..code.rfind('}')?];
                    return Some((f, vec![inner.to_string()]));
                }
                // A unit or tuple struct has no body.
                if !opened && depth == 0 && code.trim_end().ends_with(';') {
                    return Some((f, body));
                }
            }
            return Some((f, body));
        }
        None
    }

    /// The subcommands reached through a struct's `#[command(subcommand)]`
    /// field; `None` when the struct has no such field (a leaf command).
    fn level_of_struct(
        &self,
        path: &str,
        near: usize,
        depth: usize,
    ) -> Result<Option<Level>, String> {
        let name = last_segment(path);
        let Some((file, body)) = self.body("struct", path, near) else {
            // A payload type defined outside the CLI's source takes no subcommands.
            return Ok(None);
        };
        let Some(at) = body
            .iter()
            .position(|l| l.contains("#[command(subcommand)]"))
        else {
            return Ok(None);
        };
        let field = body[at + 1..]
            .iter()
            .find(|l| !l.trim().starts_with("#[") && !l.trim().starts_with("//"))
            .ok_or_else(|| format!("{name}: #[command(subcommand)] on no field"))?;
        let ty = field
            .split_once(':')
            .map(|(_, t)| t.trim().trim_end_matches(',').trim())
            .ok_or_else(|| {
                format!(
                    "{name}: cannot read the subcommand field `{}`",
                    field.trim()
                )
            })?;
        let ty = ty
            .strip_prefix("Option<")
            .and_then(|t| t.strip_suffix('>'))
            .unwrap_or(ty);
        self.level_of_enum(ty, file, depth).map(Some)
    }

    /// The variants of a `Subcommand` enum, each with its own level.
    fn level_of_enum(&self, path: &str, near: usize, depth: usize) -> Result<Level, String> {
        let name = last_segment(path);
        if depth > MAX_DEPTH {
            return Err(format!("{name}: subcommands nest deeper than {MAX_DEPTH}"));
        }
        let (file, body) = self
            .body("enum", path, near)
            .ok_or_else(|| format!("no enum {name} in {CLI_DIR}/src"))?;
        let mut level = Level::default();
        let mut nesting = 0i32;
        let mut renamed: Option<String> = None;
        let mut aliases: Vec<String> = Vec::new();
        for line in &body {
            let code = strip_comment(line).trim().to_string();
            if nesting == 0 && code.starts_with("#[command(") {
                renamed = attr_string(&code, "name").or(renamed);
                aliases.extend(
                    ["alias", "visible_alias"]
                        .iter()
                        .filter_map(|k| attr_string(&code, k)),
                );
            } else if nesting == 0 && code.starts_with(|c: char| c.is_ascii_uppercase()) {
                let ident: String = code
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let rest = code[ident.len()..].trim_start();
                let below = match rest.strip_prefix('(') {
                    Some(payload) => {
                        let ty = payload.split(')').next().unwrap_or("").trim();
                        self.level_of_struct(ty, file, depth + 1)?
                    }
                    None => None,
                };
                let sub = renamed.take().unwrap_or_else(|| kebab(&ident));
                for alias in aliases.drain(..) {
                    level.subs.insert(alias, below.clone());
                }
                level.subs.insert(sub, below);
            }
            nesting += code.matches('{').count() as i32 - code.matches('}').count() as i32;
        }
        if level.subs.is_empty() {
            return Err(format!(
                "enum {name} in {CLI_DIR}/src has no variants I can read"
            ));
        }
        level.subs.insert("help".into(), None);
        Ok(level)
    }
}

/// `Foo` from a line declaring `struct Foo` or `pub enum Foo<..> {`.
fn item_name(line: &str, keyword: &str) -> Option<String> {
    let code = strip_comment(line);
    let mut words = code.split_whitespace();
    while let Some(w) = words.next() {
        if w == keyword {
            let name: String = words
                .next()?
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            return (!name.is_empty()).then_some(name);
        }
        if !matches!(w, "pub" | "pub(crate)" | "pub(super)") {
            return None;
        }
    }
    None
}

/// The string given to `key = "..."` inside an attribute.
fn attr_string(attr: &str, key: &str) -> Option<String> {
    let mut rest = attr;
    while let Some(at) = rest.find(key) {
        let before = rest[..at].chars().last();
        let after = rest[at + key.len()..].trim_start();
        rest = &rest[at + key.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(value) = after.strip_prefix('=') {
            let value = value.trim_start().strip_prefix('"')?;
            return value.split('"').next().map(str::to_string);
        }
    }
    None
}

fn has_word(line: &str, word: &str) -> bool {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

fn last_segment(path: &str) -> &str {
    let path = path.split('<').next().unwrap_or(path);
    path.rsplit("::").next().unwrap_or(path).trim()
}

fn strip_comment(line: &str) -> &str {
    line.find("//").map_or(line, |at| &line[..at])
}

/// clap's default subcommand name: `DryRun` becomes `dry-run`.
pub fn kebab(ident: &str) -> String {
    let mut out = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(files: &[(&str, &str)]) -> Source {
        Source {
            files: files
                .iter()
                .map(|(module, text)| SourceFile {
                    module: module.to_string(),
                    lines: text.lines().map(str::to_string).collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn kebab_case_is_clap_s() {
        assert_eq!(kebab("Train"), "train");
        assert_eq!(kebab("DryRun"), "dry-run");
    }

    #[test]
    fn nested_levels_renames_and_aliases() {
        let main = r#"
#[derive(Debug, Parser)]
#[command(name = "oxmera")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}
#[derive(Debug, Subcommand)]
enum Command {
    /// Train { something }.
    Train(train::TrainArgs),
    #[command(name = "k", alias = "kern")]
    Kernel(kernel::KernelArgs),
    Doctor,
}
"#;
        let kernel = r#"
pub struct KernelArgs {
    #[command(subcommand)]
    command: Option<KernelCommand>,
}
#[derive(Debug, clap::Subcommand)]
enum KernelCommand {
    List,
    Check {
        /// The block.
        #[arg(long)]
        block: Option<String>,
    },
    DryRun { x: u32 },
}
pub struct TrainArgs {
    #[arg(long)]
    epochs: u32,
}
"#;
        // A test module's struct of the same name must not be taken for it.
        let decoy = "mod tests {\n    struct KernelArgs {\n        x: u32,\n    }\n}\n";
        let s = source(&[("conformance", decoy), ("main", main), ("kernel", kernel)]);
        let (file, root) = s.parser_struct("main").unwrap();
        let top = s.level_of_struct(&root, file, 0).unwrap().unwrap();
        let names: Vec<_> = top.subs.keys().cloned().collect();
        assert_eq!(names, ["doctor", "help", "k", "kern", "train"]);
        assert_eq!(top.subs["train"], None);
        let k = top.subs["k"].as_ref().unwrap();
        let names: Vec<_> = k.subs.keys().cloned().collect();
        assert_eq!(names, ["check", "dry-run", "help", "list"]);
    }

    #[test]
    fn a_shape_it_cannot_read_is_an_error() {
        let s = source(&[(
            "main",
            "#[derive(Parser)]\nstruct Cli {\n    #[command(subcommand)]\n    c: Missing,\n}\n",
        )]);
        assert!(s.level_of_struct("Cli", 0, 0).is_err());
    }

    #[test]
    fn manifest_values() {
        let m = "[package]\nname = \"oxmera-cli\"\n\n[[bin]]\nname = \"oxmera\"\npath = \"src/main.rs\"\n";
        assert_eq!(
            toml_value(m, "[package]", "name").as_deref(),
            Some("oxmera-cli")
        );
        assert_eq!(toml_value(m, "[[bin]]", "name").as_deref(), Some("oxmera"));
        assert_eq!(toml_value(m, "[lib]", "name"), None);
    }
}
