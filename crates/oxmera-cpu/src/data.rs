//! Data movement: contiguous copies and dtype casts, for every dtype.

use half::{bf16, f16};
use oxmera_core::{DType, Device, Layout, Result};
use oxmera_tensor::{
    Distribution, Element, Generator, HostBuffer, Storage, Tensor, with_host_buffer,
};

use crate::{host, strided};

/// `len` copies of `value` in `dtype` (each `Element::from_f64(value)`,
/// as the shared host service converts it), in a buffer recycled from a
/// dropped tensor where the host cache has one, written in parallel.
///
/// Why not the shared service: it builds a fresh vector element by
/// element on one thread, and the buffer it allocated went into the host
/// cache when the tensor was dropped, unused by the next fill. A backward
/// pass asks for zeros of an activation's shape (`relu`'s gradient is
/// `where(x > 0, g, zeros)`): on a 2-vCPU Zen 4 that gradient over
/// `[256, 512]` took 290–330 µs with fresh zeros each step — page faults
/// on memory the operating system zeroes and the cache then holds — and
/// its three parts 8–27 µs each.
pub(crate) fn fill(device: Device, dtype: DType, len: usize, value: f64) -> Storage {
    fn filled<T: Element>(len: usize, value: f64) -> HostBuffer {
        let v = T::from_f64(value);
        let out = match oxmera_tensor::host_cache::take::<T>(len) {
            // Fresh memory comes zeroed: a zero needs no pass.
            None if value.to_bits() == 0 => strided::zeros(len),
            cached => {
                let mut buf = cached.unwrap_or_else(|| strided::zeros(len));
                strided::fill(&mut buf, |_, chunk| chunk.fill(v));
                buf
            }
        };
        T::into_buffer(out)
    }
    Storage::host(device, by_dtype!(dtype, T => filled::<T>(len, value)))
}

/// `len` draws of `dist` from `rng`'s position in `dtype`, the bits of
/// the shared host service ([`oxmera_tensor::random::draw_into`]: each
/// element depends only on its index), drawn in parallel chunks into a
/// buffer from the host cache or fresh memory on huge pages.
///
/// Why not the shared service: it draws on one thread into a plain
/// vector. A large random tensor then sits on 4 KiB pages, whose
/// boundaries stop the hardware prefetchers and each cost a TLB entry:
/// on a 2-vCPU Zen 4, summing a 16M `f32` `randn` read 29–32 GB/s, the
/// same values on huge pages 35–58 GB/s (medians of 200 alternating
/// calls, three runs).
pub(crate) fn random(
    device: Device,
    dist: Distribution,
    rng: Generator,
    len: usize,
    dtype: DType,
) -> Storage {
    fn drawn<T: Element>(dist: Distribution, rng: Generator, len: usize) -> HostBuffer {
        let mut out = strided::output::<T>(len);
        strided::fill(&mut out, |start, chunk| {
            oxmera_tensor::random::draw_into(dist, rng, start as u64, chunk);
        });
        T::into_buffer(out)
    }
    Storage::host(device, by_dtype!(dtype, T => drawn::<T>(dist, rng, len)))
}

/// The elements of `x` in logical order, in its own dtype.
pub(crate) fn to_host(x: &Tensor) -> Result<HostBuffer> {
    let buf = x.storage().as_host().ok_or_else(|| host_error(x))?;
    Ok(with_host_buffer!(buf, v => Element::into_buffer(copy(v, x.layout()))))
}

/// A contiguous copy; a contiguous source is copied in parallel chunks
/// (one thread cannot saturate the memory bus).
fn copy<T: Element>(buf: &[T], layout: &Layout) -> Vec<T> {
    if layout.is_contiguous() {
        let src = crate::host::contiguous_part(buf, layout);
        let mut out = strided::output(src.len());
        strided::fill(&mut out, |start, chunk| {
            chunk.copy_from_slice(&src[start..start + chunk.len()]);
        });
        out
    } else {
        strided::gather(buf, layout)
    }
}

/// Converts `x` to `dtype` by [`Element`]'s rules, exactly as the
/// reference does: float sources go through `f64`, integer and bool
/// sources through `i64` (both exact for the source).
pub(crate) fn cast(x: &Tensor, dtype: DType) -> Result<Storage> {
    let buf = x.storage().as_host().ok_or_else(|| host_error(x))?;
    Ok(with_host_buffer!(buf, v => cast_from(v, x.layout(), dtype)))
}

fn cast_from<S: Element>(buf: &[S], layout: &Layout, dtype: DType) -> Storage {
    match dtype {
        DType::F16 => host::store(convert::<S, f16>(buf, layout)),
        DType::BF16 => host::store(convert::<S, bf16>(buf, layout)),
        DType::F32 => host::store(convert::<S, f32>(buf, layout)),
        DType::F64 => host::store(convert::<S, f64>(buf, layout)),
        DType::I32 => host::store(convert::<S, i32>(buf, layout)),
        DType::I64 => host::store(convert::<S, i64>(buf, layout)),
        DType::U8 => host::store(convert::<S, u8>(buf, layout)),
        DType::Bool => host::store(convert::<S, bool>(buf, layout)),
    }
}

fn convert<S: Element, U: Element>(buf: &[S], layout: &Layout) -> Vec<U> {
    if S::DTYPE.is_float() {
        strided::map1(buf, layout, |s: S| U::from_f64(s.to_f64()))
    } else {
        strided::map1(buf, layout, |s: S| U::from_i64(s.to_i64()))
    }
}

fn host_error(x: &Tensor) -> oxmera_core::Error {
    oxmera_core::Error::DeviceMismatch {
        op: "cpu",
        lhs: oxmera_core::Device::Cpu,
        rhs: x.device(),
    }
}

#[cfg(test)]
mod tests {
    use oxmera_tensor::host_cache;

    use super::*;

    /// A fill served by a recycled buffer writes every element (in debug
    /// builds the recycled contents are NaN, so one left over would show),
    /// and each dtype gets the shared service's conversion of the value.
    #[test]
    fn fill_writes_every_element_of_a_recycled_buffer() {
        let len = (host_cache::MIN_BYTES / 4) * 3 + 7;
        for value in [0.0, -0.0, 2.5, f64::NAN] {
            // A dropped buffer of this exact size, for the fill to take.
            drop(Storage::host(
                Device::Cpu,
                HostBuffer::filled(DType::F32, len, 9.0),
            ));
            let got = fill(Device::Cpu, DType::F32, len, value);
            let got = got.as_host().expect("host").clone();
            let want = HostBuffer::filled(DType::F32, len, value);
            let (got, want) = (
                f32::from_buffer(got).unwrap(),
                f32::from_buffer(want).unwrap(),
            );
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(g, w)| g.to_bits() == w.to_bits()),
                "{value}"
            );
        }
        for dtype in DType::ALL {
            for value in [0.0, 1.0, 3.7, -2.0] {
                let got = fill(Device::Cpu, dtype, 1000, value);
                assert_eq!(
                    got.as_host(),
                    Some(&HostBuffer::filled(dtype, 1000, value)),
                    "{dtype} {value}"
                );
            }
        }
    }

    /// The backend's parallel draw has the shared host service's bits for
    /// every distribution and dtype, short and long (chunked on threads,
    /// the last chunk ragged), from a stream position past zero and into a
    /// recycled buffer (whose stale contents must all be overwritten).
    #[test]
    fn random_draws_the_host_services_bits() {
        let long = 3 * crate::threads::CHUNK + 5;
        let dists = [
            Distribution::Uniform {
                low: -2.0,
                high: 3.0,
            },
            Distribution::Normal {
                mean: 1.0,
                std: 0.5,
            },
            Distribution::Integers { low: -7, high: 90 },
        ];
        for len in [1, 1000, long] {
            for dtype in DType::ALL {
                for dist in dists {
                    let rng = Generator::from_state(42, (1 << 32) - 3);
                    drop(Storage::host(
                        Device::Cpu,
                        HostBuffer::filled(dtype, len, 9.0),
                    ));
                    let got = random(Device::Cpu, dist, rng, len, dtype);
                    let want = oxmera_tensor::random::draw_host(dist, rng, len, dtype);
                    assert_eq!(got.as_host(), Some(&want), "{dtype} {dist:?} {len}");
                }
            }
        }
    }
}
