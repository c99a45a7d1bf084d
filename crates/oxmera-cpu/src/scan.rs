//! The scans `cumsum`, `cumprod` and `logcumsumexp` for `f32` and `f64`
//! (the reference's step functions, so no second definition): each slice along
//! the dim is one row (moved last by the softmax module's `along` when it
//! is not already), rows go to threads, and each row is folded in `f64` in
//! order with every prefix rounded once — the reference's definition, so
//! the results agree with it bit for bit. Other dtypes are delegated.

use oxmera_core::{DType, Result};
use oxmera_reference::Reference;
use oxmera_reference::scalar::{scan_identity, scan_step};
use oxmera_tensor::{Backend, Element, ScanOp, Storage, Tensor};

use crate::{delegated, host, softmax};

pub(crate) fn scan(op: ScanOp, x: &Tensor, dim: usize, out: DType) -> Result<Storage> {
    match x.dtype() {
        DType::F32 => Ok(host::store(softmax::along::<f32>(x, dim, |r, o| {
            row(op, r, o)
        })?)),
        DType::F64 => Ok(host::store(softmax::along::<f64>(x, dim, |r, o| {
            row(op, r, o)
        })?)),
        _ => delegated(Reference.scan(op, x, dim, out)),
    }
}

/// The running sum, product or log-sum-exp of one row, accumulated in
/// `f64` by the reference's own step.
fn row<T: Element>(op: ScanOp, x: &[T], out: &mut [T]) {
    let mut acc = scan_identity(op);
    for (o, &v) in out.iter_mut().zip(x) {
        acc = scan_step(op, acc, v.to_f64());
        *o = T::from_f64(acc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_by_hand() {
        let mut out = [0.0f32; 4];
        row(ScanOp::Sum, &[1.0f32, 2.0, 3.0, -6.0], &mut out);
        assert_eq!(out, [1.0, 3.0, 6.0, 0.0]);
        row(ScanOp::Prod, &[1.5f32, 2.0, 0.0, 5.0], &mut out);
        assert_eq!(out, [1.5, 3.0, 0.0, 0.0]);
        // f64 accumulation: 2^24 + 1 + 1 in f32 would stall at 2^24.
        let mut out = [0.0f32; 3];
        row(ScanOp::Sum, &[16_777_216.0f32, 1.0, 1.0], &mut out);
        assert_eq!(out[2], 16_777_218.0);
        // log(e^0) = 0, log(1 + 1) = ln 2, log(2 + 0) = ln 2.
        let mut out = [0.0f64; 3];
        row(
            ScanOp::LogSumExp,
            &[0.0f64, 0.0, f64::NEG_INFINITY],
            &mut out,
        );
        assert_eq!((out[0], out[2]), (0.0, out[1]));
        assert!((out[1] - std::f64::consts::LN_2).abs() <= f64::EPSILON);
    }
}
