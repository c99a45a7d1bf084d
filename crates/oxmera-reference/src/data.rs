//! Data movement: host copies, contiguous copies, dtype casts.

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{HostBuffer, Storage, Tensor};

use crate::read;

pub(crate) fn to_host(x: &Tensor) -> Result<HostBuffer> {
    read::copy_logical(x)
}

pub(crate) fn contiguous(x: &Tensor) -> Result<Storage> {
    Ok(Storage::host(Device::Reference, read::copy_logical(x)?))
}

/// Float sources convert through `f64`, integer and bool sources through
/// `i64`, so that no value representable in both dtypes changes.
pub(crate) fn cast(x: &Tensor, dtype: DType) -> Result<Storage> {
    if read::is_float(x) {
        Ok(read::store_f64(dtype, read::f64s(x)?))
    } else {
        Ok(read::store_i64(dtype, read::i64s(x)?))
    }
}
