//! [`ModuleField`]: what one field of a `#[derive(Module)]` struct
//! contributes to its module's state, decided by the field's type.
//!
//! | field type                  | contributes                          |
//! |-----------------------------|--------------------------------------|
//! | [`Param`]                   | itself, under the field's name       |
//! | any [`ModuleState`] (a layer, `Box<dyn Module>`, a derived struct) | its parameters under `field.` |
//! | `Option<T>`                 | `T`'s, when `Some`                   |
//! | `Vec<T>`, `[T; N]`          | each element's, under `field.0`, `field.1`, … |
//! | numbers, `bool`, `String`, [`DType`], [`Device`] | nothing (configuration) |
//!
//! Any other type — a plain [`oxmera_tensor::Tensor`] among them, which
//! would be neither trained nor saved — does not implement the trait, so
//! the derive fails to compile until the field is made a [`Param`]
//! (trained), a [`Param::buffer`] (saved), or marked `#[module(skip)]`.

use oxmera_core::{DType, Device};

use crate::{ModuleState, Param, join_name};

/// One field's share of a module's state (see the module docs). The
/// derive calls it; a program implements it only for a field type of its
/// own that holds parameters without being a module.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a parameter, a module, or plain configuration",
    label = "#[derive(Module)] cannot tell what this field holds",
    note = "make it a Param (trained) or Param::buffer (saved), a type that implements \
            ModuleState, or mark the field #[module(skip)]"
)]
pub trait ModuleField {
    /// Appends this field's parameters and buffers, named under `name`.
    fn visit_params(&self, name: &str, out: &mut Vec<(String, Param)>);

    /// Passes the training mode on (modules with a mode store it).
    fn set_training(&mut self, training: bool) {
        let _ = training;
    }

    /// The field's mode, if it has one (`Some(false)` from any field puts
    /// the derived module in evaluation mode).
    fn training(&self) -> Option<bool> {
        None
    }
}

impl ModuleField for Param {
    fn visit_params(&self, name: &str, out: &mut Vec<(String, Param)>) {
        out.push((name.to_string(), self.clone()));
    }
}

impl<M: ModuleState + ?Sized> ModuleField for M {
    fn visit_params(&self, name: &str, out: &mut Vec<(String, Param)>) {
        ModuleState::visit_params(self, name, out);
    }

    fn set_training(&mut self, training: bool) {
        ModuleState::set_training(self, training);
    }

    fn training(&self) -> Option<bool> {
        Some(self.is_training())
    }
}

impl<T: ModuleField> ModuleField for Option<T> {
    fn visit_params(&self, name: &str, out: &mut Vec<(String, Param)>) {
        if let Some(inner) = self {
            inner.visit_params(name, out);
        }
    }

    fn set_training(&mut self, training: bool) {
        if let Some(inner) = self {
            inner.set_training(training);
        }
    }

    fn training(&self) -> Option<bool> {
        self.as_ref().and_then(ModuleField::training)
    }
}

/// The shared body of the sequence impls: element `i` is named `name.i`,
/// as PyTorch's `ModuleList` names them.
fn visit_each<T: ModuleField>(items: &[T], name: &str, out: &mut Vec<(String, Param)>) {
    for (i, item) in items.iter().enumerate() {
        item.visit_params(&join_name(name, &i.to_string()), out);
    }
}

/// `Some(false)` if any element is in evaluation mode, else the first
/// element's mode.
fn combined_mode<T: ModuleField>(items: &[T]) -> Option<bool> {
    let mut first = None;
    for training in items.iter().filter_map(ModuleField::training) {
        if !training {
            return Some(false);
        }
        first.get_or_insert(training);
    }
    first
}

/// `Vec`s and arrays of fields: element `i` under `name.i`, the mode
/// passed to each.
macro_rules! sequence_field {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> ModuleField for $ty {
            fn visit_params(&self, name: &str, out: &mut Vec<(String, Param)>) {
                visit_each(self, name, out);
            }

            fn set_training(&mut self, training: bool) {
                self.iter_mut().for_each(|item| item.set_training(training));
            }

            fn training(&self) -> Option<bool> {
                combined_mode(self)
            }
        }
    };
}
sequence_field!([T: ModuleField] Vec<T>);
sequence_field!([T: ModuleField, const N: usize] [T; N]);

/// Configuration: holds no parameters, has no mode.
macro_rules! plain_field {
    ($($t:ty),*) => {$(
        impl ModuleField for $t {
            fn visit_params(&self, _: &str, _: &mut Vec<(String, Param)>) {}
        }
    )*};
}
plain_field!(
    bool, f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, String, DType, Device
);
