//! Helpers shared by the unit tests.

use oxmera_core::{Device, Result, Shape};
use oxmera_reference as _;
use oxmera_tensor::Tensor;
use oxmera_tensor::autograd::{DEFAULT_STEP, gradcheck};

pub const DEV: Device = Device::Reference;

/// An `f64` tensor from values and a shape.
pub fn t64(values: &[f64], shape: impl Into<Shape>) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape, DEV).unwrap()
}

/// An `f32` tensor from values and a shape.
pub fn t32(values: &[f32], shape: impl Into<Shape>) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape, DEV).unwrap()
}

/// An `i64` tensor from values and a shape.
pub fn ti(values: &[i64], shape: impl Into<Shape>) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape, DEV).unwrap()
}

/// Asserts `|a - b| <= tol` elementwise, with the index in the message.
pub fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "lengths differ: {got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol,
            "element {i}: got {g}, want {w} (tolerance {tol})"
        );
    }
}

/// Runs the derived-tolerance gradient check and asserts it passed.
pub fn check_grad(f: impl Fn(&[Tensor]) -> Result<Tensor>, inputs: &[Tensor]) {
    let report = gradcheck(f, inputs, DEFAULT_STEP).unwrap();
    assert!(report.checked > 0);
    assert!(report.passed(), "{report}");
}
