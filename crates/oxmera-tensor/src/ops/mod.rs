//! Operation front ends: validation, shape logic and dispatch, one module
//! per family. Each public method is an inherent method of [`crate::Tensor`].

mod activation;
mod adaptive_pool;
mod attention;
mod binary;
pub mod chain;
mod conv;
mod conv1d;
mod conv_transpose;
mod cumulative;
mod einsum;
mod index;
mod index_add;
mod interleave;
mod interpolate;
pub(crate) mod mask;
mod math;
mod matmul;
mod nonzero;
mod norm;
mod operators;
mod pad;
mod pool_options;
mod reduce;
mod scatter_reduce;
mod shape;
mod sort;
mod unary;

pub use adaptive_pool::adaptive_window;
pub use attention::AttentionOptions;
pub use conv_transpose::ConvTranspose2dParams;
pub use conv1d::Conv1dParams;
pub use interpolate::InterpolateMode;
pub use pad::PadMode;
pub use pool_options::Pool2dOptions;
pub use scatter_reduce::ScatterReduce;

/// Numbers computed on the host (weights, window sizes, counts) as a tensor
/// of `dtype` on `device`, sent as `f32` unless `dtype` is `f64`: a device
/// without `f64` (Metal, or wgpu with `f64` masked) refuses an `f64`
/// upload even when the result is cast straight down. Each value must be
/// exact in `f32` or meant to be rounded to it (the composites that call
/// this compute in `f32` for every dtype but `f64`).
pub(super) fn host_floats(
    values: Vec<f64>,
    shape: impl Into<oxmera_core::Shape>,
    dtype: oxmera_core::DType,
    device: oxmera_core::Device,
) -> oxmera_core::Result<crate::Tensor> {
    if dtype == oxmera_core::DType::F64 {
        return crate::Tensor::from_vec(values, shape, device);
    }
    let narrow: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    crate::Tensor::from_vec(narrow, shape, device)?.to_dtype(dtype)
}
