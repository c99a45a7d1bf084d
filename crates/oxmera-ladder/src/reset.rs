//! Restoring a rung's skeleton, keeping the learner's file.

use std::path::PathBuf;

use crate::{Error, Ladder, Result};

/// What `reset` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetReport {
    /// The rung's id.
    pub id: String,
    /// The file that was restored.
    pub work: PathBuf,
    /// Where the learner's version was kept, if it differed from the
    /// skeleton.
    pub backup: Option<PathBuf>,
    /// Whether the rung was marked done before (it no longer is).
    pub was_done: bool,
}

/// Copies `skeleton/lib.rs` over `src/lib.rs`. The learner's file is first
/// kept as `.backup/lib.rs.N` in the rung's folder (N one more than the
/// last backup), so a reset can always be undone by hand.
pub fn reset(ladder: &mut Ladder, id: &str) -> Result<ResetReport> {
    let rung = ladder.manifest.built_rung(id)?.clone();
    let work = ladder.work_file(&rung);
    let skeleton_path = ladder.skeleton_file(&rung);
    let skeleton =
        std::fs::read(&skeleton_path).map_err(|e| Error::io("read", &skeleton_path, e))?;
    let current = match std::fs::read(&work) {
        Ok(c) => Some(c),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io("read", &work, e)),
    };
    let mut backup = None;
    if let Some(current) = current.filter(|c| *c != skeleton) {
        let dir = ladder.rung_dir(&rung).join(".backup");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
        let n = (1..)
            .find(|n| !dir.join(format!("lib.rs.{n}")).exists())
            .expect("an unused backup number exists");
        let path = dir.join(format!("lib.rs.{n}"));
        std::fs::write(&path, current).map_err(|e| Error::io("write", &path, e))?;
        backup = Some(path);
    }
    if let Some(dir) = work.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    }
    std::fs::write(&work, skeleton).map_err(|e| Error::io("write", &work, e))?;
    let was_done = ladder.progress.is_done(&rung.id);
    if was_done {
        ladder.progress.done.retain(|d| *d != rung.id);
        ladder.progress.save()?;
    }
    Ok(ResetReport {
        id: rung.id,
        work,
        backup,
        was_done,
    })
}
