//! Which instruction set the kernels use: detected once, overridable.
//!
//! The compiler builds this crate for the baseline of the target (SSE2 on
//! x86-64), so wider vectors are used only by code compiled separately for
//! them and chosen at run time. [`isa`] names the choice; it is the best
//! set the processor supports, unless the environment variable
//! `OXMERA_CPU_ISA` (read once) or [`Isa::select`] asks for a lower one —
//! which is how the fallback paths are tested on a machine that does not
//! need them.

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use oxmera_core::{Error, Result};

/// An instruction set the CPU backend has kernels for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Plain Rust, vectorized by the compiler for the target's baseline.
    Portable,
    /// x86-64 with 256-bit AVX2 and fused multiply-add.
    Avx2Fma,
    /// x86-64 with 512-bit AVX-512F (needs a compiler of 1.89 or newer).
    Avx512,
    /// aarch64 with 128-bit NEON.
    Neon,
}

impl Isa {
    /// Every instruction set, from the least to the most capable.
    pub const ALL: [Isa; 4] = [Isa::Portable, Isa::Neon, Isa::Avx2Fma, Isa::Avx512];

    /// The name used by `OXMERA_CPU_ISA` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2Fma => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    /// Whether this processor (and this build) can run the set's kernels.
    pub fn is_available(self) -> bool {
        match self {
            Isa::Portable => true,
            Isa::Avx2Fma => avx2_fma(),
            Isa::Avx512 => avx512() && avx2_fma(),
            Isa::Neon => neon(),
        }
    }

    /// The sets this processor can run, the least capable first.
    pub fn available() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.is_available()).collect()
    }

    /// Makes `self` the set every kernel uses from now on, process-wide.
    ///
    /// Errors: [`Error::InvalidArgument`] if the processor cannot run it.
    pub fn select(self) -> Result<()> {
        if !self.is_available() {
            return Err(Error::invalid(
                "cpu_isa",
                "isa",
                format!(
                    "{self} is not available here (available: {})",
                    names(&Isa::available())
                ),
            ));
        }
        CHOSEN.store(self as u8 + 1, Ordering::Relaxed);
        Ok(())
    }

    fn from_code(code: u8) -> Isa {
        Isa::ALL
            .into_iter()
            .find(|&i| i as u8 + 1 == code)
            .unwrap_or(Isa::Portable)
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// 0 = not chosen yet; otherwise `Isa as u8 + 1`.
static CHOSEN: AtomicU8 = AtomicU8::new(0);

/// The instruction set the kernels use now.
///
/// ```
/// let isa = oxmera_cpu::isa();
/// assert!(isa.is_available());
/// ```
pub fn isa() -> Isa {
    match CHOSEN.load(Ordering::Relaxed) {
        0 => {
            let chosen = *DEFAULT.get_or_init(default_isa);
            // A concurrent `select` wins over the default.
            let _ =
                CHOSEN.compare_exchange(0, chosen as u8 + 1, Ordering::Relaxed, Ordering::Relaxed);
            Isa::from_code(CHOSEN.load(Ordering::Relaxed))
        }
        code => Isa::from_code(code),
    }
}

static DEFAULT: OnceLock<Isa> = OnceLock::new();

/// The best available set, or the one `OXMERA_CPU_ISA` names if it is
/// available (an unknown or unavailable name is reported once on stderr
/// and ignored, rather than failing every operation).
fn default_isa() -> Isa {
    let best = *Isa::available().last().unwrap_or(&Isa::Portable);
    match std::env::var("OXMERA_CPU_ISA") {
        Ok(name) => match Isa::ALL.into_iter().find(|i| i.name() == name) {
            Some(i) if i.is_available() => i,
            _ => {
                eprintln!(
                    "oxmera-cpu: OXMERA_CPU_ISA={name} is not one of the available sets ({}); using {best}",
                    names(&Isa::available())
                );
                best
            }
        },
        Err(_) => best,
    }
}

fn names(isas: &[Isa]) -> String {
    isas.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
}

#[cfg(target_arch = "x86_64")]
fn avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2_fma() -> bool {
    false
}

#[cfg(all(target_arch = "x86_64", oxmera_avx512))]
fn avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

#[cfg(not(all(target_arch = "x86_64", oxmera_avx512)))]
fn avx512() -> bool {
    false
}

#[cfg(target_arch = "aarch64")]
fn neon() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

#[cfg(not(target_arch = "aarch64"))]
fn neon() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_is_always_available_and_codes_round_trip() {
        assert!(Isa::Portable.is_available());
        assert_eq!(Isa::available()[0], Isa::Portable);
        for i in Isa::ALL {
            assert_eq!(Isa::from_code(i as u8 + 1), i);
        }
        assert!(isa().is_available());
    }

    #[test]
    fn an_unavailable_set_is_refused() {
        let missing = Isa::ALL.into_iter().find(|i| !i.is_available());
        if let Some(i) = missing {
            assert!(matches!(i.select(), Err(Error::InvalidArgument { .. })));
        }
    }
}
