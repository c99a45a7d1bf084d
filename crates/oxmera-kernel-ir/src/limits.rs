//! NVIDIA's documented shared-memory limits per thread block.
//!
//! Source: the "Technical Specifications per Compute Capability" table of the
//! CUDA C++ Programming Guide (row "Maximum amount of shared memory per thread
//! block"). Statically declared shared memory is capped at 48 KiB on every
//! compute capability; more needs dynamic shared memory and an explicit
//! opt-in (`cudaFuncAttributeMaxDynamicSharedMemorySize`), up to the limits
//! below.

use std::fmt;
use std::str::FromStr;

/// The static shared-memory cap per block, the same on every target.
pub const STATIC_SHARED_CAP: u64 = 48 * 1024;

/// A compute capability `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComputeCapability {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `(major, minor, opt-in bytes per block)`.
const TABLE: &[(u32, u32, u64)] = &[
    (7, 0, 96 * 1024),
    (7, 2, 96 * 1024),
    (7, 5, 64 * 1024),
    (8, 0, 163 * 1024),
    (8, 6, 99 * 1024),
    (8, 7, 163 * 1024),
    (8, 9, 99 * 1024),
    (9, 0, 227 * 1024),
    (10, 0, 227 * 1024),
    (12, 0, 99 * 1024),
];

/// A compute capability string that is malformed or not in the table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown compute capability `{given}`; known: {known}")]
pub struct UnknownCc {
    /// What was given.
    pub given: String,
    /// The table's entries.
    pub known: String,
}

impl ComputeCapability {
    /// Every compute capability in the table.
    pub fn known() -> Vec<ComputeCapability> {
        TABLE
            .iter()
            .map(|&(major, minor, _)| ComputeCapability { major, minor })
            .collect()
    }

    /// The most shared memory one block may use on this target, with the
    /// dynamic opt-in.
    pub fn max_shared_per_block(self) -> u64 {
        TABLE
            .iter()
            .find(|&&(a, b, _)| a == self.major && b == self.minor)
            .map(|t| t.2)
            .unwrap_or(STATIC_SHARED_CAP)
    }

    /// The most blocks a launch may have along x, y and z: 2³¹ − 1, 65535
    /// and 65535 on every compute capability from 3.0 on (the CUDA
    /// programming guide's table of technical specifications).
    pub fn max_grid(self) -> crate::ir::Dim3 {
        crate::ir::Dim3::new(i32::MAX as u32, 65535, 65535)
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for ComputeCapability {
    type Err = UnknownCc;
    fn from_str(s: &str) -> Result<Self, UnknownCc> {
        let err = || UnknownCc {
            given: s.to_string(),
            known: ComputeCapability::known()
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let (a, b) = s.split_once('.').ok_or_else(err)?;
        let cc = ComputeCapability {
            major: a.parse().map_err(|_| err())?,
            minor: b.parse().map_err(|_| err())?,
        };
        if TABLE
            .iter()
            .any(|&(x, y, _)| x == cc.major && y == cc.minor)
        {
            Ok(cc)
        } else {
            Err(err())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lookups() {
        let cc: ComputeCapability = "7.5".parse().unwrap();
        assert_eq!(cc.max_shared_per_block(), 65536);
        let cc: ComputeCapability = "9.0".parse().unwrap();
        assert_eq!(cc.max_shared_per_block(), 227 * 1024);
        assert!("6.1".parse::<ComputeCapability>().is_err());
        assert!("nine".parse::<ComputeCapability>().is_err());
    }
}
