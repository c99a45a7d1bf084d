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
/// the file, and a generic kernel every instance; otherwise exactly one is
/// needed. `dtype` (`f64`, or `f32,i32` for several type parameters) picks
/// the instance of a generic kernel.
pub fn pick(
    first: &str,
    name: Option<&str>,
    dtype: Option<&str>,
    several: bool,
) -> Result<Picked, Failure> {
    if !is_file(first) {
        if let Some(n) = name {
            return Err(Failure::Usage(format!(
                "`{first}` is a built-in kernel, so `{n}` is one name too many \
                 (a second name picks a kernel in a FILE.rs)"
            )));
        }
        let entries = registry::instances(first);
        if entries.is_empty() {
            return Err(Failure::Usage(format!(
                "no kernel named `{first}`; `oxmera kernel list` shows the built-in ones, \
                 and a path to a .rs file reads your own"
            )));
        }
        let kernels: Vec<&'static Kernel> = entries.iter().map(|e| (e.kernel)()).collect();
        let chosen = choose(first, &kernels, dtype, several).map_err(Failure::Usage)?;
        let entry = match chosen.as_slice() {
            [k] => entries.into_iter().find(|e| std::ptr::eq((e.kernel)(), *k)),
            _ => None,
        };
        return Ok(Picked {
            kernels: chosen,
            entry,
        });
    }
    let file = oxmera_kernel_lower::file::read(Path::new(first))
        .map_err(|e| Failure::Source(e.to_string()))?;
    // The process runs one command and exits: the kernels live as long as
    // it, like the built-ins, so every tool and backend takes them alike.
    let leaked: Vec<&'static Kernel> = file
        .kernels
        .iter()
        .map(|k| &*Box::leak(Box::new(k.clone())))
        .collect();
    let same_base = leaked
        .first()
        .is_some_and(|k0| leaked.iter().all(|k| k.base_name() == k0.base_name()));
    let candidates: Vec<&'static Kernel> = match name {
        Some(n) => {
            let found: Vec<&str> = file.instances(n).iter().map(|k| k.name.as_str()).collect();
            if found.is_empty() {
                // Says why: a plain function, or what the file holds.
                return Err(Failure::Usage(file.pick(Some(n)).err().unwrap_or_default()));
            }
            leaked
                .into_iter()
                .filter(|k| found.contains(&k.name.as_str()))
                .collect()
        }
        // One kernel, generic or not: its instances.
        None if same_base => leaked,
        None if several && dtype.is_none() && !leaked.is_empty() => {
            return Ok(Picked {
                kernels: leaked,
                entry: None,
            });
        }
        None if dtype.is_some() && !leaked.is_empty() => {
            return Err(Failure::Usage(format!(
                "{first} holds several kernels; name the one --dtype picks an instance of ({})",
                file.names().join(", ")
            )));
        }
        None => {
            let only = file.pick(None).map_err(Failure::Usage)?;
            let at = file.kernels.iter().position(|k| std::ptr::eq(k, only));
            vec![leaked[at.expect("picked from the file")]]
        }
    };
    let label = name.unwrap_or_else(|| candidates.first().map_or(first, |k| k.base_name()));
    let kernels = choose(label, &candidates, dtype, several).map_err(Failure::Usage)?;
    Ok(Picked {
        kernels,
        entry: None,
    })
}

/// Narrows the kernels written as `label` (a generic kernel's instances,
/// or one kernel) to what the command takes: the instance `dtype` names,
/// else all of them when the command takes `several`, else the only one.
fn choose(
    label: &str,
    candidates: &[&'static Kernel],
    dtype: Option<&str>,
    several: bool,
) -> Result<Vec<&'static Kernel>, String> {
    let listing = || {
        candidates
            .iter()
            .map(|k| k.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let generic = candidates.iter().any(|k| !k.type_args.is_empty());
    match dtype {
        Some(_) if !generic => Err(format!(
            "`{label}` has no type parameters; --dtype picks an instance of a generic kernel"
        )),
        Some(d) => {
            let wanted: Vec<&str> = d.split(',').map(str::trim).collect();
            let chosen: Vec<&'static Kernel> = candidates
                .iter()
                .copied()
                .filter(|k| {
                    k.type_args
                        .iter()
                        .map(|(_, s)| s.name())
                        .eq(wanted.iter().copied())
                })
                .collect();
            if chosen.is_empty() {
                Err(format!(
                    "`{label}` has no instance for --dtype {d}; its instances: {}",
                    listing()
                ))
            } else {
                Ok(chosen)
            }
        }
        None if candidates.len() > 1 && !several => Err(format!(
            "`{label}` is generic; choose an instance with --dtype ({})",
            listing()
        )),
        None => Ok(candidates.to_vec()),
    }
}
