//! The element types the GEMM multiplies ([`Scalar`]): for each, its
//! micro-kernel per instruction set, its pool of packing buffers and,
//! where the processor has one, its vector transpose for packing.

#[cfg(target_arch = "aarch64")]
use super::neon;
#[cfg(all(target_arch = "x86_64", oxmera_avx512))]
use super::tile;
#[cfg(target_arch = "x86_64")]
use super::x86;
use super::{Kernel, portable};
use crate::Isa;

/// Element types the GEMM multiplies.
pub trait Scalar:
    Copy
    + Send
    + Sync
    + Default
    + PartialEq
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + 'static
{
    /// The micro-kernel for `isa` (the portable one where `isa` has none
    /// for this type, or the processor cannot run it).
    fn kernel(isa: Isa) -> Kernel<Self>;

    /// Runs `f` on this thread's pool of packing buffers for this type.
    fn with_pool<R>(f: impl FnOnce(&mut Vec<Vec<Self>>) -> R) -> R;

    /// Packs `w` lines that are contiguous along the steps with vector
    /// instructions, `out[p * w + i] = data[first + i * across + p]` for
    /// `p < kc`, `i < w`, where this type and processor have them; false,
    /// having written nothing, where they do not (then `pack` moves the
    /// values one by one).
    fn transpose_panel(
        data: &[Self],
        first: usize,
        across: usize,
        kc: usize,
        w: usize,
        out: &mut [Self],
    ) -> bool {
        let _ = (data, first, across, kc, w, out);
        false
    }
}

/// Implements [`Scalar::with_pool`] with a thread-local pool.
macro_rules! buffer_pool {
    ($t:ty) => {
        fn with_pool<R>(f: impl FnOnce(&mut Vec<Vec<Self>>) -> R) -> R {
            thread_local! {
                static POOL: std::cell::RefCell<Vec<Vec<$t>>> =
                    const { std::cell::RefCell::new(Vec::new()) };
            }
            POOL.with_borrow_mut(f)
        }
    };
}

impl Scalar for f32 {
    buffer_pool!(f32);

    fn kernel(isa: Isa) -> Kernel<f32> {
        match isa {
            #[cfg(all(target_arch = "x86_64", oxmera_avx512))]
            Isa::Avx512 if isa.is_available() => tile::kernel_at(tile::avx512_f32_tile()),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2Fma | Isa::Avx512 if Isa::Avx2Fma.is_available() => x86::AVX2_F32,
            #[cfg(target_arch = "aarch64")]
            Isa::Neon if isa.is_available() => neon::NEON_F32,
            _ => portable::F32,
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn transpose_panel(
        data: &[f32],
        first: usize,
        across: usize,
        kc: usize,
        w: usize,
        out: &mut [f32],
    ) -> bool {
        x86::transpose_panel_f32(data, first, across, kc, w, out)
    }
}

impl Scalar for f64 {
    buffer_pool!(f64);

    fn kernel(isa: Isa) -> Kernel<f64> {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2Fma | Isa::Avx512 if Isa::Avx2Fma.is_available() => x86::AVX2_F64,
            _ => portable::F64,
        }
    }
}
