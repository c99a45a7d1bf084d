//! Data for training: data sets, loaders and splits.
//!
//! A [`Dataset`] is a numbered collection of [`Sample`]s — features as
//! `f32` values filling one shape, and a [`Target`], either a class label
//! or real values. A [`DataLoader`] cuts a data set into [`Batch`]es of
//! tensors on a device, in an order that is a pure function of a seed and
//! the epoch number: the same pair always gives the same batches, so a
//! resumed run sees exactly what an uninterrupted one would have. A
//! [`split`] divides sample indices into train and test parts the same way.
//!
//! Built in, with no download: [`digits()`] (1797 8x8 handwritten digits,
//! embedded; CC BY 4.0, see `data/PROVENANCE.md`), [`shakespeare()`]
//! (eight plays, 1 MB of text, embedded; CC BY 2.5, same file) with
//! [`CharVocab`] and [`TextSplit`] for character-level models, and the procedural
//! [`spirals`] and [`moons`] (classification) and [`sine`]
//! (regression). For files a user has, [`read_idx`] and
//! [`mnist`] read the IDX format of MNIST and Fashion-MNIST, plain or
//! gzip-compressed, with typed errors for wrong, truncated or oversized
//! files.
//!
//! This crate owns host-side sample preparation. It knows tensors only as
//! the place batches go (`Tensor::from_vec` on a device), and must never
//! know about models, autograd, optimizers or any concrete backend.

mod dataset;
mod digits;
mod error;
mod idx;
mod loader;
mod random;
mod split;
mod synthetic;
mod tensor_dataset;
mod text;

pub use dataset::{Dataset, Sample, Subset, Target, TargetKind};
pub use digits::digits;
pub use error::DataError;
pub use idx::{
    IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC, IdxArray, MAX_IDX_BYTES, Mnist, mnist, read_idx,
    read_idx_pair,
};
pub use loader::{Batch, Batches, DataLoader, LoaderConfig, Order, collate};
pub use random::permutation;
pub use split::{DEFAULT_TEST_FRACTION, Split, split};
pub use synthetic::{MoonsConfig, SineConfig, SpiralsConfig, moons, sine, spirals};
pub use tensor_dataset::TensorDataset;
pub use text::{CharVocab, TextPart, TextSplit, shakespeare};
