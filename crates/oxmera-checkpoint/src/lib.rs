//! Checkpoints: state dicts saved and loaded as safetensors.
//!
//! A checkpoint is a map from names to tensors plus a map from keys to
//! strings, stored in the [safetensors] format — a length, a JSON header,
//! raw little-endian bytes — so oxmera's weights load in PyTorch
//! (`safetensors.torch.load_file`) and candle, and theirs load here. All
//! eight oxmera dtypes map to their safetensors namesakes (`F16`, `BF16`,
//! `F32`, `F64`, `I32`, `I64`, `U8`, `BOOL`) and back, bit for bit.
//!
//! Two promises make it safe to rely on:
//!
//! - **Writes are atomic** ([`save`]): a temporary file in the same
//!   directory, `fsync`, rename over the target, `fsync` of the directory.
//!   A crash at any point leaves the previous checkpoint loadable.
//! - **Reads are defensive** ([`load`]): the header length is checked
//!   against the file size before the header is read, and every tensor's
//!   dtype, shape and byte range against the bytes present before any
//!   tensor is built. A truncated, corrupted or hostile file is a
//!   [`CheckpointError`] naming the tensor at fault — never a panic, never
//!   an allocation of a size the file merely claims.
//!
//! # Naming convention
//!
//! This crate does not know what a model or an optimizer is; a training
//! loop composes one flat checkpoint from its parts with name prefixes
//! ([`prefixed`], [`Checkpoint::with_prefix`]) and metadata:
//!
//! | entry | holds |
//! |---|---|
//! | `model.<param>` | a model parameter or buffer, e.g. `model.0.weight` |
//! | `optim.<param>.<slot>` | optimizer state, e.g. `optim.0.weight.exp_avg` |
//! | metadata `step` | the number of optimizer steps taken |
//! | metadata `epoch` | the number of epochs completed |
//! | metadata `rng_seed`, `rng_offset` | the [`oxmera_tensor::Generator`] state ([`rng_metadata`]) |
//!
//! Metadata values are strings (the format allows nothing else); numbers
//! are written in decimal and read back with [`Checkpoint::metadata_value`].
//!
//! What this crate must never know about: layers, optimizers, autograd or
//! any concrete backend. It sees only tensors, names and strings.
//!
//! [safetensors]: https://github.com/huggingface/safetensors

mod atomic;
mod checkpoint;
mod codec;
mod error;
mod header;
mod json;

pub use atomic::{
    PAUSE_ENV, PAUSED_MESSAGE, remove_stale_temps, write_file_atomic, write_via_temp,
};
pub use checkpoint::{Checkpoint, check_tensor, load, prefixed, rng_metadata, save, to_bytes};
pub use codec::{from_header_name, to_safetensors};
pub use error::CheckpointError;
pub use header::{MAX_HEADER_LEN, MAX_METADATA_KEYS, METADATA_KEY};

/// The name prefix of model parameters in a training checkpoint.
pub const MODEL_PREFIX: &str = "model.";
/// The name prefix of optimizer state in a training checkpoint.
pub const OPTIM_PREFIX: &str = "optim.";
/// The metadata key of the optimizer step count.
pub const STEP_KEY: &str = "step";
/// The metadata key of the completed epoch count.
pub const EPOCH_KEY: &str = "epoch";
/// The metadata key of the random generator's seed.
pub const RNG_SEED_KEY: &str = "rng_seed";
/// The metadata key of the random generator's offset.
pub const RNG_OFFSET_KEY: &str = "rng_offset";
