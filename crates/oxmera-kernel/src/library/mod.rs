//! The kernel library: kernels written in the language, each with a demo
//! that runs it in the simulator on seeded inputs and compares the result
//! with a straightforward f64 host computation.

mod bools;
mod cast;
mod conv;
mod copy;
mod demos;
mod flip;
mod generic;
mod halves;
mod int64;
mod ints;
mod ints_demos;
mod kernels;
mod math;
mod math_demo;
mod moves;
mod norm;
mod ops;
mod random;
mod register_tiled;
mod scan;
mod sort;
mod stencil;
mod unary;
mod wide;
mod wide_accumulate;
mod wide_math;
mod wide_math_demo;

pub use bools::{logical_code, logical_packed};
pub use cast::{cast_code, cast_strided};
pub use conv::{
    conv2d_direct, conv2d_grad_input, conv2d_grad_weight, pool2d_backward, pool2d_forward,
};
pub use copy::{copy_words, select_words, triangle_words, where_words};
pub use demos::{Demo, DemoOutcome, demo, demo_on, demos_launch, prepare, rng_f32};
pub(crate) use demos::{matmul_strided_workload, reduce_strided_workload};
pub use flip::{flip, flip_fixed};
pub use generic::{axpy, axpy_instance, axpy_instances, iota, iota_instance, iota_instances};
pub use halves::{f32_to_halves, half_mode, halves_to_f32};
pub use int64::{i64_elementwise, i64_matmul_strided, i64_reduce_strided};
pub use ints::{
    int_code, int_elementwise, int_kind, int_matmul_strided, int_out, int_reduce_code,
    int_reduce_strided,
};
pub use kernels::{
    add, binary_code, binary_strided, matmul_strided, matmul_tiled, reduce_sum, softmax_rows,
    transpose_tiled,
};
pub use math::{
    binary_math_code, binary_math_strided, logcumsumexp_strided, math_code, unary_math_strided,
};
pub use moves::{gather_words, scatter_code, scatter_words};
pub use norm::{layer_norm_rows, moment_code, moments_strided};
pub use ops::{
    REDUCE_CHUNK, REDUCE_LEAF, argbest_strided, bytes_to_f32, compare_code, compare_i64_packed,
    compare_packed, count_bytes_strided, fill_words, gather_strided, i64_to_i32, reduce_strided,
    scalar_code, scalar_strided, scatter_add_strided, softmax_strided,
};
pub use random::philox_uniform;
pub use register_tiled::matmul_register_tiled;
pub use scan::{scan_code, scan_strided};
pub use sort::{bitonic_step, sort_keys, sort_kind};
pub use stencil::stencil3_tiled;
pub(crate) use stencil::workload as stencil_workload;
pub use unary::{unary_code, unary_strided};
pub use wide::{
    binary_strided_f64, compare_packed_f64, matmul_strided_f64, reduce_strided_f64,
    unary_strided_f64,
};
pub use wide_accumulate::{argbest_f64, scan_f64, scatter_add_f64};
pub use wide_math::{
    MOMENT_LOGSUMEXP, binary_math_f64, logcumsumexp_f64, moments_f64, softmax_f64, unary_math_f64,
    wide_math_code,
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
    let mut v = vec![
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
            "unary_math_strided",
            "the library functions beyond unary_strided's (exp2, expm1, sinh, atan, erf, GELU, ...) over a strided input",
            unary_math_strided,
        ),
        e(
            "binary_math_strided",
            "atan2, hypot, pow, fmod and the floored remainder over two strided / broadcast inputs",
            binary_math_strided,
        ),
        e(
            "logcumsumexp_strided",
            "running log-sum-exp of f32 along a dim, a row a thread, the reference's step in order",
            logcumsumexp_strided,
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
            "matmul_register_tiled",
            "matmul: a REG x REG register tile a thread, fed from 2-D shared slices",
            matmul_register_tiled,
        ),
        e(
            "stencil3_tiled",
            "three-point stencil through a shared tile: its fastest tile is over the shared-memory budget",
            stencil3_tiled,
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
            "softmax_strided",
            "softmax or log-softmax along any dim of a strided input, a row a thread",
            softmax_strided,
        ),
        e(
            "gather_strided",
            "gather along a dim of a strided input by i32 indices",
            gather_strided,
        ),
        e(
            "scatter_add_strided",
            "deterministic scatter-add: a thread per output walks the index",
            scatter_add_strided,
        ),
        e(
            "i64_to_i32",
            "i64 (two words each) to i32 over a strided input: index conversion",
            i64_to_i32,
        ),
        e(
            "argbest_strided",
            "argmax or argmin over dims of a strided input, NaN first, as i64",
            argbest_strided,
        ),
        e(
            "compare_i64_packed",
            "comparison of i64 word pairs written as byte bools",
            compare_i64_packed,
        ),
        e(
            "count_bytes_strided",
            "sum of bool or u8 bytes over dims, as i64",
            count_bytes_strided,
        ),
        e(
            "matmul_strided",
            "batched tiled matmul over strided (transposed, broadcast) operands",
            matmul_strided,
        ),
        e(
            "philox_uniform",
            "uniform f32 from Philox4x32-10 blocks: the host's random stream, a thread per element",
            philox_uniform,
        ),
        e(
            "conv2d_direct",
            "2-D convolution over NCHW, a thread per output (groups, stride, padding, dilation)",
            conv2d_direct,
        ),
        e(
            "conv2d_grad_input",
            "conv2d's input gradient, a thread per input element (no atomics)",
            conv2d_grad_input,
        ),
        e(
            "conv2d_grad_weight",
            "conv2d's weight gradient, a thread per weight",
            conv2d_grad_weight,
        ),
        e(
            "pool2d_forward",
            "max (first NaN wins) or average pooling over NCHW, a thread per output",
            pool2d_forward,
        ),
        e(
            "pool2d_backward",
            "pooling's gradient, a thread per input element walking its windows",
            pool2d_backward,
        ),
        e(
            "copy_words",
            "32-bit words from one strided place to another: contiguous, pad, cat, flip for 4- and 8-byte dtypes",
            copy_words,
        ),
        e(
            "where_words",
            "cond ? a : b over strided words, cond as byte bools",
            where_words,
        ),
        e(
            "triangle_words",
            "the upper or lower triangle of the last two dims, the rest zeroed",
            triangle_words,
        ),
        e(
            "select_words",
            "index_select: slices along a dim at i32 indices",
            select_words,
        ),
        e(
            "logical_packed",
            "and, or, xor, not of strided byte bools, written four to a word",
            logical_packed,
        ),
        e(
            "layer_norm_rows",
            "layer normalization over trailing dims of a strided input, a row a thread",
            layer_norm_rows,
        ),
        e(
            "halves_to_f32",
            "f16 or bf16 (packed two to a word) through a strided view to f32, exactly",
            halves_to_f32,
        ),
        e(
            "f32_to_halves",
            "f32 through a strided view to f16 or bf16, nearest even, two to a word",
            f32_to_halves,
        ),
        e(
            "cast_strided",
            "dtype cast between f32, f16, bf16, i32, i64, u8 and bool over a strided input, on the bits",
            cast_strided,
        ),
        e(
            "gather_words",
            "gather along a dim on words (one or two an element): every dtype's bits",
            gather_words,
        ),
        e(
            "scatter_words",
            "deterministic scatter (replace, last wins) or wrapping scatter-add on words",
            scatter_words,
        ),
        e(
            "scan_strided",
            "cumsum or cumprod along a dim, a row a thread in order: f32, or integers as wrapping i64",
            scan_strided,
        ),
        e(
            "sort_keys",
            "sort keys of a strided input: the reference's total order as unsigned 64-bit keys, rows padded to a power of two",
            sort_keys,
        ),
        e(
            "bitonic_step",
            "one compare-exchange stage of a bitonic sorting network over (key, position) rows",
            bitonic_step,
        ),
        e(
            "moments_strided",
            "variance, std, max, min or product over dims of a strided input, a thread per output",
            moments_strided,
        ),
        e(
            "binary_strided_f64",
            "binary_strided in f64: elementwise binary op over strided / broadcast f64 inputs",
            binary_strided_f64,
        ),
        e(
            "unary_strided_f64",
            "unary_strided in f64 for the ops exact or correctly rounded there (neg, abs, sqrt, ...)",
            unary_strided_f64,
        ),
        e(
            "compare_packed_f64",
            "compare_packed in f64: comparisons written as byte bools, four to a word",
            compare_packed_f64,
        ),
        e(
            "reduce_strided_f64",
            "reduce_strided in f64: blocked sum or mean over dims of a strided input",
            reduce_strided_f64,
        ),
        e(
            "matmul_strided_f64",
            "matmul_strided in f64: batched tiled matmul over strided operands",
            matmul_strided_f64,
        ),
        e(
            "scatter_add_f64",
            "scatter_words' add in f64: a thread per output adding its sources in order",
            scatter_add_f64,
        ),
        e(
            "binary_math_f64",
            "f64 pow (exp and ln of this module's own) and hypot over two strided / broadcast inputs",
            binary_math_f64,
        ),
        e(
            "unary_math_f64",
            "f64 exp and ln written out of exact operations, what is built on them, and the exact ops",
            unary_math_f64,
        ),
        e(
            "softmax_f64",
            "softmax or log-softmax of f64 along a dim, a row a thread, the reference's passes",
            softmax_f64,
        ),
        e(
            "moments_f64",
            "variance, std, max, min, product and log-sum-exp of f64 over dims, a thread per output",
            moments_f64,
        ),
        e(
            "argbest_f64",
            "argmax or argmin of f64 over dims as i64, the first best (a NaN first), a thread per output",
            argbest_f64,
        ),
        e(
            "logcumsumexp_f64",
            "running log-sum-exp of f64 along a dim, a row a thread, the reference's step in order",
            logcumsumexp_f64,
        ),
        e(
            "scan_f64",
            "cumsum or cumprod of f64 along a dim, a row a thread in order",
            scan_f64,
        ),
        e(
            "int_elementwise",
            "i32, u8 and bool arithmetic and comparisons over strided operands, bytes four to a word",
            int_elementwise,
        ),
        e(
            "int_reduce_strided",
            "sum and product (as i64), max, min, argmax, argmin, all, any of integers and bools",
            int_reduce_strided,
        ),
        e(
            "int_matmul_strided",
            "batched i32 or u8 matmul over strided operands, wrapping, a thread per output",
            int_matmul_strided,
        ),
        e(
            "i64_elementwise",
            "i64 arithmetic over strided operands in 32-bit words (wrapping, floor division), a pair a thread",
            i64_elementwise,
        ),
        e(
            "i64_reduce_strided",
            "sum and product (wrapping), max, min, argmax, argmin of i64 word pairs",
            i64_reduce_strided,
        ),
        e(
            "i64_matmul_strided",
            "batched i64 matmul over strided operands in 32-bit words, wrapping, a thread per output",
            i64_matmul_strided,
        ),
    ];
    // A generic kernel is listed once per instance, under the instance's
    // name (`axpy<f32>`); `registry::instances("axpy")` finds them all.
    type Instances = &'static [fn() -> &'static crate::ir::Kernel];
    let generic: [(Instances, &'static str); 2] = [
        (
            axpy_instances(),
            "y = a * x + y in any float type (generic over T: Float)",
        ),
        (
            iota_instances(),
            "out[i] = start + step * i in any integer type, wrapping (generic over T: Int)",
        ),
    ];
    for (instances, summary) in generic {
        for &build in instances {
            v.push(e(build().name.as_str(), summary, build));
        }
    }
    v
}
