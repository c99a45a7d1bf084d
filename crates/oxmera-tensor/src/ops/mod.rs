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
