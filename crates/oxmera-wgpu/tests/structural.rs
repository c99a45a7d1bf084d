//! Casts, gather, scatter, `index_select` and the scans on the device for
//! every dtype it stores as words (f64 aside): equal to the reference
//! (bit for bit where the op is exact), with no host fallback.
#![cfg(feature = "wgpu")]

use oxmera_core::{DType, Device};
use oxmera_tensor::{HostBuffer, Tensor, fallback};
// Links the backend that provides `wgpu:N` devices.
use oxmera_wgpu as _;

mod common;
use common::gpu;

const DTYPES: [DType; 7] = [
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::Bool,
];

/// Twelve values of `dtype` as a `[4, 3]` reference tensor: fractions,
/// signs, saturation and wrapping edges, NaN and infinity for floats.
fn sample(dtype: DType) -> Tensor {
    let buf = if dtype.is_float() {
        HostBuffer::from_f64s(
            dtype,
            [
                0.0,
                -0.0,
                1.5,
                -2.5,
                255.9,
                300.0,
                -129.75,
                65520.0,
                3.0e9,
                -1.0e20,
                f64::NAN,
                f64::INFINITY,
            ],
        )
    } else {
        HostBuffer::from_i64s(
            dtype,
            [
                0,
                1,
                -1,
                255,
                256,
                -129,
                2049,
                65519,
                16_777_217,
                (1 << 25) + (1 << 17),
                (1i64 << 54) + 3,
                i64::MIN,
            ],
        )
    };
    Tensor::from_host(buf, [4, 3], Device::Reference, "test").unwrap()
}

/// The same bits (a NaN for a NaN), element by element.
fn assert_same(got: &Tensor, want: &Tensor, what: &str) {
    let (g, w) = (got.to_host().unwrap(), want.to_host().unwrap());
    assert_eq!(g.dtype(), w.dtype(), "{what}: dtype");
    assert_eq!(g.len(), w.len(), "{what}: length");
    for i in 0..g.len() {
        let (a, b) = (g.get_f64(i), w.get_f64(i));
        let same = (a.is_nan() && b.is_nan())
            || (a.to_bits() == b.to_bits() && g.get_i64(i) == w.get_i64(i));
        assert!(same, "{what}: element {i}: {a} vs {b}");
    }
}

#[test]
fn every_cast_pair_runs_on_the_device_as_the_reference_casts() {
    let Some(d) = gpu() else { return };
    // f64 too where the adapter stores it (lavapipe does): moved as word
    // pairs, converted on the bits; into a half it is the host's.
    let mut dtypes = DTYPES.to_vec();
    if Tensor::zeros([1], DType::F64, d).is_ok() {
        dtypes.push(DType::F64);
    }
    for &from in &dtypes {
        let host = sample(from).t().unwrap();
        let x = host.to_device(d).unwrap();
        for &to in &dtypes {
            let before = fallback::count(d, "cast");
            let got = x.to_dtype(to).unwrap();
            let to_host = from == DType::F64 && matches!(to, DType::F16 | DType::BF16);
            assert_eq!(
                fallback::count(d, "cast") > before,
                to_host,
                "{from:?} -> {to:?}: fell back {}",
                !to_host
            );
            let want = host.to_dtype(to).unwrap();
            assert_same(&got, &want, &format!("{from:?} -> {to:?}"));
        }
    }
}

#[test]
fn gather_scatter_and_index_select_move_every_dtype_on_the_device() {
    let Some(d) = gpu() else { return };
    let index = Tensor::from_vec(vec![2i64, 0, 3, 3, 1, 0], [2, 3], Device::Reference).unwrap();
    let picks = Tensor::from_vec(vec![2i64, 0, 2], [3], Device::Reference).unwrap();
    for dtype in DTYPES {
        let host = sample(dtype);
        let src_host = host.flip(&[0]).unwrap().narrow(0, 0, 2).unwrap();
        let x = host.to_device(d).unwrap();
        let src = src_host.to_device(d).unwrap();
        let (i, p) = (index.to_device(d).unwrap(), picks.to_device(d).unwrap());
        let mut cases: Vec<(&str, Tensor, Tensor)> = vec![
            (
                "gather",
                x.gather(0, &i).unwrap(),
                host.gather(0, &index).unwrap(),
            ),
            (
                "scatter",
                x.scatter(0, &i, &src).unwrap(),
                host.scatter(0, &index, &src_host).unwrap(),
            ),
            (
                "index_select",
                x.t().unwrap().index_select(1, &p).unwrap(),
                host.t().unwrap().index_select(1, &picks).unwrap(),
            ),
        ];
        // The front end refuses scatter-add of bool.
        if dtype != DType::Bool {
            cases.push((
                "scatter_add",
                x.scatter_add(0, &i, &src).unwrap(),
                host.scatter_add(0, &index, &src_host).unwrap(),
            ));
        }
        for (name, got, want) in cases {
            // Halves are added in f32 and rounded once: compare those by
            // value within one half-ulp of the reference's single rounding.
            if name == "scatter_add" && dtype.is_float() && dtype != DType::F32 {
                let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
                let eps = dtype.machine_epsilon().unwrap();
                for (a, b) in g.iter().zip(&w) {
                    assert!(
                        (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= eps * b.abs(),
                        "{name} {dtype:?}: {a} vs {b}"
                    );
                }
            } else {
                assert_same(&got, &want, &format!("{name} {dtype:?}"));
            }
        }
        for name in ["gather", "scatter", "scatter_add", "index_select"] {
            assert_eq!(
                fallback::count(d, name),
                0,
                "{name} {dtype:?} fell back: {:?}",
                fallback::report().for_device(d)
            );
        }
    }
}

#[test]
fn cumsum_and_cumprod_run_on_the_device() {
    let Some(d) = gpu() else { return };
    for dtype in [DType::I32, DType::I64, DType::U8, DType::Bool] {
        let host = sample(dtype).t().unwrap();
        let x = host.to_device(d).unwrap();
        for dim in [0, 1] {
            assert_same(
                &x.cumsum(dim).unwrap(),
                &host.cumsum(dim).unwrap(),
                &format!("cumsum {dtype:?} dim {dim}"),
            );
            assert_same(
                &x.cumprod(dim).unwrap(),
                &host.cumprod(dim).unwrap(),
                &format!("cumprod {dtype:?} dim {dim}"),
            );
        }
    }
    // f32 in order: within the running sum's n·ε·Σ|x| of the reference.
    let v: Vec<f32> = (0..60)
        .map(|k| ((k * 37 % 11) as f32 - 5.0) * 0.37)
        .collect();
    let host = Tensor::from_vec(v, [5, 12], Device::Reference).unwrap();
    let x = host.to_device(d).unwrap();
    let got = x.cumsum(1).unwrap().to_f64_vec().unwrap();
    let want = host.cumsum(1).unwrap().to_f64_vec().unwrap();
    let scale = host.abs().unwrap().cumsum(1).unwrap().to_f64_vec().unwrap();
    for ((g, w), s) in got.iter().zip(&want).zip(&scale) {
        assert!(
            (g - w).abs() <= 13.0 * f64::from(f32::EPSILON) * s,
            "{g} vs {w}"
        );
    }
    // f32 cumprod through f32's underflow and back (the corpus's 1e-40 ·
    // 2e3), within a rounding per step of the reference's f64 product.
    let v: Vec<f32> = vec![1e-40, 2e3, 0.5, -3.0, 1e-30, 1e-30, 1e30, 1e30, 4.0, 0.0];
    let host = Tensor::from_vec(v.clone(), [2, 5], Device::Reference).unwrap();
    let x = host.to_device(d).unwrap();
    let got = x.cumprod(1).unwrap().to_vec::<f32>().unwrap();
    let want = host.cumprod(1).unwrap().to_vec::<f32>().unwrap();
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let steps = (k % 5 + 2) as f32;
        assert!(
            g == w || (g - w).abs() <= steps * f32::EPSILON * w.abs(),
            "cumprod element {k}: {g:e} vs {w:e}"
        );
    }
    assert!(
        want[1] != 0.0 && want[4] == 0.0,
        "the case crosses f32's underflow"
    );
    for name in ["cumsum", "cumprod"] {
        assert_eq!(fallback::count(d, name), 0, "{name} fell back");
    }
}

#[test]
fn logcumsumexp_runs_on_the_device_without_losing_early_elements() {
    let Some(d) = gpu() else { return };
    // Rows whose early elements lie far below their later maximum (a shift
    // by the maximum and one cumsum would make those -∞), -∞ and +∞ and a
    // NaN, through a transposed view.
    let v: Vec<f32> = vec![
        -200.0,
        0.0,
        80.0,
        -1.0,
        3.5, //
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
        -3.0,
        2.0,
        1e-3, //
        1.0,
        f32::INFINITY,
        5.0,
        f32::NAN,
        0.0, //
        -0.5,
        0.25,
        -30.0,
        60.0,
        -60.0,
    ];
    let host = Tensor::from_vec(v, [5, 4], Device::Reference)
        .unwrap()
        .t()
        .unwrap();
    let x = host.to_device(d).unwrap();
    let before = fallback::count(d, "logcumsumexp");
    for (dim, n) in [(1, 5.0), (0, 4.0)] {
        let got = x.logcumsumexp(dim).unwrap().to_f64_vec().unwrap();
        let want = host.logcumsumexp(dim).unwrap().to_f64_vec().unwrap();
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            // The conformance bound n·ε·(6 + |want| + max|x|), max|x| ≤ 200.
            let bound = n * f64::from(f32::EPSILON) * (6.0 + w.abs() + 200.0);
            assert!(
                g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= bound,
                "logcumsumexp dim {dim} element {k}: {g} vs {w}"
            );
        }
        assert_eq!(want[0], -200.0, "the first element stays itself");
    }
    assert_eq!(fallback::count(d, "logcumsumexp"), before, "fell back");
}

#[test]
fn byte_tensors_move_on_the_device() {
    let Some(d) = gpu() else { return };
    for dtype in [DType::U8, DType::Bool] {
        // [3, 4] through a transpose, so every op reads a strided view
        // whose rows are no multiple of four bytes.
        let host = sample(dtype).t().unwrap();
        let x = host.to_device(d).unwrap();
        let cond_host = Tensor::from_vec(
            vec![
                true, false, false, true, true, true, false, false, true, false, true, false,
            ],
            [3, 4],
            Device::Reference,
        )
        .unwrap();
        let cond = cond_host.to_device(d).unwrap();
        let other_host = host.flip(&[1]).unwrap();
        let other = other_host.to_device(d).unwrap();
        let cases: Vec<(&str, Tensor, Tensor)> = vec![
            (
                "contiguous",
                x.contiguous().unwrap(),
                host.contiguous().unwrap(),
            ),
            (
                "cat",
                Tensor::cat(&[&x, &other], 1).unwrap(),
                Tensor::cat(&[&host, &other_host], 1).unwrap(),
            ),
            (
                "flip",
                x.flip(&[0, 1]).unwrap(),
                host.flip(&[0, 1]).unwrap(),
            ),
            (
                // 300 saturates to a u8's 255 and is true for a bool, as
                // the host fills it.
                "pad",
                x.pad(&[(1, 0), (2, 1)], 300.0).unwrap(),
                host.pad(&[(1, 0), (2, 1)], 300.0).unwrap(),
            ),
            ("tril", x.tril(1).unwrap(), host.tril(1).unwrap()),
            ("triu", x.triu(-1).unwrap(), host.triu(-1).unwrap()),
            (
                "where",
                Tensor::where_(&cond, &x, &other).unwrap(),
                Tensor::where_(&cond_host, &host, &other_host).unwrap(),
            ),
        ];
        for (name, got, want) in cases {
            assert_same(&got, &want, &format!("{name} {dtype:?}"));
            assert_eq!(
                fallback::count(d, name),
                0,
                "{name} {dtype:?} fell back: {:?}",
                fallback::report().for_device(d)
            );
        }
    }
}

/// `sort`, `argsort`, `topk`, `kthvalue` and `median` order on the device
/// (the bitonic network) exactly as the reference does — NaN above every
/// number, `-0` equal to `0`, ties in their order, both directions —
/// for every dtype, through a transposed view, with no host fallback;
/// a row of 5000 is padded to 8192.
#[test]
fn sorting_runs_on_the_device_as_on_the_reference() {
    let Some(d) = gpu() else { return };
    let before = fallback::count(d, "sort");
    let mut dtypes = DTYPES.to_vec();
    if Tensor::zeros([1], DType::F64, d).is_ok() {
        dtypes.push(DType::F64);
    }
    let same = |a: &Tensor, b: &Tensor, what: &str| {
        let (x, y) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&x), bits(&y), "{what}");
    };
    for dtype in dtypes {
        let host = sample(dtype);
        let dev = host.to_device(d).unwrap();
        for (h, g) in [
            (host.clone(), dev.clone()),
            (host.t().unwrap(), dev.t().unwrap()),
        ] {
            for down in [false, true] {
                for dim in [0, 1] {
                    let (hv, hi) = h.sort(dim, down).unwrap();
                    let (gv, gi) = g.sort(dim, down).unwrap();
                    same(
                        &gi,
                        &hi,
                        &format!("{dtype} sort indices dim {dim} desc {down}"),
                    );
                    same(
                        &gv,
                        &hv,
                        &format!("{dtype} sort values dim {dim} desc {down}"),
                    );
                }
                let (hv, hi) = h.topk(2, 1, down).unwrap();
                let (gv, gi) = g.topk(2, 1, down).unwrap();
                same(&gi, &hi, &format!("{dtype} topk"));
                same(&gv, &hv, &format!("{dtype} topk values"));
            }
            let (hv, hi) = h.median(0, false).unwrap();
            let (gv, gi) = g.median(0, false).unwrap();
            same(&gi, &hi, &format!("{dtype} median"));
            same(&gv, &hv, &format!("{dtype} median values"));
            let (_, hi) = h.kthvalue(2, 1, true).unwrap();
            let (_, gi) = g.kthvalue(2, 1, true).unwrap();
            same(&gi, &hi, &format!("{dtype} kthvalue"));
        }
    }
    // A long row with many ties: padding and every stage of 8192.
    let v: Vec<f32> = (0..10_000)
        .map(|k| ((k * 7919) % 97) as f32 - 48.0)
        .collect();
    let host = Tensor::from_vec(v, [2, 5_000], Device::Reference).unwrap();
    let got = host.to_device(d).unwrap().argsort(1, true).unwrap();
    same(&got, &host.argsort(1, true).unwrap(), "long argsort");
    assert_eq!(fallback::count(d, "sort"), before, "sort ran on the host");
}

/// Scans along rows longer than a scan kernel's walk (16384) run in
/// chunks carried into each other on the device: integers exactly (they
/// wrap), floats in f64 and rounded once — at most one f32 step from the
/// reference, whose f64 running value adds in another order — through a
/// transposed view, `logcumsumexp` with `−∞` leading (its identity).
#[test]
fn long_scans_run_in_chunks_on_the_device() {
    let Some(d) = gpu() else { return };
    if Tensor::zeros([1], DType::F64, d).is_err() {
        eprintln!("skipped: float scans in chunks need f64");
        return;
    }
    let r = Device::Reference;
    // Every fallback but casts (the cast test above sends f64 into halves to
    // the host on purpose, concurrently).
    let others = || fallback::total(d) - fallback::count(d, "cast");
    let before = others();
    let n = 20_000;
    let ints: Vec<i64> = (0..2 * n as i64)
        .map(|k| (k * 2_654_435_761) % 1_000_003 - 500_000)
        .collect();
    let stored = Tensor::from_vec(ints.clone(), [n, 2], r).unwrap();
    let rows = stored.t().unwrap();
    let dev = rows.to_device(d).unwrap();
    let exact = |got: Tensor, want: Tensor, what: &str| {
        assert_eq!(
            got.to_vec::<i64>().unwrap(),
            want.to_vec::<i64>().unwrap(),
            "{what}"
        );
    };
    exact(
        dev.cumsum(1).unwrap(),
        rows.cumsum(1).unwrap(),
        "i64 cumsum",
    );
    exact(
        dev.cumprod(1).unwrap(),
        rows.cumprod(1).unwrap(),
        "i64 cumprod",
    );
    let narrow = rows.to_dtype(DType::I32).unwrap();
    let got = narrow.to_device(d).unwrap().cumsum(1).unwrap();
    exact(got, narrow.cumsum(1).unwrap(), "i32 cumsum");
    // Floats: sums that cancel, a product near 1, log-sum-exp from −∞.
    let mut f: Vec<f32> = ints.iter().map(|&v| v as f32 / 250_000.0).collect();
    f[0] = f32::NEG_INFINITY;
    f[2] = f32::NEG_INFINITY;
    let x = Tensor::from_vec(f, [n, 2], r).unwrap().t().unwrap();
    let g = x.to_device(d).unwrap();
    let near = |got: Tensor, want: Tensor, what: &str| {
        let (a, b) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        for (i, (p, q)) in a.iter().zip(&b).enumerate() {
            let ulps = (p.to_bits() as i64 - q.to_bits() as i64).abs();
            assert!(
                p == q || ulps <= 1,
                "{what} at {i}: {p} on the device, {q} on the host"
            );
        }
    };
    let finite = x.nan_to_num(0.0, None, Some(0.0)).unwrap();
    let gf = finite.to_device(d).unwrap();
    near(
        gf.cumsum(1).unwrap(),
        finite.cumsum(1).unwrap(),
        "f32 cumsum",
    );
    let factors = finite.mul_scalar(1e-3).unwrap().add_scalar(1.0).unwrap();
    let gp = factors.to_device(d).unwrap();
    near(
        gp.cumprod(1).unwrap(),
        factors.cumprod(1).unwrap(),
        "f32 cumprod",
    );
    near(
        g.logcumsumexp(1).unwrap(),
        x.logcumsumexp(1).unwrap(),
        "f32 logcumsumexp",
    );
    assert_eq!(others(), before, "{:?}", fallback::report());
}
