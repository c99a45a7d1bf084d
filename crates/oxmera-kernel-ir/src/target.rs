//! The hardware a kernel is checked, simulated and emitted for.
//!
//! A [`Target`] carries what the analysis, the simulator and the emitters
//! must agree on: the warp (subgroup) width, the per-block limits and the
//! scalar types the target can hold. The warp width is not 32 everywhere —
//! lavapipe, the Vulkan driver CI runs on, makes subgroups of its host's
//! vector width (8 lanes of 32 bits on an AVX2 host), AMD parts run waves of
//! 64 or 32, NVIDIA and Apple 32 — and uniformity depends on it: `gid / 32`
//! is the same across a warp only when a warp has at most 32 lanes, and
//! `warp_id() == 0` covers a 32-thread block only when a warp has 32 lanes.
//! So every verdict of the analysis is per (target, launch).
//!
//! [`Target::generic`] (also [`Target::default`]) reproduces what oxmera did
//! before targets existed: warps of 32, at most 1024 threads per block and
//! the portable 48 KiB static shared-memory cap.
//!
//! Names parse with [`FromStr`] and print with [`Display`](fmt::Display):
//! `generic`, `cuda:sm_80` (also `sm_80`, `cuda:8.0`), `lavapipe`, `wave64`,
//! `wave32`, `apple`; any of them may end in `/warpN` to change the warp
//! width, e.g. `lavapipe/warp4` for lavapipe on a 128-bit (SSE or NEON) host.

use std::fmt;
use std::str::FromStr;

use crate::ir::{Expr, ExprKind, Kernel, ParamKind, Scalar, Stmt, StmtKind};
use crate::limits::{ComputeCapability, STATIC_SHARED_CAP};

/// The most threads a block may have on every target oxmera names: CUDA's
/// limit since compute capability 2.0, and the `maxComputeWorkGroupInvocations`
/// of the Vulkan and Metal targets below.
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// The widest warp a target may declare (AMD's wave64).
pub const MAX_WARP_WIDTH: u32 = 64;

/// Which family of hardware a target describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetKind {
    /// No particular hardware: today's portable defaults.
    Generic,
    /// An NVIDIA GPU of the given compute capability.
    Cuda(ComputeCapability),
    /// Mesa's lavapipe (Vulkan on the CPU through llvmpipe).
    Lavapipe,
    /// An AMD GPU running waves of 64 (GCN, CDNA, RDNA in wave64 mode).
    AmdWave64,
    /// An AMD GPU running waves of 32 (RDNA in wave32 mode).
    AmdWave32,
    /// An Apple GPU (Metal, SIMD groups of 32).
    Apple,
    /// A device described by the limits it reports (see
    /// [`Target::from_limits`]); it has no name to parse.
    Device,
}

impl TargetKind {
    /// The warp width the hardware family runs natively.
    pub fn native_warp_width(self) -> u32 {
        match self {
            TargetKind::Lavapipe => 8,
            TargetKind::AmdWave64 => 64,
            // A device's width is whatever it reported; Display prints it.
            TargetKind::Device => 0,
            _ => 32,
        }
    }
}

/// A set of scalar types, for what a target can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScalarSet(u16);

impl ScalarSet {
    /// Every scalar type of the kernel language.
    pub const ALL: ScalarSet = ScalarSet((1 << Scalar::ALL.len()) - 1);

    /// The empty set.
    pub const EMPTY: ScalarSet = ScalarSet(0);

    /// A type's bit: its position in [`Scalar::ALL`], which lists the
    /// types in declaration order.
    const fn bit(s: Scalar) -> u16 {
        1 << s as u16
    }

    /// The set with `s` added.
    pub const fn with(self, s: Scalar) -> ScalarSet {
        ScalarSet(self.0 | Self::bit(s))
    }

    /// True when `s` is in the set.
    pub fn contains(self, s: Scalar) -> bool {
        self.0 & Self::bit(s) != 0
    }

    /// The set without `s`.
    pub const fn without(self, s: Scalar) -> ScalarSet {
        ScalarSet(self.0 & !Self::bit(s))
    }

    /// The members, in the order of [`Scalar::ALL`].
    pub fn iter(self) -> impl Iterator<Item = Scalar> {
        Scalar::ALL.into_iter().filter(move |s| self.contains(*s))
    }
}

/// Why a target cannot be built or named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// A warp width that is not a power of two in `1..=64`.
    #[error("warp width {0} is not a power of two between 1 and 64")]
    WarpWidth(u32),
    /// A name that does not parse.
    #[error(
        "unknown target `{0}`; known: generic, cuda:sm_XY (e.g. cuda:sm_80), lavapipe, wave64, wave32, apple, each optionally with /warpN"
    )]
    Unknown(String),
    /// A reported limit that no target can have.
    #[error("{0}")]
    Limit(String),
    /// A compute capability that is not in the table of [`crate::limits`].
    #[error(transparent)]
    Cc(#[from] crate::limits::UnknownCc),
}

/// The hardware a kernel is checked, simulated and emitted for.
///
/// Fields are private so that a target always holds a valid warp width;
/// build one with a named constructor and adjust it with
/// [`Target::with_warp_width`] or [`Target::with_dtypes`].
///
/// The fields are stored narrow (24 bytes in all): a target is `Copy` and
/// every finding and simulator report carries one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Target {
    kind: TargetKind,
    /// Shared memory per block without opt-in, bytes.
    shared_default: u32,
    /// Shared memory per block with the opt-in, bytes.
    shared_max: u32,
    max_block_threads: u16,
    warp_width: u8,
    dtypes: ScalarSet,
}

/// The 48 KiB static cap, as a target stores it.
const STATIC_CAP: u32 = STATIC_SHARED_CAP as u32;
/// The block limit, as a target stores it.
const MAX_THREADS: u16 = MAX_BLOCK_THREADS as u16;

impl Default for Target {
    /// [`Target::generic`]: nothing changes for code written before targets.
    fn default() -> Self {
        Target::generic()
    }
}

impl Target {
    /// Today's portable defaults: warps of 32, 1024 threads per block, the
    /// 48 KiB static shared-memory cap (no opt-in beyond it), every scalar.
    pub const fn generic() -> Target {
        Target {
            kind: TargetKind::Generic,
            warp_width: 32,
            max_block_threads: MAX_THREADS,
            shared_default: STATIC_CAP,
            shared_max: STATIC_CAP,
            dtypes: ScalarSet::ALL,
        }
    }

    /// An NVIDIA GPU of compute capability `cc`: warps of 32, 1024 threads
    /// per block, 48 KiB of shared memory by default and the opt-in maximum
    /// of [`ComputeCapability::max_shared_per_block`].
    ///
    /// Source: CUDA C++ Programming Guide, "Technical Specifications per
    /// Compute Capability" (warp size 32 and "Maximum number of threads per
    /// block" 1024 on every listed capability; "Maximum amount of shared
    /// memory per thread block" for the opt-in limit, 48 KiB without it).
    ///
    /// Every capability holds `f64`, the 64-bit integers and the 8- and
    /// 16-bit ones. `f16` needs 5.3 and `bf16` 8.0 — the capabilities from
    /// which the conversions the emitter computes halves with exist: PTX
    /// ISA, `cvt`: conversions to and from `.f16` require `sm_53` or
    /// higher, `cvt.rn.bf16.f32` requires `sm_80` (PTX ISA 7.0). Every
    /// capability in the table is at least 7.0, so only `bf16` is ever
    /// missing.
    pub fn cuda(cc: ComputeCapability) -> Target {
        let mut dtypes = ScalarSet::ALL;
        if (cc.major, cc.minor) < (5, 3) {
            dtypes = dtypes.without(Scalar::F16);
        }
        if cc.major < 8 {
            dtypes = dtypes.without(Scalar::BF16);
        }
        Target {
            kind: TargetKind::Cuda(cc),
            warp_width: 32,
            max_block_threads: MAX_THREADS,
            shared_default: STATIC_CAP,
            shared_max: (cc.max_shared_per_block() as u32).max(STATIC_CAP),
            dtypes,
        }
    }

    /// Mesa's lavapipe on an AVX2 host, as CI runs it: subgroups of 8,
    /// 1024 invocations per workgroup, 32 KiB of shared memory.
    ///
    /// Source: Mesa `src/gallium/frontends/lavapipe/lvp_device.c` sets
    /// `subgroupSize = lp_native_vector_width / 32` (256 / 32 = 8 with AVX2;
    /// use `lavapipe/warp4` for a 128-bit host), and takes
    /// `maxComputeWorkGroupInvocations` and `maxComputeSharedMemorySize` from
    /// llvmpipe's compute caps: `PIPE_COMPUTE_CAP_MAX_THREADS_PER_BLOCK` 1024
    /// and `PIPE_COMPUTE_CAP_MAX_LOCAL_SIZE` 32768 in
    /// `llvmpipe_get_compute_param` (`src/gallium/drivers/llvmpipe/lp_screen.c`,
    /// Mesa 24). Read from the source, not from a running driver.
    pub const fn lavapipe() -> Target {
        Target {
            kind: TargetKind::Lavapipe,
            warp_width: 8,
            max_block_threads: MAX_THREADS,
            shared_default: 32 * 1024,
            shared_max: 32 * 1024,
            dtypes: ScalarSet::ALL,
        }
    }

    /// An AMD GPU running waves of 64: 1024 threads per workgroup and 64 KiB
    /// of LDS per workgroup (RADV's `maxComputeSharedMemorySize`, HIP's
    /// `sharedMemPerBlock`).
    pub const fn amd_wave64() -> Target {
        Target {
            kind: TargetKind::AmdWave64,
            warp_width: 64,
            max_block_threads: MAX_THREADS,
            shared_default: 64 * 1024,
            shared_max: 64 * 1024,
            dtypes: ScalarSet::ALL,
        }
    }

    /// An AMD RDNA GPU running waves of 32; the same per-workgroup limits as
    /// [`Target::amd_wave64`].
    pub const fn amd_wave32() -> Target {
        Target {
            kind: TargetKind::AmdWave32,
            warp_width: 32,
            ..Target::amd_wave64()
        }
    }

    /// An Apple GPU: SIMD groups of 32, 1024 threads and 32 KiB of threadgroup
    /// memory per threadgroup (Metal Feature Set Tables, "Maximum total
    /// threadgroup memory allocation" and "Maximum threads per threadgroup").
    /// Metal has no 64-bit float (the Metal Shading Language Specification's
    /// scalar types have no `double`), so no `f64`.
    pub const fn apple() -> Target {
        Target {
            kind: TargetKind::Apple,
            warp_width: 32,
            max_block_threads: MAX_THREADS,
            shared_default: 32 * 1024,
            shared_max: 32 * 1024,
            dtypes: ScalarSet::ALL.without(Scalar::F64),
        }
    }

    /// A target from the limits a device reports, for backends that query
    /// an adapter instead of naming hardware: a Vulkan or wgpu adapter's
    /// subgroup size, `maxComputeWorkGroupInvocations` and
    /// `maxComputeSharedMemorySize` (which has no opt-in beyond it). Every
    /// scalar type is assumed supported; narrow it with
    /// [`Target::with_dtypes`].
    pub fn from_limits(
        warp_width: u32,
        max_block_threads: u32,
        max_shared: u64,
    ) -> Result<Target, TargetError> {
        let threads = u16::try_from(max_block_threads)
            .ok()
            .filter(|t| *t > 0)
            .ok_or_else(|| {
                TargetError::Limit(format!(
                    "a block limit of {max_block_threads} threads is outside 1..=65535"
                ))
            })?;
        let shared = u32::try_from(max_shared).map_err(|_| {
            TargetError::Limit(format!(
                "a shared-memory limit of {max_shared} bytes is over 4 GiB"
            ))
        })?;
        Target {
            kind: TargetKind::Device,
            shared_default: shared,
            shared_max: shared,
            max_block_threads: threads,
            warp_width: 32,
            dtypes: ScalarSet::ALL,
        }
        .with_warp_width(warp_width)
    }

    /// The same target with warps of `width` lanes (a power of two in
    /// `1..=64`): for hardware whose subgroup size differs from its family's
    /// usual one, and for tests.
    pub fn with_warp_width(self, width: u32) -> Result<Target, TargetError> {
        if width == 0 || width > MAX_WARP_WIDTH || !width.is_power_of_two() {
            return Err(TargetError::WarpWidth(width));
        }
        Ok(Target {
            warp_width: width as u8,
            ..self
        })
    }

    /// The same target holding only the scalar types in `dtypes`.
    pub fn with_dtypes(self, dtypes: ScalarSet) -> Target {
        Target { dtypes, ..self }
    }

    /// Which hardware family.
    pub fn kind(&self) -> TargetKind {
        self.kind
    }

    /// Threads per warp (subgroup); a power of two in `1..=64`.
    pub fn warp_width(&self) -> u32 {
        self.warp_width as u32
    }

    /// The most threads one block may have.
    pub fn max_block_threads(&self) -> u32 {
        self.max_block_threads as u32
    }

    /// Shared memory one block may use without opting in, in bytes.
    pub fn shared_default(&self) -> u64 {
        self.shared_default as u64
    }

    /// Shared memory one block may use at most (with the opt-in where the
    /// target has one), in bytes. The analysis checks against this: a kernel
    /// over it cannot run on the target at all.
    pub fn shared_max(&self) -> u64 {
        self.shared_max as u64
    }

    /// The scalar types the target supports.
    pub fn dtypes(&self) -> ScalarSet {
        self.dtypes
    }

    /// The first scalar type `k` uses (in a parameter, local, shared
    /// array, or as the type of any expression — a cast, a literal) that
    /// this target does not support.
    pub fn unsupported_dtype(&self, k: &Kernel) -> Option<Scalar> {
        if self.dtypes == ScalarSet::ALL {
            return None;
        }
        dtypes_used(k)
            .into_iter()
            .find(|s| !self.dtypes.contains(*s))
    }

    /// How a diagnostic names this target's shared-memory limit.
    pub fn shared_limit_text(&self) -> String {
        match self.kind {
            // The wording of the time before targets, for the default.
            TargetKind::Generic if self.shared_max == STATIC_CAP => {
                "the 48 KiB static shared-memory cap".to_string()
            }
            TargetKind::Cuda(cc) => format!("the per-block limit of compute capability {cc}"),
            _ => format!("the per-block shared-memory limit of target {self}"),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            TargetKind::Generic => write!(f, "generic")?,
            TargetKind::Cuda(cc) => write!(f, "cuda:sm_{}{}", cc.major, cc.minor)?,
            TargetKind::Lavapipe => write!(f, "lavapipe")?,
            TargetKind::AmdWave64 => write!(f, "wave64")?,
            TargetKind::AmdWave32 => write!(f, "wave32")?,
            TargetKind::Apple => write!(f, "apple")?,
            TargetKind::Device => {
                return write!(
                    f,
                    "device(warp {}, {} threads, {} bytes shared)",
                    self.warp_width, self.max_block_threads, self.shared_max
                );
            }
        }
        if self.warp_width() != self.kind.native_warp_width() {
            write!(f, "/warp{}", self.warp_width)?;
        }
        Ok(())
    }
}

/// Every scalar type `k` mentions, first-use order: parameters, locals,
/// shared arrays, then the type of every expression of the body.
pub fn dtypes_used(k: &Kernel) -> Vec<Scalar> {
    let mut out: Vec<Scalar> = Vec::new();
    let mut note = |s: Scalar| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for p in &k.params {
        note(match p.kind {
            ParamKind::Scalar(s) => s,
            ParamKind::Buffer { elem, .. } => elem,
        });
    }
    k.locals.iter().for_each(|l| note(l.ty));
    k.shared.iter().for_each(|s| note(s.elem));
    for_each_expr(&k.body, &mut |e| note(e.ty));
    out
}

/// Calls `f` on every expression of `stmts`, subexpressions included.
fn for_each_expr(stmts: &[Stmt], f: &mut dyn FnMut(&Expr)) {
    fn expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
        f(e);
        match &e.kind {
            ExprKind::Load { index, .. } => expr(index, f),
            ExprKind::Unary { arg, .. } | ExprKind::Cast(arg) | ExprKind::BitCast(arg) => {
                expr(arg, f)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                expr(lhs, f);
                expr(rhs, f);
            }
            ExprKind::Math { args, .. } => args.iter().for_each(|a| expr(a, f)),
            ExprKind::Shuffle {
                mask, value, arg, ..
            } => {
                expr(mask, f);
                expr(value, f);
                expr(arg, f);
            }
            ExprKind::Vote { mask, pred, .. } => {
                expr(mask, f);
                expr(pred, f);
            }
            ExprKind::Atomic {
                index,
                value,
                compare,
                ..
            } => {
                expr(index, f);
                expr(value, f);
                if let Some(c) = compare {
                    expr(c, f);
                }
            }
            ExprKind::Lit(_)
            | ExprKind::Local(_)
            | ExprKind::Param(_)
            | ExprKind::Spec(_)
            | ExprKind::Builtin(_) => {}
        }
    }
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { value, .. } => expr(value, f),
            StmtKind::Store { index, value, .. } => {
                expr(index, f);
                expr(value, f);
            }
            StmtKind::Eval(e) => expr(e, f),
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                expr(cond, f);
                for_each_expr(then, f);
                for_each_expr(otherwise, f);
            }
            StmtKind::For {
                start,
                end,
                step,
                body,
                ..
            } => {
                expr(start, f);
                expr(end, f);
                expr(step, f);
                for_each_expr(body, f);
            }
            StmtKind::While { cond, body } => {
                expr(cond, f);
                for_each_expr(body, f);
            }
            StmtKind::WarpSync { mask } => expr(mask, f),
            StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Return
            | StmtKind::Barrier
            | StmtKind::Fence => {}
        }
    }
}

/// `sm_80` or `8.0` as a compute capability.
fn parse_cc(s: &str) -> Result<ComputeCapability, TargetError> {
    if let Some(digits) = s.strip_prefix("sm_") {
        // `sm_XY` has a one-digit minor version: sm_80 is 8.0, sm_100 is 10.0.
        if digits.len() >= 2 && digits.bytes().all(|b| b.is_ascii_digit()) {
            let (major, minor) = digits.split_at(digits.len() - 1);
            return Ok(format!("{major}.{minor}").parse()?);
        }
        return Err(TargetError::Unknown(s.to_string()));
    }
    Ok(s.parse()?)
}

impl FromStr for Target {
    type Err = TargetError;
    fn from_str(s: &str) -> Result<Self, TargetError> {
        let unknown = || TargetError::Unknown(s.to_string());
        let lower = s.trim().to_ascii_lowercase();
        let (name, width) = match lower.split_once('/') {
            Some((n, w)) => {
                let w = w
                    .strip_prefix("warp")
                    .and_then(|d| d.parse::<u32>().ok())
                    .ok_or_else(unknown)?;
                (n.to_string(), Some(w))
            }
            None => (lower, None),
        };
        let base = match name.as_str() {
            "generic" | "default" => Target::generic(),
            "lavapipe" => Target::lavapipe(),
            "wave64" | "amd:wave64" => Target::amd_wave64(),
            "wave32" | "amd:wave32" => Target::amd_wave32(),
            "apple" | "metal" => Target::apple(),
            other => {
                let cc = other.strip_prefix("cuda:").unwrap_or(other);
                if cc.starts_with("sm_") || other.starts_with("cuda:") {
                    Target::cuda(parse_cc(cc)?)
                } else {
                    return Err(unknown());
                }
            }
        };
        match width {
            Some(w) => base.with_warp_width(w),
            None => Ok(base),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_is_todays_behaviour() {
        let t = Target::default();
        assert_eq!(t, Target::generic());
        assert_eq!(t.warp_width(), 32);
        assert_eq!(t.max_block_threads(), 1024);
        assert_eq!(t.shared_max(), 48 * 1024);
        assert_eq!(t.shared_limit_text(), "the 48 KiB static shared-memory cap");
    }

    #[test]
    fn named_targets_parse_and_print() {
        for (name, width, shared) in [
            ("generic", 32, 48 * 1024),
            ("cuda:sm_80", 32, 163 * 1024),
            ("cuda:sm_75", 32, 64 * 1024),
            ("cuda:sm_90", 32, 227 * 1024),
            ("lavapipe", 8, 32 * 1024),
            ("wave64", 64, 64 * 1024),
            ("wave32", 32, 64 * 1024),
            ("apple", 32, 32 * 1024),
            ("lavapipe/warp4", 4, 32 * 1024),
            ("generic/warp8", 8, 48 * 1024),
        ] {
            let t: Target = name.parse().unwrap();
            assert_eq!(t.warp_width(), width, "{name}");
            assert_eq!(t.shared_max(), shared, "{name}");
            assert_eq!(t.to_string(), name);
            assert_eq!(t.to_string().parse::<Target>().unwrap(), t);
        }
        let a: Target = "sm_86".parse().unwrap();
        let b: Target = "cuda:8.6".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.shared_default(), 48 * 1024);
        assert_eq!(a.shared_max(), 99 * 1024);
    }

    #[test]
    fn bad_names_and_widths_are_errors() {
        assert!(matches!(
            "tpu".parse::<Target>(),
            Err(TargetError::Unknown(_))
        ));
        assert!(matches!(
            "cuda:sm_61".parse::<Target>(),
            Err(TargetError::Cc(_))
        ));
        assert!(matches!(
            "generic/warp12".parse::<Target>(),
            Err(TargetError::WarpWidth(12))
        ));
        assert_eq!(
            Target::generic().with_warp_width(128),
            Err(TargetError::WarpWidth(128))
        );
        assert_eq!(
            Target::generic().with_warp_width(0),
            Err(TargetError::WarpWidth(0))
        );
        assert!(Target::generic().with_warp_width(1).is_ok());
    }

    #[test]
    fn a_target_from_reported_limits() {
        let t = Target::from_limits(16, 256, 32768).unwrap();
        assert_eq!(t.kind(), TargetKind::Device);
        assert_eq!(t.warp_width(), 16);
        assert_eq!(t.max_block_threads(), 256);
        assert_eq!(t.shared_default(), 32768);
        assert_eq!(t.shared_max(), 32768);
        assert_eq!(
            t.to_string(),
            "device(warp 16, 256 threads, 32768 bytes shared)"
        );
        assert!(t.shared_limit_text().contains("device(warp 16"));
        assert_eq!(
            Target::from_limits(24, 256, 32768),
            Err(TargetError::WarpWidth(24))
        );
        assert!(matches!(
            Target::from_limits(32, 0, 32768),
            Err(TargetError::Limit(_))
        ));
        assert!(matches!(
            Target::from_limits(32, 1024, 1 << 33),
            Err(TargetError::Limit(_))
        ));
    }

    #[test]
    fn scalar_sets() {
        let s = ScalarSet::ALL.without(Scalar::F32);
        assert!(!s.contains(Scalar::F32));
        assert_eq!(s.iter().count(), Scalar::ALL.len() - 1);
        assert!(s.with(Scalar::F32) == ScalarSet::ALL);
        for t in Scalar::ALL {
            assert!(ScalarSet::ALL.contains(t) && !ScalarSet::EMPTY.contains(t));
        }
    }

    #[test]
    fn which_targets_hold_which_types() {
        let sm70: Target = "cuda:sm_70".parse().unwrap();
        let sm80: Target = "cuda:sm_80".parse().unwrap();
        assert!(sm70.dtypes().contains(Scalar::F16));
        assert!(!sm70.dtypes().contains(Scalar::BF16));
        assert_eq!(sm80.dtypes(), ScalarSet::ALL);
        assert!(!Target::apple().dtypes().contains(Scalar::F64));
        assert!(Target::apple().dtypes().contains(Scalar::I64));
        assert_eq!(Target::lavapipe().dtypes(), ScalarSet::ALL);
    }
}
