//! Every variant of [`Error`] is produced by some call of the public API.
//!
//! Each case is the smallest input a user could plausibly get wrong, and
//! checks the variant the call returns. The last test compares the set of
//! variants produced here with [`Error::KINDS`], so a variant nobody can
//! reach (or a new one without a test) fails the suite.

use std::collections::BTreeSet;
use std::sync::Arc;

use oxmera::prelude::*;
use oxmera::tensor::{
    Backend, BinaryOp, CmpOp, Conv2dParams, HostBuffer, Pool2dParams, ReduceOp, ScatterMode,
    Storage, UnaryOp,
};

const R: Device = Device::Reference;

/// A device whose backend has every forward op (borrowed from the
/// reference) and none of the optional backward kernels, as a new backend
/// starts out.
const PARTIAL: Device = Device::Wgpu(9);

/// The partial backend: forward ops delegate to the reference, and the
/// resulting storage is re-labelled as living on [`PARTIAL`].
#[derive(Debug)]
struct Partial;

fn on_partial(storage: Result<Storage>) -> Result<Storage> {
    let host = storage?
        .into_host()
        .expect("the reference keeps its data in host memory");
    Ok(Storage::host(PARTIAL, host))
}

impl Backend for Partial {
    fn name(&self) -> &'static str {
        "partial"
    }
    fn device(&self) -> Device {
        PARTIAL
    }
    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        Ok(Storage::host(PARTIAL, data))
    }
    fn to_host(&self, x: &Tensor) -> Result<HostBuffer> {
        oxmera::reference::Reference.to_host(x)
    }
    fn contiguous(&self, x: &Tensor) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.contiguous(x))
    }
    fn cast(&self, x: &Tensor, dtype: DType) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.cast(x, dtype))
    }
    fn unary(&self, op: UnaryOp, x: &Tensor) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.unary(op, x))
    }
    fn binary(&self, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.binary(op, a, b))
    }
    fn compare(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.compare(op, a, b))
    }
    fn where_cond(&self, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.where_cond(cond, a, b))
    }
    fn reduce(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.reduce(op, x, dims, out_dtype))
    }
    fn softmax(&self, x: &Tensor, dim: usize, log: bool) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.softmax(x, dim, log))
    }
    fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.matmul(a, b))
    }
    fn cat(&self, xs: &[&Tensor], dim: usize) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.cat(xs, dim))
    }
    fn index_select(&self, x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.index_select(x, dim, indices))
    }
    fn gather(&self, x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.gather(x, dim, index))
    }
    fn scatter(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
        mode: ScatterMode,
    ) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.scatter(x, dim, index, src, mode))
    }
    fn pad(&self, x: &Tensor, pads: &[(usize, usize)], value: f64) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.pad(x, pads, value))
    }
    fn flip(&self, x: &Tensor, dims: &[usize]) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.flip(x, dims))
    }
    fn triangle(&self, x: &Tensor, diagonal: i64, upper: bool) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.triangle(x, diagonal, upper))
    }
    fn conv2d(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        params: Conv2dParams,
    ) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.conv2d(x, weight, bias, params))
    }
    fn max_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.max_pool2d(x, params))
    }
    fn avg_pool2d(&self, x: &Tensor, params: Pool2dParams) -> Result<Storage> {
        on_partial(oxmera::reference::Reference.avg_pool2d(x, params))
    }
}

fn f32s(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_slice(values, shape.to_vec(), R).expect("valid test tensor")
}

fn zeros(shape: &[usize]) -> Tensor {
    Tensor::zeros(shape.to_vec(), DType::F32, R).expect("valid test tensor")
}

/// Runs `f`, asserts it failed with `kind`, and records the kind.
fn expect<T: std::fmt::Debug>(seen: &mut BTreeSet<&'static str>, kind: &str, r: Result<T>) {
    let err = r.expect_err(kind);
    assert_eq!(err.kind(), kind, "got {err:?} ({err})");
    // Every message is a sentence a user can act on, never empty.
    assert!(!err.to_string().is_empty());
    seen.insert(err.kind());
}

fn produce_every_kind() -> BTreeSet<&'static str> {
    let mut seen = BTreeSet::new();
    let s = &mut seen;
    let a = zeros(&[2, 3]);

    expect(s, "BroadcastIncompatible", a.add(&zeros(&[4])));
    expect(s, "ExpandIncompatible", a.broadcast_to([4, 3]));
    expect(s, "MatmulInner", a.matmul(&zeros(&[4, 5])));
    expect(
        s,
        "ShapeMismatch",
        Tensor::cat(&[a.clone(), zeros(&[3, 2])], 0),
    );
    expect(
        s,
        "ElementCount",
        Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [2, 2], R),
    );
    expect(
        s,
        "RankMismatch",
        a.conv2d(&zeros(&[1, 1, 1, 1]), None, Conv2dParams::default()),
    );
    expect(s, "DimOutOfRange", a.sum(&[5], false));
    expect(s, "DuplicateDim", a.sum(&[0, -2], false));
    expect(s, "InvalidPermutation", a.permute(&[0, 0]));
    let idx = Tensor::from_slice(&[0i64, 7], [2], R).unwrap();
    expect(s, "IndexOutOfBounds", a.index_select(1, &idx));
    expect(s, "IndexRank", a.get(&[0]));
    expect(s, "RangeOutOfBounds", a.narrow(1, 2, 5));
    expect(s, "NotAView", a.t().unwrap().view([6]));
    expect(s, "NotSqueezable", a.squeeze(0));
    let b64 = Tensor::zeros([2, 3], DType::F64, R).unwrap();
    expect(s, "DTypeMismatch", a.add(&b64));
    let flags = Tensor::zeros([2, 2], DType::Bool, R).unwrap();
    expect(s, "UnsupportedDType", flags.matmul(&flags));
    expect(
        s,
        "BackendUnavailable",
        Tensor::zeros([2], DType::F32, Device::Cuda(7)),
    );
    expect(s, "EmptyReduction", zeros(&[0, 3]).max(&[0], false));
    let image = zeros(&[1, 2, 4, 4]);
    expect(
        s,
        "ChannelMismatch",
        image.conv2d(&zeros(&[1, 3, 3, 3]), None, Conv2dParams::default()),
    );
    let big = Pool2dParams {
        kernel: (5, 5),
        stride: (1, 1),
        padding: (0, 0),
    };
    expect(s, "WindowTooLarge", image.max_pool2d(big));
    expect(
        s,
        "InvalidArgument",
        Tensor::arange(0.0, 1.0, 0.0, DType::F32, R),
    );
    expect(s, "UnknownDevice", "tpu:0".parse::<Device>());
    expect(s, "UnknownDType", "f7".parse::<DType>());
    let x = f32s(&[1.0, 2.0], &[2]).with_requires_grad(true).unwrap();
    expect(s, "Autograd", x.mul_scalar(2.0).unwrap().backward());

    // A backend without the convolution backward kernel says so by name.
    oxmera::tensor::registry::register(Arc::new(Partial));
    let x = Tensor::zeros([1, 1, 3, 3], DType::F32, PARTIAL)
        .unwrap()
        .with_requires_grad(true)
        .unwrap();
    let w = Tensor::ones([1, 1, 2, 2], DType::F32, PARTIAL).unwrap();
    let loss = x
        .conv2d(&w, None, Conv2dParams::default())
        .unwrap()
        .sum_all()
        .unwrap();
    expect(s, "NotImplemented", loss.backward());
    expect(s, "DeviceMismatch", x.add(&zeros(&[1, 1, 3, 3])));

    expect(s, "StateDict", state_dict_error());
    seen
}

/// Loading a state dict whose tensor has the wrong shape.
fn state_dict_error() -> Result<()> {
    use oxmera::nn::{Linear, Module};

    let mut rng = Generator::new(0);
    let layer = Linear::new(3, 2, true, &mut rng, DType::F32, R)?;
    let mut dict = layer.state_dict();
    dict.insert("weight".to_string(), zeros(&[3, 2]));
    layer.load_state_dict(&dict)
}

#[test]
fn every_error_variant_is_produced_by_the_public_api() {
    let seen = produce_every_kind();
    let all: BTreeSet<&str> = Error::KINDS.iter().copied().collect();
    assert_eq!(all.len(), Error::KINDS.len(), "KINDS has duplicates");
    let missing: Vec<_> = all.difference(&seen).collect();
    assert!(
        missing.is_empty(),
        "no test produces these variants: {missing:?}"
    );
}
