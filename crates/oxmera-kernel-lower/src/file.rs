//! A file of kernels: the command line's front door.
//!
//! `oxmera kernel check my_kernels.rs` reads a file the way `#[kernel]`
//! reads one function: every `fn` carrying the attribute (`#[kernel]`,
//! `#[kernel(block = [..])]` or a path ending in `kernel`, at the top level
//! or inside inline modules) is lowered by the same code, with the same
//! options, and refused with the same messages. `#[helper]` functions are
//! seen by the kernels of the same scope — the file's top level, or one
//! inline module — as a `#[kernels] mod` lets its kernels see its helpers
//! (the file is a module). Nothing is compiled: the file need not belong to
//! a crate, and other items in it (imports, plain functions, tests) are
//! skipped.
//!
//! The spans come from proc-macro2's own parser, which knows lines and
//! columns, so findings, simulator witnesses and lowering errors point into
//! the file itself, with the file's own text under the carets.

use std::fmt;
use std::path::Path;

use oxmera_kernel_ir::ir::{Kernel, SourceSpan, SourceText};

use crate::lower::Helpers;
use crate::options::{attribute_position, attribute_tokens, parse_attr};

/// The kernels of one source file, lowered and validated.
#[derive(Debug, Clone)]
pub struct KernelFile {
    /// The path as given, for messages and diagnostics.
    pub path: String,
    /// Every `#[kernel]` function, in file order.
    pub kernels: Vec<Kernel>,
    /// The other functions' names, so "no kernel named" can say that a
    /// function exists but lacks the attribute.
    pub plain_functions: Vec<String>,
}

impl KernelFile {
    /// The kernel named `name`.
    /// An instance may be named with or without the space after each comma
    /// (`pair<f32,i32>`).
    pub fn get(&self, name: &str) -> Option<&Kernel> {
        let bare = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        self.kernels.iter().find(|k| bare(&k.name) == bare(name))
    }

    /// The kernels written as `name`: the instances of a generic kernel
    /// (`axpy` gives `axpy<f32>`, `axpy<f64>`), or the one kernel of that
    /// name (`axpy<f32>` itself, or a kernel with no type parameters);
    /// empty when there is none.
    pub fn instances(&self, name: &str) -> Vec<&Kernel> {
        match self.get(name) {
            Some(k) => vec![k],
            None => self
                .kernels
                .iter()
                .filter(|k| !k.type_args.is_empty() && k.base_name() == name)
                .collect(),
        }
    }

    /// The kernels' names, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.kernels.iter().map(|k| k.name.as_str()).collect()
    }

    /// The kernel `name`, or with no name the file's only kernel; otherwise
    /// a message that lists what the file holds.
    pub fn pick(&self, name: Option<&str>) -> Result<&Kernel, String> {
        let listing = || {
            if self.kernels.is_empty() {
                "it holds no `#[kernel]` function".to_string()
            } else {
                format!("its kernels: {}", self.names().join(", "))
            }
        };
        match name {
            Some(n) => match self.instances(n).as_slice() {
                [k] => Ok(*k),
                [] => Err(()),
                several => {
                    let names: Vec<&str> = several.iter().map(|k| k.name.as_str()).collect();
                    return Err(format!(
                        "`{n}` is generic; choose an instance ({})",
                        names.join(", ")
                    ));
                }
            }
            .map_err(|()| {
                if self.plain_functions.iter().any(|f| f == n) {
                    format!(
                        "`{n}` in {} is a function without `#[kernel]`; mark it to lower it",
                        self.path
                    )
                } else {
                    format!("no kernel named `{n}` in {}; {}", self.path, listing())
                }
            }),
            None => match self.kernels.as_slice() {
                [k] => Ok(k),
                [] => Err(format!("{}: {}", self.path, listing())),
                _ => Err(format!(
                    "{} holds several kernels; name one ({})",
                    self.path,
                    self.names().join(", ")
                )),
            },
        }
    }
}

/// One error located in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedError {
    /// The message, with its hint.
    pub message: String,
    /// Where, when known.
    pub span: Option<SourceSpan>,
    /// The text of the span's first line.
    pub line_text: Option<String>,
}

/// Why a file's kernels could not be lowered: every error found, each
/// located in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// The path as given.
    pub path: String,
    /// The errors, in file order.
    pub errors: Vec<LocatedError>,
}

impl std::error::Error for FileError {}

impl fmt::Display for FileError {
    /// Each error as rustc prints one: the message, the location, the line
    /// and carets under the span.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "error: {}", e.message)?;
            let Some(sp) = &e.span else {
                writeln!(f, "  --> {}", self.path)?;
                continue;
            };
            let gutter = sp.line.to_string().len().max(2);
            let pad = " ".repeat(gutter);
            writeln!(f, "{pad}--> {}:{}:{}", self.path, sp.line, sp.column)?;
            if let Some(text) = &e.line_text {
                let text = text.trim_end();
                let start = sp.column.max(1) as usize - 1;
                let end = if sp.end_line == sp.line && sp.end_column > sp.column {
                    sp.end_column as usize - 1
                } else {
                    text.chars().count().max(start + 1)
                };
                writeln!(f, "{pad} |")?;
                writeln!(f, "{:>gutter$} | {text}", sp.line)?;
                writeln!(
                    f,
                    "{pad} | {}{}",
                    " ".repeat(start),
                    "^".repeat(end - start)
                )?;
            }
        }
        Ok(())
    }
}

impl FileError {
    fn single(path: &str, message: String) -> Self {
        FileError {
            path: path.to_string(),
            errors: vec![LocatedError {
                message,
                span: None,
                line_text: None,
            }],
        }
    }
}

/// Reads and lowers the kernels of the file at `path`.
pub fn read(path: &Path) -> Result<KernelFile, FileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| FileError::single(&shown, format!("cannot read {shown}: {e}")))?;
    lower_source(&shown, &text)
}

/// Lowers the kernels in `text`, which diagnostics call `path`.
pub fn lower_source(path: &str, text: &str) -> Result<KernelFile, FileError> {
    let located = |e: syn::Error| -> Vec<LocatedError> {
        e.into_iter()
            .map(|one| {
                let (a, b) = (one.span().start(), one.span().end());
                let span = (a.line > 0).then(|| SourceSpan {
                    line: a.line as u32,
                    column: a.column as u32 + 1,
                    end_line: b.line as u32,
                    end_column: b.column as u32 + 1,
                });
                LocatedError {
                    message: one.to_string(),
                    line_text: span
                        .as_ref()
                        .and_then(|s| text.lines().nth(s.line as usize - 1))
                        .map(str::to_string),
                    span,
                }
            })
            .collect()
    };
    let fail = |errors| FileError {
        path: path.to_string(),
        errors,
    };
    if text.starts_with('\u{feff}') || text.starts_with("#!") {
        // syn strips these before parsing, which would shift every line.
        return Err(FileError::single(
            path,
            "the file starts with a byte-order mark or a `#!` line; remove it".into(),
        ));
    }
    let parsed = syn::parse_file(text).map_err(|e| fail(located(e)))?;
    let mut found = Vec::new();
    let mut plain = Vec::new();
    let mut scopes = Vec::new();
    let mut errors = Vec::new();
    collect(
        &parsed.items,
        &mut found,
        &mut plain,
        &mut scopes,
        &mut |e| errors.extend(located(e)),
    );
    let mut kernels = Vec::new();
    for (f, attr, scope) in found {
        match lower_one(f, attr, &scopes[scope], path, text) {
            Ok(k) => kernels.extend(k),
            Err(e) => errors.extend(located(e)),
        }
    }
    if !errors.is_empty() {
        return Err(fail(errors));
    }
    Ok(KernelFile {
        path: path.to_string(),
        kernels,
        plain_functions: plain,
    })
}

/// A function marked `#[kernel]`, its attribute and the index of its
/// scope's helpers.
type Found<'a> = (&'a syn::ItemFn, &'a syn::Attribute, usize);

/// The attribute on `f` whose path ends in `name`.
fn marked<'a>(f: &'a syn::ItemFn, name: &str) -> Option<&'a syn::Attribute> {
    attribute_position(&f.attrs, name).map(|i| &f.attrs[i])
}

/// The functions marked `#[kernel]` (with their attribute and scope), the
/// helpers of each scope and the names of the other functions, from
/// `items` and the inline modules among them; a bad helper is reported to
/// `error`.
fn collect<'a>(
    items: &'a [syn::Item],
    kernels: &mut Vec<Found<'a>>,
    plain: &mut Vec<String>,
    scopes: &mut Vec<Helpers>,
    error: &mut dyn FnMut(syn::Error),
) {
    let scope = scopes.len();
    scopes.push(Helpers::new());
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if let Some(a) = marked(f, "kernel") {
                    kernels.push((f, a, scope));
                } else if marked(f, "helper").is_some() {
                    if let Err(e) = scopes[scope].add(f) {
                        error(e);
                    }
                } else {
                    plain.push(f.sig.ident.to_string());
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect(inner, kernels, plain, scopes, error);
                }
            }
            _ => {}
        }
    }
}

/// Lowers one `#[kernel]` function: its instances, or itself alone when it
/// has no type parameters.
fn lower_one(
    f: &syn::ItemFn,
    attr: &syn::Attribute,
    helpers: &Helpers,
    path: &str,
    text: &str,
) -> syn::Result<Vec<Kernel>> {
    let options = parse_attr(attribute_tokens(attr)?)?;
    let instances = crate::generics::lower_instances(f, &options.launch, helpers, &options.dtypes)?;
    instances
        .into_iter()
        .map(|lowered| {
            let mut kernel = lowered.kernel;
            kernel.launch.search = options.resolve_search(&kernel)?;
            oxmera_kernel_ir::validate::validate(&kernel).map_err(|e| {
                syn::Error::new_spanned(
                    &f.sig.ident,
                    format!("internal: invalid IR of {}: {e}", kernel.name),
                )
            })?;
            kernel.spans = lowered
                .spans
                .iter()
                .map(|s| {
                    s.position().unwrap_or(SourceSpan {
                        line: 0,
                        column: 0,
                        end_line: 0,
                        end_column: 0,
                    })
                })
                .collect();
            // The whole file is the kernel's text, so diagnostics can show any of
            // its lines, the signature's included.
            kernel.source = SourceText {
                file: path.to_string(),
                first_line: 1,
                first_column: 1,
                text: text.to_string(),
            };
            kernel.refresh_snippets();
            Ok(kernel)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "use oxmera_kernel::kernel;

/// Adds.
#[kernel(block = [64, 128])]
pub fn add(a: &[f32], b: &[f32], out: &mut [f32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        out[i] = a[i] + b[i];
    }
}

fn helper() {}

mod inner {
    #[oxmera_kernel::kernel]
    fn twice(x: &mut [u32]) {
        x[thread_idx_x()] *= 2;
    }
}
";

    #[test]
    fn finds_every_marked_function_and_points_spans_into_the_file() {
        let f = lower_source("k.rs", FILE).unwrap();
        assert_eq!(f.names(), ["add", "twice"]);
        assert_eq!(f.plain_functions, ["helper"]);
        let add = f.get("add").unwrap();
        assert_eq!(add.launch.blocks.len(), 2);
        assert_eq!(add.source.file, "k.rs");
        // Span 0 is the name: line 5, the column of `add` (1-based).
        let s = add.span(0);
        assert_eq!((s.line, s.column, s.end_column), (5, 8, 11));
        // Snippets are the file's own text.
        assert!(add.snippets.iter().any(|s| s == "out[i] = a[i] + b[i]"));
        let err = f.pick(Some("helper")).unwrap_err();
        assert!(err.contains("without `#[kernel]`"), "{err}");
        let err = f.pick(None).unwrap_err();
        assert!(err.contains("add, twice"), "{err}");
        assert_eq!(f.pick(Some("twice")).unwrap().name, "twice");
    }

    #[test]
    fn errors_point_at_the_construct_with_the_files_line() {
        let text = "#[kernel]\nfn k(out: &mut [f32]) {\n    let x = 1.0;\n    x = 2.0;\n}\n";
        let e = lower_source("bad.rs", text).unwrap_err();
        let shown = e.to_string();
        assert!(shown.contains("error: `x` is not mutable"), "{shown}");
        assert!(shown.contains("--> bad.rs:4:5"), "{shown}");
        assert!(shown.contains("4 |     x = 2.0;"), "{shown}");
        assert!(shown.contains("   |     ^"), "{shown}");
    }

    #[test]
    fn syntax_errors_and_bad_options_are_located_too() {
        let e = lower_source("s.rs", "#[kernel]\nfn k( {\n").unwrap_err();
        assert!(e.errors[0].span.is_some(), "{e}");
        let e =
            lower_source("o.rs", "#[kernel(blocks = [64])]\nfn k(x: &mut [f32]) {}\n").unwrap_err();
        assert!(e.to_string().contains("unknown kernel option"), "{e}");
        assert!(e.to_string().contains("--> o.rs:1:10"), "{e}");
    }

    #[test]
    fn a_missing_file_is_an_error_not_a_panic() {
        let e = read(Path::new("/nonexistent/dir/k.rs")).unwrap_err();
        assert!(e.to_string().contains("cannot read"), "{e}");
    }
}
