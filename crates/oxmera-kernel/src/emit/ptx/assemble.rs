//! NVIDIA's `ptxas`, run offline on an emitted module.
//!
//! `ptxas` assembles PTX into the machine code of one `sm_XY` with no GPU
//! and no driver (it ships in the `nvidia-cuda-nvcc` Python wheel, which is
//! how CI gets it). It is the strictest reader of PTX there is, so every
//! kernel oxmera emits is put through it in CI; for a learner it also tells
//! what the kernel costs on the part — registers per thread, shared memory,
//! spills — which decides how many blocks fit on a multiprocessor.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

use super::PtxKernel;
use crate::limits::ComputeCapability;

/// Why a module was not assembled.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PtxasError {
    /// No `ptxas` was found.
    #[error(
        "ptxas not found: set OXMERA_PTXAS to its path, or put it on PATH \
         (`pip install nvidia-cuda-nvcc-cu12` ships it as nvidia/cuda_nvcc/bin/ptxas; no GPU needed)"
    )]
    Missing,
    /// It could not be run, or its files could not be written.
    #[error("could not run {path}: {why}")]
    Run {
        /// The program.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// It refused the module.
    #[error("ptxas refused the PTX{}: {message}{}",
        line.map(|l| format!(" at line {l}")).unwrap_or_default(),
        text.as_ref().map(|t| format!("\n    {} | {t}", line.unwrap_or(0))).unwrap_or_default())]
    Rejected {
        /// The 1-based line of the first error, when ptxas names one.
        line: Option<u32>,
        /// That line of the module.
        text: Option<String>,
        /// ptxas's message.
        message: String,
    },
}

/// What `ptxas -v` reports for an assembled kernel.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assembled {
    /// Registers per thread.
    pub registers: Option<u32>,
    /// Static shared memory per block, bytes.
    pub shared_bytes: Option<u32>,
    /// Bytes spilled to local memory by stores (0 is what you want).
    pub spill_stores: Option<u32>,
    /// ptxas's own report, verbatim.
    pub info: String,
}

/// The `ptxas` to use: `OXMERA_PTXAS`, else the first on `PATH`, else
/// `$CUDA_HOME/bin/ptxas`.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("OXMERA_PTXAS") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let home = std::env::var_os("CUDA_HOME")?;
        let p = PathBuf::from(home).join("bin").join("ptxas");
        p.is_file().then_some(p)
    })
}

/// Assembles an emitted kernel for its compute capability.
pub fn assemble(ptxas: &Path, kernel: &PtxKernel) -> Result<Assembled, PtxasError> {
    assemble_source(ptxas, &kernel.source, kernel.cc)
}

/// Assembles PTX text for `sm_XY` of `cc` and reads `ptxas -v`'s report.
pub fn assemble_source(
    ptxas: &Path,
    source: &str,
    cc: ComputeCapability,
) -> Result<Assembled, PtxasError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let run_error = |why: String| PtxasError::Run {
        path: ptxas.display().to_string(),
        why,
    };
    let stem = std::env::temp_dir().join(format!(
        "oxmera-ptx-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let (input, output) = (stem.with_extension("ptx"), stem.with_extension("cubin"));
    std::fs::write(&input, source).map_err(|e| run_error(e.to_string()))?;
    let result = Command::new(ptxas)
        .arg(format!("-arch=sm_{}{}", cc.major, cc.minor))
        .arg("-v")
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output();
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    let out = result.map_err(|e| run_error(e.to_string()))?;
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(rejection(&report, source));
    }
    Ok(Assembled {
        registers: number_before(&report, " registers"),
        shared_bytes: number_before(&report, " bytes smem"),
        spill_stores: number_before(&report, " bytes spill stores"),
        info: report,
    })
}

/// The first error ptxas reports (`ptxas FILE, line N; error   : MESSAGE`),
/// with the module's line it names.
fn rejection(report: &str, source: &str) -> PtxasError {
    let first = report
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| report.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("ptxas failed without a message");
    let line = first
        .split_once(", line ")
        .and_then(|(_, rest)| rest.split(';').next())
        .and_then(|n| n.trim().parse::<u32>().ok());
    let message = first
        .split_once(": ")
        .map(|(_, m)| m.trim())
        .unwrap_or(first.trim())
        .to_string();
    let text = line
        .and_then(|l| source.lines().nth(l.checked_sub(1)? as usize))
        .map(|t| t.trim().to_string());
    PtxasError::Rejected {
        line,
        text,
        message,
    }
}

/// The number just before the first `unit` in ptxas's report.
fn number_before(report: &str, unit: &str) -> Option<u32> {
    let at = report.find(unit)?;
    let head = &report[..at];
    let digits: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_names_the_line_and_its_text() {
        let report = "ptxas /tmp/x.ptx, line 3; error   : Unknown symbol 'zz'\n\
                      ptxas fatal   : Ptx assembly aborted due to errors\n";
        let e = rejection(report, "a\nb\n    add.s32 %r1, zz, 1;\n");
        assert_eq!(
            e,
            PtxasError::Rejected {
                line: Some(3),
                text: Some("add.s32 %r1, zz, 1;".into()),
                message: "Unknown symbol 'zz'".into(),
            }
        );
        assert!(e.to_string().contains("at line 3"));
    }

    #[test]
    fn the_verbose_report_is_read() {
        let info = "ptxas info    : Used 12 registers, 1024 bytes smem, 380 bytes cmem[0]\n\
                    ptxas info    : 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads";
        assert_eq!(number_before(info, " registers"), Some(12));
        assert_eq!(number_before(info, " bytes smem"), Some(1024));
        assert_eq!(number_before(info, " bytes spill stores"), Some(0));
        assert_eq!(number_before(info, " nothing"), None);
    }
}
