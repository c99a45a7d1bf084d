//! `i64` kernels: elementwise arithmetic, reductions and matmul over
//! `i64` values stored as word pairs (low word first), computed in 32-bit
//! words only — so they run on every adapter, with or without a 64-bit
//! shader integer (Metal has none; WGSL's `i64` needs wgpu's
//! SHADER_INT64).
//!
//! Each op is the reference backend's, bit for bit: wrapping `i64`
//! arithmetic (a sum of words with its carry, a product from four 16-bit
//! partial products plus the cross terms that land in the high word),
//! floor division and the two remainders by an unsigned shift-and-subtract
//! long division of the magnitudes (sixty-four steps, or one 32-bit
//! division when both fit a word), with the reference's conventions:
//! `a / 0 == 0`, `a rem 0 == a fmod 0 == a`, `MIN / -1 == MIN` (the
//! magnitude 2^63 divided by 1 and negated wraps there by itself), and a
//! negative exponent giving the exact value truncated toward zero.
//!
//! The op codes are [`super::int_code`]'s and [`super::int_reduce_code`]'s;
//! the kernels' parameters follow the 32-bit integer kernels' (`ints.rs`)
//! with each scalar given as its two words.

#![allow(clippy::too_many_arguments)]

use crate::kernels;

pub use int64_kernels::{i64_elementwise, i64_matmul_strided, i64_reduce_strided};

#[kernels]
pub mod int64_kernels {
    /// `a + b` of two word pairs, wrapping: the low words' carry goes into
    /// the high word.
    #[helper]
    fn add64(al: u32, ah: u32, bl: u32, bh: u32) -> (u32, u32) {
        let lo = al + bl;
        let mut carry = 0u32;
        if lo < al {
            carry = 1u32;
        }
        (lo, ah + bh + carry)
    }

    /// `-a`, wrapping (two's complement: invert and add one).
    #[helper]
    fn neg64(l: u32, h: u32) -> (u32, u32) {
        let mut carry = 0u32;
        if l == 0u32 {
            carry = 1u32;
        }
        (0u32 - l, (h ^ 0xffff_ffffu32) + carry)
    }

    /// `a * b` modulo 2^64: the full product of the low words (from four
    /// 16-bit partial products, each fitting a word) plus the cross terms
    /// `al·bh + ah·bl`, whose low words are all that reaches bits 32..64.
    #[helper]
    fn mul64(al: u32, ah: u32, bl: u32, bh: u32) -> (u32, u32) {
        let a0 = al & 0xffffu32;
        let a1 = al >> 16u32;
        let b0 = bl & 0xffffu32;
        let b1 = bl >> 16u32;
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        let mid = (p00 >> 16u32) + (p01 & 0xffffu32) + (p10 & 0xffffu32);
        let hi = p11 + (p01 >> 16u32) + (p10 >> 16u32) + (mid >> 16u32);
        (al * bl, hi + al * bh + ah * bl)
    }

    /// `a < b` as signed 64-bit integers: the high words decide as `i32`,
    /// the low words break a tie unsigned.
    #[helper]
    fn lt64(al: u32, ah: u32, bl: u32, bh: u32) -> bool {
        let mut lt = (ah as i32) < (bh as i32);
        if ah == bh {
            lt = al < bl;
        }
        lt
    }

    /// The quotient and remainder of unsigned `n / d` (`d` nonzero and at
    /// most 2^63, so the running remainder, below `d`, never needs a
    /// 65th bit when it is shifted): one 32-bit division when both fit a
    /// word, else sixty-four steps of shift and subtract, a quotient bit
    /// a step from the top.
    #[helper]
    fn udivmod64(nl: u32, nh: u32, dl: u32, dh: u32) -> (u32, u32, u32, u32) {
        let mut ql = 0u32;
        let mut qh = 0u32;
        let mut rl = 0u32;
        let mut rh = 0u32;
        if nh == 0u32 && dh == 0u32 {
            ql = nl / dl;
            rl = nl % dl;
        } else {
            for k in 0..64u32 {
                let bit = 63u32 - k;
                let mut next = (nl >> (bit & 31u32)) & 1u32;
                if bit >= 32u32 {
                    next = (nh >> (bit - 32u32)) & 1u32;
                }
                rh = (rh << 1u32) | (rl >> 31u32);
                rl = (rl << 1u32) | next;
                if rh > dh || (rh == dh && rl >= dl) {
                    let mut borrow = 0u32;
                    if rl < dl {
                        borrow = 1u32;
                    }
                    rl = rl - dl;
                    rh = rh - dh - borrow;
                    if bit >= 32u32 {
                        qh = qh | (1u32 << (bit - 32u32));
                    } else {
                        ql = ql | (1u32 << bit);
                    }
                }
            }
        }
        (ql, qh, rl, rh)
    }

    /// Floor division (`op` 3), the floored remainder (4) or the
    /// truncated one (5) of `x` by a nonzero `y`, from the magnitudes'
    /// unsigned division: the quotient negated where the signs differ,
    /// the remainder given the dividend's sign, then moved toward -∞ (a
    /// quotient) or to the divisor's sign (a floored remainder) where the
    /// division was inexact and the signs differ.
    #[helper]
    fn divide64(op: u32, xl: u32, xh: u32, yl: u32, yh: u32) -> (u32, u32) {
        let xneg = (xh >> 31u32) == 1u32;
        let yneg = (yh >> 31u32) == 1u32;
        let (nxl, nxh) = neg64(xl, xh);
        let (nyl, nyh) = neg64(yl, yh);
        let mut axl = xl;
        let mut axh = xh;
        if xneg {
            axl = nxl;
            axh = nxh;
        }
        let mut ayl = yl;
        let mut ayh = yh;
        if yneg {
            ayl = nyl;
            ayh = nyh;
        }
        let (ql, qh, rl, rh) = udivmod64(axl, axh, ayl, ayh);
        let inexact = rl != 0u32 || rh != 0u32;
        let mut outl = rl;
        let mut outh = rh;
        if op == 3u32 {
            outl = ql;
            outh = qh;
            if xneg != yneg {
                // -q, and one less again where the division was inexact:
                // !q is -q - 1.
                if inexact {
                    outl = ql ^ 0xffff_ffffu32;
                    outh = qh ^ 0xffff_ffffu32;
                } else {
                    let (l, h) = neg64(ql, qh);
                    outl = l;
                    outh = h;
                }
            }
        } else {
            if xneg {
                let (l, h) = neg64(rl, rh);
                outl = l;
                outh = h;
            }
            if op == 4u32 && inexact && xneg != yneg {
                // The truncated remainder has the dividend's sign; adding
                // the divisor gives it the divisor's.
                let (l, h) = add64(outl, outh, yl, yh);
                outl = l;
                outh = h;
            }
        }
        (outl, outh)
    }

    /// `x^y`, wrapping: square and multiply over the exponent's bits (at
    /// most 63 steps); a negative exponent gives the exact value truncated
    /// toward zero (1 for base 1, ±1 for base -1, else 0).
    #[helper]
    fn pow64(xl: u32, xh: u32, yl: u32, yh: u32) -> (u32, u32) {
        let mut rl = 0u32;
        let mut rh = 0u32;
        if (yh >> 31u32) == 1u32 {
            if xh == 0u32 && xl == 1u32 {
                rl = 1u32;
            } else if xh == 0xffff_ffffu32 && xl == 0xffff_ffffu32 {
                rl = 0xffff_ffffu32;
                rh = 0xffff_ffffu32;
                if (yl & 1u32) == 0u32 {
                    rl = 1u32;
                    rh = 0u32;
                }
            }
        } else {
            rl = 1u32;
            let mut sl = xl;
            let mut sh = xh;
            let mut el = yl;
            let mut eh = yh;
            while el != 0u32 || eh != 0u32 {
                if (el & 1u32) == 1u32 {
                    let (l, h) = mul64(rl, rh, sl, sh);
                    rl = l;
                    rh = h;
                }
                let (l, h) = mul64(sl, sh, sl, sh);
                sl = l;
                sh = h;
                el = (el >> 1u32) | (eh << 31u32);
                eh = eh >> 1u32;
            }
        }
        (rl, rh)
    }

    /// `op` (one of `int_code`, comparisons aside) on `x` and `y`; `lo`
    /// and `hi` are a clamp's bounds. The multiplier and the divider are
    /// each inlined once: `square` multiplies `x` by itself at the same
    /// call.
    #[helper]
    fn apply64(
        op: u32,
        xl: u32,
        xh: u32,
        yl: u32,
        yh: u32,
        lol: u32,
        loh: u32,
        hil: u32,
        hih: u32,
    ) -> (u32, u32) {
        let mut rl = xl;
        let mut rh = xh;
        let xneg = (xh >> 31u32) == 1u32;
        if op == 0u32 || op == 1u32 {
            let mut bl = yl;
            let mut bh = yh;
            if op == 1u32 {
                let (l, h) = neg64(yl, yh);
                bl = l;
                bh = h;
            }
            let (l, h) = add64(xl, xh, bl, bh);
            rl = l;
            rh = h;
        } else if op == 2u32 || op == 12u32 {
            let mut bl = yl;
            let mut bh = yh;
            if op == 12u32 {
                bl = xl;
                bh = xh;
            }
            let (l, h) = mul64(xl, xh, bl, bh);
            rl = l;
            rh = h;
        } else if op >= 3u32 && op <= 5u32 {
            if yl == 0u32 && yh == 0u32 {
                // a / 0 == 0; a rem 0 == a fmod 0 == a.
                if op == 3u32 {
                    rl = 0u32;
                    rh = 0u32;
                }
            } else {
                let (l, h) = divide64(op, xl, xh, yl, yh);
                rl = l;
                rh = h;
            }
        } else if op == 6u32 {
            let (l, h) = pow64(xl, xh, yl, yh);
            rl = l;
            rh = h;
        } else if op == 7u32 {
            if lt64(xl, xh, yl, yh) {
                rl = yl;
                rh = yh;
            }
        } else if op == 8u32 {
            if lt64(yl, yh, xl, xh) {
                rl = yl;
                rh = yh;
            }
        } else if op == 9u32 || (op == 10u32 && xneg) {
            let (l, h) = neg64(xl, xh);
            rl = l;
            rh = h;
        } else if op == 11u32 {
            rl = 0u32;
            rh = 0u32;
            if xneg {
                rl = 0xffff_ffffu32;
                rh = 0xffff_ffffu32;
            } else if xl != 0u32 || xh != 0u32 {
                rl = 1u32;
            }
        } else if op == 13u32 {
            if xneg {
                rl = 0u32;
                rh = 0u32;
            }
        } else if op == 14u32 {
            if lt64(xl, xh, lol, loh) {
                rl = lol;
                rh = loh;
            }
            if lt64(hil, hih, rl, rh) {
                rl = hil;
                rh = hih;
            }
        }
        (rl, rh)
    }

    /// An `i64` elementwise op over two strided, broadcast operands (`a`
    /// only for a unary op), or one operand and the scalar `s` (its words
    /// `sl`, `sh`): `scalar` 0 reads `b`, 1 computes `a op s`, 2 computes
    /// `s op a`. `op` is one of `int_code` but the comparisons (`lo`, `hi`
    /// — words `lol`, `loh`, `hil`, `hih` — are a clamp's bounds).
    /// Offsets and strides count elements; element `e` is words `2e` (low)
    /// and `2e + 1` (high), and output element `i` is written whole by
    /// thread `i`.
    #[kernel(block = [64, 256])]
    pub fn i64_elementwise(
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
        scalar: u32,
        sl: u32,
        sh: u32,
        lol: u32,
        loh: u32,
        hil: u32,
        hih: u32,
    ) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
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
            let mut xl = a[2 * ai];
            let mut xh = a[2 * ai + 1];
            let mut yl = sl;
            let mut yh = sh;
            if scalar == 0u32 {
                yl = b[2 * bi];
                yh = b[2 * bi + 1];
            } else if scalar == 2u32 {
                yl = xl;
                yh = xh;
                xl = sl;
                xh = sh;
            }
            let (rl, rh) = apply64(op, xl, xh, yl, yh, lol, loh, hil, hih);
            out[2u32 * i] = rl;
            out[2u32 * i + 1u32] = rh;
        }
    }

    /// A reduction of a strided `i64` input over the dims marked in
    /// `reduced`, one thread per output walking its elements in row-major
    /// order, into `i64` word pairs: `op` is one of `int_reduce_code`'s
    /// sum, product (wrapping), max, min, argmax or argmin (the first best
    /// position; a later element replaces the best only if strictly
    /// better).
    #[kernel(block = [64, 256])]
    pub fn i64_reduce_strided(
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
    ) {
        let o = block_idx_x() * block_dim_x() + thread_idx_x();
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
            let mut rl = 0u32;
            let mut rh = 0u32;
            if op == 1u32 {
                rl = 1u32;
            }
            let mut bl = 0u32;
            let mut bh = 0u32;
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
                let vl = x[2 * off];
                let vh = x[2 * off + 1];
                if op == 0u32 {
                    let (l, h) = add64(rl, rh, vl, vh);
                    rl = l;
                    rh = h;
                } else if op == 1u32 {
                    let (l, h) = mul64(rl, rh, vl, vh);
                    rl = l;
                    rh = h;
                } else {
                    // Max wants `best < v`, min `v < best`: one
                    // comparison with its operands ordered by `op`.
                    let want_max = op == 2u32 || op == 4u32;
                    let mut pl = vl;
                    let mut ph = vh;
                    let mut ql = bl;
                    let mut qh = bh;
                    if want_max {
                        pl = bl;
                        ph = bh;
                        ql = vl;
                        qh = vh;
                    }
                    let better = lt64(pl, ph, ql, qh);
                    let take = j == 0u32 || better;
                    if take {
                        bl = vl;
                        bh = vh;
                        if op >= 4u32 {
                            rl = j;
                        } else {
                            rl = vl;
                            rh = vh;
                        }
                    }
                }
            }
            out[2u32 * o] = rl;
            out[2u32 * o + 1u32] = rh;
        }
    }

    /// Batched `a @ b` of `i64`, wrapping, a thread per output: `a` is
    /// `[.., m, k]` and `b` `[.., k, n]`, both read through strides (the
    /// batch dims' — `shape`, `astride`, `bstride`, `nbatch` of them — and
    /// the matrix dims') into a contiguous `[.., m, n]` of `count`
    /// elements, each accumulated in order `p = 0..k` as the reference
    /// does (wrapping makes the order immaterial, but it costs nothing).
    #[kernel(block = [64, 256])]
    pub fn i64_matmul_strided(
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
    ) {
        let o = block_idx_x() * block_dim_x() + thread_idx_x();
        if o < count {
            let col = o % n;
            let row = (o / n) % m;
            let batch = o / n / m;
            let mut rem = batch;
            let mut ab = aoff;
            let mut bb = boff;
            for q in 0..nbatch {
                let d = nbatch - 1 - q;
                let c = rem % shape[d];
                rem = rem / shape[d];
                ab += c as i32 * astride[d];
                bb += c as i32 * bstride[d];
            }
            let arow = ab + row as i32 * sam;
            let bcol = bb + col as i32 * sbn;
            let mut rl = 0u32;
            let mut rh = 0u32;
            for p in 0..k {
                let ai = arow + p as i32 * sak;
                let bi = bcol + p as i32 * sbk;
                let (pl, ph) = mul64(a[2 * ai], a[2 * ai + 1], b[2 * bi], b[2 * bi + 1]);
                let (l, h) = add64(rl, rh, pl, ph);
                rl = l;
                rh = h;
            }
            out[2u32 * o] = rl;
            out[2u32 * o + 1u32] = rh;
        }
    }
}
