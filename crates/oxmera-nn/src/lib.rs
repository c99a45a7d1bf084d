//! Neural-network building blocks: parameters, modules, layers, losses and
//! initializers.
//!
//! A [`Param`] is a shared, replaceable slot holding one tensor. A module
//! owns its params; an optimizer holds clones of the same slots and writes
//! updated values into them, so the module sees the new weights on its next
//! forward pass without either knowing the other. Tensors themselves stay
//! immutable: an update is a new tensor put into the slot.
//!
//! This crate knows the tensor front end and autograd. It must never know
//! about a concrete backend, an optimizer, a data set or a file format:
//! state dicts are plain `(name, tensor)` lists that `oxmera-checkpoint`
//! writes and `oxmera-optim` extends.

mod param;

pub use param::Param;
