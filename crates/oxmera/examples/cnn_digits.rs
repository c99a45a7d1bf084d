//! A convolutional network on the embedded digits data: two 3x3
//! convolutions with max pooling, then two linear layers, trained with
//! AdamW and saved to a safetensors checkpoint that PyTorch can read.
//!
//! `cargo run --release -p oxmera --example cnn_digits`

use std::collections::BTreeMap;

use oxmera::data::{DataLoader, Dataset, LoaderConfig, Subset, digits, split};
use oxmera::nn::loss::{CrossEntropyOptions, accuracy, cross_entropy};
use oxmera::nn::{Conv2dConfig, Flatten, LinearConfig, MaxPool2d, ReLU, Sequential};
use oxmera::optim::{AdamW, AdamWConfig};
use oxmera::prelude::*;

fn main() -> AnyResult<()> {
    let data = digits()?;
    let parts = split(data.len(), 0.2, 0)?;
    let train_set = Subset::new(&data, parts.train)?;
    let test_set = Subset::new(&data, parts.test)?;
    let train = DataLoader::new(train_set, LoaderConfig::new(32).shuffled(0))?;
    let test = DataLoader::new(test_set, LoaderConfig::new(256))?;

    let mut rng = Generator::new(0);
    // [B, 1, 8, 8] -> conv 16 -> pool -> [B, 16, 4, 4] -> conv 32 -> pool -> [B, 32, 2, 2]
    let mut net = Sequential::new()
        .push(
            Conv2dConfig::new(1, 16, (3, 3))
                .with_padding((1, 1))
                .init(&mut rng)?,
        )
        .push(ReLU)
        .push(MaxPool2d::new((2, 2)))
        .push(
            Conv2dConfig::new(16, 32, (3, 3))
                .with_padding((1, 1))
                .init(&mut rng)?,
        )
        .push(ReLU)
        .push(MaxPool2d::new((2, 2)))
        .push(Flatten::new())
        .push(LinearConfig::new(32 * 2 * 2, 64).init(&mut rng)?)
        .push(ReLU)
        .push(LinearConfig::new(64, 10).init(&mut rng)?);
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
            let batch_accuracy = accuracy(&logits, &batch.y)?;
            correct += batch_accuracy * n as f64;
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
