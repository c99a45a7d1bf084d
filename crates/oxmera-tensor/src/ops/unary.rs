//! Front end: unary operations.
