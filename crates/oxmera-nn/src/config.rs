//! Layer configs: every layer built the same way, with named options and
//! defaults, so a call site says what it changes and nothing else.
//!
//! `XConfig::new(required sizes)` holds the defaults (PyTorch's: a bias
//! where PyTorch has one, `eps = 1e-5`, `momentum = 0.1`), `with_*`
//! changes one option, and `init` builds the layer — drawing its initial
//! values from a seeded [`Generator`] where it has random ones. Every
//! config places its parameters in `F32` on [`Device::default`] (the CPU
//! backend) unless told otherwise with `with_dtype` / `with_device`.
//!
//! ```
//! # use oxmera_reference as _;
//! use oxmera_core::Device;
//! use oxmera_nn::{Conv2dConfig, LinearConfig, Module};
//! use oxmera_tensor::Generator;
//! let mut rng = Generator::new(0);
//! let dev = Device::Reference;
//! let fc = LinearConfig::new(784, 10).with_bias(false).with_device(dev).init(&mut rng)?;
//! assert!(fc.bias().is_none());
//! let conv = Conv2dConfig::new(1, 8, (3, 3)).with_padding((1, 1)).with_device(dev).init(&mut rng)?;
//! assert_eq!(conv.num_parameters(), 8 * 9 + 8);
//! # Ok::<(), oxmera_core::Error>(())
//! ```
//!
//! The positional constructors (`Linear::new(in, out, bias, rng, dtype,
//! device)`) remain, for code that names everything; each config's `init`
//! calls its layer's.

use oxmera_core::{DType, Device, Result, Shape};
use oxmera_tensor::Generator;

use crate::{BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Embedding, LayerNorm, Linear};

/// Declares `with_FIELD(value) -> Self` setters, each documented.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($field:ident: $ty:ty);)*) => {$(
        $(#[$doc])*
        pub fn $name(mut self, $field: $ty) -> Self {
            self.$field = $field;
            self
        }
    )*};
}

/// Declares `with_dtype` and `with_device` for a config with `dtype` and
/// `device` fields.
macro_rules! placement {
    () => {
        setters! {
            /// The dtype of the parameters (a float; default `F32`).
            with_dtype(dtype: DType);
            /// The device of the parameters (default [`Device::default`]).
            with_device(device: Device);
        }
    };
}

/// Options of a [`Linear`] layer.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearConfig {
    /// The input width.
    pub in_features: usize,
    /// The output width.
    pub out_features: usize,
    /// Whether the layer adds a bias (default `true`).
    pub bias: bool,
    /// The parameters' dtype.
    pub dtype: DType,
    /// The parameters' device.
    pub device: Device,
}

impl LinearConfig {
    /// `in_features → out_features`, with a bias, `F32`, default device.
    pub fn new(in_features: usize, out_features: usize) -> Self {
        LinearConfig {
            in_features,
            out_features,
            bias: true,
            dtype: DType::F32,
            device: Device::default(),
        }
    }

    setters! {
        /// Whether to add a bias.
        with_bias(bias: bool);
    }

    placement!();

    /// The layer, its weights drawn from `rng` as PyTorch draws them.
    #[track_caller]
    pub fn init(&self, rng: &mut Generator) -> Result<Linear> {
        Linear::new(
            self.in_features,
            self.out_features,
            self.bias,
            rng,
            self.dtype,
            self.device,
        )
    }
}

/// Options of a [`Conv2d`] layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Conv2dConfig {
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// The kernel's `(height, width)`.
    pub kernel: (usize, usize),
    /// The step between windows (default `(1, 1)`).
    pub stride: (usize, usize),
    /// Zeros added on each side (default `(0, 0)`).
    pub padding: (usize, usize),
    /// The spacing of kernel taps (default `(1, 1)`).
    pub dilation: (usize, usize),
    /// Channel groups (default 1).
    pub groups: usize,
    /// Whether the layer adds a bias (default `true`).
    pub bias: bool,
    /// The parameters' dtype.
    pub dtype: DType,
    /// The parameters' device.
    pub device: Device,
}

impl Conv2dConfig {
    /// `in_channels → out_channels` with a `kernel`-sized window, stride
    /// 1, no padding, a bias, `F32`, default device.
    pub fn new(in_channels: usize, out_channels: usize, kernel: (usize, usize)) -> Self {
        Conv2dConfig {
            in_channels,
            out_channels,
            kernel,
            stride: (1, 1),
            padding: (0, 0),
            dilation: (1, 1),
            groups: 1,
            bias: true,
            dtype: DType::F32,
            device: Device::default(),
        }
    }

    /// The stride.
    pub fn with_stride(mut self, stride: (usize, usize)) -> Self {
        self.stride = stride;
        self
    }

    /// The padding.
    pub fn with_padding(mut self, padding: (usize, usize)) -> Self {
        self.padding = padding;
        self
    }

    /// The dilation.
    pub fn with_dilation(mut self, dilation: (usize, usize)) -> Self {
        self.dilation = dilation;
        self
    }

    setters! {
        /// The number of channel groups.
        with_groups(groups: usize);
        /// Whether to add a bias.
        with_bias(bias: bool);
    }

    placement!();

    /// The layer, its weights drawn from `rng` as PyTorch draws them;
    /// errors as [`Conv2d::new`] and its builders give them.
    #[track_caller]
    pub fn init(&self, rng: &mut Generator) -> Result<Conv2d> {
        let mut conv = Conv2d::new(
            self.in_channels,
            self.out_channels,
            self.kernel,
            rng,
            self.dtype,
            self.device,
        )?
        .stride(self.stride)
        .padding(self.padding)
        .dilation(self.dilation);
        if self.groups != 1 {
            conv = conv.groups(self.groups)?;
        }
        if !self.bias {
            conv = conv.bias(false)?;
        }
        conv.check()?;
        Ok(conv)
    }
}

/// Options of an [`Embedding`] table.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingConfig {
    /// The number of rows (the vocabulary size).
    pub num_embeddings: usize,
    /// The width of a row.
    pub dim: usize,
    /// The table's dtype.
    pub dtype: DType,
    /// The table's device.
    pub device: Device,
}

impl EmbeddingConfig {
    /// A `num_embeddings × dim` table, `F32`, default device.
    pub fn new(num_embeddings: usize, dim: usize) -> Self {
        EmbeddingConfig {
            num_embeddings,
            dim,
            dtype: DType::F32,
            device: Device::default(),
        }
    }

    placement!();

    /// The table, drawn from a standard normal as PyTorch draws it.
    #[track_caller]
    pub fn init(&self, rng: &mut Generator) -> Result<Embedding> {
        Embedding::new(self.num_embeddings, self.dim, rng, self.dtype, self.device)
    }
}

/// Options of a [`LayerNorm`].
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNormConfig {
    /// The trailing dims normalized over.
    pub normalized_shape: Shape,
    /// Added to the variance (default `1e-5`).
    pub eps: f64,
    /// Whether it has a learnable scale and shift (default `true`).
    pub affine: bool,
    /// The parameters' dtype.
    pub dtype: DType,
    /// The parameters' device.
    pub device: Device,
}

impl LayerNormConfig {
    /// Normalizes over the trailing `normalized_shape`, `eps = 1e-5`,
    /// affine, `F32`, default device.
    pub fn new(normalized_shape: impl Into<Shape>) -> Self {
        LayerNormConfig {
            normalized_shape: normalized_shape.into(),
            eps: 1e-5,
            affine: true,
            dtype: DType::F32,
            device: Device::default(),
        }
    }

    setters! {
        /// The epsilon.
        with_eps(eps: f64);
        /// Whether to learn a scale and shift.
        with_affine(affine: bool);
    }

    placement!();

    /// The layer (scale ones, shift zeros).
    #[track_caller]
    pub fn init(&self) -> Result<LayerNorm> {
        let norm = LayerNorm::new(self.normalized_shape.clone(), self.dtype, self.device)?
            .eps(self.eps)?;
        Ok(if self.affine {
            norm
        } else {
            norm.without_affine()
        })
    }
}

/// The `init_1d`/`init_2d` of [`BatchNormConfig`]: the two layers share
/// their builders.
macro_rules! bn_init {
    ($($(#[$doc:meta])* $name:ident -> $layer:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(&self) -> Result<$layer> {
            let mut bn = $layer::new(self.num_features, self.dtype, self.device)?
                .eps(self.eps)?
                .momentum(self.momentum)?;
            if !self.affine {
                bn = bn.without_affine();
            }
            if !self.track_running_stats {
                bn = bn.without_running_stats();
            }
            Ok(bn)
        }
    )*};
}

/// Options of a [`BatchNorm1d`] or [`BatchNorm2d`].
#[derive(Debug, Clone, PartialEq)]
pub struct BatchNormConfig {
    /// The number of channels.
    pub num_features: usize,
    /// Added to the variance (default `1e-5`).
    pub eps: f64,
    /// The running statistics' update rate (default `Some(0.1)`; `None`
    /// averages over every batch seen, as PyTorch's `momentum=None`).
    pub momentum: Option<f64>,
    /// Whether it has a learnable scale and shift (default `true`).
    pub affine: bool,
    /// Whether it keeps running statistics (default `true`; without them
    /// evaluation uses the batch's own, as PyTorch's
    /// `track_running_stats=False`).
    pub track_running_stats: bool,
    /// The parameters' dtype.
    pub dtype: DType,
    /// The parameters' device.
    pub device: Device,
}

impl BatchNormConfig {
    /// `num_features` channels, PyTorch's defaults, `F32`, default device.
    pub fn new(num_features: usize) -> Self {
        BatchNormConfig {
            num_features,
            eps: 1e-5,
            momentum: Some(0.1),
            affine: true,
            track_running_stats: true,
            dtype: DType::F32,
            device: Device::default(),
        }
    }

    setters! {
        /// The epsilon.
        with_eps(eps: f64);
        /// The momentum.
        with_momentum(momentum: Option<f64>);
        /// Whether to learn a scale and shift.
        with_affine(affine: bool);
        /// Whether to keep running statistics.
        with_track_running_stats(track_running_stats: bool);
    }

    placement!();

    bn_init! {
        /// A [`BatchNorm1d`] (inputs `[N, C]` or `[N, C, L]`).
        init_1d -> BatchNorm1d;
        /// A [`BatchNorm2d`] (inputs `[N, C, H, W]`).
        init_2d -> BatchNorm2d;
    }
}

/// Options of a [`Dropout`].
#[derive(Debug, Clone, PartialEq)]
pub struct DropoutConfig {
    /// The probability of zeroing an element.
    pub p: f64,
    /// The seed of the layer's own mask generator (default 0).
    pub seed: u64,
}

impl DropoutConfig {
    /// Drops with probability `p`, masks seeded with 0.
    pub fn new(p: f64) -> Self {
        DropoutConfig { p, seed: 0 }
    }

    setters! {
        /// The seed of the masks (two layers with one seed drop alike).
        with_seed(seed: u64);
    }

    /// The layer; `p` outside `[0, 1]` is [`oxmera_core::Error::InvalidArgument`].
    pub fn init(&self) -> Result<Dropout> {
        Dropout::new(self.p, Generator::new(self.seed))
    }
}

#[cfg(test)]
mod tests {
    use oxmera_core::Error;

    use super::*;
    use crate::{Module, ModuleState};

    const DEV: Device = Device::Reference;

    #[test]
    fn configs_build_what_the_positional_constructors_build() {
        let (mut a, mut b) = (Generator::new(3), Generator::new(3));
        let by_config = LinearConfig::new(4, 2)
            .with_device(DEV)
            .init(&mut a)
            .unwrap();
        let by_hand = Linear::new(4, 2, true, &mut b, DType::F32, DEV).unwrap();
        assert_eq!(
            by_config.weight().tensor().to_vec::<f32>().unwrap(),
            by_hand.weight().tensor().to_vec::<f32>().unwrap()
        );
        let f64_layer = LinearConfig::new(2, 2)
            .with_bias(false)
            .with_dtype(DType::F64)
            .with_device(DEV)
            .init(&mut a)
            .unwrap();
        assert_eq!(f64_layer.weight().tensor().dtype(), DType::F64);
        assert_eq!(f64_layer.named_parameters().len(), 1);
    }

    #[test]
    fn every_config_applies_its_options() {
        let mut rng = Generator::new(0);
        let conv = Conv2dConfig::new(4, 4, (3, 3))
            .with_groups(2)
            .with_bias(false)
            .with_stride((2, 2))
            .with_device(DEV)
            .init(&mut rng)
            .unwrap();
        assert_eq!(conv.weight().tensor().dims(), &[4, 2, 3, 3]);
        assert!(conv.bias_param().is_none());
        let e = EmbeddingConfig::new(10, 3)
            .with_device(DEV)
            .init(&mut rng)
            .unwrap();
        assert_eq!(e.num_parameters(), 30);
        let ln = LayerNormConfig::new([3])
            .with_affine(false)
            .with_device(DEV)
            .init()
            .unwrap();
        assert_eq!(ln.num_parameters(), 0);
        let bn = BatchNormConfig::new(3)
            .with_track_running_stats(false)
            .with_device(DEV)
            .init_2d()
            .unwrap();
        assert_eq!(bn.named_buffers().len(), 0);
        let mut drop = DropoutConfig::new(0.5).with_seed(9).init().unwrap();
        drop.set_training(false);
        assert!(!drop.is_training());
    }

    #[test]
    fn bad_options_are_the_layers_errors() {
        let mut rng = Generator::new(0);
        let bad = Conv2dConfig::new(3, 4, (3, 3))
            .with_groups(2)
            .with_device(DEV)
            .init(&mut rng);
        assert!(matches!(bad, Err(Error::InvalidArgument { .. })), "{bad:?}");
        let bad = Conv2dConfig::new(3, 4, (3, 3))
            .with_stride((0, 1))
            .with_device(DEV)
            .init(&mut rng);
        assert!(matches!(bad, Err(Error::InvalidArgument { .. })), "{bad:?}");
        assert!(DropoutConfig::new(1.5).init().is_err());
        assert!(
            LayerNormConfig::new([2])
                .with_eps(-1.0)
                .with_device(DEV)
                .init()
                .is_err()
        );
    }
}
