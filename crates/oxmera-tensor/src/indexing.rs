//! Indexing that reads like PyTorch's, and returns views: [`Tensor::i`].
//!
//! | PyTorch          | oxmera                         |
//! |------------------|--------------------------------|
//! | `x[-1]`          | `x.i(-1)`                      |
//! | `x[:, 1:3]`      | `x.i((.., 1..3))`              |
//! | `x[1:, :-1]`     | `x.i((1.., ..-1))`             |
//! | `x[..., 0]`      | `x.i((Ellipsis, 0))`           |
//! | `x[:, None]`     | `x.i((.., NewAxis))`           |
//! | `x[0, 2:=4]`¹    | `x.i((0, 2..=4))`              |
//!
//! ¹ Python has no inclusive slice; Rust's `a..=b` is `a:b+1`.
//!
//! The rules are Python's basic indexing: an integer picks one position
//! and removes its dim (negative counts from the end; out of range is
//! [`Error::IndexOutOfBounds`]); a range keeps a run of positions, its
//! bounds counted from the end when negative and clamped to the dim (so
//! `x.i(-10..)` of a short dim is the whole dim, never an error); `..`
//! keeps a whole dim; [`Ellipsis`] stands for as many whole dims as the
//! other items leave; [`NewAxis`] inserts a size-1 dim. Dims past the last
//! item are kept whole. The result shares `x`'s storage and records its
//! gradient like the [`Tensor::narrow`]/[`Tensor::select`] it is made of.
//! Steps other than 1 are [`Tensor::slice`]'s.
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::Device;
//! use oxmera_tensor::{Ellipsis, Tensor};
//! let x = Tensor::new([[1, 2, 3], [4, 5, 6]], Device::Reference)?;
//! assert_eq!(x.i((.., 1..3))?.to_vec::<i32>()?, vec![2, 3, 5, 6]);
//! assert_eq!(x.i(-1)?.to_vec::<i32>()?, vec![4, 5, 6]);
//! assert_eq!(x.i((Ellipsis, 0))?.to_vec::<i32>()?, vec![1, 4]);
//! assert!(x.i((.., 1..3))?.shares_storage(&x));
//! # Ok::<(), oxmera_core::Error>(())
//! ```

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use oxmera_core::{Error, Position, Result};

use crate::Tensor;

/// `...` in a PyTorch index: as many whole dims as the other items leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ellipsis;

/// `None` in a PyTorch index: a new dim of size 1 at this place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewAxis;

/// One item of an index (see the [module docs](self) for the rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexItem {
    /// One position; its dim is removed.
    At(Position),
    /// A run of positions; `end` is exclusive unless `inclusive`.
    Range {
        /// The first position (`None`: from the start).
        start: Option<Position>,
        /// The bound (`None`: to the end).
        end: Option<Position>,
        /// Whether `end` itself is kept (`a..=b`).
        inclusive: bool,
    },
    /// A whole dim (`..`).
    Full,
    /// Whole dims standing for the ones the other items leave.
    Ellipsis,
    /// A new size-1 dim.
    NewAxis,
}

/// What [`Tensor::i`] takes: one [`IndexItem`]-like value or a tuple of
/// up to eight of them.
pub trait Indexer {
    /// The items, in order.
    fn items(self) -> Vec<IndexItem>;
}

macro_rules! ints_index {
    ($($t:ty),*) => {$(
        impl From<$t> for IndexItem {
            fn from(v: $t) -> IndexItem {
                IndexItem::At(Position::from(v))
            }
        }
        impl From<Range<$t>> for IndexItem {
            fn from(r: Range<$t>) -> IndexItem {
                IndexItem::Range { start: Some(r.start.into()), end: Some(r.end.into()), inclusive: false }
            }
        }
        impl From<RangeFrom<$t>> for IndexItem {
            fn from(r: RangeFrom<$t>) -> IndexItem {
                IndexItem::Range { start: Some(r.start.into()), end: None, inclusive: false }
            }
        }
        impl From<RangeTo<$t>> for IndexItem {
            fn from(r: RangeTo<$t>) -> IndexItem {
                IndexItem::Range { start: None, end: Some(r.end.into()), inclusive: false }
            }
        }
        impl From<RangeInclusive<$t>> for IndexItem {
            fn from(r: RangeInclusive<$t>) -> IndexItem {
                let (start, end) = r.into_inner();
                IndexItem::Range { start: Some(start.into()), end: Some(end.into()), inclusive: true }
            }
        }
        impl From<RangeToInclusive<$t>> for IndexItem {
            fn from(r: RangeToInclusive<$t>) -> IndexItem {
                IndexItem::Range { start: None, end: Some(r.end.into()), inclusive: true }
            }
        }
        single_indexer!($t, Range<$t>, RangeFrom<$t>, RangeTo<$t>, RangeInclusive<$t>, RangeToInclusive<$t>);
    )*};
}

/// A single item is an index of its own. (One impl per concrete type,
/// not a blanket over `Into<IndexItem>`, so that it cannot overlap the
/// tuple impls.)
macro_rules! single_indexer {
    ($($t:ty),*) => {$(
        impl Indexer for $t {
            fn items(self) -> Vec<IndexItem> {
                vec![self.into()]
            }
        }
    )*};
}

ints_index!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
single_indexer!(RangeFull, Ellipsis, NewAxis, IndexItem);

impl From<RangeFull> for IndexItem {
    fn from(_: RangeFull) -> IndexItem {
        IndexItem::Full
    }
}

impl From<Ellipsis> for IndexItem {
    fn from(_: Ellipsis) -> IndexItem {
        IndexItem::Ellipsis
    }
}

impl From<NewAxis> for IndexItem {
    fn from(_: NewAxis) -> IndexItem {
        IndexItem::NewAxis
    }
}

macro_rules! tuple_indexer {
    ($($name:ident),+) => {
        impl<$($name: Into<IndexItem>),+> Indexer for ($($name,)+) {
            #[allow(non_snake_case)]
            fn items(self) -> Vec<IndexItem> {
                let ($($name,)+) = self;
                vec![$($name.into()),+]
            }
        }
    };
}
tuple_indexer!(A);
tuple_indexer!(A, B);
tuple_indexer!(A, B, C);
tuple_indexer!(A, B, C, D);
tuple_indexer!(A, B, C, D, E);
tuple_indexer!(A, B, C, D, E, F);
tuple_indexer!(A, B, C, D, E, F, G);
tuple_indexer!(A, B, C, D, E, F, G, H);

impl Indexer for Vec<IndexItem> {
    fn items(self) -> Vec<IndexItem> {
        self
    }
}

const OP: &str = "index";

impl Tensor {
    /// PyTorch-style indexing, as a view: `x.i((.., 1..3))` is `x[:, 1:3]`
    /// (see the [module docs](crate::indexing) for every rule).
    pub fn i(&self, index: impl Indexer) -> Result<Tensor> {
        let items = index.items();
        let ellipses = items
            .iter()
            .filter(|it| **it == IndexItem::Ellipsis)
            .count();
        if ellipses > 1 {
            return Err(Error::invalid(
                OP,
                "index",
                "an index may hold at most one Ellipsis",
            ));
        }
        // Items that consume a dim of the input.
        let consuming = items
            .iter()
            .filter(|it| !matches!(it, IndexItem::Ellipsis | IndexItem::NewAxis))
            .count();
        if consuming > self.rank() {
            return Err(Error::invalid(
                OP,
                "index",
                format!(
                    "{consuming} positions index a tensor of rank {} (shape {})",
                    self.rank(),
                    self.shape()
                ),
            ));
        }
        let mut out = self.clone();
        // `at` walks the output's dims, `source` the input's (for errors).
        let (mut at, mut source) = (0usize, 0usize);
        for item in items {
            match item {
                IndexItem::At(p) => {
                    let i = p.resolve(OP, source, self.dims()[source])?;
                    out = out.select(at as isize, i)?;
                    source += 1;
                }
                IndexItem::Range {
                    start,
                    end,
                    inclusive,
                } => {
                    let size = self.dims()[source];
                    let lo = start.map_or(0, |s| s.clamp_bound(size));
                    let hi = match end {
                        None => size,
                        Some(e) if inclusive => {
                            // Count a negative end from the back first: ..=-1
                            // keeps the last element.
                            let e = if e.get() < 0 {
                                e.get() + size as i128
                            } else {
                                e.get()
                            };
                            (e + 1).clamp(0, size as i128) as usize
                        }
                        Some(e) => e.clamp_bound(size),
                    };
                    out = out.slice(at as isize, lo, hi.max(lo), 1)?;
                    at += 1;
                    source += 1;
                }
                IndexItem::Full => {
                    at += 1;
                    source += 1;
                }
                IndexItem::Ellipsis => {
                    let whole = self.rank() - consuming;
                    at += whole;
                    source += whole;
                }
                IndexItem::NewAxis => {
                    out = out.unsqueeze(at as isize)?;
                    at += 1;
                }
            }
        }
        Ok(out)
    }
}
