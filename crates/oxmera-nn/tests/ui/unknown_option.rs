// A misspelt option is an error, not an option silently ignored.
use oxmera_nn::{Linear, Module};

#[derive(Module)]
#[module(crate = "oxmera_nn")]
struct Net {
    #[module(skipp)]
    fc: Linear,
}

fn main() {}
