//! The kernel library: kernels written in the language, each with a demo
//! that runs it in the simulator on seeded inputs and compares the result
//! with a straightforward f64 host computation.

mod demos;
mod flip;
mod kernels;
mod ops;

pub use demos::{Demo, DemoOutcome, demo, demo_on, demos_launch, prepare, rng_f32};
pub use flip::{flip, flip_fixed};
pub use kernels::{
    add, binary_code, binary_strided, matmul_strided, matmul_tiled, reduce_sum, softmax_rows,
    transpose_tiled, unary_code, unary_strided,
};
pub use ops::{
    REDUCE_CHUNK, REDUCE_LEAF, bytes_to_f32, compare_code, compare_packed, fill_words,
    reduce_strided, scalar_code, scalar_strided,
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
        e(
            "fill_words",
            "fill with a two-word pattern: one fill for every dtype",
            fill_words,
        ),
        e(
            "scalar_strided",
            "elementwise op with a scalar operand over a strided input",
            scalar_strided,
        ),
        e(
            "reduce_strided",
            "sum or mean over any dims of a strided input, a thread per output",
            reduce_strided,
        ),
        e(
            "compare_packed",
            "elementwise comparison written as byte bools, four to a word",
            compare_packed,
        ),
        e(
            "bytes_to_f32",
            "bool or u8 bytes (four to a word) to f32 over a strided input",
            bytes_to_f32,
        ),
        e(
            "matmul_strided",
            "batched tiled matmul over strided (transposed, broadcast) operands",
            matmul_strided,
        ),
    ]
}
