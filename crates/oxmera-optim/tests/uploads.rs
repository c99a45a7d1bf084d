//! An optimizer step uploads nothing: its hyper-parameters reach the
//! backend as values, and its state is made by the device's fill service.
//!
//! Before the device seam, each `mul_scalar`, `div_scalar` and
//! `add_scalar` uploaded a one-element tensor: 7 uploads per parameter per
//! Adam step, 8 with L2 weight decay (measured on commit 64ec982 with a
//! backend counting one-element uploads: 14 and 16 per step for two
//! parameters). On a GPU each is a transfer across the bus that costs more
//! than the small kernel it feeds.

use oxmera_core::DType;
use oxmera_core::Device;
use oxmera_nn::Param;
use oxmera_optim::{Adam, AdamConfig, AdamW, AdamWConfig, Optimizer, Sgd, SgdConfig};
use oxmera_tensor::{Tensor, fallback, transfer};

/// The loopback device (device services only, every op through the host
/// fallback, whose own traffic is not a front-end upload), at an ordinal
/// no other test uses, so the upload count sees this test's traffic alone.
fn probe_device() -> Device {
    oxmera_loopback::device(77)
}

/// Two parameters with gradients, on `dev`.
fn params(dev: Device) -> Vec<(String, Param)> {
    let make = |n: usize| {
        let v = Tensor::arange(0.5, 0.5 + n as f64, 1.0, DType::F32, dev).unwrap();
        let p = Param::new(v).unwrap();
        let g = Tensor::full([n], 0.25, DType::F32, dev).unwrap();
        p.tensor().set_grad(Some(g)).unwrap();
        p
    };
    vec![("w".into(), make(6)), ("b".into(), make(3))]
}

/// Front-end uploads to `dev` during `steps` optimizer steps.
fn uploads_over(dev: Device, opt: &mut dyn Optimizer, steps: usize) -> u64 {
    let before = transfer::uploads(dev);
    for _ in 0..steps {
        opt.step().unwrap();
    }
    transfer::uploads(dev) - before
}

#[test]
fn optimizer_steps_upload_no_scalars() {
    let dev = probe_device();
    let adam = AdamConfig {
        weight_decay: 0.01,
        ..AdamConfig::default()
    };
    let sgd = SgdConfig {
        lr: 0.1,
        momentum: 0.9,
        nesterov: true,
        weight_decay: 0.01,
        ..SgdConfig::default()
    };
    let mut opts: Vec<(&str, Box<dyn Optimizer>)> = vec![
        ("adam", Box::new(Adam::new(params(dev), adam).unwrap())),
        (
            "adamw",
            Box::new(AdamW::new(params(dev), AdamWConfig::default()).unwrap()),
        ),
        ("sgd", Box::new(Sgd::new(params(dev), sgd).unwrap())),
    ];
    for (name, opt) in &mut opts {
        // The first step makes the state, the next ones update it.
        assert_eq!(uploads_over(dev, opt.as_mut(), 3), 0, "{name}");
    }
    // The steps did run, through the host fallback, and were counted.
    assert!(fallback::count(dev, "mul") > 0);
}
