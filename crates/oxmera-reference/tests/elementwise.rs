//! Elementwise operations (unary, binary, comparisons, logical, `where_`,
//! `masked_fill`, the operators) against hand-computed values, on every
//! layout variant, on broadcast, zero-size, size-1 and rank-0 inputs, with
//! the special float values, every dtype where the op means something, and
//! every error path; plus property tests for the laws.
//!
//! Transcendental expectations were computed with 40-digit arithmetic
//! (mpmath) and rounded to `f64`; a float result must then equal that value
//! rounded once into the output dtype (for `f64`, within 1e-15 relative,
//! which allows the platform's `exp`/`sin`/… their last-bit error).

mod common;

#[path = "elementwise/binary.rs"]
mod binary;
#[path = "elementwise/compare_where.rs"]
mod compare_where;
#[path = "elementwise/errors.rs"]
mod errors;
#[path = "elementwise/laws.rs"]
mod laws;
#[path = "elementwise/unary.rs"]
mod unary;

use oxmera_core::DType;
use oxmera_tensor::{HostBuffer, Tensor};

/// `values` rounded once into `dtype`, read back as `f64`.
pub fn rounded(values: &[f64], dtype: DType) -> Vec<f64> {
    let buf = HostBuffer::from_f64s(dtype, values.iter().copied());
    (0..buf.len()).map(|i| buf.get_f64(i)).collect()
}

/// Equality that matches NaN with NaN and tells `-0.0` from `+0.0`.
pub fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
}

/// Asserts a float result: the shape, and each element equal to the
/// expected value rounded into the result's dtype (NaNs and signed zeros
/// included); for `f64`, finite nonzero values may differ by 1e-15
/// relative.
pub fn assert_float(actual: &Tensor, expected: &[f64], shape: &[usize], what: &str) {
    let dtype = actual.dtype();
    assert!(dtype.is_float(), "{what}: dtype {dtype}");
    assert_eq!(actual.dims(), shape, "{what} [{dtype}]: shape");
    let got = actual.to_f64_vec().unwrap();
    let want = rounded(expected, dtype);
    assert_eq!(got.len(), want.len(), "{what} [{dtype}]: element count");
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let near = dtype == DType::F64 && w.is_finite() && w != 0.0 && ((g - w) / w).abs() <= 1e-15;
        assert!(
            same(g, w) || near,
            "{what} [{dtype}] element {i}: got {g:e}, expected {w:e}; all: {got:?}"
        );
    }
}

/// Asserts an integer or bool result exactly (read as `i64`).
pub fn assert_ints(actual: &Tensor, expected: &[i64], shape: &[usize], what: &str) {
    let dtype = actual.dtype();
    assert_eq!(actual.dims(), shape, "{what} [{dtype}]: shape");
    let host = actual.to_host().unwrap();
    let got: Vec<i64> = (0..host.len()).map(|i| host.get_i64(i)).collect();
    assert_eq!(got, expected, "{what} [{dtype}]");
}

/// Asserts a bool result.
pub fn assert_bools(actual: &Tensor, expected: &[bool], shape: &[usize], what: &str) {
    assert_eq!(actual.dtype(), DType::Bool, "{what}: dtype");
    assert_eq!(actual.dims(), shape, "{what}: shape");
    assert_eq!(actual.to_vec::<bool>().unwrap(), expected, "{what}");
}
