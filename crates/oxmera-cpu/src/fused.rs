//! Fused elementwise expressions: several operands, one pass over memory.
//!
//! An expression such as `relu(a * b + c)` written with tensor ops runs
//! three kernels and writes two temporaries: five full passes over memory
//! for what is, on a CPU, a memory-bound computation whose arithmetic is
//! free. [`zip3`] evaluates any such expression of three operands in a
//! single pass, with the same strided runs and threads as every other
//! elementwise kernel of this crate. It is an escape hatch for hot loops,
//! not part of the tensor graph: its result records no gradient.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::Tensor;

use crate::{host, strided};

/// `f(a[i], b[i], c[i])` for every element of three `f32` tensors of one
/// shape on [`Device::Cpu`], in one pass; any layouts (views, broadcasts,
/// offsets). The result is a fresh contiguous tensor that does not take
/// part in autograd.
///
/// Errors: [`Error::DeviceMismatch`] if an operand is not on `cpu`,
/// [`Error::UnsupportedDType`] if one is not `f32`, [`Error::ShapeMismatch`]
/// if the shapes differ.
///
/// ```
/// use oxmera_core::{DType, Device};
/// use oxmera_tensor::Tensor;
/// let t = |v: &[f32]| Tensor::from_slice(v, [3], Device::Cpu);
/// let (a, b, c) = (t(&[1.0, 2.0, 3.0])?, t(&[2.0, -5.0, 1.0])?, t(&[1.0, 1.0, -4.0])?);
/// let y = oxmera_cpu::fused::zip3(&a, &b, &c, |x, y, z| (x * y + z).max(0.0))?;
/// assert_eq!(y.to_vec::<f32>()?, vec![3.0, 0.0, 0.0]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn zip3(
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    f: impl Fn(f32, f32, f32) -> f32 + Sync,
) -> Result<Tensor> {
    const OP: &str = "fused::zip3";
    for x in [a, b, c] {
        if x.device() != Device::Cpu {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: Device::Cpu,
                rhs: x.device(),
            });
        }
        if x.dtype() != DType::F32 {
            return Err(Error::UnsupportedDType {
                op: OP,
                dtype: x.dtype(),
                hint: "zip3 fuses f32 expressions; cast the operands with to_dtype",
            });
        }
    }
    for x in [b, c] {
        if x.shape() != a.shape() {
            return Err(Error::ShapeMismatch {
                op: OP,
                lhs: a.shape().clone(),
                rhs: x.shape().clone(),
            });
        }
    }
    let values = strided::map3(
        (host::buffer::<f32>(a)?, a.layout()),
        (host::buffer::<f32>(b)?, b.layout()),
        (host::buffer::<f32>(c)?, c.layout()),
        f,
    );
    Ok(Tensor::from_storage(host::store(values), a.shape().clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_and_errors() {
        let a =
            Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], Device::Cpu).unwrap();
        // A transposed operand and a broadcast row: [3, 2] each.
        let at = a.t().unwrap();
        let row = Tensor::from_slice(&[10.0f32, 20.0], [2], Device::Cpu).unwrap();
        let row = row.broadcast_to([3, 2]).unwrap();
        let y = zip3(&at, &row, &at, |x, r, z| x * r - z).unwrap();
        // at = [[1, 4], [2, 5], [3, 6]]
        assert_eq!(
            y.to_vec::<f32>().unwrap(),
            vec![9.0, 76.0, 18.0, 95.0, 27.0, 114.0]
        );
        assert!(matches!(
            zip3(&a, &at, &a, |x, _, _| x),
            Err(Error::ShapeMismatch { .. })
        ));
        let d = a.to_dtype(DType::F64).unwrap();
        assert!(matches!(
            zip3(&a, &a, &d, |x, _, _| x),
            Err(Error::UnsupportedDType { .. })
        ));
        let r = a.to_device(Device::Reference).unwrap();
        assert!(matches!(
            zip3(&r, &a, &a, |x, _, _| x),
            Err(Error::DeviceMismatch { .. })
        ));
    }
}
