//! TensorBoard event files: what a training loop writes so that
//! `tensorboard --logdir DIR` shows its curves live.
//!
//! This crate owns the file format and nothing else. An event file is a
//! sequence of records (TensorFlow's TFRecord framing: a little-endian
//! length, its masked CRC-32C, the payload, the payload's masked CRC-32C),
//! each payload one `Event` protocol-buffer message: the first names the
//! file version, the rest carry a `Summary` of scalar or histogram values
//! at a step. The few messages and fields needed are encoded here by hand
//! ([`proto`], on the wire encoder [`wire`], which oxmera's ONNX export
//! uses too) rather than through a protobuf code generator: the format
//! is small and documented (TensorBoard's `event.proto` and
//! `summary.proto`), and hand encoding keeps the crate free of
//! dependencies and readable end to end.
//!
//! Every event is written whole and flushed, so a run killed at any point
//! leaves a file whose records up to the last complete one load (the
//! reader in [`record`] and TensorBoard's own stop at a torn tail). A
//! resumed run opens a *new* file in the same directory and continues its
//! step numbers; TensorBoard merges the files of a directory by step.
//!
//! It must never know about tensors, modules or training: it takes tags,
//! numbers and steps. The CLI's `oxmera train --tensorboard DIR` is one
//! user; any loop can be another.
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! let mut writer = oxmera_tensorboard::SummaryWriter::create(dir.path())?;
//! for step in 0..3 {
//!     writer.add_scalar("train/loss", 1.0 / (step + 1) as f64, step)?;
//! }
//! writer.add_histogram("weights", &[0.1, -0.2, 0.3, 0.3], 2)?;
//! let events = oxmera_tensorboard::record::read_events(writer.path())?;
//! assert_eq!(events.records, 1 + 3 + 1); // the version record, then one per call
//! assert!(events.torn_tail.is_none());
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod proto;
pub mod record;
pub mod wire;
mod writer;

pub use writer::{Histogram, SummaryWriter};
