//! The exercise ladder: the machinery behind `oxmera ladder`.
//!
//! A learner climbs rungs. Each rung is a small cargo crate under
//! `exercises/` with a skeleton (`src/lib.rs`, whose bodies are `todo!()`),
//! a spec (`tests/`), hints, and a solution that delegates to oxmera's own
//! crates. This crate owns everything around those folders:
//!
//! - [`Manifest`]: the climbing order, tiers and what each rung needs, read
//!   from `exercises/manifest.toml`;
//! - [`Progress`]: which rungs this learner has finished and how many hints
//!   they have seen, kept in a small TOML state file;
//! - [`Ladder`]: the two together, answering "what is done, what is
//!   current, what comes next";
//! - [`check`]: building and running a rung's spec against the learner's
//!   code, each test in a process of its own and judged by its exit
//!   status, with the failures made into readable records ([`testlog`]
//!   says why no libtest report is read);
//! - [`hints`], [`reset`] and [`watch`]: the rest of the learner's loop;
//! - [`verify`]: the author's check, that every skeleton fails its spec,
//!   every solution passes it, and every named wrong solution fails it.
//!
//! What it must never know about: tensors or backends. A rung's spec and
//! solution may use any oxmera crate, but the ladder only runs `cargo` on
//! them and reads what comes back, so it can check a rung about GPU kernels
//! as easily as one about strides. Rendering is the CLI's business: every
//! function here returns data, never prints.
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use oxmera_ladder::{Ladder, Manifest, Progress, RungState};
//!
//! let manifest = Manifest::parse(Path::new("manifest.toml"), r#"
//!     [[tier]]
//!     id = "A"
//!     name = "Rust and the CPU"
//!     cost = "$0"
//!
//!     [[rung]]
//!     id = "A1"
//!     name = "shape and strides"
//!     tier = "A"
//!     status = "built"
//!     teaches = "strides"
//!     cost = "$0"
//!     path = "a1-shape-strides"
//! "#)?;
//! let ladder = Ladder::from_parts(PathBuf::from("/repo/exercises"), manifest, Progress::default());
//! assert_eq!(ladder.state("A1"), Some(RungState::Current));
//! assert_eq!(
//!     ladder.show(&ladder.work_file(ladder.current().unwrap())),
//!     Path::new("exercises/a1-shape-strides/src/lib.rs")
//! );
//! # Ok::<(), oxmera_ladder::Error>(())
//! ```

mod cargo;
pub mod check;
mod error;
pub mod hints;
mod ladder;
mod manifest;
mod progress;
pub mod reset;
mod runner;
pub mod testlog;
pub mod verify;
pub mod watch;

pub use cargo::{Cargo, target_dir_for};
pub use error::{Error, Result};
pub use ladder::{Ladder, NextStep, RungState, find_exercises};
pub use manifest::{Manifest, Need, Rung, RungStatus, Tier};
pub use progress::{PROGRESS_ENV, Progress};
