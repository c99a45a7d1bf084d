//! Emitters: the kernel IR written out in a GPU's own language.
//!
//! Each emitter reads the IR and nothing else — not the simulator's
//! compiled form, not another emitter's text — so that what runs on a GPU
//! and what the analysis and the simulator judged are the same program,
//! seen from one source. An emitter takes the [`Target`](crate::target::Target)
//! the kernel was checked for and one concrete launch (block size and
//! specialization values), because what it writes depends on both: the
//! warp width decides what `lane_id()` means, and the block size is
//! compiled into the shader as its workgroup size.
//!
//! - [`wgsl`]: WGSL for wgpu (Vulkan, Metal, DX12).

pub mod wgsl;
