//! The built-in corpus: it parses, it covers every backend op, and the
//! reference passes against itself.

use std::collections::BTreeSet;

use oxmera_conformance::{Composite, Corpus, LayoutClass, backend_op_names, run_corpus};
use oxmera_core::{DType, Device};

#[test]
fn the_corpus_parses_and_covers_every_backend_op() {
    let corpus = Corpus::builtin().expect("the built-in corpus parses");
    let covered = corpus.op_names();
    let missing: Vec<_> = backend_op_names()
        .into_iter()
        .filter(|op| !covered.contains(op))
        .collect();
    assert!(missing.is_empty(), "ops without a case: {missing:?}");
    let missing: Vec<_> = Composite::names()
        .into_iter()
        .filter(|op| !covered.contains(op))
        .collect();
    assert!(missing.is_empty(), "composites without a case: {missing:?}");

    // The backward kernels of the trait are reached through gradient runs.
    for op in ["conv2d", "max_pool2d", "avg_pool2d"] {
        assert!(
            corpus.cases().iter().any(|c| c.op.name() == op && c.grad),
            "{op} has no gradient case"
        );
    }
}

#[test]
fn the_corpus_reaches_every_dtype_and_layout_class() {
    let corpus = Corpus::builtin().unwrap();
    let dtypes: BTreeSet<DType> = corpus
        .cases()
        .iter()
        .flat_map(|c| c.dtypes.clone())
        .collect();
    assert_eq!(dtypes.len(), DType::ALL.len(), "{dtypes:?}");
    let classes: BTreeSet<LayoutClass> = corpus
        .cases()
        .iter()
        .flat_map(|c| c.layouts.clone())
        .collect();
    assert_eq!(classes.len(), LayoutClass::ALL.len(), "{classes:?}");
    // Every float op that has a case has one in every float dtype except
    // where a case says otherwise; at least f32 must be there for each.
    for op in corpus.op_names() {
        let has_f32 = corpus.cases().iter().any(|c| {
            c.op.name() == op && c.dtypes.iter().any(|d| !d.is_float() || *d == DType::F32)
        });
        assert!(has_f32, "{op} has no f32 (or non-float) case");
    }
}

#[test]
fn the_reference_passes_against_itself() {
    let corpus = Corpus::builtin().unwrap();
    let report = run_corpus(&corpus, Device::Reference, None);
    assert!(report.passed(), "{report}");
    assert!(report.runs() > 500, "only {} runs", report.runs());
    // Against itself every comparison is bit-exact.
    for row in report.rows() {
        assert_eq!(row.forward.worst, 0.0, "{row:?}");
        if let Some(b) = row.backward {
            assert_eq!(b.worst, 0.0, "{row:?}");
        }
    }
}
