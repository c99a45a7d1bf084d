//! Detects whether the compiler offers the AVX-512 intrinsics.
//!
//! `std::arch`'s AVX-512 intrinsics and `#[target_feature(enable =
//! "avx512f")]` became stable in Rust 1.89, above this crate's minimum
//! supported version. On an older compiler the AVX-512 GEMM kernel is left
//! out (the AVX2 kernel serves instead); on 1.89 or newer the cfg
//! `oxmera_avx512` switches it on.

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(oxmera_avx512)");
    println!("cargo::rerun-if-changed=build.rs");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    if minor_version(&version).is_some_and(|minor| minor >= 89) {
        println!("cargo::rustc-cfg=oxmera_avx512");
    }
}

/// The minor version in `rustc 1.MINOR.PATCH ...`.
fn minor_version(version: &str) -> Option<u32> {
    let numbers = version.split_whitespace().nth(1)?;
    let mut parts = numbers.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}
