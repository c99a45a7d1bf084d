//! Running a test of this binary again in a child process under an
//! address-space limit (`ulimit -v`), for cases that allocate: there the
//! allocator refuses what is past the limit, whatever the machine's memory
//! and overcommit setting, so a result that memory cannot hold is a typed
//! error to check rather than the machine's memory taken, and an abort in
//! the allocator is the child dying of a signal, which fails the test.

#![allow(dead_code)] // each test file uses its own part of this

use std::process::Command;

/// Set in the child: the test it names runs its cases instead of spawning.
pub const CHILD: &str = "OXMERA_LIMITED_CHILD";

/// Whether this process is the limited child.
pub fn in_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs the test `name` of this binary in a child limited to `limit_kib`
/// KiB of address space; fails unless it passes. Returns what it printed.
pub fn run_limited(name: &str, limit_kib: u64) -> String {
    let me = std::env::current_exe().expect("the test binary's path");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {limit_kib} && exec \"$0\" \"$@\""))
        .arg(&me)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("sh runs");
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // An abort in the allocator is a signal, not a failed assertion.
    assert!(
        out.status.success(),
        "{name} failed in its limited child ({}):\n{said}",
        out.status
    );
    assert!(said.contains("1 passed"), "{name} did not run:\n{said}");
    said
}
