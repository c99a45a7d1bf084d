//! The device seam's proof: a backend that implements device services and
//! nothing else passes the whole corpus, forward and backward, with every
//! op of the `Backend` trait run through the host fallback and counted.

use oxmera_conformance::{backend_op_names, run};
use oxmera_tensor::fallback;

#[test]
fn the_loopback_device_passes_every_case_through_the_fallback() {
    let device = oxmera_loopback::device(0);
    let report = run(device, None);
    assert!(report.passed(), "{report}");
    assert!(report.runs() > 2000, "{} runs", report.runs());
    assert_eq!(report.declined_runs(), 0, "loopback stores every dtype");
    // Only the copy service is native: every other run fell back.
    for row in report.rows() {
        if row.op == "contiguous" {
            continue;
        }
        assert_eq!(
            row.fallback, row.runs,
            "{} {} {}",
            row.op, row.dtype, row.layout
        );
    }
    assert!(report.fallback_runs() > 0);
    assert_eq!(
        report.native_runs(),
        report
            .rows()
            .iter()
            .filter(|r| r.op == "contiguous")
            .map(|r| r.runs - r.fallback)
            .sum::<usize>()
    );
    // Every op of the trait, and every backward kernel, fell back at
    // least once: the report names them all.
    let ops = backend_op_names()
        .into_iter()
        .filter(|op| *op != "contiguous")
        .chain([
            "conv2d_backward",
            "max_pool2d_backward",
            "avg_pool2d_backward",
        ]);
    for op in ops {
        assert!(
            fallback::count(device, op) > 0,
            "{op} never fell back:\n{}",
            fallback::report().for_device(device)
        );
    }
}
