//! Matrix multiplication.

use oxmera_core::{Error, Result};
use oxmera_tensor::{Storage, Tensor};

pub(crate) fn matmul(_a: &Tensor, _b: &Tensor) -> Result<Storage> {
    Err(Error::NotImplemented { op: "matmul", backend: "reference".into() })
}
