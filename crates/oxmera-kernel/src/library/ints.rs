//! Integer and bool kernels: elementwise arithmetic and comparisons,
//! reductions and matmul over `i32` words, `u8` bytes and bool bytes, the
//! semantics the reference backend defines for them bit for bit.
//!
//! A GPU backend stores a `u8` or bool tensor as bytes four to a word
//! (WGSL has no byte type), so each kernel reads its operands through a
//! *kind* ([`int_kind`]) and, where its output is bytes, a thread computes
//! four outputs and writes their word whole: no two threads share a word.
//!
//! Every value is computed in `i32` arithmetic, which wraps in the IR as
//! on every GPU. The reference computes in `i64` and wraps into the dtype
//! on store; the two agree because each op here is a ring operation modulo
//! 2^32 (add, sub, mul, pow's square-and-multiply), an order (max, min,
//! compare), or a division whose only overflowing case (`MIN / -1`) and
//! zero divisor are handled before the division: `u8` results are their
//! low byte, the reference's wrap into `u8`. Sums and products go to
//! `i64` (the reference's dtype for them) as word pairs with carries.

#![allow(clippy::too_many_arguments)]

use crate::kernels;

pub use int_kernels::{int_elementwise, int_matmul_strided, int_reduce_strided};

/// How the kernels here read an operand's elements (their `kind`).
pub mod int_kind {
    /// `i32`, one word an element.
    pub const I32: u32 = 0;
    /// `u8`, bytes four to a word.
    pub const U8: u32 = 1;
    /// bool, bytes four to a word; any nonzero byte reads as 1.
    pub const BOOL: u32 = 2;
    /// `f32` read for its truth only (nonzero, NaN included, is 1): what
    /// `all` and `any` need of a float.
    pub const F32_TRUTH: u32 = 3;
}

/// The `op` values of [`int_elementwise`]. A unary op reads `a` only.
pub mod int_code {
    /// `a + b`, wrapping
    pub const ADD: u32 = 0;
    /// `a - b`, wrapping
    pub const SUB: u32 = 1;
    /// `a * b`, wrapping
    pub const MUL: u32 = 2;
    /// floor division; `a / 0 == 0`, `MIN / -1 == MIN`
    pub const DIV: u32 = 3;
    /// remainder with the divisor's sign; `a rem 0 == a`
    pub const REM: u32 = 4;
    /// remainder with the dividend's sign; `a fmod 0 == a`
    pub const FMOD: u32 = 5;
    /// `a^b`, wrapping; a negative `b` gives the exact value truncated
    /// toward zero
    pub const POW: u32 = 6;
    /// `max(a, b)`
    pub const MAX: u32 = 7;
    /// `min(a, b)`
    pub const MIN: u32 = 8;
    /// `-a`, wrapping
    pub const NEG: u32 = 9;
    /// `|a|`, wrapping (`|MIN| == MIN`)
    pub const ABS: u32 = 10;
    /// the sign of `a`: -1, 0 or 1
    pub const SIGN: u32 = 11;
    /// `a * a`, wrapping
    pub const SQUARE: u32 = 12;
    /// `max(a, 0)`
    pub const RELU: u32 = 13;
    /// `min(max(a, lo), hi)`
    pub const CLAMP: u32 = 14;
    /// `a` (floor, ceil, round and trunc of an integer)
    pub const COPY: u32 = 15;
    /// `a == b`, as 1 or 0
    pub const EQ: u32 = 16;
    /// `a != b`
    pub const NE: u32 = 17;
    /// `a < b`
    pub const LT: u32 = 18;
    /// `a <= b`
    pub const LE: u32 = 19;
    /// `a > b`
    pub const GT: u32 = 20;
    /// `a >= b`
    pub const GE: u32 = 21;
}

/// The `op` values of [`int_reduce_strided`], and the output each writes.
pub mod int_reduce_code {
    /// the sum, as `i64`
    pub const SUM: u32 = 0;
    /// the product, as `i64`
    pub const PROD: u32 = 1;
    /// the maximum, in the input's dtype
    pub const MAX: u32 = 2;
    /// the minimum, in the input's dtype
    pub const MIN: u32 = 3;
    /// the first position of the maximum, as `i64`
    pub const ARGMAX: u32 = 4;
    /// the first position of the minimum, as `i64`
    pub const ARGMIN: u32 = 5;
    /// whether every element is nonzero, as bool
    pub const ALL: u32 = 6;
    /// whether any element is nonzero, as bool
    pub const ANY: u32 = 7;
}

/// The `out_kind` values of [`int_reduce_strided`].
pub mod int_out {
    /// one word an output (`i32`)
    pub const WORD: u32 = 0;
    /// bytes four to a word (`u8`, bool)
    pub const BYTES: u32 = 1;
    /// two words an output, low first (`i64`)
    pub const PAIR: u32 = 2;
}

#[kernels]
pub mod int_kernels {
    /// The element at element offset `off` of `x`, read as its kind says.
    #[helper]
    fn load(x: &[u32], off: i32, kind: u32) -> i32 {
        let mut v = 0i32;
        if kind == 0u32 {
            v = x[off] as i32;
        } else if kind == 3u32 {
            if (x[off] & 0x7fff_ffffu32) != 0u32 {
                v = 1;
            }
        } else {
            let at = off as u32;
            let byte = (x[at / 4u32] >> (8u32 * (at % 4u32))) & 0xffu32;
            v = byte as i32;
            if kind == 2u32 && byte != 0u32 {
                v = 1;
            }
        }
        v
    }

    /// The offsets of output element `i` in two strided operands.
    #[helper]
    fn offsets(
        i: u32,
        shape: &[u32],
        astride: &[i32],
        bstride: &[i32],
        ndim: u32,
        aoff: i32,
        boff: i32,
    ) -> (i32, i32) {
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
        (ai, bi)
    }

    /// Floor division, remainders and the power: the ops that branch.
    #[helper]
    fn divide(op: u32, x: i32, y: i32) -> i32 {
        let mut r = 0i32;
        if op == 6u32 {
            // pow: a negative exponent truncates toward zero.
            if y < 0 {
                if x == 1 {
                    r = 1;
                } else if x == -1 {
                    r = -1;
                    if y % 2 == 0 {
                        r = 1;
                    }
                }
            } else {
                // Square and multiply, at most 31 steps; wrapping products
                // are exact modulo 2^32.
                let mut e = y as u32;
                let mut sq = x;
                r = 1;
                while e > 0u32 {
                    if (e & 1u32) == 1u32 {
                        r = r * sq;
                    }
                    sq = sq * sq;
                    e = e >> 1u32;
                }
            }
        } else if y == 0 {
            // a / 0 == 0; a rem 0 == a fmod 0 == a.
            if op != 3u32 {
                r = x;
            }
        } else if y == -1 {
            // The division that overflows, done without dividing:
            // MIN / -1 wraps to MIN, and every remainder by -1 is 0.
            if op == 3u32 {
                r = 0 - x;
            }
        } else {
            let q = x / y;
            let m = x % y;
            if op == 3u32 {
                r = q;
                if m != 0 && ((x < 0) != (y < 0)) {
                    r = q - 1;
                }
            } else if op == 4u32 {
                r = m;
                if m != 0 && ((m < 0) != (y < 0)) {
                    r = m + y;
                }
            } else {
                r = m;
            }
        }
        r
    }

    /// `op` (one of `int_code`) on `x` and `y`.
    #[helper]
    fn apply(op: u32, x: i32, y: i32, lo: i32, hi: i32) -> i32 {
        let mut r = x;
        if op == 0u32 {
            r = x + y;
        } else if op == 1u32 {
            r = x - y;
        } else if op == 2u32 {
            r = x * y;
        } else if op >= 3u32 && op <= 6u32 {
            r = divide(op, x, y);
        } else if op == 7u32 {
            if y > x {
                r = y;
            }
        } else if op == 8u32 {
            if y < x {
                r = y;
            }
        } else if op == 9u32 {
            r = 0 - x;
        } else if op == 10u32 {
            if x < 0 {
                r = 0 - x;
            }
        } else if op == 11u32 {
            r = 0;
            if x > 0 {
                r = 1;
            } else if x < 0 {
                r = -1;
            }
        } else if op == 12u32 {
            r = x * x;
        } else if op == 13u32 {
            if x < 0 {
                r = 0;
            }
        } else if op == 14u32 {
            if x < lo {
                r = lo;
            }
            if r > hi {
                r = hi;
            }
        } else if op >= 16u32 {
            let mut t = x == y;
            if op == 17u32 {
                t = x != y;
            } else if op == 18u32 {
                t = x < y;
            } else if op == 19u32 {
                t = x <= y;
            } else if op == 20u32 {
                t = x > y;
            } else if op == 21u32 {
                t = x >= y;
            }
            r = 0;
            if t {
                r = 1;
            }
        }
        r
    }

    /// An integer or bool elementwise op over two strided, broadcast
    /// operands (`a` only for a unary op), or one operand and the scalar
    /// `s`: `scalar` 0 reads `b`, 1 computes `a op s`, 2 computes `s op a`.
    /// `op` is one of `int_code` (`lo`, `hi` are a clamp's bounds), `kind`
    /// one of `int_kind`. With `packed` the outputs are bytes (`u8`, or
    /// bool for a comparison): thread `w` computes elements `4w .. 4w + 4`
    /// and writes word `w`; else one `i32` word a thread.
    #[kernel(block = [64, 256])]
    pub fn int_elementwise(
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
        kind: u32,
        packed: bool,
        scalar: u32,
        s: i32,
        lo: i32,
        hi: i32,
    ) {
        let w = block_idx_x() * block_dim_x() + thread_idx_x();
        let mut per = 1u32;
        if packed {
            per = 4u32;
        }
        if w * per < n {
            let mut word = 0u32;
            for e in 0..per {
                let i = w * per + e;
                if i < n {
                    let (ai, bi) = offsets(i, shape, astride, bstride, ndim, aoff, boff);
                    let mut x = load(a, ai, kind);
                    let mut y = s;
                    if scalar == 0u32 {
                        y = load(b, bi, kind);
                    } else if scalar == 2u32 {
                        y = x;
                        x = s;
                    }
                    let r = apply(op, x, y, lo, hi) as u32;
                    if packed {
                        word = word | ((r & 0xffu32) << (8u32 * e));
                    } else {
                        word = r;
                    }
                }
            }
            out[w] = word;
        }
    }

    /// The low and high words of the 64-bit product of two `u32`, from
    /// four 16-bit partial products (each fits a `u32`).
    #[helper]
    fn mul_wide(a: u32, b: u32) -> (u32, u32) {
        let a0 = a & 0xffffu32;
        let a1 = a >> 16u32;
        let b0 = b & 0xffffu32;
        let b1 = b >> 16u32;
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        let mid = (p00 >> 16u32) + (p01 & 0xffffu32) + (p10 & 0xffffu32);
        let hi = p11 + (p01 >> 16u32) + (p10 >> 16u32) + (mid >> 16u32);
        (a * b, hi)
    }

    /// A reduction of a strided integer or bool input over the dims marked
    /// in `reduced`, one thread per output walking its elements in
    /// row-major order (or four outputs, when `out_kind` is bytes, so a
    /// thread writes its word whole). `op` is one of `int_reduce_code`:
    /// sum and product go to `i64` word pairs (low first) with carries —
    /// exact modulo 2^64 as the reference's wrapping `i64` —, argmax and
    /// argmin keep the first best position, all and any write 1 or 0.
    /// `out_kind` is one of `int_out`.
    #[kernel(block = [64, 256])]
    pub fn int_reduce_strided(
        x: &[u32],
        out: &mut [u32],
        shape: &[u32],
        xstride: &[i32],
        reduced: &[u32],
        ndim: u32,
        n_out: u32,
        n_reduced: u32,
        xoff: i32,
        op: u32,
        kind: u32,
        out_kind: u32,
    ) {
        let w = block_idx_x() * block_dim_x() + thread_idx_x();
        let mut per = 1u32;
        if out_kind == 1u32 {
            per = 4u32;
        }
        if w * per < n_out {
            let mut word = 0u32;
            for e in 0..per {
                let o = w * per + e;
                if o < n_out {
                    let mut rem = o;
                    let mut base = xoff;
                    for k in 0..ndim {
                        let d = ndim - 1 - k;
                        if reduced[d] == 0u32 {
                            let c = rem % shape[d];
                            rem = rem / shape[d];
                            base += c as i32 * xstride[d];
                        }
                    }
                    // The result as an i64's words; max, min and the
                    // truths use the low word only.
                    let mut lo = 0u32;
                    let mut hi = 0u32;
                    if op == 1u32 || op == 6u32 {
                        lo = 1u32;
                    }
                    let mut best = 0i32;
                    for j in 0..n_reduced {
                        let mut r = j;
                        let mut off = base;
                        for k in 0..ndim {
                            let d = ndim - 1 - k;
                            if reduced[d] == 1u32 {
                                let c = r % shape[d];
                                r = r / shape[d];
                                off += c as i32 * xstride[d];
                            }
                        }
                        let v = load(x, off, kind);
                        let vlo = v as u32;
                        let mut vhi = 0u32;
                        if v < 0 {
                            vhi = 0xffff_ffffu32;
                        }
                        if op == 0u32 {
                            let sum = lo + vlo;
                            let mut carry = 0u32;
                            if sum < lo {
                                carry = 1u32;
                            }
                            lo = sum;
                            hi = hi + vhi + carry;
                        } else if op == 1u32 {
                            let (plo, phi) = mul_wide(lo, vlo);
                            hi = phi + lo * vhi + hi * vlo;
                            lo = plo;
                        } else if op == 6u32 {
                            if v == 0 {
                                lo = 0u32;
                            }
                        } else if op == 7u32 {
                            if v != 0 {
                                lo = 1u32;
                            }
                        } else {
                            // Max, min and their positions: a later element
                            // replaces the best only if strictly better.
                            let mut take = j == 0u32;
                            if (op == 2u32 || op == 4u32) && v > best {
                                take = true;
                            } else if (op == 3u32 || op == 5u32) && v < best {
                                take = true;
                            }
                            if take {
                                best = v;
                                if op >= 4u32 {
                                    lo = j;
                                } else {
                                    lo = vlo;
                                }
                            }
                        }
                    }
                    if out_kind == 1u32 {
                        word = word | ((lo & 0xffu32) << (8u32 * e));
                    } else if out_kind == 2u32 {
                        out[2u32 * o] = lo;
                        out[2u32 * o + 1u32] = hi;
                    } else {
                        out[o] = lo;
                    }
                }
            }
            if out_kind == 1u32 {
                out[w] = word;
            }
        }
    }

    /// Batched `a @ b` of integers, wrapping, a thread per output (four
    /// for bytes): `a` is `[.., m, k]` and `b` `[.., k, n]`, both read
    /// through strides — the batch dims' (`shape`, `astride`, `bstride`,
    /// `nbatch` of them) and the matrix dims' — into a contiguous
    /// `[.., m, n]` of `count` elements. `kind` is `int_kind::I32` (words
    /// out) or `U8` (bytes out, the low byte of the wrapped sum).
    #[kernel(block = [64, 256])]
    pub fn int_matmul_strided(
        a: &[u32],
        b: &[u32],
        out: &mut [u32],
        shape: &[u32],
        astride: &[i32],
        bstride: &[i32],
        nbatch: u32,
        count: u32,
        m: u32,
        n: u32,
        k: u32,
        sam: i32,
        sak: i32,
        sbk: i32,
        sbn: i32,
        aoff: i32,
        boff: i32,
        kind: u32,
    ) {
        let w = block_idx_x() * block_dim_x() + thread_idx_x();
        let mut per = 1u32;
        if kind != 0u32 {
            per = 4u32;
        }
        if w * per < count {
            let mut word = 0u32;
            for e in 0..per {
                let o = w * per + e;
                if o < count {
                    let col = o % n;
                    let row = (o / n) % m;
                    let batch = o / n / m;
                    let (ab, bb) = offsets(batch, shape, astride, bstride, nbatch, aoff, boff);
                    let arow = ab + row as i32 * sam;
                    let bcol = bb + col as i32 * sbn;
                    let mut acc = 0i32;
                    for p in 0..k {
                        let x = load(a, arow + p as i32 * sak, kind);
                        let y = load(b, bcol + p as i32 * sbk, kind);
                        acc += x * y;
                    }
                    if kind != 0u32 {
                        word = word | (((acc as u32) & 0xffu32) << (8u32 * e));
                    } else {
                        word = acc as u32;
                    }
                }
            }
            out[w] = word;
        }
    }
}
