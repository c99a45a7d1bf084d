//! What the adapters are: the facts `oxmera doctor --gpu` prints.

use std::fmt;

use oxmera_core::Result;

/// One adapter as wgpu reports it: identity, subgroup sizes, the dtype
/// features oxmera cares about, and the limits its kernels run into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterReport {
    /// Its ordinal: `wgpu:N`.
    pub ordinal: usize,
    /// The adapter's name (`llvmpipe (LLVM 15.0.6, 256 bits)` for lavapipe).
    pub name: String,
    /// The graphics API wgpu reaches it through (Vulkan, Metal, Dx12, Gl).
    pub backend: String,
    /// Discrete, integrated, virtual, CPU or other.
    pub device_type: String,
    /// The driver and its version.
    pub driver: String,
    /// Smallest and largest subgroup (warp) width the adapter may use.
    pub subgroup_sizes: (u32, u32),
    /// Dtype and atomic features: `f16`, `f64`, `i64`, `f32-atomics`,
    /// `subgroups` where present.
    pub features: Vec<&'static str>,
    /// Features the adapter has but `OXMERA_WGPU_MASK` hides (the backend
    /// behaves as if they were absent).
    pub masked: Vec<&'static str>,
    /// Bytes of workgroup (shared) memory per workgroup.
    pub max_workgroup_storage: u32,
    /// Largest storage buffer one binding may view, in bytes.
    pub max_storage_binding: u64,
    /// Most invocations (threads) in one workgroup.
    pub max_invocations: u32,
    /// Most workgroups along one dispatch dimension.
    pub max_workgroups_per_dimension: u32,
}

impl fmt::Display for AdapterReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lo, hi) = self.subgroup_sizes;
        let subgroups = if lo == hi {
            format!("{lo} lanes")
        } else {
            format!("{lo}..{hi} lanes (a range: warp collectives are refused)")
        };
        writeln!(f, "wgpu:{}  {}", self.ordinal, self.name)?;
        writeln!(
            f,
            "  backend {} ({}), driver {}",
            self.backend, self.device_type, self.driver
        )?;
        writeln!(f, "  subgroups      {subgroups}")?;
        writeln!(f, "  features       {}", self.features.join(", "))?;
        if !self.masked.is_empty() {
            writeln!(
                f,
                "  masked         {} (OXMERA_WGPU_MASK)",
                self.masked.join(", ")
            )?;
        }
        writeln!(
            f,
            "  limits         workgroup memory {} KiB, storage binding {} MiB, {} invocations/workgroup, {} workgroups/dimension",
            self.max_workgroup_storage / 1024,
            self.max_storage_binding >> 20,
            self.max_invocations,
            self.max_workgroups_per_dimension
        )
    }
}

/// Every adapter wgpu finds (`WGPU_BACKEND` narrows the search), in the
/// order `wgpu:N` numbers them. Opens no device. Without the crate's
/// `wgpu` feature this is an error saying how to build it in.
pub fn probe() -> Result<Vec<AdapterReport>> {
    #[cfg(feature = "wgpu")]
    {
        Ok(crate::gpu::adapters()
            .iter()
            .enumerate()
            .map(|(i, a)| crate::gpu::report(i, a))
            .collect())
    }
    #[cfg(not(feature = "wgpu"))]
    {
        Err(crate::not_built(oxmera_core::Device::Wgpu(0)))
    }
}
