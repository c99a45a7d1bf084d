//! Strided layouts and the arithmetic of views.
//!
//! A [`Layout`] maps a multi-index `[i0, i1, …]` to a position in flat
//! storage: `offset + i0*s0 + i1*s1 + …`. Every view (transpose, narrow,
//! slice with a step, broadcast, squeeze, reshape-without-copy) is a new
//! layout over the same storage, computed here without touching data.
//! Strides are in elements, never bytes, and never negative: a reversed
//! view would need signed strides, and oxmera's `flip` copies instead.

use std::fmt;

use crate::shape::{normalize_dim, normalize_dims};
use crate::{Error, Result, Shape};

/// The step, in elements, between neighbours along each dim.
///
/// A stride of 0 repeats one element along a dim: that is how broadcasting
/// stretches a size-1 dim without copying.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Strides(Vec<usize>);

impl Strides {
    /// Strides from a vector.
    pub fn new(strides: Vec<usize>) -> Self {
        Strides(strides)
    }

    /// The strides as a slice.
    pub fn as_slice(&self) -> &[usize] {
        &self.0
    }
}

impl fmt::Debug for Strides {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// A shape, its strides, and the offset of element `[0, 0, …]` in storage.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Shape,
    strides: Strides,
    offset: usize,
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Layout {{ shape: {}, strides: {:?}, offset: {} }}",
            self.shape, self.strides, self.offset
        )
    }
}

impl Layout {
    /// The row-major layout of a fresh tensor, starting at offset 0.
    pub fn contiguous(shape: impl Into<Shape>) -> Self {
        let shape = shape.into();
        let strides = Strides(shape.contiguous_strides());
        Layout {
            shape,
            strides,
            offset: 0,
        }
    }

    /// A layout from its parts.
    ///
    /// # Panics
    /// If `strides` has a different length than `shape` has dims: that is a
    /// bug in the caller, not bad user input.
    pub fn new(shape: impl Into<Shape>, strides: Vec<usize>, offset: usize) -> Self {
        let shape = shape.into();
        assert_eq!(shape.rank(), strides.len(), "layout: rank of strides");
        Layout {
            shape,
            strides: Strides(strides),
            offset,
        }
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The extents (shorthand for `shape().dims()`).
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// The strides.
    pub fn strides(&self) -> &Strides {
        &self.strides
    }

    /// The storage position of element `[0, 0, …]`.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The number of dims.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.shape.numel()
    }

    /// Whether elements sit in row-major order with no gaps, so that the
    /// view is the storage range `offset..offset + numel`.
    ///
    /// Dims of extent 1 are ignored (their stride never matters), and so is
    /// everything about a layout with no elements.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut expected = 1;
        for (&d, &s) in self.dims().iter().zip(&self.strides.0).rev() {
            if d != 1 {
                if s != expected {
                    return false;
                }
                expected *= d;
            }
        }
        true
    }

    /// One past the largest storage position this layout can reach: the
    /// storage must be at least this long. A layout with no elements needs
    /// nothing.
    pub fn required_len(&self) -> usize {
        if self.numel() == 0 {
            return 0;
        }
        self.offset
            + self
                .dims()
                .iter()
                .zip(&self.strides.0)
                .map(|(&d, &s)| (d - 1) * s)
                .sum::<usize>()
            + 1
    }

    /// The storage position of a multi-index, checked.
    pub fn offset_of(&self, op: &'static str, index: &[usize]) -> Result<usize> {
        if index.len() != self.rank() {
            return Err(Error::IndexRank {
                op,
                index: index.to_vec(),
                rank: self.rank(),
            });
        }
        let mut off = self.offset;
        for (dim, ((&i, &d), &s)) in index
            .iter()
            .zip(self.dims())
            .zip(&self.strides.0)
            .enumerate()
        {
            if i >= d {
                return Err(Error::IndexOutOfBounds {
                    op,
                    index: i as i64,
                    dim,
                    size: d,
                });
            }
            off += i * s;
        }
        Ok(off)
    }

    /// The storage position of the `linear`-th element in row-major logical
    /// order. `linear` must be below `numel()`.
    pub fn offset_of_linear(&self, mut linear: usize) -> usize {
        let mut off = self.offset;
        for (&d, &s) in self.dims().iter().zip(&self.strides.0).rev() {
            off += (linear % d) * s;
            linear /= d;
        }
        off
    }

    /// Storage positions of all elements in row-major logical order.
    pub fn offsets(&self) -> OffsetIter {
        OffsetIter::new(self)
    }

    /// Reorders the dims: dim `i` of the result is dim `perm[i]` of `self`.
    pub fn permute(&self, op: &'static str, perm: &[isize]) -> Result<Layout> {
        let rank = self.rank();
        let bad = || Error::InvalidPermutation {
            op,
            perm: perm.to_vec(),
            rank,
        };
        if perm.len() != rank {
            return Err(bad());
        }
        let resolved = normalize_dims(op, perm, rank).map_err(|_| bad())?;
        debug_assert_eq!(resolved.len(), rank);
        let mut dims = Vec::with_capacity(rank);
        let mut strides = Vec::with_capacity(rank);
        for &p in perm {
            let p = normalize_dim(op, p, rank)?;
            dims.push(self.dims()[p]);
            strides.push(self.strides.0[p]);
        }
        Ok(Layout::new(dims, strides, self.offset))
    }

    /// Swaps two dims.
    pub fn transpose(&self, op: &'static str, a: isize, b: isize) -> Result<Layout> {
        let rank = self.rank();
        let a = normalize_dim(op, a, rank)?;
        let b = normalize_dim(op, b, rank)?;
        let mut l = self.clone();
        l.shape = {
            let mut d = self.dims().to_vec();
            d.swap(a, b);
            Shape::from(d)
        };
        l.strides.0.swap(a, b);
        Ok(l)
    }

    /// Keeps `len` elements of `dim` starting at `start`.
    pub fn narrow(&self, op: &'static str, dim: isize, start: usize, len: usize) -> Result<Layout> {
        self.slice(op, dim, start, start.saturating_add(len), 1)
    }

    /// Keeps every `step`-th element of `dim` in `start..end`.
    ///
    /// `end` may not exceed the extent and `start` may not exceed `end`;
    /// an empty range gives a zero-size dim. `step` must be at least 1.
    pub fn slice(
        &self,
        op: &'static str,
        dim: isize,
        start: usize,
        end: usize,
        step: usize,
    ) -> Result<Layout> {
        let d = normalize_dim(op, dim, self.rank())?;
        let size = self.dims()[d];
        if step == 0 {
            return Err(Error::invalid(op, "step", "step must be at least 1, got 0"));
        }
        if start > end || end > size {
            return Err(Error::RangeOutOfBounds {
                op,
                dim: d,
                start,
                end,
                size,
            });
        }
        let len = (end - start).div_ceil(step);
        let mut dims = self.dims().to_vec();
        let mut strides = self.strides.0.clone();
        let offset = if len == 0 {
            self.offset
        } else {
            self.offset + start * strides[d]
        };
        dims[d] = len;
        strides[d] *= step;
        Ok(Layout::new(dims, strides, offset))
    }

    /// Stretches size-1 dims (and missing leading dims) to `target` with
    /// stride 0, so that one stored element serves a whole dim.
    pub fn broadcast_to(&self, op: &'static str, target: &Shape) -> Result<Layout> {
        target.valid_numel(op)?;
        let rank = target.rank();
        let err = || Error::ExpandIncompatible {
            op,
            from: self.shape.clone(),
            to: target.clone(),
        };
        if rank < self.rank() {
            return Err(err());
        }
        let lead = rank - self.rank();
        let mut strides = vec![0; rank];
        for (i, stride) in strides.iter_mut().enumerate().skip(lead) {
            let (from, to) = (self.dims()[i - lead], target.dim(i));
            *stride = if from == to {
                self.strides.0[i - lead]
            } else if from == 1 {
                0
            } else {
                return Err(err());
            };
        }
        Ok(Layout::new(target.clone(), strides, self.offset))
    }

    /// Removes a size-1 dim.
    pub fn squeeze(&self, op: &'static str, dim: isize) -> Result<Layout> {
        let d = normalize_dim(op, dim, self.rank())?;
        let size = self.dims()[d];
        if size != 1 {
            return Err(Error::NotSqueezable { op, dim: d, size });
        }
        Ok(self.without_dim(d))
    }

    /// Removes every size-1 dim.
    pub fn squeeze_all(&self) -> Layout {
        let keep: Vec<usize> = (0..self.rank()).filter(|&i| self.dims()[i] != 1).collect();
        Layout::new(
            keep.iter().map(|&i| self.dims()[i]).collect::<Vec<_>>(),
            keep.iter().map(|&i| self.strides.0[i]).collect(),
            self.offset,
        )
    }

    /// Inserts a size-1 dim at `dim`, which may range over `-(rank+1)..=rank`.
    pub fn unsqueeze(&self, op: &'static str, dim: isize) -> Result<Layout> {
        let d = normalize_dim(op, dim, self.rank() + 1)?;
        let mut dims = self.dims().to_vec();
        let mut strides = self.strides.0.clone();
        // Any stride works for a size-1 dim; the one that keeps a contiguous
        // layout contiguous is the extent times stride of the dim inside it.
        let s = if d < self.rank() {
            dims[d] * strides[d]
        } else {
            1
        };
        dims.insert(d, 1);
        strides.insert(d, s);
        Ok(Layout::new(dims, strides, self.offset))
    }

    /// The same elements under a new shape, without copying, when the
    /// strides allow it; otherwise [`Error::NotAView`].
    ///
    /// A reshape is a view exactly when each group of old dims that the new
    /// shape merges or splits was itself laid out contiguously.
    pub fn reshape(&self, op: &'static str, target: &Shape) -> Result<Layout> {
        // Checked first: [2^63 + 3, 2] multiplies out to 6 in wrapping
        // arithmetic and would pass for six elements.
        target.valid_numel(op)?;
        if target.numel() != self.numel() {
            return Err(Error::ElementCount {
                op,
                shape: target.clone(),
                expected: target.numel(),
                got: self.numel(),
            });
        }
        match view_strides(self.dims(), &self.strides.0, target.dims()) {
            Some(strides) => Ok(Layout::new(target.clone(), strides, self.offset)),
            None => Err(Error::NotAView {
                op,
                shape: self.shape.clone(),
                strides: self.strides.0.clone(),
                target: target.clone(),
            }),
        }
    }

    fn without_dim(&self, d: usize) -> Layout {
        let mut dims = self.dims().to_vec();
        let mut strides = self.strides.0.clone();
        dims.remove(d);
        strides.remove(d);
        Layout::new(dims, strides, self.offset)
    }
}

/// Strides that present `old` (with `old_strides`) under shape `new`, or
/// `None` when a copy is needed.
///
/// Walk the old dims from the inside out in "chunks": maximal runs that are
/// contiguous with each other. Each chunk must be covered exactly by a run
/// of new dims, which then get strides based on the chunk's innermost
/// stride.
fn view_strides(old: &[usize], old_strides: &[usize], new: &[usize]) -> Option<Vec<usize>> {
    let numel: usize = old.iter().product();
    if numel <= 1 {
        // No element has a neighbour, so any strides will do.
        return Some(Shape::from(new).contiguous_strides());
    }
    let mut new_strides = vec![0usize; new.len()];
    let mut view_d = new.len() as isize - 1;
    let mut chunk_base = *old_strides.last()?;
    let mut tensor_numel = 1usize;
    let mut view_numel = 1usize;
    for tensor_d in (0..old.len()).rev() {
        tensor_numel *= old[tensor_d];
        let chunk_ends = tensor_d == 0
            || (old[tensor_d - 1] != 1 && old_strides[tensor_d - 1] != tensor_numel * chunk_base);
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new[view_d as usize] == 1) {
                new_strides[view_d as usize] = view_numel * chunk_base;
                view_numel *= new[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base = old_strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    (view_d == -1).then_some(new_strides)
}

/// Iterator over the storage positions of a layout's elements in row-major
/// logical order (an odometer over the multi-index).
#[derive(Debug, Clone)]
pub struct OffsetIter {
    dims: Vec<usize>,
    strides: Vec<usize>,
    index: Vec<usize>,
    next: usize,
    remaining: usize,
}

impl OffsetIter {
    fn new(layout: &Layout) -> Self {
        OffsetIter {
            dims: layout.dims().to_vec(),
            strides: layout.strides.0.clone(),
            index: vec![0; layout.rank()],
            next: layout.offset,
            remaining: layout.numel(),
        }
    }
}

impl Iterator for OffsetIter {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.next;
        if self.remaining > 0 {
            for d in (0..self.dims.len()).rev() {
                self.index[d] += 1;
                self.next += self.strides[d];
                if self.index[d] < self.dims[d] {
                    break;
                }
                self.next -= self.index[d] * self.strides[d];
                self.index[d] = 0;
            }
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for OffsetIter {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn l(dims: &[usize]) -> Layout {
        Layout::contiguous(Shape::from(dims))
    }

    #[test]
    fn hand_computed_views() {
        // A 2x3 matrix [[0,1,2],[3,4,5]] in storage 0..6.
        let a = l(&[2, 3]);
        assert!(a.is_contiguous());
        assert_eq!(a.offsets().collect::<Vec<_>>(), vec![0, 1, 2, 3, 4, 5]);
        let t = a.transpose("t", 0, 1).unwrap();
        assert_eq!(t.offsets().collect::<Vec<_>>(), vec![0, 3, 1, 4, 2, 5]);
        assert!(!t.is_contiguous());
        // Column 1 only: narrow dim 1.
        let c = a.narrow("narrow", 1, 1, 1).unwrap();
        assert_eq!(c.offsets().collect::<Vec<_>>(), vec![1, 4]);
        assert_eq!(c.offset(), 1);
        // Every other column, starting at 0: [0, 2], [3, 5].
        let s = a.slice("slice", -1, 0, 3, 2).unwrap();
        assert_eq!(s.dims(), &[2, 2]);
        assert_eq!(s.offsets().collect::<Vec<_>>(), vec![0, 2, 3, 5]);
        // Broadcast a row of 3 to 2x3 with stride 0.
        let row = l(&[3])
            .broadcast_to("expand", &Shape::from([2, 3]))
            .unwrap();
        assert_eq!(row.strides().as_slice(), &[0, 1]);
        assert_eq!(row.offsets().collect::<Vec<_>>(), vec![0, 1, 2, 0, 1, 2]);
        assert_eq!(row.required_len(), 3);
    }

    #[test]
    fn reshape_views_and_refusals() {
        let a = l(&[2, 3, 4]);
        let r = a.reshape("view", &Shape::from([6, 4])).unwrap();
        assert_eq!(r.strides().as_slice(), &[4, 1]);
        // A transposed matrix cannot be flattened without a copy.
        let t = l(&[2, 3]).transpose("t", 0, 1).unwrap();
        assert!(matches!(
            t.reshape("view", &Shape::from([6])),
            Err(Error::NotAView { .. })
        ));
        // But splitting one of its dims is fine.
        let s = t.reshape("view", &Shape::from([3, 2, 1])).unwrap();
        assert_eq!(s.offsets().collect::<Vec<_>>(), vec![0, 3, 1, 4, 2, 5]);
        assert!(matches!(
            a.reshape("view", &Shape::from([5])),
            Err(Error::ElementCount { .. })
        ));
        // Zero-size and scalar cases.
        assert!(l(&[0, 3]).reshape("view", &Shape::from([3, 0])).is_ok());
        assert_eq!(
            l(&[]).reshape("view", &Shape::from([1, 1])).unwrap().rank(),
            2
        );
    }

    #[test]
    fn errors_are_typed() {
        let a = l(&[2, 3]);
        assert!(matches!(
            a.permute("permute", &[0]),
            Err(Error::InvalidPermutation { .. })
        ));
        assert!(matches!(
            a.permute("permute", &[0, 0]),
            Err(Error::InvalidPermutation { .. })
        ));
        assert!(matches!(
            a.narrow("narrow", 1, 2, 2),
            Err(Error::RangeOutOfBounds { .. })
        ));
        assert!(matches!(
            a.slice("slice", 0, 0, 2, 0),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            a.squeeze("squeeze", 0),
            Err(Error::NotSqueezable { .. })
        ));
        assert!(matches!(
            a.offset_of("get", &[2, 0]),
            Err(Error::IndexOutOfBounds { .. })
        ));
        assert!(matches!(
            a.offset_of("get", &[0]),
            Err(Error::IndexRank { .. })
        ));
        assert!(matches!(
            a.broadcast_to("expand", &Shape::from([3])),
            Err(Error::ExpandIncompatible { .. })
        ));
        assert!(matches!(
            a.broadcast_to("expand", &Shape::from([2, 2])),
            Err(Error::ExpandIncompatible { .. })
        ));
    }

    #[test]
    fn squeeze_unsqueeze() {
        let a = l(&[2, 1, 3]);
        let s = a.squeeze("squeeze", 1).unwrap();
        assert_eq!(s.dims(), &[2, 3]);
        assert!(s.is_contiguous());
        let u = s.unsqueeze("unsqueeze", -1).unwrap();
        assert_eq!(u.dims(), &[2, 3, 1]);
        assert!(u.is_contiguous());
        assert_eq!(a.squeeze_all().dims(), &[2, 3]);
    }

    fn shape_strategy() -> impl Strategy<Value = Vec<usize>> {
        prop::collection::vec(0usize..4, 0..5)
    }

    fn perm_strategy(rank: usize) -> impl Strategy<Value = Vec<usize>> {
        Just((0..rank).collect::<Vec<_>>()).prop_shuffle()
    }

    proptest! {
        #[test]
        fn offset_of_is_a_bijection_on_contiguous(dims in shape_strategy()) {
            let a = l(&dims);
            let shape = a.shape().clone();
            let mut seen = vec![false; a.numel()];
            for i in 0..a.numel() {
                let off = a.offset_of("t", &shape.unravel(i)).unwrap();
                prop_assert_eq!(off, i);
                prop_assert!(!seen[off]);
                seen[off] = true;
            }
        }

        #[test]
        fn permute_then_inverse_is_identity(
            (dims, perm) in shape_strategy().prop_flat_map(|d| { let r = d.len(); (Just(d), perm_strategy(r)) })
        ) {
            let a = l(&dims);
            let p: Vec<isize> = perm.iter().map(|&x| x as isize).collect();
            let mut inv = vec![0isize; perm.len()];
            for (i, &x) in perm.iter().enumerate() { inv[x] = i as isize; }
            let back = a.permute("permute", &p).unwrap().permute("permute", &inv).unwrap();
            prop_assert_eq!(back, a);
        }

        #[test]
        fn permuted_offsets_are_injective(
            (dims, perm) in shape_strategy().prop_flat_map(|d| { let r = d.len(); (Just(d), perm_strategy(r)) })
        ) {
            let p: Vec<isize> = perm.iter().map(|&x| x as isize).collect();
            let v = l(&dims).permute("permute", &p).unwrap();
            let mut offs: Vec<usize> = v.offsets().collect();
            offs.sort_unstable();
            offs.dedup();
            prop_assert_eq!(offs.len(), v.numel());
            for i in 0..v.numel() {
                prop_assert_eq!(v.offset_of_linear(i), v.offsets().nth(i).unwrap());
            }
        }

        #[test]
        fn reshape_round_trips(dims in shape_strategy(), split in 0usize..5) {
            let a = l(&dims);
            let flat = a.reshape("reshape", &Shape::from([a.numel()])).unwrap();
            let back = flat.reshape("reshape", a.shape()).unwrap();
            prop_assert_eq!(back.offsets().collect::<Vec<_>>(), a.offsets().collect::<Vec<_>>());
            // A reshape view, when granted, visits the same storage in the same order.
            let t = if a.rank() >= 2 { a.transpose("t", 0, -1).unwrap() } else { a.clone() };
            let k = split.min(t.rank());
            let merged: usize = t.dims()[..k].iter().product();
            let mut target = vec![merged];
            target.extend_from_slice(&t.dims()[k..]);
            if let Ok(v) = t.reshape("view", &Shape::from(target)) {
                prop_assert_eq!(v.offsets().collect::<Vec<_>>(), t.offsets().collect::<Vec<_>>());
            }
        }
    }
}
