//! Matrix multiplication: hand-computed products on every pair of layout
//! variants, the vector cases of `numpy.matmul`, broadcast batch dims,
//! zero-size and size-1 extents, integer wrapping, every error by variant,
//! and the laws (agreement with the triple-loop definition on random
//! shapes; (A·B)ᵀ = Bᵀ·Aᵀ).

mod common;
use common::*;

use std::sync::Arc;

use oxmera_core::{DType, Device, Error, Layout, Shape};
use oxmera_tensor::{HostBuffer, Storage, Tensor};
use proptest::prelude::*;

/// A = [[1, 2, 3], [4, 5, 6]] and B = [[7, 8], [9, 10], [11, 12]];
/// A·B = [[1·7 + 2·9 + 3·11, 1·8 + 2·10 + 3·12], [4·7 + 5·9 + 6·11, 4·8 + 5·10 + 6·12]].
const A23: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
const B32: [f64; 6] = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
const AB: [f64; 4] = [58.0, 64.0, 139.0, 154.0];

#[test]
fn matrix_product_on_every_pair_of_layouts() {
    for dtype in [
        DType::F32,
        DType::F64,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
    ] {
        for (na, a) in variants(&A23, &[2, 3], dtype) {
            for (nb, b) in variants(&B32, &[3, 2], dtype) {
                let c = a.matmul(&b).unwrap();
                assert_eq!(c.dtype(), dtype, "{na} @ {nb}");
                // Every value here, 154 included, fits bf16's 8 significant bits.
                assert_close(&c, &AB, &[2, 2], 0.0);
            }
        }
    }
}

#[test]
fn vector_cases_follow_numpy() {
    for (na, a) in variants(&A23, &[2, 3], DType::F64) {
        // 1-D @ 1-D: the dot product, rank 0. 1·4 + 2·5 + 3·6 = 32.
        let u = t(&[1.0, 2.0, 3.0], &[3], DType::F64);
        let v = t(&[4.0, 5.0, 6.0], &[3], DType::F64);
        assert_close(&u.matmul(&v).unwrap(), &[32.0], &[], 0.0);
        // 2-D @ 1-D: A·[1, 0, -1] = [1 - 3, 4 - 6].
        let w = t(&[1.0, 0.0, -1.0], &[3], DType::F64);
        assert_close(&a.matmul(&w).unwrap(), &[-2.0, -2.0], &[2], 0.0);
        // 1-D @ 2-D: [1, 2]·A = [1 + 8, 2 + 10, 3 + 12].
        let r = t(&[1.0, 2.0], &[2], DType::F64);
        let ra = r.matmul(&a).unwrap();
        assert_close(&ra, &[9.0, 12.0, 15.0], &[3], 0.0);
        assert_eq!(ra.rank(), 1, "{na}");
    }
    // 1-D @ 3-D: the vector multiplies every matrix of the batch.
    // Batch 0 is A; batch 1 is 2·A.
    let mut stack = A23.to_vec();
    stack.extend(A23.iter().map(|x| 2.0 * x));
    for (name, s) in variants(&stack, &[2, 2, 3], DType::F32) {
        let r = f32t(&[1.0, 2.0], &[2]);
        assert_close(
            &r.matmul(&s).unwrap(),
            &[9.0, 12.0, 15.0, 18.0, 24.0, 30.0],
            &[2, 3],
            0.0,
        );
        let w = f32t(&[1.0, 0.0, -1.0], &[3]);
        let sw = s.matmul(&w).unwrap();
        assert_close(&sw, &[-2.0, -2.0, -4.0, -4.0], &[2, 2], 0.0);
        assert_eq!(sw.dims(), &[2, 2], "{name}");
    }
}

#[test]
fn batch_dims_broadcast() {
    // [2, 2, 3] @ [3, 2]: the matrix B is shared by both batch entries.
    let mut stack = A23.to_vec();
    stack.extend(A23.iter().map(|x| 2.0 * x));
    for (na, a) in variants(&stack, &[2, 2, 3], DType::F64) {
        for (nb, b) in variants(&B32, &[3, 2], DType::F64) {
            let c = a.matmul(&b).unwrap();
            let mut want = AB.to_vec();
            want.extend(AB.iter().map(|x| 2.0 * x));
            assert_close(&c, &want, &[2, 2, 2], 0.0);
            // The other way round: [2, 3] @ [2, 3, 2] with B and 2·B.
            let mut bb = B32.to_vec();
            bb.extend(B32.iter().map(|x| 2.0 * x));
            let b2 = t(&bb, &[2, 3, 2], DType::F64);
            let d = b
                .t()
                .unwrap()
                .matmul(&a.transpose(-1, -2).unwrap())
                .unwrap();
            // (A·B)ᵀ = Bᵀ·Aᵀ per batch entry.
            let c_t = c.transpose(-1, -2).unwrap();
            assert_eq!(
                d.to_f64_vec().unwrap(),
                c_t.to_f64_vec().unwrap(),
                "{na} {nb}"
            );
            let e = a
                .narrow(0, 0, 1)
                .unwrap()
                .squeeze(0)
                .unwrap()
                .matmul(&b2)
                .unwrap();
            assert_close(&e, &want, &[2, 2, 2], 0.0);
        }
    }
    // [2, 1, 1, 2] @ [3, 2, 1]: batch [2, 1] and [3] broadcast to [2, 3].
    // lhs batch i is the row [i+1, i+1]; rhs batch j is the column [j, 1].
    // Product: (i + 1)·(j + 1).
    let lhs = t(&[1.0, 1.0, 2.0, 2.0], &[2, 1, 1, 2], DType::F32);
    let rhs = t(&[0.0, 1.0, 1.0, 1.0, 2.0, 1.0], &[3, 2, 1], DType::F32);
    let c = lhs.matmul(&rhs).unwrap();
    assert_close(&c, &[1.0, 2.0, 3.0, 2.0, 4.0, 6.0], &[2, 3, 1, 1], 0.0);
}

#[test]
fn stride0_operands() {
    // Every row of the left operand is [1, 2, 3] (stride 0 along dim 0).
    let a = f32t(&[1.0, 2.0, 3.0], &[3]).broadcast_to([4, 3]).unwrap();
    let b = f32t(&B32, &[3, 2]);
    assert_close(
        &a.matmul(&b).unwrap(),
        &[58.0, 64.0].repeat(4),
        &[4, 2],
        0.0,
    );
    // A column broadcast along the columns: B' = [[1, 1], [2, 2], [3, 3]].
    let col = f32t(&[1.0, 2.0, 3.0], &[3, 1])
        .broadcast_to([3, 2])
        .unwrap();
    let a23 = f32t(&A23, &[2, 3]);
    assert_close(
        &a23.matmul(&col).unwrap(),
        &[14.0, 14.0, 32.0, 32.0],
        &[2, 2],
        0.0,
    );
    // A batch of one matrix broadcast to 3 entries with stride 0.
    let batch = a23.broadcast_to([3, 2, 3]).unwrap();
    assert_eq!(batch.strides()[0], 0);
    assert_close(&batch.matmul(&b).unwrap(), &AB.repeat(3), &[3, 2, 2], 0.0);
}

#[test]
fn zero_size_and_size1_extents() {
    // Empty k: every output is an empty sum, 0.
    for dtype in [DType::F32, DType::I32] {
        let a = t(&[], &[2, 0], dtype);
        let b = t(&[], &[0, 3], dtype);
        assert_close(&a.matmul(&b).unwrap(), &[0.0; 6], &[2, 3], 0.0);
        let u = t(&[], &[0], dtype);
        assert_close(&u.matmul(&u).unwrap(), &[0.0], &[], 0.0);
    }
    // Empty m, n or batch: empty results of the right shape.
    assert_eq!(
        f32t(&[], &[0, 3])
            .matmul(&f32t(&B32, &[3, 2]))
            .unwrap()
            .dims(),
        &[0, 2]
    );
    assert_eq!(
        f32t(&A23, &[2, 3])
            .matmul(&f32t(&[], &[3, 0]))
            .unwrap()
            .dims(),
        &[2, 0]
    );
    let eb = f32t(&[], &[0, 2, 3]).matmul(&f32t(&B32, &[3, 2])).unwrap();
    assert_eq!(eb.dims(), &[0, 2, 2]);
    // Size 1 everywhere.
    let one = t(&[3.0], &[1, 1], DType::F64);
    assert_close(&one.matmul(&one).unwrap(), &[9.0], &[1, 1], 0.0);
    // k = 1: the outer product of a column and a row.
    let col = f32t(&[1.0, 2.0], &[2, 1]);
    let row = f32t(&[3.0, 4.0, 5.0], &[1, 3]);
    assert_close(
        &col.matmul(&row).unwrap(),
        &[3.0, 4.0, 5.0, 6.0, 8.0, 10.0],
        &[2, 3],
        0.0,
    );
    // A length-1 vector on each side.
    let v1 = f32t(&[2.0], &[1]);
    assert_close(
        &v1.matmul(&f32t(&[3.0, 4.0], &[1, 2])).unwrap(),
        &[6.0, 8.0],
        &[2],
        0.0,
    );
}

#[test]
fn integers_wrap() {
    // 2^16 · 2^16 = 2^32 wraps to 0 in i32; 2^16 · 2^16 + 1 to 1.
    let a = Tensor::from_vec(vec![65536i32, 1], [1, 2], Device::Reference).unwrap();
    let b = Tensor::from_vec(vec![65536i32, 1], [2, 1], Device::Reference).unwrap();
    assert_eq!(a.matmul(&b).unwrap().to_vec::<i32>().unwrap(), vec![1]);
    // u8: 16·16 = 256 wraps to 0; 16·16 + 3·5 to 15.
    let a = Tensor::from_vec(vec![16u8, 3], [2], Device::Reference).unwrap();
    let b = Tensor::from_vec(vec![16u8, 5], [2], Device::Reference).unwrap();
    assert_eq!(a.matmul(&b).unwrap().to_vec::<u8>().unwrap(), vec![15]);
    // i64 wraps in its own width.
    let a = Tensor::from_vec(vec![i64::MAX, 1], [2], Device::Reference).unwrap();
    let b = Tensor::from_vec(vec![2i64, 2], [2], Device::Reference).unwrap();
    assert_eq!(a.matmul(&b).unwrap().to_vec::<i64>().unwrap(), vec![0]);
}

#[test]
fn every_error_is_typed() {
    let a = f32t(&A23, &[2, 3]);
    let e = a.matmul(&f32t(&[0.0; 20], &[4, 5])).unwrap_err();
    assert_eq!(
        e,
        Error::MatmulInner {
            op: "matmul",
            lhs: Shape::from([2, 3]),
            rhs: Shape::from([4, 5]),
            k_lhs: 3,
            k_rhs: 4
        }
    );
    assert_eq!(
        e.to_string(),
        "matmul: inner dimensions differ: [2, 3] @ [4, 5] (3 != 4)"
    );
    // Vector operands are reported with their own shapes.
    let v4 = f32t(&[0.0; 4], &[4]);
    assert_eq!(
        f32t(&[0.0; 3], &[3]).matmul(&v4).unwrap_err().to_string(),
        "matmul: inner dimensions differ: [3] @ [4] (3 != 4)"
    );
    assert!(matches!(
        a.matmul(&v4),
        Err(Error::MatmulInner {
            k_lhs: 3,
            k_rhs: 4,
            ..
        })
    ));
    assert!(matches!(
        v4.matmul(&a),
        Err(Error::MatmulInner {
            k_lhs: 4,
            k_rhs: 2,
            ..
        })
    ));
    // Rank 0 on either side.
    let s = f32t(&[2.0], &[]);
    for r in [s.matmul(&a), a.matmul(&s), s.matmul(&s)] {
        assert!(
            matches!(
                r,
                Err(Error::RankMismatch {
                    op: "matmul",
                    expected: 1,
                    ..
                })
            ),
            "{r:?}"
        );
    }
    // Batch dims 2 and 3 do not broadcast.
    let a2 = f32t(&[0.0; 12], &[2, 2, 3]);
    let b3 = f32t(&[0.0; 18], &[3, 3, 2]);
    assert!(matches!(
        a2.matmul(&b3),
        Err(Error::BroadcastIncompatible { op: "matmul", .. })
    ));
    // Dtypes must match; bool has no product.
    let a64 = t(&A23, &[2, 3], DType::F64);
    assert!(matches!(
        a.matmul(&a64.t().unwrap()),
        Err(Error::DTypeMismatch {
            op: "matmul",
            lhs: DType::F32,
            rhs: DType::F64
        })
    ));
    let bb = t(&[1.0, 0.0, 1.0, 1.0], &[2, 2], DType::Bool);
    assert!(matches!(
        bb.matmul(&bb),
        Err(Error::UnsupportedDType { op: "matmul", .. })
    ));
    // Operands on two devices. No backend serves `cpu` in this test
    // program, so the tensor is assembled from host storage directly: the
    // device check comes before any backend is asked for.
    let on_cpu = Tensor::from_parts(
        Arc::new(Storage::host(Device::Cpu, HostBuffer::F32(vec![0.0; 6]))),
        Layout::contiguous([3, 2]),
    );
    assert_eq!(
        a.matmul(&on_cpu).unwrap_err(),
        Error::DeviceMismatch {
            op: "matmul",
            lhs: Device::Reference,
            rhs: Device::Cpu
        }
    );
    // With one device and no backend for it, the dispatch itself fails.
    assert!(matches!(
        on_cpu.t().unwrap().matmul(&on_cpu),
        Err(Error::BackendUnavailable {
            device: Device::Cpu,
            ..
        })
    ));
}

/// The definition, on logically ordered host vectors: `a` is
/// `batch × m × k`, `b` is `batch × k × n` (batch already broadcast).
fn triple_loop(a: &[f64], b: &[f64], batch: usize, m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; batch * m * n];
    for q in 0..batch {
        for i in 0..m {
            for j in 0..n {
                for p in 0..k {
                    out[q * m * n + i * n + j] +=
                        a[q * m * k + i * k + p] * b[q * k * n + p * n + j];
                }
            }
        }
    }
    out
}

/// Random operand shapes `[..batch_a, m, k]` and `[..batch_b, k, n]` whose
/// batch dims broadcast (each pair of batch extents is equal or has a 1),
/// with ranks 1 to 4 on each side.
fn matmul_shapes() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    (
        prop::collection::vec((1usize..4, 0usize..3), 0..3),
        0usize..3,
        0usize..5,
        1usize..5,
        0usize..5,
        prop::bool::ANY,
        prop::bool::ANY,
    )
        .prop_map(|(batch, drop, m, k, n, lhs_vec, rhs_vec)| {
            // Each batch dim is (extent, which side sees 1: 0 none, 1 lhs, 2 rhs).
            let mut sa: Vec<usize> = batch
                .iter()
                .map(|&(e, w)| if w == 1 { 1 } else { e })
                .collect();
            let mut sb: Vec<usize> = batch
                .iter()
                .map(|&(e, w)| if w == 2 { 1 } else { e })
                .collect();
            // Drop some leading batch dims from one side (they broadcast too).
            if drop > 0 {
                sa.drain(..drop.min(sa.len()));
            }
            let vec_lhs = lhs_vec && sa.is_empty();
            let vec_rhs = rhs_vec && sb.is_empty();
            if vec_lhs {
                sa.push(k);
            } else {
                sa.extend([m, k]);
            }
            if vec_rhs {
                sb.push(k);
            } else {
                sb.extend([k, n]);
            }
            (sa, sb)
        })
}

fn numel(s: &[usize]) -> usize {
    s.iter().product()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The reference equals the triple loop. Operands are broadcast and
    /// promoted on the host independently of the front end: the expected
    /// shape and values are built from the definition of numpy.matmul.
    /// f32 values: the reference accumulates exactly-formed f32·f32
    /// products in f64 and rounds once, and so does the host loop in the
    /// same order, so the two agree to within one f32 rounding of the
    /// result, u·|c| with u = 2⁻²⁴, plus k·2⁻⁵³·Σ|a||b| should the orders
    /// ever differ.
    #[test]
    fn matches_the_triple_loop(
        ((sa, sb), seed) in (matmul_shapes(), any::<u64>())
    ) {
        let mut g = seed;
        let mut next = || {
            // A tiny LCG: deterministic values in [-4, 4) on a 1/8 grid.
            g = g.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((g >> 33) % 64) as f64 / 8.0 - 4.0
        };
        let av: Vec<f64> = (0..numel(&sa)).map(|_| next()).collect();
        let bv: Vec<f64> = (0..numel(&sb)).map(|_| next()).collect();
        let a = f32t(&av, &sa);
        let b = f32t(&bv, &sb);
        let c = a.matmul(&b).unwrap();

        // Promote and broadcast by hand.
        let (va, vb) = (sa.len() == 1, sb.len() == 1);
        let ma: Vec<usize> = if va { vec![1, sa[0]] } else { sa.clone() };
        let mb: Vec<usize> = if vb { vec![sb[0], 1] } else { sb.clone() };
        let (m, k, n) = (ma[ma.len() - 2], ma[ma.len() - 1], mb[mb.len() - 1]);
        let (ba, bb) = (&ma[..ma.len() - 2], &mb[..mb.len() - 2]);
        let rank = ba.len().max(bb.len());
        let pad = |s: &[usize]| { let mut p = vec![1; rank - s.len()]; p.extend_from_slice(s); p };
        let (pa, pb) = (pad(ba), pad(bb));
        let batch: Vec<usize> = pa.iter().zip(&pb).map(|(&x, &y)| x.max(y)).collect();
        let bshape = Shape::from(batch.clone());
        let nbatch = bshape.numel();
        let gather = |v: &[f64], p: &[usize], inner: usize| -> Vec<f64> {
            let ps = Shape::from(p);
            (0..nbatch).flat_map(|q| {
                let idx: Vec<usize> = bshape.unravel(q).iter().zip(p).map(|(&i, &e)| if e == 1 { 0 } else { i }).collect();
                let base = ps.ravel(&idx) * inner;
                v[base..base + inner].to_vec()
            }).collect()
        };
        let want = triple_loop(&gather(&av, &pa, m * k), &gather(&bv, &pb, k * n), nbatch, m, k, n);
        let mut want_shape = batch.clone();
        if !va { want_shape.push(m); }
        if !vb { want_shape.push(n); }
        prop_assert_eq!(c.dims(), want_shape.as_slice());
        let got = c.to_f64_vec().unwrap();
        let u = 2f64.powi(-24);
        // |a|, |b| ≤ 4, so Σ|a||b| ≤ 16k.
        for (g, w) in got.iter().zip(&want) {
            prop_assert!((g - w).abs() <= u * w.abs() + (k as f64) * 2f64.powi(-53) * 16.0 * k as f64,
                "{g} vs {w}: {sa:?} @ {sb:?}");
        }
    }

    /// (A·B)ᵀ = Bᵀ·Aᵀ exactly in f64 on small integers (every partial sum
    /// is an integer far below 2⁵³), on batched operands, with the
    /// transposes taken as non-contiguous views.
    #[test]
    fn transpose_of_product(
        (batch, m, k, n) in (1usize..3, 1usize..5, 0usize..5, 1usize..5),
        seed in any::<u64>(),
    ) {
        let mut g = seed;
        let mut next = || {
            g = g.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((g >> 33) % 19) as f64 - 9.0
        };
        let av: Vec<f64> = (0..batch * m * k).map(|_| next()).collect();
        let bv: Vec<f64> = (0..batch * k * n).map(|_| next()).collect();
        let a = t(&av, &[batch, m, k], DType::F64);
        let b = t(&bv, &[batch, k, n], DType::F64);
        let ab_t = a.matmul(&b).unwrap().transpose(-1, -2).unwrap();
        let bt_at = b.transpose(-1, -2).unwrap().matmul(&a.transpose(-1, -2).unwrap()).unwrap();
        prop_assert_eq!(ab_t.dims(), bt_at.dims());
        prop_assert_eq!(ab_t.to_f64_vec().unwrap(), bt_at.to_f64_vec().unwrap());
    }
}

/// A stack of matrices times one matrix folds its rows into one product
/// (a view of the stack) or, where the stack is no view of `[rows, k]`
/// (transposed, broadcast), runs per batch entry: both give the batched
/// definition's values, gradients and shapes, a vector on the right
/// included.
#[test]
fn a_stack_times_a_matrix_folds_rows_without_changing_results() {
    let dev = Device::Reference;
    let mut rng = oxmera_tensor::Generator::new(4);
    let w = rng.randn([3, 5], DType::F64, dev).unwrap();
    let v = rng.randn([3], DType::F64, dev).unwrap();
    let contiguous = rng.randn([2, 4, 3], DType::F64, dev).unwrap();
    let transposed = rng
        .randn([2, 3, 4], DType::F64, dev)
        .unwrap()
        .transpose(-2, -1)
        .unwrap();
    let broadcast = rng
        .randn([1, 4, 3], DType::F64, dev)
        .unwrap()
        .broadcast_to([2, 4, 3])
        .unwrap();
    for (what, x) in [
        ("contiguous", contiguous),
        ("transposed", transposed),
        ("broadcast", broadcast),
    ] {
        let x = x.with_requires_grad(true).unwrap();
        let wg = w.with_requires_grad(true).unwrap();
        let y = x.matmul(&wg).unwrap();
        assert_eq!(y.dims(), &[2, 4, 5], "{what}");
        // The definition: each batch entry on its own.
        for b in 0..2 {
            let want = x
                .select(0, b)
                .unwrap()
                .matmul(&w)
                .unwrap()
                .to_vec::<f64>()
                .unwrap();
            let got = y.select(0, b).unwrap().to_vec::<f64>().unwrap();
            assert_eq!(got, want, "{what}, batch {b}");
        }
        y.sum_all().unwrap().backward().unwrap();
        // d(sum)/dw = Σ over all rows of x, ᵀ·1; d/dx = 1·wᵀ per row.
        let rows = x.detach().reshape([8, 3]).unwrap();
        let ones = Tensor::ones([8, 5], DType::F64, dev).unwrap();
        let want_w = rows
            .t()
            .unwrap()
            .matmul(&ones)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let got_w = wg.grad().unwrap().to_vec::<f64>().unwrap();
        for (g, e) in got_w.iter().zip(&want_w) {
            assert!((g - e).abs() < 1e-12, "{what}: dw {g} vs {e}");
        }
        assert_eq!(x.grad().unwrap().dims(), &[2, 4, 3], "{what}");
        // A vector on the right: [2, 4, 3] @ [3] is [2, 4].
        assert_eq!(x.detach().matmul(&v).unwrap().dims(), &[2, 4], "{what}");
    }
}
