//! `pow` and `erf` in PTX: `pow` from `lg2.approx` and `ex2.approx` with
//! Rust's special cases selected around them, `erf` as the polynomials of
//! [`erf_approx`](crate::emit::erf_approx) with `fma.rn` (bit for bit the
//! host's fused evaluation of the same table).

use crate::emit::erf_approx::{PIECES, SMALL, SMALL_Q};

use super::{Class, Emitter};

/// An `f32` as a PTX immediate.
fn imm(x: f32) -> String {
    format!("0f{:08X}", x.to_bits())
}

const ONE: &str = "0f3F800000";
const INF: &str = "0f7F800000";
const NAN: &str = "0f7FFFFFFF";

impl Emitter<'_> {
    /// `d = x^y` as Rust's `f32::powf` has it (C99 / IEEE 754 `pow`).
    /// The magnitude is `ex2.approx(y · lg2.approx|x|)`, which already
    /// gives the limits at 0 and ∞ (`lg2` of 0 is −∞, of ∞ is ∞, and `ex2`
    /// takes ±∞ to ∞ and +0); then the sign of a negative `x` to an odd
    /// integer, NaN for a finite negative `x` to a non-integer, and 1 for
    /// `x^±0`, `1^y` and `(−1)^±∞` (where `y · lg2 1` would be ∞ · 0).
    pub(super) fn pow(&mut self, d: &str, x: &str, y: &str) {
        let f = |e: &mut Self| e.temp(Class::F32);
        let p = |e: &mut Self| e.temp(Class::Pred);
        let (ax, t, r) = (f(self), f(self), f(self));
        self.ins(format!("abs.f32 {ax}, {x}"));
        self.ins(format!("lg2.approx.f32 {t}, {ax}"));
        self.ins(format!("mul.rn.f32 {t}, {y}, {t}"));
        self.ins(format!("ex2.approx.f32 {r}, {t}"));
        // y an integer: it equals its truncation (±∞ does, NaN does not);
        // odd: half of it does not (exact; every f32 from 2^24 up is even).
        let (ty, half) = (f(self), f(self));
        let (int, odd) = (p(self), p(self));
        self.ins(format!("cvt.rzi.f32.f32 {ty}, {y}"));
        self.ins(format!("setp.eq.f32 {int}, {ty}, {y}"));
        self.ins(format!("mul.rn.f32 {half}, {y}, 0f3F000000"));
        self.ins(format!("cvt.rzi.f32.f32 {ty}, {half}"));
        self.ins(format!("setp.neu.f32 {odd}, {ty}, {half}"));
        self.ins(format!("and.pred {odd}, {odd}, {int}"));
        // x's sign bit (−0 and −∞ included) with an odd y negates.
        let (bits, neg) = (self.temp(Class::B32), p(self));
        self.ins(format!("mov.b32 {bits}, {x}"));
        self.ins(format!("setp.lt.s32 {neg}, {bits}, 0"));
        self.ins(format!("and.pred {neg}, {neg}, {odd}"));
        let n = f(self);
        self.ins(format!("neg.f32 {n}, {r}"));
        self.ins(format!("selp.f32 {r}, {n}, {r}, {neg}"));
        // A finite x < 0 (−0 is not) to a non-integer y: NaN.
        let (lt, fin, frac) = (p(self), p(self), p(self));
        self.ins(format!("setp.lt.f32 {lt}, {x}, 0f00000000"));
        self.ins(format!("setp.ne.f32 {fin}, {ax}, {INF}"));
        self.ins(format!("not.pred {frac}, {int}"));
        self.ins(format!("and.pred {lt}, {lt}, {fin}"));
        self.ins(format!("and.pred {lt}, {lt}, {frac}"));
        self.ins(format!("selp.f32 {r}, {NAN}, {r}, {lt}"));
        // 1 for y = ±0, for x = 1, and for |x| = 1 with y = ±∞.
        let (ay, one, q) = (f(self), p(self), p(self));
        self.ins(format!("abs.f32 {ay}, {y}"));
        self.ins(format!("setp.eq.f32 {one}, {ay}, 0f00000000"));
        self.ins(format!("setp.eq.f32 {q}, {x}, {ONE}"));
        self.ins(format!("or.pred {one}, {one}, {q}"));
        let q2 = p(self);
        self.ins(format!("setp.eq.f32 {q}, {ax}, {ONE}"));
        self.ins(format!("setp.eq.f32 {q2}, {ay}, {INF}"));
        self.ins(format!("and.pred {q}, {q}, {q2}"));
        self.ins(format!("or.pred {one}, {one}, {q}"));
        self.ins(format!("selp.f32 {d}, {ONE}, {r}, {one}"));
    }

    /// `d = erf(x)`: every piece of the table evaluated (no branch: the
    /// lanes of a warp may fall in different pieces), the right one
    /// selected, and NaN passed through.
    pub(super) fn erf(&mut self, d: &str, x: &str) {
        let a = self.temp(Class::F32);
        self.ins(format!("abs.f32 {a}, {x}"));
        // |x| < SMALL: fma(x, Q(x²), x).
        let (s, q, small) = (
            self.temp(Class::F32),
            self.temp(Class::F32),
            self.temp(Class::F32),
        );
        self.ins(format!("mul.rn.f32 {s}, {x}, {x}"));
        self.horner(&q, &s, &SMALL_Q);
        self.ins(format!("fma.rn.f32 {small}, {x}, {q}, {x}"));
        // From SMALL up: 1 − P(|x| − c) in the piece holding |x|, else 1,
        // with x's sign.
        let r = self.temp(Class::F32);
        self.ins(format!("mov.f32 {r}, {ONE}"));
        for piece in PIECES.iter().rev() {
            let (u, v, inside) = (
                self.temp(Class::F32),
                self.temp(Class::F32),
                self.temp(Class::Pred),
            );
            self.ins(format!("sub.rn.f32 {u}, {a}, {}", imm(piece.centre)));
            self.horner(&v, &u, piece.coefficients);
            self.ins(format!("sub.rn.f32 {v}, {ONE}, {v}"));
            self.ins(format!("setp.lt.f32 {inside}, {a}, {}", imm(piece.below)));
            self.ins(format!("selp.f32 {r}, {v}, {r}, {inside}"));
        }
        self.ins(format!("copysign.f32 {r}, {x}, {r}"));
        let (is_small, nan) = (self.temp(Class::Pred), self.temp(Class::Pred));
        self.ins(format!("setp.lt.f32 {is_small}, {a}, {}", imm(SMALL)));
        self.ins(format!("selp.f32 {r}, {small}, {r}, {is_small}"));
        self.ins(format!("setp.nan.f32 {nan}, {x}, {x}"));
        self.ins(format!("selp.f32 {d}, {x}, {r}, {nan}"));
    }

    /// `d = c₀·tⁿ + … + cₙ` by Horner's rule with `fma.rn`.
    fn horner(&mut self, d: &str, t: &str, coefficients: &[f32]) {
        self.ins(format!("mov.f32 {d}, {}", imm(coefficients[0])));
        for c in &coefficients[1..] {
            self.ins(format!("fma.rn.f32 {d}, {d}, {t}, {}", imm(*c)));
        }
    }
}
