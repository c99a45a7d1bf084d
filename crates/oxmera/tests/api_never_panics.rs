//! Random shapes, dims, indices and dtypes thrown at the public API.
//!
//! The law: every call returns `Ok` or a typed [`Error`]; none panics. The
//! inputs are deliberately mostly wrong (dims past the rank, indices past
//! the extent, mismatched dtypes and shapes, zero-size dims), because that
//! is where a missing check turns into an out-of-bounds slice access or an
//! overflow deep inside a backend.
//!
//! Every registered backend takes the same calls: the reference, the CPU
//! backend (whose kernels once sliced out of range on an empty view with
//! an offset, which a reference-only run could not see), the loopback
//! device (services only, every op through the host fallback) and, built
//! with `--features wgpu`, the wgpu device (CI runs it on lavapipe). Half
//! the time the second operand lives on another device than the first.
//!
//! CI runs 2048 and 512 cases. A long run (the child inherits the count):
//! `OXMERA_API_CASES=200000 cargo test -p oxmera --test api_never_panics`,
//! with `--features wgpu` for the wgpu device too.

mod limited;

use std::panic::{AssertUnwindSafe, catch_unwind};

use oxmera::prelude::*;
// Links the loopback backend, which registers the `loopback` device.
use oxmera::tensor::{
    Conv1dParams, Conv2dParams, ConvTranspose2dParams, InterpolateMode, PadMode, Pool2dOptions,
    Pool2dParams, ScatterReduce,
};
use oxmera_loopback as _;
use proptest::prelude::*;

const R: Device = Device::Reference;

/// The backends every call is tried on: the reference, the cpu backend,
/// the loopback device, and — built with the `wgpu` feature, where an
/// adapter opens (on CI, lavapipe) — `wgpu:0`. With the feature and
/// `OXMERA_REQUIRE_GPU=1`, a missing adapter fails instead of shrinking
/// the list.
fn devices() -> &'static [Device] {
    static DEVICES: std::sync::OnceLock<Vec<Device>> = std::sync::OnceLock::new();
    DEVICES.get_or_init(|| {
        #[allow(unused_mut)]
        let mut devices = vec![
            Device::Reference,
            Device::Cpu,
            oxmera::tensor::registry::parse_device("loopback").expect("the loopback device"),
        ];
        #[cfg(feature = "wgpu")]
        match Tensor::zeros([1], DType::F32, Device::Wgpu(0)) {
            Ok(_) => devices.push(Device::Wgpu(0)),
            Err(e) => {
                assert!(
                    std::env::var("OXMERA_REQUIRE_GPU").as_deref() != Ok("1"),
                    "OXMERA_REQUIRE_GPU=1 but wgpu:0 did not open: {e}"
                );
                eprintln!("wgpu:0 not tried: {e}");
            }
        }
        devices
    })
}

/// `OXMERA_API_CASES` cases per property if set (a long run), else
/// `default` (what CI runs).
fn cases(default: u32) -> u32 {
    std::env::var("OXMERA_API_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default)
}

const DTYPES: [DType; 8] = [
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::Bool,
];

/// A tensor of `shape` and `dtype` on `device`, made non-contiguous by
/// `twist` (0: as is, 1: transposed, 2: every other element of dim 0, 3: a
/// broadcast of its first row, 4: a view from offset 1 of a longer first
/// dim — with a zero dim elsewhere, an empty view past its storage's end).
fn tensor(shape: &[usize], dtype: DType, twist: u8, device: Device) -> Result<Tensor> {
    if twist % 5 == 4 && !shape.is_empty() {
        let mut longer = shape.to_vec();
        longer[0] += 1;
        let base = tensor(&longer, dtype, 0, device)?;
        return base.narrow(0, 1usize, shape[0]);
    }
    let n: usize = shape.iter().product();
    // Small integers, so every dtype (u8, bool) can hold them.
    let base = Tensor::arange(0.0, n as f64, 1.0, DType::F64, R)?
        .rem_scalar(3.0)?
        .reshape(shape.to_vec())?
        .to_dtype(dtype)?
        .to_device(device)?;
    match twist % 5 {
        1 if base.rank() >= 2 => base.transpose(0, 1),
        2 if base.rank() >= 1 => {
            let len = base.dims()[0];
            base.slice(0, 0, len, 2)
        }
        3 if base.rank() >= 1 => {
            let row = base.narrow(0, 0, base.dims()[0].min(1))?;
            row.broadcast_to(shape.to_vec())
        }
        _ => Ok(base),
    }
}

/// How many families of calls `call` chooses from.
const FAMILIES: u8 = 75;

/// One call of the public API, chosen by `op`, with arguments drawn from
/// `args` (dims, indices, sizes — often out of range on purpose).
fn call(op: u8, a: &Tensor, b: &Tensor, args: &[isize]) -> Result<()> {
    let d = args[0];
    let e = args[1];
    let u = |i: usize| args[i].unsigned_abs();
    let shape: Vec<usize> = args[2..].iter().map(|v| v.unsigned_abs() % 5).collect();
    match op % FAMILIES {
        0 => a.add(b).map(drop),
        1 => a.sub(b).map(drop),
        2 => a.mul(b).map(drop),
        3 => a.div(b).map(drop),
        4 => a.maximum(b).map(drop),
        5 => a.rem(b).map(drop),
        6 => a.pow(b).map(drop),
        7 => a.matmul(b).map(drop),
        8 => a.lt(b).map(drop),
        9 => a.logical_and(b).map(drop),
        10 => a.sum(&[d], e > 0).map(drop),
        11 => a.mean(&[d, e], false).map(drop),
        12 => a.max(&[d], true).map(drop),
        13 => a.argmin(d, false).map(drop),
        14 => a.var(&[d], 1.0, false).map(drop),
        15 => a.logsumexp(&[d], false).map(drop),
        16 => a.softmax(d).map(drop),
        17 => a.log_softmax(d).map(drop),
        18 => a.permute(&args[..a.rank().min(args.len())]).map(drop),
        19 => a.transpose(d, e).map(drop),
        20 => a.narrow(d, u(1), u(2)).map(drop),
        21 => a.slice(d, u(1), u(2), u(3)).map(drop),
        22 => a.reshape(shape).map(drop),
        23 => a.view(shape).map(drop),
        24 => a.broadcast_to(shape).map(drop),
        25 => a.squeeze(d).map(drop),
        26 => a.unsqueeze(d).map(drop),
        27 => Tensor::cat(&[a, b], d).map(drop),
        28 => Tensor::stack(&[a, b], d).map(drop),
        29 => a.index_select(d, b).map(drop),
        30 => a.gather(d, b).map(drop),
        31 => a.scatter_add(d, b, a).map(drop),
        32 => a.flip(&[d]).map(drop),
        33 => a.tril(e as i64).map(drop),
        34 => a.get(&shape).map(drop),
        35 => Tensor::where_(&a.gt_scalar(1.0)?, a, b).map(drop),
        36 => a.to_dtype(b.dtype())?.sqrt().map(drop),
        37 => a
            .conv2d(
                b,
                None,
                Conv2dParams {
                    stride: (u(0), u(1)),
                    padding: (u(2) % 3, u(3) % 3),
                    dilation: (u(1), u(0)),
                    groups: u(2),
                },
            )
            .map(drop),
        38 => a
            .max_pool2d(Pool2dParams {
                kernel: (u(0), u(1)),
                stride: (u(2), u(3)),
                padding: (u(1) % 3, u(0) % 3),
            })
            .map(drop),
        39 => a.split(u(0), d).map(drop),
        // The ergonomic front end: views by PyTorch-style index, select,
        // negative narrow starts, scalars of other types, chained results.
        40 => a.i((d, ..)).map(drop),
        41 => a.i((.., e..d, oxmera::tensor::NewAxis)).map(drop),
        42 => a.select(d, e).map(drop),
        43 => a.narrow(d, e, u(2)).map(drop),
        44 => (a * e).add(b).map(drop),
        // The ops PyTorch users reach for (issue 23).
        46 => a.cumsum(d).map(drop),
        47 => a.cumprod(e).map(drop),
        48 => a.roll(&[e], &[d]).map(drop),
        49 => a.roll(&args[..u(0) % 3], &args[3..3 + u(1) % 3]).map(drop),
        50 => a.repeat(&shape).map(drop),
        51 => a.tile(&shape[..u(0) % 4]).map(drop),
        52 => a.diagonal(e as i64, d, args[2]).map(drop),
        53 => a.diag(e as i64).map(drop),
        54 => a.trace().map(drop),
        55 => a.outer(b).map(drop),
        56 => a.atan2(b)?.hypot(b)?.fmod(b).map(drop),
        57 => a
            .nan_to_num(d as f64, None, Some(e as f64))?
            .isinf()
            .map(drop),
        58 => a.elu(e as f64)?.hardtanh(d as f64, e as f64).map(drop),
        59 => a.expm1()?.isfinite()?.isnan().map(drop),
        60 => a.sort(d, e > 0).map(drop),
        61 => a.topk(u(2), d, e > 0)?.1.argsort(e, d > 0).map(drop),
        62 => a.logcumsumexp(d).map(drop),
        63 => a
            .vector_norm(
                [2.0, 1.0, 0.0, f64::INFINITY, -1.0, 0.5][u(2) % 6],
                &[d, e][..u(3) % 3],
                e > 0,
            )
            .map(drop),
        64 => match u(1) % 3 {
            0 => a.repeat_interleave(u(2), [None, Some(d)][u(3) % 2]),
            1 => a.repeat_interleave_counts(&shape[..u(0) % 4], Some(e)),
            _ => a.repeat_interleave_tensor(b, [None, Some(d)][u(3) % 2]),
        }
        .map(drop),
        65 => if d > 0 {
            a.index_add(e, b, a, d as f64 / 2.0)
        } else {
            a.index_copy(e, &b.reshape([b.numel()])?, a)
        }
        .map(drop),
        66 => if d > 0 {
            a.masked_select(&b.gt_scalar(0.5)?)
        } else if d < 0 {
            a.masked_select(b)
        } else {
            b.nonzero()
        }
        .map(drop),
        67 => {
            let pads: Vec<(usize, usize)> = (0..a.rank() + u(0) % 2)
                .map(|i| (shape.get(i).copied().unwrap_or(0), u(1) % 4))
                .collect();
            let mode = [PadMode::Reflect, PadMode::Replicate, PadMode::Circular][u(3) % 3];
            a.pad_mode(&pads, mode).map(drop)
        }
        68 => {
            let p = Conv1dParams {
                stride: u(0),
                padding: u(2) % 3,
                dilation: u(1),
                groups: u(3),
            };
            let bias = b.reshape([b.numel()])?;
            a.conv1d(b, [None, Some(&bias)][u(1) % 2], p).map(drop)
        }
        69 => if d > 0 {
            a.adaptive_avg_pool2d((u(0), u(1)))
        } else {
            a.adaptive_max_pool2d((u(1), u(2)))
        }
        .map(drop),
        70 => {
            let mode = [
                InterpolateMode::Nearest,
                InterpolateMode::Bilinear {
                    align_corners: false,
                },
                InterpolateMode::Bilinear {
                    align_corners: true,
                },
            ][u(3) % 3];
            if d > 0 {
                a.interpolate((u(0), u(1)), mode)
            } else {
                a.interpolate_scale((e as f64 / 3.0, d as f64 / 2.0), mode)
            }
            .map(drop)
        }
        71 => {
            let p = ConvTranspose2dParams {
                stride: (u(0), u(1)),
                padding: (u(2) % 3, u(3) % 3),
                output_padding: (u(3) % 2, u(2) % 3),
                dilation: (u(1), u(0)),
                groups: u(2),
            };
            let bias = b.reshape([b.numel()])?;
            a.conv_transpose2d(b, [None, Some(&bias)][u(1) % 2], p)
                .map(drop)
        }
        72 => {
            let reduce = [
                ScatterReduce::Sum,
                ScatterReduce::Prod,
                ScatterReduce::Mean,
                ScatterReduce::Amax,
                ScatterReduce::Amin,
            ][u(1) % 5];
            a.scatter_reduce(d, b, a, reduce, e > 0).map(drop)
        }
        73 => {
            // Well formed and malformed equations, with one operand or two.
            let equations = [
                "ij,jk->ik",
                "ii->i",
                "...ij->...ji",
                "i,j->ij",
                "ij,ij",
                "bij,bjk->bik",
                "ijk,kl->l",
                "ij->kk",
                "...i,...i->...",
                "ii",
            ];
            let eq = equations[u(2) % equations.len()];
            let operands: &[&Tensor] = if eq.contains(',') { &[a, b] } else { &[a] };
            Tensor::einsum(eq, operands).map(drop)
        }
        74 => {
            let o = Pool2dOptions {
                kernel: (u(0) % 4, u(1) % 4),
                stride: (u(1) % 3, u(2) % 3),
                padding: (u(2) % 2, u(0) % 2),
                // Sometimes unbounded: a span past usize is a typed error.
                dilation: (u(0) % 3, if e > 4 { u(2) } else { u(2) % 3 }),
                ceil_mode: e > 0,
            };
            if d > 0 {
                a.max_pool2d_with(o)
            } else {
                a.avg_pool2d_with(o)
            }
            .map(drop)
        }
        _ => (a.matmul(b) + a).relu().sum(&[d], false).map(drop),
    }
}

fn shape_strategy() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..5)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2048), ..ProptestConfig::default() })]

    #[test]
    fn every_call_returns_ok_or_a_typed_error(
        op in any::<u8>(),
        a_shape in shape_strategy(),
        b_shape in shape_strategy(),
        a_dtype in 0usize..8,
        b_dtype in 0usize..8,
        twist in any::<u8>(),
        b_like_a in any::<bool>(),
        device in 0usize..12,
        b_elsewhere in any::<bool>(),
        args in prop::collection::vec(-3isize..4, 6),
    ) {
        let devices = devices();
        let device = device % devices.len();
        let (a_dev, b_dev) = (devices[device], devices[(device + usize::from(b_elsewhere)) % devices.len()]);
        let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<()> {
            let a = tensor(&a_shape, DTYPES[a_dtype], twist, a_dev)?;
            // Half the time b matches a, so calls get past the first
            // check and reach the deeper ones.
            let (b_shape, b_dtype) = if b_like_a { (&a_shape, a_dtype) } else { (&b_shape, b_dtype) };
            let b = tensor(b_shape, DTYPES[b_dtype], twist / 5, b_dev)?;
            call(op, &a, &b, &args)
        }));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(err)) => {
                // A typed error that names its variant and reads as a message.
                prop_assert!(Error::KINDS.contains(&err.kind()));
                prop_assert!(!err.to_string().is_empty());
            }
            Err(_) => prop_assert!(
                false,
                "op {} panicked on {:?} {:?} on {} / {:?} {:?} on {}, twist {}, args {:?}",
                op % FAMILIES, a_shape, DTYPES[a_dtype], a_dev, b_shape, DTYPES[b_dtype], b_dev, twist, args
            ),
        }
    }
}

/// A zero-element shape with a huge dim: `rank` dims of up to 3, one of
/// them 0 and another 2^40 (or 2^62, past what any product may reach
/// unless the zero stops it).
fn empty_huge_shape() -> impl Strategy<Value = Vec<usize>> {
    (
        prop::collection::vec(0usize..4, 2..5),
        any::<u8>(),
        any::<u8>(),
        any::<bool>(),
    )
        .prop_map(|(mut dims, zero, huge, larger)| {
            let rank = dims.len();
            let zero = zero as usize % rank;
            let huge = (zero + 1 + huge as usize % (rank - 1)) % rank;
            dims[zero] = 0;
            dims[huge] = if larger { 1 << 62 } else { 1 << 40 };
            dims
        })
}

/// A tensor of `shape` with no elements, on `device`: a zeros tensor (the
/// shape has a 0), viewed from an offset or transposed by `twist`.
fn empty(shape: &[usize], dtype: DType, twist: u8, device: Device) -> Result<Tensor> {
    let base = Tensor::zeros(shape.to_vec(), dtype, device)?;
    match twist % 3 {
        1 => base.transpose(0, 1),
        2 => {
            let mut longer = shape.to_vec();
            longer[0] = longer[0].saturating_add(1);
            Tensor::zeros(longer, dtype, device)?.narrow(0, 1usize, shape[0])
        }
        _ => Ok(base),
    }
}

/// The address-space limit of the empty-tensor cases' child (2 GiB): some
/// calls on an empty tensor make a full one (a sum over the empty dim of
/// `[0, 2^40]` is 2^40 zeros), which must be a typed error, not the
/// machine's memory.
const EMPTY_CASES_LIMIT_KIB: u64 = 2 << 20;

#[cfg(unix)]
#[test]
fn calls_on_empty_tensors_with_huge_dims_in_a_limited_child() {
    if !limited::in_child() {
        limited::run_limited(
            "calls_on_empty_tensors_with_huge_dims_return_at_once",
            EMPTY_CASES_LIMIT_KIB,
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    /// Work on a tensor with no elements costs O(rank), whatever its other
    /// dims: every call on an empty tensor with a 2^40 (or 2^62) dim
    /// returns at once. A loop over the product of the non-zero dims would
    /// run for hours; the watchdog turns that into a failure (it asserts
    /// no time, it only stops a hang). It runs only in the limited child
    /// that the test above starts.
    #[test]
    fn calls_on_empty_tensors_with_huge_dims_return_at_once(
        op in any::<u8>(),
        a_shape in empty_huge_shape(),
        b_shape in empty_huge_shape(),
        dtype in 0usize..8,
        twist in any::<u8>(),
        b_like_a in any::<bool>(),
        device in 0usize..12,
        args in prop::collection::vec(-3isize..4, 6),
    ) {
        if !limited::in_child() {
            return Ok(());
        }
        let dev = devices()[device % devices().len()];
        let (a_shape, b_shape) = (a_shape.clone(), if b_like_a { a_shape } else { b_shape });
        let (tx, rx) = std::sync::mpsc::channel();
        let case = format!("op {} on {a_shape:?} / {b_shape:?} {:?} on {dev}, twist {twist}, args {args:?}", op % FAMILIES, DTYPES[dtype]);
        std::thread::spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<()> {
                let a = empty(&a_shape, DTYPES[dtype], twist, dev)?;
                let b = empty(&b_shape, DTYPES[dtype], twist / 3, dev)?;
                call(op, &a, &b, &args)
            }));
            let _ = tx.send(outcome.map(|r| r.err().map(|e| (e.kind(), e.to_string()))));
        });
        match rx.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(Ok(None)) => {}
            Ok(Ok(Some((kind, message)))) => {
                prop_assert!(Error::KINDS.contains(&kind));
                prop_assert!(!message.is_empty());
            }
            Ok(Err(_)) => prop_assert!(false, "{} panicked", case),
            Err(_) => prop_assert!(false, "{} did not return in 2 minutes", case),
        }
    }
}
