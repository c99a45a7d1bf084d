//! Which tile the AVX-512 `f32` micro-kernel computes on this processor.
//!
//! The kernel is one generic routine (`x86::avx512`) instantiated at two
//! tile shapes:
//!
//! - **12 × 32** (24 accumulators): each B vector loaded per step feeds
//!   12 FMAs. Tuned on parts that execute two full 512-bit FMAs per cycle
//!   (an Intel Xeon, AMD Zen 5), where 16 accumulators would leave the
//!   loads a larger share of each step.
//! - **8 × 32** (16 accumulators): chosen on AMD Zen 4, which executes a
//!   512-bit FMA as two 256-bit halves — one per cycle, latency 4 — so 16
//!   independent sums already keep its FMA units busy, and 8-row panels
//!   divide the row counts networks use (128, 256, 512, 784: 12-row panels
//!   leave 8 of 12 rows of the last panel idle at 128 and 256, 4 of 12 at
//!   784). Measured on a 2-vCPU Zen 4 (EPYC, family 25 model 17), each
//!   tile alternating call by call in one process, medians of 300
//!   (`gemm_tiles` example, docs/bench.md): 128³ 19.4 against 22.6 µs,
//!   512³ 4.5% and 1024³ 1.4% faster, 2048³ even, the MLP step's eight
//!   products 2.8%.
//!
//! The choice is made once per process, from the processor's vendor and
//! family (CPUID), so it is the same on every run on one machine; the
//! environment variable `OXMERA_GEMM_TILE` (`12x32` or `8x32`) overrides
//! it, for reproducing a figure or a result from another part. Either tile
//! computes every element of `C` as the same sums in the same order (the
//! depth blocks and the order of steps within them do not depend on the
//! tile), so the choice changes speed, never bits: a checkpoint resumed on
//! this machine continues bit for bit, and a test checks the two tiles
//! agree.

use std::sync::OnceLock;

use super::Kernel;

/// A tile shape of the AVX-512 `f32` kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tile {
    /// 12 rows × 32 columns.
    Wide,
    /// 8 rows × 32 columns.
    Narrow,
}

impl Tile {
    /// The name `OXMERA_GEMM_TILE` takes and reports print: `12x32`, `8x32`.
    pub fn name(self) -> &'static str {
        match self {
            Tile::Wide => "12x32",
            Tile::Narrow => "8x32",
        }
    }

    /// The tile a name stands for.
    fn parse(name: &str) -> Option<Tile> {
        [Tile::Wide, Tile::Narrow]
            .into_iter()
            .find(|t| t.name() == name.trim())
    }
}

/// The AVX-512 `f32` kernel at `tile`, where this processor (and build)
/// has AVX-512; `None` elsewhere.
pub fn avx512_f32_kernel(tile: Tile) -> Option<Kernel<f32>> {
    #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
    if crate::Isa::Avx512.is_available() {
        return Some(kernel_at(tile));
    }
    let _ = tile;
    None
}

/// The AVX-512 `f32` kernel at `tile` (the caller has checked that the
/// processor has AVX-512; the kernel asserts it again).
#[cfg(all(target_arch = "x86_64", oxmera_avx512))]
pub(super) fn kernel_at(tile: Tile) -> Kernel<f32> {
    match tile {
        Tile::Wide => super::x86::AVX512_F32,
        Tile::Narrow => super::x86::AVX512_F32_8X32,
    }
}

/// The AVX-512 `f32` tile of this process: `OXMERA_GEMM_TILE` if it names
/// one (an unknown name is reported once on stderr and ignored), else the
/// part's (see the module docs).
pub fn avx512_f32_tile() -> Tile {
    static CHOSEN: OnceLock<Tile> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let part = for_part(cpu_family());
        match std::env::var("OXMERA_GEMM_TILE") {
            Ok(name) => Tile::parse(&name).unwrap_or_else(|| {
                eprintln!(
                    "oxmera-cpu: OXMERA_GEMM_TILE={name} is not 12x32 or 8x32; using {}",
                    part.name()
                );
                part
            }),
            Err(_) => part,
        }
    })
}

/// The tile for a processor of `(vendor is AMD, family)`: narrow on AMD
/// family 25 (Zen 3 and Zen 4; only Zen 4 has AVX-512, the only case
/// that asks), wide elsewhere.
fn for_part(part: Option<(bool, u32)>) -> Tile {
    match part {
        Some((true, 25)) => Tile::Narrow,
        _ => Tile::Wide,
    }
}

/// Whether the vendor is AMD, and the display family (base family plus
/// extended family where the base is 15), from CPUID leaves 0 and 1.
#[cfg(target_arch = "x86_64")]
fn cpu_family() -> Option<(bool, u32)> {
    use std::arch::x86_64::__cpuid;
    let vendor = __cpuid(0);
    // "AuthenticAMD", in the order EBX, EDX, ECX.
    let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
    let eax = __cpuid(1).eax;
    let base = (eax >> 8) & 0xf;
    let family = if base == 0xf {
        base + ((eax >> 20) & 0xff)
    } else {
        base
    };
    Some((amd, family))
}

/// No CPUID off x86-64 (and no AVX-512 kernel to choose for).
#[cfg(not(target_arch = "x86_64"))]
fn cpu_family() -> Option<(bool, u32)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_parts_map_to_tiles() {
        for t in [Tile::Wide, Tile::Narrow] {
            assert_eq!(Tile::parse(t.name()), Some(t));
        }
        assert_eq!(Tile::parse(" 8x32\n"), Some(Tile::Narrow));
        assert_eq!(Tile::parse("16x16"), None);
        // AMD Zen 4 (family 25), AMD Zen 5 (26), Intel (family 6), unknown.
        assert_eq!(for_part(Some((true, 25))), Tile::Narrow);
        assert_eq!(for_part(Some((true, 26))), Tile::Wide);
        assert_eq!(for_part(Some((false, 6))), Tile::Wide);
        assert_eq!(for_part(Some((false, 25))), Tile::Wide);
        assert_eq!(for_part(None), Tile::Wide);
    }

    /// The family decoding on this very machine agrees with what Linux
    /// reports in /proc/cpuinfo (where there is one).
    #[test]
    fn cpuid_family_matches_the_kernel_s() {
        let (Some((_, family)), Ok(info)) =
            (cpu_family(), std::fs::read_to_string("/proc/cpuinfo"))
        else {
            return;
        };
        let listed = info
            .lines()
            .find(|l| l.starts_with("cpu family"))
            .and_then(|l| l.split(':').nth(1))
            .and_then(|v| v.trim().parse::<u32>().ok());
        if let Some(listed) = listed {
            assert_eq!(family, listed);
        }
    }
}
