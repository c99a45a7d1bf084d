//! The broken-kernel corpus.

use crate::registry::Entry;

/// The corpus kernels for the registry.
pub fn entries() -> Vec<Entry> {
    Vec::new()
}
