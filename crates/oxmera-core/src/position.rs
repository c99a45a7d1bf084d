//! [`Position`]: an element position along one dim, counted from the
//! front (`0`, `1`, …) or, when negative, from the back (`-1` is the
//! last), as PyTorch and Python count.
//!
//! Every Rust integer type converts into one, so `x.narrow(0, -2, 2)`,
//! `x.select(1, i)` with `i: usize` and `x.i(-1)` all read as written.
//!
//! ```
//! use oxmera_core::Position;
//! assert_eq!(Position::from(-1).resolve("select", 0, 4)?, 3);
//! assert_eq!(Position::from(2usize).resolve("select", 0, 4)?, 2);
//! assert!(Position::from(4).resolve("select", 0, 4).is_err());
//! // A slice bound clamps, as Python's slices do.
//! assert_eq!(Position::from(-10).clamp_bound(4), 0);
//! assert_eq!(Position::from(99).clamp_bound(4), 4);
//! # Ok::<(), oxmera_core::Error>(())
//! ```

use crate::{Error, Result};

/// A position along a dim; negative counts from the end (see the module
/// docs). Held as an `i128` so that every `i64`, `u64` and `usize` fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position(i128);

macro_rules! position_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Position {
            fn from(v: $t) -> Position {
                Position(v as i128)
            }
        }
    )*};
}
position_from_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl Position {
    /// The position as written (negative counts from the end).
    pub fn get(self) -> i128 {
        self.0
    }

    /// The element at this position of a dim of `size`: in `-size..size`,
    /// else [`Error::IndexOutOfBounds`] naming `op` and `dim`.
    pub fn resolve(self, op: &'static str, dim: usize, size: usize) -> Result<usize> {
        let n = size as i128;
        let i = if self.0 < 0 { self.0 + n } else { self.0 };
        if (0..n).contains(&i) {
            Ok(i as usize)
        } else {
            Err(Error::IndexOutOfBounds {
                op,
                index: self.0.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                dim,
                size,
            })
        }
    }

    /// The start of a range in a dim of `size`: in `-size..=size` (the end
    /// itself starts an empty range), else [`Error::IndexOutOfBounds`].
    pub fn resolve_start(self, op: &'static str, dim: usize, size: usize) -> Result<usize> {
        if self.0 == size as i128 {
            return Ok(size);
        }
        self.resolve(op, dim, size)
    }

    /// A slice bound in a dim of `size`, clamped into `0..=size` after a
    /// negative one is counted from the end: Python's rule for slices,
    /// under which `x[-10:]` of four elements is all four, never an error.
    pub fn clamp_bound(self, size: usize) -> usize {
        let n = size as i128;
        let i = if self.0 < 0 { self.0 + n } else { self.0 };
        i.clamp(0, n) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_positions_count_from_the_end() {
        for (p, want) in [(-1, 2), (-3, 0), (0, 0), (2, 2)] {
            assert_eq!(Position::from(p).resolve("t", 0, 3).unwrap(), want, "{p}");
        }
        for p in [-4i64, 3, i64::MIN, i64::MAX] {
            let err = Position::from(p).resolve("t", 1, 3).unwrap_err();
            assert!(
                matches!(err, Error::IndexOutOfBounds { index, dim: 1, size: 3, .. } if index == p),
                "{err}"
            );
        }
        assert_eq!(Position::from(u64::MAX).get(), u64::MAX as i128);
        assert!(Position::from(u64::MAX).resolve("t", 0, 3).is_err());
    }

    #[test]
    fn a_range_may_start_at_the_end_and_bounds_clamp() {
        assert_eq!(Position::from(3).resolve_start("t", 0, 3).unwrap(), 3);
        assert_eq!(Position::from(-3).resolve_start("t", 0, 3).unwrap(), 0);
        assert!(Position::from(4).resolve_start("t", 0, 3).is_err());
        assert!(Position::from(0).resolve_start("t", 0, 0).is_ok());
        assert_eq!(Position::from(-1).clamp_bound(3), 2);
        assert_eq!(Position::from(-7).clamp_bound(3), 0);
        assert_eq!(Position::from(7).clamp_bound(3), 3);
        assert_eq!(Position::from(0).clamp_bound(0), 0);
    }
}
