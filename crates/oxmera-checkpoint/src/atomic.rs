//! Atomic file replacement: the target holds either the old bytes or the
//! new ones, whenever the process or the machine stops.
//!
//! The recipe: write the new bytes to a fresh temporary file in the same
//! directory (a rename is atomic only within one file system), flush them
//! to the disk (`fsync`), rename the temporary file over the target, then
//! flush the directory so the rename itself survives a power cut. Until
//! the rename, the target is untouched; after it, the new bytes are
//! already durable.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::CheckpointError;

/// Writes `path` atomically: `write` fills the temporary file, and
/// `before_rename` runs once it is complete and synced, just before the
/// rename (a seam for tests to stop there; production passes a no-op).
/// On any error the temporary file is removed and the target is untouched.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> Result<(), CheckpointError> {
    let file_name = path
        .file_name()
        .ok_or_else(|| CheckpointError::NotAFilePath {
            path: path.to_path_buf(),
        })?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let temp = dir.join(temp_name(file_name.to_string_lossy().as_ref()));
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckpointError::Io { path, source }
    };

    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(io_err(&temp))?;
    let staged = (|| {
        let mut writer = io::BufWriter::new(&mut file);
        write(&mut writer)?;
        writer.flush()?;
        drop(writer);
        file.sync_all()?;
        drop(file);
        before_rename(&temp)
    })();
    if let Err(e) = staged {
        // Best effort: the error that matters is the one that stopped us.
        let _ = fs::remove_file(&temp);
        return Err(io_err(&temp)(e));
    }
    if let Err(e) = fs::rename(&temp, path) {
        let _ = fs::remove_file(&temp);
        return Err(io_err(path)(e));
    }
    sync_dir(&dir).map_err(io_err(&dir))
}

/// A name no other writer (thread or process) is using: hidden, next to
/// the target, marked with the process id and a counter. A crashed
/// writer's leftovers never collide with a later one.
fn temp_name(file_name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{file_name}.{}.{n}.tmp", std::process::id())
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    // Windows cannot open a directory as a file to flush it; its rename
    // (MoveFileEx with replace) is the best available there.
    Ok(())
}
