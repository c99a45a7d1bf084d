//! What the ladder's end-to-end tests share: a one-rung fixture ladder
//! (rung F1, `double`) and the environment variables cargo needs when a
//! test starts `oxmera` with an otherwise empty environment.

#![allow(dead_code)] // each test file uses its own part of this

use std::path::{Path, PathBuf};

/// The fixture rung's skeleton: it compiles and fails its spec.
pub const SKELETON: &str = "//! Fixture rung.\n\n/// Doubles `x`.\npub fn double(x: u32) -> u32 {\n    todo!(\"F1: double({x})\")\n}\n";

/// The variables that locate the toolchain this test runs under.
pub const TOOLCHAIN: [&str; 6] = [
    "PATH",
    "HOME",
    "CARGO",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
];

/// Writes `text` to `path`, making its directories.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A one-rung ladder whose `src/lib.rs` is `lib`, in `repo`; returns its
/// `exercises` directory.
pub fn fixture(repo: &Path, lib: &str) -> PathBuf {
    let ex = repo.join("exercises");
    write(
        &ex.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"f1\"]\n",
    );
    write(
        &ex.join("manifest.toml"),
        "[[tier]]\nid = \"F\"\nname = \"fixture\"\ncost = \"$0\"\n\n[[rung]]\nid = \"F1\"\nname = \"double\"\ntier = \"F\"\nstatus = \"built\"\nteaches = \"doubling\"\ncost = \"$0\"\npath = \"f1\"\n",
    );
    write(
        &ex.join("f1/Cargo.toml"),
        "[package]\nname = \"ladder-f1\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[lib]\nname = \"f1\"\n",
    );
    write(&ex.join("f1/src/lib.rs"), lib);
    write(
        &ex.join("f1/tests/spec.rs"),
        "#[test]\nfn two_doubled_is_four() {\n    assert_eq!(f1::double(2), 4);\n}\n",
    );
    ex
}
