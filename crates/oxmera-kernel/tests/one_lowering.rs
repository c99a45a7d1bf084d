//! One lowering, two front doors: every registered kernel, read back from
//! its source file the way `oxmera kernel check FILE.rs` reads it, lowers
//! to exactly the IR `#[kernel]` built at compile time — the same
//! parameters, locals, body and launch space, and spans on the same lines
//! and columns with the same snippets.

use std::collections::HashMap;
use std::path::Path;

use oxmera_kernel::registry;
use oxmera_kernel_lower::file::{KernelFile, read};

#[test]
fn every_registered_kernel_lowers_the_same_from_its_file() {
    // `file!()` is relative to the workspace root.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: HashMap<String, KernelFile> = HashMap::new();
    let entries = registry::entries();
    assert!(entries.len() > 40, "{} kernels", entries.len());
    for e in entries {
        let built = (e.kernel)();
        let path = &built.source.file;
        let file = files
            .entry(path.clone())
            .or_insert_with(|| read(&root.join(path)).unwrap_or_else(|err| panic!("{err}")));
        let read_back = file
            .get(&built.name)
            .unwrap_or_else(|| panic!("`{}` not found in {path}", built.name));
        // The first differing span or snippet, named, before the whole.
        for (i, (a, b)) in read_back.spans.iter().zip(&built.spans).enumerate() {
            assert_eq!(a, b, "`{}` span {i} `{}`", built.name, built.snippets[i]);
        }
        // The attribute reads the text of the body only, so a signature's
        // snippets (parameters) keep the tokens' spelling; the file reader
        // has the whole file and restores them. Inside the body: identical.
        let body = (built.source.first_line, built.source.first_column);
        let in_body = |i: usize| (built.spans[i].line, built.spans[i].column) >= body;
        for (i, (a, b)) in read_back.snippets.iter().zip(&built.snippets).enumerate() {
            if in_body(i) {
                assert_eq!(a, b, "`{}` snippet {i}", built.name);
            }
        }
        let mut same = read_back.clone();
        same.snippets = built.snippets.clone();
        // Only where the text comes from differs: the attribute keeps the
        // body, the file reader the whole file.
        same.source = built.source.clone();
        assert_eq!(&same, built, "`{}` from {path}", built.name);
    }
    assert!(files.len() >= 5, "{} files", files.len());
}
