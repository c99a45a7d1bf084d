//! Values that are a block's term plus a known per-thread part.
//!
//! The concrete per-thread vector of the analysis covers values built from
//! thread geometry and constants. The global thread id is not one of them:
//! `block_idx_x() * block_dim_x() + thread_idx_x()` depends on the block,
//! which the analysis does not enumerate, so the id used to fall back to
//! "differs between lanes", and so did everything computed from it. But
//! real kernels divide it: in a warp-per-row GEMV, `row = gid / 32` is the
//! same in every lane of a warp whenever the block is a multiple of 32
//! threads, and a warp collective under `if row < rows` is reached by whole
//! warps. Calling that divergent is a false alarm.
//!
//! An [`Affine`] value is `g + m·k(block) + v[t]`: a grid-uniform unknown
//! `g` (a parameter, say; or none), an unknown block-uniform integer `k`
//! scaled by a known modulus `m` (or no block term), and a known per-thread
//! vector `v`. The laws it uses, for `u32` arithmetic:
//!
//! - adding a known vector or a parameter keeps the form;
//! - multiplying by a known constant `s` scales `m` and `v`;
//! - dividing by a constant `d` that divides `m` (with no unknown `g`)
//!   gives `(m/d)·k + v/d`: the block term stays whole;
//! - the remainder by such a `d` is `v % d`, fully known.
//!
//! So the GEMV's row is `4·k + tid/32` at block 128: per-thread part the
//! warp index, hence warp-uniform; and two threads store to one element
//! only if their per-thread parts are equal within a block, or if blocks
//! can collide — which they cannot when `k` is the block index (different
//! for different blocks) and the per-thread parts of the writers span less
//! than `m`. A per-thread part that would wrap around `u32` (`gid - 1` in
//! thread 0) gives up the form: the laws hold for the integers only.

use std::rc::Rc;

use crate::ir::{BinOp, Value};

use super::Uniformity;
use super::values::{Vals, classify_vals};

/// The block term `m·k(block)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BlockTerm {
    /// `m`.
    pub modulus: u64,
    /// `k` takes a different value in every block of the launch (it is the
    /// block index along the only axis the grid extends on).
    pub injective: bool,
}

/// `g + m·k(block) + v[t]`; see the module documentation.
#[derive(Debug, Clone)]
pub(super) struct Affine {
    /// `v`, one `u32` per thread of the block.
    pub per_thread: Vals,
    /// The block term, if any.
    pub block: Option<BlockTerm>,
    /// Whether an unknown grid-uniform `g` is added.
    pub grid_offset: bool,
}

impl Affine {
    /// A known per-thread vector of `u32`s, if `v` is one.
    pub fn known(v: &Vals) -> Option<Affine> {
        v.iter()
            .all(|x| matches!(x, Value::U32(_)))
            .then(|| Affine {
                per_thread: v.clone(),
                block: None,
                grid_offset: false,
            })
    }

    /// A grid-uniform unknown (a `u32` parameter) over `threads` threads.
    pub fn parameter(threads: usize) -> Affine {
        Affine {
            per_thread: Rc::new(vec![Value::U32(0); threads]),
            block: None,
            grid_offset: true,
        }
    }

    /// The block index along one axis.
    pub fn block_index(threads: usize, injective: bool) -> Affine {
        Affine {
            per_thread: Rc::new(vec![Value::U32(0); threads]),
            block: Some(BlockTerm {
                modulus: 1,
                injective,
            }),
            grid_offset: false,
        }
    }

    /// The same thing: equal parts.
    pub fn same(&self, o: &Affine) -> bool {
        self.block == o.block
            && self.grid_offset == o.grid_offset
            && (Rc::ptr_eq(&self.per_thread, &o.per_thread)
                || self
                    .per_thread
                    .iter()
                    .zip(o.per_thread.iter())
                    .all(|(a, b)| a.same(*b)))
    }

    /// Whether the value is fully known (no block term, no unknown `g`).
    pub fn is_known(&self) -> bool {
        self.block.is_none() && !self.grid_offset
    }

    /// How the value varies over a block cut into warps of `ws` lanes.
    pub fn uniformity(&self, ws: usize) -> Uniformity {
        let u = classify_vals(ws, &self.per_thread);
        if self.block.is_some() {
            u.max(Uniformity::Block)
        } else {
            u
        }
    }

    /// `a op b` in the form, where the law allows it.
    pub fn binary(op: BinOp, a: &Affine, b: &Affine) -> Option<Affine> {
        let k = |x: &Affine| x.uniform_known();
        match op {
            BinOp::Add => {
                let block = match (a.block, b.block) {
                    (Some(_), Some(_)) => return None,
                    (x, None) | (None, x) => x,
                };
                Some(Affine {
                    per_thread: zip(a, b, u32::checked_add)?,
                    block,
                    grid_offset: a.grid_offset || b.grid_offset,
                })
            }
            BinOp::Sub if b.is_known() => Some(Affine {
                per_thread: zip(a, b, u32::checked_sub)?,
                block: a.block,
                grid_offset: a.grid_offset,
            }),
            BinOp::Mul => {
                let (x, s) = match (k(a), k(b)) {
                    (_, Some(s)) => (a, s),
                    (Some(s), _) => (b, s),
                    _ => return None,
                };
                let block = match x.block {
                    Some(_) if s == 0 => None,
                    Some(t) => Some(BlockTerm {
                        modulus: t.modulus.checked_mul(s as u64)?,
                        injective: t.injective,
                    }),
                    None => None,
                };
                Some(Affine {
                    per_thread: map(x, |v| v.checked_mul(s))?,
                    block,
                    grid_offset: x.grid_offset && s != 0,
                })
            }
            BinOp::Div | BinOp::Rem => {
                let d = k(b).filter(|d| *d > 0)?;
                if a.grid_offset || a.block.is_some_and(|t| t.modulus % d as u64 != 0) {
                    return None;
                }
                if op == BinOp::Rem {
                    // m·k is a multiple of d: only the per-thread part is left.
                    return Some(Affine {
                        per_thread: map(a, |v| Some(v % d))?,
                        block: None,
                        grid_offset: false,
                    });
                }
                Some(Affine {
                    per_thread: map(a, |v| Some(v / d))?,
                    block: a.block.map(|t| BlockTerm {
                        modulus: t.modulus / d as u64,
                        injective: t.injective,
                    }),
                    grid_offset: false,
                })
            }
            _ => None,
        }
    }

    /// The one value of a fully known value that is the same in every
    /// thread.
    fn uniform_known(&self) -> Option<u32> {
        if !self.is_known() {
            return None;
        }
        let first = u32_of(*self.per_thread.first()?)?;
        self.per_thread
            .iter()
            .all(|v| u32_of(*v) == Some(first))
            .then_some(first)
    }

    /// Whether the threads `writers` (of every block) store to distinct
    /// elements: distinct per-thread parts within a block, and blocks that
    /// cannot reach each other's elements. `blocks` is the grid's count.
    pub fn distinct_for(&self, writers: &[usize], blocks: u64) -> bool {
        let vals: Vec<u32> = writers
            .iter()
            .filter_map(|&t| u32_of(self.per_thread[t]))
            .collect();
        if vals.len() != writers.len() {
            return false;
        }
        let mut sorted = vals.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return false;
        }
        if blocks <= 1 {
            return true;
        }
        match self.block {
            Some(t) if t.injective => {
                let span = match (sorted.first(), sorted.last()) {
                    (Some(lo), Some(hi)) => (hi - lo) as u64,
                    _ => 0,
                };
                span < t.modulus
            }
            _ => false,
        }
    }
}

fn u32_of(v: Value) -> Option<u32> {
    match v {
        Value::U32(x) => Some(x),
        _ => None,
    }
}

/// `f` of every per-thread part; `None` when a part is not a `u32` or `f`
/// leaves the `u32` range (the form's laws hold only without wrap-around).
fn map(a: &Affine, f: impl Fn(u32) -> Option<u32>) -> Option<Vals> {
    a.per_thread
        .iter()
        .map(|v| u32_of(*v).and_then(&f).map(Value::U32))
        .collect::<Option<Vec<_>>>()
        .map(Rc::new)
}

/// `f` of each pair of per-thread parts, under the same conditions.
fn zip(a: &Affine, b: &Affine, f: impl Fn(u32, u32) -> Option<u32>) -> Option<Vals> {
    a.per_thread
        .iter()
        .zip(b.per_thread.iter())
        .map(|(x, y)| f(u32_of(*x)?, u32_of(*y)?).map(Value::U32))
        .collect::<Option<Vec<_>>>()
        .map(Rc::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(v: &[u32]) -> Affine {
        Affine::known(&Rc::new(v.iter().map(|x| Value::U32(*x)).collect())).unwrap()
    }

    fn parts(a: &Affine) -> Vec<u32> {
        a.per_thread.iter().map(|v| u32_of(*v).unwrap()).collect()
    }

    #[test]
    fn the_global_id_over_the_warp_width_keeps_the_block_term_whole() {
        // gid = bx·8 + tid at block 8, over "warps" of 4: (2·bx) + tid/4.
        let tid = known(&[0, 1, 2, 3, 4, 5, 6, 7]);
        let bx = Affine::block_index(8, true);
        let scaled = Affine::binary(BinOp::Mul, &bx, &known(&[8; 8])).unwrap();
        let gid = Affine::binary(BinOp::Add, &scaled, &tid).unwrap();
        let row = Affine::binary(BinOp::Div, &gid, &known(&[4; 8])).unwrap();
        assert_eq!(parts(&row), [0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(row.block.unwrap().modulus, 2);
        // The same in each warp of 4 (and of 2); split by a warp of 8.
        assert_eq!(row.uniformity(4), Uniformity::Warp);
        assert_eq!(row.uniformity(2), Uniformity::Warp);
        assert_eq!(row.uniformity(8), Uniformity::Divergent);
        // With no per-thread variation the block term alone decides.
        assert_eq!(bx.uniformity(4), Uniformity::Block);
        // The lane: (bx·8 + tid) % 4 is known outright.
        let lane = Affine::binary(BinOp::Rem, &gid, &known(&[4; 8])).unwrap();
        assert!(lane.is_known());
        assert_eq!(parts(&lane), [0, 1, 2, 3, 0, 1, 2, 3]);
        // A divisor that does not divide the block term gives no form.
        assert!(Affine::binary(BinOp::Div, &gid, &known(&[3; 8])).is_none());
        // Nor does an unknown grid-uniform offset.
        let shifted = Affine::binary(BinOp::Add, &gid, &Affine::parameter(8)).unwrap();
        assert!(Affine::binary(BinOp::Div, &shifted, &known(&[4; 8])).is_none());
        // Two block terms do not add up to one.
        assert!(Affine::binary(BinOp::Add, &gid, &bx).is_none());
        // gid - 1 wraps in thread 0: no form, so no wrong quotient after.
        assert!(Affine::binary(BinOp::Sub, &gid, &known(&[1; 8])).is_none());
    }

    #[test]
    fn writers_are_distinct_when_parts_differ_and_blocks_are_spaced() {
        let tid = known(&[0, 1, 2, 3]);
        let bx = Affine::block_index(4, true);
        let gid = Affine::binary(
            BinOp::Add,
            &Affine::binary(BinOp::Mul, &bx, &known(&[4; 4])).unwrap(),
            &tid,
        )
        .unwrap();
        assert!(gid.distinct_for(&[0, 1, 2, 3], 8));
        // tid alone: the same elements in every block.
        assert!(!tid.distinct_for(&[0, 1, 2, 3], 8));
        assert!(tid.distinct_for(&[0, 1, 2, 3], 1));
        // bx + tid: blocks overlap (block 1's thread 0 is block 0's thread 1).
        let overlap = Affine::binary(BinOp::Add, &bx, &tid).unwrap();
        assert!(!overlap.distinct_for(&[0, 1], 2));
        // ...unless one thread per block writes.
        assert!(overlap.distinct_for(&[0], 2));
        // Two writers with one part: a race within the block.
        assert!(!known(&[5, 5, 6, 7]).distinct_for(&[0, 1], 1));
        // A block index that repeats (a 2-D grid) separates nothing.
        let bx2 = Affine::block_index(4, false);
        assert!(!bx2.distinct_for(&[0], 4));
    }
}
