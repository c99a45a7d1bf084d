//! The vocabulary every other oxmera crate speaks.
//!
//! A tensor is, at bottom, a flat run of numbers plus a rule for finding
//! element `[i, j, k]` in it. This crate owns that rule and the words around
//! it: the element type ([`DType`]), the extent of each dimension
//! ([`Shape`]), the step between neighbours along each dimension
//! ([`Strides`]), and the pair of them with a starting offset ([`Layout`]).
//! Every view operation — permute, narrow, slice with a step, broadcast,
//! squeeze, reshape-without-copy — is arithmetic on a [`Layout`] and never
//! touches data, so it lives here, where it can be tested in isolation.
//!
//! It also owns [`broadcast_shapes`], the total function that decides
//! whether two shapes can meet in an elementwise op, the [`Device`] value
//! that names where data lives, the [`Scalar`] a program's number
//! becomes before it meets a tensor, and the [`Error`] taxonomy that every
//! fallible public function in oxmera returns, and the definition of the
//! random bits ([`philox4x32_10`]) that every device's generator reproduces.
//!
//! What it must never know about: tensors, storage, backends, autograd. It
//! depends on no other oxmera crate, and CI checks that mechanically.
//!
//! ```
//! use oxmera_core::{Layout, Shape};
//!
//! let layout = Layout::contiguous(Shape::from([2, 3]));
//! assert_eq!(layout.strides().as_slice(), &[3, 1]);
//! let t = layout.transpose("t", 0, 1)?;
//! assert_eq!(t.strides().as_slice(), &[1, 3]);
//! assert!(!t.is_contiguous());
//! assert_eq!(t.offset_of("index", &[2, 1])?, 5);
//! # Ok::<(), oxmera_core::Error>(())
//! ```

mod broadcast;
mod device;
mod dtype;
mod error;
mod layout;
pub mod memory;
mod philox;
mod position;
mod scalar;
mod shape;

pub use broadcast::{broadcast_shapes, broadcast_shapes_all};
pub use device::{CustomDevice, Device};
pub use dtype::DType;
pub use error::{Error, Result, StateDictProblem};
pub use layout::{Layout, OffsetIter, Strides};
pub use philox::{philox4x32_10, unit_f64};
pub use position::Position;
pub use scalar::Scalar;
pub use shape::{MAX_NUMEL, Shape, normalize_dim, normalize_dims};
