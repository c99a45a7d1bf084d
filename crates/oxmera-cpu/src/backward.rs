//! Fused backward passes: ReLU's, GELU's, softmax's and layer
//! normalization's.
//!
//! Composed from tensor ops (`oxmera_tensor::fused_backward`, which the
//! reference keeps as the definition), GELU's backward is eleven full
//! passes over its input, layer normalization's ten with three
//! reductions, softmax's four with one — memory traffic and temporaries
//! for arithmetic that costs next to nothing. In a small transformer's
//! training step they were a quarter of the time. Here each is one pass:
//! GELU's reads `x` and `g` and writes the gradient; the row kernels read a
//! row of each operand (it stays in L1) and write the row's gradient.
//!
//! `f32` gets the vectorized kernels (the `vmath`-style bodies below,
//! compiled per instruction set by `simd`), `f64` plain loops with the
//! same formulas; other dtypes, softmax along a dim other than the last,
//! and GELU's tanh form (whose composition overflows `x³` to NaN in the
//! dtype at huge `|x|`, an answer the reference defines) take the
//! composition.

use oxmera_core::{DType, Result};
use oxmera_reference::scalar::erf;
use oxmera_tensor::{Storage, Tensor, fused_backward};

use crate::softmax::for_rows;
use crate::{Cpu, host, isa, simd, strided};

/// `grad` where `x > 0`, zero elsewhere (see
/// [`oxmera_tensor::Backend::relu_backward`]): one pass over both, where
/// the composition makes three (a comparison, a buffer of zeros, a
/// select). Over `[256, 512]` `f32` on a 2-vCPU Zen 4 the composition
/// took 32 µs and this pass 11 (medians of 1800 calls alternating the
/// two); an MLP step with two hidden layers runs it twice. The same
/// bits: each element is `grad`'s or `+0`.
pub(crate) fn relu(x: &Tensor, grad: &Tensor) -> Result<Storage> {
    match x.dtype() {
        DType::F32 => Ok(host::store(zip::<f32>(x, grad, |v, d| {
            if v > 0.0 { d } else { 0.0 }
        })?)),
        DType::F64 => Ok(host::store(zip::<f64>(x, grad, |v, d| {
            if v > 0.0 { d } else { 0.0 }
        })?)),
        _ => composed(fused_backward::relu(x, grad)),
    }
}

/// `grad · gelu'(x)` (see [`oxmera_tensor::Backend::gelu_backward`]).
pub(crate) fn gelu(x: &Tensor, grad: &Tensor, tanh: bool) -> Result<Storage> {
    match (x.dtype(), tanh) {
        (DType::F32, false) => {
            let isa = isa();
            let (xs, gs) = (host::read::<f32>(x)?, host::read::<f32>(grad)?);
            let mut out = strided::output(xs.len());
            strided::fill(&mut out, |start, chunk| {
                let end = start + chunk.len();
                simd::gelu_grad_run(isa, &xs[start..end], &gs[start..end], chunk);
            });
            Ok(host::store(out))
        }
        (DType::F64, false) => Ok(host::store(zip::<f64>(x, grad, |v, d| {
            d * gelu_erf_grad(v)
        })?)),
        _ => composed(fused_backward::gelu(x, grad, tanh)),
    }
}

/// The gradient of softmax or log-softmax along `dim` (see
/// [`oxmera_tensor::Backend::softmax_backward`]).
pub(crate) fn softmax(y: &Tensor, grad: &Tensor, dim: usize, log: bool) -> Result<Storage> {
    let last = dim + 1 == y.rank();
    match y.dtype() {
        DType::F32 if last && y.numel() > 0 => {
            let isa = isa();
            let row = move |y: &[f32], g: &[f32], o: &mut [f32]| {
                simd::softmax_grad_row(isa, y, g, o, log)
            };
            let len = y.dims()[dim];
            let (ys, gs) = (host::read::<f32>(y)?, host::read::<f32>(grad)?);
            Ok(host::store(rows2(&ys, &gs, len, &row)))
        }
        DType::F64 if last && y.numel() > 0 => {
            let row = move |y: &[f64], g: &[f64], o: &mut [f64]| softmax_grad_row_f64(y, g, o, log);
            let len = y.dims()[dim];
            let (ys, gs) = (host::read::<f64>(y)?, host::read::<f64>(grad)?);
            Ok(host::store(rows2(&ys, &gs, len, &row)))
        }
        _ => composed(fused_backward::softmax(y, grad, dim, log)),
    }
}

/// The gradient of layer normalization over the last `dims` dims (see
/// [`oxmera_tensor::Backend::layer_norm_backward`]).
pub(crate) fn layer_norm(
    x: &Tensor,
    y: &Tensor,
    grad: &Tensor,
    dims: usize,
    eps: f64,
) -> Result<Storage> {
    let len: usize = x.dims()[x.rank() - dims..].iter().product();
    if x.numel() == 0 {
        return composed(fused_backward::layer_norm(x, y, grad, dims, eps));
    }
    match x.dtype() {
        DType::F32 => {
            let (xs, ys, gs) = (
                host::read::<f32>(x)?,
                host::read::<f32>(y)?,
                host::read::<f32>(grad)?,
            );
            let isa = isa();
            let mut out = strided::output(xs.len());
            for_rows(&mut out, len, |at, o| {
                let r = at..at + len;
                simd::layer_norm_grad_row(isa, &xs[r.clone()], &ys[r.clone()], &gs[r], o, eps);
            });
            Ok(host::store(out))
        }
        DType::F64 => {
            let (xs, ys, gs) = (
                host::read::<f64>(x)?,
                host::read::<f64>(y)?,
                host::read::<f64>(grad)?,
            );
            let mut out = strided::output(xs.len());
            for_rows(&mut out, len, |at, o| {
                let r = at..at + len;
                layer_norm_grad_row_f64(&xs[r.clone()], &ys[r.clone()], &gs[r], o, eps);
            });
            Ok(host::store(out))
        }
        _ => composed(fused_backward::layer_norm(x, y, grad, dims, eps)),
    }
}

/// A composition's result as this backend's storage.
fn composed(t: Result<Tensor>) -> Result<Storage> {
    fused_backward::into_storage(&Cpu, t?)
}

/// `f(x[i], g[i])` over two tensors of one shape, in logical order.
fn zip<T: oxmera_tensor::Element + Copy + Sync>(
    x: &Tensor,
    g: &Tensor,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Vec<T>> {
    Ok(strided::map2(
        (host::buffer::<T>(x)?, x.layout()),
        (host::buffer::<T>(g)?, g.layout()),
        f,
    ))
}

/// `row(a_row, b_row, out_row)` for each `len`-long row of two operands.
fn rows2<T: oxmera_tensor::Element>(
    a: &[T],
    b: &[T],
    len: usize,
    row: &(impl Fn(&[T], &[T], &mut [T]) + Sync),
) -> Vec<T> {
    let mut out = strided::output(a.len());
    for_rows(&mut out, len, |at, o| {
        row(&a[at..at + len], &b[at..at + len], o)
    });
    out
}

/// `Φ(x) + x·φ(x)` in `f64`, with the reference's `erf`.
fn gelu_erf_grad(x: f64) -> f64 {
    const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
    let cdf = 0.5 * (1.0 + erf(x * std::f64::consts::FRAC_1_SQRT_2));
    cdf + x * ((-0.5 * x * x).exp() * FRAC_1_SQRT_2PI)
}

/// One `f64` row of softmax's (or log-softmax's) backward.
fn softmax_grad_row_f64(y: &[f64], g: &[f64], out: &mut [f64], log: bool) {
    if log {
        let s: f64 = g.iter().sum();
        for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
            *o = gv - yv.exp() * s;
        }
    } else {
        let s: f64 = g.iter().zip(y).map(|(a, b)| a * b).sum();
        for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
            *o = yv * (gv - s);
        }
    }
}

/// One `f64` row of layer normalization's backward.
fn layer_norm_grad_row_f64(x: &[f64], y: &[f64], g: &[f64], out: &mut [f64], eps: f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let rstd = 1.0 / (var + eps).sqrt();
    let mg = g.iter().sum::<f64>() / n;
    let mgy = g.iter().zip(y).map(|(a, b)| a * b).sum::<f64>() / n;
    for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
        *o = (gv - mg - yv * mgy) * rstd;
    }
}

/// The loop bodies `simd` compiles once per instruction set.
pub(crate) mod kernels {
    use crate::vmath::{self, LANES, exp_f32, madd, mean_rstd, pairwise, sum_f32};

    /// Abramowitz and Stegun's 7.1.26 (`vmath::AS_P`, `vmath::AS_A`),
    /// rounded to `f32`.
    const AS_P: f32 = vmath::AS_P as f32;
    const AS_A: [f32; 5] = [
        vmath::AS_A[0] as f32,
        vmath::AS_A[1] as f32,
        vmath::AS_A[2] as f32,
        vmath::AS_A[3] as f32,
        vmath::AS_A[4] as f32,
    ];

    /// `out[i] = g[i] · (Φ(x[i]) + x[i]·φ(x[i]))`, exact GELU's derivative.
    ///
    /// One exponential serves both terms: `e^(-x²/2)` is `φ`'s Gaussian and,
    /// with `a = |x|/√2`, the `e^(-a²)` of A&S 7.1.26's `erfc(a)`, so
    /// `Φ(x) = erfc(a)/2` for `x < 0` and `1 - erfc(a)/2` otherwise.
    ///
    /// Error: the fit's `1.5e-7` absolute on `erfc` is `0.75e-7` on `Φ`;
    /// the `f32` steps add a few ulps of `Φ` and of `x·φ` (`-x²/2` rounds
    /// once, so `e^(-x²/2)` is within about one ulp plus `x²/2·2^-24`
    /// relative, and `x·φ` is below `0.25` beyond where that grows). So
    /// `|error| <= about 4·2^-24·|g|`: inside the conformance bound for
    /// GELU's gradient, `(9 + 1)·ε·max(|∇|, |g|)` normwise. At `x = ±∞`
    /// the product `x·φ = ∞·0` is NaN, as in the composition.
    #[inline(always)]
    pub(crate) fn gelu_grad_run<const FMA: bool>(x: &[f32], g: &[f32], out: &mut [f32]) {
        const FRAC_1_SQRT_2PI: f32 = 0.398_942_3;
        for ((o, &v), &d) in out.iter_mut().zip(x).zip(g) {
            let gauss = exp_f32::<FMA>(-0.5 * (v * v));
            let a = v.abs() * std::f32::consts::FRAC_1_SQRT_2;
            let t = 1.0 / madd::<FMA>(AS_P, a, 1.0);
            let mut poly = AS_A[4];
            poly = madd::<FMA>(poly, t, AS_A[3]);
            poly = madd::<FMA>(poly, t, AS_A[2]);
            poly = madd::<FMA>(poly, t, AS_A[1]);
            poly = madd::<FMA>(poly, t, AS_A[0]);
            let half_erfc = 0.5 * (poly * t) * gauss;
            let cdf = if v < 0.0 { half_erfc } else { 1.0 - half_erfc };
            *o = d * madd::<FMA>(v, gauss * FRAC_1_SQRT_2PI, cdf);
        }
    }

    /// `Σ a[i]·b[i]` in `f64` lanes.
    #[inline(always)]
    fn dot(a: &[f32], b: &[f32]) -> f64 {
        let mut acc = [0f64; LANES];
        let (ac, bc) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
        let split = a.len() - a.len() % LANES;
        for (x, y) in ac.zip(bc) {
            for j in 0..LANES {
                acc[j] += x[j] as f64 * y[j] as f64;
            }
        }
        for (j, (&x, &y)) in a[split..].iter().zip(&b[split..]).enumerate() {
            acc[j] += x as f64 * y as f64;
        }
        pairwise(acc)
    }

    /// One row of softmax's backward, `y·(g - Σ g·y)`, or of
    /// log-softmax's, `g - e^y·Σ g`; the sum in `f64`.
    #[inline(always)]
    pub(crate) fn softmax_grad_row<const FMA: bool>(
        y: &[f32],
        g: &[f32],
        out: &mut [f32],
        log: bool,
    ) {
        if log {
            let s = sum_f32(g) as f32;
            for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
                *o = gv - exp_f32::<FMA>(yv) * s;
            }
        } else {
            let s = dot(g, y) as f32;
            for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
                *o = yv * (gv - s);
            }
        }
    }

    /// One row of layer normalization's backward,
    /// `rstd·(g - mean(g) - y·mean(g·y))`: the statistics of `x` as the
    /// forward takes them (mean, then squared deviations, in `f64`
    /// lanes), the two means of `g` in `f64`, the result in `f32`.
    #[inline(always)]
    pub(crate) fn layer_norm_grad_row(x: &[f32], y: &[f32], g: &[f32], out: &mut [f32], eps: f64) {
        let n = x.len() as f64;
        let (_, rstd) = mean_rstd(x, eps);
        let mg = (sum_f32(g) / n) as f32;
        let mgy = (dot(g, y) / n) as f32;
        for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
            *o = (gv - mg - yv * mgy) * rstd;
        }
    }
}
