//! What git ignores, as far as the docs check needs to know.
//!
//! Ignored paths are build and run output (`target/`, `runs/`, a rung's
//! `.backup/`): the walk does not read docs there, and a doc naming such a
//! path names something a command creates, not something the repository
//! holds, so it is not checked. Only the `.gitignore` forms this repository
//! uses are understood: a name or a `*` pattern for one path component,
//! anchored with a leading `/` or not, a trailing `/` for directories.
//! Patterns with an inner `/`, `**` or `!` are skipped (never ignoring
//! more than git would, so they can only make the check stricter).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One understood `.gitignore` line.
#[derive(Debug, Clone)]
struct Pattern {
    glob: String,
    anchored: bool,
    dir_only: bool,
}

/// The `.gitignore` files of a tree, read on first need.
#[derive(Debug)]
pub struct Ignores {
    root: PathBuf,
    cache: RefCell<HashMap<PathBuf, Vec<Pattern>>>,
}

impl Ignores {
    /// Ignore rules for the tree at `root`.
    pub fn new(root: &Path) -> Self {
        Ignores {
            root: root.to_path_buf(),
            cache: RefCell::new(HashMap::new()),
        }
    }

    /// Whether git ignores `rel` (relative to the root); `is_dir` says
    /// whether its last component is a directory.
    pub fn ignored(&self, rel: &Path, is_dir: bool) -> bool {
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        for (i, name) in parts.iter().enumerate() {
            if name == ".git" {
                return true;
            }
            let names_dir = i + 1 < parts.len() || is_dir;
            // Every directory from the root down to this component's own
            // may hold a .gitignore that reaches it.
            for depth in 0..=i {
                let dir: PathBuf = parts[..depth].iter().collect();
                for p in self.patterns(&dir).iter() {
                    if p.anchored && depth != i {
                        continue;
                    }
                    if p.dir_only && !names_dir {
                        continue;
                    }
                    if glob(&p.glob, name) {
                        return true;
                    }
                }
            }
        }
        false
    }

    fn patterns(&self, dir: &Path) -> Vec<Pattern> {
        if let Some(p) = self.cache.borrow().get(dir) {
            return p.clone();
        }
        let text =
            std::fs::read_to_string(self.root.join(dir).join(".gitignore")).unwrap_or_default();
        let patterns: Vec<Pattern> = text.lines().filter_map(parse).collect();
        self.cache
            .borrow_mut()
            .insert(dir.to_path_buf(), patterns.clone());
        patterns
    }
}

fn parse(line: &str) -> Option<Pattern> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') || line.starts_with('!') || line.contains("**") {
        return None;
    }
    let anchored = line.starts_with('/');
    let dir_only = line.ends_with('/');
    let glob = line.trim_start_matches('/').trim_end_matches('/');
    if glob.is_empty() || glob.contains('/') {
        return None;
    }
    Some(Pattern {
        glob: glob.to_string(),
        anchored,
        dir_only,
    })
}

/// A `*`-only glob against one path component.
fn glob(pattern: &str, name: &str) -> bool {
    let pieces: Vec<&str> = pattern.split('*').collect();
    if pieces.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("target-*", "target-x"));
        assert!(glob("*.log", "a.log"));
        assert!(!glob("*.log", "a.logx"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "ac"));
    }

    #[test]
    fn anchored_nested_and_dir_only() {
        let dir = std::env::temp_dir().join(format!("xtask-ignore-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join(".gitignore"), "/target\n*.log\n").unwrap();
        std::fs::write(dir.join("sub/.gitignore"), "/out\n.backup/\n").unwrap();
        let ig = Ignores::new(&dir);
        assert!(ig.ignored(Path::new("target/debug/x"), false));
        assert!(!ig.ignored(Path::new("sub/target/x"), false));
        assert!(ig.ignored(Path::new("sub/a.log"), false));
        assert!(ig.ignored(Path::new("sub/out"), true));
        assert!(!ig.ignored(Path::new("out"), true));
        assert!(ig.ignored(Path::new("sub/x/.backup/lib.rs.1"), false));
        assert!(!ig.ignored(Path::new("sub/.backup"), false));
        assert!(ig.ignored(Path::new(".git/config"), false));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
