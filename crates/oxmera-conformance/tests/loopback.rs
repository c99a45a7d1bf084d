//! The device seam's proof: a backend that implements device services and
//! nothing else passes the whole corpus, forward and backward, with every
//! op of the `Backend` trait run through the host fallback and counted.

use oxmera_conformance::{Composite, backend_op_names, run};
use oxmera_core::DType;
use oxmera_tensor::{Provider, Storage, Support, fallback, registry};

#[test]
fn the_loopback_device_passes_every_case_through_the_fallback() {
    let device = oxmera_loopback::device(0);
    let report = run(device, None);
    assert!(report.passed(), "{report}");
    assert!(report.runs() > 2000, "{} runs", report.runs());
    assert_eq!(report.declined_runs(), 0, "loopback stores every dtype");
    // Only the copy service is native: every other run of a backend op
    // fell back. Composites (built in the tensor layer from other ops) are
    // exempt: some of their runs are pure views or identities that launch
    // no op at all (a diagonal of a contiguous matrix, `repeat` by ones,
    // `nan_to_num` of integers); the ops they do launch are backend ops,
    // counted below.
    let composites = Composite::names();
    let native_only =
        |r: &oxmera_conformance::Row| r.op == "contiguous" || composites.contains(&r.op);
    for row in report.rows() {
        if native_only(row) {
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
            .filter(|r| native_only(r))
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

/// A services-only backend that stores no `f64` and declines `matmul`, as
/// a WGSL device without that kernel would.
#[derive(Debug)]
struct Narrow(oxmera_core::Device);

impl oxmera_tensor::Backend for Narrow {
    fn name(&self) -> &'static str {
        "narrow"
    }
    fn device(&self) -> oxmera_core::Device {
        self.0
    }
    fn from_host(&self, data: oxmera_tensor::HostBuffer) -> oxmera_core::Result<Storage> {
        Ok(Storage::host(self.0, data))
    }
    fn download(&self, storage: &Storage) -> oxmera_core::Result<oxmera_tensor::HostBuffer> {
        oxmera_tensor::host_device::download(storage)
    }
    fn stores(&self, dtype: DType) -> bool {
        dtype != DType::F64
    }
    fn support(&self, op: &str, dtype: DType) -> Support {
        if op == "matmul" || !self.stores(dtype) {
            Support::Unsupported
        } else {
            Support::Fallback
        }
    }
}

#[test]
fn declined_cases_are_listed_with_the_reason_never_run_never_passed() {
    registry::register_provider(Provider {
        kind: "narrow",
        open: |d| Ok(std::sync::Arc::new(Narrow(d))),
    });
    let device = oxmera_core::Device::custom("narrow", 0).unwrap();

    // exp in f64 is declined (not stored); the other dtypes run, through
    // the fallback, and pass.
    let report = run(device, Some("exp/"));
    assert!(report.passed(), "{report}");
    assert!(report.declined_runs() > 0, "{report}");
    assert!(report.declined().iter().all(|d| d.dtype == DType::F64));
    assert!(report.rows().iter().all(|r| r.dtype != DType::F64));
    assert!(report.runs() > 0 && report.fallback_runs() == report.runs());
    let text = report.to_string();
    assert!(text.contains("does not store f64"), "{text}");

    // matmul is declined in every dtype: nothing runs, and nothing passes
    // in its name — the declined list is the whole story.
    let report = run(device, Some("matmul"));
    assert_eq!(report.runs(), 0, "{report}");
    assert!(report.declined_runs() > 0);
    for d in report.declined() {
        assert_eq!(d.op, "matmul");
        let why = if d.dtype == DType::F64 {
            "does not store f64"
        } else {
            "declares matmul"
        };
        assert!(d.reason.contains(why), "{d}");
    }
}
