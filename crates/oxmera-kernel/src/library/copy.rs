//! Moving words between strided places: one kernel that serves every op
//! made of copying — a contiguous copy, padding, concatenation, flipping —
//! for every dtype of four or eight bytes.
//!
//! It copies 32-bit words and never looks at them, so it does not care
//! whether they hold `f32`, `i32` or half of an `f64`/`i64`: an 8-byte
//! tensor is seen as words by a last extra dim of 2 with stride 1 (and
//! every other stride and the offset doubled). The destination is strided
//! too, which is what lets a backend write a tensor into a region of a
//! larger one (a padded interior, one input's part of a concatenation).

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::Demo;

/// `out[ooff + Σ c_d·ostride_d] = x[xoff + Σ c_d·xstride_d]` for every
/// coordinate `c` of `shape`: element `i` of the shape in row-major order
/// is thread `i`. The destination strides must not map two coordinates to
/// one word (the backend's regions never do).
#[kernel(block = [64, 256])]
pub fn copy_words(
    x: &[u32],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    ostride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    ooff: i32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        let mut oi = ooff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            xi += c as i32 * xstride[d];
            oi += c as i32 * ostride[d];
        }
        out[oi] = x[xi];
    }
}

/// The demo: a transposed `[3, 4]` view of a `[4, 3]` source (its words
/// read backwards along the first dim, as a flip does) written into the
/// interior of a `[5, 6]` destination of sevens, one row and one column in.
pub(super) fn demo(block: Dim3) -> Demo {
    let src: Vec<u32> = (0..12).collect();
    // View [3, 4]: element (r, c) is src[(3 - c) * 3 + r], a transpose with
    // the transposed dim flipped: offset 9, strides (1, -3).
    let mut expected = vec![7.0; 30];
    for r in 0..3 {
        for c in 0..4 {
            expected[(r + 1) * 6 + c + 1] = f64::from(src[(3 - c) * 3 + r]);
        }
    }
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    let i = |v: i32| Arg::Scalar(Value::I32(v));
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(12u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_u32(&src)),
            Arg::Buffer(Buffer::from_u32(&[7; 30])),
            Arg::Buffer(Buffer::from_u32(&[3, 4])),
            Arg::Buffer(Buffer::from_i32(&[1, -3])),
            Arg::Buffer(Buffer::from_i32(&[6, 1])),
            u(2),
            u(12),
            i(9),
            i(7),
        ],
        output: 1,
        expected,
        tolerance: vec![0.0; 30],
        summary: "a flipped transpose of [4,3] words into the interior of [5,6]".into(),
    }
}
