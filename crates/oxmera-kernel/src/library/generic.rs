//! Generic kernels: one source over the element type, one instance per
//! dtype (see `oxmera_kernel_lower::generics`). Each instance is a library
//! kernel of its own in the registry (`axpy<f32>`, `iota<i32>`), with a
//! demo against a host reference for its dtype.
//!
//! Each names its `dtypes(..)`: the 32-bit types, which both emitters
//! write. The IR's other floats and integers (`f64`, `f16`, `bf16`, `i64`,
//! `u64`, `u8`, `u16`) join when the emitters write them and the demos
//! below say how to fill and read them (they refuse a scalar they do not
//! know, which the library test reports).

use crate::ir::{Dim3, Scalar, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, rng_f32};

/// `y[i] = a * x[i] + y[i]` for `i < n`, in any float type: BLAS's axpy.
#[kernel(block = [64, 256], dtypes(T = [f32]))]
pub fn axpy<T: Float>(a: T, x: &[T], y: &mut [T], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        y[i] = a * x[i] + y[i];
    }
}

/// `out[i] = start + step * i` for `i < n`, in any integer type, wrapping
/// on overflow as the IR's integers do.
#[kernel(block = [64, 256], dtypes(T = [i32, u32]))]
pub fn iota<T: Int>(out: &mut [T], start: T, step: T, n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        out[i] = start + step * (i as T);
    }
}

/// The demo of the instance `kernel` (by its IR: base name and dtype), or
/// `None` for a kernel or a dtype this module has no demo for.
pub(super) fn demo(kernel: &crate::ir::Kernel, block: Dim3, seed: u64) -> Option<Demo> {
    let bt = block.count() as u32;
    let [dtype] = kernel.type_arg_scalars()[..] else {
        return None;
    };
    let n = 1000u32;
    let launch = LaunchConfig {
        grid: Dim3::x(n.div_ceil(bt)),
        block,
    };
    match (kernel.base_name(), dtype) {
        ("axpy", Scalar::F32) => {
            // 0.75 is exact, so the only roundings are the product's and
            // the sum's: half an ulp of |a x| and of the result.
            let a = 0.75f32;
            let x = rng_f32(seed, n as usize);
            let y = rng_f32(seed + 1, n as usize);
            let expected: Vec<f64> = x
                .iter()
                .zip(&y)
                .map(|(&x, &y)| a as f64 * x as f64 + y as f64)
                .collect();
            let tolerance = x
                .iter()
                .zip(&expected)
                .map(|(&x, e)| f32::EPSILON as f64 * ((a * x).abs() as f64 + e.abs()))
                .collect();
            Some(Demo {
                launch,
                args: vec![
                    Arg::Scalar(Value::F32(a)),
                    Arg::Buffer(Buffer::from_f32(&x)),
                    Arg::Buffer(Buffer::from_f32(&y)),
                    Arg::Scalar(Value::U32(n)),
                ],
                output: 2,
                expected,
                tolerance,
                summary: format!("axpy<f32> of two seeded vectors of {n}, a = 0.75"),
            })
        }
        ("iota", Scalar::I32) => {
            // Negative, crossing zero: -7 - seed, then 3 up each step.
            let (start, step) = (-7i32 - seed as i32, 3i32);
            let expected = (0..n as i32)
                .map(|i| start.wrapping_add(step.wrapping_mul(i)) as f64)
                .collect();
            Some(Demo {
                launch,
                args: vec![
                    Arg::Buffer(Buffer::from_i32(&vec![0; n as usize])),
                    Arg::Scalar(Value::I32(start)),
                    Arg::Scalar(Value::I32(step)),
                    Arg::Scalar(Value::U32(n)),
                ],
                output: 0,
                expected,
                tolerance: vec![0.0; n as usize],
                summary: format!("iota<i32> from {start} by {step}, {n} values"),
            })
        }
        ("iota", Scalar::U32) => {
            // A step of 2^28 + 3 wraps through zero every 16 steps
            // (16 * 2^28 = 2^32), so most values are wrapped ones.
            let (start, step) = (5 + seed as u32, (1u32 << 28) + 3);
            let expected = (0..n)
                .map(|i| start.wrapping_add(step.wrapping_mul(i)) as f64)
                .collect();
            Some(Demo {
                launch,
                args: vec![
                    Arg::Buffer(Buffer::from_u32(&vec![0; n as usize])),
                    Arg::Scalar(Value::U32(start)),
                    Arg::Scalar(Value::U32(step)),
                    Arg::Scalar(Value::U32(n)),
                ],
                output: 0,
                expected,
                tolerance: vec![0.0; n as usize],
                summary: format!("iota<u32> from {start} by {step}, {n} values, wrapping"),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_instance_is_reachable_by_type_and_by_scalar() {
        assert_eq!(axpy::<f32>().name, "axpy<f32>");
        assert_eq!(iota::<u32>().name, "iota<u32>");
        assert!(std::ptr::eq(
            axpy_instance(&[Scalar::F32]).unwrap(),
            axpy::<f32>()
        ));
        assert!(std::ptr::eq(
            iota_instance(&[Scalar::I32]).unwrap(),
            iota::<i32>()
        ));
        // `axpy` is bounded by `Float`: no integer instance at run time.
        assert!(axpy_instance(&[Scalar::I32]).is_none());
        assert!(iota_instance(&[Scalar::I32, Scalar::I32]).is_none());
        let names: Vec<&str> = iota_instances().iter().map(|b| b().name.as_str()).collect();
        assert_eq!(names, ["iota<i32>", "iota<u32>"]);
    }
}
