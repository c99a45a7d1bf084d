//! Joining, indexing, padding and reordering.

use oxmera_core::{Error, Result};
use oxmera_tensor::{ScatterMode, Storage, Tensor};

fn not_yet(op: &'static str) -> Error {
    Error::NotImplemented { op, backend: "reference".into() }
}

pub(crate) fn cat(_xs: &[&Tensor], _dim: usize) -> Result<Storage> {
    Err(not_yet("cat"))
}

pub(crate) fn index_select(_x: &Tensor, _dim: usize, _i: &Tensor) -> Result<Storage> {
    Err(not_yet("index_select"))
}

pub(crate) fn gather(_x: &Tensor, _dim: usize, _i: &Tensor) -> Result<Storage> {
    Err(not_yet("gather"))
}

pub(crate) fn scatter(_x: &Tensor, _d: usize, _i: &Tensor, _s: &Tensor, _m: ScatterMode) -> Result<Storage> {
    Err(not_yet("scatter"))
}

pub(crate) fn pad(_x: &Tensor, _p: &[(usize, usize)], _v: f64) -> Result<Storage> {
    Err(not_yet("pad"))
}

pub(crate) fn flip(_x: &Tensor, _d: &[usize]) -> Result<Storage> {
    Err(not_yet("flip"))
}

pub(crate) fn triangle(_x: &Tensor, _d: i64, _u: bool) -> Result<Storage> {
    Err(not_yet("tril"))
}
