//! Running `cargo` on a rung. Cargo is always asked for JSON messages, a
//! documented interface, so nothing here reads its or libtest's text (see
//! [`crate::testlog`]).

use std::collections::hash_map::DefaultHasher;
use std::ffi::OsString;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use crate::testlog::{CargoBuild, SpecRun};
use crate::{Error, Result};

/// How the ladder calls cargo: which binary, which target directory,
/// whether diagnostics may be coloured, and who is told what cargo writes
/// to stderr while it runs.
#[derive(Clone)]
pub struct Cargo {
    program: OsString,
    target_dir: PathBuf,
    color: bool,
    on_stderr: Option<StderrSink>,
}

/// Called with each line cargo writes to stderr, as it is written.
type StderrSink = Arc<dyn Fn(&str) + Send + Sync>;

impl std::fmt::Debug for Cargo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cargo")
            .field("program", &self.program)
            .field("target_dir", &self.target_dir)
            .field("color", &self.color)
            .field("on_stderr", &self.on_stderr.is_some())
            .finish()
    }
}

/// The target directory all rung builds of one checkout share:
/// `target/ladder` under the repository root (the folder above
/// `exercises`). One directory for every rung, the learner's checks and
/// the author's check means oxmera's own crates are compiled once, not once
/// per rung.
///
/// When `CARGO_TARGET_DIR` is set, it is `$CARGO_TARGET_DIR/ladder/<hash of
/// the exercises path>` instead: cargo tells path packages apart by their
/// path *relative to their workspace*, and decides freshness by file times,
/// so two checkouts sharing one directory could run each other's stale
/// test binaries.
pub fn target_dir_for(exercises: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let mut h = DefaultHasher::new();
            exercises.hash(&mut h);
            PathBuf::from(dir)
                .join("ladder")
                .join(format!("{:016x}", h.finish()))
        }
        _ => exercises
            .parent()
            .unwrap_or(exercises)
            .join("target")
            .join("ladder"),
    }
}

impl Cargo {
    /// Cargo from `$CARGO` (set when running under `cargo run`) or `PATH`,
    /// building into `target_dir`.
    pub fn new(target_dir: PathBuf) -> Cargo {
        let program = std::env::var_os("CARGO")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| OsString::from("cargo"));
        Cargo {
            program,
            target_dir,
            color: false,
            on_stderr: None,
        }
    }

    /// Hands each line cargo writes to stderr (`Compiling …`, `Blocking
    /// waiting for file lock …`) to `sink` while cargo runs, so that a
    /// front end can show a build's progress. The lines are still captured
    /// in the [`Output`] as before. Without a sink nothing is relayed: this
    /// crate never prints.
    pub fn on_stderr(mut self, sink: impl Fn(&str) + Send + Sync + 'static) -> Cargo {
        self.on_stderr = Some(Arc::new(sink));
        self
    }

    /// Whether compiler diagnostics come back coloured (for a terminal);
    /// cargo's own stderr, read only when it fails before compiling, never
    /// is.
    pub fn with_color(mut self, color: bool) -> Cargo {
        self.color = color;
        self
    }

    /// The cargo program this runs.
    pub fn program(&self) -> &std::ffi::OsStr {
        &self.program
    }

    /// The shared target directory.
    pub fn target_dir(&self) -> &Path {
        &self.target_dir
    }

    /// A `cargo <subcommand>` (one that builds: `test`, `clippy`) for the
    /// workspace at `manifest`, reporting in JSON messages ([`CargoBuild`]
    /// reads them), with diagnostics rendered in colour when asked for.
    pub fn command(&self, subcommand: &str, manifest: &Path) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.arg(subcommand)
            .arg("--manifest-path")
            .arg(manifest)
            .arg("--target-dir")
            .arg(&self.target_dir)
            .arg("--message-format")
            .arg(if self.color {
                "json-diagnostic-rendered-ansi"
            } else {
                "json"
            })
            .arg("--color")
            .arg("never")
            // Keep panic messages to the message itself.
            .env("RUST_BACKTRACE", "0")
            .env_remove("CARGO_TARGET_DIR")
            // Tests of the ladder run inside `cargo test`; don't let that
            // run's settings leak into the rung's build.
            .env_remove("CARGO_MAKEFLAGS")
            .env_remove("RUSTC_WORKSPACE_WRAPPER");
        cmd
    }

    /// Runs a command to completion, capturing its output; its stderr
    /// lines also go to the [`Cargo::on_stderr`] sink as they come.
    pub fn run(&self, mut cmd: Command) -> Result<Output> {
        let spawn_error = |source| Error::CargoSpawn {
            program: self.program.to_string_lossy().into_owned(),
            source,
        };
        let Some(sink) = self.on_stderr.clone() else {
            return cmd.output().map_err(spawn_error);
        };
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_error)?;
        let stderr = child.stderr.take();
        // stderr is read on a thread of its own while stdout is read here,
        // so that neither pipe fills up and stalls cargo.
        let relay = std::thread::spawn(move || {
            let mut all = Vec::new();
            let Some(stderr) = stderr else { return all };
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
                sink(String::from_utf8_lossy(&line).trim_end());
                all.append(&mut line);
            }
            all
        });
        let mut stdout = Vec::new();
        if let Some(mut out) = child.stdout.take() {
            let _ = out.read_to_end(&mut stdout);
        }
        let status = child.wait().map_err(spawn_error)?;
        let stderr = relay.join().unwrap_or_default();
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }

    /// Builds and runs the integration tests (the spec, `tests/*.rs`) of
    /// `package` in the workspace at `manifest`, with the given cargo
    /// features of the package turned on: every test, each in a process of
    /// its own.
    pub fn test_spec(&self, manifest: &Path, package: &str, features: &[&str]) -> Result<SpecRun> {
        let mut cmd = self.command("test", manifest);
        cmd.args(["--no-run", "--package", package, "--test", "*"]);
        if !features.is_empty() {
            cmd.arg("--features").arg(features.join(","));
        }
        let output = self.run(cmd)?;
        let build = CargoBuild::parse(&String::from_utf8_lossy(&output.stdout));
        if !output.status.success() || build.success == Some(false) {
            return Ok(SpecRun::BuildFailed {
                errors: build.error_text(&String::from_utf8_lossy(&output.stderr)),
            });
        }
        crate::runner::run_tests(&build.tests).map(SpecRun::Ran)
    }
}
