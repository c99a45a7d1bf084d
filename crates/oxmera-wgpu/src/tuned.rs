//! Tuned launches: the backend's kernels at the configuration
//! `oxmera kernel tune` found best for this adapter, else at the defaults
//! fixed before any tuning.
//!
//! The tuning cache (`oxmera_kernel::tune::cache`) is keyed by the
//! adapter's identity ([`identity`]: name, backend, driver), the kernel's IR
//! hash and the oxmera version, so an entry is used only on the adapter,
//! driver and code it was measured with. A missing, disabled
//! (`OXMERA_TUNE_CACHE=off`) or corrupt cache — the last with a warning —
//! leaves the default. Two launches read it: `matmul_strided`'s tile (the
//! choice whose best value differs most between GPUs: shared memory,
//! registers, warp width) and `reduce_strided`'s block.

use oxmera_kernel::ir::{Dim3, Kernel};
use oxmera_kernel::space::{Config, specialize};

/// The matmul tile used when the cache says nothing: 16 x 16, the
/// kernel's own default and contract (256 threads, 2 KiB of shared memory:
/// inside every adapter's limits oxmera has met).
pub(crate) const DEFAULT_MATMUL_TILE: u32 = 16;

/// The identity the tuning cache keys an adapter by.
pub(crate) fn identity(report: &crate::AdapterReport) -> String {
    format!(
        "wgpu: {}; {}; {}",
        report.name, report.backend, report.driver
    )
}

/// The matmul kernel and its tile for a cached configuration: the
/// specialized kernel when the entry is a square tile with its
/// `(TILE, TILE)` block (anything else is not a configuration of the
/// kernel's search space and is ignored), else the library's kernel at
/// [`DEFAULT_MATMUL_TILE`]. The specialized kernel is leaked once per
/// adapter: the backend keys its pipelines by the kernel's address.
pub(crate) fn matmul_choice(
    base: &'static Kernel,
    cached: Option<Config>,
) -> (&'static Kernel, u32) {
    match cached {
        Some(c)
            if c.specs.len() == 1
                && u32::try_from(c.specs[0]).is_ok_and(|t| {
                    t > 0 && t != DEFAULT_MATMUL_TILE && c.block == Dim3::new(t, t, 1)
                }) =>
        {
            let tile = c.specs[0] as u32;
            (Box::leak(Box::new(specialize(base, &c))), tile)
        }
        _ => (base, DEFAULT_MATMUL_TILE),
    }
}

/// The block `reduce_strided` runs with when the cache says nothing: 64,
/// small because its threads' loops can be long and uneven.
pub(crate) const DEFAULT_REDUCE_BLOCK: u32 = 64;

/// The reduction's block for a cached configuration: a one-dimensional
/// block the kernel's contract declares (the backend's gate holds it to
/// the contract), else [`DEFAULT_REDUCE_BLOCK`].
pub(crate) fn reduce_block_choice(k: &Kernel, cached: Option<Config>) -> u32 {
    match cached {
        Some(c) if c.block.y == 1 && c.block.z == 1 && k.launch.blocks.contains(&c.block) => {
            c.block.x
        }
        _ => DEFAULT_REDUCE_BLOCK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmera_kernel::library::matmul_strided;

    #[test]
    fn a_cached_square_tile_is_used_and_anything_else_is_the_default() {
        let base = matmul_strided();
        let (k, tile) = matmul_choice(base, None);
        assert!(std::ptr::eq(k, base) && tile == DEFAULT_MATMUL_TILE);
        let eight = Config {
            block: Dim3::new(8, 8, 1),
            specs: vec![8],
        };
        let (k, tile) = matmul_choice(base, Some(eight));
        assert_eq!((tile, k.default_specs()), (8, vec![8]));
        assert_eq!(k.launch.blocks, vec![Dim3::new(8, 8, 1)]);
        // A block that does not match its tile is no configuration of the
        // kernel: ignored.
        let skewed = Config {
            block: Dim3::new(16, 8, 1),
            specs: vec![16],
        };
        assert_eq!(matmul_choice(base, Some(skewed)).1, DEFAULT_MATMUL_TILE);
    }

    #[test]
    fn a_cached_reduction_block_must_be_one_the_contract_declares() {
        let k = oxmera_kernel::library::reduce_strided();
        let at = |x: u32| {
            Some(Config {
                block: Dim3::x(x),
                specs: Vec::new(),
            })
        };
        assert_eq!(reduce_block_choice(k, None), DEFAULT_REDUCE_BLOCK);
        assert_eq!(reduce_block_choice(k, at(256)), 256);
        assert_eq!(reduce_block_choice(k, at(128)), DEFAULT_REDUCE_BLOCK);
    }
}
