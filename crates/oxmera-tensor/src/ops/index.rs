//! Front end: index operations.
