//! What is counted per device — host fallbacks and the buffer pool — in a
//! process of its own and one test, so that no other test's work on the
//! same adapter is counted with it.
//!
//! These tests need the crate's `wgpu` feature and a Vulkan, Metal or DX12
//! driver. Where none is present they say so and pass, unless
//! `OXMERA_REQUIRE_GPU=1` is set — as CI sets it after installing lavapipe,
//! so there a missing driver fails the run instead of skipping it.
#![cfg(feature = "wgpu")]

use oxmera_core::{DType, Device};
use oxmera_tensor::{Generator, Tensor, fallback};

mod common;
use common::gpu;

fn a_training_loop_reuses_its_buffers(d: Device) {
    let x = Tensor::from_vec((0..4096).map(|i| i as f32 * 1e-3).collect(), [64, 64], d).unwrap();
    let mut w = Tensor::zeros([64, 64], DType::F32, d).unwrap();
    // The first two steps allocate (the second still holds the first's
    // result while it makes its own); every later one reuses what they freed.
    let step = |w: &Tensor| w.add(&x).unwrap().mul(&x).unwrap().sqrt().unwrap();
    w = step(&w);
    w = step(&w);
    let first = oxmera_wgpu::pool_stats(d).unwrap();
    for _ in 0..10 {
        w = step(&w);
    }
    let after = oxmera_wgpu::pool_stats(d).unwrap();
    assert_eq!(after.misses, first.misses, "later steps made no new buffer");
    assert!(after.hits >= first.hits + 30, "{first:?} -> {after:?}");
    drop(w);
}

fn elementwise_ops_run_on_the_gpu_over_strided_and_broadcast_views(d: Device) {
    let data: Vec<f32> = (0..24).map(|i| (i as f32 - 11.5) * 0.37).collect();
    let host = Tensor::from_vec(data.clone(), [2, 3, 4], Device::Reference).unwrap();
    let x = Tensor::from_vec(data, [2, 3, 4], d).unwrap();
    let row = Tensor::from_vec(vec![0.5f32, -2.0, 3.0, 0.25], [4], d).unwrap();
    let host_row = row.to_device(Device::Reference).unwrap();
    let before = fallback::total(d);
    // A transposed view, a broadcast operand and a chain of unary ops.
    let y = x
        .transpose(0, 2)
        .unwrap()
        .abs()
        .unwrap()
        .sqrt()
        .unwrap()
        .neg()
        .unwrap();
    let z = x
        .mul(&row)
        .unwrap()
        .add(&x)
        .unwrap()
        .square()
        .unwrap()
        .sqrt()
        .unwrap();
    assert_eq!(
        fallback::total(d),
        before,
        "{}",
        fallback::report().for_device(d)
    );
    let want_y = host
        .transpose(0, 2)
        .unwrap()
        .abs()
        .unwrap()
        .sqrt()
        .unwrap()
        .neg()
        .unwrap();
    let want_z = host
        .mul(&host_row)
        .unwrap()
        .add(&host)
        .unwrap()
        .square()
        .unwrap()
        .sqrt()
        .unwrap();
    for (got, want) in [(y, want_y), (z, want_z)] {
        assert_eq!(got.shape(), want.shape());
        let (g, w) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        for (a, b) in g.iter().zip(&w) {
            assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{a} vs {b}");
        }
    }
}

/// Parameter init draws on the device, from the host's stream: `[0, 1)`
/// bit for bit, other bounds within the `f32` map's roundings.
fn uniform_draws_are_native_and_follow_the_hosts_stream(d: Device) {
    let before = fallback::total(d);
    // The counter crosses 2^32 inside the draw.
    let (seed, offset) = (0xC0FF_EE00_1234_5678u64, (1u64 << 32) - 1000);
    let draw = |device| {
        Generator::from_state(seed, offset)
            .rand([3000], DType::F32, device)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    };
    let (got, want) = (draw(d), draw(Device::Reference));
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "rand element {k}: {g} vs {w}");
    }
    // Bounds not exact in f32, as a Linear layer's init draws them.
    let (low, high) = (-0.3f64, 0.3f64);
    let draw = |device| {
        Generator::from_state(7, 123)
            .uniform([1 << 16], low, high, DType::F32, device)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    };
    let (got, want) = (draw(d), draw(Device::Reference));
    for (g, w) in got.iter().zip(&want) {
        // The device maps u (exact) by low' + (high' - low')·u in f32, with
        // low' and high' the bounds rounded to f32: 2^-24·(|low| + |high|)
        // from those, 2^-24·3|high - low| from the three roundings of the
        // map, 2^-24·|x| from the host's own rounding of its f64 value.
        let x = f64::from(*w).abs();
        let bound = 2f64.powi(-24) * (low.abs() + high.abs() + 3.0 * (high - low) + 2.0 * x);
        assert!((f64::from(*g) - f64::from(*w)).abs() <= bound, "{g} vs {w}");
    }
    assert_eq!(
        fallback::total(d),
        before,
        "{}",
        fallback::report().for_device(d)
    );
}

/// Copies, pads, concatenations and flips of 4- and 8-byte dtypes run on
/// the device (one word-copy kernel) and equal the host's exactly.
fn moving_ops_run_natively_for_wide_dtypes(d: Device) {
    let before = fallback::total(d);
    for dtype in [DType::F32, DType::I32, DType::I64, DType::F64] {
        let host = Tensor::arange(-5.0, 19.0, 1.0, dtype, Device::Reference)
            .unwrap()
            .reshape([2, 3, 4])
            .unwrap();
        let x = host.to_device(d).unwrap();
        // Each op on a strided view (a transpose), as the host would see it.
        let ops = |t: &Tensor| -> Vec<Tensor> {
            let v = t.transpose(0, 2).unwrap();
            vec![
                v.contiguous().unwrap(),
                v.pad(&[(1, 0), (0, 2), (1, 1)], -7.0).unwrap(),
                Tensor::cat(&[&v, &t.permute(&[2, 1, 0]).unwrap()], 1).unwrap(),
                v.flip(&[0, 2]).unwrap(),
            ]
        };
        for (got, want) in ops(&x).iter().zip(ops(&host)) {
            assert_eq!(got.shape(), want.shape(), "{dtype}");
            assert_eq!(
                got.to_device(Device::Reference)
                    .unwrap()
                    .to_f64_vec()
                    .unwrap(),
                want.to_f64_vec().unwrap(),
                "{dtype}"
            );
        }
    }
    assert_eq!(
        fallback::total(d),
        before,
        "{}",
        fallback::report().for_device(d)
    );
}

/// A chain of ops with no read-back is recorded and submitted in batches,
/// not one submission a launch, and its result is right.
fn launches_are_submitted_in_batches(d: Device) {
    let before = oxmera_wgpu::queue_stats(d).unwrap();
    let mut x = Tensor::ones([1000], DType::F32, d).unwrap();
    for _ in 0..200 {
        x = x.add_scalar(1.0).unwrap();
    }
    let after = oxmera_wgpu::queue_stats(d).unwrap();
    let launches = after.launches - before.launches;
    let submissions = after.submissions - before.submissions;
    assert!(launches >= 200, "{before:?} -> {after:?}");
    assert!(
        submissions * 16 <= launches,
        "{launches} launches in {submissions} submissions"
    );
    assert!(x.to_vec::<f32>().unwrap().iter().all(|&v| v == 201.0));
}

#[test]
fn native_ops_do_not_fall_back_and_a_training_loop_reuses_its_buffers() {
    let Some(d) = gpu() else { return };
    launches_are_submitted_in_batches(d);
    moving_ops_run_natively_for_wide_dtypes(d);
    elementwise_ops_run_on_the_gpu_over_strided_and_broadcast_views(d);
    uniform_draws_are_native_and_follow_the_hosts_stream(d);
    a_training_loop_reuses_its_buffers(d);
}
