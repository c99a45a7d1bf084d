//! Kernels the GPU backends compute tensor ops with: a fill that serves
//! every dtype, elementwise ops with a scalar operand, and reductions over
//! any set of dims of a strided input. Like the rest of the library, each
//! is checked by the analysis at the blocks it declares and runs in the
//! simulator against a host computation (its demo).

use crate::kernel;

/// Fills `n` words with a two-word pattern: `even` at even indices, `odd`
/// at odd ones. One kernel serves every dtype, because a tensor's bytes
/// repeat with a period of at most 8: a 4-byte value is both words, an
/// 8-byte value its low and high words, a 2- or 1-byte value repeated to
/// fill a word.
#[kernel(block = [64, 256])]
pub fn fill_words(out: &mut [u32], n: u32, even: u32, odd: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut w = even;
        if i % 2 == 1 {
            w = odd;
        }
        out[i] = w;
    }
}

/// The `op` values of [`scalar_strided`].
pub mod scalar_code {
    /// `x + s`
    pub const ADD: u32 = 0;
    /// `x - s`, or `s - x` when the scalar is first
    pub const SUB: u32 = 1;
    /// `x * s`
    pub const MUL: u32 = 2;
    /// `x / s`, or `s / x` when the scalar is first
    pub const DIV: u32 = 3;
    /// `x < s ? s : x` (a clamp's lower bound; NaN stays NaN)
    pub const AT_LEAST: u32 = 4;
    /// `x > s ? s : x` (a clamp's upper bound; NaN stays NaN)
    pub const AT_MOST: u32 = 5;
    /// `x > 0 ? x : s·x` (leaky ReLU with slope `s`)
    pub const LEAKY_RELU: u32 = 6;
}

/// `out[i] = x[..] op s` (or `s op x[..]` when `scalar_first`) over a
/// strided input, the scalar passed as a value: the front end never
/// uploads a one-element tensor for it. `op` is one of [`scalar_code`].
#[kernel(block = [64, 256])]
pub fn scalar_strided(
    x: &[f32],
    out: &mut [f32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    op: u32,
    s: f32,
    scalar_first: bool,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            xi += c as i32 * xstride[d];
        }
        let mut a = x[xi];
        let mut b = s;
        if scalar_first {
            a = s;
            b = x[xi];
        }
        let mut r = a + b;
        if op == 1 {
            r = a - b;
        } else if op == 2 {
            r = a * b;
        } else if op == 3 {
            r = a / b;
        } else if op >= 4 {
            // The clamp bounds and leaky ReLU: x is `a` (the scalar is
            // never first for them). A NaN passes through, tested on the
            // bits (a GPU compiler may assume comparisons see no NaN).
            let nan = (a.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32;
            r = a;
            if nan {
                r = a;
            } else if op == 4 && a < s {
                r = s;
            } else if op == 5 && a > s {
                r = s;
            } else if op == 6 && !(a > 0.0) {
                r = s * a;
            }
        }
        out[i] = r;
    }
}

/// The fan-in of each level of [`reduce_strided`]'s blocked sum (the
/// kernel spells it 64: the language has no const items yet).
pub const REDUCE_LEAF: u32 = 64;

/// The most terms one thread of [`reduce_strided`] sums: two levels of
/// [`REDUCE_LEAF`]. Longer reductions take more passes.
pub const REDUCE_CHUNK: u32 = 4096;

/// One pass of a sum or mean of a strided input over the dims marked in
/// `reduced`. Thread `i` computes the partial sum of chunk `i % n_chunks`
/// (terms `chunk·c ..` of the reduced sub-space, at most `chunk`, in
/// row-major order) of output element `i / n_chunks`, into `out[i]`; when
/// `mean`, it divides by `count`. A reduction of more than
/// [`REDUCE_CHUNK`] terms runs as passes: chunks' partials, then the same
/// kernel over the partials, until one chunk is left.
///
/// Why chunks and passes: the summation meets the conformance contract
/// every backend meets (a term takes part in at most 512 + log2(n/512)
/// roundings) as a blocked sum — 64 terms into a level-1 partial, 64 of
/// those into the chunk's sum — so a term meets at most 63 additions per
/// level and 252 in four levels (two passes) for up to 2^24 terms. And
/// lavapipe's llvmpipe stops any loop after 65535 iterations (a guard
/// against hung shaders), so no thread may walk a long reduction alone:
/// a whole-tensor sum of 70000 terms came back as the sum of the first
/// 21845. Compensated summation is no way out either: a compiler allowed
/// to reassociate floats (lavapipe's is) folds the compensation to zero.
///
/// `search()` makes the contract's two blocks its search space: the wgpu
/// backend runs the one `oxmera kernel tune` cached for its adapter, else
/// 64.
#[kernel(block = [64, 256], search())]
pub fn reduce_strided(
    x: &[f32],
    out: &mut [f32],
    shape: &[u32],
    xstride: &[i32],
    reduced: &[u32],
    ndim: u32,
    n_out: u32,
    n_reduced: u32,
    n_chunks: u32,
    chunk: u32,
    xoff: i32,
    mean: bool,
    count: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n_out * n_chunks {
        let o = i / n_chunks;
        let first = (i % n_chunks) * chunk;
        let last = (first + chunk).min(n_reduced);
        // The kept coordinates of output element o give the base offset.
        let mut rem = o;
        let mut base = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            if reduced[d] == 0 {
                let c = rem % shape[d];
                rem = rem / shape[d];
                base += c as i32 * xstride[d];
            }
        }
        let mut s1 = 0.0;
        let mut s2 = 0.0;
        for j in first..last {
            let mut r = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = r % shape[d];
                    r = r / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            s1 += x[off];
            // A full block of 64 carries up a level.
            if (j + 1 - first) % 64 == 0 {
                s2 += s1;
                s1 = 0.0;
            }
        }
        let mut acc = s2 + s1;
        if mean {
            acc = acc / count as f32;
        }
        out[i] = acc;
    }
}

/// The `op` values of [`compare_packed`].
pub mod compare_code {
    /// `a == b`
    pub const EQ: u32 = 0;
    /// `a != b`
    pub const NE: u32 = 1;
    /// `a < b`
    pub const LT: u32 = 2;
    /// `a <= b`
    pub const LE: u32 = 3;
    /// `a > b`
    pub const GT: u32 = 4;
    /// `a >= b`
    pub const GE: u32 = 5;
}

/// Elementwise comparison of two strided f32 inputs (or of `a` with the
/// scalar `s` when `with_scalar`), written as bools of one byte each, four
/// to a word: thread `w` computes elements `4w .. 4w + 4` and writes word
/// `w`, so no two threads share a word (a tensor's bool is one byte; WGSL
/// has no byte type). NaN compares unequal to everything, tested on the
/// bits: a GPU compiler may assume float comparisons never see a NaN.
#[kernel(block = [64, 256])]
pub fn compare_packed(
    a: &[f32],
    b: &[f32],
    out: &mut [u32],
    shape: &[u32],
    astride: &[i32],
    bstride: &[i32],
    ndim: u32,
    n: u32,
    aoff: i32,
    boff: i32,
    op: u32,
    with_scalar: bool,
    s: f32,
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
                let x = a[ai];
                let mut y = s;
                if !with_scalar {
                    y = b[bi];
                }
                let nan = (x.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32
                    || (y.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32;
                let mut r = false;
                if nan {
                    r = op == 1;
                } else if op == 0 {
                    r = x == y;
                } else if op == 1 {
                    r = x != y;
                } else if op == 2 {
                    r = x < y;
                } else if op == 3 {
                    r = x <= y;
                } else if op == 4 {
                    r = x > y;
                } else {
                    r = x >= y;
                }
                if r {
                    word = word | (1u32 << (8 * e));
                }
            }
        }
        out[w] = word;
    }
}

/// Bytes (a bool or u8 tensor, four to a word) to f32 over a strided
/// input: `out[i]` is the byte at element offset `xoff + Σ c·stride`.
#[kernel(block = [64, 256])]
pub fn bytes_to_f32(
    x: &[u32],
    out: &mut [f32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            xi += c as i32 * xstride[d];
        }
        let at = xi as u32;
        let byte = (x[at / 4] >> (8 * (at % 4))) & 0xffu32;
        out[i] = byte as f32;
    }
}

/// Softmax (or log-softmax when `log`) of a strided input along `dim`,
/// one thread per row (the elements that differ only in `dim`), into a
/// contiguous output of the input's shape. Three passes over the row: the
/// maximum, the sum of `e^(x - max)` (blocked by 64, as
/// [`reduce_strided`]'s), then each output. A NaN anywhere in a row makes
/// the row NaN, found on the bits (a GPU compiler may assume comparisons
/// never see one). Rows longer than a few thousand elements belong to a
/// workgroup-wide kernel: llvmpipe stops a loop after 65535 iterations,
/// so the backend sends those to the host.
#[kernel(block = [64])]
pub fn softmax_strided(
    x: &[f32],
    out: &mut [f32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    dim: u32,
    n_rows: u32,
    xoff: i32,
    log: bool,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n_rows {
        // Row i's coordinates in every dim but `dim`: its base in x and in
        // the contiguous output.
        let mut rem = i;
        let mut xb = xoff;
        let mut ob = 0u32;
        let mut ostride = 1u32;
        let mut ostep = 1u32;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            if d != dim {
                let c = rem % shape[d];
                rem = rem / shape[d];
                xb += c as i32 * xstride[d];
                ob += c * ostride;
            } else {
                ostep = ostride;
            }
            ostride = ostride * shape[d];
        }
        let len = shape[dim];
        let xs = xstride[dim];
        let mut m = f32::NEG_INFINITY;
        let mut nan = false;
        for j in 0..len {
            let v = x[xb + j as i32 * xs];
            if (v.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32 {
                nan = true;
            } else if v > m {
                m = v;
            }
        }
        let mut s1 = 0.0;
        let mut s2 = 0.0;
        for j in 0..len {
            s1 += (x[xb + j as i32 * xs] - m).exp();
            if (j + 1) % 64 == 0 {
                s2 += s1;
                s1 = 0.0;
            }
        }
        let total = s2 + s1;
        let log_total = total.ln();
        for j in 0..len {
            let y = x[xb + j as i32 * xs] - m;
            let mut r = y.exp() / total;
            if log {
                r = y - log_total;
            }
            if nan {
                r = f32::from_bits(0x7fc0_0000u32);
            }
            out[ob + j * ostep] = r;
        }
    }
}

/// `out[..] = x[.., index[..], ..]` along `dim`: the output has the
/// index's shape (`shape`), and output element `i` copies the input element
/// at `i`'s coordinates with the one along `dim` replaced by the index
/// there. Input and index are strided; indices are `i32` (the front end
/// has range-checked them).
#[kernel(block = [64, 256])]
pub fn gather_strided(
    x: &[f32],
    index: &[i32],
    out: &mut [f32],
    shape: &[u32],
    xstride: &[i32],
    istride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
    ioff: i32,
    dim: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        let mut ii = ioff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            ii += c as i32 * istride[d];
            if d != dim {
                xi += c as i32 * xstride[d];
            }
        }
        out[i] = x[xi + index[ii] * xstride[dim]];
    }
}

/// `x` with `src` added at `index` along `dim`, deterministically: one
/// thread per output element, which walks the index along `dim` (at its
/// own coordinates in the other dims) and adds every source element whose
/// index names it, in increasing position — the order the reference adds
/// colliding sources in — so the same bits come out every run, with no
/// atomics. `xshape` is the input's and output's shape, `ishape` the
/// index's and source's (no larger in any dim but `dim`).
#[kernel(block = [64, 256])]
pub fn scatter_add_strided(
    x: &[f32],
    index: &[i32],
    src: &[f32],
    out: &mut [f32],
    xshape: &[u32],
    ishape: &[u32],
    xstride: &[i32],
    istride: &[i32],
    sstride: &[i32],
    ndim: u32,
    dim: u32,
    n: u32,
    xoff: i32,
    ioff: i32,
    soff: i32,
) {
    let o = block_idx_x() * block_dim_x() + thread_idx_x();
    if o < n {
        let mut rem = o;
        let mut xi = xoff;
        let mut ib = ioff;
        let mut sb = soff;
        let mut along = 0u32;
        let mut inside = true;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % xshape[d];
            rem = rem / xshape[d];
            xi += c as i32 * xstride[d];
            if d == dim {
                along = c;
            } else {
                if c >= ishape[d] {
                    inside = false;
                }
                ib += c as i32 * istride[d];
                sb += c as i32 * sstride[d];
            }
        }
        let mut acc = x[xi];
        if inside {
            for j in 0..ishape[dim] {
                if index[ib + j as i32 * istride[dim]] == along as i32 {
                    acc += src[sb + j as i32 * sstride[dim]];
                }
            }
        }
        out[o] = acc;
    }
}

/// `i64` to `i32` as Rust's `as` converts (the low 32 bits), over a
/// strided input held as pairs of words (low word first): what index
/// operands need on a device whose index dtype is `i32`. The language has
/// no 64-bit type; the words are enough.
#[kernel(block = [64, 256])]
pub fn i64_to_i32(
    x: &[u32],
    out: &mut [i32],
    shape: &[u32],
    xstride: &[i32],
    ndim: u32,
    n: u32,
    xoff: i32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let mut rem = i;
        let mut xi = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            let c = rem % shape[d];
            rem = rem / shape[d];
            xi += c as i32 * xstride[d];
        }
        out[i] = x[2 * xi] as i32;
    }
}

/// Argmax (`op` 0) or argmin (`op` 1) of a strided f32 input over the
/// dims marked in `reduced`, one thread per output element walking its
/// reduced sub-space in row-major order: the first best position wins, and
/// a NaN beats every number (the first NaN wins), as the reference and
/// PyTorch define. The position is written as an `i64`: two words, low
/// first.
#[kernel(block = [64, 256])]
pub fn argbest_strided(
    x: &[f32],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    reduced: &[u32],
    ndim: u32,
    n_out: u32,
    n_reduced: u32,
    xoff: i32,
    op: u32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n_out {
        let mut rem = i;
        let mut base = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            if reduced[d] == 0 {
                let c = rem % shape[d];
                rem = rem / shape[d];
                base += c as i32 * xstride[d];
            }
        }
        let mut best = 0u32;
        let mut best_v = 0.0;
        let mut best_nan = false;
        for j in 0..n_reduced {
            let mut r = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = r % shape[d];
                    r = r / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            let v = x[off];
            let nan = (v.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32;
            let mut take = false;
            if j == 0 {
                take = true;
            } else if !best_nan {
                if nan {
                    take = true;
                } else if op == 0 && v > best_v {
                    take = true;
                } else if op == 1 && v < best_v {
                    take = true;
                }
            }
            if take {
                best = j;
                best_v = v;
                best_nan = nan;
            }
        }
        out[2 * i] = best;
        out[2 * i + 1] = 0u32;
    }
}

/// Elementwise comparison of two strided `i64` inputs held as word pairs
/// (low word first), written as byte bools four to a word as
/// [`compare_packed`] does; `op` is one of [`compare_code`]. Signed order:
/// the high words compare as `i32`, then the low words as `u32`.
#[kernel(block = [64, 256])]
pub fn compare_i64_packed(
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
                let alo = a[2 * ai];
                let ahi = a[2 * ai + 1] as i32;
                let blo = b[2 * bi];
                let bhi = b[2 * bi + 1] as i32;
                let eq = ahi == bhi && alo == blo;
                let lt = ahi < bhi || (ahi == bhi && alo < blo);
                let mut r = eq;
                if op == 1 {
                    r = !eq;
                } else if op == 2 {
                    r = lt;
                } else if op == 3 {
                    r = lt || eq;
                } else if op == 4 {
                    r = !(lt || eq);
                } else if op == 5 {
                    r = !lt;
                }
                if r {
                    word = word | (1u32 << (8 * e));
                }
            }
        }
        out[w] = word;
    }
}

/// The sum of a strided bool or u8 input (bytes, four to a word) over the
/// dims marked in `reduced`, as an `i64` (two words, low first): a count,
/// one thread per output element. Exact: a u32 holds any count a thread
/// can reach.
#[kernel(block = [64, 256])]
pub fn count_bytes_strided(
    x: &[u32],
    out: &mut [u32],
    shape: &[u32],
    xstride: &[i32],
    reduced: &[u32],
    ndim: u32,
    n_out: u32,
    n_reduced: u32,
    xoff: i32,
) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n_out {
        let mut rem = i;
        let mut base = xoff;
        for k in 0..ndim {
            let d = ndim - 1 - k;
            if reduced[d] == 0 {
                let c = rem % shape[d];
                rem = rem / shape[d];
                base += c as i32 * xstride[d];
            }
        }
        let mut total = 0u32;
        for j in 0..n_reduced {
            let mut r = j;
            let mut off = base;
            for k in 0..ndim {
                let d = ndim - 1 - k;
                if reduced[d] == 1 {
                    let c = r % shape[d];
                    r = r / shape[d];
                    off += c as i32 * xstride[d];
                }
            }
            let at = off as u32;
            total += (x[at / 4] >> (8 * (at % 4))) & 0xffu32;
        }
        out[2 * i] = total;
        out[2 * i + 1] = 0u32;
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::Value;
    use crate::kernel;
    use crate::launch::LaunchConfig;
    use crate::sim::{self, Arg, Buffer, SimOptions};

    /// `x.to_bits()` and `f32::from_bits` in the simulator: the NaN test a
    /// GPU compiler cannot fold away, and a sign flip.
    #[kernel]
    fn bits(x: &[f32], nan: &mut [u32], neg: &mut [f32], n: u32) {
        let i = thread_idx_x();
        if i < n {
            let b = x[i].to_bits();
            let mut is_nan = 0u32;
            if (b & 0x7fff_ffffu32) > 0x7f80_0000u32 {
                is_nan = 1u32;
            }
            nan[i] = is_nan;
            neg[i] = f32::from_bits(b ^ 0x8000_0000u32);
        }
    }

    #[test]
    fn bit_casts_read_the_same_bits_as_another_type() {
        let x = [1.5f32, f32::NAN, f32::INFINITY, -0.0];
        let mut args = vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_u32(&[9; 4])),
            Arg::Buffer(Buffer::from_f32(&[0.0; 4])),
            Arg::Scalar(Value::U32(4)),
        ];
        sim::run(
            bits(),
            LaunchConfig::linear(1, 32),
            &mut args,
            &SimOptions::default(),
        )
        .unwrap();
        assert_eq!(args[1].buffer().unwrap().to_u32(), vec![0, 1, 0, 0]);
        let neg = args[2].buffer().unwrap().to_f32();
        assert_eq!(neg[0], -1.5);
        assert!(neg[1].is_nan());
        assert_eq!(neg[2], f32::NEG_INFINITY);
        assert!(neg[3] == 0.0 && neg[3].is_sign_positive());
        let printed = crate::pretty::print(bits());
        assert!(
            printed.contains(".to_bits()") && printed.contains("f32::from_bits("),
            "{printed}"
        );
    }
}

#[cfg(test)]
mod tree_tests {
    use crate::ir::Value;
    use crate::launch::LaunchConfig;
    use crate::sim::{self, Arg, Buffer, SimOptions};

    /// 2^24 followed by 70000 ones, in one chunk: a running sum keeps
    /// 2^24; the blocked sum loses only the ones of the first block of 64.
    #[test]
    fn the_leaf_tree_sum_keeps_what_a_running_sum_absorbs() {
        let mut x = vec![1.0f32; 70001];
        x[0] = 16_777_216.0;
        let n = x.len() as u32;
        let mut args = vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&[0.0])),
            Arg::Buffer(Buffer::from_u32(&[n])),
            Arg::Buffer(Buffer::from_i32(&[1])),
            Arg::Buffer(Buffer::from_u32(&[1])),
            Arg::Scalar(Value::U32(1)),
            Arg::Scalar(Value::U32(1)),
            Arg::Scalar(Value::U32(n)),
            Arg::Scalar(Value::U32(1)),
            Arg::Scalar(Value::U32(n)),
            Arg::Scalar(Value::I32(0)),
            Arg::Scalar(Value::Bool(false)),
            Arg::Scalar(Value::U32(n)),
        ];
        let launch = LaunchConfig::linear(1, 64);
        sim::run(
            super::reduce_strided(),
            launch,
            &mut args,
            &SimOptions::default(),
        )
        .unwrap();
        let got = args[1].buffer().unwrap().to_f32()[0] as f64;
        let want = 16_777_216.0 + 70_000.0;
        assert!((got - want).abs() <= 64.0, "{got} vs {want}");
    }
}
