//! The kernel library: kernels written in the language, each validated in
//! the simulator against straightforward host computations.

mod flip;

pub use flip::flip;
