//! Launch configurations and the thread geometry they imply.
//!
//! A launch is only grid and block sizes; how its threads fall into warps is
//! the [`Target`]'s business, so every function here that speaks of warps
//! takes the target's warp width.

use std::fmt;

use crate::ir::{Axis, Builtin, Dim3};
use crate::target::Target;

/// A concrete launch: grid and block sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in each block.
    pub block: Dim3,
}

/// Why a launch configuration cannot run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// A zero extent.
    #[error("launch has a zero extent: grid {grid}, block {block}")]
    ZeroExtent {
        /// The grid.
        grid: Dim3,
        /// The block.
        block: Dim3,
    },
    /// More threads per block than the target allows.
    #[error(
        "block {block} has {threads} threads; the most a block may have on target {target} is {max}"
    )]
    BlockTooLarge {
        /// The block.
        block: Dim3,
        /// Its thread count.
        threads: u64,
        /// The target's limit.
        max: u32,
        /// The target, by name.
        target: String,
    },
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig {
            grid: Dim3::x(grid),
            block: Dim3::x(block),
        }
    }

    /// Checks the launch against the target's limits.
    pub fn validate(&self, target: &Target) -> Result<(), LaunchError> {
        if self.grid.count() == 0 || self.block.count() == 0 {
            return Err(LaunchError::ZeroExtent {
                grid: self.grid,
                block: self.block,
            });
        }
        if self.block.count() > target.max_block_threads() as u64 {
            return Err(LaunchError::BlockTooLarge {
                block: self.block,
                threads: self.block.count(),
                max: target.max_block_threads(),
                target: target.to_string(),
            });
        }
        Ok(())
    }

    /// Threads per block.
    pub fn block_threads(&self) -> u32 {
        self.block.count() as u32
    }

    /// Warps of `warp_width` lanes per block (the last may be partial).
    pub fn warps_per_block(&self, warp_width: u32) -> u32 {
        self.block_threads().div_ceil(warp_width)
    }

    /// The 3-D thread index of a linear thread index within a block.
    pub fn thread_index(&self, linear: u32) -> Dim3 {
        let b = self.block;
        Dim3::new(linear % b.x, (linear / b.x) % b.y, linear / (b.x * b.y))
    }

    /// The value of a builtin for linear thread `t` of a block on a target
    /// with warps of `warp_width` lanes, if it is the same in every block
    /// (block indices are not).
    pub fn builtin_in_block(&self, b: Builtin, t: u32, warp_width: u32) -> Option<u32> {
        let ti = self.thread_index(t);
        Some(match b {
            Builtin::ThreadIdx(a) => ti.get(a),
            Builtin::BlockDim(a) => self.block.get(a),
            Builtin::GridDim(a) => self.grid.get(a),
            Builtin::LaneId => t % warp_width,
            Builtin::WarpId => t / warp_width,
            Builtin::WarpSize => warp_width,
            Builtin::BlockIdx(a) => {
                if self.grid.get(a) == 1 {
                    0
                } else {
                    return None;
                }
            }
        })
    }
}

impl fmt::Display for LaunchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "grid {} block {}", self.grid, self.block)
    }
}

/// Every axis, in order.
pub const AXES: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_of_a_2d_block() {
        let l = LaunchConfig {
            grid: Dim3::x(1),
            block: Dim3::new(16, 4, 1),
        };
        assert_eq!(l.thread_index(17), Dim3::new(1, 1, 0));
        assert_eq!(l.warps_per_block(32), 2);
        assert_eq!(l.builtin_in_block(Builtin::WarpId, 40, 32), Some(1));
        assert_eq!(l.builtin_in_block(Builtin::LaneId, 40, 32), Some(8));
    }

    #[test]
    fn geometry_depends_on_the_warp_width() {
        let l = LaunchConfig::linear(1, 64);
        assert_eq!(l.warps_per_block(8), 8);
        assert_eq!(l.warps_per_block(64), 1);
        assert_eq!(l.builtin_in_block(Builtin::WarpId, 40, 8), Some(5));
        assert_eq!(l.builtin_in_block(Builtin::LaneId, 40, 8), Some(0));
        assert_eq!(l.builtin_in_block(Builtin::WarpSize, 3, 8), Some(8));
        assert_eq!(l.builtin_in_block(Builtin::WarpId, 40, 64), Some(0));
    }

    #[test]
    fn oversized_block_is_rejected() {
        let l = LaunchConfig::linear(1, 2048);
        assert!(matches!(
            l.validate(&Target::generic()),
            Err(LaunchError::BlockTooLarge {
                threads: 2048,
                max: 1024,
                ..
            })
        ));
    }
}
