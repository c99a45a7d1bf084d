//! Neighbouring threads touch elements 32 apart (a transposed walk): right values, every element once, and each warp's access spread over 32 memory lines (uncoalesced), so the kernel costs several copies.
//!
//! A named wrong solution of D2, kept beside the spec: `oxmera ladder
//! verify` runs it and fails when the spec lets it through.

use oxmera_kernel::kernel;

/// `y[i] = a * x[i]` for every `i < n`, by a grid-stride loop (C1).
#[kernel(block = [256])]
pub fn scale(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    let stride = grid_dim_x() * block_dim_x();
    let mut i = block_idx_x() * block_dim_x() + thread_idx_x();
    // The first 32 * rows elements as a rows × 32 table, walked down its
    // columns: element (i % rows, i / rows). The tail is walked in order.
    let rows = n / 32;
    let body = rows * 32;
    while i < n {
        let mut j = i;
        if i < body {
            j = (i % rows) * 32 + i / rows;
        }
        y[j] = a * x[j];
        i += stride;
    }
}

/// The bytes `scale` moves through the GPU's memory for `n` elements:
/// every `x[i]` read once and every `y[i]` written once, 4 bytes each.
pub fn bytes_moved(n: u64) -> u64 {
    // A write costs the memory as much as a read: counting only the reads
    // halves the bandwidth you report.
    2 * 4 * n
}

/// The time that stands for a series of runs: the median of the runs
/// after the first `warmup`, in the same unit as `times`, or `None` when
/// no run is left.
pub fn typical(times: &[f64], warmup: usize) -> Option<f64> {
    // The first runs pay for compiling the kernel (the driver's JIT) and
    // for cold caches: they are not the kernel's time.
    let mut kept: Vec<f64> = times.get(warmup..)?.to_vec();
    if kept.is_empty() {
        return None;
    }
    // The median, not the mean: one run slowed by another process moves
    // a mean as far as it likes and a median hardly at all.
    kept.sort_by(f64::total_cmp);
    let mid = kept.len() / 2;
    Some(if kept.len() % 2 == 1 {
        kept[mid]
    } else {
        (kept[mid - 1] + kept[mid]) / 2.0
    })
}

/// Bandwidth in GB/s (10⁹ bytes a second) of `bytes` moved in `seconds`.
pub fn gb_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}
