//! Outputs written into recycled buffers. The cpu backend takes a dropped
//! tensor's buffer from the host cache for an output of the same size
//! instead of fresh zeroed memory, so each op that does must write every
//! element. Each case here runs an op, drops its output into the cache,
//! and runs it again: the second run must take that buffer and give the
//! same bits. In debug builds (as `cargo test` runs) the cache poisons a
//! buffer it hands out with NaN, so an element left unwritten shows.
//!
//! One test, in its own binary: the cache is process-wide, and a test
//! running beside it could take or give a buffer of the same size.

mod common;

use oxmera_core::{DType, Device, Result};
use oxmera_tensor::{Conv2dParams, Pool2dParams, Tensor, host_cache};

use common::operand;

/// The bit patterns of an `f32` tensor (NaN-aware equality).
fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

/// Runs `op` twice as described above.
fn twice(what: &str, op: impl Fn() -> Result<Tensor>) {
    let first = op().unwrap();
    let n = first.numel();
    assert!(
        n * 4 >= host_cache::MIN_BYTES,
        "{what}: output too small to be cached"
    );
    let want = bits(&first);
    host_cache::clear();
    drop(first);
    assert_eq!(host_cache::cached_bytes(), n * 4, "{what}: output cached");
    let second = op().unwrap();
    assert!(
        host_cache::take::<f32>(n).is_none(),
        "{what}: the op did not take the cached buffer"
    );
    let got = bits(&second);
    let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert_eq!(differ, 0, "{what}: {differ} of {n} elements differ");
}

#[test]
fn ops_writing_recycled_buffers_write_every_element() {
    let f = DType::F32;
    let x = operand(1, &[512, 512], "contiguous", f).unwrap();
    let y = operand(2, &[512, 512], "contiguous", f).unwrap();
    let row = operand(3, &[512], "contiguous", f).unwrap();
    let permuted = operand(4, &[512, 512], "permuted", f).unwrap();
    let stepped = operand(5, &[512, 512], "stepped", f).unwrap();
    let wide = operand(6, &[512, 600], "contiguous", f).unwrap();
    twice("add (broadcast row)", || x.add(&row));
    twice("exp (permuted)", || permuted.exp());
    twice("neg (stepped)", || stepped.neg());
    let cond = x.gt(&y).unwrap();
    twice("where", || Tensor::where_(&cond, &x, &y));
    twice("contiguous (transpose)", || x.t()?.contiguous());
    let (a, b) = (
        operand(7, &[512, 300], "contiguous", f).unwrap(),
        operand(8, &[300, 512], "contiguous", f).unwrap(),
    );
    twice("matmul", || a.matmul(&b));
    twice("softmax", || x.softmax(-1));
    twice("layer_norm", || x.layer_norm(1, 1e-5));
    let picks = Tensor::from_vec(
        (0..512i64).map(|i| (i * 7) % 600).collect(),
        [512],
        Device::Cpu,
    )
    .unwrap();
    twice("index_select", || {
        wide.reshape(vec![600, 512])?.index_select(0, &picks)
    });
    let index = Tensor::from_vec(
        (0..512 * 512i64).map(|i| (i * 13) % 600).collect(),
        [512, 512],
        Device::Cpu,
    )
    .unwrap();
    twice("gather", || wide.gather(1, &index));
    let image = operand(9, &[2, 8, 128, 128], "contiguous", f).unwrap();
    let weight = operand(10, &[16, 8, 3, 3], "contiguous", f).unwrap();
    let bias = operand(11, &[16], "contiguous", f).unwrap();
    let same = Conv2dParams {
        padding: (1, 1),
        ..Conv2dParams::default()
    };
    twice("conv2d", || image.conv2d(&weight, Some(&bias), same));
    let planes = operand(12, &[4, 16, 128, 128], "contiguous", f).unwrap();
    let pool = Pool2dParams {
        kernel: (2, 2),
        stride: (2, 2),
        padding: (0, 0),
    };
    twice("max_pool2d", || planes.max_pool2d(pool));
    twice("avg_pool2d", || planes.avg_pool2d(pool));
}
