//! Front end: matmul operations.
