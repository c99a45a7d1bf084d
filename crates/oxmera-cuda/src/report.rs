//! What a GPU is: the facts `oxmera doctor --gpu` prints.

use std::fmt;

/// One GPU as the CUDA driver reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuReport {
    /// Its ordinal: `cuda:N`.
    pub ordinal: usize,
    /// The part's name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub multiprocessors: i32,
    /// Device memory, bytes.
    pub memory_bytes: u64,
    /// The driver's CUDA version as it reports it (`12040` is 12.4): the
    /// newest PTX ISA it JIT-compiles follows from it.
    pub driver_cuda_version: i32,
}

impl fmt::Display for GpuReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.compute_capability;
        writeln!(f, "cuda:{}  {}", self.ordinal, self.name)?;
        writeln!(
            f,
            "  compute capability {major}.{minor} (sm_{major}{minor}), {} multiprocessors",
            self.multiprocessors
        )?;
        writeln!(
            f,
            "  memory         {:.1} GiB",
            self.memory_bytes as f64 / (1u64 << 30) as f64
        )?;
        write!(
            f,
            "  driver         CUDA {}.{}",
            self.driver_cuda_version / 1000,
            (self.driver_cuda_version % 1000) / 10
        )
    }
}

/// How a tuning cache names a CUDA part: `cuda: ` and the part's name, its
/// compute capability, the CUDA version its driver reports and, where it
/// is known, the driver's release (`550.54.14`).
///
/// The release is there because the driver, not a toolkit, compiles
/// oxmera's PTX to machine code: two releases that report the same CUDA
/// version (`12040`) may JIT the same PTX differently, and a tuned
/// configuration is only as good as the code it was timed with. Never the
/// ordinal, which another machine numbers differently.
pub fn identity_of(report: &GpuReport, release: Option<&str>) -> String {
    let (major, minor) = report.compute_capability;
    let v = report.driver_cuda_version;
    let mut id = format!(
        "cuda: {}; sm_{major}{minor}; CUDA {}.{}",
        report.name,
        v / 1000,
        (v % 1000) / 10
    );
    if let Some(r) = release {
        id.push_str("; driver ");
        id.push_str(r);
    }
    id
}

/// The driver's release from the text of `/proc/driver/nvidia/version`
/// (Linux's NVIDIA kernel module): the first dotted number after `Kernel
/// Module`, e.g. `550.54.14`; `None` when the text does not say.
pub fn driver_release(proc_version: &str) -> Option<String> {
    let line = proc_version
        .lines()
        .find(|l| l.starts_with("NVRM version:"))?;
    let after = line.split("Kernel Module").nth(1)?;
    // The proprietary module puts the release right after its name, the
    // open one after "for x86_64": the first word that is a version.
    after
        .split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> GpuReport {
        GpuReport {
            ordinal: 3,
            name: "NVIDIA H200".into(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            memory_bytes: 150 << 30,
            driver_cuda_version: 12040,
        }
    }

    #[test]
    fn the_identity_names_the_part_its_capability_and_driver_never_the_ordinal() {
        assert_eq!(
            identity_of(&h200(), Some("550.54.14")),
            "cuda: NVIDIA H200; sm_90; CUDA 12.4; driver 550.54.14"
        );
        let without = identity_of(&h200(), None);
        assert_eq!(without, "cuda: NVIDIA H200; sm_90; CUDA 12.4");
        assert!(!without.contains('3'), "{without}");
    }

    #[test]
    fn the_release_is_read_from_the_kernel_modules_banner() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  \
                    Thu Feb 22 01:44:30 UTC 2024\nGCC version:  gcc version 12.3.0\n";
        assert_eq!(driver_release(text).as_deref(), Some("550.54.14"));
        // The open kernel modules say it the same way after their own name.
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  \
                    560.35.03  Release Build  (dvs-builder@U16-I3-B03-4-3)\n";
        assert_eq!(driver_release(open).as_deref(), Some("560.35.03"));
        assert_eq!(driver_release("something else"), None);
    }
}
