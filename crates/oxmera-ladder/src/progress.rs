//! The learner's state: finished rungs and hints seen.
//!
//! It lives in `exercises/.progress.toml` (ignored by git), so a fresh
//! clone starts at A1 and a checkout carries its own progress;
//! [`PROGRESS_ENV`] points it elsewhere (tests use that).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The environment variable that overrides where progress is kept.
pub const PROGRESS_ENV: &str = "OXMERA_LADDER_PROGRESS";

/// What this learner has done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Progress {
    /// Rung ids whose spec passed, in the order they first did.
    #[serde(default)]
    pub done: Vec<String>,
    /// How many hints of each rung have been revealed.
    #[serde(default)]
    pub hints: BTreeMap<String, usize>,
    #[serde(skip)]
    path: PathBuf,
}

impl Progress {
    /// Where progress lives for the ladder in `exercises`: `$OXMERA_LADDER_PROGRESS`
    /// if set, else `exercises/.progress.toml`.
    pub fn default_path(exercises: &Path) -> PathBuf {
        match std::env::var_os(PROGRESS_ENV) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => exercises.join(".progress.toml"),
        }
    }

    /// Reads progress from `path`; a missing file is a fresh start.
    pub fn load(path: &Path) -> Result<Progress> {
        let mut progress = match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str::<Progress>(&text).map_err(|e| Error::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Progress::default(),
            Err(e) => return Err(Error::io("read", path, e)),
        };
        progress.path = path.to_path_buf();
        Ok(progress)
    }

    /// The file this progress is saved to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the state back (to a temporary file first, then renamed, so
    /// an interrupted write never leaves half a file).
    pub fn save(&self) -> Result<()> {
        let text = toml::to_string(self).map_err(|e| Error::Parse {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
        }
        let tmp = self.path.with_extension("toml.tmp");
        std::fs::write(&tmp, text).map_err(|e| Error::io("write", &tmp, e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| Error::io("rename", &self.path, e))
    }

    /// Whether a rung is finished.
    pub fn is_done(&self, id: &str) -> bool {
        self.done.iter().any(|d| d == id)
    }

    /// Marks a rung finished; returns whether it was new.
    pub fn mark_done(&mut self, id: &str) -> bool {
        if self.is_done(id) {
            return false;
        }
        self.done.push(id.to_string());
        true
    }

    /// Records that a rung is no longer finished (a red check after a
    /// green one); returns whether it was marked done.
    pub fn unmark_done(&mut self, id: &str) -> bool {
        let before = self.done.len();
        self.done.retain(|d| d != id);
        self.done.len() != before
    }

    /// Reads the file again, so that a change is made on top of what
    /// another `oxmera ladder` (a `hint` in another terminal while `watch`
    /// runs) saved meanwhile, not over it. Progress with no file (built in
    /// memory) stays as it is.
    pub fn reload(&mut self) -> Result<()> {
        if self.path.as_os_str().is_empty() {
            return Ok(());
        }
        *self = Progress::load(&self.path)?;
        Ok(())
    }

    /// How many hints of a rung have been revealed.
    pub fn hints_seen(&self, id: &str) -> usize {
        self.hints.get(id).copied().unwrap_or(0)
    }

    /// Records that `count` hints of a rung have been revealed.
    pub fn set_hints_seen(&mut self, id: &str, count: usize) {
        self.hints.insert(id.to_string(), count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_is_a_fresh_start_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/progress.toml");
        let mut p = Progress::load(&path).unwrap();
        assert!(p.done.is_empty());
        assert!(p.mark_done("A1"));
        assert!(!p.mark_done("A1"));
        assert!(p.unmark_done("A1"));
        assert!(!p.unmark_done("A1"));
        assert!(p.mark_done("A1"));
        p.set_hints_seen("A2", 2);
        p.save().unwrap();
        let q = Progress::load(&path).unwrap();
        assert_eq!(q.done, vec!["A1".to_string()]);
        assert_eq!(q.hints_seen("A2"), 2);
        assert_eq!(q.hints_seen("A3"), 0);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "done = [\"A1\"]\n\n[hints]\nA2 = 2\n"
        );
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress.toml");
        std::fs::write(&path, "done = 3").unwrap();
        let err = Progress::load(&path).unwrap_err().to_string();
        assert!(err.contains("progress.toml is not valid"), "{err}");
    }
}
