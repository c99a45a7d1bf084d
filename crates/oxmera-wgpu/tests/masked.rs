//! An adapter without `f64` (as Metal is): the conformance corpus declines
//! exactly the cases with an `f64` input or result and passes every other, and an
//! adapter without `i64` loses nothing (the kernels treat `i64` as word
//! pairs). The features are hidden by `OXMERA_WGPU_MASK`, read once per
//! process, so the test runs itself again in a child process with it set.
#![cfg(feature = "wgpu")]

use std::collections::BTreeSet;

use oxmera_conformance::{Corpus, Op};
use oxmera_core::{DType, Error};

mod common;
use common::gpu;

const TEST: &str = "without_f64_exactly_the_f64_cases_are_declined";

#[test]
fn without_f64_exactly_the_f64_cases_are_declined() {
    if std::env::var("OXMERA_WGPU_MASK").is_err() {
        // The parent: run this test alone in a child with the mask set.
        let exe = std::env::current_exe().expect("the test binary");
        let status = std::process::Command::new(exe)
            .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env("OXMERA_WGPU_MASK", "f64,i64")
            .status()
            .expect("the child test process starts");
        assert!(status.success(), "the masked run failed: {status}");
        return;
    }
    let Some(d) = gpu() else { return };
    let probe = oxmera_wgpu::probe().expect("the probe");
    assert!(
        !probe[0].features.contains(&"f64") && !probe[0].features.contains(&"i64"),
        "{}",
        probe[0]
    );
    let corpus = Corpus::builtin().expect("the corpus");
    let want: BTreeSet<(String, DType)> = corpus
        .cases()
        .iter()
        .flat_map(|case| {
            case.dtypes
                .iter()
                .filter(|&&dt| {
                    (0..case.inputs.len()).any(|i| case.input_dtype(i, dt) == DType::F64)
                        || matches!(case.op, Op::Cast(DType::F64))
                })
                .map(|&dt| (case.id.clone(), dt))
        })
        .collect();
    let report = oxmera_conformance::run(d, None);
    assert!(report.passed(), "{report}");
    let got: BTreeSet<(String, DType)> = report
        .declined()
        .iter()
        .map(|x| (x.case.clone(), x.dtype))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want, "declined cases differ from the f64 ones");
    // Creating an f64 tensor there is a typed error naming the dtype.
    match oxmera_tensor::Tensor::zeros([2], DType::F64, d) {
        Err(Error::UnsupportedOnDevice { dtype, .. }) => assert_eq!(dtype, DType::F64),
        other => panic!("expected UnsupportedOnDevice, got {other:?}"),
    }
}
