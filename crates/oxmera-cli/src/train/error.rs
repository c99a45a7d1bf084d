//! [`TrainError`]: why `oxmera train`, `eval` or `export` stopped. Its own
//! module, so that the loop, the data and the outputs can all name it
//! without depending on one another.

use std::path::PathBuf;

use oxmera_checkpoint::CheckpointError;
use oxmera_data::DataError;

/// Why training stopped early.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// The arguments do not make sense together.
    #[error("{0}")]
    Usage(String),
    /// The loss became NaN or infinite; the message names the step.
    #[error("{0}")]
    Diverged(String),
    /// Loading or batching the data failed.
    #[error(transparent)]
    Data(#[from] DataError),
    /// Saving or loading a checkpoint failed.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// A tensor operation failed.
    #[error(transparent)]
    Tensor(#[from] oxmera::Error),
    /// Writing an output file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}
