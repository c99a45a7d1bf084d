//! Results that memory cannot hold are `Error::OutOfMemory`, not an abort.
//!
//! Each reproducer (the ones a hostile caller found aborting the process
//! in the allocator) asks for a result of gigabytes to terabytes. They run
//! in a child process under an address-space limit (`ulimit -v`, 4 GiB),
//! so that the allocator refuses them whatever the machine's memory and
//! overcommit setting: an abort there is the child dying of a signal,
//! which fails the test. The limit also keeps a regression from taking
//! the machine's memory.

#![cfg(unix)]

mod limited;

use oxmera::prelude::*;
use oxmera::tensor::Conv2dParams;

/// The address-space limit of the child, in KiB (4 GiB).
const LIMIT_KIB: u64 = 4 << 20;

fn is_out_of_memory<T: std::fmt::Debug>(what: &str, r: Result<T>) {
    match r {
        Err(Error::OutOfMemory { bytes, op, .. }) => {
            assert!(bytes >= 1 << 32, "{what}: {bytes} bytes");
            eprintln!("{what}: {op} refused {bytes} bytes");
        }
        other => panic!("{what}: expected OutOfMemory, got {other:?}"),
    }
}

/// The reproducers, each run on `device`.
fn reproducers(device: Device) {
    let d = |what: &str| format!("{what} on {device}");
    is_out_of_memory(&d("zeros"), Tensor::zeros([1 << 40], DType::F32, device));
    is_out_of_memory(
        &d("zeros 16 GiB"),
        Tensor::zeros([1 << 32], DType::F32, device),
    );
    is_out_of_memory(
        &d("arange"),
        Tensor::arange(0.0, 1e15, 1.0, DType::F32, device),
    );
    let mut rng = Generator::new(7);
    is_out_of_memory(
        &d("randint"),
        rng.randint([1 << 40], 0, 10, DType::I64, device),
    );
    let small = Tensor::zeros([2, 3], DType::F32, device).unwrap();
    is_out_of_memory(&d("pad"), small.pad(&[(1 << 40, 0), (0, 0)], 0.0));
    let class = Tensor::zeros([1], DType::I64, device).unwrap();
    is_out_of_memory(&d("one_hot"), class.one_hot(1 << 40));
    // A broadcast view of 2^40 elements costs nothing; its exp would.
    let view = small
        .narrow(0, 0, 1)
        .unwrap()
        .broadcast_to([1 << 40, 3])
        .unwrap();
    is_out_of_memory(&d("exp of a broadcast view"), view.exp());
    is_out_of_memory(&d("a broadcast view made contiguous"), view.contiguous());
    is_out_of_memory(&d("a broadcast sum"), &view + &view);
    is_out_of_memory(&d("sum_all of a broadcast view"), view.sum_all());
    is_out_of_memory(&d("max over a dim of it"), view.max(&[0], false));
    is_out_of_memory(&d("its elements copied out"), view.to_vec::<f32>());
    let image = Tensor::zeros([1, 1, 2, 2], DType::F32, device).unwrap();
    let kernel = Tensor::zeros([1, 1, 1, 1], DType::F32, device).unwrap();
    let params = Conv2dParams {
        padding: (1 << 17, 1 << 17),
        ..Conv2dParams::default()
    };
    is_out_of_memory(
        &d("conv2d padded by 2^17"),
        image.conv2d(&kernel, None, params),
    );
    let tall = Tensor::zeros([1 << 17, 1], DType::F32, device).unwrap();
    let wide = Tensor::zeros([1, 1 << 17], DType::F32, device).unwrap();
    is_out_of_memory(&d("matmul"), tall.matmul(&wide));
    is_out_of_memory(&d("eye"), Tensor::eye(1 << 20, DType::F32, device));
    // Small results are not probed and still work under the limit.
    assert_eq!(small.exp().unwrap().numel(), 6);
}

#[test]
fn huge_results_are_typed_errors_under_an_address_space_limit() {
    if limited::in_child() {
        for device in [Device::Reference, Device::Cpu] {
            reproducers(device);
        }
        return;
    }
    let said = limited::run_limited(
        "huge_results_are_typed_errors_under_an_address_space_limit",
        LIMIT_KIB,
    );
    eprintln!("{said}");
}
