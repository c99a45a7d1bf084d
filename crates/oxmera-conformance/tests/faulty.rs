//! Deliberately wrong backends are caught, with the op named.
//!
//! Each test registers a backend that wraps the reference and breaks one
//! thing, under a device no real backend uses, runs the corpus on it, and
//! checks that the report fails exactly where the fault is.
//!
//! The wrapper does not override `layer_norm` or the `_scalar` ops, so
//! every run here also holds the trait's host fallback to the corpus:
//! "exactly where the fault is" includes the fallback passing.

use std::sync::Arc;

use oxmera_conformance::{LayoutClass, Phase, Report, run};
use oxmera_core::{DType, Device, Layout, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{
    Backend, BinaryOp, CmpOp, Conv2dParams, HostBuffer, Pool2dParams, ReduceOp, ScatterMode,
    Storage, Tensor, UnaryOp, registry,
};

/// What a [`Faulty`] backend gets wrong.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// `log1p` results are too large by 8 ulps of f32 (relative 8·2^-23).
    Log1pUlps,
    /// The gradient of average pooling is 1% too large.
    AvgPoolBackward,
    /// Unary ops read their input as if it started at storage offset 0.
    UnaryIgnoresOffset,
}

/// The reference, wrong in one way, computing for `device`.
#[derive(Debug)]
struct Faulty {
    device: Device,
    fault: Fault,
}

impl Faulty {
    /// Re-tags the reference's storage as this device's.
    fn own(&self, s: Storage) -> Storage {
        Storage::host(
            self.device,
            s.into_host().expect("the reference stores on the host"),
        )
    }

    fn scaled(&self, s: Storage, factor: f64) -> Storage {
        let host = s.into_host().expect("host");
        let values = (0..host.len()).map(|i| host.get_f64(i) * factor);
        Storage::host(self.device, HostBuffer::from_f64s(host.dtype(), values))
    }
}

impl Backend for Faulty {
    fn name(&self) -> &'static str {
        "faulty"
    }
    fn device(&self) -> Device {
        self.device
    }
    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        Ok(Storage::host(self.device, data))
    }
    fn download(&self, storage: &Storage) -> Result<HostBuffer> {
        oxmera_tensor::host_device::download(storage)
    }
    fn to_host(&self, x: &Tensor) -> Result<HostBuffer> {
        Reference.to_host(x)
    }
    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        Ok(self.own(Reference.contiguous(x)?))
    }
    fn cast(&self, x: &Tensor, dtype: DType) -> Result<Storage> {
        Ok(self.own(Reference.cast(x, dtype)?))
    }
    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
        match (self.fault, op) {
            (Fault::Log1pUlps, UnaryOp::Log1p) => {
                Ok(self.scaled(Reference.unary(op, x)?, 1.0 + 8.0 * 2f64.powi(-23)))
            }
            (Fault::UnaryIgnoresOffset, _) => {
                let l = x.layout();
                let at_zero = Layout::new(l.shape().clone(), l.strides().as_slice().to_vec(), 0);
                let wrong = Tensor::from_parts(x.storage().clone(), at_zero);
                Ok(self.own(Reference.unary(op, &wrong)?))
            }
            _ => Ok(self.own(Reference.unary(op, x)?)),
        }
    }
    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        Ok(self.own(Reference.binary(op, a, b)?))
    }
    fn compare(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        Ok(self.own(Reference.compare(op, a, b)?))
    }
    fn where_cond(&self, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Storage> {
        Ok(self.own(Reference.where_cond(cond, a, b)?))
    }
    fn reduce(&self, op: ReduceOp, x: &Tensor, dims: &[usize], out: DType) -> Result<Storage> {
        Ok(self.own(Reference.reduce(op, x, dims, out)?))
    }
    fn softmax(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
        Ok(self.own(Reference.softmax(x, dim, log)?))
    }
    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        Ok(self.own(Reference.matmul(a, b)?))
    }
    fn cat(&self, xs: &[&Tensor], dim: usize) -> Result<Storage> {
        Ok(self.own(Reference.cat(xs, dim)?))
    }
    fn index_select(&self, x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
        Ok(self.own(Reference.index_select(x, dim, indices)?))
    }
    fn gather(&self, x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
        Ok(self.own(Reference.gather(x, dim, index)?))
    }
    fn scatter(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        mode: ScatterMode,
    ) -> Result<Storage> {
        Ok(self.own(Reference.scatter(x, dim, index, src, mode)?))
    }
    fn pad(&self, x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage> {
        Ok(self.own(Reference.pad(x, pads, value)?))
    }
    fn flip(&self, x: &Tensor, dims: &[usize]) -> Result<Storage> {
        Ok(self.own(Reference.flip(x, dims)?))
    }
    fn triangle(&self, x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage> {
        Ok(self.own(Reference.triangle(x, diagonal, upper)?))
    }
    fn conv2d(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: Conv2dParams,
    ) -> Result<Storage> {
        Ok(self.own(Reference.conv2d(x, weight, bias, params)?))
    }
    fn max_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        Ok(self.own(Reference.max_pool2d(x, params)?))
    }
    fn avg_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        Ok(self.own(Reference.avg_pool2d(x, params)?))
    }
    fn conv2d_backward(
        &self,
        x: &Tensor,
        weight: &Tensor,
        grad: &Tensor,
        params: Conv2dParams,
    ) -> Result<(Storage, Storage)> {
        let (gx, gw) = Reference.conv2d_backward(x, weight, grad, params)?;
        Ok((self.own(gx), self.own(gw)))
    }
    fn max_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        Ok(self.own(Reference.max_pool2d_backward(x, grad, params)?))
    }
    fn avg_pool2d_backward(
        &self,
        x: &Tensor,
        grad: &Tensor,
        params: Pool2dParams,
    ) -> Result<Storage> {
        let g = Reference.avg_pool2d_backward(x, grad, params)?;
        Ok(match self.fault {
            Fault::AvgPoolBackward => self.scaled(g, 1.01),
            _ => self.own(g),
        })
    }
}

/// Registers a faulty backend for `device` and runs the corpus on it.
fn run_faulty(device: Device, fault: Fault, filter: Option<&str>) -> Report {
    registry::register(Arc::new(Faulty { device, fault }));
    run(device, filter)
}

#[test]
fn a_few_ulps_too_many_in_one_op_is_caught_and_named() {
    let report = run_faulty(Device::Cuda(90), Fault::Log1pUlps, None);
    assert!(!report.passed());
    assert_eq!(report.failed_ops(), vec!["log1p"], "{report}");
    // Caught in f32 and f64 in every class; f16 and bf16 cannot see a
    // relative error of 1e-6 (it is far below their own rounding).
    for dtype in [DType::F32, DType::F64] {
        let failing: Vec<_> = report
            .rows()
            .iter()
            .filter(|r| r.op == "log1p" && r.dtype == dtype && !r.passed())
            .map(|r| r.layout)
            .collect();
        assert_eq!(
            failing.len(),
            LayoutClass::ALL.len(),
            "{dtype}: {failing:?}"
        );
    }
    let text = report.to_string();
    assert!(
        text.contains("log1p/ordinary [log1p f32 contiguous] forward"),
        "{text}"
    );
    // Everything else still passes, so the fault is pinned to its op.
    assert!(
        report
            .rows()
            .iter()
            .filter(|r| r.op != "log1p")
            .all(|r| r.passed())
    );
}

#[test]
fn a_wrong_backward_kernel_fails_the_gradient_only() {
    // Both poolings run, so the fault is seen to stay in its own op.
    let report = run_faulty(Device::Cuda(91), Fault::AvgPoolBackward, Some("pool2d"));
    assert!(report.rows().iter().any(|r| r.op == "max_pool2d"));
    assert_eq!(report.failed_ops(), vec!["avg_pool2d"], "{report}");
    for f in report.failures() {
        assert_eq!(f.phase, Phase::Backward { input: 0 }, "{f}");
    }
    let pool_rows: Vec<_> = report
        .rows()
        .iter()
        .filter(|r| r.op == "avg_pool2d")
        .collect();
    assert!(pool_rows.iter().all(|r| r.forward.passed()));
    // 1% is caught in f16, f32 and f64. In bf16 it is about one ulp,
    // which any two correct backends may differ by, so it cannot be.
    for row in pool_rows {
        let caught = !row.backward.unwrap().passed();
        assert_eq!(caught, row.dtype != DType::BF16, "{row:?}");
    }
}

#[test]
fn a_backend_that_ignores_offsets_fails_in_the_offset_classes_only() {
    let report = run_faulty(
        Device::Cuda(92),
        Fault::UnaryIgnoresOffset,
        Some("exp/ordinary"),
    );
    assert!(!report.passed());
    for row in report.rows() {
        let offset = matches!(row.layout, LayoutClass::Sliced | LayoutClass::Offset);
        assert_eq!(row.passed(), !offset, "{row:?}");
    }
}
