//! Launch configurations and the thread geometry they imply.

use std::fmt;

use crate::ir::{Axis, Builtin, Dim3};

/// Threads per warp on every target oxmera models.
pub const WARP_SIZE: u32 = 32;

/// Most threads a block may have on compute capability 7.0 and later.
pub const MAX_BLOCK_THREADS: u64 = 1024;

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
    /// More than 1024 threads per block.
    #[error("block {block} has {threads} threads; the most a block may have is 1024")]
    BlockTooLarge {
        /// The block.
        block: Dim3,
        /// Its thread count.
        threads: u64,
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

    /// Checks the hardware limits every target shares.
    pub fn validate(&self) -> Result<(), LaunchError> {
        if self.grid.count() == 0 || self.block.count() == 0 {
            return Err(LaunchError::ZeroExtent {
                grid: self.grid,
                block: self.block,
            });
        }
        if self.block.count() > MAX_BLOCK_THREADS {
            return Err(LaunchError::BlockTooLarge {
                block: self.block,
                threads: self.block.count(),
            });
        }
        Ok(())
    }

    /// Threads per block.
    pub fn block_threads(&self) -> u32 {
        self.block.count() as u32
    }

    /// Warps per block (the last may be partial).
    pub fn warps_per_block(&self) -> u32 {
        self.block_threads().div_ceil(WARP_SIZE)
    }

    /// The 3-D thread index of a linear thread index within a block.
    pub fn thread_index(&self, linear: u32) -> Dim3 {
        let b = self.block;
        Dim3::new(linear % b.x, (linear / b.x) % b.y, linear / (b.x * b.y))
    }

    /// The value of a builtin for linear thread `t` of a block, if it is the
    /// same in every block (block indices are not).
    pub fn builtin_in_block(&self, b: Builtin, t: u32) -> Option<u32> {
        let ti = self.thread_index(t);
        Some(match b {
            Builtin::ThreadIdx(a) => ti.get(a),
            Builtin::BlockDim(a) => self.block.get(a),
            Builtin::GridDim(a) => self.grid.get(a),
            Builtin::LaneId => t % WARP_SIZE,
            Builtin::WarpId => t / WARP_SIZE,
            Builtin::WarpSize => WARP_SIZE,
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
        assert_eq!(l.warps_per_block(), 2);
        assert_eq!(l.builtin_in_block(Builtin::WarpId, 40), Some(1));
        assert_eq!(l.builtin_in_block(Builtin::LaneId, 40), Some(8));
    }

    #[test]
    fn oversized_block_is_rejected() {
        let l = LaunchConfig::linear(1, 2048);
        assert!(matches!(
            l.validate(),
            Err(LaunchError::BlockTooLarge { threads: 2048, .. })
        ));
    }
}
