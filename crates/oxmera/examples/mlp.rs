//! An MLP on the embedded digits data: a module of its own with
//! `#[derive(Module)]`, layer configs, and one error type for `main`.
//! docs/from-pytorch.md shows this program beside its PyTorch twin.
//!
//! `cargo run --release -p oxmera --example mlp`

use oxmera::data::{DataLoader, Dataset, LoaderConfig, Subset, digits, split};
use oxmera::nn::loss::{CrossEntropyOptions, accuracy, cross_entropy};
use oxmera::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use oxmera::optim::{Adam, AdamConfig};
use oxmera::prelude::*;

#[derive(Module)]
struct Mlp {
    hidden: Linear,
    drop: Dropout,
    out: Linear,
}

impl Mlp {
    fn new(rng: &mut Generator) -> Result<Mlp> {
        Ok(Mlp {
            hidden: LinearConfig::new(64, 128).init(rng)?,
            drop: DropoutConfig::new(0.1).init()?,
            out: LinearConfig::new(128, 10).init(rng)?,
        })
    }
}

impl Module for Mlp {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let h = self.hidden.forward(&x.flatten(1, -1)?).relu()?;
        self.out.forward(&self.drop.forward(&h)?)
    }
}

fn main() -> AnyResult<()> {
    let data = digits()?; // 1797 images of 8x8 pixels, classes 0-9
    let parts = split(data.len(), 0.2, 0)?; // a seeded 80/20 split
    let n_test = parts.test.len();
    let train = DataLoader::new(
        Subset::new(&data, parts.train)?,
        LoaderConfig::new(32).shuffled(0),
    )?;
    let test = DataLoader::new(Subset::new(&data, parts.test)?, LoaderConfig::new(n_test))?;
    let test_set = test.epoch(0).next().expect("the test set is one batch")?;

    let mut net = Mlp::new(&mut Generator::new(0))?;
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
