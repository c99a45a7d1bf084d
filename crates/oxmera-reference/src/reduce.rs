//! Reductions and softmax.

use oxmera_core::{DType, Error, Result};
use oxmera_tensor::{ReduceOp, Storage, Tensor};

pub(crate) fn reduce(op: ReduceOp, _x: &Tensor, _dims: &[usize], _out: DType) -> Result<Storage> {
    Err(Error::NotImplemented { op: op.name(), backend: "reference".into() })
}

pub(crate) fn softmax(_x: &Tensor, _dim: usize, _log: bool) -> Result<Storage> {
    Err(Error::NotImplemented { op: "softmax", backend: "reference".into() })
}
