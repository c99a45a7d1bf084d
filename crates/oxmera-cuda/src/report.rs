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
