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

/// A named kernel.
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

/// Looks a kernel up by name.
pub fn find(name: &str) -> Option<Entry> {
    entries().into_iter().find(|e| e.name == name)
}
