//! The backward rules, one function per operation chokepoint.
//!
//! Each function takes the op's inputs and its freshly computed output,
//! and returns the output with a node attached (see [`super::record`]).
//! The rules are written with the public tensor operations, so that every
//! backend differentiates with the kernels it already has; only
//! convolution and pooling need backward kernels of their own.
//!
//! Where an op is not differentiable at a point, the choice is documented
//! beside its rule (for example `relu` at 0, ties of `max`).

mod activation;
mod cumulative;
mod elementwise;
mod norm;
mod reduce;
mod structural;

pub(crate) use cumulative::scan;
pub(crate) use elementwise::{binary, cast, unary, where_cond};
pub(crate) use norm::vector_norm;
pub(crate) use reduce::{layer_norm, matmul, reduce, softmax};
pub(crate) use structural::{
    broadcast, cat, conv2d, flip, gather, identity, index_select, pad, permute, pool2d, reshape,
    scatter, slice, sum_to_shape, triangle,
};
