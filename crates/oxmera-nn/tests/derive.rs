//! `#[derive(Module)]`: every field is accounted for by its type, so a
//! child cannot be forgotten; names follow the fields; the training mode
//! reaches every child; misuse fails to compile (tests/ui).

use oxmera_core::{DType, Device, Result};
use oxmera_nn::{BatchNorm1d, Dropout, Linear, Module, ModuleState, Param, ReLU, Sequential};
use oxmera_reference as _;
use oxmera_tensor::{Generator, Tensor};

const DEV: Device = Device::Reference;

#[derive(Module)]
#[module(crate = "oxmera_nn")]
struct Block {
    fc: Linear,
    norm: Option<BatchNorm1d>,
    drop: Dropout,
    scale: Param,
    #[module(skip)]
    _label: Vec<&'static str>,
    width: usize,
}

impl Module for Block {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut y = self.fc.forward(x)?;
        if let Some(norm) = &self.norm {
            y = norm.forward(&y)?;
        }
        self.drop.forward(&y)?.mul(&self.scale.tensor())
    }
}

#[derive(Module)]
#[module(crate = "oxmera_nn")]
struct Net {
    blocks: Vec<Block>,
    head: Box<dyn Module>,
    spare: Option<Linear>,
}

impl Module for Net {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut y = x.clone();
        for b in &self.blocks {
            y = b.forward(&y)?;
        }
        self.head.forward(&y)
    }
}

/// A tuple struct and a generic one: names are the positions; the bound
/// on `M` is what the derive needs of it.
#[derive(Module)]
#[module(crate = "oxmera_nn")]
struct Pair<M: Module>(M, Linear);

impl<M: Module> Module for Pair<M> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.1.forward(&self.0.forward(x)?)
    }
}

#[derive(Module)]
#[module(crate = "oxmera_nn")]
struct Stateless;

impl Module for Stateless {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.clone())
    }
}

fn block(rng: &mut Generator, with_norm: bool) -> Block {
    Block {
        fc: Linear::new(3, 3, true, rng, DType::F32, DEV).unwrap(),
        norm: with_norm.then(|| BatchNorm1d::new(3, DType::F32, DEV).unwrap()),
        drop: Dropout::new(0.5, Generator::new(9)).unwrap(),
        scale: Param::new(Tensor::ones([3], DType::F32, DEV).unwrap()).unwrap(),
        _label: vec!["unsaved"],
        width: 3,
    }
}

fn net() -> Net {
    let mut rng = Generator::new(4);
    Net {
        blocks: vec![block(&mut rng, true), block(&mut rng, false)],
        head: Box::new(
            Sequential::new()
                .push(ReLU)
                .push(Linear::new(3, 1, false, &mut rng, DType::F32, DEV).unwrap()),
        ),
        spare: None,
    }
}

#[test]
fn every_field_is_named_by_its_path() {
    let net = net();
    let names: Vec<String> = net.state_dict().into_keys().collect();
    assert_eq!(
        names,
        [
            "blocks.0.fc.bias",
            "blocks.0.fc.weight",
            "blocks.0.norm.bias",
            "blocks.0.norm.num_batches_tracked",
            "blocks.0.norm.running_mean",
            "blocks.0.norm.running_var",
            "blocks.0.norm.weight",
            "blocks.0.scale",
            "blocks.1.fc.bias",
            "blocks.1.fc.weight",
            "blocks.1.scale",
            "head.1.weight",
        ]
    );
    // Buffers are saved, not trained.
    assert_eq!(net.named_parameters().len(), 12 - 3);
    assert_eq!(net.blocks[0].width, 3);
    let pair = Pair(
        ReLU,
        Linear::new(2, 2, false, &mut Generator::new(1), DType::F32, DEV).unwrap(),
    );
    let names: Vec<String> = pair.state_dict().into_keys().collect();
    assert_eq!(names, ["1.weight"]);
    assert!(Stateless.state_dict().is_empty());
}

#[test]
fn a_derived_module_trains_every_child_it_holds() {
    // The silent mistake of a hand-written visit_params — a child left
    // out — cannot be made: every field is visited. One SGD-like step by
    // hand shows every parameter received a gradient from one backward.
    let net = net();
    let x = Tensor::ones([4, 3], DType::F32, DEV).unwrap();
    net.forward(&x)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    for (name, p) in net.named_parameters() {
        assert!(p.grad().is_some(), "{name} received no gradient");
    }
    // And the first optimizer step finds nothing unregistered.
    oxmera_nn::check_registered("test").unwrap();
}

#[test]
fn the_training_mode_reaches_every_child() {
    let mut net = net();
    assert!(net.is_training());
    net.eval();
    assert!(!net.is_training());
    assert!(!net.blocks[1].drop.is_training());
    assert!(!net.blocks[0].norm.as_ref().unwrap().is_training());
    net.train();
    assert!(net.blocks[0].drop.is_training() && net.is_training());
    // A struct of stateless layers stays in training mode, as a fresh
    // module does.
    let mut s = Stateless;
    s.set_training(false);
    assert!(s.is_training());
}

/// The expected compiler output sits beside each case; a new layer can
/// change the list of implementors rustc prints, after which
/// `TRYBUILD=overwrite cargo test -p oxmera-nn --test derive` re-records
/// it (read the diff: only that list may change).
#[test]
fn misuse_fails_to_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
