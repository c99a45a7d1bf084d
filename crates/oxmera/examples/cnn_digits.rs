//! A convolutional network on the embedded digits data: two 3x3
//! convolutions with max pooling, then two linear layers, trained with
//! AdamW and saved to a safetensors checkpoint that PyTorch can read.
//!
//! `cargo run --release -p oxmera --example cnn_digits`

use std::collections::BTreeMap;

use oxmera::data::{DataLoader, Dataset, LoaderConfig, Subset, digits, split};
use oxmera::nn::loss::{CrossEntropyOptions, accuracy, cross_entropy};
use oxmera::nn::{Conv2d, Flatten, Linear, MaxPool2d, Module, ReLU, Sequential};
use oxmera::optim::{AdamW, AdamWConfig, Optimizer};
use oxmera::prelude::*;

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let (dev, dt) = (Device::Cpu, DType::F32);
    let data = digits()?;
    let parts = split(data.len(), 0.2, 0)?;
    let train_set = Subset::new(&data, parts.train)?;
    let test_set = Subset::new(&data, parts.test)?;
    let train = DataLoader::new(train_set, LoaderConfig::new(32).shuffled(0).on(dev))?;
    let test = DataLoader::new(test_set, LoaderConfig::new(256).on(dev))?;

    let mut rng = Generator::new(0);
    // [B, 1, 8, 8] -> conv 16 -> pool -> [B, 16, 4, 4] -> conv 32 -> pool -> [B, 32, 2, 2]
    let mut net = Sequential::new()
        .push(Conv2d::new(1, 16, (3, 3), &mut rng, dt, dev)?.padding((1, 1)))
        .push(ReLU)
        .push(MaxPool2d::new((2, 2)))
        .push(Conv2d::new(16, 32, (3, 3), &mut rng, dt, dev)?.padding((1, 1)))
        .push(ReLU)
        .push(MaxPool2d::new((2, 2)))
        .push(Flatten::new())
        .push(Linear::new(32 * 2 * 2, 64, true, &mut rng, dt, dev)?)
        .push(ReLU)
        .push(Linear::new(64, 10, true, &mut rng, dt, dev)?);
    println!("{} trainable parameters", net.num_parameters());
    let mut opt = AdamW::new(net.named_parameters(), AdamWConfig::default())?;
    let options = CrossEntropyOptions::default();

    for epoch in 0..20 {
        net.train();
        for batch in train.epoch(epoch) {
            let batch = batch?;
            let loss = cross_entropy(&net.forward(&batch.x)?, &batch.y, &options)?;
            loss.backward()?;
            opt.step()?;
            opt.zero_grad();
        }
        net.eval();
        let (mut correct, mut seen) = (0.0, 0);
        for batch in test.epoch(0) {
            let batch = batch?;
            let n = batch.indices.len();
            let logits = oxmera::tensor::no_grad(|| net.forward(&batch.x))?;
            correct += accuracy(&logits, &batch.y)? * n as f64;
            seen += n;
        }
        println!(
            "epoch {:2}: test accuracy {:.2}%",
            epoch + 1,
            100.0 * correct / seen as f64
        );
    }

    let path = std::env::temp_dir().join("oxmera-cnn-digits.safetensors");
    let tensors: BTreeMap<String, Tensor> = net.state_dict();
    oxmera::checkpoint::save(&path, &tensors, &BTreeMap::new())?;
    println!("weights saved to {}", path.display());
    Ok(())
}
