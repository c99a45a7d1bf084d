//! Every variant of [`Error`] is produced by some call of the public API.
//!
//! Each case is the smallest input a user could plausibly get wrong, and
//! checks the variant the call returns. The last test compares the set of
//! variants produced here with [`Error::KINDS`], so a variant nobody can
//! reach (or a new one without a test) fails the suite.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use oxmera::prelude::*;
use oxmera::reference::Reference;
use oxmera::tensor::{Backend, Conv2dParams, HostBuffer, Pool2dParams, Storage, Support};

const R: Device = Device::Reference;

/// A device whose backend has device services only, as a new backend
/// starts out: every op falls back to the host, except that it declines
/// the convolution's backward kernel, stores no `f64`, and range-checks
/// indices itself, reporting a bad one at the next synchronization.
const PARTIAL: Device = Device::Wgpu(9);

/// The partial backend, with the fault its index check found.
#[derive(Debug, Default)]
struct Partial {
    fault: Mutex<Option<Error>>,
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
    fn download(&self, storage: &Storage) -> Result<HostBuffer> {
        oxmera::tensor::host_device::download(storage)
    }
    fn stores(&self, dtype: DType) -> bool {
        dtype != DType::F64
    }
    fn checks_indices(&self) -> bool {
        true
    }
    fn support(&self, op: &str, dtype: DType) -> Support {
        match op {
            "conv2d_backward" => Support::Unsupported,
            _ if !self.stores(dtype) => Support::Unsupported,
            _ => Support::Fallback,
        }
    }
    /// Checks the indices "on the device": a bad one is kept for the next
    /// synchronization, and the call returns zeros, as a kernel would
    /// return whatever it wrote.
    fn index_select(&self, x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
        let size = x.dims()[dim];
        let picks = indices.to_host()?;
        let bad = (0..picks.len())
            .map(|i| picks.get_i64(i))
            .find(|&i| usize::try_from(i).map_or(true, |i| i >= size));
        if let Some(index) = bad {
            *self.fault.lock().unwrap() = Some(Error::DeviceFault {
                op: "index_select",
                device: PARTIAL,
                reason: format!("index {index} is out of range for dim {dim} of size {size}"),
            });
            let n = x.numel() / size.max(1) * picks.len();
            return Ok(Storage::host(
                PARTIAL,
                HostBuffer::filled(x.dtype(), n, 0.0),
            ));
        }
        let out = Reference.index_select(x, dim, indices)?;
        Ok(Storage::host(PARTIAL, out.into_host().unwrap()))
    }
    fn synchronize(&self) -> Result<()> {
        match self.fault.lock().unwrap().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
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
        "ShapeOverflow",
        Tensor::zeros([1 << 32, 1 << 32], DType::F32, R),
    );
    // 2^50 bytes: past the 128 TiB a process can map, so refused under
    // every overcommit setting (tests/out_of_memory.rs has the rest).
    expect(s, "OutOfMemory", Tensor::zeros([1 << 48], DType::F32, R));
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

    // A backend that declines the convolution backward kernel says so by
    // name; one that cannot store f64 refuses to make it; one that checks
    // indices on the device reports a bad one at the next synchronization.
    oxmera::tensor::registry::register(Arc::new(Partial::default()));
    expect(
        s,
        "UnsupportedOnDevice",
        Tensor::zeros([2], DType::F64, PARTIAL),
    );
    let table = Tensor::ones([3, 2], DType::F32, PARTIAL).unwrap();
    let bad = Tensor::from_slice(&[1i64, 5], [2], PARTIAL).unwrap();
    assert!(
        table.index_select(0, &bad).is_ok(),
        "the failure comes later"
    );
    expect(s, "DeviceFault", oxmera::tensor::synchronize(PARTIAL));
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
    expect(s, "UnregisteredParameter", unregistered_error());
    seen
}

/// A parameter with a gradient that no module lists and no optimizer
/// holds, found by another optimizer's first step.
fn unregistered_error() -> Result<()> {
    use oxmera::nn::Param;
    use oxmera::optim::{Optimizer, Sgd, SgdConfig};

    let listed = Param::new(zeros(&[2]))?;
    let forgotten = Param::new(zeros(&[2]))?;
    let mut sgd = Sgd::new(vec![("w".to_string(), listed)], SgdConfig::default())?;
    forgotten.tensor().sum_all()?.backward()?;
    sgd.step()
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
