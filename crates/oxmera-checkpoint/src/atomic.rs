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
    publish(staged, &temp, path, &dir)
}

/// The second half of every atomic write: once `staged` says the temporary
/// file is complete and synced, rename it over `path` and sync `dir`; on
/// any error remove the temporary file (best effort: the error that
/// matters is the one that stopped us) and leave `path` untouched.
fn publish(
    staged: io::Result<()>,
    temp: &Path,
    path: &Path,
    dir: &Path,
) -> Result<(), CheckpointError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckpointError::Io { path, source }
    };
    if let Err(e) = staged {
        let _ = fs::remove_file(temp);
        return Err(io_err(temp)(e));
    }
    pause_if_asked(path);
    if let Err(e) = fs::rename(temp, path) {
        let _ = fs::remove_file(temp);
        return Err(io_err(path)(e));
    }
    sync_dir(dir).map_err(io_err(dir))
}

/// The environment variable of the kill tests' seam: `NAME:N` makes the
/// process stop for good inside its `N`-th write of a file called `NAME`
/// (1-based), with the temporary file complete and the target not yet
/// replaced, after saying so on stderr ([`PAUSED_MESSAGE`]). A test then
/// kills it there, at a point it chose rather than one a timer happened
/// to hit. Unset, as it is outside those tests, it costs one lookup.
pub const PAUSE_ENV: &str = "OXMERA_PAUSE_IN_WRITE";

/// The start of the line written to stderr when [`PAUSE_ENV`] stops a
/// write; the file's name follows.
pub const PAUSED_MESSAGE: &str = "oxmera: paused inside the write of ";

fn pause_if_asked(path: &Path) {
    static WRITES: std::sync::Mutex<Vec<(String, u64)>> = std::sync::Mutex::new(Vec::new());
    let Some(spec) = std::env::var_os(PAUSE_ENV) else {
        return;
    };
    let spec = spec.to_string_lossy();
    let Some((name, n)) = spec.rsplit_once(':') else {
        return;
    };
    let Ok(n) = n.parse::<u64>() else { return };
    let file_name = path.file_name().map(|f| f.to_string_lossy().into_owned());
    if file_name.as_deref() != Some(name) {
        return;
    }
    let count = {
        let mut writes = WRITES.lock().unwrap_or_else(|e| e.into_inner());
        match writes.iter_mut().find(|(f, _)| f == name) {
            Some((_, c)) => {
                *c += 1;
                *c
            }
            None => {
                writes.push((name.to_string(), 1));
                1
            }
        }
    };
    if count == n {
        eprintln!("{PAUSED_MESSAGE}{name} ({count})");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

/// A name no other writer (thread or process) is using: hidden, next to
/// the target, marked with the process id and a counter. A crashed
/// writer's leftovers never collide with a later one.
fn temp_name(file_name: &str) -> String {
    format!(".{file_name}.{}.{}.tmp", std::process::id(), next_temp())
}

fn next_temp() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// Writes `bytes` to `path` whole or not at all (see the module docs):
/// after a kill at any point, `path` holds the old bytes or the new ones.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    write_atomic(path, |w| w.write_all(bytes), |_| Ok(()))
}

/// Writes `path` whole or not at all when the writer insists on a path of
/// its own (an image library that opens the file itself): `produce` writes
/// a complete file at the temporary path it is given — hidden, next to
/// `path`, ending in `path`'s extension so a writer that picks its format
/// by the name picks the same one — which is then synced and renamed over
/// `path` as [`write_file_atomic`] does.
pub fn write_via_temp(
    path: &Path,
    produce: impl FnOnce(&Path) -> io::Result<()>,
) -> Result<(), CheckpointError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (Some(stem), ext) = (path.file_stem(), path.extension()) else {
        return Err(CheckpointError::NotAFilePath {
            path: path.to_path_buf(),
        });
    };
    let mut name = format!(
        ".{}.{}.{}.tmp",
        stem.to_string_lossy(),
        std::process::id(),
        next_temp()
    );
    if let Some(ext) = ext {
        name = format!("{name}.{}", ext.to_string_lossy());
    }
    let temp = dir.join(name);
    let staged = produce(&temp).and_then(|()| fs::File::open(&temp)?.sync_all());
    publish(staged, &temp, path, &dir)
}

/// Whether `name` is one of the temporary names this module makes
/// (`.NAME.PID.N.tmp`, or `.STEM.PID.N.tmp.EXT`).
fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    let core = rest.strip_suffix(".tmp").or_else(|| {
        let (before, _ext) = rest.rsplit_once('.')?;
        before.strip_suffix(".tmp")
    });
    // The last two dot-separated fields before ".tmp" are the process id
    // and the counter.
    core.and_then(|c| {
        let mut fields = c.rsplitn(3, '.');
        let n = fields.next()?;
        let pid = fields.next()?;
        fields.next()?;
        Some(!n.is_empty() && !pid.is_empty())
            .filter(|_| n.bytes().chain(pid.bytes()).all(|b| b.is_ascii_digit()))
    })
    .is_some()
}

/// Removes the temporary files that writers killed mid-write left in
/// `dir` (only names this module makes; nothing else is touched), and
/// returns how many. Call it before a run starts writing into `dir`: a
/// writer still running in it would lose its temporary file.
pub fn remove_stale_temps(dir: &Path) -> io::Result<usize> {
    let mut removed = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() && is_temp_name(&entry.file_name().to_string_lossy()) {
            fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_and_nothing_else_is() {
        assert!(is_temp_name(&temp_name("checkpoint.safetensors")));
        assert!(is_temp_name(".curves.123.4.tmp.png"));
        assert!(is_temp_name(".metrics.json.77.0.tmp"));
        for other in [
            "checkpoint.safetensors",
            ".hidden",
            ".notes.tmp",
            "a.1.2.tmp",
            ".x.pid.2.tmp",
            "curves.png",
        ] {
            assert!(!is_temp_name(other), "{other}");
        }
    }

    #[test]
    fn writes_are_whole_and_stale_temps_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("metrics.json");
        write_file_atomic(&json, b"{\"a\": 1}").unwrap();
        assert_eq!(fs::read(&json).unwrap(), b"{\"a\": 1}");
        let png = dir.path().join("curves.png");
        write_via_temp(&png, |temp| {
            assert!(temp.to_string_lossy().ends_with(".tmp.png"), "{temp:?}");
            fs::write(temp, b"png bytes")
        })
        .unwrap();
        assert_eq!(fs::read(&png).unwrap(), b"png bytes");
        // A writer that fails leaves the old file and no temporary one.
        let failed = write_via_temp(&png, |temp| {
            fs::write(temp, b"half")?;
            Err(io::Error::other("killed"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&png).unwrap(), b"png bytes");
        // What a killed writer leaves is cleaned; the outputs are kept.
        fs::write(dir.path().join(".metrics.json.999.3.tmp"), b"{").unwrap();
        fs::write(dir.path().join(".curves.999.4.tmp.png"), b"").unwrap();
        assert_eq!(remove_stale_temps(dir.path()).unwrap(), 2);
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, vec!["curves.png", "metrics.json"]);
    }
}
