//! Shared test helpers: build one logical tensor in several physical
//! layouts, so every op is checked on contiguous *and* non-contiguous
//! inputs, and compare results with hand-computed values.

#![allow(dead_code)]

// Naming the crate links its backend provider (see oxmera_tensor::registry).
use oxmera_reference as _;

use oxmera_core::{DType, Device, Shape};
use oxmera_tensor::{HostBuffer, Tensor};

/// Values that no correct op should ever read: they fill the gaps of the
/// strided variants.
pub const JUNK: f64 = 77.0;

/// A contiguous tensor on the reference device from `f64` values.
pub fn t(values: &[f64], shape: &[usize], dtype: DType) -> Tensor {
    Tensor::from_host(
        HostBuffer::from_f64s(dtype, values.iter().copied()),
        shape,
        Device::Reference,
        "test",
    )
    .unwrap()
}

/// An f64 leaf that requires a gradient (the autograd tests' input).
pub fn leaf(values: &[f64], shape: &[usize]) -> Tensor {
    t(values, shape, DType::F64)
        .with_requires_grad(true)
        .unwrap()
}

/// The gradient accumulated in `x`, as f64s.
pub fn grad(x: &Tensor) -> Vec<f64> {
    x.grad().expect("a gradient").to_f64_vec().unwrap()
}

/// A contiguous f32 tensor.
pub fn f32t(values: &[f64], shape: &[usize]) -> Tensor {
    t(values, shape, DType::F32)
}

/// The same logical tensor in four physical layouts:
/// - `contiguous`;
/// - `permuted`: stored with its dims reversed, then permuted back;
/// - `stepped`: every other element of a wider last dim (junk between);
/// - `offset`: contiguous, but starting 3 junk elements into its storage.
///
/// Every variant must give the same result in every op.
pub fn variants(values: &[f64], shape: &[usize], dtype: DType) -> Vec<(&'static str, Tensor)> {
    let shape_s = Shape::from(shape);
    let n = shape_s.numel();
    assert_eq!(values.len(), n, "test data does not fill {shape:?}");
    let rank = shape.len();
    let mut out = vec![("contiguous", t(values, shape, dtype))];

    // Permuted: P has the reversed shape and P[rev(i)] = X[i].
    let rev: Vec<usize> = shape.iter().rev().copied().collect();
    let rev_s = Shape::from(rev.as_slice());
    let mut p = vec![0.0; n];
    for (linear, v) in values.iter().enumerate() {
        let mut idx = shape_s.unravel(linear);
        idx.reverse();
        p[rev_s.ravel(&idx)] = *v;
    }
    let perm: Vec<isize> = (0..rank as isize).rev().collect();
    let permuted = t(&p, &rev, dtype).permute(&perm).unwrap();
    out.push(("permuted", permuted));

    // Stepped: double the last dim, real values at even positions.
    if rank > 0 {
        let last = shape[rank - 1];
        let mut wide_shape = shape.to_vec();
        wide_shape[rank - 1] = 2 * last;
        let mut wide = vec![JUNK; 2 * n];
        for (i, v) in values.iter().enumerate() {
            wide[2 * i] = *v;
        }
        let stepped = t(&wide, &wide_shape, dtype)
            .slice(-1, 0, 2 * last, 2)
            .unwrap();
        out.push(("stepped", stepped));
    }

    // Offset: three junk elements before the data.
    let mut padded = vec![JUNK; 3];
    padded.extend_from_slice(values);
    let offset = t(&padded, &[n + 3], dtype)
        .narrow(0, 3, n)
        .unwrap()
        .view(shape)
        .unwrap();
    out.push(("offset", offset));
    out
}

/// Asserts that `actual` has `shape` and its values match `expected`
/// within `tol` (absolute), with NaNs in the same places.
pub fn assert_close(actual: &Tensor, expected: &[f64], shape: &[usize], tol: f64) {
    assert_eq!(actual.dims(), shape, "shape");
    let got = actual.to_f64_vec().unwrap();
    assert_eq!(got.len(), expected.len(), "element count");
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        let ok = (g.is_nan() && e.is_nan()) || g == e || (g - e).abs() <= tol;
        assert!(
            ok,
            "element {i}: got {g}, expected {e} (tol {tol}); all: {got:?}"
        );
    }
}

/// Sanity check of the helpers themselves.
#[test]
fn variants_hold_the_same_values() {
    let v: Vec<f64> = (0..24).map(f64::from).collect();
    for (name, x) in variants(&v, &[2, 3, 4], DType::F32) {
        assert_eq!(x.to_f64_vec().unwrap(), v, "{name}");
        assert_eq!(x.dims(), &[2, 3, 4], "{name}");
    }
    let names: Vec<_> = variants(&v, &[2, 3, 4], DType::F32)
        .into_iter()
        .filter(|(_, x)| !x.is_contiguous())
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, vec!["permuted", "stepped"]);
}
