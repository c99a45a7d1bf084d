// A plain tensor field would be neither trained nor saved: the derive
// refuses it until it is a Param, a Param::buffer, or #[module(skip)].
use oxmera_nn::Module;
use oxmera_tensor::Tensor;

#[derive(Module)]
#[module(crate = "oxmera_nn")]
struct Net {
    weight: Tensor,
}

fn main() {}
