//! The wgpu backend on whatever adapter wgpu finds (lavapipe in CI).
//!
//! These tests need the crate's `wgpu` feature and a Vulkan, Metal or DX12
//! driver. Where none is present they say so and pass, unless
//! `OXMERA_REQUIRE_GPU=1` is set — as CI sets it after installing lavapipe,
//! so there a missing driver fails the run instead of skipping it.
#![cfg(feature = "wgpu")]

use oxmera_core::{DType, Device, Error};
use oxmera_tensor::{Conv2dParams, Pool2dParams, Tensor, fallback};

mod common;
use common::gpu;

#[test]
fn every_dtype_round_trips_through_device_memory() {
    let Some(d) = gpu() else { return };
    let f = Tensor::from_vec(vec![1.5f32, -0.0, f32::NAN, f32::INFINITY], [4], d).unwrap();
    assert!(f.storage().as_host().is_none(), "device memory, not host");
    let back = f.to_vec::<f32>().unwrap();
    assert_eq!(back[0], 1.5);
    assert!(back[1] == 0.0 && back[1].is_sign_negative());
    assert!(back[2].is_nan() && back[3].is_infinite());
    let i = Tensor::from_vec(vec![i64::MIN, -1, 7], [3], d).unwrap();
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![i64::MIN, -1, 7]);
    // Three bytes: the device pads to whole words, the read-back does not.
    let b = Tensor::from_vec(vec![true, false, true], [3], d).unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), vec![true, false, true]);
    let u = Tensor::from_vec(vec![1u8, 255], [2], d).unwrap();
    assert_eq!(u.to_vec::<u8>().unwrap(), vec![1, 255]);
    let back_home = f.to_device(Device::Reference).unwrap();
    assert_eq!(back_home.device(), Device::Reference);
    let empty = Tensor::zeros([0, 3], DType::F32, d).unwrap();
    assert!(empty.to_vec::<f32>().unwrap().is_empty());
}

#[test]
fn an_op_without_a_kernel_falls_back_visibly() {
    let Some(d) = gpu() else { return };
    // f64 `sin` has no kernel on wgpu (Vulkan has no f64 sin, and the
    // library has no f64 one yet): it runs on the host, and is counted.
    let Ok(a) = Tensor::from_vec(vec![0.0f64, 1.0], [2], d) else {
        return; // an adapter without f64 declines it before any op
    };
    let before = fallback::count(d, "sin");
    let y = a.sin().unwrap();
    assert_eq!(y.device(), d);
    assert_eq!(y.to_vec::<f64>().unwrap(), vec![0.0, 1f64.sin()]);
    assert!(fallback::count(d, "sin") > before);
}

#[test]
fn matmul_runs_on_the_gpu_over_transposed_and_batched_operands() {
    let Some(d) = gpu() else { return };
    let a_host: Vec<f32> = (0..2 * 3 * 4).map(|i| (i as f32 * 0.37).sin()).collect();
    let b_host: Vec<f32> = (0..5 * 4).map(|i| (i as f32 * 0.11).cos()).collect();
    let (a, b) = (
        Tensor::from_vec(a_host.clone(), [2, 3, 4], d).unwrap(),
        Tensor::from_vec(b_host.clone(), [5, 4], d).unwrap(),
    );
    let (ar, br) = (
        Tensor::from_vec(a_host, [2, 3, 4], Device::Reference).unwrap(),
        Tensor::from_vec(b_host, [5, 4], Device::Reference).unwrap(),
    );
    // [2,3,4] @ [4,5]: b read transposed and broadcast over the batch.
    let y = a.matmul(&b.t().unwrap()).unwrap();
    let want = ar.matmul(&br.t().unwrap()).unwrap();
    assert_eq!(y.shape(), want.shape());
    for (g, w) in y
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .zip(want.to_vec::<f32>().unwrap())
    {
        assert!((g - w).abs() <= 1e-5, "{g} vs {w}");
    }
}

#[test]
fn mixing_devices_is_a_typed_error() {
    let Some(d) = gpu() else { return };
    let a = Tensor::zeros([2], DType::F32, d).unwrap();
    let b = Tensor::zeros([2], DType::F32, Device::Reference).unwrap();
    assert!(matches!(a.add(&b), Err(Error::DeviceMismatch { .. })));
}

#[test]
fn the_probe_reports_the_adapter_and_its_subgroup_width() {
    let Some(_) = gpu() else { return };
    let adapters = oxmera_wgpu::probe().unwrap();
    assert!(!adapters.is_empty());
    let a = &adapters[0];
    let (lo, hi) = a.subgroup_sizes;
    assert!(lo >= 1 && lo <= hi, "{a}");
    assert!(a.max_storage_binding >= 1 << 27, "{a}");
    assert!(a.to_string().contains("subgroups"));
}

#[test]
fn the_conformance_corpus_passes_on_the_gpu() {
    let Some(d) = gpu() else { return };
    let report = oxmera_conformance::run(d, None);
    assert!(report.passed(), "{report}");
    assert!(report.native_runs() > 0, "{report}");
}

/// The output of a demo as numbers, read as its element type.
fn values(b: &oxmera_kernel::sim::Buffer) -> Vec<f64> {
    b.to_f64().into_iter().collect()
}

#[test]
fn every_library_kernel_runs_on_the_gpu_as_in_the_simulator() {
    use oxmera_kernel::library;
    use oxmera_kernel::registry::Origin;
    let Some(d) = gpu() else { return };
    let target = oxmera_wgpu::target(d).unwrap();
    for e in library::entries() {
        assert_eq!(e.origin, Origin::Library);
        let k = (e.kernel)();
        let block = k
            .launch
            .blocks
            .first()
            .copied()
            .unwrap_or(oxmera_kernel::ir::Dim3::x(32));
        let demo = library::prepare(e.name, block, 1).expect("a demo");
        let mut on_gpu = demo.args.clone();
        let result = oxmera_wgpu::run(d, k, demo.launch, &mut on_gpu);
        if e.name == "flip" {
            // Its barriers sit under `warp_id() == 0`: fine with warps of
            // 32 at block 32, a divergent barrier with lavapipe's 8.
            if target.warp_width() < 32 {
                let err = result.unwrap_err().to_string();
                assert!(err.contains("OXK001"), "{err}");
                continue;
            }
        }
        // An f64 sibling on an adapter without f64 (Metal, or a masked
        // one) is refused by name before it runs.
        if let Some(t) = target.unsupported_dtype(k) {
            let err = result.unwrap_err().to_string();
            assert!(err.contains(&format!("`{t}`")), "{}: {err}", e.name);
            continue;
        }
        result.unwrap_or_else(|err| panic!("{}: {err}", e.name));
        let got = values(on_gpu[demo.output].buffer().unwrap());
        // The same inputs in the simulator, for the adapter's warp width.
        let mut in_sim = demo.args.clone();
        let opts = oxmera_kernel::sim::SimOptions {
            target,
            ..Default::default()
        };
        oxmera_kernel::sim::run(k, demo.launch, &mut in_sim, &opts).unwrap();
        let sim = values(in_sim[demo.output].buffer().unwrap());
        assert_eq!(got.len(), demo.expected.len(), "{}", e.name);
        for (i, ((g, w), t)) in got
            .iter()
            .zip(&demo.expected)
            .zip(&demo.tolerance)
            .enumerate()
        {
            assert!(
                (g - w).abs() <= *t && !g.is_nan(),
                "{} element {i}: device {g}, host {w} (tolerance {t}), simulator {}",
                e.name,
                sim[i]
            );
        }
    }
}

#[test]
fn a_kernel_with_wrong_arguments_is_refused_before_it_runs() {
    let Some(d) = gpu() else { return };
    let k = oxmera_kernel::library::add();
    let launch = oxmera_kernel::launch::LaunchConfig::linear(1, 64);
    let mut args = vec![oxmera_kernel::sim::Arg::Scalar(
        oxmera_kernel::ir::Value::U32(1),
    )];
    let err = oxmera_wgpu::run(d, k, launch, &mut args).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
}

#[test]
fn a_tensor_past_the_storage_binding_limit_is_a_typed_error() {
    let Some(d) = gpu() else { return };
    let limit = oxmera_wgpu::probe().unwrap()[0].max_storage_binding;
    // One f32 more than a kernel could bind: refused before any buffer is
    // made, with the limit in the message.
    let n = (limit / 4 + 1) as usize;
    for made in [
        Tensor::zeros([n], DType::F32, d),
        Tensor::ones([1, n], DType::I32, d),
    ] {
        match made {
            Err(Error::DeviceFault { reason, .. }) => {
                assert!(reason.contains("storage binding limit"), "{reason}");
                assert!(reason.contains(&limit.to_string()), "{reason}");
            }
            other => panic!("expected a DeviceFault, got {other:?}"),
        }
    }
    // The device is still usable afterwards.
    let x = Tensor::ones([4], DType::F32, d).unwrap();
    assert_eq!(x.sum_all().unwrap().to_vec::<f32>().unwrap(), vec![4.0]);
}

/// The kernel's own exp, ln, tanh and sigmoid on the driver (which may
/// reassociate and contract floats) over sweeps of their domains: within
/// 2 ulp of the correctly rounded result, as in the simulator.
#[test]
fn transcendentals_on_the_device_are_within_two_ulp() {
    let Some(d) = gpu() else { return };
    let positive: Vec<f32> = (0..8_000)
        .map(|i| 2f32.powf(-149.0 + i as f32 * (277.0 / 8_000.0)))
        .chain(sweep(0.9, 1.1, 2_000))
        .collect();
    type Case = (
        &'static str,
        Vec<f32>,
        fn(&Tensor) -> oxmera_core::Result<Tensor>,
        fn(f64) -> f64,
    );
    let cases: [Case; 4] = [
        ("exp", sweep(-87.0, 88.0, 10_000), Tensor::exp, f64::exp),
        ("ln", positive, Tensor::log, f64::ln),
        ("tanh", sweep(-12.0, 12.0, 10_000), Tensor::tanh, f64::tanh),
        (
            "sigmoid",
            sweep(-80.0, 80.0, 10_000),
            Tensor::sigmoid,
            |v| 1.0 / (1.0 + (-v).exp()),
        ),
    ];
    for (name, x, op, want) in cases {
        let t = Tensor::from_vec(x.clone(), [x.len()], d).unwrap();
        let got = op(&t).unwrap().to_vec::<f32>().unwrap();
        for (&v, &g) in x.iter().zip(&got) {
            let w = want(f64::from(v)) as f32;
            let ulps = (ulp_key(g) - ulp_key(w)).abs();
            assert!(
                ulps <= 2,
                "{name}({v:e}) = {g:e} on the device, want {w:e} ({ulps} ulp)"
            );
        }
    }
}

/// Every f16 and bf16 bit pattern through the device's casts: widened to
/// f32 exactly as the host widens, and narrowed back to the same bits.
#[test]
fn every_half_pattern_casts_on_the_device_as_on_the_host() {
    let Some(d) = gpu() else { return };
    for dtype in [DType::F16, DType::BF16] {
        let bits: Vec<u16> = (0..=u16::MAX).collect();
        let host = match dtype {
            DType::F16 => Tensor::from_vec(
                bits.iter()
                    .map(|&b| half::f16::from_bits(b))
                    .collect::<Vec<_>>(),
                [65536],
                Device::Reference,
            ),
            _ => Tensor::from_vec(
                bits.iter()
                    .map(|&b| half::bf16::from_bits(b))
                    .collect::<Vec<_>>(),
                [65536],
                Device::Reference,
            ),
        }
        .unwrap();
        let on_gpu = host.to_device(d).unwrap();
        let casts = fallback::count(d, "cast");
        let wide = on_gpu.to_dtype(DType::F32).unwrap();
        let back = wide.to_dtype(dtype).unwrap();
        assert_eq!(
            fallback::count(d, "cast"),
            casts,
            "{dtype:?}: both casts on the device"
        );
        let want = host.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap();
        let got = wide.to_vec::<f32>().unwrap();
        let round = back.to_device(Device::Reference).unwrap();
        let round: Vec<u16> = match dtype {
            DType::F16 => round
                .to_vec::<half::f16>()
                .unwrap()
                .iter()
                .map(|h| h.to_bits())
                .collect(),
            _ => round
                .to_vec::<half::bf16>()
                .unwrap()
                .iter()
                .map(|h| h.to_bits())
                .collect(),
        };
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            if w.is_nan() {
                assert!(g.is_nan(), "{dtype:?} {i:#06x}");
            } else {
                assert_eq!(g.to_bits(), w.to_bits(), "{dtype:?} {i:#06x}");
                assert_eq!(round[i], i as u16, "{dtype:?} {i:#06x} round trip");
            }
        }
    }
}

/// A tensor op under test.
type UnaryTensorOp = fn(&Tensor) -> Tensor;

/// The functions built on the kernel's exp and ln, swept on the device,
/// against the f64 result rounded once. Measured on lavapipe: 2 ulp at
/// worst for each (log1p at -7.9e-7, SiLU at -15.6, softplus at -13.3);
/// the bound of 3 leaves one rounding for a driver that contracts
/// differently, inside the conformance table's 4 ulp for these functions.
#[test]
fn functions_built_on_exp_and_ln_are_within_their_bounds() {
    let Some(d) = gpu() else { return };
    // log1p where it matters most: |x| from 2^-30 to 1, both signs.
    let tiny: Vec<f32> = (0..4_000)
        .flat_map(|i| {
            let m = 2f32.powf(-30.0 + i as f32 * (30.0 / 4_000.0));
            [m, -m * 0.99]
        })
        .chain(sweep(-0.99, 1e4, 4_000))
        .collect();
    type Case = (
        &'static str,
        Vec<f32>,
        fn(&Tensor) -> oxmera_core::Result<Tensor>,
        fn(f64) -> f64,
        i64,
    );
    let cases: [Case; 3] = [
        ("log1p", tiny, Tensor::log1p, f64::ln_1p, 3),
        (
            "silu",
            sweep(-100.0, 80.0, 10_000),
            Tensor::silu,
            |v| {
                let g = if v >= 0.0 {
                    1.0 / (1.0 + (-v).exp())
                } else {
                    v.exp() / (1.0 + v.exp())
                };
                v * g
            },
            3,
        ),
        (
            "softplus",
            sweep(-100.0, 100.0, 10_000),
            Tensor::softplus,
            |v| v.max(0.0) + (-v.abs()).exp().ln_1p(),
            3,
        ),
    ];
    for (name, x, op, want, bound) in cases {
        let t = Tensor::from_vec(x.clone(), [x.len()], d).unwrap();
        let got = op(&t).unwrap().to_vec::<f32>().unwrap();
        let mut worst = (0i64, 0f32);
        for (&v, &g) in x.iter().zip(&got) {
            let w = want(f64::from(v)) as f32;
            let ulps = (ulp_key(g) - ulp_key(w)).abs();
            if ulps > worst.0 {
                worst = (ulps, v);
            }
        }
        assert!(worst.0 <= bound, "{name}: {} ulp at {:e}", worst.0, worst.1);
    }
}

/// Half-precision ops computed in f32 on the device: no host fallback,
/// and within one unit in the last place of the reference, which computes
/// in f64 and rounds once (the f32 error can only tip a value sitting at a
/// rounding midpoint).
#[test]
fn half_precision_ops_compute_in_f32_on_the_device() {
    let Some(d) = gpu() else { return };
    let values: Vec<f32> = (0..96)
        .map(|i| ((i * 37 % 96) as f32 - 48.0) / 7.0)
        .collect();
    for dtype in [DType::F16, DType::BF16] {
        let x = Tensor::from_vec(values.clone(), [8, 12], Device::Reference)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let ops: [(&str, UnaryTensorOp); 8] = [
            ("matmul", |t| t.matmul(&t.transpose(0, 1).unwrap()).unwrap()),
            // [2, 1, 4, 12] convolved with a 3×3 corner of itself; pooled.
            ("conv2d", |t| {
                let x = t.reshape([2, 1, 4, 12]).unwrap();
                let w = x.narrow(2, 0, 3).unwrap().narrow(3, 0, 3).unwrap();
                x.conv2d(&w, None, Conv2dParams::default()).unwrap()
            }),
            ("max_pool2d", |t| {
                let p = Pool2dParams {
                    kernel: (2, 3),
                    stride: (2, 2),
                    padding: (1, 1),
                };
                t.reshape([2, 1, 4, 12]).unwrap().max_pool2d(p).unwrap()
            }),
            ("avg_pool2d", |t| {
                let p = Pool2dParams {
                    kernel: (2, 2),
                    stride: (2, 2),
                    padding: (0, 0),
                };
                t.reshape([2, 1, 4, 12]).unwrap().avg_pool2d(p).unwrap()
            }),
            ("softmax", |t| t.softmax(1).unwrap()),
            ("exp", |t| t.exp().unwrap()),
            ("sum", |t| t.sum(&[1], false).unwrap()),
            ("mul", |t| t.mul(t).unwrap()),
        ];
        for (name, op) in ops {
            let before = fallback::count(d, name);
            let on_gpu = op(&x.to_device(d).unwrap());
            assert_eq!(
                fallback::count(d, name),
                before,
                "{name} {dtype:?} fell back"
            );
            assert_eq!(on_gpu.dtype(), dtype);
            let got = on_gpu
                .to_dtype(DType::F32)
                .unwrap()
                .to_vec::<f32>()
                .unwrap();
            let want = op(&x)
                .to_dtype(DType::F32)
                .unwrap()
                .to_vec::<f32>()
                .unwrap();
            // One ulp of the half type at `v`: 2^(e - mantissa bits), with
            // e no lower than the type's smallest normal exponent.
            let ulp = |v: f32| {
                let (bits, min_e) = if dtype == DType::F16 {
                    (10.0, -14.0)
                } else {
                    (7.0, -126.0)
                };
                let e = v.abs().max(f32::MIN_POSITIVE).log2().floor().max(min_e);
                2f32.powf(e - bits)
            };
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= ulp(*w), "{name} {dtype:?}: {g} vs {w}");
            }
        }
    }
}

/// Moving half tensors (pad, cat, flip, where, tril, index_select) runs on
/// the device through words and keeps every bit, NaN payloads included.
#[test]
fn half_tensors_move_on_the_device_bit_for_bit() {
    let Some(d) = gpu() else { return };
    // Twelve f16 patterns, a signalling NaN payload and -0.0 among them.
    let bits: [u16; 12] = [
        0x3c00, 0x7c01, 0x8000, 0x0001, 0xfbff, 0x7e55, 0x1234, 0xabcd, 0x7c00, 0x03ff, 0x5555,
        0xc000,
    ];
    let host = Tensor::from_vec(
        bits.iter()
            .map(|&b| half::f16::from_bits(b))
            .collect::<Vec<_>>(),
        [3, 4],
        Device::Reference,
    )
    .unwrap();
    let x = host.to_device(d).unwrap();
    let as_bits = |t: &Tensor| -> Vec<u16> {
        t.to_device(Device::Reference)
            .unwrap()
            .to_vec::<half::f16>()
            .unwrap()
            .iter()
            .map(|h| h.to_bits())
            .collect()
    };
    let cond = Tensor::from_vec(
        (0..12).map(|i| i % 3 == 0).collect::<Vec<_>>(),
        [3, 4],
        Device::Reference,
    )
    .unwrap();
    let index = Tensor::from_vec(vec![2i64, 0, 2], [3], Device::Reference).unwrap();
    let moves: [(&str, MoveOp); 6] = [
        ("pad", |t, _, _| t.pad(&[(1, 0), (0, 2)], -1.5).unwrap()),
        ("cat", |t, _, _| {
            Tensor::cat(&[t, &t.flip(&[0]).unwrap()], 1).unwrap()
        }),
        ("flip", |t, _, _| {
            t.transpose(0, 1).unwrap().flip(&[1]).unwrap()
        }),
        ("where", |t, c, _| {
            Tensor::where_(c, t, &t.flip(&[1]).unwrap()).unwrap()
        }),
        ("tril", |t, _, _| t.tril(-1).unwrap()),
        ("index_select", |t, _, i| t.index_select(0, i).unwrap()),
    ];
    for (name, op) in moves {
        let before = fallback::count(d, name);
        let on_gpu = op(
            &x,
            &cond.to_device(d).unwrap(),
            &index.to_device(d).unwrap(),
        );
        assert_eq!(fallback::count(d, name), before, "{name} fell back");
        // The reference moves values through wider floats and so quiets a
        // signalling NaN; the device moves bits. A NaN for a NaN, and every
        // other pattern exactly.
        let nan = |h: u16| h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
        let want = as_bits(&op(&host, &cond, &index));
        for (g, w) in as_bits(&on_gpu).iter().zip(&want) {
            assert!(
                g == w || (nan(*g) && nan(*w)),
                "{name}: {g:#06x} vs {w:#06x}"
            );
        }
    }
    // A move is exact on the device, payloads included: flipped twice, the
    // tensor's bits are its own.
    let twice = x.flip(&[0, 1]).unwrap().flip(&[1, 0]).unwrap();
    assert_eq!(as_bits(&twice), bits);
}

/// A data-movement op under test: the tensor, a bool condition, indices.
type MoveOp = fn(&Tensor, &Tensor, &Tensor) -> Tensor;

/// An f32's place on the line of floats: consecutive floats differ by 1,
/// so the difference of two keys counts the ulps between them.
fn ulp_key(v: f32) -> i64 {
    let b = v.to_bits() as i64;
    if b >> 31 == 1 { -(b & 0x7fff_ffff) } else { b }
}

/// `n` evenly spaced values from `lo` to `hi`.
fn sweep(lo: f32, hi: f32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| lo + (hi - lo) * i as f32 / (n - 1) as f32)
        .collect()
}

/// Bit counts are exact everywhere: the device's must equal Rust's.
#[oxmera_kernel::kernel(block = [64])]
fn bit_counts(words: &[i32], out: &mut [u32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        let w = words[i];
        out[3 * i] = w.count_ones();
        out[3 * i + 1] = w.leading_zeros();
        out[3 * i + 2] = (w as u32).trailing_zeros();
    }
}

#[test]
fn bit_counts_on_the_device_equal_rusts() {
    use oxmera_kernel::ir::Value;
    use oxmera_kernel::sim::{Arg, Buffer};
    let Some(d) = gpu() else { return };
    let mut words = vec![0i32, 1, -1, i32::MIN, i32::MAX, 0x00f0_0f00, -256, 1 << 30];
    // And a seeded spread of the rest.
    let mut x = 0x9e37_79b9u32;
    while words.len() < 200 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        words.push((x >> (x % 29)) as i32);
    }
    let n = words.len();
    let mut args = vec![
        Arg::Buffer(Buffer::from_i32(&words)),
        Arg::Buffer(Buffer::from_u32(&vec![0; 3 * n])),
        Arg::Scalar(Value::U32(n as u32)),
    ];
    let launch = oxmera_kernel::launch::LaunchConfig::linear(n.div_ceil(64) as u32, 64);
    oxmera_wgpu::run(d, bit_counts(), launch, &mut args).unwrap();
    let want: Vec<u32> = words
        .iter()
        .flat_map(|w| {
            [
                w.count_ones(),
                w.leading_zeros(),
                (*w as u32).trailing_zeros(),
            ]
        })
        .collect();
    assert_eq!(args[1].buffer().unwrap().to_u32(), want);
}

/// The read-modify-writes WGSL spells natively and those it builds from a
/// compare-exchange loop, from 256 threads at once.
#[oxmera_kernel::kernel(block = [64])]
fn contended_atomics(x: &[f32], out_f: &mut [f32], out_u: &mut [u32]) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let v = x[i];
    let w = v.to_bits();
    atomic_min(out_f, 0, v);
    atomic_max(out_f, 1, v);
    atomic_sub(out_u, 0, w);
    atomic_and(out_u, 1, w);
    atomic_or(out_u, 2, w);
    atomic_xor(out_u, 3, w);
    atomic_inc(out_u, 4, 100u32);
}

#[test]
fn contended_atomics_on_the_device_leave_what_the_simulator_leaves() {
    use oxmera_kernel::sim::{Arg, Buffer};
    let Some(d) = gpu() else { return };
    let x: Vec<f32> = (0..256)
        .map(|i| ((i * 97 % 256) as f32 - 128.0) * 0.37)
        .collect();
    let args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_f32(&[f32::INFINITY, f32::NEG_INFINITY])),
        Arg::Buffer(Buffer::from_u32(&[0, u32::MAX, 0, 0, 0])),
    ];
    let launch = oxmera_kernel::launch::LaunchConfig::linear(4, 64);
    let k = contended_atomics();
    let mut on_gpu = args.clone();
    oxmera_wgpu::run(d, k, launch, &mut on_gpu).unwrap();
    let mut in_sim = args;
    oxmera_kernel::sim::run(k, launch, &mut in_sim, &Default::default()).unwrap();
    // Every operation here commutes, so the order the device applied them
    // in cannot change what they leave: the words must be equal.
    for a in [1, 2] {
        assert_eq!(
            on_gpu[a].buffer().unwrap().as_bytes(),
            in_sim[a].buffer().unwrap().as_bytes()
        );
    }
    // 256 increments wrapping past 100: 256 mod 101.
    assert_eq!(on_gpu[2].buffer().unwrap().to_u32()[4], 256 % 101);
}

/// Inclusive loops whose last value is the type's maximum, with a start
/// that differs per thread, so each thread runs its own trip count.
#[oxmera_kernel::kernel(block = [64])]
fn inclusive_to_the_end(starts: &[u32], out: &mut [u32]) {
    let i = thread_idx_x();
    let mut s = 0u32;
    for j in (starts[i]..=u32::MAX).step_by(0x4000_0000) {
        s = s * 7 + (j >> 28);
    }
    out[i] = s;
}

#[test]
fn inclusive_loops_on_the_device_stop_where_rust_stops() {
    use oxmera_kernel::sim::{Arg, Buffer};
    let Some(d) = gpu() else { return };
    let starts: Vec<u32> = (0..64u32).map(|i| i.wrapping_mul(0x0400_0000)).collect();
    let args = vec![
        Arg::Buffer(Buffer::from_u32(&starts)),
        Arg::Buffer(Buffer::from_u32(&[0; 64])),
    ];
    let launch = oxmera_kernel::launch::LaunchConfig::linear(1, 64);
    let mut on_gpu = args.clone();
    oxmera_wgpu::run(d, inclusive_to_the_end(), launch, &mut on_gpu).unwrap();
    let want: Vec<u32> = starts
        .iter()
        .map(|&a| {
            (a..=u32::MAX)
                .step_by(0x4000_0000)
                .fold(0u32, |s, j| s.wrapping_mul(7).wrapping_add(j >> 28))
        })
        .collect();
    assert_eq!(on_gpu[1].buffer().unwrap().to_u32(), want);
    let mut in_sim = args;
    oxmera_kernel::sim::run(
        inclusive_to_the_end(),
        launch,
        &mut in_sim,
        &Default::default(),
    )
    .unwrap();
    assert_eq!(in_sim[1].buffer().unwrap().to_u32(), want);
}

/// The harness turns the tuning cache off before any test opens the
/// adapter: a user's cache (a tile tuned on their GPU, or written by hand)
/// never decides the launches these tests check.
#[test]
fn the_tests_never_read_the_users_tuning_cache() {
    let _ = gpu();
    assert_eq!(oxmera_kernel::tune::cache::default_path(), None);
}
