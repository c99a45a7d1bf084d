//! An MLP on the embedded digits data, in about forty lines.
//!
//! `cargo run --release -p oxmera --example mlp`

use oxmera::data::{DataLoader, Dataset, LoaderConfig, Subset, digits, split};
use oxmera::nn::loss::{CrossEntropyOptions, accuracy, cross_entropy};
use oxmera::nn::{Flatten, Linear, Module, ReLU, Sequential};
use oxmera::optim::{Adam, AdamConfig, Optimizer};
use oxmera::prelude::*;

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let (dev, dt) = (Device::Cpu, DType::F32);
    let data = digits()?; // 1797 images of 8x8 pixels, classes 0-9
    let parts = split(data.len(), 0.2, 0)?;
    let train = DataLoader::new(
        Subset::new(&data, parts.train)?,
        LoaderConfig::new(32).shuffled(0).on(dev),
    )?;
    let test = DataLoader::new(
        Subset::new(&data, parts.test)?,
        LoaderConfig::new(256).on(dev),
    )?;

    let mut rng = Generator::new(0);
    let mut net = Sequential::new()
        .push(Flatten::new())
        .push(Linear::new(64, 128, true, &mut rng, dt, dev)?)
        .push(ReLU)
        .push(Linear::new(128, 10, true, &mut rng, dt, dev)?);
    let mut opt = Adam::new(net.named_parameters(), AdamConfig::default())?;

    for epoch in 0..15 {
        net.train();
        for batch in train.epoch(epoch) {
            let batch = batch?;
            let loss = cross_entropy(
                &net.forward(&batch.x)?,
                &batch.y,
                &CrossEntropyOptions::default(),
            )?;
            loss.backward()?;
            opt.step()?;
            opt.zero_grad();
        }
        net.eval();
        let (mut correct, mut seen) = (0.0, 0);
        for batch in test.epoch(0) {
            let batch = batch?;
            let n = batch.indices.len();
            correct +=
                oxmera::tensor::no_grad(|| accuracy(&net.forward(&batch.x)?, &batch.y))? * n as f64;
            seen += n;
        }
        println!(
            "epoch {:2}: test accuracy {:.2}%",
            epoch + 1,
            100.0 * correct / seen as f64
        );
    }
    Ok(())
}
