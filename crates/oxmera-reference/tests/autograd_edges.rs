//! Gradients at edge values, on the reference backend: each case names the
//! op, the point, the gradient oxmera gives and PyTorch's (from its
//! `derivatives.yaml` formulas and backward kernels). The class of bug
//! looked for is a backward rule that computes 0·∞ or 0/0 where the
//! function is flat or at an edge value, giving NaN where PyTorch gives a
//! finite gradient. `docs/backends.md` ("Gradients at edge values") lists
//! what is checked here.

mod common;
use common::*;

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{Pool2dParams, SELU_ALPHA, SELU_SCALE, Tensor};

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

/// `g` shaped as `like`.
fn upstream(g: &[f64], like: &Tensor) -> Tensor {
    t(g, like.dims(), DType::F64)
}

/// The gradient of `f` at the rank-1 `x` with the incoming gradient `g`.
fn grad_at(f: impl Fn(&Tensor) -> Result<Tensor>, x: &[f64], g: &[f64]) -> Vec<f64> {
    let x = leaf(x, &[x.len()]);
    let y = f(&x).unwrap();
    y.backward_with(&upstream(g, &y)).unwrap();
    grad(&x)
}

/// The gradients of `f(a, b)` at rank-1 `a` and `b` with incoming `g`.
fn grads_at(
    f: impl Fn(&Tensor, &Tensor) -> Result<Tensor>,
    a: &[f64],
    b: &[f64],
    g: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (a, b) = (leaf(a, &[a.len()]), leaf(b, &[b.len()]));
    let y = f(&a, &b).unwrap();
    y.backward_with(&upstream(g, &y)).unwrap();
    (grad(&a), grad(&b))
}

/// Exact equality, NaN equal to NaN (and -0 to 0: PyTorch's sign of a zero
/// gradient is not what is checked).
#[track_caller]
fn same(what: &str, actual: &[f64], expected: &[f64]) {
    let ok = actual.len() == expected.len()
        && actual
            .iter()
            .zip(expected)
            .all(|(a, e)| (a.is_nan() && e.is_nan()) || a == e);
    assert!(ok, "{what}: got {actual:?}, expected {expected:?}");
}

type Unary = fn(&Tensor) -> Result<Tensor>;

#[test]
fn saturating_ops_have_zero_gradient_at_the_infinities() {
    // x = [-inf, +inf], g = [1, 1]. PyTorch: sigmoid_backward g·y·(1-y)
    // = 0; tanh_backward g·(1-y²) = 0; erf 2/√π·e^(-x²)·g = 0; atan
    // g/(x²+1) = 0; softplus_backward g·σ(x) (threshold: g above 20) =
    // [0, 1]; log_sigmoid_backward [1, 0]; elu_backward g·α·e^x below 0,
    // g above = [0, 1]; selu [0, scale]; relu [0, 1]; clamp(-1, 1) clamped
    // both = [0, 0]; hardtanh(-1, 1) [0, 0]; hardsigmoid [0, 0];
    // hardswish_backward [0, 1].
    let cases: &[(&str, Unary, [f64; 2])] = &[
        ("sigmoid", |x| x.sigmoid(), [0.0, 0.0]),
        ("tanh", |x| x.tanh(), [0.0, 0.0]),
        ("erf", |x| x.erf(), [0.0, 0.0]),
        ("atan", |x| x.atan(), [0.0, 0.0]),
        ("softplus", |x| x.softplus(), [0.0, 1.0]),
        ("logsigmoid", |x| x.logsigmoid(), [1.0, 0.0]),
        ("elu", |x| x.elu(1.0), [0.0, 1.0]),
        ("selu", |x| x.selu(), [0.0, SELU_SCALE]),
        ("relu", |x| x.relu(), [0.0, 1.0]),
        ("clamp", |x| x.clamp(Some(-1.0), Some(1.0)), [0.0, 0.0]),
        ("hardtanh", |x| x.hardtanh(-1.0, 1.0), [0.0, 0.0]),
        ("hardsigmoid", |x| x.hardsigmoid(), [0.0, 0.0]),
        ("hardswish", |x| x.hardswish(), [0.0, 1.0]),
    ];
    for (name, f, expected) in cases {
        same(name, &grad_at(f, &[-INF, INF], &[1.0, 1.0]), expected);
    }
    // At x = -inf only (the other end is infinite): exp g·y, exp2
    // g·y·ln 2, expm1 g·(y+1) (PyTorch) or g·e^x (here) — all 0.
    let cases: &[(&str, Unary)] = &[
        ("exp", |x| x.exp()),
        ("exp2", |x| x.exp2()),
        ("expm1", |x| x.expm1()),
    ];
    for (name, f) in cases {
        same(name, &grad_at(f, &[-INF], &[1.0]), &[0.0]);
    }
    // At x = +inf only: sqrt g/(2y), rsqrt -g·y³/2, reciprocal -g·y², log
    // g/x, log2, log10, log1p g/(x+1) — all 0 in PyTorch.
    let cases: &[(&str, Unary)] = &[
        ("sqrt", |x| x.sqrt()),
        ("rsqrt", |x| x.rsqrt()),
        ("recip", |x| x.recip()),
        ("log", |x| x.log()),
        ("log2", |x| x.log2()),
        ("log10", |x| x.log10()),
        ("log1p", |x| x.log1p()),
    ];
    for (name, f) in cases {
        same(name, &grad_at(f, &[INF], &[1.0]), &[0.0]);
    }
}

#[test]
fn kinks_and_zeros_take_pytorchs_subgradient() {
    let one = |f: Unary, x: f64| grad_at(f, &[x], &[1.0])[0];
    // abs at ±0: g·sgn(x) = 0 (PyTorch's sgn(±0) = 0).
    same(
        "abs",
        &grad_at(|x| x.abs(), &[0.0, -0.0], &[1.0, 1.0]),
        &[0.0, 0.0],
    );
    // relu at 0: 0 (threshold_backward, x <= 0). leaky_relu(0.1) at 0: the
    // slope 0.1 (x > 0 is false). elu(0.5) at 0: α = 0.5 (elu_backward
    // takes the x <= 0 branch). selu at 0: scale·α.
    same("relu at 0", &[one(|x| x.relu(), 0.0)], &[0.0]);
    same(
        "leaky_relu at 0",
        &[one(|x| x.leaky_relu(0.1), 0.0)],
        &[0.1],
    );
    same("elu at 0", &[one(|x| x.elu(0.5), 0.0)], &[0.5]);
    same(
        "selu at 0",
        &[one(|x| x.selu(), 0.0)],
        &[SELU_SCALE * SELU_ALPHA],
    );
    // clamp(-1, 1) at its bounds: 1 (clamp_backward keeps min <= x <= max);
    // hardtanh(-1, 1) at its bounds: 0 (hardtanh_backward zeroes x <= min
    // and x >= max); hardsigmoid at ±3: 0 (strictly inside only);
    // hardswish at -3: -1/2 and at 3: 3/2 (x/3 + 1/2 on [-3, 3]).
    let bounds = [-1.0, 1.0];
    let clamp = |x: &Tensor| x.clamp(Some(-1.0), Some(1.0));
    same(
        "clamp at its bounds",
        &grad_at(clamp, &bounds, &[1.0, 1.0]),
        &[1.0, 1.0],
    );
    let hardtanh = |x: &Tensor| x.hardtanh(-1.0, 1.0);
    same(
        "hardtanh at its bounds",
        &grad_at(hardtanh, &bounds, &[1.0, 1.0]),
        &[0.0, 0.0],
    );
    let threes = [-3.0, 3.0];
    let hardsigmoid = |x: &Tensor| x.hardsigmoid();
    same(
        "hardsigmoid at ±3",
        &grad_at(hardsigmoid, &threes, &[1.0, 1.0]),
        &[0.0, 0.0],
    );
    let hardswish = |x: &Tensor| x.hardswish();
    same(
        "hardswish at ±3",
        &grad_at(hardswish, &threes, &[1.0, 1.0]),
        &[-0.5, 1.5],
    );
    // logsigmoid at 0: 1/2.
    same("logsigmoid at 0", &[one(|x| x.logsigmoid(), 0.0)], &[0.5]);
    // The piecewise-constant ops: 0 everywhere, at their jumps too
    // (PyTorch: zeros_like(grad)).
    let cases: &[(&str, Unary)] = &[
        ("sign", |x| x.sign()),
        ("floor", |x| x.floor()),
        ("ceil", |x| x.ceil()),
        ("round", |x| x.round()),
        ("trunc", |x| x.trunc()),
    ];
    for (name, f) in cases {
        let g = grad_at(f, &[0.0, 0.5, 1.0], &[1.0, 1.0, 1.0]);
        same(name, &g, &[0.0, 0.0, 0.0]);
    }
    // square at 0: 2·x·g = 0; x^2 (pow_scalar, powf) at 0: 2·0^1 = 0;
    // x^1 at 0: 1·0^0 = 1; x^0.5 at 0: 0.5·0^-0.5 = inf (PyTorch too).
    same("square at 0", &[one(|x| x.square(), 0.0)], &[0.0]);
    same("powf(2) at 0", &[one(|x| x.powf(2.0), 0.0)], &[0.0]);
    same("powf(1) at 0", &[one(|x| x.powf(1.0), 0.0)], &[1.0]);
    same("powf(0.5) at 0", &[one(|x| x.powf(0.5), 0.0)], &[INF]);
    same(
        "pow_scalar(2) at 0",
        &[one(|x| x.pow_scalar(2.0), 0.0)],
        &[0.0],
    );
    // pow(a, b) at a = 0: d/da = b·0^(b-1) (0 for b = 2, inf for b = 0.5);
    // d/db = 0 for b >= 0 (pow_backward_exponent masks a = 0, b >= 0).
    let (ga, gb) = grads_at(|a, b| a.pow(b), &[0.0, 0.0], &[2.0, 0.5], &[1.0, 1.0]);
    same("pow d/da at a = 0", &ga, &[0.0, INF]);
    same("pow d/db at a = 0", &gb, &[0.0, 0.0]);
    // Where the derivative is infinite PyTorch's is too: sqrt, log at 0
    // (+inf); rsqrt, reciprocal at 0 (-inf); asin at 1 (+inf), acos at 1
    // (-inf).
    same("sqrt at 0", &[one(|x| x.sqrt(), 0.0)], &[INF]);
    same("log at 0", &[one(|x| x.log(), 0.0)], &[INF]);
    same("rsqrt at 0", &[one(|x| x.rsqrt(), 0.0)], &[-INF]);
    same("recip at 0", &[one(|x| x.recip(), 0.0)], &[-INF]);
    same("asin at 1", &[one(|x| x.asin(), 1.0)], &[INF]);
    same("acos at 1", &[one(|x| x.acos(), 1.0)], &[-INF]);
    // maximum/minimum at a tie: half each (PyTorch's where(a == b, g/2, g)).
    let (ga, gb) = grads_at(|a, b| a.maximum(b), &[2.0], &[2.0], &[1.0]);
    same("maximum tie", &[ga[0], gb[0]], &[0.5, 0.5]);
    let (ga, gb) = grads_at(|a, b| a.minimum(b), &[2.0], &[2.0], &[1.0]);
    same("minimum tie", &[ga[0], gb[0]], &[0.5, 0.5]);
    // atan2 and hypot at (0, 0): NaN in PyTorch too (atan2_backward's
    // g·b/(a²+b²) is 0·inf; hypot's g·a/out is 0/0) — the one point of
    // this file where NaN is the agreed answer.
    let (ga, gb) = grads_at(|a, b| a.atan2(b), &[0.0], &[0.0], &[1.0]);
    same("atan2 at (0, 0)", &[ga[0], gb[0]], &[NAN, NAN]);
    let (ga, gb) = grads_at(|a, b| a.hypot(b), &[0.0], &[0.0], &[1.0]);
    same("hypot at (0, 0)", &[ga[0], gb[0]], &[NAN, NAN]);
}

#[test]
fn an_infinite_incoming_gradient_gives_zero_where_the_slope_is_zero() {
    // g = inf everywhere. Where the local derivative is exactly 0 PyTorch
    // *selects* 0 (a mask, an index_put or a zeros_like), so the result is
    // 0, not 0·∞ = NaN.
    let infs = |n: usize| vec![INF; n];
    let cases: &[(&str, Unary, &[f64], &[f64])] = &[
        // zeros_like(grad)
        ("sign", |x| x.sign(), &[-1.5, 0.0, 2.5], &[0.0, 0.0, 0.0]),
        ("floor", |x| x.floor(), &[-1.5, 0.0, 2.5], &[0.0, 0.0, 0.0]),
        ("ceil", |x| x.ceil(), &[-1.5, 0.0, 2.5], &[0.0, 0.0, 0.0]),
        ("round", |x| x.round(), &[-1.5, 0.0, 2.5], &[0.0, 0.0, 0.0]),
        ("trunc", |x| x.trunc(), &[-1.5, 0.0, 2.5], &[0.0, 0.0, 0.0]),
        // threshold_backward: where(x <= 0, 0, g)
        ("relu", |x| x.relu(), &[-1.0, 0.0, 1.0], &[0.0, 0.0, INF]),
        // clamp_backward: where(min <= x <= max, g, 0)
        (
            "clamp",
            |x| x.clamp(Some(-1.0), Some(1.0)),
            &[-2.0, 0.0, 2.0],
            &[0.0, INF, 0.0],
        ),
        // hardtanh_backward: 0 where x <= min or x >= max
        (
            "hardtanh",
            |x| x.hardtanh(-1.0, 1.0),
            &[-2.0, 0.0, 2.0],
            &[0.0, INF, 0.0],
        ),
        // hardsigmoid_backward: g/6 inside (-3, 3), else 0
        (
            "hardsigmoid",
            |x| x.hardsigmoid(),
            &[-4.0, 0.0, 4.0],
            &[0.0, INF, 0.0],
        ),
        // hardswish_backward: 0 below -3, g·(x/3 + 1/2) on [-3, 3], g above
        (
            "hardswish",
            |x| x.hardswish(),
            &[-4.0, 0.0, 4.0],
            &[0.0, INF, INF],
        ),
        // pow_backward: zeros_like when the exponent is 0, x = 0 included
        (
            "pow_scalar(0)",
            |x| x.pow_scalar(0.0),
            &[0.0, 2.0],
            &[0.0, 0.0],
        ),
        ("powf(0)", |x| x.powf(0.0), &[0.0, 2.0], &[0.0, 0.0]),
        // std_backward masks result == 0: a constant slice gets 0
        (
            "std (constant)",
            |x| x.std(&[0], 1.0, false),
            &[2.0, 2.0, 2.0],
            &[0.0, 0.0, 0.0],
        ),
        // slice_backward: zeros with g copied in
        (
            "slice",
            |x| x.slice(0, 0, 4, 2),
            &[1.0, 2.0, 3.0, 4.0],
            &[INF, 0.0, INF, 0.0],
        ),
        // max (dim) / max() on the CPU: the gradient is put at the maxima
        // (value_selecting_reduction_backward, evenly_distribute_backward's
        // index_put). Fixed here: the rule multiplied g by a 0/1 mask.
        // (PyTorch's amax multiplies by its mask too, and gives NaN here.)
        (
            "max",
            |x| x.max(&[0], false),
            &[1.0, 3.0, 2.0],
            &[0.0, INF, 0.0],
        ),
        (
            "min",
            |x| x.min(&[0], false),
            &[1.0, 3.0, 2.0],
            &[INF, 0.0, 0.0],
        ),
        (
            "max_all",
            |x| x.max_all(),
            &[1.0, 3.0, 2.0],
            &[0.0, INF, 0.0],
        ),
    ];
    for (name, f, x, expected) in cases {
        let out_len = f(&t(x, &[x.len()], DType::F64)).unwrap().numel();
        same(name, &grad_at(f, x, &infs(out_len)), expected);
    }
    // pow(a, b) at b = 0: d/da = 0 (pow_backward_self's where(b == 0, 0,
    // ...)), a = 0 included; d/db = 0 at a = 0 (b >= 0), and ln 2 · inf at a
    // = 2.
    let (ga, gb) = grads_at(|a, b| a.pow(b), &[0.0, 2.0], &[0.0, 0.0], &infs(2));
    same("pow d/da at b = 0", &ga, &[0.0, 0.0]);
    same("pow d/db at b = 0", &gb, &[0.0, INF]);
    // maximum/minimum: the losing operand gets 0 (masked_fill).
    let (ga, gb) = grads_at(|a, b| a.maximum(b), &[1.0], &[2.0], &infs(1));
    same("maximum", &[ga[0], gb[0]], &[0.0, INF]);
    let (ga, gb) = grads_at(|a, b| a.minimum(b), &[1.0], &[2.0], &infs(1));
    same("minimum", &[ga[0], gb[0]], &[INF, 0.0]);
    // where(cond, a, b): where(cond, g, 0) and where(cond, 0, g).
    let cond = Tensor::from_vec(vec![true, false], [2], Device::Reference).unwrap();
    let (ga, gb) = grads_at(
        |a, b| Tensor::where_(&cond, a, b),
        &[1.0, 2.0],
        &[3.0, 4.0],
        &infs(2),
    );
    same("where (a)", &ga, &[INF, 0.0]);
    same("where (b)", &gb, &[0.0, INF]);
    // index_select and gather: zeros, g accumulated at the picked
    // positions (index_add / scatter_add).
    let idx = Tensor::from_vec(vec![2i64], [1], Device::Reference).unwrap();
    let g = grad_at(|x| x.index_select(0, &idx), &[1.0, 2.0, 3.0], &infs(1));
    same("index_select", &g, &[0.0, 0.0, INF]);
    let g = grad_at(|x| x.gather(0, &idx), &[1.0, 2.0, 3.0], &infs(1));
    same("gather", &g, &[0.0, 0.0, INF]);
    // max_pool2d over one 2x2 window: the gradient goes to the maximum's
    // index (max_pool2d_with_indices_backward scatters), 0 elsewhere.
    let x = leaf(&[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
    let y = x.max_pool2d(Pool2dParams::new((2, 2))).unwrap();
    y.backward_with(&upstream(&[INF], &y)).unwrap();
    same("max_pool2d", &grad(&x), &[0.0, 0.0, 0.0, INF]);
}

#[test]
fn products_and_scans_through_zeros() {
    // prod: ∂/∂x_i = Π_{j≠i} x_j, also at a zero (PyTorch's
    // prod_safe_zeros_backward): [2, 0, 3] → [0, 6, 0]; two zeros → all 0.
    let prod = |x: &Tensor| x.prod(&[0], false);
    same(
        "prod, one zero",
        &grad_at(prod, &[2.0, 0.0, 3.0], &[1.0]),
        &[0.0, 6.0, 0.0],
    );
    same(
        "prod, two zeros",
        &grad_at(prod, &[0.0, 0.0, 3.0], &[1.0]),
        &[0.0, 0.0, 0.0],
    );
    // cumprod: ∂L/∂x_i = Σ_{j>=i} g_j Π_{k<=j, k≠i} x_k (PyTorch's
    // cumprod_backward handles zeros the same way). [2, 0, 3], g = 1:
    // [1 + 0 + 0, 2 + 2·3, 2·0] = [1, 8, 0]; [0, 0, 3]: [1, 0, 0].
    let cumprod = |x: &Tensor| x.cumprod(0);
    let ones = [1.0; 3];
    same(
        "cumprod, one zero",
        &grad_at(cumprod, &[2.0, 0.0, 3.0], &ones),
        &[1.0, 8.0, 0.0],
    );
    same(
        "cumprod, two zeros",
        &grad_at(cumprod, &[0.0, 0.0, 3.0], &ones),
        &[1.0, 0.0, 0.0],
    );
}

#[test]
fn reductions_and_normalizations_at_constant_masked_and_empty_inputs() {
    // max/min ties split the gradient evenly (amax/amin's
    // scale_grad_by_count, and max()'s evenly_distribute_backward).
    let g = grad_at(|x| x.max(&[0], false), &[2.0, 2.0, 1.0], &[1.0]);
    same("max tie", &g, &[0.5, 0.5, 0.0]);
    let g = grad_at(|x| x.min(&[0], false), &[1.0, 2.0, 1.0], &[1.0]);
    same("min tie", &g, &[0.5, 0.0, 0.5]);
    // A NaN maximum sends the gradient to the NaN (torch.max(dim) returns
    // its index; max()'s evenly_distribute_backward masks isnan).
    let g = grad_at(|x| x.max(&[0], false), &[1.0, NAN, 3.0], &[1.0]);
    same("max at NaN", &g, &[0.0, 1.0, 0.0]);
    // logsumexp with a -inf entry: g·exp(x - lse) = [0, 1]
    // (logsumexp_backward).
    let g = grad_at(|x| x.logsumexp(&[0], false), &[-INF, 0.0], &[1.0]);
    same("logsumexp with -inf", &g, &[0.0, 1.0]);
    // softmax([-inf, 0]) = [0, 1]; y·(g - Σ g·y) = [0, 0] for g = [1, 0]
    // and for g = [0, 1] (_softmax_backward_data).
    let softmax = |x: &Tensor| x.softmax(0);
    same(
        "softmax with -inf",
        &grad_at(softmax, &[-INF, 0.0], &[1.0, 0.0]),
        &[0.0, 0.0],
    );
    same(
        "softmax with -inf",
        &grad_at(softmax, &[-INF, 0.0], &[0.0, 1.0]),
        &[0.0, 0.0],
    );
    // softmax of a constant: y = [1/2, 1/2], g = [1, 0] → [1/4, -1/4].
    same(
        "softmax constant",
        &grad_at(softmax, &[1.0, 1.0], &[1.0, 0.0]),
        &[0.25, -0.25],
    );
    // log_softmax([-inf, 0]) = [-inf, 0]; g - e^y·Σg = [1, -1] for g = 1.
    let g = grad_at(|x| x.log_softmax(0), &[-INF, 0.0], &[1.0, 1.0]);
    same("log_softmax with -inf", &g, &[1.0, -1.0]);
    // layer_norm of a constant row, eps = 1/4: rstd = 2, y = 0, so the
    // gradient is rstd·(g - mean g) = 2·([1, 2, 3, 6] - 3) = [-4, -2, 0, 6]
    // (PyTorch's layer_norm_backward, no weight).
    let ln = |x: &Tensor| x.layer_norm(1, 0.25);
    let g = grad_at(ln, &[3.0; 4], &[1.0, 2.0, 3.0, 6.0]);
    same("layer_norm constant", &g, &[-4.0, -2.0, 0.0, 6.0]);
    // ... and of one-element groups: y = 0 and g - mean g = 0.
    let x = leaf(&[5.0, 7.0], &[2, 1]);
    let y = x.layer_norm(1, 1e-5).unwrap();
    y.backward_with(&upstream(&[1.0, 2.0], &y)).unwrap();
    same("layer_norm of one element", &grad(&x), &[0.0, 0.0]);
    // var of a constant: 2·(x - mean)/(N - 1) = 0.
    let g = grad_at(|x| x.var(&[0], 1.0, false), &[2.0; 3], &[1.0]);
    same("var constant", &g, &[0.0; 3]);
    // Reducing a zero-size dim: the gradient is the (empty) input's shape,
    // whatever the (NaN or -inf) values reduced to.
    let cases: &[(&str, Unary)] = &[
        ("sum", |x| x.sum(&[1], false)),
        ("mean", |x| x.mean(&[1], false)),
        ("var", |x| x.var(&[1], 1.0, false)),
        ("std", |x| x.std(&[1], 1.0, false)),
        ("prod", |x| x.prod(&[1], false)),
        ("logsumexp", |x| x.logsumexp(&[1], false)),
        ("softmax", |x| x.softmax(1)),
        ("log_softmax", |x| x.log_softmax(1)),
    ];
    for (name, f) in cases {
        let x = leaf(&[], &[2, 0]);
        let y = f(&x).unwrap();
        y.backward_with(&y.ones_like().unwrap()).unwrap();
        let g = x.grad().expect("a gradient");
        assert_eq!(g.dims(), &[2, 0], "{name} over an empty dim");
    }
}
