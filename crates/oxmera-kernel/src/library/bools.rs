//! Logic on bool tensors, which a GPU backend stores as bytes four to a
//! word (WGSL has no byte type).

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::Demo;

/// The `op` values of [`logical_packed`].
pub mod logical_code {
    /// `a && b`
    pub const AND: u32 = 0;
    /// `a || b`
    pub const OR: u32 = 1;
    /// `a != b`
    pub const XOR: u32 = 2;
    /// `!a` (`b` is not read)
    pub const NOT: u32 = 3;
}

/// A logical op on two strided byte-bool inputs (any nonzero byte is
/// true), written as bytes four to a word: thread `w` computes elements
/// `4w .. 4w + 4` and writes word `w`, so no two threads share a word.
/// `op` is one of [`logical_code`].
#[kernel(block = [64, 256])]
pub fn logical_packed(
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
    shape: &[u32],
    astride: &[i32],
    bstride: &[i32],
    ndim: u32,
    n: u32,
    aoff: i32,
    boff: i32,
    op: u32,
) {
    let w = block_idx_x() * block_dim_x() + thread_idx_x();
    if w * 4 < n {
        let mut word = 0u32;
        for e in 0..4u32 {
            let i = w * 4 + e;
            if i < n {
                let mut rem = i;
                let mut ai = aoff;
                let mut bi = boff;
                for k in 0..ndim {
                    let d = ndim - 1 - k;
                    let c = rem % shape[d];
                    rem = rem / shape[d];
                    ai += c as i32 * astride[d];
                    bi += c as i32 * bstride[d];
                }
                let x = ((a[ai / 4] >> (((ai % 4) * 8) as u32)) & 0xFFu32) != 0u32;
                let y = ((b[bi / 4] >> (((bi % 4) * 8) as u32)) & 0xFFu32) != 0u32;
                let mut r = x && y;
                if op == 1 {
                    r = x || y;
                } else if op == 2 {
                    r = x != y;
                } else if op == 3 {
                    r = !x;
                }
                if r {
                    word = word | (1u32 << (8 * e));
                }
            }
        }
        out[w] = word;
    }
}

/// The demo: `a xor b` over six bools, `b` a broadcast pair read at an
/// offset, the bytes of `a` not all ones (any nonzero byte is true).
pub(super) fn demo(block: Dim3) -> Demo {
    let a = [2u8, 0, 1, 0, 255, 1];
    let b_bytes = [9u8, 1, 0, 0];
    let truth = |v: u8| v != 0;
    let expected = (0..6)
        .map(|k| f64::from(u8::from(truth(a[k]) != truth(b_bytes[1 + k % 2]))))
        .collect::<Vec<f64>>();
    // The output's bytes, read back as the words the kernel writes.
    let mut words = [0f64; 2];
    for (k, e) in expected.iter().enumerate() {
        words[k / 4] += e * f64::from(1u32 << (8 * (k % 4)));
    }
    let u = |v: u32| Arg::Scalar(Value::U32(v));
    let i = |v: i32| Arg::Scalar(Value::I32(v));
    Demo {
        launch: LaunchConfig {
            grid: Dim3::x(2u32.div_ceil(block.count() as u32)),
            block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_u32(&[
                u32::from_le_bytes([a[0], a[1], a[2], a[3]]),
                u32::from_le_bytes([a[4], a[5], 0, 0]),
            ])),
            Arg::Buffer(Buffer::from_u32(&[u32::from_le_bytes(b_bytes)])),
            Arg::Buffer(Buffer::from_u32(&[0, 0])),
            Arg::Buffer(Buffer::from_u32(&[3, 2])),
            Arg::Buffer(Buffer::from_i32(&[2, 1])),
            Arg::Buffer(Buffer::from_i32(&[0, 1])),
            u(2),
            u(6),
            i(0),
            i(1),
            u(logical_code::XOR),
        ],
        output: 2,
        expected: words.to_vec(),
        tolerance: vec![0.0; 2],
        summary: "xor of [3,2] byte bools with a broadcast pair".into(),
    }
}
