//! Convolution and pooling.

use oxmera_core::{Error, Result};
use oxmera_tensor::{Conv2dParams, Pool2dParams, Storage, Tensor};

fn not_yet(op: &'static str) -> Error {
    Error::NotImplemented { op, backend: "reference".into() }
}

pub(crate) fn conv2d(_x: &Tensor, _w: &Tensor, _b: Option<&Tensor>, _p: Conv2dParams) -> Result<Storage> {
    Err(not_yet("conv2d"))
}

pub(crate) fn max_pool2d(_x: &Tensor, _p: Pool2dParams) -> Result<Storage> {
    Err(not_yet("max_pool2d"))
}

pub(crate) fn avg_pool2d(_x: &Tensor, _p: Pool2dParams) -> Result<Storage> {
    Err(not_yet("avg_pool2d"))
}
