//! The silent mistake of a hand-written module — a `visit_params` that
//! forgets a child — is an error on the optimizer's first step, naming
//! where the forgotten parameter was made; correct programs (including
//! two models with two optimizers, whose backward passes reach each
//! other's parameters) pass.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_nn::{Linear, Module, ModuleState, Param, join_name};
use oxmera_optim::{Adam, AdamConfig, Optimizer, Sgd, SgdConfig};
use oxmera_reference as _;
use oxmera_tensor::{Generator, Tensor};

const DEV: Device = Device::Reference;

/// Two layers, of which `visit_params` lists only the first when `forget`.
struct TwoLayers {
    first: Linear,
    second: Linear,
    forget: bool,
}

impl TwoLayers {
    fn new(forget: bool, rng: &mut Generator) -> Result<TwoLayers> {
        Ok(TwoLayers {
            first: Linear::new(3, 4, true, rng, DType::F32, DEV)?,
            second: Linear::new(4, 2, true, rng, DType::F32, DEV)?,
            forget,
        })
    }
}

impl Module for TwoLayers {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.second.forward(&self.first.forward(x)?.relu()?)
    }
}

/// Written by hand, as a program without `#[derive(Module)]` would.
impl ModuleState for TwoLayers {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        self.first.visit_params(&join_name(prefix, "first"), out);
        if !self.forget {
            self.second.visit_params(&join_name(prefix, "second"), out);
        }
    }
}

fn loss(model: &dyn Module) -> Result<Tensor> {
    let x = Tensor::ones([5, 3], DType::F32, DEV)?;
    model.forward(&x)?.square()?.mean_all()
}

#[test]
fn a_forgotten_child_is_an_error_on_the_first_step_naming_where_it_was_made() {
    let mut rng = Generator::new(1);
    let model = TwoLayers::new(true, &mut rng).unwrap();
    let mut sgd = Sgd::new(model.named_parameters(), SgdConfig::default()).unwrap();
    loss(&model).unwrap().backward().unwrap();
    let err = sgd.step().unwrap_err();
    let Error::UnregisteredParameter {
        op,
        shape,
        created_at,
        ..
    } = &err
    else {
        panic!("expected UnregisteredParameter, got {err}");
    };
    assert_eq!(*op, "Sgd::step");
    // The second layer's weight or bias: both are unlisted.
    assert!(shape.dims() == [2, 4] || shape.dims() == [2], "{shape}");
    // #[track_caller] carries the place to this file's TwoLayers::new.
    assert!(created_at.contains("tests/registration.rs"), "{created_at}");
    // The message says what to do about it.
    assert!(err.to_string().contains("derive(Module)"), "{err}");
}

#[test]
fn the_same_module_listing_every_child_trains() {
    let mut rng = Generator::new(1);
    let model = TwoLayers::new(false, &mut rng).unwrap();
    let mut adam = Adam::new(model.named_parameters(), AdamConfig::default()).unwrap();
    let before = loss(&model).unwrap().item().unwrap();
    for _ in 0..3 {
        adam.zero_grad();
        loss(&model).unwrap().backward().unwrap();
        adam.step().unwrap();
    }
    assert!(loss(&model).unwrap().item().unwrap() < before);
}

#[test]
fn two_models_with_two_optimizers_pass() {
    // A GAN's pattern: the generator's loss backpropagates through the
    // discriminator, whose parameters then hold gradients that the
    // generator's optimizer does not own — they are the other
    // optimizer's, so nothing is stray.
    let mut rng = Generator::new(2);
    let generator = Linear::new(3, 3, true, &mut rng, DType::F32, DEV).unwrap();
    let critic = Linear::new(3, 1, true, &mut rng, DType::F32, DEV).unwrap();
    let mut g_opt = Sgd::new(generator.named_parameters(), SgdConfig::default()).unwrap();
    let _c_opt = Sgd::new(critic.named_parameters(), SgdConfig::default()).unwrap();
    let z = Tensor::ones([2, 3], DType::F32, DEV).unwrap();
    let g_loss = critic
        .forward(&generator.forward(&z).unwrap())
        .unwrap()
        .mean_all()
        .unwrap();
    g_loss.backward().unwrap();
    assert!(critic.weight().grad().is_some());
    g_opt.step().unwrap();
}

#[test]
fn a_parameter_given_straight_to_an_optimizer_is_registered() {
    let w = Param::new(Tensor::ones([2], DType::F32, DEV).unwrap()).unwrap();
    let mut sgd = Sgd::new(vec![("w".into(), w.clone())], SgdConfig::default()).unwrap();
    w.tensor().sum_all().unwrap().backward().unwrap();
    sgd.step().unwrap();
    assert!(w.is_registered());
}
