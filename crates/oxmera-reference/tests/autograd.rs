//! Reverse-mode autograd on the reference backend: the engine's semantics,
//! hand-computed gradients, and a finite-difference gradient check of every
//! differentiable op on contiguous and non-contiguous inputs.

mod common;
use common::*;

use oxmera_core::{DType, Device, Error};
use oxmera_tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera_tensor::{Conv2dParams, Generator, Pool2dParams, Tensor, no_grad};

/// Seeded values in `[-2, 2)`, each moved at least `margin` away from every
/// point of `kinks` (where the op has no derivative), and pairwise distinct
/// by more than the finite-difference reach so that max/min ties are
/// impossible.
fn values(seed: u64, n: usize, kinks: &[f64]) -> Vec<f64> {
    let mut g = Generator::new(seed);
    let raw = g
        .uniform([n], -2.0, 2.0, DType::F64, Device::Reference)
        .unwrap()
        .to_f64_vec()
        .unwrap();
    raw.into_iter()
        .enumerate()
        .map(|(i, mut v)| {
            // Distinct: a different tiny offset per element.
            v += i as f64 * 1e-3;
            for &k in kinks {
                if (v - k).abs() < 0.1 {
                    v = k + if v >= k { 0.1 } else { -0.1 };
                }
            }
            v
        })
        .collect()
}

/// Runs `f` through [`gradcheck`] with its first input in every layout
/// variant (the other inputs contiguous), and fails with the report.
fn check(
    name: &str,
    f: impl Fn(&[Tensor]) -> oxmera_core::Result<Tensor>,
    inputs: &[(Vec<f64>, Vec<usize>)],
) {
    let (v0, s0) = &inputs[0];
    for (layout, first) in variants(v0, s0, DType::F64) {
        let mut xs = vec![first];
        xs.extend(inputs[1..].iter().map(|(v, s)| t(v, s, DType::F64)));
        let report = gradcheck(&f, &xs, DEFAULT_STEP).unwrap();
        assert!(
            report.checked > 0 || v0.is_empty(),
            "{name}: nothing checked"
        );
        assert!(report.passed(), "{name} ({layout}): {report}");
    }
}

fn input(seed: u64, shape: &[usize], kinks: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let n = shape.iter().product();
    (values(seed, n, kinks), shape.to_vec())
}

fn positive(seed: u64, shape: &[usize]) -> (Vec<f64>, Vec<usize>) {
    let (v, s) = input(seed, shape, &[]);
    (v.into_iter().map(|x| x.abs() + 0.2).collect(), s)
}

// ---- the engine ----

#[test]
fn gradients_accumulate_until_zeroed() {
    let x = leaf(&[1.0, 2.0], &[2]);
    x.mul_scalar(3.0)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    x.mul_scalar(3.0)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x), vec![6.0, 6.0]);
    x.zero_grad();
    assert!(x.grad().is_none());
    x.square().unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![2.0, 4.0]);
}

#[test]
fn a_tensor_used_twice_gets_both_gradients() {
    // y = x·x + x, dy/dx = 2x + 1; the diamond must be summed before it
    // is propagated further.
    let x = leaf(&[3.0], &[1]);
    let a = x.mul_scalar(1.0).unwrap();
    let y = a.mul(&a).unwrap().add(&a).unwrap().sum_all().unwrap();
    y.backward().unwrap();
    assert_eq!(grad(&x), vec![7.0]);
}

#[test]
fn no_grad_and_detach_cut_the_graph() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = no_grad(|| x.exp()).unwrap();
    assert!(!y.requires_grad());
    assert!(oxmera_tensor::is_grad_enabled());
    let d = x.detach();
    assert!(!d.requires_grad() && d.shares_storage(&x));
    // x·detach(x): the detached factor is a constant.
    x.mul(&d).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![1.0, 2.0]);
}

#[test]
fn nested_no_grad_guards_restore_the_previous_state() {
    let outer = oxmera_tensor::NoGradGuard::new();
    {
        let _inner = oxmera_tensor::NoGradGuard::new();
        assert!(!oxmera_tensor::is_grad_enabled());
    }
    assert!(!oxmera_tensor::is_grad_enabled());
    drop(outer);
    assert!(oxmera_tensor::is_grad_enabled());
}

#[test]
fn leaves_and_grad_fn_names() {
    let x = leaf(&[1.0], &[1]);
    assert!(x.is_leaf() && x.requires_grad());
    let y = x.sigmoid().unwrap();
    assert!(!y.is_leaf());
    assert_eq!(y.grad_fn_name(), Some("sigmoid"));
    assert_eq!(x.grad_fn_name(), None);
    let plain = t(&[1.0], &[1], DType::F64);
    assert!(plain.is_leaf() && !plain.requires_grad());
    assert!(!plain.exp().unwrap().requires_grad());
}

#[test]
fn backward_errors_are_typed() {
    let x = leaf(&[1.0, 2.0], &[2]);
    let e = x.exp().unwrap().backward().unwrap_err();
    assert!(matches!(e, Error::Autograd { op: "backward", .. }), "{e}");
    assert!(e.to_string().contains("backward_with"), "{e}");

    let ints = Tensor::from_vec(vec![1i64, 2], [2], Device::Reference).unwrap();
    let e = ints.with_requires_grad(true).unwrap_err();
    assert_eq!(
        e.to_string(),
        "with_requires_grad: only floating-point tensors can require grad, got i64"
    );
    let e = ints.sum_all().unwrap().backward().unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot differentiate through a i64 tensor"),
        "{e}"
    );

    let plain = t(&[1.0], &[], DType::F64);
    let e = plain.backward().unwrap_err();
    assert!(e.to_string().contains("does not require grad"), "{e}");

    let wrong = t(&[1.0, 2.0, 3.0], &[3], DType::F64);
    let e = x.exp().unwrap().backward_with(&wrong).unwrap_err();
    assert!(
        matches!(e, Error::ShapeMismatch { op: "backward", .. }),
        "{e}"
    );
}

#[test]
fn integer_results_cut_the_graph() {
    let x = leaf(&[1.0, 5.0, 2.0], &[3]);
    let idx = x.argmax(0, false).unwrap();
    assert!(!idx.requires_grad());
    assert!(!x.gt_scalar(1.0).unwrap().requires_grad());
}

#[test]
fn dropping_the_output_frees_the_graph() {
    // A node owns its inputs, never its output: once the loss is dropped,
    // nothing but our own handle keeps the intermediate's storage alive.
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x.exp().unwrap();
    let storage = y.storage().clone();
    let loss = y.sum_all().unwrap();
    drop(y);
    assert!(std::sync::Arc::strong_count(&storage) > 1);
    drop(loss);
    assert_eq!(std::sync::Arc::strong_count(&storage), 1);
}

#[test]
fn a_deep_chain_does_not_overflow_the_stack() {
    let x = leaf(&[1.0], &[1]);
    let mut y = x.clone();
    for _ in 0..20_000 {
        y = y.add_scalar(0.0).unwrap();
    }
    y.sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![1.0]);
}

#[test]
fn set_grad_checks_its_argument() {
    let x = leaf(&[1.0, 2.0], &[2]);
    x.set_grad(Some(t(&[5.0, 6.0], &[2], DType::F64))).unwrap();
    assert_eq!(grad(&x), vec![5.0, 6.0]);
    assert!(x.set_grad(Some(t(&[5.0], &[1], DType::F64))).is_err());
    assert!(t(&[1.0], &[1], DType::F64).set_grad(None).is_err());
}

#[test]
fn gradcheck_catches_a_wrong_gradient() {
    // x · detach(x) has analytic gradient x but true derivative 2x.
    let x = t(&[0.5, -1.5], &[2], DType::F64);
    let report = gradcheck(|xs| xs[0].mul(&xs[0].detach()), &[x], DEFAULT_STEP).unwrap();
    assert!(!report.passed(), "{report}");
}

// ---- hand-computed gradients ----

#[test]
fn softmax_gradient_by_hand() {
    // softmax([0, ln 3]) = [1/4, 3/4]; with upstream [1, 0]:
    // dx = y ⊙ (g - y·g) = [1/4·(1 - 1/4), 3/4·(0 - 1/4)] = [3/16, -3/16].
    let x = leaf(&[0.0, 3f64.ln()], &[2]);
    let y = x.softmax(0).unwrap();
    y.backward_with(&t(&[1.0, 0.0], &[2], DType::F64)).unwrap();
    let g = grad(&x);
    assert!(
        (g[0] - 3.0 / 16.0).abs() < 1e-15 && (g[1] + 3.0 / 16.0).abs() < 1e-15,
        "{g:?}"
    );
}

#[test]
fn pow_gradient_at_a_zero_exponent_is_zero_as_in_pytorch() {
    // d/dx x^0 = 0 everywhere, x = ±0 included (0·0^-1 would be NaN) and a
    // subnormal x (whose x^-1 overflows); d/dy at x = 0, y = 0 is 0 too.
    let sub = f64::from_bits(1); // the smallest f64 subnormal
    for x0 in [0.0, -0.0, sub, 2.0] {
        let x = leaf(&[x0], &[1]);
        let y = leaf(&[0.0], &[1]);
        x.pow(&y).unwrap().sum_all().unwrap().backward().unwrap();
        assert_eq!(grad(&x), vec![0.0], "d/dx at x = {x0:e}");
        if x0 == 0.0 {
            assert_eq!(grad(&y), vec![0.0], "d/dy at x = {x0:e}");
        }
        let x = leaf(&[x0], &[1]);
        x.pow_scalar(0.0)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert_eq!(grad(&x), vec![0.0], "pow_scalar(0) at x = {x0:e}");
    }
    // Elsewhere unchanged: d/dx x^3 at 2 is 3·4 = 12.
    let x = leaf(&[2.0], &[1]);
    x.pow_scalar(3.0)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x), vec![12.0]);
}

#[test]
fn std_gradient_over_a_constant_slice_is_zero_as_in_pytorch() {
    // std([2, 2, 2]) = 0: d std / dx_i = (x_i - mean) / ((N - 1)·std) is
    // 0/0; PyTorch masks it to 0. The other row, [1, 2, 3] (std 1), keeps
    // its gradient (x_i - 2) / 2 = [-1/2, 0, 1/2].
    let x = leaf(&[2.0, 2.0, 2.0, 1.0, 2.0, 3.0], &[2, 3]);
    x.std(&[1], 1.0, false)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x), vec![0.0, 0.0, 0.0, -0.5, 0.0, 0.5]);
    // var is 0/0-free (its gradient is 2 (x_i - mean) / (N - 1)).
    let x = leaf(&[2.0, 2.0, 2.0], &[3]);
    x.var(&[0], 1.0, false).unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![0.0, 0.0, 0.0]);
}

#[test]
fn matmul_gradient_by_hand() {
    // L = Σ A·B with A [[1,2],[3,4]], B [[5,6],[7,8]]:
    // dA = 1·Bᵀ row sums = [[11,15],[11,15]], dB = Aᵀ·1 = [[4,4],[6,6]].
    let a = leaf(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let b = leaf(&[5.0, 6.0, 7.0, 8.0], &[2, 2]);
    a.matmul(&b).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&a), vec![11.0, 15.0, 11.0, 15.0]);
    assert_eq!(grad(&b), vec![4.0, 4.0, 6.0, 6.0]);
}

#[test]
fn matmul_gradient_for_one_side_only() {
    // The same product with A as data (no grad): B's gradient is unchanged
    // and A gets none; then with only A requiring grad.
    let data = |v: &[f64]| Tensor::from_vec(v.to_vec(), [2, 2], Device::Reference).unwrap();
    let a = data(&[1.0, 2.0, 3.0, 4.0]);
    let b = leaf(&[5.0, 6.0, 7.0, 8.0], &[2, 2]);
    a.matmul(&b).unwrap().sum_all().unwrap().backward().unwrap();
    assert!(a.grad().is_none());
    assert_eq!(grad(&b), vec![4.0, 4.0, 6.0, 6.0]);
    let a = leaf(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let b = data(&[5.0, 6.0, 7.0, 8.0]);
    a.matmul(&b).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&a), vec![11.0, 15.0, 11.0, 15.0]);
    assert!(b.grad().is_none());
}

#[test]
fn conv2d_gradient_on_a_3x3_input_by_hand() {
    // x = 1..9 as 3x3, w = [[1,0],[0,-1]] (2x2), no padding: out is 2x2.
    // With upstream all ones, dw[i][j] = Σ of the 2x2 window sums of x
    // shifted by (i, j): dw = [[1+2+4+5, 2+3+5+6], [4+5+7+8, 5+6+8+9]]
    //                       = [[12, 16], [24, 28]];
    // dx[p] = Σ over the windows covering p of the tap weight there:
    // corners get w's matching tap, e.g. dx[0][0] = 1, dx[2][2] = -1,
    // dx[1][1] = 1 + 0 + 0 - 1 = 0. db = 4 (four outputs).
    let x = leaf(
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        &[1, 1, 3, 3],
    );
    let w = leaf(&[1.0, 0.0, 0.0, -1.0], &[1, 1, 2, 2]);
    let b = leaf(&[0.5], &[1]);
    let y = x.conv2d(&w, Some(&b), Conv2dParams::default()).unwrap();
    y.sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&w), vec![12.0, 16.0, 24.0, 28.0]);
    assert_eq!(
        grad(&x),
        vec![1.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, -1.0, -1.0]
    );
    assert_eq!(grad(&b), vec![4.0]);
}

#[test]
fn max_shares_the_gradient_among_ties() {
    let x = leaf(&[1.0, 3.0, 3.0], &[3]);
    x.max_all().unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![0.0, 0.5, 0.5]);
    let a = leaf(&[2.0, 1.0], &[2]);
    let b = leaf(&[2.0, 4.0], &[2]);
    a.maximum(&b)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&a), vec![0.5, 0.0]);
    assert_eq!(grad(&b), vec![0.5, 1.0]);
}

#[test]
fn max_pool_routes_to_the_first_maximum() {
    let x = leaf(&[1.0, 4.0, 4.0, 2.0], &[1, 1, 2, 2]);
    let p = Pool2dParams::new((2, 2));
    x.max_pool2d(p)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x), vec![0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn relu_gradient_at_zero_is_zero() {
    let x = leaf(&[-1.0, 0.0, 2.0], &[3]);
    x.relu().unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![0.0, 0.0, 1.0]);
}

#[test]
fn prod_gradient_with_zeros() {
    // d/dx_i Π x: one zero → only the zero's entry is nonzero; two zeros →
    // everything is zero.
    let x = leaf(&[2.0, 0.0, 3.0], &[3]);
    x.prod_all().unwrap().backward().unwrap();
    assert_eq!(grad(&x), vec![0.0, 6.0, 0.0]);
    let y = leaf(&[0.0, 0.0, 3.0], &[3]);
    y.prod_all().unwrap().backward().unwrap();
    assert_eq!(grad(&y), vec![0.0, 0.0, 0.0]);
}

#[test]
fn casts_pass_the_gradient_back_in_the_input_dtype() {
    let x = leaf(&[1.5, -2.0], &[2]);
    let y = x.to_dtype(DType::F32).unwrap().mul_scalar(2.0).unwrap();
    y.sum_all().unwrap().backward().unwrap();
    let g = x.grad().unwrap();
    assert_eq!(g.dtype(), DType::F64);
    assert_eq!(g.to_f64_vec().unwrap(), vec![2.0, 2.0]);
}

// ---- gradient checks of every differentiable op ----

#[test]
fn gradcheck_unary_ops() {
    type Op = fn(&Tensor) -> oxmera_core::Result<Tensor>;
    let smooth: &[(&str, Op)] = &[
        ("neg", |x| x.neg()),
        ("exp", |x| x.exp()),
        ("square", |x| x.square()),
        ("sin", |x| x.sin()),
        ("cos", |x| x.cos()),
        ("tanh", |x| x.tanh()),
        ("sigmoid", |x| x.sigmoid()),
        ("gelu", |x| x.gelu()),
        ("gelu_tanh", |x| x.gelu_tanh()),
        ("silu", |x| x.silu()),
        ("softplus", |x| x.softplus()),
        ("erf", |x| x.erf()),
        ("powf3", |x| x.powf(3.0)),
    ];
    for (i, (name, op)) in smooth.iter().enumerate() {
        check(name, |xs| op(&xs[0]), &[input(10 + i as u64, &[2, 3], &[])]);
    }
    let kinked: &[(&str, Op, &[f64])] = &[
        ("abs", |x| x.abs(), &[0.0]),
        ("relu", |x| x.relu(), &[0.0]),
        ("leaky_relu", |x| x.leaky_relu(0.1), &[0.0]),
        ("clamp", |x| x.clamp(Some(-0.5), Some(0.7)), &[-0.5, 0.7]),
        ("sign", |x| x.sign(), &[0.0]),
        ("floor", |x| x.floor(), &[-2.0, -1.0, 0.0, 1.0, 2.0]),
        ("ceil", |x| x.ceil(), &[-2.0, -1.0, 0.0, 1.0, 2.0]),
        ("round", |x| x.round(), &[-1.5, -0.5, 0.5, 1.5]),
    ];
    for (i, (name, op, kinks)) in kinked.iter().enumerate() {
        check(
            name,
            |xs| op(&xs[0]),
            &[input(30 + i as u64, &[2, 3], kinks)],
        );
    }
    let on_positives: &[(&str, Op)] = &[
        ("log", |x| x.log()),
        ("log1p", |x| x.log1p()),
        ("sqrt", |x| x.sqrt()),
        ("rsqrt", |x| x.rsqrt()),
        ("recip", |x| x.recip()),
        ("powf-half", |x| x.powf(-0.5)),
    ];
    for (i, (name, op)) in on_positives.iter().enumerate() {
        check(name, |xs| op(&xs[0]), &[positive(50 + i as u64, &[2, 3])]);
    }
}

#[test]
fn gradcheck_binary_ops_with_broadcasting() {
    type Op = fn(&Tensor, &Tensor) -> oxmera_core::Result<Tensor>;
    let ops: &[(&str, Op)] = &[
        ("add", |a, b| a.add(b)),
        ("sub", |a, b| a.sub(b)),
        ("mul", |a, b| a.mul(b)),
        ("div", |a, b| a.div(b)),
        ("maximum", |a, b| a.maximum(b)),
        ("minimum", |a, b| a.minimum(b)),
    ];
    for (i, (name, op)) in ops.iter().enumerate() {
        let seed = 70 + 3 * i as u64;
        // [2, 3] with [3] (leading dim added) and with [2, 1] (stretched).
        check(
            name,
            |xs| op(&xs[0], &xs[1]),
            &[input(seed, &[2, 3], &[]), positive(seed + 1, &[3])],
        );
        check(
            name,
            |xs| op(&xs[0], &xs[1]),
            &[input(seed, &[2, 3], &[]), positive(seed + 2, &[2, 1])],
        );
    }
    check(
        "pow",
        |xs| xs[0].pow(&xs[1]),
        &[positive(90, &[2, 3]), input(91, &[3], &[])],
    );
    // rem jumps where a/b is an integer; keep a/b in (0, 1) ∪ (1, 2).
    check(
        "rem",
        |xs| xs[0].rem(&xs[1]),
        &[
            (vec![0.3, 0.7, 1.3, 1.7, 0.45, 1.55], vec![2, 3]),
            (vec![1.0], vec![1]),
        ],
    );
    check(
        "scalar ops",
        |xs| xs[0].mul_scalar(3.0)?.rsub_scalar(1.0)?.div_scalar(2.0),
        &[input(92, &[4], &[])],
    );
}

#[test]
fn gradcheck_where_and_masked_fill() {
    let cond = Tensor::from_vec(vec![true, false, true], [3], Device::Reference).unwrap();
    let c = cond.clone();
    check(
        "where",
        move |xs| Tensor::where_(&c, &xs[0], &xs[1]),
        &[input(100, &[2, 3], &[]), input(101, &[3], &[])],
    );
    check(
        "masked_fill",
        move |xs| xs[0].masked_fill(&cond, 7.0),
        &[input(102, &[2, 3], &[])],
    );
}

#[test]
fn gradcheck_reductions() {
    type Op = fn(&Tensor) -> oxmera_core::Result<Tensor>;
    let ops: &[(&str, Op)] = &[
        ("sum", |x| x.sum(&[1], false)),
        ("sum-keepdim", |x| x.sum(&[0, 2], true)),
        ("mean", |x| x.mean(&[0], false)),
        ("prod", |x| x.prod(&[2], false)),
        ("max", |x| x.max(&[1], false)),
        ("min", |x| x.min(&[0, 2], true)),
        ("var", |x| x.var(&[2], 1.0, false)),
        ("std", |x| x.std(&[1, 2], 0.0, false)),
        ("logsumexp", |x| x.logsumexp(&[2], true)),
        ("sum_all", |x| x.sum_all()),
        ("mean_all", |x| x.mean_all()),
        ("max_all", |x| x.max_all()),
    ];
    for (i, (name, op)) in ops.iter().enumerate() {
        check(
            name,
            |xs| op(&xs[0]),
            &[input(110 + i as u64, &[2, 3, 2], &[])],
        );
    }
}

#[test]
fn gradcheck_softmax_and_matmul() {
    check(
        "softmax",
        |xs| xs[0].softmax(1),
        &[input(130, &[2, 4], &[])],
    );
    check(
        "log_softmax",
        |xs| xs[0].log_softmax(-1),
        &[input(131, &[3, 3], &[])],
    );
    check(
        "layer_norm last dim",
        |xs| xs[0].layer_norm(1, 1e-5),
        &[input(140, &[3, 4], &[])],
    );
    check(
        "layer_norm last two dims",
        |xs| xs[0].layer_norm(2, 0.5),
        &[input(141, &[2, 2, 3], &[])],
    );
    check(
        "matmul 2d",
        |xs| xs[0].matmul(&xs[1]),
        &[input(132, &[2, 3], &[]), input(133, &[3, 4], &[])],
    );
    check(
        "matmul vec",
        |xs| xs[0].matmul(&xs[1]),
        &[input(134, &[3], &[]), input(135, &[2, 3, 2], &[])],
    );
    check(
        "matmul mat-vec",
        |xs| xs[0].matmul(&xs[1]),
        &[input(136, &[2, 3], &[]), input(137, &[3], &[])],
    );
    check(
        "matmul broadcast batch",
        |xs| xs[0].matmul(&xs[1]),
        &[input(138, &[2, 1, 2, 3], &[]), input(139, &[3, 3, 2], &[])],
    );
}

#[test]
fn gradcheck_views() {
    type Op = fn(&Tensor) -> oxmera_core::Result<Tensor>;
    let ops: &[(&str, Op)] = &[
        ("permute", |x| x.permute(&[2, 0, 1])),
        ("transpose", |x| x.transpose(0, -1)),
        ("narrow", |x| x.narrow(1, 1, 2)),
        ("slice", |x| x.slice(1, 0, 3, 2)),
        ("slice-offset", |x| x.slice(2, 1, 2, 3)),
        ("broadcast_to", |x| {
            x.unsqueeze(0)?.broadcast_to([3, 2, 3, 2])
        }),
        ("expand", |x| x.narrow(1, 0, 1)?.expand([2, 4, 2])),
        ("reshape", |x| x.reshape([3, 4])),
        ("view", |x| x.contiguous()?.view([6, 2])),
        ("flatten", |x| x.flatten(0, 1)),
        ("squeeze", |x| x.narrow(1, 0, 1)?.squeeze(1)),
        ("squeeze_all", |x| x.narrow(0, 1, 1)?.squeeze_all().exp()),
        ("unsqueeze", |x| x.unsqueeze(-1)),
        ("split", |x| {
            let parts = x.split(2, 1)?;
            parts[0]
                .mul(&parts[0])?
                .sum_all()?
                .add(&parts[1].sum_all()?)
        }),
        ("chunk", |x| x.chunk(2, 0)?[1].exp()),
        ("contiguous", |x| x.t_last()?.contiguous()),
    ];
    for (i, (name, op)) in ops.iter().enumerate() {
        check(
            name,
            |xs| op(&xs[0]),
            &[input(150 + i as u64, &[2, 3, 2], &[])],
        );
    }
}

/// `transpose(-1, -2)` under a short name for the table above.
trait TLast {
    fn t_last(&self) -> oxmera_core::Result<Tensor>;
}
impl TLast for Tensor {
    fn t_last(&self) -> oxmera_core::Result<Tensor> {
        self.transpose(-1, -2)
    }
}

#[test]
fn gradcheck_joining_and_indexing() {
    check(
        "cat",
        |xs| Tensor::cat(&[&xs[0], &xs[1]], 1),
        &[input(170, &[2, 3], &[]), input(171, &[2, 1], &[])],
    );
    check(
        "stack",
        |xs| Tensor::stack(&[&xs[0], &xs[1]], 0),
        &[input(172, &[2, 3], &[]), input(173, &[2, 3], &[])],
    );
    let rows = Tensor::from_vec(vec![2i64, 0, 2, 2], [4], Device::Reference).unwrap();
    check(
        "index_select (repeats accumulate)",
        move |xs| xs[0].index_select(0, &rows),
        &[input(174, &[3, 2], &[])],
    );
    let idx = Tensor::from_vec(vec![1i64, 1, 0, 2, 2, 2], [2, 3], Device::Reference).unwrap();
    let gi = idx.clone();
    check(
        "gather (repeats accumulate)",
        move |xs| xs[0].gather(1, &gi),
        &[input(175, &[2, 3], &[])],
    );
    let si = Tensor::from_vec(vec![0i64, 2, 1, 1, 0, 2], [2, 3], Device::Reference).unwrap();
    let s2 = si.clone();
    check(
        "scatter",
        move |xs| xs[0].scatter(1, &si, &xs[1]),
        &[input(176, &[2, 3], &[]), input(177, &[2, 3], &[])],
    );
    check(
        "scatter_add (overlap)",
        move |xs| xs[0].scatter_add(1, &idx, &xs[1]),
        &[input(178, &[2, 3], &[]), input(179, &[2, 3], &[])],
    );
    let _ = s2;
    check(
        "pad",
        |xs| xs[0].pad(&[(1, 0), (2, 1)], 0.5),
        &[input(180, &[2, 3], &[])],
    );
    check(
        "flip",
        |xs| xs[0].flip(&[0, 1]),
        &[input(181, &[2, 3], &[])],
    );
    check("tril", |xs| xs[0].tril(0), &[input(182, &[3, 3], &[])]);
    check("triu", |xs| xs[0].triu(1), &[input(183, &[2, 3, 3], &[])]);
}

#[test]
fn gradcheck_convolution_and_pooling() {
    let cases = [
        Conv2dParams::default(),
        Conv2dParams {
            stride: (2, 1),
            padding: (1, 0),
            dilation: (1, 2),
            groups: 1,
        },
        Conv2dParams {
            stride: (1, 2),
            padding: (1, 1),
            dilation: (1, 1),
            groups: 2,
        },
    ];
    for (i, p) in cases.into_iter().enumerate() {
        let seed = 200 + 4 * i as u64;
        check(
            "conv2d",
            move |xs| xs[0].conv2d(&xs[1], Some(&xs[2]), p),
            &[
                input(seed, &[2, 2, 4, 5], &[]),
                input(seed + 1, &[2, 2 / p.groups, 2, 2], &[]),
                input(seed + 2, &[2], &[]),
            ],
        );
    }
    let p = Pool2dParams {
        kernel: (2, 2),
        stride: (2, 1),
        padding: (1, 0),
    };
    check(
        "max_pool2d",
        move |xs| xs[0].max_pool2d(p),
        &[input(220, &[1, 2, 4, 3], &[])],
    );
    check(
        "avg_pool2d",
        move |xs| xs[0].avg_pool2d(p),
        &[input(221, &[1, 2, 4, 3], &[])],
    );
}

// ---- gradient checks on generated shapes ----

mod generated {
    use super::*;
    use proptest::prelude::*;

    /// A shape of rank 1..=3 with dims 1..=3, and a seed for its values.
    fn shape() -> impl Strategy<Value = Vec<usize>> {
        proptest::collection::vec(1usize..=3, 1..=3)
    }

    /// `shape` with some dims replaced by 1 and some leading dims dropped:
    /// a shape that broadcasts against it.
    fn broadcastable(shape: Vec<usize>) -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
        let rank = shape.len();
        (proptest::collection::vec(any::<bool>(), rank), 0..rank).prop_map(move |(ones, drop)| {
            let other: Vec<usize> = shape
                .iter()
                .zip(&ones)
                .map(|(&d, &one)| if one { 1 } else { d })
                .skip(drop)
                .collect();
            (shape.clone(), other)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn binary_ops_broadcast_their_gradients(
            (a, b) in shape().prop_flat_map(broadcastable),
            seed in 0u64..1000,
            op in 0usize..4,
        ) {
            let f = move |xs: &[Tensor]| match op {
                0 => xs[0].add(&xs[1]),
                1 => xs[0].sub(&xs[1]),
                2 => xs[0].mul(&xs[1]),
                _ => xs[0].div(&xs[1]),
            };
            check("generated binary", f, &[input(seed, &a, &[]), positive(seed + 1, &b)]);
        }

        #[test]
        fn reductions_over_any_dims(
            s in shape(),
            seed in 0u64..1000,
            mask in proptest::collection::vec(any::<bool>(), 3),
            keepdim in any::<bool>(),
            op in 0usize..5,
        ) {
            let dims: Vec<isize> = (0..s.len()).filter(|&d| mask[d]).map(|d| d as isize).collect();
            let f = move |xs: &[Tensor]| match op {
                0 => xs[0].sum(&dims, keepdim),
                1 => xs[0].mean(&dims, keepdim),
                2 => xs[0].max(&dims, keepdim),
                3 => xs[0].logsumexp(&dims, keepdim),
                _ => xs[0].prod(&dims, keepdim),
            };
            check("generated reduction", f, &[input(seed, &s, &[])]);
        }

        #[test]
        fn matmul_of_generated_shapes(
            m in 1usize..=3, k in 1usize..=3, n in 1usize..=3,
            batch in proptest::collection::vec(1usize..=2, 0..=2),
            seed in 0u64..1000,
        ) {
            let mut a = batch.clone();
            a.extend([m, k]);
            let b = vec![k, n];
            check("generated matmul", |xs| xs[0].matmul(&xs[1]), &[input(seed, &a, &[]), input(seed + 1, &b, &[])]);
        }

        #[test]
        fn softmax_and_permute_of_generated_shapes(s in shape(), seed in 0u64..1000, dim in 0usize..3) {
            let d = (dim % s.len()) as isize;
            let rank = s.len() as isize;
            check("generated softmax", move |xs| xs[0].log_softmax(d), &[input(seed, &s, &[])]);
            let perm: Vec<isize> = (0..rank).rev().collect();
            check("generated permute", move |xs| xs[0].permute(&perm)?.exp(), &[input(seed, &s, &[])]);
        }
    }
}

#[test]
fn clamp_and_relu_gradients_at_their_kinks_are_pytorchs() {
    // PyTorch's clamp_backward: the subgradient 1 where min <= x <= max
    // (bounds included), 0 where the input was clamped, chosen by a mask
    // (`where`), so an infinite incoming gradient stays out of clamped
    // elements instead of becoming 0·∞ = NaN.
    let x = leaf(&[-1.0, -0.5, 0.0, 0.7, 1.0, f64::NAN], &[6]);
    x.clamp(Some(-0.5), Some(0.7))
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x)[..5], [0.0, 1.0, 1.0, 1.0, 0.0]);
    assert_eq!(grad(&x)[5], 0.0, "NaN input: outside every bound");

    // min == max: only x equal to it passes.
    let x = leaf(&[0.2, 0.3, 0.4], &[3]);
    x.clamp(Some(0.3), Some(0.3))
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x), [0.0, 1.0, 0.0]);

    // min > max: every element becomes max, none passes a gradient.
    let x = leaf(&[0.0, 5.0], &[2]);
    x.clamp(Some(2.0), Some(1.0))
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(grad(&x), [0.0, 0.0]);

    // An infinite gradient from above: clamped elements get exactly 0.
    let x = leaf(&[-3.0, 0.0], &[2]);
    let y = x.clamp(Some(-1.0), None).unwrap();
    let inf = Tensor::from_vec(vec![f64::INFINITY; 2], [2], Device::Reference).unwrap();
    y.backward_with(&inf).unwrap();
    assert_eq!(grad(&x), [0.0, f64::INFINITY]);

    // relu, the same way: 0 where x <= 0 whatever arrives from above.
    let x = leaf(&[-1.0, 0.0, 2.0], &[3]);
    let inf = Tensor::from_vec(vec![f64::INFINITY; 3], [3], Device::Reference).unwrap();
    x.relu().unwrap().backward_with(&inf).unwrap();
    assert_eq!(grad(&x), [0.0, 0.0, f64::INFINITY]);
}

#[test]
fn maximum_minimum_and_leaky_relu_select_their_gradients() {
    // maximum: the larger operand takes g, a tie halves it, and the loser
    // of an infinite gradient gets exactly 0 (was 0·∞ = NaN).
    let a = leaf(&[3.0, 1.0, 2.0], &[3]);
    let b = leaf(&[1.0, 4.0, 2.0], &[3]);
    let inf = Tensor::from_vec(vec![f64::INFINITY; 3], [3], Device::Reference).unwrap();
    a.maximum(&b).unwrap().backward_with(&inf).unwrap();
    assert_eq!(grad(&a), [f64::INFINITY, 0.0, f64::INFINITY]);
    assert_eq!(grad(&b), [0.0, f64::INFINITY, f64::INFINITY]);
    // minimum with a finite gradient: the hand-computed weights 1, 0, ½.
    let a = leaf(&[3.0, 1.0, 2.0], &[3]);
    let b = leaf(&[1.0, 4.0, 2.0], &[3]);
    let g = Tensor::from_vec(vec![2.0, 2.0, 2.0], [3], Device::Reference).unwrap();
    a.minimum(&b).unwrap().backward_with(&g).unwrap();
    assert_eq!(grad(&a), [0.0, 2.0, 1.0]);
    assert_eq!(grad(&b), [2.0, 0.0, 1.0]);

    // leaky_relu: g where x > 0, g·slope elsewhere (x = 0 included, as
    // PyTorch), in f64 and f32.
    let x = leaf(&[-2.0, 0.0, 3.0], &[3]);
    let g = Tensor::from_vec(vec![1.0, 1.0, 1.0], [3], Device::Reference).unwrap();
    x.leaky_relu(0.01).unwrap().backward_with(&g).unwrap();
    assert_eq!(grad(&x), [0.01, 0.01, 1.0]);
    let x32 = t(&[0.5, -0.5], &[2], DType::F32)
        .with_requires_grad(true)
        .unwrap();
    x32.leaky_relu(0.01)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    let g32 = x32.grad().unwrap().to_vec::<f32>().unwrap();
    assert_eq!(g32, [1.0, 0.01f64 as f32]);
    // An infinite gradient: infinite where x > 0, slope·∞ elsewhere.
    let x = leaf(&[-2.0, 3.0], &[2]);
    let inf = Tensor::from_vec(vec![f64::INFINITY; 2], [2], Device::Reference).unwrap();
    x.leaky_relu(0.5).unwrap().backward_with(&inf).unwrap();
    assert_eq!(grad(&x), [f64::INFINITY, f64::INFINITY]);
}
