//! Neural-network building blocks: parameters, modules, layers, losses and
//! initializers.
//!
//! A [`Param`] is a shared, replaceable slot holding one tensor. A module
//! owns its params; an optimizer holds clones of the same slots and writes
//! updated values into them, so the module sees the new weights on its next
//! forward pass without either knowing the other. Tensors themselves stay
//! immutable: an update is a new tensor put into the slot.
//!
//! A [`Module`] is a forward pass plus a way to list its params under
//! dotted names (`"0.weight"`, `"bn.running_mean"`): its [`ModuleState`],
//! which `#[derive(Module)]` writes from the struct's fields (see
//! [`ModuleField`]). Everything a training loop needs beyond the forward
//! pass — the trainable parameters for an optimizer, gradient zeroing, the
//! state dict a checkpoint saves, strict loading that reports the
//! offending tensor — is derived from that list, so a new layer writes its
//! forward pass and a derive. The names follow PyTorch's, so a state dict
//! means the same thing on both sides.
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::{DType, Device, Result};
//! use oxmera_nn::{Dropout, Linear, Module, ModuleState};
//! use oxmera_tensor::{Generator, Tensor};
//!
//! #[derive(Module)]
//! #[module(crate = "oxmera_nn")] // programs using the `oxmera` facade omit this
//! struct Mlp {
//!     hidden: Linear,
//!     out: Linear,
//!     drop: Dropout,
//!     #[module(skip)]
//!     note: &'static str,
//! }
//!
//! impl Module for Mlp {
//!     fn forward(&self, x: &Tensor) -> Result<Tensor> {
//!         self.out.forward(&self.drop.forward(&self.hidden.forward(x)?.relu()?)?)
//!     }
//! }
//!
//! let mut rng = Generator::new(0);
//! let mut net = Mlp {
//!     hidden: Linear::new(4, 8, true, &mut rng, DType::F32, Device::Reference)?,
//!     out: Linear::new(8, 2, true, &mut rng, DType::F32, Device::Reference)?,
//!     drop: Dropout::new(0.1, Generator::new(7))?,
//!     note: "a two-layer perceptron",
//! };
//! let names: Vec<String> = net.state_dict().into_keys().collect();
//! assert_eq!(names, ["hidden.bias", "hidden.weight", "out.bias", "out.weight"]);
//! net.eval(); // reaches the dropout
//! assert!(!net.is_training());
//! # Ok::<(), oxmera_core::Error>(())
//! ```
//!
//! Layers are built from tensor ops; autograd records them, so no layer
//! writes a backward pass. Randomness (initialization, dropout) comes from
//! seeded [`Generator`](oxmera_tensor::Generator)s, so a seed fixes a run.
//!
//! This crate knows the tensor front end and autograd. It must never know
//! about a concrete backend, an optimizer, a data set or a file format:
//! state dicts are plain `(name, tensor)` maps that `oxmera-checkpoint`
//! writes and `oxmera-optim` extends.
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::{DType, Device};
//! use oxmera_nn::loss::{cross_entropy, CrossEntropyOptions};
//! use oxmera_nn::{Linear, Module, ReLU, Sequential};
//! use oxmera_tensor::{Generator, Tensor};
//!
//! let dev = Device::Reference;
//! let mut rng = Generator::new(42);
//! let net = Sequential::new()
//!     .push(Linear::new(2, 8, true, &mut rng, DType::F32, dev)?)
//!     .push(ReLU)
//!     .push(Linear::new(8, 2, true, &mut rng, DType::F32, dev)?);
//! let x = Tensor::from_vec(vec![0.0f32, 1.0, 1.0, 0.0], [2, 2], dev)?;
//! let y = Tensor::from_vec(vec![1i64, 0], [2], dev)?;
//!
//! let loss = cross_entropy(&net.forward(&x)?, &y, &CrossEntropyOptions::default())?;
//! loss.backward()?;
//! // Every trainable parameter received a gradient of its own shape.
//! for (name, p) in net.named_parameters() {
//!     assert_eq!(p.grad().unwrap().shape(), p.tensor().shape(), "{name}");
//! }
//! // The state dict names tensors as PyTorch would.
//! let names: Vec<String> = net.state_dict().into_keys().collect();
//! assert_eq!(names, ["0.bias", "0.weight", "2.bias", "2.weight"]);
//! # Ok::<(), oxmera_core::Error>(())
//! ```

mod activation;
mod attention;
mod config;
mod conv;
mod dropout;
mod embedding;
mod field;
pub mod init;
mod linear;
pub mod loss;
pub mod models;
mod module;
mod norm;
mod param;
mod sequential;
#[cfg(test)]
mod test_util;

pub use activation::{
    Flatten, GELU, GeluApproximation, LeakyReLU, ReLU, SiLU, Sigmoid, Softmax, Tanh,
};
pub use attention::{
    LearnedPositionalEmbedding, MultiheadAttention, SinusoidalPositionalEmbedding,
};
pub use config::{
    BatchNormConfig, Conv2dConfig, DropoutConfig, EmbeddingConfig, LayerNormConfig, LinearConfig,
};
pub use conv::{AvgPool2d, Conv2d, MaxPool2d};
pub use dropout::{Dropout, Dropout2d};
pub use embedding::Embedding;
pub use field::ModuleField;
pub use linear::Linear;
pub use module::{Module, ModuleState, join_name};
pub use norm::{BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm};
/// `#[derive(Module)]`: writes [`ModuleState`] from a struct's fields
/// (see [`ModuleField`] for what each field type contributes).
pub use oxmera_nn_derive::Module;
pub use param::{Param, check_registered};
pub use sequential::Sequential;
