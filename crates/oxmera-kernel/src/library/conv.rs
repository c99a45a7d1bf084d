//! Convolution and pooling over contiguous NCHW tensors, and their
//! gradients, one thread per element of what is written.
//!
//! Each kernel is the definition read from the side of one output: a
//! forward output walks its taps; the input gradient of one element walks
//! the outputs whose windows hold it (solving `i = o·stride + k·dilation -
//! pad` for `o`); a weight's gradient walks every output it fed. So no two
//! threads write one place, nothing needs atomics, and every run adds in
//! the same order: the same bits every time.
//!
//! Geometry arrives as scalars with the tensors' extents: `h`, `w` the
//! input's, `oh`, `ow` the output's (the front end computed and checked
//! them), `kh`, `kw` the window's; strides `sh`, `sw`, padding `ph`, `pw`,
//! dilation `dh`, `dw`.

use crate::ir::{Dim3, Value};
use crate::kernel;
use crate::launch::LaunchConfig;
use crate::sim::{Arg, Buffer};

use super::demos::{Demo, rng_f32};

/// 2-D convolution, `out[b, o, oi, oj] = bias[o] + Σ x[b, c, i, j] ·
/// w[o, c - first, ki, kj]` over the input channels `c` of `o`'s group
/// and the taps `(ki, kj)` whose input position `(i, j)` lies inside the
/// input (padding reads as zero).
#[kernel(block = [64, 256])]
pub fn conv2d_direct(
    x: &[f32],
    w: &[f32],
    bias: &[f32],
    out: &mut [f32],
    n_out: u32,
    c_in: u32,
    h: u32,
    wd: u32,
    c_out: u32,
    kh: u32,
    kw: u32,
    oh: u32,
    ow: u32,
    sh: u32,
    sw: u32,
    ph: u32,
    pw: u32,
    dh: u32,
    dw: u32,
    groups: u32,
    has_bias: bool,
) {
    let t = block_idx_x() * block_dim_x() + thread_idx_x();
    if t < n_out {
        let oj = t % ow;
        let oi = (t / ow) % oh;
        let o = (t / (ow * oh)) % c_out;
        let b = t / (ow * oh * c_out);
        let c_in_g = c_in / groups;
        let first = (o / (c_out / groups)) * c_in_g;
        let mut acc = 0.0f32;
        if has_bias {
            acc = bias[o];
        }
        for c in 0..c_in_g {
            for ki in 0..kh {
                let i = (oi * sh + ki * dh) as i32 - ph as i32;
                if i >= 0 && i < h as i32 {
                    for kj in 0..kw {
                        let j = (oj * sw + kj * dw) as i32 - pw as i32;
                        if j >= 0 && j < wd as i32 {
                            let xi = ((b * c_in + first + c) * h + i as u32) * wd + j as u32;
                            let wi = ((o * c_in_g + c) * kh + ki) * kw + kj;
                            acc += x[xi] * w[wi];
                        }
                    }
                }
            }
        }
        out[t] = acc;
    }
}

/// The gradient of [`conv2d_direct`] with respect to `x`: element
/// `(b, c, i, j)` sums `grad[b, o, oi, oj] · w[o, c - first, ki, kj]` over
/// the output channels `o` of `c`'s group and the taps whose window
/// position `(oi, oj)` reads `(i, j)`.
#[kernel(block = [64, 256])]
pub fn conv2d_grad_input(
    grad: &[f32],
    w: &[f32],
    gx: &mut [f32],
    n_in: u32,
    c_in: u32,
    h: u32,
    wd: u32,
    c_out: u32,
    kh: u32,
    kw: u32,
    oh: u32,
    ow: u32,
    sh: u32,
    sw: u32,
    ph: u32,
    pw: u32,
    dh: u32,
    dw: u32,
    groups: u32,
) {
    let t = block_idx_x() * block_dim_x() + thread_idx_x();
    if t < n_in {
        let j = t % wd;
        let i = (t / wd) % h;
        let ci = (t / (wd * h)) % c_in;
        let b = t / (wd * h * c_in);
        let c_in_g = c_in / groups;
        let c_out_g = c_out / groups;
        let c = ci % c_in_g;
        let first_out = (ci / c_in_g) * c_out_g;
        let mut acc = 0.0f32;
        for og in 0..c_out_g {
            let o = first_out + og;
            for ki in 0..kh {
                // oi·sh = i + ph - ki·dh, when that is a whole step inside.
                let ti = (i + ph) as i32 - (ki * dh) as i32;
                if ti >= 0 && ti % sh as i32 == 0 && ti / (sh as i32) < oh as i32 {
                    let oi = ti as u32 / sh;
                    for kj in 0..kw {
                        let tj = (j + pw) as i32 - (kj * dw) as i32;
                        if tj >= 0 && tj % sw as i32 == 0 && tj / (sw as i32) < ow as i32 {
                            let oj = tj as u32 / sw;
                            let gi = ((b * c_out + o) * oh + oi) * ow + oj;
                            let wi = ((o * c_in_g + c) * kh + ki) * kw + kj;
                            acc += grad[gi] * w[wi];
                        }
                    }
                }
            }
        }
        gx[t] = acc;
    }
}

/// The gradient of [`conv2d_direct`] with respect to `w`: element
/// `(o, c, ki, kj)` sums `grad[b, o, oi, oj] · x[b, first + c, i, j]` over
/// the batch and every output position whose tap lies inside the input.
#[kernel(block = [64, 256])]
pub fn conv2d_grad_weight(
    x: &[f32],
    grad: &[f32],
    gw: &mut [f32],
    n_w: u32,
    batch: u32,
    c_in: u32,
    h: u32,
    wd: u32,
    c_out: u32,
    kh: u32,
    kw: u32,
    oh: u32,
    ow: u32,
    sh: u32,
    sw: u32,
    ph: u32,
    pw: u32,
    dh: u32,
    dw: u32,
    groups: u32,
) {
    let t = block_idx_x() * block_dim_x() + thread_idx_x();
    if t < n_w {
        let kj = t % kw;
        let ki = (t / kw) % kh;
        let c_in_g = c_in / groups;
        let c = (t / (kw * kh)) % c_in_g;
        let o = t / (kw * kh * c_in_g);
        let ci = (o / (c_out / groups)) * c_in_g + c;
        let mut acc = 0.0f32;
        for b in 0..batch {
            for oi in 0..oh {
                let i = (oi * sh + ki * dh) as i32 - ph as i32;
                if i >= 0 && i < h as i32 {
                    for oj in 0..ow {
                        let j = (oj * sw + kj * dw) as i32 - pw as i32;
                        if j >= 0 && j < wd as i32 {
                            let gi = ((b * c_out + o) * oh + oi) * ow + oj;
                            let xi = ((b * c_in + ci) * h + i as u32) * wd + j as u32;
                            acc += grad[gi] * x[xi];
                        }
                    }
                }
            }
        }
        gw[t] = acc;
    }
}

/// Max (`is_max`) or average pooling over each `kh × kw` window of every
/// plane (`planes` = batch × channels). Max: padding reads as -inf and a
/// NaN anywhere in the window wins (tested on the bits: an LLVM-based
/// driver may assume no NaN in a float comparison). Average: padding
/// reads as zero and counts in the divisor `kh·kw`.
#[kernel(block = [64, 256])]
pub fn pool2d_forward(
    x: &[f32],
    out: &mut [f32],
    n_out: u32,
    h: u32,
    wd: u32,
    kh: u32,
    kw: u32,
    oh: u32,
    ow: u32,
    sh: u32,
    sw: u32,
    ph: u32,
    pw: u32,
    is_max: bool,
) {
    let t = block_idx_x() * block_dim_x() + thread_idx_x();
    if t < n_out {
        let oj = t % ow;
        let oi = (t / ow) % oh;
        let plane = t / (ow * oh);
        let mut best = f32::from_bits(0xff80_0000u32);
        let mut nan = false;
        let mut sum = 0.0f32;
        for ki in 0..kh {
            let i = (oi * sh + ki) as i32 - ph as i32;
            for kj in 0..kw {
                let j = (oj * sw + kj) as i32 - pw as i32;
                if i >= 0 && i < h as i32 && j >= 0 && j < wd as i32 {
                    let v = x[(plane * h + i as u32) * wd + j as u32];
                    sum += v;
                    if (v.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32 {
                        nan = true;
                    } else if v > best {
                        best = v;
                    }
                }
            }
        }
        if is_max {
            if nan {
                best = f32::from_bits(0x7fc0_0000u32);
            }
            out[t] = best;
        } else {
            out[t] = sum / (kh * kw) as f32;
        }
    }
}

/// The gradient of [`pool2d_forward`] with respect to `x`: element
/// `(plane, i, j)` adds the gradient of every window holding it, in the
/// windows' row-major order — all of it where that window's first
/// maximum (first NaN, if any) is this element (max), a `1/(kh·kw)` share
/// (average).
#[kernel(block = [64, 256])]
pub fn pool2d_backward(
    x: &[f32],
    grad: &[f32],
    gx: &mut [f32],
    n_in: u32,
    h: u32,
    wd: u32,
    kh: u32,
    kw: u32,
    oh: u32,
    ow: u32,
    sh: u32,
    sw: u32,
    ph: u32,
    pw: u32,
    is_max: bool,
) {
    let t = block_idx_x() * block_dim_x() + thread_idx_x();
    if t < n_in {
        let j = t % wd;
        let i = (t / wd) % h;
        let plane = t / (wd * h);
        let mut acc = 0.0f32;
        // Taps from the last to the first: windows from the first to the last.
        for a in 0..kh {
            let ki = kh - 1 - a;
            let ti = (i + ph) as i32 - ki as i32;
            if ti >= 0 && ti % sh as i32 == 0 && ti / (sh as i32) < oh as i32 {
                let oi = ti as u32 / sh;
                for bj in 0..kw {
                    let kj = kw - 1 - bj;
                    let tj = (j + pw) as i32 - kj as i32;
                    if tj >= 0 && tj % sw as i32 == 0 && tj / (sw as i32) < ow as i32 {
                        let oj = tj as u32 / sw;
                        let g = grad[(plane * oh + oi) * ow + oj];
                        if is_max {
                            // The window's first maximum as the reference
                            // finds it: tap 0 to start with (padding reads
                            // -inf), then any later tap holding more, or the
                            // first NaN, after which nothing moves it.
                            let i0 = (oi * sh) as i32 - ph as i32;
                            let j0 = (oj * sw) as i32 - pw as i32;
                            let mut best_i = i0;
                            let mut best_j = j0;
                            let mut best = f32::from_bits(0xff80_0000u32);
                            let mut nan = false;
                            for ui in 0..kh {
                                let ii = i0 + ui as i32;
                                for uj in 0..kw {
                                    let jj = j0 + uj as i32;
                                    if !nan && ii >= 0 && ii < h as i32 && jj >= 0 && jj < wd as i32
                                    {
                                        let v = x[(plane * h + ii as u32) * wd + jj as u32];
                                        let v_nan = (v.to_bits() & 0x7fff_ffffu32) > 0x7f80_0000u32;
                                        if v_nan || v > best || (ui == 0 && uj == 0) {
                                            best = v;
                                            best_i = ii;
                                            best_j = jj;
                                            nan = v_nan;
                                        }
                                    }
                                }
                            }
                            if best_i == i as i32 && best_j == j as i32 {
                                acc += g;
                            }
                        } else {
                            acc += g / (kh * kw) as f32;
                        }
                    }
                }
            }
        }
        gx[t] = acc;
    }
}

/// A convolution's or pooling's geometry, for the demos.
struct Geom {
    n: usize,
    c_in: usize,
    h: usize,
    w: usize,
    c_out: usize,
    k: (usize, usize),
    stride: (usize, usize),
    pad: (usize, usize),
    dil: (usize, usize),
    groups: usize,
}

impl Geom {
    fn out_hw(&self) -> (usize, usize) {
        let along = |i: usize, k: usize, s: usize, p: usize, d: usize| {
            (i + 2 * p - d * (k - 1) - 1) / s + 1
        };
        (
            along(self.h, self.k.0, self.stride.0, self.pad.0, self.dil.0),
            along(self.w, self.k.1, self.stride.1, self.pad.1, self.dil.1),
        )
    }

    /// Every product of the convolution as `(x index, w index, out index)`,
    /// in the output's order: what all three conv demos are sums over.
    fn conv_taps(&self) -> Vec<(usize, usize, usize)> {
        let (oh, ow) = self.out_hw();
        let (c_in_g, c_out_g) = (self.c_in / self.groups, self.c_out / self.groups);
        let mut taps = Vec::new();
        for b in 0..self.n {
            for o in 0..self.c_out {
                for oi in 0..oh {
                    for oj in 0..ow {
                        let out = ((b * self.c_out + o) * oh + oi) * ow + oj;
                        for c in 0..c_in_g {
                            for ki in 0..self.k.0 {
                                for kj in 0..self.k.1 {
                                    let i = (oi * self.stride.0 + ki * self.dil.0)
                                        .checked_sub(self.pad.0);
                                    let j = (oj * self.stride.1 + kj * self.dil.1)
                                        .checked_sub(self.pad.1);
                                    let (Some(i), Some(j)) = (i, j) else { continue };
                                    if i >= self.h || j >= self.w {
                                        continue;
                                    }
                                    let ci = (o / c_out_g) * c_in_g + c;
                                    let xi = ((b * self.c_in + ci) * self.h + i) * self.w + j;
                                    let wi = ((o * c_in_g + c) * self.k.0 + ki) * self.k.1 + kj;
                                    taps.push((xi, wi, out));
                                }
                            }
                        }
                    }
                }
            }
        }
        taps
    }

    /// The scalars every kernel here takes after its element count, from
    /// `c_in` (or `h`, for pooling) on.
    fn scalars(&self, conv: bool) -> Vec<Arg> {
        let u = |v: usize| Arg::Scalar(Value::U32(v as u32));
        let (oh, ow) = self.out_hw();
        let mut args = Vec::new();
        if conv {
            args.push(u(self.c_in));
        }
        args.extend([u(self.h), u(self.w)]);
        if conv {
            args.push(u(self.c_out));
        }
        args.extend([
            u(self.k.0),
            u(self.k.1),
            u(oh),
            u(ow),
            u(self.stride.0),
            u(self.stride.1),
            u(self.pad.0),
            u(self.pad.1),
        ]);
        if conv {
            args.extend([u(self.dil.0), u(self.dil.1), u(self.groups)]);
        }
        args
    }
}

/// Sums `terms` (value, index) into `len` slots in `f64`, with each slot's
/// f32 error bound: `(count + 1)·ε·Σ|term|` for its count of terms.
fn sums(len: usize, terms: impl Iterator<Item = (f64, usize)>) -> (Vec<f64>, Vec<f64>) {
    let (mut sum, mut abs, mut count) = (vec![0.0; len], vec![0.0; len], vec![0usize; len]);
    for (v, at) in terms {
        sum[at] += v;
        abs[at] += v.abs();
        count[at] += 1;
    }
    let eps = f64::from(f32::EPSILON);
    let tolerance = abs
        .iter()
        .zip(&count)
        .map(|(a, &k)| (k as f64 + 1.0) * eps * a)
        .collect();
    (sum, tolerance)
}

fn f32s(v: &[f32]) -> Arg {
    Arg::Buffer(Buffer::from_f32(v))
}

/// The conv demos' geometry: two groups, a 3×2 window with stride,
/// padding and dilation on both axes.
const CONV: Geom = Geom {
    n: 2,
    c_in: 4,
    h: 7,
    w: 6,
    c_out: 6,
    k: (3, 2),
    stride: (2, 1),
    pad: (1, 1),
    dil: (1, 2),
    groups: 2,
};

/// The pooling demos' geometry: 3 planes, a 3×2 window, stride 2, padding.
const POOL: Geom = Geom {
    n: 1,
    c_in: 3,
    h: 5,
    w: 6,
    c_out: 3,
    k: (3, 2),
    stride: (2, 2),
    pad: (1, 1),
    dil: (1, 1),
    groups: 1,
};

/// The demo of one of this module's kernels, if `name` is one.
pub(super) fn demo(name: &str, block: Dim3, seed: u64) -> Option<Demo> {
    let launch = |n: usize| LaunchConfig {
        grid: Dim3::x((n as u32).div_ceil(block.count() as u32)),
        block,
    };
    let u = |v: usize| Arg::Scalar(Value::U32(v as u32));
    let g = &CONV;
    let (oh, ow) = g.out_hw();
    let (n_x, n_w, n_out) = (
        g.n * g.c_in * g.h * g.w,
        g.c_out * (g.c_in / g.groups) * g.k.0 * g.k.1,
        g.n * g.c_out * oh * ow,
    );
    let x = rng_f32(seed, n_x);
    let w = rng_f32(seed + 1, n_w);
    let grad = rng_f32(seed + 2, n_out);
    let taps = g.conv_taps();
    Some(match name {
        "conv2d_direct" => {
            let bias = rng_f32(seed + 3, g.c_out);
            let per_plane = oh * ow;
            let products = taps
                .iter()
                .map(|&(xi, wi, o)| (f64::from(x[xi]) * f64::from(w[wi]), o));
            let biases = (0..n_out).map(|o| (f64::from(bias[(o / per_plane) % g.c_out]), o));
            let (expected, tolerance) = sums(n_out, products.chain(biases));
            let mut args = vec![
                f32s(&x),
                f32s(&w),
                f32s(&bias),
                f32s(&vec![0.0; n_out]),
                u(n_out),
            ];
            args.extend(g.scalars(true));
            args.push(Arg::Scalar(Value::Bool(true)));
            Demo {
                launch: launch(n_out),
                args,
                output: 3,
                expected,
                tolerance,
                summary: "conv2d [2,4,7,6] * [6,2,3,2] + bias: groups 2, stride (2,1), pad 1, dilation (1,2)".into(),
            }
        }
        "conv2d_grad_input" => {
            let terms = taps
                .iter()
                .map(|&(xi, wi, o)| (f64::from(grad[o]) * f64::from(w[wi]), xi));
            let (expected, tolerance) = sums(n_x, terms);
            let mut args = vec![f32s(&grad), f32s(&w), f32s(&vec![0.0; n_x]), u(n_x)];
            args.extend(g.scalars(true));
            Demo {
                launch: launch(n_x),
                args,
                output: 2,
                expected,
                tolerance,
                summary: "the input gradient of the conv2d demo".into(),
            }
        }
        "conv2d_grad_weight" => {
            let terms = taps
                .iter()
                .map(|&(xi, wi, o)| (f64::from(grad[o]) * f64::from(x[xi]), wi));
            let (expected, tolerance) = sums(n_w, terms);
            let mut args = vec![f32s(&x), f32s(&grad), f32s(&vec![0.0; n_w]), u(n_w), u(g.n)];
            args.extend(g.scalars(true));
            Demo {
                launch: launch(n_w),
                args,
                output: 2,
                expected,
                tolerance,
                summary: "the weight gradient of the conv2d demo".into(),
            }
        }
        "pool2d_forward" | "pool2d_backward" => {
            let p = &POOL;
            let (ph_out, pw_out) = p.out_hw();
            let planes = p.n * p.c_in;
            let (n_in, n_pooled) = (planes * p.h * p.w, planes * ph_out * pw_out);
            // Values on a coarse grid, so windows hold ties.
            let x: Vec<f32> = rng_f32(seed, n_in)
                .iter()
                .map(|v| (v * 2.0).round() / 2.0)
                .collect();
            // Each window's real taps, in row-major order (None: padding).
            let windows: Vec<Vec<Option<usize>>> = (0..n_pooled)
                .map(|t| {
                    let (oj, oi, plane) =
                        (t % pw_out, (t / pw_out) % ph_out, t / (pw_out * ph_out));
                    let mut taps = Vec::new();
                    for ki in 0..p.k.0 {
                        for kj in 0..p.k.1 {
                            let i = (oi * p.stride.0 + ki)
                                .checked_sub(p.pad.0)
                                .filter(|&i| i < p.h);
                            let j = (oj * p.stride.1 + kj)
                                .checked_sub(p.pad.1)
                                .filter(|&j| j < p.w);
                            taps.push(i.zip(j).map(|(i, j)| (plane * p.h + i) * p.w + j));
                        }
                    }
                    taps
                })
                .collect();
            let value = |tap: &Option<usize>| tap.map_or(f64::NEG_INFINITY, |at| f64::from(x[at]));
            // The first maximum of each window (ties on the grid above).
            let first_max = |win: &Vec<Option<usize>>| {
                (0..win.len()).fold(0, |best, k| {
                    if value(&win[k]) > value(&win[best]) {
                        k
                    } else {
                        best
                    }
                })
            };
            let mut args = vec![f32s(&x)];
            let (expected, tolerance, output, n, summary) = if name == "pool2d_forward" {
                let expected: Vec<f64> = windows
                    .iter()
                    .map(|win| value(&win[first_max(win)]))
                    .collect();
                args.push(f32s(&vec![0.0; n_pooled]));
                (
                    expected,
                    vec![0.0; n_pooled],
                    1,
                    n_pooled,
                    "max pooling 3×2, stride 2, padding 1, over tied values",
                )
            } else {
                let grad = rng_f32(seed + 1, n_pooled);
                let terms = windows
                    .iter()
                    .enumerate()
                    .filter_map(|(t, win)| win[first_max(win)].map(|at| (f64::from(grad[t]), at)));
                let (expected, tolerance) = sums(n_in, terms);
                args.extend([f32s(&grad), f32s(&vec![0.0; n_in])]);
                (
                    expected,
                    tolerance,
                    2,
                    n_in,
                    "max pooling's gradient to each window's first maximum",
                )
            };
            args.push(u(n));
            args.extend(p.scalars(false));
            args.push(Arg::Scalar(Value::Bool(true)));
            Demo {
                launch: launch(n),
                args,
                output,
                expected,
                tolerance,
                summary: summary.into(),
            }
        }
        _ => return None,
    })
}
