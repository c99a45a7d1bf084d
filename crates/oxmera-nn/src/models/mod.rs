//! Whole models built from this crate's layers, written to be read: each
//! is a page of ordinary code a learner can open, change and train
//! (`oxmera train --model …` builds them, and nothing about them is
//! hidden in the command line tool).

mod cnn;
mod transformer;

pub use cnn::{CnnConfig, ConvLayerShape};

pub use transformer::{
    CharTransformer, SampleOptions, TransformerConfig, flatten_positions, next_char_loss,
};
