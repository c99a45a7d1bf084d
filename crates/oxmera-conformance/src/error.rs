//! What can be wrong with a corpus (as opposed to a backend).

use std::path::PathBuf;

/// A corpus file that cannot be read, parsed or understood.
///
/// These are mistakes in the corpus, reported with the file and case they
/// occur in; a backend that computes a wrong answer is not an error but a
/// failed row of the [`crate::Report`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CorpusError {
    /// A corpus file or directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },

    /// A corpus file is not valid TOML of the corpus schema.
    #[error("{file}: {message}")]
    Parse {
        /// The file's name.
        file: String,
        /// The parser's message (it names the line).
        message: String,
    },

    /// A case names something the runner does not know, or gives a value
    /// it cannot use.
    #[error("{case}: {message}")]
    Invalid {
        /// The case's id.
        case: String,
        /// What is wrong, naming the field.
        message: String,
    },
}

impl CorpusError {
    /// A problem with one case.
    pub(crate) fn invalid(case: &str, message: impl Into<String>) -> Self {
        CorpusError::Invalid {
            case: case.to_string(),
            message: message.into(),
        }
    }
}
