//! Seeded, counter-based random numbers (Philox4x32-10).
//!
//! A counter-based generator computes the `i`-th random word directly from
//! `(seed, i)` with a small keyed bijection, instead of stepping a state
//! from one number to the next. So element `i` of a random tensor is the
//! same whichever backend fills it, in whatever order, on however many
//! threads. Philox4x32-10 is the generator of Salmon et al., "Parallel
//! random numbers: as easy as 1, 2, 3" (SC'11), also used by cuRAND and
//! PyTorch's CUDA backend; it passes the BigCrush test battery.
//!
//! # What a device computes, and how close it must be
//!
//! Random tensors are made by the device's [`crate::Backend::random`]
//! service, so a GPU draws them where they will be used. Element `i` of a
//! draw at stream offset `o` uses the block
//! `philox4x32_10([c as u32, (c >> 32) as u32, 0, 0], [seed as u32, (seed >> 32) as u32])`
//! with `c = o + i`; every backend must produce exactly these blocks (they
//! are integer arithmetic). From a block's words `w`:
//!
//! - uniform: `u = unit(w0, w1)` (53 bits, [`unit_f64`]), value
//!   `low + (high - low)·u`;
//! - normal: Box–Muller, `u1 = 1 - unit(w0, w1)`, `u2 = unit(w2, w3)`,
//!   value `mean + std·sqrt(-2 ln u1)·cos(2π u2)`;
//! - integers: `(w1·2^32 + w0) mod (high - low) + low`, exact.
//!
//! The host evaluates the float transforms in `f64` and rounds once. A
//! device without `f64` (WGSL, most consumer GPUs at speed) evaluates them
//! in `f32`, which cannot give the same values in every case; the
//! contract, checked by this module's tests over 2^20 draws with the `f32`
//! recipes written there:
//!
//! - `rand` (`[0, 1)`): `u = min(f32(w1)·2^-32 + f32(w0)·2^-64, 1 - 2^-24)`
//!   in `f32` arithmetic (the low word matters: without it, values below
//!   2^-8 keep fewer than 24 significant bits) agrees with the host's `f32`
//!   value within 1 ulp. Other bounds add the three roundings
//!   of the `f32` map `low + (high - low)·u`.
//! - `randn`: Box–Muller in `f32`, with `u1 = 1 - u` formed from the
//!   complemented words, `min(f32(!w1)·2^-32 + f32((!w0 >> 11) + 1)·2^-53, 1)`
//!   (a subtraction `1 - u` in `f32` loses all relative accuracy of `u1`
//!   when `u` is near 1: 2.3e-3 measured over 2^20 draws, about 0.1 at
//!   the extreme `u1 = 2^-24`), agrees
//!   with the host within `2^-12` absolute. The bound comes from `u1` near
//!   1, where `ln u1` keeps only `u1`'s absolute accuracy (`2^-25`) and
//!   the square root turns `2^-24` in `-2 ln u1` into about `2^-12.5`
//!   near zero; elsewhere the rounding of the cosine's argument gives at
//!   most about `2^-18`. Measured over the test's 2^20 draws: `3.0e-5`.
//!
//! Seeded host values are unchanged by the device seam: the contract is
//! stated for devices rather than moving the host to an `f32` transform
//! and changing every seeded run.

use oxmera_core::{DType, Device, Error, Result, Shape};

use crate::storage::by_dtype;
use crate::{Distribution, Element, HostBuffer, Tensor};

pub use oxmera_core::{philox4x32_10, unit_f64};

/// A seeded stream of random tensors. Its whole state is `(seed, offset)`:
/// each draw of `n` elements uses counters `offset..offset + n` and then
/// advances `offset`, so saving and restoring the pair resumes the stream
/// exactly (checkpoints store it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generator {
    seed: u64,
    offset: u64,
}

impl Generator {
    /// A generator at the start of the stream for `seed`.
    pub fn new(seed: u64) -> Self {
        Generator { seed, offset: 0 }
    }

    /// A generator at a given position of the stream for `seed`.
    pub fn from_state(seed: u64, offset: u64) -> Self {
        Generator { seed, offset }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// How many elements have been drawn so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Draws `shape` from `dist` on `device`'s random service and advances
    /// the stream by the element count.
    fn draw(
        &mut self,
        dist: Distribution,
        shape: impl Into<Shape>,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        let op = dist.name();
        let shape = shape.into();
        let n = crate::tensor::probe_result(op, &shape, dtype, device)?;
        let backend = crate::tensor::backend_storing(device, op, dtype)?;
        let storage = backend.random(dist, *self, n, dtype)?;
        self.offset = self.offset.wrapping_add(n as u64);
        Ok(Tensor::from_storage(storage, shape))
    }

    /// Uniform values in `[low, high)` (before rounding to `dtype`, which
    /// for `f16`/`bf16` may land on `high`).
    pub fn uniform(
        &mut self,
        shape: impl Into<Shape>,
        low: f64,
        high: f64,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        float_only("uniform", dtype)?;
        if !low.is_finite() || !high.is_finite() || low >= high {
            return Err(Error::invalid(
                "uniform",
                "range",
                format!("need finite low < high, got {low}..{high}"),
            ));
        }
        self.draw(Distribution::Uniform { low, high }, shape, dtype, device)
    }

    /// Uniform values in `[0, 1)`.
    pub fn rand(
        &mut self,
        shape: impl Into<Shape>,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        self.uniform(shape, 0.0, 1.0, dtype, device)
    }

    /// Normal values with mean `mean` and standard deviation `std`
    /// (Box–Muller on two independent uniforms per element).
    pub fn normal(
        &mut self,
        shape: impl Into<Shape>,
        mean: f64,
        std: f64,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        float_only("normal", dtype)?;
        if !std.is_finite() || !mean.is_finite() || std < 0.0 {
            return Err(Error::invalid(
                "normal",
                "std",
                format!("need finite mean and std >= 0, got mean {mean}, std {std}"),
            ));
        }
        self.draw(Distribution::Normal { mean, std }, shape, dtype, device)
    }

    /// Standard normal values.
    pub fn randn(
        &mut self,
        shape: impl Into<Shape>,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        self.normal(shape, 0.0, 1.0, dtype, device)
    }

    /// Integers uniform in `[low, high)`, by reducing a 64-bit word modulo
    /// the range (bias below `range / 2^64`, far below any test's reach),
    /// converted to `dtype` as a cast from `i64` would.
    pub fn randint(
        &mut self,
        shape: impl Into<Shape>,
        low: i64,
        high: i64,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        if low >= high {
            return Err(Error::invalid(
                "randint",
                "range",
                format!("need low < high, got {low}..{high}"),
            ));
        }
        self.draw(Distribution::Integers { low, high }, shape, dtype, device)
    }
}

/// The Philox block for element `i` of a draw from `rng`'s position.
fn block(rng: Generator, i: u64) -> [u32; 4] {
    let c = rng.offset.wrapping_add(i);
    philox4x32_10(
        [c as u32, (c >> 32) as u32, 0, 0],
        [rng.seed as u32, (rng.seed >> 32) as u32],
    )
}

/// The host's draw of `len` values of `dist` from `rng`'s position, in
/// `dtype`: the definition every device's random service reproduces.
pub fn draw_host(dist: Distribution, rng: Generator, len: usize, dtype: DType) -> HostBuffer {
    fn build<T: Element>(dist: Distribution, rng: Generator, len: usize) -> HostBuffer {
        let mut values = vec![T::from_f64(0.0); len];
        draw_into(dist, rng, 0, &mut values);
        T::into_buffer(values)
    }
    by_dtype!(dtype, build(dist, rng, len))
}

/// Elements `start..start + out.len()` of the host's draw of `dist` from
/// `rng`'s position ([`draw_host`]), written into `out`: each element
/// depends only on its index, so a host backend may fill a large draw in
/// chunks, on several threads, in its own memory, with the same bits.
/// Float values are converted with [`Element::from_f64`], integers with
/// [`Element::from_i64`], as [`HostBuffer::from_f64s`] and
/// [`HostBuffer::from_i64s`] convert them.
pub fn draw_into<T: Element>(dist: Distribution, rng: Generator, start: u64, out: &mut [T]) {
    // The distribution is matched once, outside the element loop.
    let blocks = out
        .iter_mut()
        .enumerate()
        .map(|(j, o)| (o, block(rng, start.wrapping_add(j as u64))));
    match dist {
        Distribution::Uniform { low, high } => {
            for (o, w) in blocks {
                *o = T::from_f64(low + (high - low) * unit_f64(w[0], w[1]));
            }
        }
        Distribution::Normal { mean, std } => {
            for (o, w) in blocks {
                // 1 - u lies in (0, 1], so the log is finite.
                let u1 = 1.0 - unit_f64(w[0], w[1]);
                let u2 = unit_f64(w[2], w[3]);
                *o = T::from_f64(
                    mean + std * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos(),
                );
            }
        }
        Distribution::Integers { low, high } => {
            let range = high.abs_diff(low);
            for (o, w) in blocks {
                let r = ((u64::from(w[1]) << 32) | u64::from(w[0])) % range;
                *o = T::from_i64(low.wrapping_add(r as i64));
            }
        }
    }
}

/// `start + i·step` for `i` in `0..len`, computed in `f64`, in `dtype`:
/// the host's definition of the arange service.
pub fn arange_host(start: f64, step: f64, len: usize, dtype: DType) -> HostBuffer {
    HostBuffer::from_f64s(dtype, (0..len).map(|i| start + i as f64 * step))
}

fn float_only(op: &'static str, dtype: DType) -> Result<()> {
    if dtype.is_float() {
        Ok(())
    } else {
        Err(Error::UnsupportedDType {
            op,
            dtype,
            hint: "use randint for integers",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `f32` recipe the module docs give a device for a uniform value
    /// from a pair of words (the host's `unit_f64(lo, hi)`).
    fn unit_f32(lo: u32, hi: u32) -> f32 {
        let u = hi as f32 * 2f32.powi(-32) + lo as f32 * 2f32.powi(-64);
        u.min(1.0 - 2f32.powi(-24))
    }

    /// The `f32` Box–Muller the module docs bound, with `u1 = 1 - u`
    /// formed from the complemented words rather than by a subtraction.
    fn randn_f32(w: [u32; 4]) -> f32 {
        let tail = ((!w[0] >> 11) + 1) as f32 * 2f32.powi(-53);
        let u1 = (!w[1] as f32 * 2f32.powi(-32) + tail).min(1.0);
        let u2 = unit_f32(w[2], w[3]);
        (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
    }

    /// The distance in `f32` steps between two finite `f32` values of the
    /// same sign.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn an_f32_device_meets_the_stated_contract() {
        let rng = Generator::new(2026);
        let n = 1 << 20;
        let host_u = draw_host(
            Distribution::Uniform {
                low: 0.0,
                high: 1.0,
            },
            rng,
            n,
            DType::F32,
        );
        let host_n = draw_host(
            Distribution::Normal {
                mean: 0.0,
                std: 1.0,
            },
            rng,
            n,
            DType::F32,
        );
        let (mut worst_u, mut worst_abs) = (0u32, 0f64);
        for i in 0..n {
            let w = block(rng, i as u64);
            let (hu, hn) = (host_u.get_f64(i) as f32, host_n.get_f64(i) as f32);
            worst_u = worst_u.max(ulps(unit_f32(w[0], w[1]), hu));
            let err = (f64::from(randn_f32(w)) - f64::from(hn)).abs();
            worst_abs = worst_abs.max(err);
        }
        assert!(worst_u <= 1, "rand: {worst_u} ulps");
        assert!(worst_abs <= 2f64.powi(-12), "randn: {worst_abs:e} absolute");
    }
}
