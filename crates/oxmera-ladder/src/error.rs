//! The ladder's errors: each names what it was doing and the path or rung
//! involved.

use std::path::PathBuf;

/// The result type of the ladder's fallible functions.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong while reading or running the ladder.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No `exercises/manifest.toml` was found.
    #[error(
        "ladder: no exercises/manifest.toml found (looked in {}); run from inside an oxmera checkout or set OXMERA_EXERCISES",
        searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    ExercisesNotFound {
        /// Every directory that was tried.
        searched: Vec<PathBuf>,
    },

    /// A file could not be read or written.
    #[error("ladder: {action} {}: {source}", path.display())]
    Io {
        /// What was being done ("read", "write", "copy", …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// A TOML file did not parse or did not have the expected fields.
    #[error("ladder: {} is not valid: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's explanation (it includes line and column).
        message: String,
    },

    /// The manifest parsed but breaks one of its rules.
    #[error("ladder: manifest {}: {message}", path.display())]
    ManifestInvalid {
        /// The manifest file.
        path: PathBuf,
        /// The rule that was broken, with the offending values.
        message: String,
    },

    /// A rung id that the manifest does not list.
    #[error("ladder: no rung {given:?} (rungs: {})", known.join(", "))]
    UnknownRung {
        /// The id given.
        given: String,
        /// The ids the manifest lists.
        known: Vec<String>,
    },

    /// A rung that is listed but not built yet.
    #[error("ladder: rung {id} is planned, not built yet: {teaches}")]
    RungPlanned {
        /// The rung's id.
        id: String,
        /// What it will teach.
        teaches: String,
    },

    /// A hint number the rung does not have.
    #[error("ladder: {id} has {total} hint(s); there is no hint {number}")]
    NoSuchHint {
        /// The rung's id.
        id: String,
        /// The number asked for, from 1.
        number: usize,
        /// How many hints the rung has.
        total: usize,
    },

    /// No rung was named and there is no current one to default to.
    #[error("ladder: every built rung is done, so there is no current rung; name one (e.g. A1)")]
    NoCurrentRung,

    /// No rung was named, and the built rungs not done all need hardware
    /// this machine lacks, so none is current.
    #[error(
        "ladder: no current rung on this machine: every built rung it can run is done, and {} \
         need(s) hardware it lacks (`oxmera-learn doctor` says what); name one to run its spec anyway",
        ids.join(", ")
    )]
    NoRungThisMachineCanRun {
        /// The rungs waiting for hardware.
        ids: Vec<String>,
    },

    /// `cargo` could not be started at all.
    #[error("ladder: could not run `{program}`: {source}")]
    CargoSpawn {
        /// The program that was tried.
        program: String,
        /// Why it did not start.
        source: std::io::Error,
    },

    /// The file system watcher failed.
    #[error("ladder: watching {}: {message}", path.display())]
    Watch {
        /// The path being watched.
        path: PathBuf,
        /// The watcher's message.
        message: String,
    },
}

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
