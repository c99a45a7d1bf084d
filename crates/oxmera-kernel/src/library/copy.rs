//! Moving words between strided places: kernels that serve every op made
//! of copying — a contiguous copy, padding, concatenation, flipping,
//! choosing (`where`), zeroing a triangle, selecting by index — for every
//! dtype of four or eight bytes.
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

/// `out[i] = cond[..] ? a[..] : b[..]` over strided words: `cond` holds
/// bools as bytes (four to a word; its strides and offset count bytes),
/// `a` and `b` words as [`copy_words`] reads them. `out` is row-major.
#[kernel(block = [64, 256])]
pub fn where_words(
    cond: &[u32],
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
    shape: &[u32],
    cstride: &[i32],
    astride: &[i32],
    bstride: &[i32],
    ndim: u32,
    n: u32,
    coff: i32,
    aoff: i32,
    boff: i32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut ci = coff;
        let mut ai = aoff;
        let mut bi = boff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            ci += c as i32 * cstride[d];
            ai += c as i32 * astride[d];
            bi += c as i32 * bstride[d];
        }
        let byte = (cond[ci / 4] >> (((ci % 4) * 8) as u32)) & 0xFFu32;
        if byte != 0u32 {
            out[i] = a[ai];
        } else {
            out[i] = b[bi];
        }
    }
}

/// `out` = `x` with the words off one triangle zeroed: element `(.., r,
/// c, ..)` — `r` along `row_dim`, `c` along the next dim — is kept where
/// `c - r >= diagonal` (`upper`) or `c - r <= diagonal` (lower). Zero is
/// the all-zero word for every dtype this serves (f32, i32, and f64/i64
/// as word pairs).
#[kernel(block = [64, 256])]
pub fn triangle_words(
    x: &[u32],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    row_dim: u32,
    diagonal: i32,
    upper: bool,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        let mut row = 0i32;
        let mut col = 0i32;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            xi += c as i32 * xstride[d];
            if d == row_dim {
                row = c as i32;
            }
            if d == row_dim + 1u32 {
                col = c as i32;
            }
        }
        let mut keep = col - row <= diagonal;
        if upper {
            keep = col - row >= diagonal;
        }
        if keep {
            out[i] = x[xi];
        } else {
            out[i] = 0u32;
        }
    }
}

/// `out` = the slices of `x` along `dim` at `index` (i32, range-checked by
/// the front end; strided by `istride` from `ioff`): output element `c`
/// reads `x` at `c` with its coordinate along `dim` replaced by
/// `index[c_dim]`.
#[kernel(block = [64, 256])]
pub fn select_words(
    x: &[u32],
    index: &[i32],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    dim: u32,
    istride: i32,
    ioff: i32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            if d == dim {
                xi += index[ioff + c as i32 * istride] * xstride[d];
            } else {
                xi += c as i32 * xstride[d];
            }
        }
        out[i] = x[xi];
    }
}

/// The demo: a transposed `[3, 4]` view of a `[4, 3]` source (its words
/// read backwards along the first dim, as a flip does) written into the
/// interior of a `[5, 6]` destination of sevens, one row and one column in.
pub(super) fn demo(name: &str, block: Dim3) -> Option<Demo> {
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    let i = |v: i32| Arg::Scalar(Value::I32(v));
    let words = |v: &[u32]| Arg::Buffer(Buffer::from_u32(v));
    let ints = |v: &[i32]| Arg::Buffer(Buffer::from_i32(v));
    let launch = |n: u32| LaunchConfig {
        grid: Dim3::x(n.div_ceil(block.count() as u32)),
        block,
    };
    let src: Vec<u32> = (100..124).collect();
    Some(match name {
        "copy_words" => copy_demo(block),
        "where_words" => {
            // cond [2, 3] bytes (one word and a half); a [2, 3]; b a row
            // broadcast down (stride 0).
            let bits = [1u8, 0, 0, 1, 1, 0];
            let cond = [
                u32::from_le_bytes([1, 0, 0, 1]),
                u32::from_le_bytes([1, 0, 0, 0]),
            ];
            let expected = (0..6)
                .map(|k| {
                    f64::from(if bits[k] != 0 {
                        src[k]
                    } else {
                        7 + (k % 3) as u32
                    })
                })
                .collect();
            Demo {
                launch: launch(6),
                args: vec![
                    words(&cond),
                    words(&src[..6]),
                    words(&[7, 8, 9]),
                    words(&[0; 6]),
                    words(&[2, 3]),
                    ints(&[3, 1]),
                    ints(&[3, 1]),
                    ints(&[0, 1]),
                    u(2),
                    u(6),
                    i(0),
                    i(0),
                    i(0),
                ],
                output: 3,
                expected,
                tolerance: vec![0.0; 6],
                summary: "where over [2,3] byte bools, b broadcast along rows".into(),
            }
        }
        "triangle_words" => {
            // Upper triangle from diagonal 1 of two [3, 4] matrices.
            let expected = (0..24)
                .map(|k| {
                    let (r, c) = ((k / 4) % 3, k % 4);
                    f64::from(if c as i32 - r as i32 >= 1 { src[k] } else { 0 })
                })
                .collect();
            Demo {
                launch: launch(24),
                args: vec![
                    words(&src),
                    words(&[0; 24]),
                    words(&[2, 3, 4]),
                    ints(&[12, 4, 1]),
                    u(3),
                    u(24),
                    i(0),
                    u(1),
                    i(1),
                    Arg::Scalar(Value::Bool(true)),
                ],
                output: 1,
                expected,
                tolerance: vec![0.0; 24],
                summary: "the upper triangle (diagonal 1) of two [3,4] matrices".into(),
            }
        }
        "select_words" => {
            // Columns 3, 0, 3 of a [4, 6] matrix, the index read backwards.
            let index = [3i32, 0, 3];
            let expected = (0..12)
                .map(|k| f64::from(src[(k / 3) * 6 + index[2 - k % 3] as usize]))
                .collect();
            Demo {
                launch: launch(12),
                args: vec![
                    words(&src),
                    ints(&index),
                    words(&[0; 12]),
                    words(&[4, 3]),
                    ints(&[6, 1]),
                    u(2),
                    u(12),
                    i(0),
                    u(1),
                    i(-1),
                    i(2),
                ],
                output: 2,
                expected,
                tolerance: vec![0.0; 12],
                summary: "index_select of columns [3, 0, 3] (a reversed index view)".into(),
            }
        }
        _ => return None,
    })
}

/// The `copy_words` demo.
fn copy_demo(block: Dim3) -> Demo {
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
