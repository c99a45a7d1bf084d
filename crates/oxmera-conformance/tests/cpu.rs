//! The whole corpus against the optimized CPU backend, forward and
//! backward.

// Links the CPU backend, which registers `Device::Cpu`.
use oxmera_cpu as _;

use oxmera_conformance::run;
use oxmera_core::Device;

#[test]
fn the_cpu_backend_conforms() {
    let report = run(Device::Cpu, None);
    // The report is the diagnosis: print the matrix and every failure.
    assert!(report.passed(), "{report}");
    assert!(report.runs() > 500, "only {} runs", report.runs());
    // Gradients were compared, not skipped.
    assert!(
        report
            .rows()
            .iter()
            .filter(|r| r.backward.is_some())
            .count()
            > 100
    );
}
