//! Elementwise operations.

use oxmera_core::{Error, Result};
use oxmera_tensor::{BinaryOp, CmpOp, Storage, Tensor, UnaryOp};

pub(crate) fn unary(op: UnaryOp, _x: &Tensor) -> Result<Storage> {
    Err(not_yet(op.name()))
}

pub(crate) fn binary(op: BinaryOp, _a: &Tensor, _b: &Tensor) -> Result<Storage> {
    Err(not_yet(op.name()))
}

pub(crate) fn compare(op: CmpOp, _a: &Tensor, _b: &Tensor) -> Result<Storage> {
    Err(not_yet(op.name()))
}

pub(crate) fn where_cond(_c: &Tensor, _a: &Tensor, _b: &Tensor) -> Result<Storage> {
    Err(not_yet("where"))
}

fn not_yet(op: &'static str) -> Error {
    Error::NotImplemented { op, backend: "reference".into() }
}
