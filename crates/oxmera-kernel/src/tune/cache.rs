//! The per-device cache of tuned configurations.
//!
//! A tuned configuration is a fact about one device, one kernel and one
//! compiler, so an entry is keyed by all three ([`CacheKey`]): the
//! device's identity (a GPU adapter's name, backend and driver; for CUDA
//! the part, its compute capability and the driver), a hash of the
//! kernel's IR ([`ir_hash`]: any change to the kernel's code changes it),
//! and the oxmera version (which decides the code the emitters write). A
//! lookup needs all three to match, so an entry never transfers between
//! parts: the best tile is a product of one part's shared memory, register
//! file, warp scheduler and cache sizes, and of one driver's compiler — a
//! tile tuned on a laptop GPU can be slower, or refused, on a datacenter
//! one.
//!
//! The file is plain text, one entry a line, tab-separated, under a
//! versioned header; it is rewritten whole through a temporary file and a
//! rename, so a crash never leaves half an entry. A file that does not
//! parse is a [`CacheError::Corrupt`] naming the line — callers warn and
//! go on without the cache; it is never a crash.
//!
//! Tiles change the order of reductions (a matmul sums `k` one tile at a
//! time), so a tuned configuration can change a result's low bits; every
//! configuration the tuner keeps has passed validation within the
//! conformance tolerance, and `OXMERA_TUNE_CACHE=off` (or the CLI's
//! `--no-cache`) turns the cache off for bit-reproducible runs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::ir::{Dim3, Kernel};
use crate::space::Config;

const HEADER: &str = "oxmera-tune-cache 1";

/// The oxmera version an entry was tuned with.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What an entry is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    /// The device's identity, e.g. `wgpu: llvmpipe (LLVM 19.1.7, 256 bits);
    /// Vulkan; llvmpipe Mesa 25.0.7`.
    pub device: String,
    /// The kernel's name.
    pub kernel: String,
    /// [`ir_hash`] of the kernel, as 16 hex digits.
    pub ir_hash: String,
    /// The oxmera version.
    pub version: String,
}

impl CacheKey {
    /// The key of `k` on `device` for this oxmera version.
    pub fn new(device: &str, k: &Kernel) -> CacheKey {
        CacheKey {
            device: clean(device),
            kernel: k.name.clone(),
            ir_hash: format!("{:016x}", ir_hash(k)),
            version: VERSION.to_string(),
        }
    }
}

/// One tuned configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    /// What it is for.
    pub key: CacheKey,
    /// The best safe configuration.
    pub config: Config,
    /// How it was measured, in words (`median 1.234 ms`, `4448 model units`).
    pub measure: String,
}

/// Why the cache could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    /// The file could not be read or written.
    #[error("tuning cache {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        message: String,
    },
    /// The file is not a tuning cache, or a line does not parse.
    #[error("tuning cache {path} is corrupt at line {line}: {why}")]
    Corrupt {
        /// The file.
        path: String,
        /// The 1-based line.
        line: usize,
        /// What is wrong there.
        why: String,
    },
}

/// The cache's entries.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TuneCache {
    /// Every entry, one per key.
    pub entries: Vec<CacheEntry>,
}

/// FNV-1a over the kernel's printed IR: stable across runs and machines
/// (unlike the standard hasher, which promises neither), and changed by
/// any change to the kernel's code, its constants' defaults or its shared
/// arrays.
pub fn ir_hash(k: &Kernel) -> u64 {
    let text = crate::pretty::print(k);
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Set by [`disable`].
static DISABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns the cache off for the rest of this process, whatever
/// `OXMERA_TUNE_CACHE` says: [`default_path`] is `None` from then on. What
/// a test harness calls before opening a device, so that the user's cache
/// never decides the launches its tests check (setting the variable from
/// a running test would race the threads reading the environment).
pub fn disable() {
    DISABLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Where the cache lives: `OXMERA_TUNE_CACHE` (a path; `off` disables it),
/// else `$XDG_CACHE_HOME/oxmera/tune-cache.txt`, else
/// `~/.cache/oxmera/tune-cache.txt`; `None` when disabled (by the variable
/// or by [`disable`]) or no home.
pub fn default_path() -> Option<PathBuf> {
    if DISABLED.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    match std::env::var("OXMERA_TUNE_CACHE") {
        Ok(v) if v == "off" || v == "0" => return None,
        Ok(v) if !v.is_empty() => return Some(PathBuf::from(v)),
        _ => {}
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("oxmera").join("tune-cache.txt"))
}

/// Tabs and newlines would split a field: they become spaces.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn list<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

impl TuneCache {
    /// Reads the cache at `path`; a missing file is an empty cache.
    pub fn load(path: &Path) -> Result<TuneCache, CacheError> {
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TuneCache::default()),
            Err(e) => {
                return Err(CacheError::Io {
                    path: shown,
                    message: e.to_string(),
                });
            }
        };
        Self::parse(&text, &shown)
    }

    /// Parses a cache's text (`path` names it in errors).
    pub fn parse(text: &str, path: &str) -> Result<TuneCache, CacheError> {
        let corrupt = |line: usize, why: String| CacheError::Corrupt {
            path: path.to_string(),
            line,
            why,
        };
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, h)) if h == HEADER => {}
            _ => return Err(corrupt(1, format!("the first line is not `{HEADER}`"))),
        }
        let mut cache = TuneCache::default();
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            let [device, kernel, hash, version, block, specs, measure] = f[..] else {
                return Err(corrupt(i + 1, format!("{} fields, 7 expected", f.len())));
            };
            let nums = |s: &str| -> Result<Vec<i64>, CacheError> {
                if s.is_empty() {
                    return Ok(Vec::new());
                }
                s.split(',')
                    .map(|x| {
                        x.parse::<i64>()
                            .map_err(|_| corrupt(i + 1, format!("`{x}` is not a number")))
                    })
                    .collect()
            };
            let b = nums(block)?;
            let block = match b[..] {
                [x, y, z] if [x, y, z].iter().all(|v| (1..=u32::MAX as i64).contains(v)) => {
                    Dim3::new(x as u32, y as u32, z as u32)
                }
                _ => return Err(corrupt(i + 1, format!("`{block}` is not a block x,y,z"))),
            };
            if hash.len() != 16 || !hash.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(corrupt(i + 1, format!("`{hash}` is not an IR hash")));
            }
            cache.entries.push(CacheEntry {
                key: CacheKey {
                    device: device.to_string(),
                    kernel: kernel.to_string(),
                    ir_hash: hash.to_string(),
                    version: version.to_string(),
                },
                config: Config {
                    block,
                    specs: nums(specs)?,
                },
                measure: measure.to_string(),
            });
        }
        Ok(cache)
    }

    /// The configuration tuned for exactly `key`, if any.
    pub fn lookup(&self, key: &CacheKey) -> Option<&CacheEntry> {
        self.entries.iter().find(|e| e.key == *key)
    }

    /// Records `config` for `key`, replacing what was there.
    pub fn insert(&mut self, key: CacheKey, config: Config, measure: &str) {
        self.entries.retain(|e| e.key != key);
        self.entries.push(CacheEntry {
            key,
            config,
            measure: clean(measure),
        });
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut out = format!("{HEADER}\n");
        for e in &self.entries {
            let b = e.config.block;
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}\t{},{},{}\t{}\t{}",
                e.key.device,
                e.key.kernel,
                e.key.ir_hash,
                e.key.version,
                b.x,
                b.y,
                b.z,
                list(&e.config.specs),
                e.measure
            );
        }
        out
    }

    /// Writes the cache to `path` through a temporary file and a rename.
    pub fn save(&self, path: &Path) -> Result<(), CacheError> {
        let io = |e: std::io::Error| CacheError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, self.to_text()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// The configuration the cache at [`default_path`] holds for `k` on
/// `device`, for a backend choosing its launch: `None` when the cache is
/// off, empty for this key, or unreadable — a corrupt cache is reported on
/// stderr once per call and otherwise ignored, never a crash. The backend
/// then uses its documented default.
pub fn tuned(device: &str, k: &Kernel) -> Option<Config> {
    let path = default_path()?;
    match TuneCache::load(&path) {
        Ok(c) => c
            .lookup(&CacheKey::new(device, k))
            .map(|e| e.config.clone()),
        Err(e) => {
            eprintln!(
                "warning: {e}; ignoring it (delete the file, or run `oxmera kernel tune --all` to rewrite it)"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(device: &str) -> CacheKey {
        CacheKey::new(device, crate::library::matmul_tiled())
    }

    fn config(tile: u32) -> Config {
        Config {
            block: Dim3::new(tile, tile, 1),
            specs: vec![tile as i64],
        }
    }

    #[test]
    fn entries_round_trip_and_stay_with_their_device() {
        let mut c = TuneCache::default();
        c.insert(key("gpu A; Vulkan; driver 1"), config(8), "median 1 ms");
        c.insert(key("gpu B; Vulkan; driver 1"), config(32), "median 2 ms");
        c.insert(key("gpu A; Vulkan; driver 1"), config(16), "median\t0.9 ms");
        let back = TuneCache::parse(&c.to_text(), "t").unwrap();
        assert_eq!(back, c);
        assert_eq!(
            back.lookup(&key("gpu A; Vulkan; driver 1")).unwrap().config,
            config(16)
        );
        // Another identity — even the same GPU on another driver — misses.
        assert!(back.lookup(&key("gpu A; Vulkan; driver 2")).is_none());
        let mut other_version = key("gpu B; Vulkan; driver 1");
        other_version.version = "0.0.0-other".into();
        assert!(back.lookup(&other_version).is_none());
    }

    #[test]
    fn the_ir_hash_is_stable_and_tells_kernels_apart() {
        let (a, b) = (crate::library::matmul_tiled(), crate::library::flip());
        assert_eq!(ir_hash(a), ir_hash(a));
        assert_ne!(ir_hash(a), ir_hash(b));
    }

    #[test]
    fn a_corrupt_cache_is_a_typed_error_naming_the_line() {
        let good = {
            let mut c = TuneCache::default();
            c.insert(key("gpu"), config(8), "m");
            c.to_text()
        };
        for (text, line) in [
            ("not a cache\n".to_string(), 1),
            (format!("{good}half\tan entry\n"), 3),
            (good.replace("8,8,1", "8,x,1"), 2),
            (good.replace("8,8,1", "0,8,1"), 2),
        ] {
            match TuneCache::parse(&text, "cache.txt") {
                Err(CacheError::Corrupt { line: l, .. }) => assert_eq!(l, line, "{text}"),
                other => panic!("{other:?} for {text:?}"),
            }
        }
    }

    #[test]
    fn a_missing_file_is_empty_and_a_save_is_read_back() {
        let dir = std::env::temp_dir().join(format!("oxmera-tune-cache-{}", std::process::id()));
        let path = dir.join("cache.txt");
        assert_eq!(TuneCache::load(&path).unwrap(), TuneCache::default());
        let mut c = TuneCache::default();
        c.insert(key("gpu"), config(4), "m");
        c.save(&path).unwrap();
        assert_eq!(TuneCache::load(&path).unwrap(), c);
        std::fs::write(&path, "garbage").unwrap();
        assert!(matches!(
            TuneCache::load(&path),
            Err(CacheError::Corrupt { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
