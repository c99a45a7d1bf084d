//! The learner's front end: `ladder` and `doctor`, shared by two binaries.
//!
//! `oxmera-learn` (this crate's binary) is what a learner installs first,
//! with `cargo install --path crates/oxmera-learn`; the full `oxmera`
//! command (oxmera-cli) mounts the very same [`ladder::LadderArgs`] and
//! [`doctor::DoctorArgs`] under its own `ladder` and `doctor`. One
//! implementation, two doors: each front end passes the name it is run by,
//! and every command the output suggests is spelled with it.
//!
//! What this crate owns: parsing the ladder's and the doctor's arguments,
//! rendering what [`oxmera_ladder`] returns for a terminal (laid out for
//! 80×24, coloured only where [`style`] says the stream takes colour), the
//! `watch` loop's keys, relaying cargo's progress while a rung builds, and
//! the doctor's probes of the host, the toolchain and the GPU drivers,
//! which look for files and never open a device.
//!
//! What it must never know: tensors, backends, kernels. It depends on
//! `oxmera-ladder` and a few small crates (clap, anstream, serde, toml) and
//! on no other oxmera crate — xtask's layering check fails the build if it
//! ever does — so installing it compiles 51 crates, not the 129 of the
//! full command. The rungs link oxmera themselves, in their own
//! workspace, when the ladder runs cargo on them. Later tiers keep to the
//! same rule: a kernel rung's spec calls the kernel crates from its own
//! crate, and anything that must open a GPU (`doctor --gpu`) stays in the
//! full `oxmera` command, behind its `wgpu`/`cuda` features.

pub mod doctor;
pub mod ladder;
pub mod style;
