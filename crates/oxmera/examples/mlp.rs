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
    let parts = split(data.len(), 0.2, 0)?; // a seeded 80/20 split
    let (n_test, shuffled) = (parts.test.len(), LoaderConfig::new(32).shuffled(0));
    let train = DataLoader::new(Subset::new(&data, parts.train)?, shuffled.on(dev))?;
    let test = DataLoader::new(
        Subset::new(&data, parts.test)?,
        LoaderConfig::new(n_test).on(dev),
    )?;
    let test_set = test.epoch(0).next().expect("the test set is one batch")?;

    let mut rng = Generator::new(0);
    let mut net = Sequential::new()
        .push(Flatten::new())
        .push(Linear::new(64, 128, true, &mut rng, dt, dev)?)
        .push(ReLU)
        .push(Linear::new(128, 10, true, &mut rng, dt, dev)?);
    let mut opt = Adam::new(net.named_parameters(), AdamConfig::default())?;
    let options = CrossEntropyOptions::default();

    for epoch in 0..15 {
        net.train();
        for batch in train.epoch(epoch) {
            let batch = batch?;
            cross_entropy(&net.forward(&batch.x)?, &batch.y, &options)?.backward()?;
            opt.step()?;
            opt.zero_grad();
        }
        net.eval();
        let logits = oxmera::tensor::no_grad(|| net.forward(&test_set.x))?;
        let acc = accuracy(&logits, &test_set.y)?;
        println!("epoch {:2}: test accuracy {:.2}%", epoch + 1, 100.0 * acc);
    }
    Ok(())
}
