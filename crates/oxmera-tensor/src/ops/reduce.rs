//! Front end: reduce operations.
