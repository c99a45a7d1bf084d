//! Probing this machine. Nothing here may panic or fail the doctor: every
//! probe that cannot answer says so in its report line.
//!
//! The GPU probes look for files rather than opening devices: the default
//! build links no GPU library, and loading a driver just to print a line
//! would run its initialisers in the doctor's process. So "available" for
//! wgpu means "a loader and a driver are installed" — the adapter itself is
//! opened only by a build with the wgpu backend — and each line says what
//! was looked at.

use std::path::{Path, PathBuf};
use std::process::Command;

use oxmera_ladder::{Ladder, Need};

use super::{BackendProbe, CpuFeature, Host, LadderProgress, Report, TierProbe, Toolchain};

/// The workspace's minimum Rust version.
pub const MSRV: &str = env!("CARGO_PKG_RUST_VERSION");

/// Tells the ladder which needs this machine meets instead of probing: a
/// comma-separated list of the manifest's words (`rust,wgpu-adapter`). The
/// golden test of the ladder's list fixes the machine with it; a learner
/// may use it to see the ladder as another machine would.
pub const NEEDS_MET_ENV: &str = "OXMERA_LADDER_NEEDS_MET";

/// The GPU needs of the ladder that this machine lacks, probed as the
/// doctor probes them (files, no device opened), or read from
/// [`NEEDS_MET_ENV`] when it is set.
pub fn lacking() -> Vec<Need> {
    let gpu_needs = [Need::WgpuAdapter, Need::CudaDriver];
    if let Some(met) = std::env::var_os(NEEDS_MET_ENV) {
        let met = met.to_string_lossy().into_owned();
        let met: Vec<&str> = met.split(',').map(str::trim).collect();
        return gpu_needs
            .into_iter()
            .filter(|n| !met.contains(&n.as_str()))
            .collect();
    }
    let mut lacking = Vec::new();
    if !wgpu().available {
        lacking.push(Need::WgpuAdapter);
    }
    if !cuda().available {
        lacking.push(Need::CudaDriver);
    }
    lacking
}

/// Probes everything, in the order the report shows it.
pub fn probe() -> Report {
    let host = Host {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cpu_features: cpu_features(),
    };
    let toolchain = toolchain();
    let backends = vec![
        BackendProbe {
            name: "reference".into(),
            available: true,
            detail: "always: plain Rust, the definition of correct".into(),
            checked: "nothing to check".into(),
        },
        BackendProbe {
            name: "cpu".into(),
            available: true,
            detail: "always: plain Rust, threads and SIMD-friendly loops".into(),
            checked: "nothing to check".into(),
        },
        wgpu(),
        cuda(),
    ];
    let ladder = crate::ladder::open().ok();
    let tiers = ladder
        .as_ref()
        .map(|l| tiers(l, &toolchain, &backends))
        .unwrap_or_default();
    let ladder = ladder.map(|l| {
        let (done, built) = l.counts();
        LadderProgress {
            done,
            built,
            current: l.current().map(|r| format!("{} {}", r.id, r.name)),
        }
    });
    Report {
        host,
        toolchain,
        backends,
        tiers,
        ladder,
    }
}

#[allow(clippy::vec_init_then_push)]
fn cpu_features() -> Vec<CpuFeature> {
    #[allow(unused_mut)]
    let mut features: Vec<CpuFeature> = Vec::new();
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        macro_rules! x86 {
            ($($f:tt),*) => {$(
                features.push(CpuFeature {
                    name: $f.to_string(),
                    present: std::arch::is_x86_feature_detected!($f),
                });
            )*};
        }
        x86!(
            "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw"
        );
    }
    #[cfg(target_arch = "aarch64")]
    {
        macro_rules! arm {
            ($($f:tt),*) => {$(
                features.push(CpuFeature {
                    name: $f.to_string(),
                    present: std::arch::is_aarch64_feature_detected!($f),
                });
            )*};
        }
        arm!("neon", "fp16", "dotprod", "sve");
    }
    features
}

/// The first line of `program --version`, if it runs.
fn version_of(program: &str) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().map(|l| l.trim().to_string())
}

/// `(major, minor)` from "rustc 1.95.0 (…)" or "1.85".
fn parse_version(s: &str) -> Option<(u32, u32)> {
    let v = s
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))?;
    let mut parts = v.split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

fn toolchain() -> Toolchain {
    let rustc = version_of(&std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()));
    let cargo = version_of("cargo");
    let meets_msrv = rustc
        .as_deref()
        .and_then(parse_version)
        .zip(parse_version(MSRV))
        .map(|(have, need)| have >= need);
    Toolchain {
        rustc,
        cargo,
        msrv: MSRV.to_string(),
        meets_msrv,
    }
}

/// Folders where the dynamic loader finds libraries, most specific first.
fn library_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let multiarch = format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH);
    for d in [
        multiarch.as_str(),
        "/usr/lib64",
        "/usr/lib",
        "/lib64",
        "/usr/local/lib",
        "/usr/lib/wsl/lib",
        "/usr/local/cuda/lib64",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

/// Where the dynamic loader would find `name`: its cache (`ldconfig -p`)
/// first, then the usual folders.
fn find_library(name: &str) -> Option<PathBuf> {
    for ldconfig in ["ldconfig", "/sbin/ldconfig"] {
        if let Ok(out) = Command::new(ldconfig).arg("-p").output() {
            let text = String::from_utf8_lossy(&out.stdout);
            for line in text.lines() {
                // "	libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1"
                if line.trim_start().starts_with(&format!("{name} ")) {
                    if let Some((_, path)) = line.split_once("=> ") {
                        return Some(PathBuf::from(path.trim()));
                    }
                }
            }
            break;
        }
    }
    library_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.exists())
}

/// Vulkan driver manifests (ICDs) the Vulkan loader would read.
fn vulkan_icds() -> Vec<String> {
    let mut files: Vec<PathBuf> = Vec::new();
    for var in ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"] {
        if let Some(v) = std::env::var_os(var) {
            files.extend(std::env::split_paths(&v));
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    let config = std::env::var_os("XDG_CONFIG_DIRS").unwrap_or_else(|| "/etc/xdg".into());
    dirs.extend(std::env::split_paths(&config).map(|d| d.join("vulkan/icd.d")));
    dirs.push(PathBuf::from("/etc/vulkan/icd.d"));
    let data =
        std::env::var_os("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    dirs.extend(std::env::split_paths(&data).map(|d| d.join("vulkan/icd.d")));
    for dir in dirs {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            files.extend(
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "json")),
            );
        }
    }
    let mut names: Vec<String> = files
        .iter()
        .filter(|p| p.exists())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn wgpu() -> BackendProbe {
    let mut p = BackendProbe {
        name: "wgpu".into(),
        available: false,
        detail: String::new(),
        checked: String::new(),
    };
    match std::env::consts::OS {
        "macos" => {
            let metal = Path::new("/System/Library/Frameworks/Metal.framework");
            p.available = metal.exists();
            p.checked = metal.display().to_string();
            p.detail = if p.available {
                "Metal is present".into()
            } else {
                "no Metal framework".into()
            };
        }
        "windows" => {
            let system = std::env::var_os("SystemRoot")
                .map(|r| PathBuf::from(r).join("System32"))
                .unwrap_or_else(|| PathBuf::from(r"C:\Windows\System32"));
            let found: Vec<&str> = ["d3d12.dll", "vulkan-1.dll"]
                .into_iter()
                .filter(|dll| system.join(dll).exists())
                .collect();
            p.available = !found.is_empty();
            p.checked = format!("d3d12.dll and vulkan-1.dll in {}", system.display());
            p.detail = if p.available {
                format!("found {}", found.join(", "))
            } else {
                "neither DX12 nor Vulkan is installed".into()
            };
        }
        _ => {
            let loader = find_library("libvulkan.so.1");
            let icds = vulkan_icds();
            p.checked = "libvulkan.so.1 in the ldconfig cache and library folders; Vulkan driver manifests in VK_DRIVER_FILES, /etc/vulkan/icd.d and the XDG vulkan/icd.d folders".into();
            p.available = loader.is_some() && !icds.is_empty();
            p.detail = match (&loader, icds.is_empty()) {
                (None, _) => "no Vulkan loader (libvulkan.so.1)".into(),
                (Some(_), true) => "a Vulkan loader but no Vulkan driver (ICD)".into(),
                (Some(_), false) => {
                    let software = icds
                        .iter()
                        .any(|n| n.contains("lvp") || n.contains("swiftshader"));
                    format!(
                        "Vulkan drivers: {}{}",
                        icds.join(", "),
                        if software {
                            " (lvp/swiftshader run on the CPU)"
                        } else {
                            ""
                        }
                    )
                }
            };
        }
    }
    if p.available {
        // Opening one is the full command's business (`oxmera doctor --gpu`,
        // built with `--features wgpu`): this crate links no GPU library.
        p.detail
            .push_str("; an adapter is likely (none was opened: `oxmera doctor --gpu` opens them)");
    }
    p
}

fn cuda() -> BackendProbe {
    let mut p = BackendProbe {
        name: "cuda".into(),
        available: false,
        detail: String::new(),
        checked: String::new(),
    };
    match std::env::consts::OS {
        "macos" => {
            p.detail = "CUDA does not run on macOS".into();
            p.checked = "nothing to check".into();
        }
        "windows" => {
            let system = std::env::var_os("SystemRoot")
                .map(|r| PathBuf::from(r).join("System32"))
                .unwrap_or_else(|| PathBuf::from(r"C:\Windows\System32"));
            let dll = system.join("nvcuda.dll");
            p.available = dll.exists();
            p.checked = dll.display().to_string();
            p.detail = if p.available {
                "the NVIDIA driver (nvcuda.dll) is installed".into()
            } else {
                "no NVIDIA driver (nvcuda.dll)".into()
            };
        }
        _ => {
            p.checked =
                "libcuda.so.1 in the ldconfig cache and library folders; /proc/driver/nvidia"
                    .into();
            match find_library("libcuda.so.1") {
                Some(lib) => {
                    p.available = true;
                    p.detail = format!("driver library {}", lib.display());
                    if let Some(v) = nvidia_driver_version() {
                        p.detail.push_str(&format!(", driver {v}"));
                    }
                    let gpus = nvidia_gpus();
                    if !gpus.is_empty() {
                        p.detail.push_str(&format!("; {}", gpus.join(", ")));
                    }
                }
                None => p.detail = "no NVIDIA driver library (libcuda.so.1)".into(),
            }
        }
    }
    p
}

/// The kernel module's version from `/proc/driver/nvidia/version`.
fn nvidia_driver_version() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    let line = text.lines().next()?;
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar ..."
    line.split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))
        .map(str::to_string)
}

/// GPU model names from `/proc/driver/nvidia/gpus/*/information`.
fn nvidia_gpus() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc/driver/nvidia/gpus") else {
        return Vec::new();
    };
    let mut gpus: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("information")).ok())
        .filter_map(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Model:").map(|m| m.trim().to_string()))
        })
        .collect();
    gpus.sort();
    gpus
}

fn tiers(ladder: &Ladder, toolchain: &Toolchain, backends: &[BackendProbe]) -> Vec<TierProbe> {
    let has = |name: &str| backends.iter().any(|b| b.name == name && b.available);
    ladder
        .manifest
        .tiers
        .iter()
        .map(|t| {
            let missing: Vec<String> = t
                .needs
                .iter()
                .filter(|n| match n {
                    Need::Rust => toolchain.rustc.is_none() || toolchain.cargo.is_none(),
                    Need::WgpuAdapter => !has("wgpu"),
                    Need::CudaDriver => !has("cuda"),
                })
                .map(|n| n.as_str().to_string())
                .collect();
            let rungs: Vec<_> = ladder
                .manifest
                .rungs
                .iter()
                .filter(|r| r.tier == t.id)
                .collect();
            TierProbe {
                id: t.id.clone(),
                name: t.name.clone(),
                open: missing.is_empty(),
                built: rungs.iter().filter(|r| r.is_built()).count(),
                rungs: rungs.len(),
                missing,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(
            parse_version("rustc 1.95.0 (59807616e 2026-04-14)"),
            Some((1, 95))
        );
        assert_eq!(parse_version("1.85"), Some((1, 85)));
        assert_eq!(parse_version("cargo 1.85.0-nightly"), Some((1, 85)));
        assert_eq!(parse_version("no digits"), None);
    }

    #[test]
    fn probing_never_panics_and_keeps_its_order() {
        let r = probe();
        let names: Vec<&str> = r.backends.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, vec!["reference", "cpu", "wgpu", "cuda"]);
        assert!(r.backends[0].available && r.backends[1].available);
        assert_eq!(r.host.os, std::env::consts::OS);
    }
}
