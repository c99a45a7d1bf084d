//! Regression on procedural data: a small network learns `y = sin(πx)`
//! from noisy samples, with SGD, momentum and a cosine learning-rate
//! schedule.
//!
//! `cargo run --release -p oxmera --example regression`

use oxmera::data::{DataLoader, LoaderConfig, SineConfig, sine};
use oxmera::nn::loss::{Reduction, mse};
use oxmera::nn::{LinearConfig, Sequential, Tanh};
use oxmera::optim::{CosineAnnealing, Sgd, SgdConfig, apply_schedule};
use oxmera::prelude::*;

fn main() -> AnyResult<()> {
    let data = sine(SineConfig {
        samples: 512,
        noise: 0.05,
        seed: 1,
    })?;
    let loader = DataLoader::new(&data, LoaderConfig::new(32).shuffled(1))?;

    let mut rng = Generator::new(1);
    let net = Sequential::new()
        .push(LinearConfig::new(1, 32).init(&mut rng)?)
        .push(Tanh)
        .push(LinearConfig::new(32, 32).init(&mut rng)?)
        .push(Tanh)
        .push(LinearConfig::new(32, 1).init(&mut rng)?);
    let epochs = 60;
    let config = SgdConfig {
        lr: 0.05,
        momentum: 0.9,
        ..SgdConfig::default()
    };
    let mut opt = Sgd::new(net.named_parameters(), config)?;
    let schedule = CosineAnnealing::new(0.05, epochs * loader.num_batches() as u64, 1e-4)?;

    for epoch in 0..epochs {
        let (mut total, mut batches) = (0.0, 0);
        for batch in loader.epoch(epoch) {
            let batch = batch?;
            apply_schedule(&schedule, &mut opt);
            let loss = mse(&net.forward(&batch.x)?, &batch.y, Reduction::Mean)?;
            loss.backward()?;
            opt.step()?;
            opt.zero_grad();
            total += loss.item()?;
            batches += 1;
        }
        if (epoch + 1) % 10 == 0 {
            println!(
                "epoch {:2}: mean squared error {:.5}",
                epoch + 1,
                total / batches as f64
            );
        }
    }
    // The fitted curve at a few points, against the truth.
    for x in [-0.75f32, -0.5, 0.0, 0.25, 0.5] {
        let input = Tensor::new([[x]], Device::default())?;
        let y = oxmera::tensor::no_grad(|| net.forward(&input))?.item()?;
        let truth = (std::f32::consts::PI * x).sin();
        println!("sin(π·{x:+.2}) = {truth:+.3}, predicted {y:+.3}");
    }
    Ok(())
}
