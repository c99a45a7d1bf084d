//! Front end: binary operations.
