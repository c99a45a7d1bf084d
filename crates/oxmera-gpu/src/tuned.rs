//! Tuned launches: the op layer's kernels at the configuration
//! `oxmera kernel tune` found best for this device, else at the defaults
//! fixed before any tuning.
//!
//! The tuning cache (`oxmera_kernel::tune::cache`) is keyed by the
//! device's identity (each backend's `identity`: for wgpu the adapter's
//! name, backend and driver; for CUDA the part, its compute capability and
//! the driver), the kernel's IR
//! hash and the oxmera version, so an entry is used only on the device,
//! driver and code it was measured with. A missing, disabled
//! (`OXMERA_TUNE_CACHE=off`) or corrupt cache — the last with a warning —
//! leaves the default, and so does an entry that is not a configuration
//! of the kernel's search space for the device or does not fit its limits
//! (with a warning: [`admissible`]). Two launches read it: `matmul_strided`'s tile (the
//! choice whose best value differs most between GPUs: shared memory,
//! registers, warp width) and `reduce_strided`'s block.

use oxmera_kernel::ir::{Dim3, Kernel};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::space::{Config, specialize};
use oxmera_kernel::target::Target;

/// The matmul tile used when the cache says nothing: 16 x 16, the
/// kernel's own default and contract (256 threads, 2 KiB of shared memory:
/// inside every device's limits oxmera has met).
pub const DEFAULT_MATMUL_TILE: u32 = 16;

/// Whether `c`, cached for `k` on a device of `target`, may be launched
/// there: a configuration of the kernel's search space for the target,
/// whose block and shared memory fit the target's limits and in which the
/// analysis finds nothing at a launch of `grid` — the backend's own gate,
/// run once here, so that an entry written by hand or by another build
/// cannot make every launch of the kernel fail. `Err` says why not.
pub fn admissible(k: &Kernel, c: &Config, target: Target, grid: Dim3) -> Result<Kernel, String> {
    let label = c.label(k);
    if !oxmera_kernel::space::configurations(k, &target)
        .iter()
        .any(|(s, _)| s == c)
    {
        return Err(format!(
            "{label} is not in `{}`'s search space for {target}",
            k.name
        ));
    }
    let special = specialize(k, c);
    let launch = LaunchConfig {
        grid,
        block: c.block,
    };
    oxmera_kernel::gate(&special, launch, target, &target.to_string())?;
    Ok(special)
}

/// `cached` when [`admissible`], else `None` with a warning naming the
/// entry and why it was ignored.
fn checked(
    k: &Kernel,
    cached: Option<Config>,
    target: Target,
    grid: Dim3,
) -> Option<(Config, Kernel)> {
    let c = cached?;
    match admissible(k, &c, target, grid) {
        Ok(special) => Some((c, special)),
        Err(why) => {
            eprintln!(
                "warning: the tuning cache's entry for `{}` ignored ({why}); using the default",
                k.name
            );
            None
        }
    }
}

/// The matmul kernel and its tile for a cached configuration: the
/// specialized kernel when the entry is [`admissible`] on `target` (a
/// square tile of the kernel's search space with its `(TILE, TILE)`
/// block, inside the device's limits), else — with a warning when there
/// was an entry — the library's kernel at [`DEFAULT_MATMUL_TILE`]. The
/// specialized kernel is leaked once per device: the backend keys its
/// pipelines by the kernel's address.
pub fn matmul_choice(
    base: &'static Kernel,
    cached: Option<Config>,
    target: Target,
) -> (&'static Kernel, u32) {
    match checked(base, cached, target, Dim3::new(2, 2, 2)) {
        Some((c, special))
            if c.specs.len() == 1
                && u32::try_from(c.specs[0]).is_ok_and(|t| {
                    t > 0 && t != DEFAULT_MATMUL_TILE && c.block == Dim3::new(t, t, 1)
                }) =>
        {
            (Box::leak(Box::new(special)), c.specs[0] as u32)
        }
        _ => (base, DEFAULT_MATMUL_TILE),
    }
}

/// The block `reduce_strided` runs with when the cache says nothing: 64,
/// small because its threads' loops can be long and uneven.
pub const DEFAULT_REDUCE_BLOCK: u32 = 64;

/// The reduction's block for a cached configuration: a one-dimensional
/// block of the kernel's search space (its contract's blocks) that is
/// [`admissible`] on `target`, else — with a warning when there was an
/// entry — [`DEFAULT_REDUCE_BLOCK`].
pub fn reduce_block_choice(k: &Kernel, cached: Option<Config>, target: Target) -> u32 {
    match checked(k, cached, target, Dim3::x(2)) {
        Some((c, _)) if c.block.y == 1 && c.block.z == 1 && k.launch.blocks.contains(&c.block) => {
            c.block.x
        }
        _ => DEFAULT_REDUCE_BLOCK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmera_kernel::library::matmul_strided;
    use oxmera_kernel::tune::cache::{CacheKey, TuneCache};

    const LAVAPIPE: Target = Target::lavapipe();

    #[test]
    fn a_cached_square_tile_is_used_and_anything_else_is_the_default() {
        let base = matmul_strided();
        let (k, tile) = matmul_choice(base, None, LAVAPIPE);
        assert!(std::ptr::eq(k, base) && tile == DEFAULT_MATMUL_TILE);
        let eight = Config {
            block: Dim3::new(8, 8, 1),
            specs: vec![8],
        };
        let (k, tile) = matmul_choice(base, Some(eight), LAVAPIPE);
        assert_eq!((tile, k.default_specs()), (8, vec![8]));
        assert_eq!(k.launch.blocks, vec![Dim3::new(8, 8, 1)]);
        // A block that does not match its tile is no configuration of the
        // kernel: ignored.
        let skewed = Config {
            block: Dim3::new(16, 8, 1),
            specs: vec![16],
        };
        assert_eq!(
            matmul_choice(base, Some(skewed), LAVAPIPE).1,
            DEFAULT_MATMUL_TILE
        );
    }

    /// An entry written by hand (or by another build) that names a tile
    /// outside the search space, or one past the adapter's limits, is
    /// ignored for the default: it never reaches the gate, where it would
    /// fail every matmul on the adapter.
    #[test]
    fn a_hand_written_tile_outside_the_space_or_the_limits_is_the_default() {
        let base = matmul_strided();
        let device = "wgpu: a hand-edited adapter; Vulkan; 1.0";
        let key = CacheKey::new(device, base);
        let header = TuneCache::default().to_text();
        let entry = |tile: u32| {
            let text = format!(
                "{header}{device}\t{}\t{}\t{}\t{tile},{tile},1\t{tile}\tby hand\n",
                key.kernel, key.ir_hash, key.version
            );
            let cache = TuneCache::parse(&text, "by hand").expect("a well-formed cache");
            cache.lookup(&key).map(|e| e.config.clone())
        };
        let tile_64 = entry(64);
        assert!(tile_64.is_some(), "the entry is found for its key");
        let err = admissible(
            base,
            tile_64.as_ref().unwrap(),
            LAVAPIPE,
            Dim3::new(2, 2, 2),
        )
        .unwrap_err();
        assert!(
            err.contains("not in `matmul_strided`'s search space"),
            "{err}"
        );
        let (k, tile) = matmul_choice(base, tile_64, LAVAPIPE);
        assert!(std::ptr::eq(k, base) && tile == DEFAULT_MATMUL_TILE);
        // TILE=4 is no value of the space either.
        assert_eq!(
            matmul_choice(base, entry(4), LAVAPIPE).1,
            DEFAULT_MATMUL_TILE
        );
        // TILE=32 is in the space: used where 1024 invocations fit, the
        // default on an adapter that allows 256 a workgroup.
        assert_eq!(matmul_choice(base, entry(32), LAVAPIPE).1, 32);
        let small = Target::from_limits(32, 256, 16 * 1024).unwrap();
        assert_eq!(matmul_choice(base, entry(32), small).1, DEFAULT_MATMUL_TILE);
        assert!(admissible(base, entry(32).as_ref().unwrap(), small, Dim3::new(2, 2, 2)).is_err());
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
        assert_eq!(reduce_block_choice(k, None, LAVAPIPE), DEFAULT_REDUCE_BLOCK);
        assert_eq!(reduce_block_choice(k, at(256), LAVAPIPE), 256);
        assert_eq!(
            reduce_block_choice(k, at(128), LAVAPIPE),
            DEFAULT_REDUCE_BLOCK
        );
        // 256 is declared, but not on an adapter of 128 invocations.
        let small = Target::from_limits(32, 128, 16 * 1024).unwrap();
        assert_eq!(reduce_block_choice(k, at(256), small), DEFAULT_REDUCE_BLOCK);
    }
}
