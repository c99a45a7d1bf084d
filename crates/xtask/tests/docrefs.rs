//! `xtask docrefs` on small planted trees: one broken reference of each
//! kind fails the run with its `file:line`, and a tree full of things that
//! only look like references (placeholders, output, URLs, history) passes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A miniature repository: two crates, a CLI with nested subcommands, docs.
const BASE: &[(&str, &str)] = &[
    (".gitignore", "/target\n/runs\n"),
    ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
    (
        "crates/oxmera-core/Cargo.toml",
        "[package]\nname = \"oxmera-core\"\n",
    ),
    (
        "crates/oxmera-core/src/lib.rs",
        "//! The core. See docs/guide.md and `oxmera kernel list`.\n\npub fn f() {}\n",
    ),
    (
        "crates/oxmera-cli/Cargo.toml",
        "[package]\nname = \"oxmera-cli\"\n\n[[bin]]\nname = \"oxmera\"\npath = \"src/main.rs\"\n",
    ),
    (
        "crates/oxmera-cli/src/main.rs",
        r#"//! The CLI.
use clap::{Parser, Subcommand};
mod kernel;
mod train;

#[derive(Debug, Parser)]
#[command(name = "oxmera")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train.
    Train(train::TrainArgs),
    /// Kernels.
    Kernel(kernel::KernelArgs),
}

fn main() {
    // A label the program prints, which the docs may quote.
    println!("oxmera-unfused");
}
"#,
    ),
    (
        "crates/oxmera-cli/src/kernel.rs",
        r#"#[derive(Debug, clap::Args)]
pub struct KernelArgs {
    #[command(subcommand)]
    command: KernelCommand,
}

#[derive(Debug, clap::Subcommand)]
enum KernelCommand {
    /// List them.
    List,
    /// Check one.
    Check {
        /// The file.
        file: String,
    },
}
"#,
    ),
    (
        "crates/oxmera-cli/src/train.rs",
        "#[derive(Debug, clap::Args)]\npub struct TrainArgs {\n    #[arg(long)]\n    out: String,\n}\n",
    ),
    (
        "docs/guide.md",
        "# Guide\n\nBack to the [readme](../README.md).\n",
    ),
    (
        "README.md",
        r#"# Example

Read [the guide](docs/guide.md#top) and docs/guide.md, ARCHITECTURE-free.
The core is `oxmera-core` (`oxmera_core::f`), in crates/oxmera-core/src/lib.rs;
the bench prints `oxmera-unfused`. Design notes: ../shared/DESIGN.md.
See https://example.com/docs/missing.md and <https://example.com/crates/x>.
A new op goes in `crates/oxmera-core/src/<family>.rs`; the docs are docs/*.md.
`cargo test -p oxmera-core`, `cargo run -p oxmera-cli -- kernel check FILE.rs`,
`oxmera kernel check FILE.rs`, `target/debug/oxmera train --out DIR`, and
`-p PACKAGE`, `oxmera SUBCOMMAND`, `mkdir -p build`.
A wrapped span: `oxmera
kernel list`. A wrapped path: `crates/oxmera-core/
src/lib.rs`.
A line the rules misread, opted out: docs/gone.md <!-- docrefs: ignore-line -->

```text
$ oxmera train --out runs/mnist
oxmera says: wrote runs/mnist/metrics.json and DIR/curves.png
```

```sh
cargo build \
  -p oxmera-cli
```

```rust
let x = 1; // oxmera frobnicate, in Rust, is not a command
```
"#,
    ),
    (
        "CHANGELOG.md",
        "# Changelog\n\n- Removed `oxmera-old` and docs/old.md; `oxmera bench` is now `oxmera-bench`.\n- [guide](docs/guide.md)\n",
    ),
];

/// Writes BASE plus `extra` (later entries replace earlier ones) into a fresh directory.
fn tree(name: &str, extra: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-docrefs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in BASE.iter().chain(extra) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn run(root: &Path) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["docrefs", root.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(root).unwrap();
    out
}

/// Plants `doc` at `path`, and asserts the run fails naming each of `expect`.
fn fails_with(name: &str, path: &str, doc: &str, expect: &[&str]) {
    let out = run(&tree(name, &[(path, doc)]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for e in expect {
        assert!(stderr.contains(e), "expected {e:?} in:\n{stderr}");
    }
    let findings = stderr.lines().filter(|l| l.contains(": `")).count();
    assert_eq!(
        findings,
        expect.len(),
        "one finding per planted reference:\n{stderr}"
    );
}

#[test]
fn a_clean_tree_passes() {
    let out = run(&tree("clean", &[]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("docrefs ok: 5 docs"), "{stdout}");
}

#[test]
fn a_missing_file_fails() {
    fails_with(
        "file",
        "docs/bad.md",
        "# Bad\n\nThe code is in `crates/oxmera-core/src/gone.rs`,\nthe notes [here](notes.md).\n",
        &[
            "docs/bad.md:3: `crates/oxmera-core/src/gone.rs`",
            "docs/bad.md:4: `notes.md`: link target",
        ],
    );
}

#[test]
fn a_missing_file_in_a_crate_doc_fails() {
    fails_with(
        "rustdoc",
        "crates/oxmera-core/src/lib.rs",
        "//! The core.\n//!\n//! Its rules: docs/rules.md, and DESIGN.md.\n\npub fn f() {}\n",
        &[
            "crates/oxmera-core/src/lib.rs:3: `docs/rules.md`",
            "crates/oxmera-core/src/lib.rs:3: `DESIGN.md`",
        ],
    );
}

#[test]
fn an_unknown_crate_fails() {
    fails_with(
        "crate",
        "docs/bad.md",
        "The kernels live in `oxmera-kernel`.\n",
        &["docs/bad.md:1: `oxmera-kernel`: no Cargo.toml"],
    );
}

#[test]
fn an_unknown_package_fails() {
    fails_with(
        "package",
        "docs/bad.md",
        "# Bench\n\n```sh\nRAYON_NUM_THREADS=2 cargo run --release \\\n    -p widgets -- --quick\n```\n",
        &["docs/bad.md:4: `-p widgets`"],
    );
}

#[test]
fn an_unknown_subcommand_fails_at_every_level() {
    fails_with(
        "subcommand",
        "docs/bad.md",
        "Run `oxmera bench`.\n\n```text\n$ oxmera kernel frobnicate x.rs\nok\n```\n\n`cargo run -p oxmera-cli -- tour`\n",
        &[
            "docs/bad.md:1: `oxmera bench`: the CLI declares no such subcommand (it has: help, kernel, train",
            "docs/bad.md:4: `oxmera kernel frobnicate`: the CLI declares no such subcommand (it has: check, help, list",
            "docs/bad.md:8: `oxmera tour`",
        ],
    );
}

#[test]
fn a_cli_the_reader_cannot_follow_is_an_error_not_a_pass() {
    let out = run(&tree(
        "unreadable",
        &[("crates/oxmera-cli/src/main.rs", "fn main() {}\n")],
    ));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Parser"));
}
