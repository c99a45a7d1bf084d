//! Shared helpers: operands in every layout class, and comparison with
//! the reference under a per-op tolerance.

#![allow(dead_code)]

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{Generator, Tensor};

// Link both backends.
use oxmera_cpu as _;
use oxmera_reference as _;

/// The layout classes every op is run on.
pub const LAYOUTS: [&str; 5] = ["contiguous", "permuted", "stepped", "offset", "broadcast"];

/// A seeded `f32`/`f64` tensor of logical shape `shape` on the CPU
/// device, laid out as `class` says:
///
/// - `contiguous`: row-major;
/// - `permuted`: the transpose of a row-major tensor of the reversed shape;
/// - `stepped`: every other element of a longer last dim (stride 2) — a
///   narrowed, stepped slice;
/// - `offset`: a reshaped window into larger storage, starting past 0;
/// - `broadcast`: dim 0 (or a scalar) broadcast from extent 1, stride 0.
pub fn operand(seed: u64, shape: &[usize], class: &str, dtype: DType) -> Result<Tensor> {
    let mut g = Generator::new(seed);
    let mut randn = |s: Vec<usize>| g.randn(s, dtype, Device::Cpu);
    let rank = shape.len();
    match class {
        "contiguous" => randn(shape.to_vec()),
        "permuted" => {
            let rev: Vec<usize> = shape.iter().rev().copied().collect();
            let perm: Vec<isize> = (0..rank as isize).rev().collect();
            randn(rev)?.permute(&perm)
        }
        "stepped" if rank > 0 => {
            let mut wide = shape.to_vec();
            wide[rank - 1] = 2 * shape[rank - 1] + 1;
            randn(wide)?.slice(-1, 1, 1 + 2 * shape[rank - 1], 2)
        }
        "offset" => {
            let n: usize = shape.iter().product();
            randn(vec![n + 7])?.narrow(0, 5, n)?.reshape(shape.to_vec())
        }
        "broadcast" if rank > 0 => {
            let mut one = shape.to_vec();
            one[0] = 1;
            randn(one)?.broadcast_to(shape.to_vec())
        }
        _ => randn(shape.to_vec()),
    }
}

/// Values that break naive kernels: NaN, ±inf, ±0, subnormals, huge and
/// tiny magnitudes, and repeated values (ties), `len` of them, cycled.
pub fn specials(len: usize, dtype: DType) -> Result<Tensor> {
    let base = [
        1.5,
        f64::NAN,
        -2.0,
        f64::INFINITY,
        -0.0,
        0.0,
        f64::NEG_INFINITY,
        1e-40,
        -3e38,
        3e38,
        1e-30,
        1.5,
        -7.25,
        0.5,
        1.5,
        -0.0,
    ];
    let v: Vec<f64> = (0..len).map(|i| base[i % base.len()]).collect();
    Tensor::from_slice(&v, [len], Device::Cpu)?.to_dtype(dtype)
}

/// The same tensor on the reference device (a contiguous copy of the
/// logical values: the reference defines the answer, the layout under
/// test is the CPU operand's).
pub fn on_reference(x: &Tensor) -> Tensor {
    x.to_device(Device::Reference)
        .expect("copy to the reference")
}

/// The spacing of `dtype`'s floats at `|w|` (the smallest subnormal at 0).
pub fn ulp(w: f64, dtype: DType) -> f64 {
    match dtype {
        DType::F32 => {
            let a = (w as f32).abs();
            if a.is_infinite() {
                return f64::INFINITY;
            }
            (f32::from_bits(a.to_bits() + 1) - a) as f64
        }
        _ => {
            let a = w.abs();
            if a.is_infinite() {
                return f64::INFINITY;
            }
            f64::from_bits(a.to_bits() + 1) - a
        }
    }
}

/// Unit roundoff of a float dtype.
pub fn unit_roundoff(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f64::powi(2.0, -24),
        _ => f64::powi(2.0, -53),
    }
}

/// Compares `got` (CPU) with `want` (reference): same shape, dtype and
/// device class, NaN exactly where the reference has NaN, infinities
/// equal, and every other element within `tol(i, want_i)`.
pub fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: impl Fn(usize, f64) -> f64) {
    assert_eq!(
        got.device(),
        Device::Cpu,
        "{what}: result left the cpu device"
    );
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let g = got.to_f64_vec().expect("cpu values");
    let w = want.to_f64_vec().expect("reference values");
    for (i, (&g, &w)) in g.iter().zip(&w).enumerate() {
        if w.is_nan() || g.is_nan() {
            assert!(w.is_nan() && g.is_nan(), "{what}[{i}]: got {g}, want {w}");
            continue;
        }
        if w.is_infinite() || g.is_infinite() {
            assert_eq!(g, w, "{what}[{i}]");
            continue;
        }
        let t = tol(i, w);
        assert!(
            (g - w).abs() <= t,
            "{what}[{i}]: got {g:e}, want {w:e}, off by {:e} > tolerance {t:e}",
            (g - w).abs()
        );
    }
}

/// Bit-for-bit equality, with `-0.0` distinct from `+0.0` (for ops whose
/// result is exactly defined).
pub fn assert_exact(what: &str, got: &Tensor, want: &Tensor) {
    assert_eq!(
        got.device(),
        Device::Cpu,
        "{what}: result left the cpu device"
    );
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let g = got.to_f64_vec().expect("cpu values");
    let w = want.to_f64_vec().expect("reference values");
    for (i, (&g, &w)) in g.iter().zip(&w).enumerate() {
        let same = (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits();
        assert!(same, "{what}[{i}]: got {g:e}, want {w:e}");
    }
}

/// The forward error bound of a dot product of length `k` accumulated in
/// precision `u` in any order (FMA or not): `k·u·Σ|a_p·b_p|`, with a 1%
/// margin for the `1/(1 - k·u)` factor; plus the reference's own final
/// rounding, half an ulp, counted as one.
pub fn dot_tolerance(k: usize, dtype: DType, abs_product: f64, w: f64) -> f64 {
    let u = match dtype {
        DType::F64 => unit_roundoff(DType::F64),
        // f32, and f16/bf16, which multiply in f32.
        _ => unit_roundoff(DType::F32),
    };
    1.01 * k as f64 * u * abs_product + ulp(w, dtype)
}

/// Asserts `a @ b` on the CPU equals the reference's product within
/// [`dot_tolerance`] of the inner length.
pub fn check_matmul(what: &str, a: &Tensor, b: &Tensor) {
    let (ra, rb) = (on_reference(a), on_reference(b));
    let got = a.matmul(b).unwrap();
    let want = ra.matmul(&rb).unwrap();
    let k = *a.dims().last().unwrap();
    let bound = magnitude_product(&ra, &rb);
    let dtype = a.dtype();
    assert_close(what, &got, &want, |i, w| {
        dot_tolerance(k, dtype, bound[i], w)
    });
}

/// `|A| · |B|` on the reference: the scale of each entry of a product,
/// which a dot product's rounding error is bounded against.
pub fn magnitude_product(ra: &Tensor, rb: &Tensor) -> Vec<f64> {
    ra.abs()
        .unwrap()
        .matmul(&rb.abs().unwrap())
        .unwrap()
        .to_f64_vec()
        .unwrap()
}
