//! The CPU backend against the reference, op family by op family, on every
//! layout class, on zero-size and size-1 dims, and on special values.
//!
//! Tolerances come from each kernel's error analysis (stated at each use),
//! in units of the output's own spacing (`ulp`) or of the standard bound
//! of a sum, `n·u·Σ|terms|`. Ops that are exactly rounded in both backends
//! must agree bit for bit.

mod common;

use common::*;
use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{Conv2dParams, Generator, Pool2dParams, Tensor, no_grad};

const FLOATS: [DType; 2] = [DType::F32, DType::F64];

/// Shapes with ordinary, size-1 and zero-size dims.
const SHAPES: [&[usize]; 5] = [&[3, 5, 4], &[1, 7], &[2, 1, 33], &[0, 3], &[4, 0, 2]];

type Op = fn(&Tensor) -> Result<Tensor>;
type Op2 = fn(&Tensor, &Tensor) -> Result<Tensor>;

/// Unary ops that are exactly rounded (or exact) in both backends.
const EXACT_UNARY: [(&str, Op); 13] = [
    ("neg", |t| t.neg()),
    ("abs", |t| t.abs()),
    ("sign", |t| t.sign()),
    ("sqrt", |t| t.sqrt()),
    ("recip", |t| t.recip()),
    ("square", |t| t.square()),
    ("relu", |t| t.relu()),
    ("leaky_relu", |t| t.leaky_relu(0.01)),
    ("floor", |t| t.floor()),
    ("ceil", |t| t.ceil()),
    ("round", |t| t.round()),
    ("clamp", |t| t.clamp(Some(-0.5), Some(0.7))),
    ("clamp_max", |t| t.clamp(None, Some(0.3))),
];

/// Unary ops both backends evaluate in `f64` and round once: the two
/// `f64` values may differ by a few `f64` ulps (different formulas or
/// libm paths), which can move the `f32` rounding by one step at most —
/// so one `ulp` of the output.
const F64_UNARY: [(&str, Op); 13] = [
    ("log", |t| t.log()),
    ("log1p", |t| t.log1p()),
    ("rsqrt", |t| t.rsqrt()),
    ("sin", |t| t.sin()),
    ("cos", |t| t.cos()),
    ("tanh", |t| t.tanh()),
    ("sigmoid", |t| t.sigmoid()),
    ("silu", |t| t.silu()),
    ("gelu_tanh", |t| t.gelu_tanh()),
    ("softplus", |t| t.softplus()),
    ("erf", |t| t.erf()),
    ("powf", |t| t.powf(2.5)),
    ("powf_neg", |t| t.powf(-1.5)),
];

/// Every operand the elementwise tests run on: each layout class of each
/// shape, plus the special values.
fn operands(dtype: DType) -> Vec<(String, Tensor)> {
    let mut v = Vec::new();
    for (si, shape) in SHAPES.iter().enumerate() {
        for (li, class) in LAYOUTS.iter().enumerate() {
            let t = operand((si * 10 + li) as u64, shape, class, dtype).unwrap();
            v.push((format!("{dtype} {shape:?} {class}"), t));
        }
    }
    v.push((
        format!("{dtype} scalar"),
        operand(99, &[], "contiguous", dtype).unwrap(),
    ));
    let s = specials(48, dtype).unwrap();
    v.push((format!("{dtype} specials"), s.clone()));
    // Specials seen through a stepped, reshaped view.
    let stepped = s.slice(0, 1, 48, 2).unwrap().reshape([4, 6]).unwrap();
    v.push((format!("{dtype} specials stepped"), stepped));
    v
}

#[test]
fn unary_ops_on_every_layout_and_special_value() {
    for dtype in FLOATS {
        for (what, x) in operands(dtype) {
            let rx = on_reference(&x);
            for (name, op) in EXACT_UNARY {
                assert_exact(
                    &format!("{name} {what}"),
                    &op(&x).unwrap(),
                    &op(&rx).unwrap(),
                );
            }
            for (name, op) in F64_UNARY {
                assert_close(
                    &format!("{name} {what}"),
                    &op(&x).unwrap(),
                    &op(&rx).unwrap(),
                    |_, w| ulp(w, dtype),
                );
            }
            // exp: f32 runs the vectorized polynomial, measured within 2
            // ulps over the whole range (and one subnormal step below
            // it, which `ulp` also gives there); f64 runs libm's exp.
            let bound = if dtype == DType::F32 { 2.0 } else { 1.0 };
            assert_close(
                &format!("exp {what}"),
                &x.exp().unwrap(),
                &rx.exp().unwrap(),
                |_, w| bound * ulp(w, dtype),
            );
            // Exact GELU: f64 rounds the reference's function once; f32
            // runs Abramowitz and Stegun's erfc (absolute error 1.5e-7)
            // with the vectorized exp, held to the conformance suite's
            // bound for GELU, ε·|want| + 4ε·(|want| + |x|): every
            // evaluation of x·(1 + erf(x/√2))/2 cancels, so the error
            // scales with |x| (crates/oxmera-conformance's tolerance
            // table; the kernel's own sweep measured 0.175 of it).
            let xs = x.to_f64_vec().unwrap();
            assert_close(
                &format!("gelu {what}"),
                &x.gelu().unwrap(),
                &rx.gelu().unwrap(),
                |i, w| {
                    if dtype == DType::F32 {
                        let eps = f64::from(f32::EPSILON);
                        ulp(w, dtype).max(eps * w.abs() + 4.0 * eps * (w.abs() + xs[i].abs()))
                    } else {
                        ulp(w, dtype)
                    }
                },
            );
        }
    }
}

#[test]
fn binary_ops_comparisons_and_where_with_broadcasting() {
    let exact: [(&str, Op2); 6] = [
        ("add", |a, b| a.add(b)),
        ("sub", |a, b| a.sub(b)),
        ("mul", |a, b| a.mul(b)),
        ("div", |a, b| a.div(b)),
        ("maximum", |a, b| a.maximum(b)),
        ("minimum", |a, b| a.minimum(b)),
    ];
    // pow and rem: f64 evaluation rounded once in both (see F64_UNARY).
    let rounded: [(&str, Op2); 2] = [("pow", |a, b| a.pow(b)), ("rem", |a, b| a.rem(b))];
    let compare: [(&str, Op2); 6] = [
        ("eq", |a, b| a.eq(b)),
        ("ne", |a, b| a.ne(b)),
        ("lt", |a, b| a.lt(b)),
        ("le", |a, b| a.le(b)),
        ("gt", |a, b| a.gt(b)),
        ("ge", |a, b| a.ge(b)),
    ];
    for dtype in FLOATS {
        let mut pairs = Vec::new();
        let shapes: [(&[usize], &[usize]); 5] = [
            (&[4, 6], &[4, 6]),
            (&[3, 1, 5], &[4, 5]),
            (&[2, 3], &[]),
            (&[0, 3], &[1, 3]),
            (&[1, 9], &[7, 1]),
        ];
        for (i, (sa, sb)) in shapes.iter().enumerate() {
            for (j, class) in LAYOUTS.iter().enumerate() {
                let a = operand((i * 7 + j) as u64, sa, class, dtype).unwrap();
                let b = operand((i * 7 + j + 100) as u64, sb, LAYOUTS[(j + 2) % 5], dtype).unwrap();
                pairs.push((format!("{dtype} {sa:?}{class} {sb:?}"), a, b));
            }
        }
        // Every special value against every other one (and itself).
        let s = specials(16, dtype).unwrap();
        let a = s.reshape([16, 1]).unwrap();
        let b = s.reshape([1, 16]).unwrap();
        pairs.push((format!("{dtype} specials outer"), a, b));
        for (what, a, b) in pairs {
            let (ra, rb) = (on_reference(&a), on_reference(&b));
            for (name, op) in exact {
                assert_exact(
                    &format!("{name} {what}"),
                    &op(&a, &b).unwrap(),
                    &op(&ra, &rb).unwrap(),
                );
            }
            for (name, op) in rounded {
                assert_close(
                    &format!("{name} {what}"),
                    &op(&a, &b).unwrap(),
                    &op(&ra, &rb).unwrap(),
                    |_, w| ulp(w, dtype),
                );
            }
            for (name, op) in compare {
                assert_exact(
                    &format!("{name} {what}"),
                    &op(&a, &b).unwrap(),
                    &op(&ra, &rb).unwrap(),
                );
            }
            let cond = a.gt(&b).unwrap();
            let rcond = ra.gt(&rb).unwrap();
            let a_b = a.broadcast_to(cond.shape().clone()).unwrap();
            let b_b = b.broadcast_to(cond.shape().clone()).unwrap();
            let ra_b = ra.broadcast_to(cond.shape().clone()).unwrap();
            let rb_b = rb.broadcast_to(cond.shape().clone()).unwrap();
            assert_exact(
                &format!("where {what}"),
                &Tensor::where_(&cond, &b_b, &a_b).unwrap(),
                &Tensor::where_(&rcond, &rb_b, &ra_b).unwrap(),
            );
        }
    }
}

#[test]
fn reductions_on_every_layout() {
    let dim_sets: [&[isize]; 6] = [&[0], &[1], &[2], &[0, 2], &[0, 1, 2], &[]];
    for dtype in FLOATS {
        for shape in [&[5usize, 7, 9][..], &[1, 300, 2], &[3, 0, 2], &[2, 2, 1]] {
            for (li, class) in LAYOUTS.iter().enumerate() {
                let x = operand(li as u64 + 40, shape, class, dtype).unwrap();
                let rx = on_reference(&x);
                let abs = rx.abs().unwrap();
                let sq = rx.square().unwrap();
                for dims in dim_sets {
                    let what = format!("{dtype} {shape:?} {class} dims {dims:?}");
                    let n: usize = if dims.is_empty() {
                        1
                    } else {
                        dims.iter().map(|&d| shape[d as usize]).product()
                    };
                    // Sums: the reference accumulates in f64; the cpu
                    // backend sums f32 in 16-term f32 leaves carried in
                    // f64 (`vmath::sum_f32`: each term meets at most 15
                    // f32 roundings, 15·u32·Σ|x|) and f64 pairwise or in
                    // lanes, in other orders; each f64 sum is within
                    // n·u64·Σ|x| of the exact one. Then one rounding to
                    // the output, which the two may take to neighbouring
                    // values: one ulp.
                    let u64_ = f64::powi(2.0, -53);
                    let leaf = if dtype == DType::F32 {
                        15.0 * f64::powi(2.0, -24)
                    } else {
                        0.0
                    };
                    let sabs = abs.sum(dims, false).unwrap().to_f64_vec().unwrap();
                    let tol_sum =
                        |i: usize, w: f64| ulp(w, dtype) + (leaf + 2.0 * n as f64 * u64_) * sabs[i];
                    assert_close(
                        &format!("sum {what}"),
                        &x.sum(dims, false).unwrap(),
                        &rx.sum(dims, false).unwrap(),
                        tol_sum,
                    );
                    if n > 0 {
                        let tol_mean = |i: usize, w: f64| {
                            ulp(w, dtype) + (leaf / n as f64 + 2.0 * u64_) * sabs[i]
                        };
                        assert_close(
                            &format!("mean {what}"),
                            &x.mean(dims, true).unwrap(),
                            &rx.mean(dims, true).unwrap(),
                            tol_mean,
                        );
                        // Max and min select an element: exact.
                        assert_exact(
                            &format!("max {what}"),
                            &x.max(dims, false).unwrap(),
                            &rx.max(dims, false).unwrap(),
                        );
                        assert_exact(
                            &format!("min {what}"),
                            &x.min(dims, false).unwrap(),
                            &rx.min(dims, false).unwrap(),
                        );
                        // Variance, two-pass in f64 in both: the error of
                        // the sum of squares, n·u64·Σx², over the divisor.
                        let ssq = sq.sum(dims, false).unwrap().to_f64_vec().unwrap();
                        let div = (n as f64 - 1.0).max(1.0);
                        let var_err = |i: usize| 8.0 * n as f64 * u64_ * ssq[i] / div;
                        assert_close(
                            &format!("var {what}"),
                            &x.var(dims, 1.0, false).unwrap(),
                            &rx.var(dims, 1.0, false).unwrap(),
                            |i, w| ulp(w, dtype) + var_err(i),
                        );
                        // std = sqrt(var): the var error over 2·std.
                        assert_close(
                            &format!("std {what}"),
                            &x.std(dims, 1.0, false).unwrap(),
                            &rx.std(dims, 1.0, false).unwrap(),
                            |i, w| {
                                ulp(w, dtype)
                                    + if w > 0.0 {
                                        var_err(i) / (2.0 * w)
                                    } else {
                                        var_err(i).sqrt()
                                    }
                            },
                        );
                        // logsumexp: the relative error of an f64 sum of
                        // n terms is n·u64, an absolute error of ln(sum).
                        assert_close(
                            &format!("logsumexp {what}"),
                            &x.logsumexp(dims, false).unwrap(),
                            &rx.logsumexp(dims, false).unwrap(),
                            |_, w| ulp(w, dtype) + 4.0 * n as f64 * u64_ * (1.0 + w.abs()),
                        );
                        // prod is delegated to the reference: exact.
                        assert_exact(
                            &format!("prod {what}"),
                            &x.prod(dims, false).unwrap(),
                            &rx.prod(dims, false).unwrap(),
                        );
                    }
                }
                if x.numel() > 0 {
                    for d in 0..shape.len() as isize {
                        if shape[d as usize] == 0 {
                            continue;
                        }
                        let what = format!("{dtype} {shape:?} {class} dim {d}");
                        assert_exact(
                            &format!("argmax {what}"),
                            &x.argmax(d, false).unwrap(),
                            &rx.argmax(d, false).unwrap(),
                        );
                        assert_exact(
                            &format!("argmin {what}"),
                            &x.argmin(d, false).unwrap(),
                            &rx.argmin(d, false).unwrap(),
                        );
                    }
                    assert_exact(
                        "argmax_all",
                        &x.argmax_all().unwrap(),
                        &rx.argmax_all().unwrap(),
                    );
                }
            }
        }
        // Ties, NaN, infinities and signed zeros along both dims.
        let s = specials(48, dtype).unwrap().reshape([6, 8]).unwrap();
        let rs = on_reference(&s);
        for d in [0isize, 1] {
            for (name, got, want) in [
                ("max", s.max(&[d], false), rs.max(&[d], false)),
                ("min", s.min(&[d], false), rs.min(&[d], false)),
                ("argmax", s.argmax(d, false), rs.argmax(d, false)),
                ("argmin", s.argmin(d, false), rs.argmin(d, false)),
            ] {
                assert_exact(
                    &format!("{name} {dtype} specials dim {d}"),
                    &got.unwrap(),
                    &want.unwrap(),
                );
            }
            // Sums of ±3e38 with small terms: both backends sum in f64 in
            // different orders, so the small terms may survive in one and
            // vanish in the other — both within the bound n·u64·Σ|x|
            // (NaN and infinities must still match exactly).
            let n = s.dims()[d as usize] as f64;
            let sabs = rs
                .abs()
                .unwrap()
                .sum(&[d], false)
                .unwrap()
                .to_f64_vec()
                .unwrap();
            let u64_ = f64::powi(2.0, -53);
            assert_close(
                &format!("sum {dtype} specials dim {d}"),
                &s.sum(&[d], false).unwrap(),
                &rs.sum(&[d], false).unwrap(),
                |i, w| ulp(w, dtype) + 2.0 * n * u64_ * sabs[i],
            );
            assert_close(
                &format!("logsumexp {dtype} specials dim {d}"),
                &s.logsumexp(&[d], false).unwrap(),
                &rs.logsumexp(&[d], false).unwrap(),
                |_, w| ulp(w, dtype) + 4.0 * n * u64_ * (1.0 + w.abs()),
            );
        }
    }
}

#[test]
fn a_long_sum_keeps_its_small_terms() {
    // 1 followed by 2^22 copies of 2^-24: the exact sum is 1.25, which f32
    // represents; a running f32 sum would stay at 1 (each term is at most
    // half an ulp of 1, and rounds away). The blocked sum loses only the
    // terms that share the 1's 16-term f32 leaf — 15 of them, 15·2^-24 =
    // 7.5 ulps of 1.25 — and every other leaf sums its terms exactly.
    let tiny = 2f32.powi(-24);
    let mut v = vec![tiny; (1 << 22) + 1];
    v[0] = 1.0;
    let x = Tensor::from_slice(&v, [v.len()], Device::Cpu).unwrap();
    let got: f64 = x.sum_all().unwrap().item().unwrap();
    let ulp = 2f64.powi(-23);
    assert!(
        (got - 1.25).abs() <= 8.0 * ulp,
        "{got}: more than the 15 terms of one leaf lost"
    );
    // The same along the columns of a [rows, 2] tensor (the column-sum
    // path): each column is 1 and then 2^22 tiny terms.
    let mut w = vec![tiny; 2 * ((1 << 22) + 1)];
    w[0] = 1.0;
    w[1] = 1.0;
    let x = Tensor::from_slice(&w, [(1 << 22) + 1, 2], Device::Cpu).unwrap();
    assert_eq!(
        x.sum(&[0], false).unwrap().to_vec::<f32>().unwrap(),
        vec![1.25, 1.25]
    );
}

#[test]
fn softmax_and_log_softmax_along_every_dim() {
    for dtype in FLOATS {
        let mut inputs = Vec::new();
        for (li, class) in LAYOUTS.iter().enumerate() {
            inputs.push((
                class.to_string(),
                operand(li as u64 + 60, &[6, 7, 9], class, dtype).unwrap(),
            ));
        }
        inputs.push((
            "size-1".into(),
            operand(70, &[1, 1, 5], "contiguous", dtype).unwrap(),
        ));
        inputs.push((
            "zero-size".into(),
            operand(71, &[0, 4, 3], "contiguous", dtype).unwrap(),
        ));
        // Large magnitudes (stability), ties, -inf (probability 0), NaN.
        let s = specials(48, dtype).unwrap().reshape([3, 16]).unwrap();
        inputs.push(("specials".into(), s));
        let big = operand(72, &[4, 1000], "contiguous", dtype)
            .unwrap()
            .mul_scalar(40.0)
            .unwrap();
        inputs.push(("large logits".into(), big));
        for (what, x) in inputs {
            let rx = on_reference(&x);
            for d in 0..x.rank() as isize {
                let what = format!("{dtype} {what} dim {d}");
                let n = x.dims()[d as usize];
                let tol = |_: usize, w: f64| softmax_tolerance(w, n, dtype);
                assert_close(
                    &format!("softmax {what}"),
                    &x.softmax(d).unwrap(),
                    &rx.softmax(d).unwrap(),
                    tol,
                );
                // log_softmax: (x - max) - ln(sum) in f64; ln(sum) is off
                // by the sum's relative error, at most 2 ulps of f32 (the
                // exps) = 2^-22, then one rounding.
                let ltol = |_: usize, w: f64| match dtype {
                    DType::F32 => ulp(w, dtype) + f64::powi(2.0, -22),
                    _ => 4.0 * ulp(w, dtype) + 1e3 * f64::powi(2.0, -53),
                };
                assert_close(
                    &format!("log_softmax {what}"),
                    &x.log_softmax(d).unwrap(),
                    &rx.log_softmax(d).unwrap(),
                    ltol,
                );
            }
        }
    }
}

/// The error bound of a softmax entry `w` over `n` values, computed in
/// the dtype's precision: `x_i - max` is rounded (relative error `u`), and
/// `e^t` turns an absolute error `δ` in `t` into a relative error `δ`, so
/// that step alone costs `|x_i - max|·u` relatively — the conditioning of
/// the exponential, which every implementation in this precision has, and
/// `|x_i - max| <= |ln w| + ln n` because the sum of the shifted
/// exponentials lies in `[1, n]`. On top: exp within 2 ulps, `1/sum` and
/// the product rounded once each (an ulp together), the f64 sum exact to
/// f32 precision; one spare ulp; and a subnormal step or two where the
/// value underflows.
fn softmax_tolerance(w: f64, n: usize, dtype: DType) -> f64 {
    let cond = if w > 0.0 {
        w.ln().abs() + (n as f64).ln()
    } else {
        0.0
    };
    match dtype {
        DType::F32 => (4.0 + cond) * ulp(w, dtype) + 2.0 * f64::from(f32::from_bits(1)),
        _ => (4.0 + cond) * ulp(w, dtype) + 4.0 * f64::powi(2.0, -53) * w,
    }
}

#[test]
fn matmul_on_odd_sizes_and_every_operand_layout() {
    const ODD: [usize; 5] = [1, 7, 17, 65, 129];
    for dtype in FLOATS {
        for (i, &m) in ODD.iter().enumerate() {
            let k = ODD[(i + 2) % 5];
            let n = ODD[(i + 4) % 5];
            let what = format!("{dtype} {m}x{k}@{k}x{n}");
            let a = operand(i as u64, &[m, k], "contiguous", dtype).unwrap();
            let b = operand(i as u64 + 50, &[k, n], "contiguous", dtype).unwrap();
            check_matmul(&what, &a, &b);
            for class in ["permuted", "stepped", "offset", "broadcast"] {
                let a2 = operand(i as u64 + 7, &[m, k], class, dtype).unwrap();
                let b2 = operand(i as u64 + 57, &[k, n], class, dtype).unwrap();
                check_matmul(&format!("{what} a {class}"), &a2, &b);
                check_matmul(&format!("{what} b {class}"), &a, &b2);
            }
        }
        // Square sizes the kernels' tile edges straddle.
        for s in [17, 65, 129] {
            let a = operand(s as u64, &[s, s], "contiguous", dtype).unwrap();
            let b = operand(s as u64 + 1, &[s, s], "permuted", dtype).unwrap();
            check_matmul(&format!("{dtype} square {s}"), &a, &b);
        }
        // Batched, with one operand broadcast over the batch (stride 0).
        let a = operand(80, &[2, 3, 17, 9], "contiguous", dtype).unwrap();
        let b = operand(81, &[9, 20], "contiguous", dtype).unwrap();
        check_matmul(&format!("{dtype} batched broadcast"), &a, &b);
        let a = operand(82, &[3, 5, 33], "stepped", dtype).unwrap();
        let b = operand(83, &[3, 33, 4], "permuted", dtype).unwrap();
        check_matmul(&format!("{dtype} batched views"), &a, &b);
        // Vectors (promoted by the front end) and empty dims.
        let v = operand(84, &[9], "contiguous", dtype).unwrap();
        let mtx = operand(85, &[9, 4], "contiguous", dtype).unwrap();
        check_matmul(&format!("{dtype} vector @ matrix"), &v, &mtx);
        for (m, k, n) in [(0, 3, 4), (3, 0, 4), (3, 4, 0)] {
            let a = operand(86, &[m, k], "contiguous", dtype).unwrap();
            let b = operand(87, &[k, n], "contiguous", dtype).unwrap();
            // k = 0: an empty sum, all zeros.
            assert_exact(
                &format!("{dtype} {m}x{k}@{k}x{n}"),
                &a.matmul(&b).unwrap(),
                &on_reference(&a).matmul(&on_reference(&b)).unwrap(),
            );
        }
        // Infinities and NaN propagate as in the reference.
        let s = specials(16, dtype).unwrap();
        let a = s.reshape([4, 4]).unwrap();
        assert_close(
            &format!("{dtype} specials matmul"),
            &a.matmul(&a.t().unwrap()).unwrap(),
            &on_reference(&a)
                .matmul(&on_reference(&a).t().unwrap())
                .unwrap(),
            |_, _| 0.0,
        );
    }
    // Half precisions multiply in f32 and round once.
    for dtype in [DType::F16, DType::BF16] {
        let a = operand(90, &[13, 40], "contiguous", DType::F32)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let b = operand(91, &[40, 6], "permuted", DType::F32)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let (ra, rb) = (on_reference(&a), on_reference(&b));
        let bound = magnitude_product(&ra, &rb);
        assert_close(
            &format!("{dtype} matmul"),
            &a.matmul(&b).unwrap(),
            &ra.matmul(&rb).unwrap(),
            |i, w| dot_tolerance(40, DType::F32, bound[i], w) + ulp(w, dtype),
        );
    }
}

/// Compares a convolution with the reference under the dot-product bound
/// for `K = c_in/groups · kh · kw` terms plus the bias (one more term).
fn check_conv(what: &str, x: &Tensor, w: &Tensor, bias: Option<&Tensor>, p: Conv2dParams) {
    let (rx, rw) = (on_reference(x), on_reference(w));
    let rb = bias.map(on_reference);
    let got = x.conv2d(w, bias, p).unwrap();
    let want = rx.conv2d(&rw, rb.as_ref(), p).unwrap();
    let abs_b = rb.as_ref().map(|b| b.abs().unwrap());
    let bound = rx
        .abs()
        .unwrap()
        .conv2d(&rw.abs().unwrap(), abs_b.as_ref(), p)
        .unwrap()
        .to_f64_vec()
        .unwrap();
    let k = w.dims()[1] * w.dims()[2] * w.dims()[3] + 1;
    let dtype = x.dtype();
    assert_close(what, &got, &want, |i, v| {
        dot_tolerance(k, dtype, bound[i], v)
    });
}

#[test]
fn conv2d_geometries_and_layouts() {
    let p = |stride, padding, dilation, groups| Conv2dParams {
        stride: (stride, stride),
        padding: (padding, padding),
        dilation: (dilation, dilation),
        groups,
    };
    for dtype in FLOATS {
        let cases: [([usize; 4], [usize; 4], Conv2dParams); 7] = [
            ([2, 4, 9, 8], [6, 4, 3, 3], p(1, 1, 1, 1)),
            ([1, 3, 11, 10], [5, 3, 3, 2], p(2, 0, 1, 1)),
            ([2, 4, 12, 12], [4, 4, 3, 3], p(1, 2, 2, 1)),
            ([1, 4, 7, 7], [6, 2, 3, 3], p(1, 1, 1, 2)),
            ([3, 8, 5, 6], [16, 8, 1, 1], p(1, 0, 1, 1)),
            ([1, 1, 1, 1], [1, 1, 1, 1], p(1, 0, 1, 1)),
            ([0, 2, 4, 4], [3, 2, 3, 3], p(1, 1, 1, 1)),
        ];
        for (ci, (xs, ws, params)) in cases.iter().enumerate() {
            for class in ["contiguous", "permuted", "offset", "broadcast"] {
                let x = operand(ci as u64, xs, class, dtype).unwrap();
                let w = operand(ci as u64 + 20, ws, "contiguous", dtype).unwrap();
                let b = operand(ci as u64 + 40, &[ws[0]], "contiguous", dtype).unwrap();
                let what = format!("{dtype} conv {xs:?} * {ws:?} {params:?} x {class}");
                check_conv(&what, &x, &w, Some(&b), *params);
                check_conv(&format!("{what} no bias"), &x, &w, None, *params);
            }
        }
    }
}

/// Batches of small images, whose products are taken side by side (the
/// CPU backend lays several images' im2col matrices into one): batches of
/// 13 and 9 images cut into equal batches and a shorter last one, with
/// groups, stride, padding and a 1 × 1 kernel, images of no channels, and
/// an image of 256 positions (its im2col rows padded apart), and input
/// gradients computed as convolutions; forward and backward.
#[test]
fn batches_of_small_images_match_the_reference() {
    let p = |stride, padding, groups| Conv2dParams {
        stride: (stride, stride),
        padding: (padding, padding),
        dilation: (1, 1),
        groups,
    };
    let cases: [([usize; 4], [usize; 4], Conv2dParams); 8] = [
        ([13, 4, 5, 5], [6, 2, 3, 3], p(1, 1, 2)),
        ([9, 8, 3, 3], [4, 8, 1, 1], p(1, 0, 1)),
        ([13, 3, 6, 5], [5, 3, 3, 3], p(2, 1, 1)),
        // More output channels than taps: the weight gradient untransposed.
        ([10, 1, 5, 5], [16, 1, 1, 1], p(1, 0, 1)),
        // 256 positions: im2col rows a cache line further apart than 256.
        ([2, 3, 16, 16], [4, 3, 3, 3], p(1, 1, 1)),
        // 32 input channels per group, stride 1: the input gradient as a
        // convolution of the output gradient with the flipped weights
        // (a 3 × 2 kernel, groups).
        ([3, 32, 5, 6], [4, 32, 3, 2], p(1, 1, 1)),
        ([2, 64, 4, 4], [6, 32, 3, 3], p(1, 1, 2)),
        // No input channels: the output is the bias, the gradients empty.
        ([12, 0, 4, 4], [3, 0, 3, 3], p(1, 1, 1)),
    ];
    for dtype in FLOATS {
        for (ci, (xs, ws, params)) in cases.iter().enumerate() {
            let seed = 60 + 3 * ci as u64;
            let x = operand(seed, xs, "permuted", dtype).unwrap();
            let w = operand(seed + 1, ws, "contiguous", dtype).unwrap();
            let b = operand(seed + 2, &[ws[0]], "contiguous", dtype).unwrap();
            let what = format!("{dtype} conv {xs:?} * {ws:?} {params:?}");
            check_conv(&what, &x, &w, Some(&b), *params);
            check_conv_backward(&what, &x, &w, &b, *params);
        }
    }
}

#[test]
fn pooling_forward() {
    for dtype in FLOATS {
        let mut params = Vec::new();
        params.push(Pool2dParams::new((2, 2)));
        let mut q = Pool2dParams::new((3, 3));
        q.stride = (2, 1);
        q.padding = (1, 1);
        params.push(q);
        let mut xs = Vec::new();
        for class in LAYOUTS {
            xs.push(operand(3, &[2, 3, 7, 6], class, dtype).unwrap());
        }
        // NaN, infinities and ties inside windows.
        xs.push(specials(48, dtype).unwrap().reshape([1, 2, 4, 6]).unwrap());
        for x in &xs {
            let rx = on_reference(x);
            for p in &params {
                let what = format!("{dtype} {:?} {p:?}", x.dims());
                assert_exact(
                    &format!("max_pool {what}"),
                    &x.max_pool2d(*p).unwrap(),
                    &rx.max_pool2d(*p).unwrap(),
                );
                // Averages: summed in f64 and rounded once in both.
                assert_close(
                    &format!("avg_pool {what}"),
                    &x.avg_pool2d(*p).unwrap(),
                    &rx.avg_pool2d(*p).unwrap(),
                    |_, w| ulp(w, dtype),
                );
            }
        }
    }
}

#[test]
fn indexing_is_exact_for_every_dtype() {
    for dtype in [
        DType::F32,
        DType::F64,
        DType::I64,
        DType::I32,
        DType::U8,
        DType::BF16,
    ] {
        let x = operand(5, &[4, 5, 3], "permuted", DType::F32)
            .unwrap()
            .mul_scalar(10.0)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let rx = on_reference(&x);
        let idx = Tensor::from_slice(&[3i64, 0, 3, 1], [4], Device::Cpu).unwrap();
        for d in [0isize, 1] {
            assert_exact(
                &format!("{dtype} index_select {d}"),
                &x.index_select(d, &idx).unwrap(),
                &rx.index_select(d, &on_reference(&idx)).unwrap(),
            );
        }
        // gather/scatter along dim 1 with a repeated index (collisions).
        let gi: Vec<i64> = (0..4 * 2 * 3)
            .map(|i| [4i64, 0, 2, 2, 1, 4][i % 6])
            .collect();
        let gi = Tensor::from_slice(&gi, [4, 2, 3], Device::Cpu).unwrap();
        let rgi = on_reference(&gi);
        assert_exact(
            &format!("{dtype} gather"),
            &x.gather(1, &gi).unwrap(),
            &rx.gather(1, &rgi).unwrap(),
        );
        let src = operand(6, &[4, 2, 3], "stepped", DType::F32)
            .unwrap()
            .mul_scalar(10.0)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let rsrc = on_reference(&src);
        assert_exact(
            &format!("{dtype} scatter"),
            &x.scatter(1, &gi, &src).unwrap(),
            &rx.scatter(1, &rgi, &rsrc).unwrap(),
        );
        assert_exact(
            &format!("{dtype} scatter_add"),
            &x.scatter_add(1, &gi, &src).unwrap(),
            &rx.scatter_add(1, &rgi, &rsrc).unwrap(),
        );
        // Data movement delegated to or shared with the reference.
        assert_exact(
            &format!("{dtype} cat"),
            &Tensor::cat(&[&x, &x.narrow(1, 1, 2).unwrap()], 1).unwrap(),
            &Tensor::cat(&[&rx, &rx.narrow(1, 1, 2).unwrap()], 1).unwrap(),
        );
        assert_exact(
            &format!("{dtype} pad"),
            &x.pad(&[(1, 0), (0, 2), (1, 1)], 3.0).unwrap(),
            &rx.pad(&[(1, 0), (0, 2), (1, 1)], 3.0).unwrap(),
        );
        assert_exact(
            &format!("{dtype} flip"),
            &x.flip(&[0, 2]).unwrap(),
            &rx.flip(&[0, 2]).unwrap(),
        );
        assert_exact(
            &format!("{dtype} tril"),
            &x.tril(0).unwrap(),
            &rx.tril(0).unwrap(),
        );
        assert_exact(
            &format!("{dtype} contiguous"),
            &x.contiguous().unwrap(),
            &rx.contiguous().unwrap(),
        );
    }
}

#[test]
fn casts_are_exact() {
    let sources = [
        specials(32, DType::F64).unwrap(),
        operand(7, &[3, 4], "permuted", DType::F64)
            .unwrap()
            .mul_scalar(1e3)
            .unwrap(),
        Tensor::from_slice(&[-3i64, 0, 7, 300, -129], [5], Device::Cpu).unwrap(),
    ];
    let targets = [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::Bool,
    ];
    for x in &sources {
        // Integer casts of NaN and ±inf follow Element's rules in both;
        // what matters is that the two agree.
        for &from in &[x.dtype(), DType::F32] {
            let x = x.to_dtype(from).unwrap();
            let rx = on_reference(&x);
            for to in targets {
                assert_exact(
                    &format!("cast {from} -> {to}"),
                    &x.to_dtype(to).unwrap(),
                    &rx.to_dtype(to).unwrap(),
                );
            }
        }
    }
}

/// Builds the same leaf on both devices from one host copy.
fn leaf_pair(x: &Tensor) -> (Tensor, Tensor) {
    let cpu = x
        .contiguous()
        .unwrap()
        .detach()
        .with_requires_grad(true)
        .unwrap();
    let reference = on_reference(x).with_requires_grad(true).unwrap();
    (cpu, reference)
}

/// The reference's gradients of `loss` at the absolute values of
/// `inputs` (upstream gradient `|r|`): for a loss linear in each output,
/// this is `Σ|terms|` of every gradient entry's sum — the quantity the
/// error bound of a sum is proportional to.
fn abs_gradients(
    inputs: &[&Tensor],
    r: &Tensor,
    loss: impl Fn(&[Tensor], &Tensor) -> Tensor,
) -> Vec<Vec<f64>> {
    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|t| {
            on_reference(t)
                .abs()
                .unwrap()
                .with_requires_grad(true)
                .unwrap()
        })
        .collect();
    loss(&leaves, &on_reference(r).abs().unwrap())
        .backward()
        .unwrap();
    leaves
        .iter()
        .map(|l| l.grad().unwrap().to_f64_vec().unwrap())
        .collect()
}

/// Compares the gradients of a convolution (input, weight, bias) with the
/// reference's, each under the dot-product bound for the terms it sums.
fn check_conv_backward(what: &str, x: &Tensor, w: &Tensor, b: &Tensor, p: Conv2dParams) {
    let dtype = x.dtype();
    let conv_loss = move |v: &[Tensor], r: &Tensor| {
        v[0].conv2d(&v[1], Some(&v[2]), p)
            .unwrap()
            .mul(r)
            .unwrap()
            .sum_all()
            .unwrap()
    };
    let out_dims = x.conv2d(w, Some(b), p).unwrap().dims().to_vec();
    let r = operand(4, &out_dims, "contiguous", dtype).unwrap();
    let (cx, rx) = leaf_pair(x);
    let (cw, rw) = leaf_pair(w);
    let (cb, rb) = leaf_pair(b);
    conv_loss(&[cx.clone(), cw.clone(), cb.clone()], &r)
        .backward()
        .unwrap();
    conv_loss(&[rx.clone(), rw.clone(), rb.clone()], &on_reference(&r))
        .backward()
        .unwrap();
    let bounds = abs_gradients(&[x, w, b], &r, conv_loss);
    // Terms per gradient entry: grad x sums over the output channels of
    // its group and the taps, grad w and grad b over the batch and the
    // output positions.
    let wd = w.dims();
    let positions = out_dims[0] * out_dims[2] * out_dims[3];
    let terms = [wd[0] / p.groups * wd[2] * wd[3], positions, positions];
    for (i, (name, c, rf)) in [("x", &cx, &rx), ("w", &cw, &rw), ("b", &cb, &rb)]
        .into_iter()
        .enumerate()
    {
        let bound = &bounds[i];
        assert_close(
            &format!("{what}: grad {name}"),
            &c.grad().unwrap(),
            &rf.grad().unwrap(),
            |j, v| dot_tolerance(terms[i], dtype, bound[j], v),
        );
    }
}

#[test]
fn conv_and_pool_backward_match_the_reference() {
    let p = Conv2dParams {
        stride: (2, 1),
        padding: (1, 1),
        dilation: (1, 2),
        groups: 2,
    };
    for dtype in FLOATS {
        let x = operand(1, &[2, 4, 9, 8], "permuted", dtype).unwrap();
        let w = operand(2, &[6, 2, 3, 3], "contiguous", dtype).unwrap();
        let b = operand(3, &[6], "contiguous", dtype).unwrap();
        check_conv_backward(&format!("{dtype} conv"), &x, &w, &b, p);
        // Pools: each input collects the gradient of the (overlapping)
        // windows that picked it, at most 2 here (kernel 3 over stride 2
        // by kernel 2 over stride 2): a sum of 2 terms, bounded as one.
        let mut q = Pool2dParams::new((3, 2));
        q.stride = (2, 2);
        q.padding = (1, 1);
        let x = operand(5, &[2, 3, 7, 6], "stepped", dtype).unwrap();
        let g = operand(6, &[2, 3, 4, 4], "contiguous", dtype).unwrap();
        let max_loss = move |v: &[Tensor], g: &Tensor| {
            v[0].max_pool2d(q)
                .unwrap()
                .mul(g)
                .unwrap()
                .sum_all()
                .unwrap()
        };
        let avg_loss = move |v: &[Tensor], g: &Tensor| {
            v[0].avg_pool2d(q)
                .unwrap()
                .mul(g)
                .unwrap()
                .sum_all()
                .unwrap()
        };
        for (name, f) in [
            (
                "max_pool",
                &max_loss as &dyn Fn(&[Tensor], &Tensor) -> Tensor,
            ),
            ("avg_pool", &avg_loss),
        ] {
            let (cx, rx) = leaf_pair(&x);
            f(std::slice::from_ref(&cx), &g).backward().unwrap();
            f(std::slice::from_ref(&rx), &on_reference(&g))
                .backward()
                .unwrap();
            let bound = abs_gradients(&[&x], &g, f).remove(0);
            assert_close(
                &format!("{dtype} {name} grad"),
                &cx.grad().unwrap(),
                &rx.grad().unwrap(),
                |j, v| dot_tolerance(2, dtype, bound[j], v),
            );
        }
    }
}

#[test]
fn mlp_gradients_and_sgd_steps_match_the_reference() {
    // A 12-16-16-5 ReLU MLP with cross-entropy on a batch of 9: every
    // backward rule of a training step (matmul both ways, broadcast bias,
    // relu, log_softmax, gather, mean) runs on the CPU backend.
    let sizes = [12usize, 16, 16, 5];
    let mut g = Generator::new(7);
    let mut cpu = Vec::new();
    let mut reference = Vec::new();
    for w in sizes.windows(2) {
        for shape in [vec![w[0], w[1]], vec![w[1]]] {
            let t = g
                .randn(shape, DType::F32, Device::Cpu)
                .unwrap()
                .mul_scalar(0.5)
                .unwrap();
            let (c, r) = leaf_pair(&t);
            cpu.push(c);
            reference.push(r);
        }
    }
    let x = g.randn([9, 12], DType::F32, Device::Cpu).unwrap();
    let y = g.randint([9, 1], 0, 5, DType::I64, Device::Cpu).unwrap();
    let loss = |p: &[Tensor], x: &Tensor, y: &Tensor| -> Tensor {
        let h = x.matmul(&p[0]).unwrap().add(&p[1]).unwrap().relu().unwrap();
        let h = h.matmul(&p[2]).unwrap().add(&p[3]).unwrap().relu().unwrap();
        let z = h.matmul(&p[4]).unwrap().add(&p[5]).unwrap();
        z.log_softmax(1)
            .unwrap()
            .gather(1, y)
            .unwrap()
            .mean_all()
            .unwrap()
            .neg()
            .unwrap()
    };
    let (rx, ry) = (on_reference(&x), on_reference(&y));
    for step in 0..3 {
        let lc = loss(&cpu, &x, &y);
        let lr = loss(&reference, &rx, &ry);
        // The loss: a few f32 roundings of O(1) values per term.
        assert_close(&format!("loss step {step}"), &lc, &lr, |_, w| {
            64.0 * ulp(w, DType::F32)
        });
        lc.backward().unwrap();
        lr.backward().unwrap();
        for (i, (c, r)) in cpu.iter().zip(&reference).enumerate() {
            let (gc, gr) = (c.grad().unwrap(), r.grad().unwrap());
            // Each gradient entry is a dot product over the batch or a
            // layer width (at most 16 terms) of values the forward pass
            // computed with their own f32 errors; 64·u relative to the
            // largest gradient in the tensor covers both.
            let scale = gr.abs().unwrap().max_all().unwrap().item().unwrap();
            assert_close(&format!("grad {i} step {step}"), &gc, &gr, |_, w| {
                ulp(w, DType::F32) + 64.0 * unit_roundoff(DType::F32) * scale
            });
        }
        let update = |p: &[Tensor]| -> Vec<Tensor> {
            no_grad(|| {
                p.iter()
                    .map(|t| {
                        t.sub(&t.grad().unwrap().mul_scalar(0.1).unwrap())
                            .unwrap()
                            .with_requires_grad(true)
                            .unwrap()
                    })
                    .collect()
            })
        };
        cpu = update(&cpu);
        reference = update(&reference);
    }
}
