//! Which kernels a command names: a built-in kernel (the library's or the
//! broken-kernel corpus's) or the `#[kernel]` functions of a Rust file.
//!
//! An argument ending in `.rs` or holding a path separator is a file;
//! anything else is a built-in name. A file is read and lowered by the same
//! lowering `#[kernel]` uses, so its errors read like the compiler's and
//! point into the file.

use std::path::Path;

use oxmera_kernel::ir::Kernel;
use oxmera_kernel::registry::{self, Entry};

/// The kernels a command works on.
pub struct Picked {
    /// One kernel, or every kernel of a file when no name narrowed it and
    /// the command takes several.
    pub kernels: Vec<&'static Kernel>,
    /// The registry entry of a built-in kernel (which has a seeded demo);
    /// `None` for a file's kernel.
    pub entry: Option<Entry>,
}

/// Why no kernel was picked.
pub enum Failure {
    /// A bad name or a missing file: one line.
    Usage(String),
    /// The file's kernels do not lower: rendered diagnostics.
    Source(String),
}

/// True when the argument names a file rather than a built-in kernel.
pub fn is_file(arg: &str) -> bool {
    arg.ends_with(".rs") || arg.contains('/') || arg.contains(std::path::MAIN_SEPARATOR)
}

/// The kernels `first` (a built-in name or a file) and `name` (a kernel in
/// that file) pick. With `several`, a file and no name pick every kernel in
/// the file; otherwise exactly one is needed.
pub fn pick(first: &str, name: Option<&str>, several: bool) -> Result<Picked, Failure> {
    if !is_file(first) {
        if let Some(n) = name {
            return Err(Failure::Usage(format!(
                "`{first}` is a built-in kernel, so `{n}` is one name too many \
                 (a second name picks a kernel in a FILE.rs)"
            )));
        }
        let entry = registry::find(first).ok_or_else(|| {
            Failure::Usage(format!(
                "no kernel named `{first}`; `oxmera kernel list` shows the built-in ones, \
                 and a path to a .rs file reads your own"
            ))
        })?;
        return Ok(Picked {
            kernels: vec![(entry.kernel)()],
            entry: Some(entry),
        });
    }
    let file = oxmera_kernel_lower::file::read(Path::new(first))
        .map_err(|e| Failure::Source(e.to_string()))?;
    let kernels: Vec<Kernel> = if several && name.is_none() && !file.kernels.is_empty() {
        file.kernels.clone()
    } else {
        vec![file.pick(name).map_err(Failure::Usage)?.clone()]
    };
    // The process runs one command and exits: the kernels live as long as
    // it, like the built-ins, so every tool and backend takes them alike.
    Ok(Picked {
        kernels: kernels
            .into_iter()
            .map(|k| &*Box::leak(Box::new(k)))
            .collect(),
        entry: None,
    })
}
