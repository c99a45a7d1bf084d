// An enum's parameters would depend on its variant.
use oxmera_nn::{Linear, Module};

#[derive(Module)]
#[module(crate = "oxmera_nn")]
enum Either {
    Left(Linear),
    Right(Linear),
}

fn main() {}
