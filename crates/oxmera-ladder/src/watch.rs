//! Waiting for a rung's files to change, for `oxmera ladder watch`.

use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};

use crate::{Error, Result};

/// Whether a changed path should trigger a re-check: Rust sources and
/// manifests, but not build output, backups or editors' swap files.
pub fn relevant(path: &Path) -> bool {
    let in_ignored_dir = path.components().any(
        |c| matches!(c, Component::Normal(n) if n == "target" || n == ".backup" || n == ".git"),
    );
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let wanted = name.ends_with(".rs") || name == "Cargo.toml";
    wanted && !in_ignored_dir
}

/// A watcher on one rung's folder.
#[derive(Debug)]
pub struct RungWatcher {
    root: PathBuf,
    events: Receiver<notify::Result<notify::Event>>,
    // Dropping the watcher stops the events.
    _watcher: RecommendedWatcher,
}

impl RungWatcher {
    /// Watches `dir` recursively.
    pub fn new(dir: &Path) -> Result<RungWatcher> {
        let err = |e: notify::Error| Error::Watch {
            path: dir.to_path_buf(),
            message: e.to_string(),
        };
        let (tx, rx) = channel();
        let mut watcher = notify::recommended_watcher(tx).map_err(err)?;
        watcher.watch(dir, RecursiveMode::Recursive).map_err(err)?;
        Ok(RungWatcher {
            root: dir.to_path_buf(),
            events: rx,
            _watcher: watcher,
        })
    }

    /// Blocks until a relevant file changes, then gathers the burst of
    /// events an editor's save makes (they arrive within `settle` of each
    /// other) and returns the changed paths.
    pub fn next_change(&self, settle: Duration) -> Result<Vec<PathBuf>> {
        loop {
            if let Some(changed) = self.poll_change(settle, Duration::from_secs(3600))? {
                return Ok(changed);
            }
        }
    }

    /// Like [`RungWatcher::next_change`], but gives up when no relevant
    /// change starts within `wait`, returning `None`: `watch` polls this
    /// between looking for the learner's keys.
    pub fn poll_change(&self, settle: Duration, wait: Duration) -> Result<Option<Vec<PathBuf>>> {
        let mut changed: Vec<PathBuf> = Vec::new();
        let started = std::time::Instant::now();
        loop {
            let timeout = if changed.is_empty() {
                match wait.checked_sub(started.elapsed()) {
                    Some(left) => left,
                    None => return Ok(None),
                }
            } else {
                settle
            };
            let event = match self.events.recv_timeout(timeout) {
                Ok(e) => e,
                Err(RecvTimeoutError::Timeout) if changed.is_empty() => return Ok(None),
                Err(RecvTimeoutError::Timeout) => return Ok(Some(changed)),
                Err(RecvTimeoutError::Disconnected) => return Err(self.closed()),
            };
            let event = event.map_err(|e| Error::Watch {
                path: self.root.clone(),
                message: e.to_string(),
            })?;
            if event.kind.is_access() {
                continue;
            }
            for p in event.paths.into_iter().filter(|p| relevant(p)) {
                if !changed.contains(&p) {
                    changed.push(p);
                }
            }
        }
    }

    fn closed(&self) -> Error {
        Error::Watch {
            path: self.root.clone(),
            message: "the watcher stopped".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sources_trigger() {
        assert!(relevant(Path::new("/x/exercises/a1/src/lib.rs")));
        assert!(relevant(Path::new("/x/exercises/a1/Cargo.toml")));
        assert!(!relevant(Path::new("/x/exercises/a1/src/.lib.rs.swp")));
        assert!(!relevant(Path::new("/x/exercises/a1/src/lib.rs~")));
        assert!(!relevant(Path::new("/x/exercises/a1/.backup/lib.rs.1")));
        assert!(!relevant(Path::new("/x/exercises/target/debug/build/x.rs")));
    }

    #[test]
    fn sees_a_write() {
        let dir = tempfile::tempdir().unwrap();
        let w = RungWatcher::new(dir.path()).unwrap();
        let file = dir.path().join("lib.rs");
        std::fs::write(&file, "// changed").unwrap();
        let changed = w.next_change(Duration::from_millis(100)).unwrap();
        assert!(changed.iter().any(|p| p.ends_with("lib.rs")), "{changed:?}");
    }

    #[test]
    fn polling_gives_up_without_a_change_and_sees_one_with() {
        let dir = tempfile::tempdir().unwrap();
        let w = RungWatcher::new(dir.path()).unwrap();
        let settle = Duration::from_millis(100);
        // Nothing relevant happens: a swap file only.
        std::fs::write(dir.path().join(".lib.rs.swp"), "x").unwrap();
        assert_eq!(
            w.poll_change(settle, Duration::from_millis(200)).unwrap(),
            None
        );
        std::fs::write(dir.path().join("lib.rs"), "// changed").unwrap();
        // Bounded by a generous wait, not timed: it returns on the event.
        let changed = w
            .poll_change(settle, Duration::from_secs(60))
            .unwrap()
            .expect("the write is seen");
        assert!(changed.iter().any(|p| p.ends_with("lib.rs")), "{changed:?}");
    }
}
