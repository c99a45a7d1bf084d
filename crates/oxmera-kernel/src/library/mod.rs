//! The kernel library: kernels written in the language, each with a demo
//! that runs it in the simulator on seeded inputs and compares the result
//! with a straightforward f64 host computation.

mod demos;
mod flip;
mod kernels;

pub use demos::{Demo, DemoOutcome, demo, demo_on, demos_launch, prepare, rng_f32};
pub use flip::{flip, flip_fixed};
pub use kernels::{
    add, binary_code, binary_strided, matmul_tiled, reduce_sum, softmax_rows, transpose_tiled,
    unary_code, unary_strided,
};

use crate::registry::{Entry, Origin};

/// The library's kernels for the registry.
pub fn entries() -> Vec<Entry> {
    let e = |name, summary, kernel| Entry {
        name,
        summary,
        kernel,
        origin: Origin::Library,
    };
    vec![
        e(
            "flip",
            "block sum whose barriers hide under `warp_id() == 0`: clean at block 32, OXK001 at 64",
            flip,
        ),
        e(
            "flip_fixed",
            "flip with its barriers outside the guard: clean at every block",
            flip_fixed,
        ),
        e("add", "out[i] = a[i] + b[i], contiguous", add),
        e(
            "unary_strided",
            "elementwise unary op over a strided / broadcast input",
            unary_strided,
        ),
        e(
            "binary_strided",
            "elementwise binary op over two strided / broadcast inputs",
            binary_strided,
        ),
        e(
            "reduce_sum",
            "block sum: shared-memory tree, then warp shuffles",
            reduce_sum,
        ),
        e(
            "softmax_rows",
            "row softmax, one block per row",
            softmax_rows,
        ),
        e(
            "transpose_tiled",
            "tiled transpose through a TILE x (TILE+1) shared tile",
            transpose_tiled,
        ),
        e(
            "matmul_tiled",
            "tiled matmul staged through shared memory",
            matmul_tiled,
        ),
    ]
}
