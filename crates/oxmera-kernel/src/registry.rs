//! Every named kernel the `oxmera kernel` commands know: the library and the
//! broken-kernel corpus.

use crate::ir::Kernel;

/// Where a kernel comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The kernel library.
    Library,
    /// The broken-kernel corpus.
    Corpus,
}

/// A named kernel: one instance of a generic kernel is an entry of its own,
/// named after it (`axpy<f32>`).
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Its name.
    pub name: &'static str,
    /// One line about it.
    pub summary: &'static str,
    /// Builds its IR.
    pub kernel: fn() -> &'static Kernel,
    /// Library or corpus.
    pub origin: Origin,
}

/// Every registered kernel, library first.
pub fn entries() -> Vec<Entry> {
    let mut v = crate::library::entries();
    v.extend(crate::corpus::entries());
    v
}

/// Looks a kernel up by name; an instance may be named with or without the
/// space after each comma (`pair<f32,i32>`).
pub fn find(name: &str) -> Option<Entry> {
    entries().into_iter().find(|e| bare(e.name) == bare(name))
}

/// The entries written as `name`: every instance of a generic kernel
/// (`axpy` gives `axpy<f32>`, ..), or the one entry named `name` exactly;
/// empty when there is none.
pub fn instances(name: &str) -> Vec<Entry> {
    if let Some(e) = find(name) {
        return vec![e];
    }
    entries()
        .into_iter()
        .filter(|e| e.name.split_once('<').is_some_and(|(base, _)| base == name))
        .collect()
}

/// A name without whitespace, for comparing instance names.
fn bare(name: &str) -> String {
    name.chars().filter(|c| !c.is_whitespace()).collect()
}
